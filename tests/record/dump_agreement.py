"""Does a record folder say what JAX itself dumped? Plain Python, no JAX, and none of
jxinspect's readers: the dump is read here from its text alone.

Run a command under ``jxinspect record -o RECORDS`` with ``JAX_DUMP_IR_TO=DUMP`` (JAX
0.4.35 and 0.10.2 both dump every module handed to the compiler, the program as lowered,
before XLA's passes, as ``jax_irNNNN_<module>_compile.mlir``; 0.10's
``JAX_DUMP_IR_MODES`` defaults to ``stablehlo``, which is that file), then::

    result = agreement(RECORDS, DUMP)
    print(summary(result))

Each recorded function (one entry of ``index.json``: a function and one input signature)
is matched to the dumped modules of the same lowering: module ``jit_<name>`` (``pmap_``,
and ``jit__fun`` for a ``pmap`` of JAX 0.8 on, which stages it through its own helper)
whose ``@main`` takes the same argument types. Then, on ``@main`` only, it compares

* ``arg_names``: each argument's name (``loc("...")``; ``jax.arg_info`` on older JAX),
* ``result_names``: ``jax.result_info``,
* ``arg_shardings`` and ``result_shardings``: ``sdy.sharding`` or ``mhlo.sharding``,
* ``donation``: ``tf.aliasing_output`` and ``jax.buffer_donor``,
* ``types``: each argument's and result's type (arguments JAX adds, such as tokens and
  dimension variables, included; the token results JAX adds for ordered effects,
  ``jax.token = true``, which a report does not list among the function's outputs, are
  left out).

An empty name (``loc(unknown)``, ``jax.result_info = ""``) counts as no name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CATEGORIES = ("arg_names", "result_names", "arg_shardings", "result_shardings", "donation", "types")
DUMP_SUFFIX = "_compile.mlir"
_DUMP_FILE = re.compile(r"^jax_ir(\d+)_(.*)_compile\.mlir$")
_PROGRAM_SOURCES = ("sdy", "gspmd")
"""Report sharding sources read from the program; the others (``jax``, ``pmap``,
``declared``, ``compiled``) are not in ``@main``'s attributes."""

_DTYPES = {
    "bool": "i1",
    "float0": "i1",  # a zero-sized tangent: JAX lowers it as a boolean
    "bfloat16": "bf16",
    "complex64": "complex<f32>",
    "complex128": "complex<f64>",
    "float8_e4m3fn": "f8E4M3FN",
    "float8_e5m2": "f8E5M2",
    "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e5m2fnuz": "f8E5M2FNUZ",
    "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e3m4": "f8E3M4",
    "float8_e4m3": "f8E4M3",
    "float8_e8m0fnu": "f8E8M0FNU",
    "float4_e2m1fn": "f4E2M1FN",
}


def mlir_element(dtype: str) -> str:
    """numpy's name → StableHLO's: ``float32`` → ``f32``, ``uint8`` → ``ui8``."""
    if dtype in _DTYPES:
        return _DTYPES[dtype]
    for prefix, short in (("float", "f"), ("uint", "ui"), ("int", "i")):
        if dtype.startswith(prefix) and dtype[len(prefix) :].isdigit():
            return short + dtype[len(prefix) :]
    return dtype


_KEY_WORDS = {"fry": 2, "rbg": 4, "unsafe_rbg": 4}
"""uint32 words per key of each PRNG implementation: a ``key<fry>[3]`` is a
``tensor<3x2xui32>`` in the program."""


def tensor_type(shape: Iterable[int], dtype: str) -> str:
    if dtype == "token":  # a report's token (the user's own: JAX's are extra arguments)
        return "!stablehlo.token"
    shape = list(shape)
    if dtype.startswith("key<") and dtype.endswith(">") and dtype[4:-1] in _KEY_WORDS:
        shape, dtype = [*shape, _KEY_WORDS[dtype[4:-1]]], "uint32"
    dims = "".join(("?" if d == -1 else str(d)) + "x" for d in shape)
    return f"tensor<{dims}{mlir_element(dtype)}>"


# --- reading the dumped text ---------------------------------------------------------

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _skip_string(text: str, i: int) -> int:
    """Index after the string literal that starts at ``text[i] == '"'``."""
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return i


