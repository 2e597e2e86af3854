"""jxinspect: see what a JAX program became.

Stage a function with ``jit``, ``pjit``, ``pmap`` or ``shard_map`` and report each
argument's parameter name, each result's pytree path and the shardings JAX attached,
with a finding wherever JAX dropped or degraded that debug info.

    import jxinspect
    report = jxinspect.inspect(f, args=(x, 3), stage="jit", options={"static_argnums": (1,)})
    report                      # in a notebook: the HTML report; in a console: one line
    report.show("sharding")     # one view: HTML in a notebook, coloured text in a console
    jxinspect.to_json(report)   # the JSON report (schema jxinspect.report/1)
    jxinspect.from_json(text, jxinspect.Report)       # read a saved one back
    d = jxinspect.diff(before_report, after_report)   # or two functions and their args
    d.failed, d.regressions

    from jxinspect.testing import assert_debug_info  # in the user's own tests

The public surface is ``__all__`` here and in :mod:`jxinspect.testing`; the JSON schemas
are the contract. Importing this package does not import JAX; :func:`inspect` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from jxinspect._version import __version__
from jxinspect.core import display as _display

if TYPE_CHECKING:
    from jxinspect.core.diff import DiffReport
    from jxinspect.core.lint import LintResult
    from jxinspect.core.model import Report
    from jxinspect.core.vocabulary import Severity, Stage
    from jxinspect.project.config import Policy

__all__ = [
    "DiffReport", "LintResult", "Report", "__version__", "diff", "from_json", "inspect",
    "to_json",
]  # fmt: skip

_PRODUCTS = {
    "Report": "jxinspect.core.model",
    "DiffReport": "jxinspect.core.diff",
    "LintResult": "jxinspect.core.lint",
}
"""What each command makes, importable from here (``jxinspect.from_json(text,
jxinspect.Report)``), each imported when first asked for."""

_T = TypeVar("_T")


def to_json(product: Any) -> str:
    """A product (a :class:`Report`, a :class:`DiffReport`, a :class:`LintResult`…) as
    the indented JSON its command writes with ``--format json``."""
    from jxinspect.core import codec

    return codec.dumps(product)


def from_json(text: str | bytes, kind: type[_T]) -> _T:
    """A product read back from its JSON; ``ValueError`` (one line: where in the text,
    and what was expected) when the text is not one."""
    from jxinspect.core import codec

    return codec.decode(text, kind, source=f"a {kind.__name__}")


def __getattr__(name: str) -> Any:
    if name in _PRODUCTS:
        import importlib

        return getattr(importlib.import_module(_PRODUCTS[name]), name)
    raise AttributeError(f"module 'jxinspect' has no attribute {name!r}")


def _renderers() -> _display.Renderers:
    """The products' displays, imported when one is first shown (core imports no
    renderer; this package, which runs before any submodule, hands them down)."""
    from jxinspect.render import display

    return display


_display.provide(_renderers)


def inspect(
    fun: Any,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    stage: Stage = "jit",
    options: dict[str, Any] | None = None,
    platform: str | None = None,
    texts: bool = True,
    compile: bool = False,
    memory: bool = False,
    topology: str | None = None,
    slices: int = 1,
) -> Report:
    """Stage ``fun`` on ``args``/``kwargs`` and return its :class:`~jxinspect.core.model.Report`.

    ``options`` are passed as given to the staging API (``jax.jit``, ``pjit``,
    ``jax.pmap`` or ``jax.shard_map``); ``args`` may hold arrays or ``ShapeDtypeStruct``s.
    ``platform`` lowers for another platform ("tpu", "gpu") without its hardware.
    ``texts`` keeps the annotated jaxpr and module for ``show("jaxpr")``/``show("mlir")``
    and the HTML report (``False`` for a leaner report). ``compile`` also compiles it:
    XLA's shardings, memory, FLOPs and collectives (``report.compiled``); ``memory``
    compiles it and reads the buffers live at its peak (``report.compiled.peak``).
    ``topology`` ("v5e:2x2", with libtpu: the tpu extra) stages it for that TPU topology
    that is not here: what no sharding places goes on its first chip; ``args`` sharded
    over a mesh of its devices (``jax.experimental.topologies``) stay there; ``slices``
    such slices of it (multi-slice).
    """
    return _inspect(
        fun, args, kwargs, stage=stage, options=options, platform=platform, texts=texts,
        compile=compile, memory=memory, topology=topology, slices=slices,
    )  # fmt: skip


def _inspect(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None,
    *,
    stage: Stage,
    options: dict[str, Any] | None,
    platform: str | None,
    texts: bool,
    compile: bool = False,
    memory: bool = False,
    topology: str | None = None,
    slices: int = 1,
    policy: Policy | None = None,
) -> Report:
    """:func:`inspect`, its report judged under ``policy`` (default: the rules' own
    settings and severities; ``jxinspect.testing`` gives its own)."""
    from jxinspect.core.program import TextRequest
    from jxinspect.pipeline import inspect_function
    from jxinspect.tracer import call, seam

    seam.require_supported()
    on = seam.topology_devices(topology, slices) if topology is not None else None
    with call.placed_on(on):
        return inspect_function(
            fun,
            args,
            kwargs or {},
            stage=stage,
            options=options or {},
            platform=platform or ("tpu" if on else None),
            keep_texts=TextRequest() if texts else None,
            compile=compile or memory,
            memory=memory,
            topology=on.topology if on else None,
            policy=policy,
        )


def diff(
    before: Any,
    after: Any,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    stage: Stage = "jit",
    options: dict[str, Any] | None = None,
    platform: str | None = None,
    fail_on: Severity | None = "error",
    allow: tuple[str, ...] = (),
    compile: bool = False,
    memory_growth: float | None = None,
) -> DiffReport:
    """What changed between two versions of a program, by meaning: the same
    :class:`~jxinspect.core.diff.DiffReport` that ``jxinspect diff-debug`` renders.

    ``before`` and ``after`` are reports (from :func:`inspect`
    or ``from_json(text, Report)`` of a saved JSON report), or two functions staged here on the
    same ``args``/``kwargs`` with the same options. ``fail_on`` (``error``, ``warning``,
    ``info`` or ``None``) and ``allow`` (change classes) set the verdict, ``.failed``.
    ``compile`` compiles the functions (reports must hold compiled info) and compares the
    cost per device: a collective added (a warning where the bytes moved per step fall),
    or temporaries grown by more than ``memory_growth`` (a fraction; default
    ``budgets.memory_growth``'s, 10%), is an error; a measure that falls by more than it
    is an improvement. Every change is judged by its effect (a sharding by the bytes a
    device holds).
    """
    from jxinspect.compare.diff import diff_reports
    from jxinspect.core.cost_diff import DEFAULT_MEMORY_GROWTH
    from jxinspect.core.diff import CHANGE_CLASSES, DiffReport
    from jxinspect.core.model import Report
    from jxinspect.core.vocabulary import SEVERITIES

    if fail_on is not None and fail_on not in SEVERITIES:
        raise ValueError(f"fail_on={fail_on!r}: use one of {', '.join(SEVERITIES)} or None")
    unknown = sorted(set(allow) - set(CHANGE_CLASSES))
    if unknown:
        raise ValueError(
            f"allow: unknown change class {unknown[0]!r}; use {', '.join(CHANGE_CLASSES)}"
        )

    def report(side: Any) -> Report:
        if isinstance(side, Report):
            return side
        if callable(side):
            return inspect(side, args, kwargs, stage=stage, options=options, platform=platform,
                           texts=False, compile=compile)  # fmt: skip
        raise TypeError(f"expected a Report or a function, got {type(side).__name__}")

    old, new = report(before), report(after)
    if compile and (old.compiled is None or new.compiled is None):
        raise ValueError("compile=True compares compiled reports: inspect(..., compile=True)")
    growth = (
        (DEFAULT_MEMORY_GROWTH if memory_growth is None else memory_growth) if compile else None
    )
    return DiffReport(before=old.target, after=new.target,
                      targets=(diff_reports(old, new, memory_growth=growth),),
                      fail_on=fail_on or "never", allow=tuple(allow))  # fmt: skip
