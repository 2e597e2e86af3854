"""Each staging keyword is spelled in few places: the option table, the seam that hands
the options to JAX, and the hook that reads them back from a lowering."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from helpers import CORPUS

from jxinspect.project.options import OPTIONS

SRC = Path(__file__).resolve().parents[2] / "src" / "jxinspect"
ALLOWED = {"project/options.py", "tracer/seam/staging.py", "tracer/seam/hooks.py"}
"""The table, the seam that stages with them, and the seam that reads a lowering's."""
FOREIGN_NAMES = {
    "tracer/adapters/nnx_pmap.py": {"in_axes"},
    "tracer/adapters/nnx_shard_map.py": {"in_specs"},
    "tracer/seam/mlir.py": {"in_shardings", "out_shardings"},
}
"""Other projects' names that happen to be spelled as JAX's keywords, read where they
live: Flax's wrappers keep the user's axes and specs in closure cells named so, and
Shardy's ``manual_computation`` op has attributes named so."""

KEYWORDS = frozenset(
    {o.name for o in OPTIONS if o.keyword or o.role}
    | {keyword for o in OPTIONS for _, keyword in o.renamed}
)


def spellings(path: Path) -> set[str]:
    """The keywords ``path`` spells as a name or as a whole string literal (prose that
    mentions one, in a message or a rule's text, is not code)."""
    found = set()
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.NAME and token.string in KEYWORDS:
            found.add(token.string)
        elif token.type == tokenize.STRING:
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):
                continue
            if value in KEYWORDS:
                found.add(value)
    return found


def test_the_table_knows_the_keywords() -> None:
    assert {"static_argnums", "in_specs", "in_shardings", "in_axes"} <= KEYWORDS


def test_staging_keywords_are_spelled_in_three_files() -> None:
    where = {
        str(path.relative_to(SRC)): found
        for path in sorted(SRC.rglob("*.py"))
        if not path.is_relative_to(CORPUS)  # a user's module shipped as data: jit's own keywords
        if (found := spellings(path))
    }
    assert "project/options.py" in where
    assert set(where) - ALLOWED - set(FOREIGN_NAMES) == set(), where
    for path, names in FOREIGN_NAMES.items():
        assert where.get(path, set()) <= names, (path, where[path])


def test_each_option_has_its_own_help() -> None:
    """A flag's help says what that option is (``--donate-argnames`` is not the static
    names' text)."""
    helps = [o.help for o in OPTIONS]
    assert len(set(helps)) == len(helps), sorted(h for h in helps if helps.count(h) > 1)