def _top_level(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """``(index, character, depth)`` of each character of ``text`` from ``start`` that is
    outside strings and ``->`` arrows, with the bracket depth before it."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c == "-" and text.startswith("->", i):
            i += 2
            continue
        yield i, c, depth
        if c in _OPEN:
            depth += 1
        elif c in ")]}>":
            depth -= 1
        i += 1


def _closing(text: str, i: int) -> int:
    """Index of the bracket that closes the one at ``text[i]``."""
    for at, c, depth in _top_level(text, i):
        if depth == 1 and c in ")]}>":
            return at
    raise ValueError("unbalanced brackets")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at the ``sep`` characters outside brackets and strings."""
    parts, start = [], 0
    for i, c, depth in _top_level(text):
        if c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _unquote(literal: str) -> str:
    """An MLIR string literal's value (``\\22`` and the other hex escapes decoded)."""
    body = literal.strip()[1:-1]
    out, i = bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            if body[i + 1] == "\\":
                out += b"\\"
                i += 2
                continue
            hexpair = body[i + 1 : i + 3]
            if re.fullmatch(r"[0-9A-Fa-f]{2}", hexpair):
                out.append(int(hexpair, 16))
                i += 3
                continue
        out += c.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="replace")


def _attributes(text: str) -> dict[str, str]:
    """``{a = 1 : i32, b = "x"}`` → ``{"a": "1 : i32", "b": '"x"'}`` (values as written)."""
    found = {}
    for item in _split_top(text.strip()[1:-1]):
        key, eq, value = item.partition("=")
        found[key.strip()] = value.strip() if eq else ""
    return found


@dataclass
class Value:
    """One argument or result of ``@main`` as the dump writes it."""

    type: str
    attrs: dict[str, str] = field(default_factory=dict)
    loc: str | None = None
    """The location's text inside ``loc(...)``, aliases resolved."""

    @property
    def name(self) -> str | None:
        if "jax.arg_info" in self.attrs:
            return _unquote(self.attrs["jax.arg_info"]) or None
        if self.loc and self.loc.startswith('"'):
            return _unquote(self.loc[: _skip_string(self.loc, 0)]) or None
        return None

    @property
    def result_name(self) -> str | None:
        info = self.attrs.get("jax.result_info")
        return (_unquote(info) or None) if info is not None else None

    @property
    def sharding(self) -> str | None:
        if "sdy.sharding" in self.attrs:
            return _squash(self.attrs["sdy.sharding"])
        if "mhlo.sharding" in self.attrs:
            return _squash(_unquote(self.attrs["mhlo.sharding"]))
        return None

    @property
    def donation(self) -> tuple[int | None, bool]:
        alias = self.attrs.get("tf.aliasing_output")
        aliased = int(alias.split(":")[0]) if alias else None
        return aliased, self.attrs.get("jax.buffer_donor", "false").strip() == "true"


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class Dump:
    """One dumped module: its name and ``@main``'s signature."""

    file: str
    module: str
    args: list[Value]
    results: list[Value]
    lines: dict[str, frozenset[int]] = field(default_factory=dict)
    """The source lines its locations name, per file name (no folder)."""

    def plausible_for(self, source: str | None) -> bool:
        """Whether the function ``step at train.py:12`` can have made this module: some
        operation's location is in its file within :data:`BODY_LINES` after its line
        (two functions of one name and types in one test file are told apart so)."""
        found = _SOURCE.match(source or "")
        if found is None:
            return True
        lines = self.lines.get(Path(found.group(1)).name)
        start = int(found.group(2))
        return lines is None or any(start <= line < start + BODY_LINES for line in lines)

    @property
    def arg_types(self) -> tuple[str, ...]:
        return tuple(a.type for a in self.args)

    @property
    def key(self) -> tuple[Any, ...]:
        """Equal for two dumps of the same lowering (compiled twice)."""
        return (
            self.module,
            tuple((a.type, tuple(sorted(a.attrs.items())), a.name) for a in self.args),
            tuple((r.type, tuple(sorted(r.attrs.items()))) for r in self.results),
        )


_LOC_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$", re.M)
_FILE_LINE = re.compile(r'loc\("((?:[^"\\]|\\.)*)":(\d+):')
_SOURCE = re.compile(r"^.* at (.+):(\d+)$")
BODY_LINES = 80
"""How far after a function's first line its operations are looked for."""
_MODULE = re.compile(r"^\s*module\s+@(\"(?:[^\"\\]|\\.)*\"|[\w.$-]+)", re.M)


