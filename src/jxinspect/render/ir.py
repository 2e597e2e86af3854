"""The jaxpr and StableHLO texts kept on a report (``--show jaxpr`` / ``--show mlir``)."""

from __future__ import annotations

from jxinspect.model import Report


def render(report: Report, what: str) -> str:
    """The text JAX printed for ``what`` (``jaxpr`` or ``mlir``), or why there is none."""
    text = report.jaxpr_text if what == "jaxpr" else report.mlir_text
    if text is None:
        return f"# no {what}: the function reached only the {report.reached} stage\n"
    return text if text.endswith("\n") else text + "\n"
