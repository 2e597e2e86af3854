"""The house figure for long functions: at most three functions of src/ over 60 lines,
each saying in its docstring why it is that long (a sentence with "lines" in it)."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "jxinspect"
MOST_LINES = 60
MOST_LONG = 3


def long_functions(root: Path) -> list[tuple[str, int, str | None]]:
    """Each function over ``MOST_LINES`` lines under ``root``: ``file:name``, its lines
    (``def`` to its last line) and its docstring."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MOST_LINES:
                    where = f"{path.relative_to(root).as_posix()}:{node.name}"
                    found.append((where, lines, ast.get_docstring(node)))
    return found


def test_at_most_three_functions_are_over_sixty_lines() -> None:
    found = [f"{where} ({lines} lines)" for where, lines, _ in long_functions(SRC)]
    assert len(found) <= MOST_LONG, f"over {MOST_LINES} lines: {', '.join(found)}"


def test_each_long_function_says_why_in_its_docstring() -> None:
    unsaid = [where for where, _, doc in long_functions(SRC) if "lines" not in (doc or "")]
    assert unsaid == []


def test_the_count_runs_from_def_to_the_last_line(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MOST_LINES - 1))
    (tmp_path / "m.py").write_text(
        f"def fits():\n{body}\n\n\ndef over():\n{body}\n    x = 0\n", encoding="utf-8"
    )
    assert long_functions(tmp_path) == [("m.py:over", MOST_LINES + 1, None)]
