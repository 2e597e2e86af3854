"""The spec language's tokenizer and recursive-descent parser: text -> a small syntax tree.

The grammar is the subset of Python expressions that its tokens allow (names, numbers,
strings and ``()[]{},:@*-=.``), read the way Python reads it: the same literals and string
escapes, the same precedence, the same node positions. ``NAME[]`` is an empty index, as
``f32[()]``. Every error is a :class:`SpecError` at an exact column of the text
(characters, not bytes); nothing is evaluated and nothing is rewritten into Python source.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from typing import ClassVar, Literal, NoReturn, TypeAlias

from msgspec import Struct

MAX_DEPTH = 64  # bracket nesting


def _printable(s: str) -> str:
    """Same length, one printable line: newlines, control chars, surrogates -> space."""
    return "".join(c if c.isprintable() else " " for c in s)


class SpecError(ValueError):
    """A spec string that does not parse."""

    def __init__(self, text: str, column: int, reason: str) -> None:
        self.text, self.column, self.reason = text, max(0, min(column, len(text))), reason
        super().__init__(text, self.column, reason)

    def __str__(self) -> str:
        shown = _printable(self.text)
        if len(shown) > 120:  # a window around the column
            lo = max(0, self.column - 60)
            shown = ("..." if lo else "") + shown[lo : lo + 120] + "..."
        tail = f": {shown}" if shown.strip() else ""
        return f"bad spec at column {self.column}: {_printable(self.reason)}{tail}"


# ------------------------------------------------------------------ tokens ----

TokenKind: TypeAlias = Literal["name", "const", "number", "string", "op", "end"]
END = ""
"""The text of the token after the last: the top level's closing 'bracket'."""


class Token(Struct, frozen=True):
    """One token: a name (NFKC-normalized, as Python reads identifiers), ``True``/``False``/
    ``None`` (kind ``const``), a number or string with its value, or an operator."""

    kind: TokenKind
    col: int
    text: str
    value: object = None


_DIGITS = r"[0-9](?:_?[0-9])*"
_EXPONENT = rf"[eE][-+]?{_DIGITS}"
_FLOAT = rf"(?:{_DIGITS}\.(?:{_DIGITS})?|\.{_DIGITS})(?:{_EXPONENT})?|{_DIGITS}{_EXPONENT}"
_NUMBER = re.compile(  # Python's own literal grammar, alternatives in its order
    rf"{_DIGITS}[jJ]|(?:{_FLOAT})[jJ]|{_FLOAT}"
    r"|0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0(?:_?0)*|[1-9](?:_?[0-9])*"
)
_SPACE = re.compile(r"(?:[ \t\f\n]|\\\n)*")
_BAD_OPERATORS = re.compile(r"\*\*=|\.\.\.|//=|<<=|>>=|[-!%&*+/:<=>@^|]=|\*\*|//|<<|>>|->")
_OPS = frozenset("(),:@*-=.[]{}")
_CLOSE = {")": "(", "]": "[", "}": "{"}
_CONSTANTS: dict[str, object] = {"True": True, "False": False, "None": None}
_STRING_PREFIXES = frozenset({"r", "u", "b", "br", "rb", "f", "fr", "rf"})
_RADIX = {"x": "hexadecimal", "o": "octal", "b": "binary"}

_ESCAPE = re.compile(
    r"\\([0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|.)", re.S
)
_SIMPLE_ESCAPES: dict[str, str] = dict(
    zip("\n\\'\"abfnrtv", ["", "\\", "'", '"', *"\a\b\f\n\r\t\v"])
)
_TRUNCATED = {
    "x": "truncated \\xXX escape",
    "u": "truncated \\uXXXX escape",
    "U": "truncated \\UXXXXXXXX escape",
    "N": "malformed \\N character escape",
}


def _identifier_char(c: str) -> bool:
    """Whether ``c`` may continue a name (Unicode's XID_Continue, as Python's names)."""
    return c.isalnum() or c == "_" if c.isascii() else ("a" + c).isidentifier()


