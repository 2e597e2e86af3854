"""The HTML report's measured section (a report with a ``profile``): the step, a timeline
of one step by the user's line (inline SVG: one row per line, the largest first, each
instruction's run a bar where it began, its title the instruction, line and time), and
the time-by-line table. Nothing is fetched."""

from __future__ import annotations

from jxinspect.core.profile import Profile, Span
from jxinspect.core.units import human_seconds
from jxinspect.render.common.escape import html as _e
from jxinspect.render.common.source import source_text
from jxinspect.render.report.sharding_view import PALETTE

ANCHOR = "profile"
"""The section's id, which the page's navigation links to."""

ROWS = 12
"""The lines the timeline draws a row for (the most time first); the rest share one."""
WIDTH, LABEL, ROW = 960, 260, 18
"""The timeline's width, its labels' column and one row's height, in pixels."""
OTHER = "other lines"


def _where(file: str | None, line: int | None, lib: str | None, lib_line: int | None) -> str:
    return source_text(file, line, lib, lib_line) or "(no line)"


def _head(profile: Profile) -> str:
    step = profile.step_seconds
    what = "call (its span in the trace)" if profile.recorded else "step (wall time)"
    facts = [
        ("measured", f"{profile.steps} {'calls' if profile.recorded else 'steps'} after "
                     f"{profile.warmup} on {profile.devices} "
                     f"{profile.device_kind or profile.platform} device(s)"),
        (what, f"median {human_seconds(step.median)} (min {human_seconds(step.min)}, "
               f"max {human_seconds(step.max)})"),
    ]  # fmt: skip
    if profile.instruction_seconds is not None:
        busy = f", {profile.busy:.0%} of the step" if profile.busy is not None else ""
        each = human_seconds(profile.instruction_seconds)
        facts.append(("instructions", f"{each} per step and device{busy}"))
    if profile.trace is not None:
        facts.append(("trace", f"{profile.trace} (XProf's layout)"))
    body = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    return f"<dl class=facts>{body}</dl>"


def _row_of(profile: Profile) -> dict[str, int]:
    """Each line's row: the :data:`ROWS` lines with the most time, in that order."""
    return {
        _where(line.file, line.line, line.library_file, line.library_line): k
        for k, line in enumerate(profile.by_line[:ROWS])
    }


LABEL_CHARS = 34
"""The most characters of a line's label drawn (its end: the file's name and line)."""


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else "…" + label[-(LABEL_CHARS - 1) :]


def _bar(span: Span, row: int, scale: float, colour: str, label: str) -> str:
    x = LABEL + span.start * scale
    width = max(span.seconds * scale, 0.5)
    title = f"{span.instruction} · {label} · {human_seconds(span.seconds)}"
    return (f'<rect class=span x="{x:.2f}" y="{row * ROW + 2}" width="{width:.2f}" '
            f'height="{ROW - 4}" fill="{colour}"><title>{_e(title)}</title></rect>')  # fmt: skip


def timeline(profile: Profile) -> str:
    """One step by line, as an inline SVG (empty where the profile holds no timeline)."""
    if not profile.timeline:
        return ""
    rows = _row_of(profile)
    labels = [*rows, *([OTHER] if len(profile.by_line) > ROWS else [])]
    end = max(span.start + span.seconds for span in profile.timeline)
    scale = (WIDTH - LABEL - 10) / end if end > 0 else 0.0
    height = ROW * len(labels) + 22
    parts = [
        f'<svg class=timeline xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" role=img '
        f'aria-label="one step by line, {_e(human_seconds(end))}">'
    ]
    for k, label in enumerate(labels):
        parts.append(f'<text x="4" y="{k * ROW + ROW - 5}" font-size="11" '
                     f'font-family="monospace">{_e(_short(label))}</text>')  # fmt: skip
    for span in profile.timeline:
        label = _where(span.file, span.line, span.library_file, span.library_line)
        row = rows.get(label, len(rows))
        parts.append(_bar(span, row, scale, PALETTE[row % len(PALETTE)], label))
    axis = ROW * len(labels) + 14
    parts.append(f'<text x="{LABEL}" y="{axis}" font-size="11">0</text>'
                 f'<text x="{WIDTH - 10}" y="{axis}" font-size="11" text-anchor="end">'
                 f"{_e(human_seconds(end))}</text></svg>")  # fmt: skip
    return "".join(parts)


def _lines(profile: Profile) -> str:
    body = "".join(
        f"<tr><td>{_e(human_seconds(line.seconds))}</td><td>{line.share:.1%}</td>"
        f"<td>{line.count}</td><td><code>"
        f"{_e(_where(line.file, line.line, line.library_file, line.library_line))}</code></td>"
        f"<td><code>{_e(', '.join(line.instructions))}</code></td></tr>"
        for line in profile.by_line
    )
    return (
        f"<h3>Time by line ({len(profile.by_line)})</h3><div class=table-wrap>"
        "<table id=profile-lines-table class=leaves><thead><tr><th>time/step</th><th>share</th>"
        "<th>runs</th><th>source</th><th>instructions</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


def section(profile: Profile | None) -> str:
    """The measured section; empty where the report was not measured."""
    if profile is None:
        return ""
    if profile.unread is not None or profile.instruction_seconds is None:
        inner = f"<p>Not measured: {_e(profile.unread or 'no instruction was measured')}</p>"
    else:
        drawn = timeline(profile)
        picture = (f"<h3>One step by line</h3><div class=timeline-wrap>{drawn}</div>"
                   if drawn else "")  # fmt: skip
        inner = picture + _lines(profile)
    return (f"<section id={ANCHOR}><details open><summary><h2>Measured</h2></summary>"
            f"{_head(profile)}{inner}</details></section>")  # fmt: skip
