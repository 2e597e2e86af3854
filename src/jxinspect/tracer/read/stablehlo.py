"""A :class:`~jxinspect.core.model.Report` from StableHLO text alone (a saved ``.mlir`` file).

Only ``@main`` is known: argument names (locations), ``jax.result_info``, shardings and
donation. There is no call to say what a leaf *should* be named, so a name is ``ok``
unless it is missing or a positional fallback (``flat_args[0]``); a leaf without a
usable name gets the placeholder path ``#i`` (``result#i``). Stage, JAX version and
platform are ``unknown``; there is no jaxpr, so no static arguments or nested jaxprs.
"""

from __future__ import annotations

import re
from typing import Any

from jxinspect.core.errors import UsageError
from jxinspect.core.model import Report
from jxinspect.tracer import seam
from jxinspect.tracer.read import mlir
from jxinspect.tracer.read.report import report_from_main

_DIAGNOSTIC_AT = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')


def _string_attr(attributes: Any, key: str) -> str | None:
    ir = seam.ir()

    if key not in attributes:
        return None
    attr = attributes[key]
    return str(ir.StringAttr(attr).value) if isinstance(attr, ir.StringAttr) else None


def report_from_text(text: str, source: str) -> Report:
    """Parse StableHLO text (``source`` names it in errors) and read its ``@main``."""
    try:
        module = seam.parse_module(text)
    except Exception as err:  # jaxlib's MLIRError, with diagnostics
        raise UsageError(f"cannot parse {source} as StableHLO: {_diagnostic(err)}") from None
    try:
        main = mlir.read_main(module)
    except ValueError as err:
        raise UsageError(f"{source}: {err}") from None
    with module.context:
        attributes = module.operation.attributes
        name = _string_attr(attributes, "sym_name")
    notes = ["read from StableHLO text: no jaxpr, static arguments or expected names"]
    return report_from_main(
        main,
        target=source,
        function=f"module @{name}" if name else None,
        num_devices=main.devices,
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