class _Lexer:
    """The tokens of one text, with its brackets balanced and nested at most MAX_DEPTH."""

    def __init__(self, text: str) -> None:
        self.text, self.src = text, text.replace("\r", " ")
        self.out: list[Token] = []
        self.stack: list[tuple[str, int]] = []

    def fail(self, col: int, reason: str) -> NoReturn:
        raise SpecError(self.text, col, reason)

    def tokens(self) -> list[Token]:
        src, i = self.src, 0
        while True:
            space = _SPACE.match(src, i)
            assert space is not None  # '*': it always matches
            i = space.end()
            if i == len(src):
                break
            c = src[i]
            if c.isidentifier():
                i = self.word(i)
            elif c in "0123456789" or c == "." and _NUMBER.match(src, i):
                i = self.number(i)
            elif c in "'\"":
                i = self.string(i, i)
            elif (bad := _BAD_OPERATORS.match(src, i)) is not None:
                self.fail(i, f"unexpected {bad.group()!r}")
            elif c in _OPS:
                self.bracket(c, i)
                self.out.append(Token("op", i, c))
                i += 1
            elif c == "#":
                self.fail(i, "comments are not allowed")
            else:
                self.fail(i, f"unexpected {c!r}" if c.isprintable() else f"invalid character {c!r}")
        if self.stack:
            opener, col = self.stack[-1]
            self.fail(col, f"{opener!r} was never closed")
        self.out.append(Token("end", len(src), END))
        return self.out

    def bracket(self, c: str, i: int) -> None:
        """Keep the stack of open brackets: push an opener, pop its closer."""
        if c in "([{":
            self.stack.append((c, i))
            if len(self.stack) > MAX_DEPTH:
                self.fail(i, f"nesting deeper than {MAX_DEPTH}")
        elif c in _CLOSE:
            if not self.stack or self.stack[-1][0] != _CLOSE[c]:
                self.fail(i, f"unmatched {c!r}")
            self.stack.pop()

    def word(self, i: int) -> int:
        """A name, keyword or constant, or a string's prefix."""
        src, j = self.src, i + 1
        while j < len(src) and _identifier_char(src[j]):
            j += 1
        word = src[i:j]
        if src[j : j + 1] in ("'", '"') and word.lower() in _STRING_PREFIXES:
            return self.string(i, j)
        if word in _CONSTANTS:
            self.out.append(Token("const", i, word, _CONSTANTS[word]))
        elif keyword.iskeyword(word):
            self.fail(i, f"unexpected keyword {word!r}")
        else:
            name = word if word.isascii() else unicodedata.normalize("NFKC", word)
            self.out.append(Token("name", i, name))
        return j

    def number(self, i: int) -> int:
        """An int, float or imaginary literal, as Python reads it."""
        m = _NUMBER.match(self.src, i)
        assert m is not None  # the caller saw a digit, or '.' and a digit
        s, j = m.group(), m.end()
        if j < len(self.src) and _identifier_char(after := self.src[j]):
            if re.fullmatch("0[0_]*", s) and after.isdigit():
                self.fail(i, "leading zeros in decimal integer literals are not permitted; "
                          "use an 0o prefix for octal integers")  # fmt: skip
            radix = _RADIX.get((s + after)[1:2].lower(), "") if s[0] == "0" else ""
            kind = radix or ("imaginary" if s[-1] in "jJ" else "decimal")
            self.fail(i, f"invalid {kind} literal")
        digits = s.replace("_", "")
        value: object
        if s[-1] in "jJ":
            value = complex(digits)
        elif s[0] == "0" and s[1:2].lower() in _RADIX:
            value = int(digits, 0)
        elif "." in s or "e" in s or "E" in s:
            value = float(digits)
        else:
            try:
                value = int(digits)
            except ValueError:  # over sys.get_int_max_str_digits()
                self.fail(i, f"integer literal too long ({len(digits)} digits)")
        self.out.append(Token("number", i, s, value))
        return j

    def string(self, i: int, q: int) -> int:
        """A string literal starting at ``i``, its quote at ``q``: its value, escapes read."""
        src, prefix = self.src, self.src[i:q].lower()
        if "f" in prefix:
            self.fail(i, "f-strings are not allowed")
        if "b" in prefix:
            self.fail(i, "bytes literals are not allowed")
        quote = src[q] * 3 if src.startswith(src[q] * 3, q) else src[q]
        start = j = q + len(quote)
        while not src.startswith(quote, j):
            if j >= len(src) or src[j] == "\n" and len(quote) == 1:
                self.fail(
                    i, "EOF in multi-line string" if len(quote) == 3 else "unterminated string"
                )
            j += 2 if src[j] == "\\" else 1
        body = src[start:j]
        value = body if "r" in prefix else self.unescape(body, start)
        self.out.append(Token("string", i, src[i : j + len(quote)], value))
        return j + len(quote)

    def unescape(self, body: str, start: int) -> str:
        """A string's body with its backslash escapes read as Python reads them."""

        def one(m: re.Match[str]) -> str:
            e, col = m.group(1), start + m.start()
            if e[0] in "01234567":
                return chr(int(e, 8))
            if len(e) == 1:
                if e in _TRUNCATED:
                    self.fail(col, _TRUNCATED[e])
                return _SIMPLE_ESCAPES.get(e, m.group())  # unknown: kept, backslash and all
            if e[0] == "N":
                try:
                    char = unicodedata.lookup(e[2:-1])
                except KeyError:
                    char = ""
                if len(char) != 1:  # unknown, or a named sequence
                    self.fail(col, "unknown Unicode character name")
                return char
            if int(e[1:], 16) > 0x10FFFF:
                self.fail(col, "illegal Unicode character")
            return chr(int(e[1:], 16))

        return _ESCAPE.sub(one, body)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an ``end`` token; brackets balanced."""
    return _Lexer(text).tokens()


# ------------------------------------------------------------------- nodes ----
# Tokens and nodes are frozen msgspec Structs: plain records like dataclasses, whose
# classes cost a fraction of a dataclass's to define (every command that reads a spec
# imports them).


class Node(Struct, frozen=True):
    """An expression at column ``col``: where Python's ast would put it."""

    col: int
    kind: ClassVar[str] = "Expression"  # Python's name for it, for messages


