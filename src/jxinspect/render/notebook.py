"""The pieces of a notebook and console display: a page framed for a cell, coloured text
as HTML or as a rich ``Text``.

* A report's cell: the same self-contained page as ``--format html``, in an
  ``<iframe srcdoc>`` so its styles and scripts stay inside the cell; nothing is fetched.
* A diff's or lint result's cell, and one view's: the coloured terminal text, exported by
  rich as HTML with inline styles.
* ``__rich__``: the coloured text as a rich ``Text``.

These return strings or rich objects and do no I/O; ``render/display.py`` picks, per
product, what to draw and where it goes.
"""

from __future__ import annotations

import html as html_lib
import io
from typing import Any

CELL_HEIGHT_PX = 640
"""The report's frame in a notebook cell; the page scrolls inside it."""


def framed(page: str) -> str:
    """An HTML page, framed for a notebook cell."""
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


def as_rich(text: str) -> Any:
    """Coloured terminal text as a rich ``Text``, for ``__rich__``."""
    from rich.text import Text

    return Text.from_ansi(text.rstrip("\n"), no_wrap=True, overflow="crop")
