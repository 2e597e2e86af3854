"""The one way renderers draw coloured text with rich: into a string, never to the screen."""

from __future__ import annotations

import io
from typing import Any


def ansi_console(buffer: io.StringIO, width: int = 120, record: bool = False) -> Any:
    """A rich ``Console`` that writes ANSI colour into ``buffer``, also inside a Jupyter
    kernel (where rich would otherwise display what it prints by itself)."""
    from rich.console import Console

    return Console(file=buffer, force_terminal=True, force_jupyter=False, width=width,
                   color_system="truecolor", record=record)  # fmt: skip