class Name(Node, frozen=True):
    id: str
    kind: ClassVar[str] = "Name"


class Const(Node, frozen=True):
    """A number, string, True, False or None."""

    value: object
    kind: ClassVar[str] = "Constant"


class Neg(Node, frozen=True):
    operand: Node
    kind: ClassVar[str] = "UnaryOp"


class BinOp(Node, frozen=True):
    op: Literal["@", "*", "-"]
    left: Node
    right: Node
    kind: ClassVar[str] = "BinOp"


class Tuple(Node, frozen=True):
    items: tuple[Node, ...]
    kind: ClassVar[str] = "Tuple"


class List(Node, frozen=True):
    items: tuple[Node, ...]
    kind: ClassVar[str] = "List"


class Set(Node, frozen=True):
    items: tuple[Node, ...]
    kind: ClassVar[str] = "Set"


class Dict(Node, frozen=True):
    keys: tuple[Node, ...]
    values: tuple[Node, ...]
    kind: ClassVar[str] = "Dict"


class Keyword(Node, frozen=True):
    """``arg=value`` in a call; ``col`` is the name's."""

    arg: str
    value: Node
    kind: ClassVar[str] = "keyword"


class Call(Node, frozen=True):
    func: Node
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...]
    kind: ClassVar[str] = "Call"


class Attribute(Node, frozen=True):
    value: Node
    attr: str
    kind: ClassVar[str] = "Attribute"


class Subscript(Node, frozen=True):
    value: Node
    index: Node
    kind: ClassVar[str] = "Subscript"


class Slice(Node, frozen=True):
    """``a:b:c`` in an index (its bounds are never read)."""

    kind: ClassVar[str] = "Slice"


# ------------------------------------------------------------------ parser ----


def _describe(close: str) -> str:
    return "end of text" if close == END else repr(close)


