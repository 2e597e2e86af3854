"""A :class:`~jxinspect.model.Report` from StableHLO text alone (a saved ``.mlir`` file).

Only ``@main`` is known: argument names (locations), ``jax.result_info``, shardings and
donation. There is no call to say what a leaf *should* be named, so a name is ``ok``
unless it is missing or a positional fallback (``flat_args[0]``); a leaf without a
usable name gets the placeholder path ``#i`` (``result#i``). Stage, JAX version and
platform are ``unknown``; there is no jaxpr, so no static arguments or nested jaxprs.
"""

from __future__ import annotations

import re
from typing import Any

from jxinspect.errors import UsageError
from jxinspect.model import ExtraArg, Input, Output, Report, Status
from jxinspect.tracer import mlir
from jxinspect.tracer.mlir import MainSignature

UNKNOWN = "unknown"
_FALLBACK_ARG = re.compile(r"^(flat_args|args|kwargs)\[")
_DIAGNOSTIC_AT = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')


def _arg_status(name: str | None) -> Status:
    if not name:
        return "missing"
    return "synthetic" if _FALLBACK_ARG.match(name) else "ok"


def report_from_signature(
    main: MainSignature,
    *,
    target: str,
    function: str | None = None,
    num_devices: int = 1,
    notes: tuple[str, ...] = (),
) -> Report:
    """The report ``@main`` alone gives (findings are added by ``jxinspect.checks``)."""
    inputs = []
    user_args = [a for a in main.args if a.jax_kind is None]
    for i, value in enumerate(user_args):
        status = _arg_status(value.name)
        inputs.append(
            Input(
                index=i,
                path=value.name if status == "ok" and value.name else f"#{i}",
                jaxpr_name=None,
                name=value.name or None,
                status=status,
                shape=value.shape or (),
                dtype=value.dtype or "unknown",
                sharding=value.sharding,
                donated=value.aliasing_output is not None or value.buffer_donor,
                aliased_output=value.aliasing_output,
                buffer_donor=value.buffer_donor,
                memory_kind=value.memory_kind,
                main_index=value.index,
            )
        )
    outputs = []
    for i, value in enumerate(r for r in main.results if r.jax_kind is None):
        outputs.append(
            Output(
                index=i,
                path=value.name or f"result#{i}",
                jaxpr_path=None,
                name=value.name or None,
                status="ok" if value.name else "missing",
                shape=value.shape or (),
                dtype=value.dtype or "unknown",
                sharding=value.sharding,
                memory_kind=value.memory_kind,
            )
        )
    extra = tuple(
        ExtraArg(a.index, a.jax_kind, a.type, a.name)  # type: ignore[arg-type]
        for a in main.args
        if a.jax_kind is not None
    )
    meshes = [m for m in main.meshes.values() if m.axes]
    sources = {v.sharding.source for v in (*main.args, *main.results) if v.sharding}
    return Report(
        target=target,
        stage=UNKNOWN,
        reached="lowered",
        jax_version=UNKNOWN,
        platform=UNKNOWN,
        num_devices=max(num_devices, 1),
        mesh=meshes[0] if len(meshes) == 1 else None,
        partitioner="gspmd" if sources == {"gspmd"} else "shardy",
        function=function,
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        extra_args=extra,
        notes=notes,
    )


def _int_attr(attributes: Any, key: str) -> int:
    from jaxlib.mlir import ir

    if key not in attributes:
        return 1
    attr = attributes[key]
    return int(ir.IntegerAttr(attr).value) if isinstance(attr, ir.IntegerAttr) else 1


def _string_attr(attributes: Any, key: str) -> str | None:
    from jaxlib.mlir import ir

    if key not in attributes:
        return None
    attr = attributes[key]
    return str(ir.StringAttr(attr).value) if isinstance(attr, ir.StringAttr) else None


def report_from_text(text: str, source: str) -> Report:
    """Parse StableHLO text (``source`` names it in errors) and read its ``@main``."""
    try:
        module = mlir.parse_module(text)
    except Exception as err:  # jaxlib's MLIRError, with diagnostics
        raise UsageError(f"cannot parse {source} as StableHLO: {_diagnostic(err)}") from None
    try:
        main = mlir.read_main(module)
    except ValueError as err:
        raise UsageError(f"{source}: {err}") from None
    with module.context:
        attributes = module.operation.attributes
        name = _string_attr(attributes, "sym_name")
        devices = _int_attr(attributes, "mhlo.num_partitions") * _int_attr(
            attributes, "mhlo.num_replicas"
        )
    notes = ("read from StableHLO text: no jaxpr, static arguments or expected names",)
    return report_from_signature(
        main,
        target=source,
        function=f"module @{name}" if name else None,
        num_devices=devices,
        notes=notes,
    )


def _diagnostic(err: Exception) -> str:
    """``line 3:7: expected ')'``: the first diagnostic of an MLIR parse error, one line."""
    for diagnostic in getattr(err, "error_diagnostics", None) or ():
        where = _DIAGNOSTIC_AT.match(str(diagnostic.location))
        message = str(diagnostic.message).splitlines()[0]
        return f"line {where.group(1)}:{where.group(2)}: {message}" if where else message
    lines = [line for line in str(err).splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__
