"""Escaping for each output format: what came from user code or an input file (argument
names, result paths, function and target names, file paths, static argument reprs, error
messages) must not act on the format it is written into.

* :func:`text`: plain text and the terminal. Control characters (C0 with NUL, ESC, BEL,
  CR, LF and TAB; DEL; C1), line and paragraph separators, bidirectional-text controls,
  invisible characters (zero-width spaces and joiners, the word joiner, the byte-order
  mark, soft hyphens, fillers, variation selectors, tags: Unicode's default-ignorable
  code points and the format characters that draw nothing), surrogates and the XML
  non-characters are shown as ``\\n``, ``\\t``, ``\\r``, ``\\xNN``, ``\\uNNNN`` or
  ``\\UNNNNNNNN``, so no name can move the cursor, colour the terminal, start a line, or
  read as another (``step`` and ``step\\u200b`` print apart). Every other character,
  backslashes included, is kept: an ordinary name reads as before. Idempotent. Rich
  objects are built from ``rich.text.Text``, never from markup strings.
* :func:`program_text`: the same, but a text's own line breaks stay (jaxpr and module text).
* :func:`markdown_text` / :func:`markdown_code`: a Markdown table cell as text or as inline
  code; pipes, backticks, inline markup and HTML cannot change the table or the page, and
  an ``@name`` cannot mention (notify) anyone: GitHub links a mention in the rendered text,
  after backslash escapes, so ``@`` gets a WORD JOINER (U+2060, invisible) after it there;
  code spans are never linked.
* :func:`github_data` / :func:`github_property`: GitHub workflow command data and property
  values (GitHub's own ``%25``, ``%0D``, ``%0A``, and ``%3A``, ``%2C`` in properties).
* :func:`xml`: text for XML 1.0 (JUnit) that is always well-formed; ElementTree then
  escapes ``&``, ``<``, ``>`` and quotes.
* :func:`html`: HTML text or attribute values.

JSON and SARIF go through the one codec (:mod:`jxinspect.core.codec`), which escapes
control characters, bidirectional-text controls and the line and paragraph separators
itself. Pure functions, no I/O, no JAX.
"""

from __future__ import annotations

import html as html_lib
import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

_OTHER = (
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional-text controls
    # invisible: soft hyphen, grapheme joiner, Hangul and Khmer fillers, Mongolian
    # selectors, zero-width space and joiners, word joiner and invisible operators,
    # deprecated format controls, variation selectors, byte-order mark, interlinear
    # annotation, shorthand and musical format controls, tags and their selectors
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2065"
    "\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates (undecodable file names): no encoding writes them
    "\ufffe\uffff"  # not characters, not allowed in XML
)
_TEXT = re.compile(f"[\x00-\x1f\x7f-\x9f{_OTHER}]")
"""C0 (NUL, BEL, ESC, TAB, LF, CR, ...), DEL, C1 and the rest above."""
_PROGRAM_TEXT = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_OTHER}]")
"""The same but LF: a program text's own line breaks."""
_GITHUB = re.compile(f"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f{_OTHER}]")
"""The same but CR and LF, which workflow commands percent-escape."""
_MARKDOWN = re.compile(r"([\\`*\[\]<>|~&]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
"""Characters that start inline Markdown or HTML, or end a table cell (``_`` only where
it could: ``jit_f`` stays as written)."""
_MENTION = re.compile(r"(?<![0-9A-Za-z])@(?=[0-9A-Za-z])")
"""An ``@`` that GitHub would read as the start of a mention (``@user``, ``@org/team``);
not one inside a word (``a@b.com``)."""
WORD_JOINER = "\u2060"


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def text(value: object) -> str:
    """One line of plain text or terminal output: control characters shown visibly."""
    string = str(value)
    return _TEXT.sub(_visible, string) if _TEXT.search(string) else string


def program_text(value: str) -> str:
    """A multi-line text (a jaxpr, a module): like :func:`text`, line breaks kept."""
    return _PROGRAM_TEXT.sub(_visible, value) if _PROGRAM_TEXT.search(value) else value


def markdown_text(value: object) -> str:
    """A Markdown table cell shown as text: :func:`text`, then inline markup, HTML and
    pipes backslash-escaped (``__init__`` shows as written, ``<b>`` as itself), and a
    mention's ``@`` followed by a WORD JOINER (``@user`` shows as written, notifying no
    one)."""
    escaped = _MARKDOWN.sub(r"\\\1", text(value))
    return _MENTION.sub("@" + WORD_JOINER, escaped) if "@" in escaped else escaped


def markdown_code(value: object) -> str:
    """Inline code in a Markdown table cell: :func:`text`, fenced with more backticks than
    it holds, pipes escaped (GitHub splits cells before it reads code spans). ``""`` and
    ``—`` stay plain. A code span mentions no one: its ``@`` stays as written."""
    string = text(value)
    if string in ("", "—"):
        return string
    runs = [len(run) for run in re.findall("`+", string)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if runs else ""
    return f"{fence}{pad}{string}{pad}{fence}".replace("|", "\\|")


def github_data(value: object) -> str:
    """The message of a workflow command: ``%``, CR and LF as GitHub escapes them; other
    control characters shown as by :func:`text` (the log would colour on an ESC)."""
    safe = _GITHUB.sub(_visible, str(value))
    return safe.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(value: object) -> str:
    """A property value of a workflow command (``file=``, ``title=``)."""
    return github_data(value).replace(":", "%3A").replace(",", "%2C")


def xml(value: object) -> str:
    """Text or an attribute value for XML 1.0 (JUnit): :func:`text`, so the characters
    XML forbids (NUL, most of C0, surrogates) never reach the file."""
    return text(value)


def html(value: object) -> str:
    """HTML text or a quoted attribute value: :func:`text`, then HTML-escaped."""
    return html_lib.escape(text(value), quote=True)
