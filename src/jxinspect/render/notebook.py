"""How reports, diffs and lint results display themselves in notebooks and consoles.

* ``_repr_html_`` of a report: the same self-contained page as ``--format html``, in an
  ``<iframe srcdoc>`` so its styles and scripts stay inside the cell; nothing is fetched.
* ``_repr_html_`` of a diff or lint result, and of one view: the coloured terminal text,
  exported by rich as HTML with inline styles.
* ``__rich__``: the coloured text as a rich ``Text``.
* ``__repr__``: one line (target, stage, names, findings), never a screen of fields.

Renderers return strings or rich objects and do no I/O; ``Report.show`` decides where a
view goes.
"""

from __future__ import annotations

import html as html_lib
import io
from typing import TYPE_CHECKING, Any

from jxinspect.core.units import recorded

if TYPE_CHECKING:
    from jxinspect.compare.diff import DiffReport
    from jxinspect.core.model import Report
    from jxinspect.lint.result import LintResult

CELL_HEIGHT_PX = 640
"""The report's frame in a notebook cell; the page scrolls inside it."""


def report_html(report: Report) -> str:
    """The HTML report, framed for a notebook cell."""
    from jxinspect.render.report import html

    page = html.render(report)
    return (
        f'<iframe srcdoc="{html_lib.escape(page, quote=True)}" title="jxinspect report" '
        f'style="width:100%;height:{CELL_HEIGHT_PX}px;border:1px solid #ddd" '
        'sandbox="allow-scripts"></iframe>'
    )


def ansi_html(text: str) -> str:
    """Coloured terminal text as a self-contained HTML fragment (inline styles)."""
    from rich.text import Text

    from jxinspect.render.common.console import ansi_console

    console = ansi_console(io.StringIO(), width=160, record=True)
    console.print(Text.from_ansi(text), soft_wrap=True)
    return str(console.export_html(inline_styles=True, code_format="<pre style=\"{stylesheet}\">"
                               "<code>{code}</code></pre>"))  # fmt: skip


def report_text(report: Report) -> str:
    from jxinspect.render.report import text

    return text.render(report, color=True)


def diff_text(diff: DiffReport) -> str:
    from jxinspect.render.compare import text as renderer

    return renderer.render(diff, color=True)


def lint_text(result: LintResult) -> str:
    from jxinspect.render.lint import text as renderer

    return renderer.render(result, color=True)


def as_rich(text: str) -> Any:
    """Coloured terminal text as a rich ``Text``, for ``__rich__``."""
    from rich.text import Text

    return Text.from_ansi(text.rstrip("\n"), no_wrap=True, overflow="crop")


def report_repr(report: Report) -> str:
    """``<Report mlp.py:predict · jit → lowered · JAX 0.10.2 · 7/7 arguments and 2/2
    results carry their names; 2 infos>``."""
    from jxinspect.render.common.escape import text as esc
    from jxinspect.render.report.text import summary_line

    return (
        f"<Report {esc(report.target)} · {recorded(report.stage)} → {report.reached} · "
        f"JAX {recorded(report.jax_version)} · {summary_line(report)}>"
    )


def diff_repr(diff: DiffReport) -> str:
    from jxinspect.render.common.escape import text as esc

    counts = diff.counts()
    verdict = "FAIL" if diff.failed else "ok"
    return (
        f"<DiffReport {esc(diff.before)} → {esc(diff.after)} · {len(diff.targets)} target"
        f"{'s' if len(diff.targets) != 1 else ''} · {verdict}: {counts['regressions']} "
        f"regressions ({counts['failing']} failing), {counts['improvements']} improvements, "
        f"{counts['neutral']} neutral>"
    )


def lint_repr(result: LintResult) -> str:
    failed = sum(1 for t in result.targets if t.error)
    findings = sum(len(t.findings) for t in result.targets)
    return (
        f"<LintResult {len(result.targets)} targets · {findings} findings · "
        f"{failed} failed to stage · fail on {result.fail_on}>"
    )
