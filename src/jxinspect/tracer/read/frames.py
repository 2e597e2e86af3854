"""Where the user's code is, in a stack of frames: the innermost frame in the user's own
files (not a library's, not JAX's), with the library's innermost frame beside it (Flax's
``linear.py`` called from the user's model). The one rule for a compiled instruction's
stack (:meth:`.hlo_text.HloText.located`) and an equation's traceback (:func:`of_equation`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jxinspect.project.targets import is_users_file
from jxinspect.tracer import seam


@dataclass(frozen=True)
class UserLine:
    """A line in the user's files, and the library's line it ran in."""

    file: str | None
    line: int | None
    library_file: str | None = None
    library_line: int | None = None


NOWHERE = UserLine(None, None)


def locate(frames: Iterable[tuple[str, int]]) -> UserLine:
    """The innermost of ``frames`` (innermost first) in the user's files, the innermost
    frame beside it where that is not the user's; a library's alone where no frame is."""
    innermost: tuple[str, int] | None = None
    for file, line in frames:
        if innermost is None:
            innermost = (file, line)
            if is_users_file(file):
                return UserLine(file, line)
        elif is_users_file(file):
            return UserLine(file, line, *innermost)
    return UserLine(None, None, *innermost) if innermost is not None else NOWHERE


def of_equation(eqn: Any) -> UserLine:
    """The user's line of a jaxpr equation, from its traceback (the frames JAX keeps
    outside its own code), the library's innermost frame beside it."""
    return locate((frame.file, frame.line) for frame in seam.frames(eqn))
