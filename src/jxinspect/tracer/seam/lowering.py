"""Lowering a staged function, and what its ``Traced``/``Lowered`` say about it.

* **``Lowered.as_text(debug_info=)``**: absent in 0.4 (0.4.35, 0.4.38); the module is printed with
  the MLIR bindings instead.
* **``out_info``**: ``Lowered.out_info`` of the older pmap (0.4.35) raises
  ``KeyError('global_out_avals')``; the caller rebuilds it from
  ``make_jaxpr(..., return_shape=True)``.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from jxinspect.tracer.seam.objects import Lowered, MlirModule, OutInfo, Traced, Wrapped

_NO_RULE = re.compile(r"MLIR translation rule for primitive '([^']+)' not found for platform (\w+)")
"""How JAX says a primitive has no lowering for a platform (every release from 0.4.35)."""


def lowering_fix(error: str) -> str | None:
    """What to do about a lowering error, where JAX's words name it: a primitive with no
    lowering for the platform asked for."""
    found = _NO_RULE.search(error)
    if found is None:
        return None
    primitive, platform = found.groups()
    return (
        f"JAX has no {platform} lowering of {primitive}: lower for a platform that has one "
        f"(--platform cpu), or keep {primitive} out of the {platform} program"
    )


_TOOL_PACKAGES = ("jxinspect", "typer", "click", "rich")
"""The packages whose frames stand between the command line and the user's function."""


@functools.cache
def hide_tool_frames() -> None:
    """Leave this tool's frames out of the locations JAX writes, as JAX leaves out its own
    (``source_info_util.register_exclusion``, in every release from 0.4.35): the lowered
    module holds the user's call stack, as a lowering the user ran would, not our
    pipeline's, typer's and the console script's (~65 location lines of a one-line
    function). Once per process; never in a recorded process (nothing of ours lowers there)."""
    from jax._src import source_info_util

    for name in _TOOL_PACKAGES:
        module = sys.modules.get(name)
        for folder in getattr(module, "__path__", ()):
            source_info_util.register_exclusion(os.path.realpath(folder) + os.sep)
            source_info_util.register_exclusion(os.path.abspath(folder) + os.sep)
    main = sys.modules.get("__main__")
    entry = getattr(getattr(main, "main", None), "__module__", None)
    script = getattr(main, "__file__", None)
    if entry == "jxinspect.cli.app" and script:  # the console script itself
        source_info_util.register_exclusion(os.path.abspath(script))


def donated_flags(
    stage: Traced | Lowered,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    donated: int | Sequence[int] | None,
) -> tuple[bool, ...]:
    """Per flat argument: donated, from a ``Traced`` or ``Lowered``'s ``args_info``; from
    the ``donated`` positions over the call's own leaves when a user's pytree node refuses the
    ``ArgInfo`` leaves that ``args_info`` rebuilds it with (a validating constructor)."""
    import jax

    try:
        return tuple(bool(a.donated) for a in jax.tree_util.tree_leaves(stage.args_info))
    except Exception:  # the user's tree_unflatten raised
        nums = {donated} if isinstance(donated, int) else set(donated or ())
        nums = {n + len(args) if n < 0 else n for n in nums}
        flags = [i in nums for i, arg in enumerate(args) for _ in jax.tree_util.tree_leaves(arg)]
        return (*flags, *(False for _ in jax.tree_util.tree_leaves(kwargs)))


def out_info(stage: Traced | Lowered) -> OutInfo | None:
    """``out_info`` of a ``Traced``/``Lowered``; ``None`` where the release has none for
    it (the older pmap's lowering)."""
    try:
        return stage.out_info
    except (KeyError, AttributeError):
        return None


