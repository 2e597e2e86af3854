"""A line of source as the views write it: :func:`jxinspect.core.source.source_text`,
the one form every report, view and finding uses."""

from __future__ import annotations

from jxinspect.core.source import package_path, source_text

__all__ = ["package_path", "source_text"]