def _value(text: str, aliases: dict[str, str], with_name: bool) -> Value:
    text = text.strip()
    if with_name:  # %arg0: TYPE ...
        text = text.split(":", 1)[1].strip()
    loc = None
    where = _find_top(text, " loc(")
    if where >= 0:
        start = where + len(" loc")
        loc = text[start + 1 : _closing(text, start)].strip()
        text = text[:where].strip()
        while loc.startswith("#loc") and loc in aliases:
            loc = aliases[loc]
    attrs: dict[str, str] = {}
    where = _find_top(text, " {")
    if where >= 0:
        attrs = _attributes(text[where + 1 : _closing(text, where + 1) + 1])
        text = text[:where].strip()
    return Value(type=text, attrs=attrs, loc=loc)


def _find_top(text: str, needle: str) -> int:
    """Where ``needle`` starts outside brackets and strings (``-1``: nowhere)."""
    for i, _, depth in _top_level(text):
        if depth == 0 and text.startswith(needle, i):
            return i
    return -1


def read_dump(path: Path) -> Dump | None:
    """The module name and ``@main``'s signature of one dumped file (``None``: no
    ``@main``)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = _MODULE.search(text)
    module = found.group(1) if found else ""
    if module.startswith('"'):
        module = _unquote(module)
    head = text.find("func.func public @main(")
    if head < 0:
        return None
    aliases = {m.group(1): m.group(2).strip() for m in _LOC_ALIAS.finditer(text)}
    open_at = head + len("func.func public @main")
    close_at = _closing(text, open_at)
    args = [_value(a, aliases, True) for a in _split_top(text[open_at + 1 : close_at])]
    rest = text[close_at + 1 :].lstrip()
    results: list[Value] = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            end = _closing(rest, 0)
            results = [_value(r, aliases, False) for r in _split_top(rest[1:end])]
        else:  # one result, no attributes: `-> tensor<f32> {` (the body's brace)
            end = _find_top(rest, " ")
            results = [Value(type=rest[: end if end >= 0 else len(rest)].strip())]
    lines: dict[str, set[int]] = {}
    for match in _FILE_LINE.finditer(text):
        lines.setdefault(Path(match.group(1)).name, set()).add(int(match.group(2)))
    frozen = {name: frozenset(found) for name, found in lines.items()}
    return Dump(file=path.name, module=module, args=args, results=results, lines=frozen)


def read_dumps(folder: Path) -> list[Dump]:
    """Every ``*_compile.mlir`` of a ``JAX_DUMP_IR_TO`` folder, in the order JAX wrote."""
    found = []
    for path in Path(folder).glob("jax_ir*" + DUMP_SUFFIX):
        match = _DUMP_FILE.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    dumps = []
    for _, path in sorted(found):
        dump = read_dump(path)
        if dump is not None:
            dumps.append(dump)
    return dumps


# --- reading the record folder (its JSON, not jxinspect's model) ---------------------


@dataclass
class Recorded:
    """One entry of a record folder and what its report says of ``@main``."""

    name: str
    folder: str
    source: str | None
    stage: str | None
    reached: str | None
    args: list[dict[str, Any]]
    """Per ``@main`` argument: ``name``, ``type``, ``sharding`` and ``donation`` (as the
    report says them); ``None`` where the report has no argument at that position."""
    results: list[dict[str, Any]]


def _sharding(value: dict[str, Any] | None) -> str | None:
    """The report's sharding as the program writes it (``None``: the program has none)."""
    if not value or value.get("source") not in _PROGRAM_SOURCES:
        return None
    return _squash(str(value.get("raw") or "")) or None