class _Parser:
    """Recursive descent over one text's tokens, Python's precedence: ``-`` (binary) <
    ``@`` and ``*`` < ``-`` (unary) < ``.name``, ``(...)``, ``[...]``."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text, self.toks, self.i = text, tokens, 0

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def fail(self, reason: str, col: int | None = None) -> NoReturn:
        """An error at ``col``, by default the next token's."""
        raise SpecError(self.text, self.tok.col if col is None else col, reason)

    def at(self, op: str) -> bool:
        return self.tok.kind in ("op", "end") and self.tok.text == op

    def skip(self, op: str) -> bool:
        """Step past ``op`` if it is next."""
        if self.at(op):
            self.i += 1
            return True
        return False

    def comma(self, close: str) -> bool:
        """Past a ',' (True), or at ``close`` (False); anything else is an error."""
        if self.skip(","):
            return True
        if not self.at(close):
            self.fail(f"expected ',' or {_describe(close)}")
        return False

    def arguments(self, close: str) -> tuple[list[Node], list[Keyword]]:
        """A call's ``value, ..., name=value, ...`` through ``close``."""
        args: list[Node] = []
        keywords: list[Keyword] = []
        while not self.at(close):
            tok = self.tok
            if tok.kind == "name" and self.toks[self.i + 1].text == "=":
                self.i += 2
                keywords.append(Keyword(tok.col, tok.text, self.expr()))
            else:
                args.append(self.expr())
                if keywords:
                    self.fail("positional argument follows keyword argument", tok.col)
            if not self.comma(close):
                break
        self.i += 1
        return args, keywords

    def items(self, close: str) -> tuple[list[Node], bool]:
        """``value, ...`` through ``close``, and whether a comma was seen."""
        items: list[Node] = []
        comma = False
        while not self.at(close):
            items.append(self.expr())
            if not self.comma(close):
                break
            comma = True
        self.i += 1
        return items, comma

    def expr(self) -> Node:
        """``a - b``, left to right (Python's BinOp Sub: never a value here)."""
        start, node = self.tok.col, self.term()
        while self.skip("-"):
            node = BinOp(start, "-", node, self.term())
        return node

    def term(self) -> Node:
        """``a @ b`` and ``a * b`` (one precedence, as Python's), left to right."""
        start, node = self.tok.col, self.factor()
        while self.at("@") or self.at("*"):
            op: Literal["@", "*"] = "@" if self.at("@") else "*"
            self.i += 1
            node = BinOp(start, op, node, self.factor())
        return node

    def factor(self) -> Node:
        """``-x``, any number of minus signs (read without recursion)."""
        cols: list[int] = []
        while self.at("-"):
            cols.append(self.tok.col)
            self.i += 1
        node = self.primary()
        for col in reversed(cols):
            node = Neg(col, node)
        return node

    def primary(self) -> Node:
        """An atom and its trailers: ``.name``, ``(arguments)``, ``[index]``."""
        start, node = self.tok.col, self.atom()
        while True:
            after_name = self.toks[self.i - 1].kind in ("name", "const")
            if self.skip("."):
                if self.tok.kind != "name":
                    self.fail("expected a name after '.'")
                node = Attribute(start, node, self.tok.text)
                self.i += 1
            elif self.skip("("):
                args, keywords = self.arguments(")")
                node = Call(start, node, tuple(args), tuple(keywords))
            elif self.skip("["):
                node = Subscript(start, node, self.index(after_name))
            else:
                return node

    def atom(self) -> Node:
        """A name, literal (adjacent strings joined) or bracketed display."""
        tok = self.tok
        if tok.kind in ("op", "end") and tok.text not in ("(", "[", "{"):
            self.fail("expected a value")
        self.i += 1
        if tok.kind == "name":
            return Name(tok.col, tok.text)
        if tok.kind in ("const", "number"):
            return Const(tok.col, tok.value)
        if tok.kind == "string":
            parts = [str(tok.value)]
            while self.tok.kind == "string":
                parts.append(str(self.tok.value))
                self.i += 1
            return Const(tok.col, "".join(parts))
        if tok.text == "(":
            items, comma = self.items(")")
            return items[0] if len(items) == 1 and not comma else Tuple(tok.col, tuple(items))
        if tok.text == "[":
            return List(tok.col, tuple(self.items("]")[0]))
        return self.braces(tok.col)

    def braces(self, start: int) -> Node:
        """After '{': a dict ``{k: v, ...}`` or a set ``{a, ...}``, through '}'."""
        if self.skip("}"):
            return Dict(start, (), ())
        first = self.expr()
        if not self.at(":"):
            if not self.at(",") and not self.at("}"):
                self.fail("expected ':', ',' or '}'")
            rest: list[Node] = []
            if self.skip(","):
                rest = self.items("}")[0]
            else:
                self.i += 1  # past '}'
            return Set(start, (first, *rest))
        keys, values = [first], list[Node]()
        while True:
            self.i += 1  # past ':'
            values.append(self.expr())
            if not self.comma("}") or self.at("}"):
                break
            keys.append(self.expr())
            if not self.at(":"):
                self.fail("expected ':'")
        self.i += 1
        return Dict(start, tuple(keys), tuple(values))

    def index(self, after_name: bool) -> Node:
        """After '[': one index, or a Tuple of several; ``NAME[]`` is ``NAME[()]``."""
        if after_name and self.at("]"):
            self.i += 1
            return Tuple(self.toks[self.i - 1].col, ())
        start, items, comma = self.tok.col, [self.slice_item()], False
        while self.comma("]"):
            comma = True
            if self.at("]"):
                break
            items.append(self.slice_item())
        self.i += 1
        return Tuple(start, tuple(items)) if comma else items[0]

    def slice_item(self) -> Node:
        """A value, or ``[lower]:[upper][:[step]]``."""
        start = self.tok.col
        if not self.at(":"):
            lower = self.expr()
            if not self.at(":"):
                return lower
        for _ in range(2):
            if not self.skip(":"):
                break
            if not (self.at(":") or self.at(",") or self.at("]")):
                self.expr()
        return Slice(start)


def parse(text: str) -> tuple[list[Node], list[Keyword]]:
    """A whole text, read as the arguments of a call: its values and ``name=value`` pairs."""
    return _Parser(text, tokenize(text)).arguments(END)