def lower(
    staged_or_traced: Wrapped | Traced,
    args: tuple[Any, ...] | None,
    kwargs: dict[str, Any] | None,
    platform: str | None,
) -> Lowered:
    """``Traced.lower()`` (args ``None``) or ``staged.lower(*args, **kwargs)``."""
    extra = {"lowering_platforms": (platform,)} if platform else {}
    if args is None:
        return staged_or_traced.lower(**extra)
    return staged_or_traced.lower(*args, **(kwargs or {}), **extra)


def lowering_platform(platform: str | None) -> tuple[str | None, str | None]:
    """The platform JAX lowers for, and a note when it is not the one asked for: ``gpu``
    is this machine's GPU, or where it has none CUDA's (JAX lowers for ``cuda`` or
    ``rocm`` by name from any machine, never for ``gpu`` without one)."""
    if platform != "gpu":
        return platform, None
    import jax

    try:
        jax.devices("gpu")
    except RuntimeError:
        return (
            "cuda",
            "--platform gpu lowered for CUDA: this machine has no GPU (--platform rocm for AMD's)",
        )
    return platform, None


def kept_inputs(lowered: Lowered) -> list[int] | None:
    """Indices of the flat inputs that survived lowering, as JAX recorded them."""
    lowering = getattr(lowered, "_lowering", None)
    args = getattr(lowering, "compile_args", None)
    kept = args.get("kept_var_idx") if isinstance(args, dict) else None
    return sorted(int(i) for i in kept) if kept is not None else None


def stablehlo_module(lowered: Lowered) -> MlirModule:
    return lowered.compiler_ir("stablehlo")


_CUSTOM_CALL = re.compile(r'stablehlo\.custom_call @([\w.$-]+)|call_target_name = "([^"]+)"')


def custom_call_targets(lowered: Lowered) -> frozenset[str]:
    """The targets of the lowered program's own custom calls (a Pallas kernel's
    ``tpu_custom_call``, a callback, a sharding annotation): every other one the optimized
    program holds, the compiler inserted (a TPU's ``ConcatBitcast``)."""
    text = str(lowered.as_text())
    return frozenset(a or b for a, b in _CUSTOM_CALL.findall(text))


def lowered_text(lowered: Lowered, dialect: str, debug_info: bool) -> str:
    """The lowered module as JAX prints it, with locations when ``debug_info``."""
    if not debug_info:
        return str(lowered.as_text(dialect=dialect))
    if "debug_info" in inspect.signature(lowered.as_text).parameters:
        return str(lowered.as_text(dialect=dialect, debug_info=True))
    if dialect != "stablehlo":
        return str(lowered.as_text(dialect=dialect))  # HLO text of 0.4.35 keeps no names
    module = lowered.compiler_ir("stablehlo")
    return str(module.operation.get_asm(enable_debug_info=True, large_elements_limit=20))


def program_digest(lowered: Lowered) -> str:
    """A digest of what a lowering made: the module without its locations, and the names
    ``@main``'s arguments carry in theirs. Equal for one program lowered again (from
    another call site too: the locations hold the caller's line), different where
    anything lowered differs (operations, constants, types, shardings, names). The
    module is printed, never changed."""
    import hashlib

    from jxinspect.tracer.seam.mlir import block_argument_names

    module = stablehlo_module(lowered)
    text = module.operation.get_asm(enable_debug_info=False, assume_verified=True)
    main = next(
        (op for op in module.body.operations if "sym_name" in op.attributes
         and str(op.attributes["sym_name"]).strip('"') == "main"),
        None,
    )  # fmt: skip
    names = block_argument_names(main) if main is not None else []
    digest = hashlib.blake2b(text.encode(), digest_size=12)
    digest.update(repr(names).encode())
    return digest.hexdigest()


def program_text(lowered: Lowered) -> str:
    """The lowered StableHLO module in full, with its locations (argument names and the
    source line of each operation), every constant written out: what a program's
    identity is computed from. The module is printed, never changed."""
    module = stablehlo_module(lowered)
    return str(module.operation.get_asm(enable_debug_info=True, assume_verified=True))