def read_records(folder: Path) -> list[Recorded]:
    index = json.loads((Path(folder) / "index.json").read_text(encoding="utf-8"))
    found = []
    for entry in index.get("functions", []):
        path = Path(folder) / entry["folder"] / "report.json"
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        slots: dict[int, dict[str, Any]] = {}
        for arg in report.get("inputs", []):
            if arg.get("main_index") is None:
                continue  # pruned (keep_unused=False): not in @main
            slots[arg["main_index"]] = {
                "name": arg.get("name") or None,
                "type": tensor_type(arg["shape"], arg["dtype"]),
                "sharding": _sharding(arg.get("sharding")),
                "donation": (arg.get("aliased_output"), bool(arg.get("buffer_donor"))),
                "path": arg.get("path"),
            }
        for extra in report.get("extra_args", []):
            slots[extra["main_index"]] = {
                "name": extra.get("name") or None,
                "type": _squash(str(extra.get("type"))),
                "sharding": None,
                "donation": (None, False),
                "path": f"<{extra.get('kind')}>",
            }
        count = max(slots, default=-1) + 1
        results = [
            {
                "name": out.get("name") or None,
                "type": tensor_type(out["shape"], out["dtype"]),
                "sharding": _sharding(out.get("sharding")),
                "path": out.get("path"),
            }
            for out in report.get("outputs", [])
        ]
        found.append(
            Recorded(
                name=entry["name"],
                folder=entry["folder"],
                source=entry.get("source"),
                stage=report.get("stage") or entry.get("stage"),
                reached=report.get("reached"),
                args=[slots.get(i) for i in range(count)],
                results=results,
            )
        )
    return found


# --- matching and comparing -----------------------------------------------------------


def sanitize(name: str) -> str:
    """A function's name as JAX writes it in a module's name (``<lambda>`` → ``_lambda_``)."""
    return re.sub(r"[^\w.-]", "_", name)


def module_names(record: Recorded) -> tuple[str, ...]:
    """The module names a lowering of ``record`` may carry."""
    name = sanitize(record.name)
    names = [f"jit_{name}", f"pjit_{name}"]
    if record.stage == "pmap":
        names += [f"pmap_{name}", f"xla_pmap_{name}", "jit__fun"]
    return tuple(names)


@dataclass
class Disagreement:
    function: str
    """``name (folder)``: the entry of the record folder."""
    what: str
    """``category: where``, e.g. ``arg_shardings: arg 1 (params['w'])``."""
    recorded: Any
    dumped: Any
    dump_file: str = ""

    def __str__(self) -> str:
        return (
            f"{self.function}: {self.what}: recorded {self.recorded!r}, "
            f"dumped {self.dumped!r} ({self.dump_file})"
        )


@dataclass
class Agreement:
    agreed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    total: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    disagreements: list[Disagreement] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    """Dumped lowerings (file and module) of recorded functions that no entry matches."""
    not_dumped: list[str] = field(default_factory=list)
    """Entries that no dumped module matches: lowered and never compiled (a jit inside
    another, ``.lower()`` alone), or recorded with types that no dump of that name has."""
    matched: int = 0
    records: int = 0
    dumps: int = 0
    """Dumped modules read (JAX's own computations included)."""

    @property
    def full(self) -> bool:
        return not self.disagreements and all(self.agreed[c] == self.total[c] for c in CATEGORIES)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agreed": self.agreed,
            "total": self.total,
            "disagreements": [d.__dict__ for d in self.disagreements],
            "unrecorded": self.unrecorded,
            "not_dumped": self.not_dumped,
            "matched": self.matched,
            "records": self.records,
            "dumps": self.dumps,
        }


def _compare(record: Recorded, dump: Dump) -> list[tuple[str, str, Any, Any]]:
    """Every comparison of one entry with one dump: ``(category, where, recorded,
    dumped)``; the two agree on it when recorded == dumped."""
    out: list[tuple[str, str, Any, Any]] = []
    n_args = max(len(record.args), len(dump.args))
    if len(record.args) != len(dump.args):
        out.append(("types", "argument count", len(record.args), len(dump.args)))
    for i in range(n_args):
        rec = record.args[i] if i < len(record.args) else None
        got = dump.args[i] if i < len(dump.args) else None
        where = f"arg {i}" + (f" ({rec['path']})" if rec else "")
        if rec is None or got is None:
            if got is not None:  # the report says nothing of a @main argument
                out.append(("types", where, None, got.type))
            continue
        out.append(("types", where, rec["type"], got.type))
        out.append(("arg_names", where, rec["name"], got.name))
        out.append(("arg_shardings", where, rec["sharding"], got.sharding))
        out.append(("donation", where, rec["donation"], got.donation))
    results = [r for r in dump.results if "jax.token" not in r.attrs]
    if len(record.results) != len(results):
        out.append(("types", "result count", len(record.results), len(results)))
    for i, (rec, got) in enumerate(zip(record.results, results)):
        where = f"result {i} ({rec['path']})"
        out.append(("types", where, rec["type"], got.type))
        out.append(("result_names", where, rec["name"], got.result_name))
        out.append(("result_shardings", where, rec["sharding"], got.sharding))
    return out


