"""``XLA_FLAGS`` as XLA reads it (``xla/parse_flags_from_env.cc``, the same in every
supported release): flags separated by whitespace, each ``--name`` or ``--name=value``,
where a value that starts with a double quote runs to the next unescaped one (a
backslash takes the next character as it is) and one that starts with a single quote to
the next single quote; reading stops at the first word that does not start with ``-``.
A user's quoted value (a folder with a space) stays one flag where jxinspect adds its own
(simulated devices). jxinspect hands XLA no path through it: the partitioner's dump
folder goes in the compile's own options.
"""

from __future__ import annotations

_SPACE = " \t\r\n"


def tokens(flags: str) -> list[str]:
    """The flags of an ``XLA_FLAGS`` value, each as written (quotes kept), split where XLA
    splits them; what follows a word XLA stops at is kept as one last item."""
    found: list[str] = []
    at = _skip_space(flags, 0)
    while at < len(flags) and flags[at] == "-":
        end = at
        while end < len(flags) and (flags[end].isascii() and (flags[end].isalnum()
                                                             or flags[end] in "-_")):  # fmt: skip
            end += 1
        if end + 1 < len(flags) and flags[end] == "=" and flags[end + 1] in "'\"":
            quote, end = flags[end + 1], end + 2
            while end < len(flags) and flags[end] != quote:
                end += 2 if quote == '"' and flags[end] == "\\" and end + 1 < len(flags) else 1
            end = min(end + 1, len(flags))
        else:
            while end < len(flags) and flags[end] not in _SPACE:
                end += 1
        found.append(flags[at:end])
        at = _skip_space(flags, end)
    if at < len(flags):
        found.append(flags[at:])
    return found


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at
