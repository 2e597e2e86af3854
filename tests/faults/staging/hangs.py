"""Hangs while tracing; writes a marker file first, so a test knows it started."""

import os
import time
from pathlib import Path

JXINSPECT = {"f": {"args": "f32[4]"}}


def f(x):
    marker = os.environ.get("JXINSPECT_FAULT_MARKER")
    if marker:
        Path(marker).write_text("started", encoding="utf-8")
    while True:
        time.sleep(0.1)