def _misses(record: Recorded, dump: Dump) -> int:
    return sum(1 for _, _, a, b in _compare(record, dump) if a != b)


def _rank(record: Recorded, dump: Dump, used: bool) -> tuple[int, bool, bool]:
    """How close a dump is to a record: fewer misses, then locations in the function,
    then not yet taken by another entry."""
    return (_misses(record, dump), not dump.plausible_for(record.source), used)


def agreement(records_folder: Path, dump_folder: Path) -> Agreement:
    """Compare every entry of ``records_folder`` with the modules JAX dumped to
    ``dump_folder`` in the same run."""
    records = read_records(Path(records_folder))
    dumps = read_dumps(Path(dump_folder))
    result = Agreement(records=len(records), dumps=len(dumps))
    groups: dict[tuple[Any, ...], list[Dump]] = {}
    for dump in dumps:
        groups.setdefault(dump.key, []).append(dump)
    by_module: dict[str, list[tuple[Any, ...]]] = {}
    for key, same in groups.items():
        by_module.setdefault(same[0].module, []).append(key)
    used: set[tuple[Any, ...]] = set()
    pairs: list[tuple[Recorded, Dump]] = []
    unmatched: list[Recorded] = []
    for record in records:
        types = tuple(a["type"] if a else None for a in record.args)
        candidates = [
            key
            for module in module_names(record)
            for key in by_module.get(module, [])
            if groups[key][0].arg_types == types
        ]
        if not candidates:
            unmatched.append(record)
            continue

        # the closest lowering, one whose locations are in the function first, then one
        # not yet taken by another entry
        ranks = {k: _rank(record, groups[k][0], k in used) for k in candidates}
        best = min(candidates, key=ranks.__getitem__)
        misses, implausible, _ = ranks[best]
        if misses and implausible:  # another function's module: this one was not dumped
            unmatched.append(record)
            continue
        used.add(best)
        pairs.append((record, groups[best][0]))
    recorded_modules = {m for r in records for m in module_names(r)}
    left = [k for k in groups if k not in used and groups[k][0].module in recorded_modules]
    for record in unmatched:
        result.not_dumped.append(f"{record.name} ({record.folder}, {record.reached})")
    for record, dump in pairs:
        result.matched += 1
        for category, where, rec, got in _compare(record, dump):
            result.total[category] += 1
            if rec == got:
                result.agreed[category] += 1
            else:
                result.disagreements.append(
                    Disagreement(
                        f"{record.name} ({record.folder})", f"{category}: {where}", rec, got,
                        dump.file,
                    )
                )  # fmt: skip
    for key in left:
        first = groups[key][0]
        result.unrecorded.append(f"{first.module} ({first.file}, {first.arg_types})")
    return result


def summary(result: Agreement, examples: int = 1) -> str:
    """Counts per category, then ``examples`` disagreements of each category."""
    lines = [
        f"dump agreement: {result.matched} of {result.records} recorded lowerings matched "
        f"to {result.dumps} dumped modules"
    ]
    for category in CATEGORIES:
        lines.append(f"  {category:<17} {result.agreed[category]}/{result.total[category]}")
    shown: dict[str, int] = {}
    for d in result.disagreements:
        category = d.what.split(":")[0]
        shown[category] = shown.get(category, 0) + 1
        if shown[category] <= examples:
            lines.append(f"  disagreement: {d}")
    for category, count in shown.items():
        if count > examples:
            lines.append(f"  ... {count - examples} more {category} disagreements")
    if result.unrecorded:
        lines.append(f"  dumped lowerings of recorded functions with no record: "
                     f"{len(result.unrecorded)}, e.g. {result.unrecorded[0]}")  # fmt: skip
    if result.not_dumped:
        lines.append(
            f"  recorded lowerings not in the dump: {len(result.not_dumped)}, "
            f"e.g. {', '.join(result.not_dumped[:3])}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    outcome = agreement(Path(sys.argv[1]), Path(sys.argv[2]))
    print(summary(outcome, examples=3))
    sys.exit(0 if outcome.full else 1)
