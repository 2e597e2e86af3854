"""``assert_never``: the branch no value reaches when a ``match`` or ``isinstance`` chain
covers every member of a union or ``Literal`` (``mypy --strict`` fails on the first one it
does not cover; at run time reaching it is a bug).

``typing`` has it from Python 3.11, ``typing_extensions`` (a dependency on 3.10) before.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover - Python 3.10
    from typing_extensions import assert_never

__all__ = ["assert_never"]
