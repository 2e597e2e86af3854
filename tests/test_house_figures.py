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


def class_homes(root: Path) -> dict[str, list[str]]:
    """Each public class name under ``root``: the files (``core/history.py``) defining it."""
    homes: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                homes.setdefault(node.name, []).append(path.relative_to(root).as_posix())
    return homes


def test_no_class_name_is_defined_twice() -> None:
    """A name such as ``Call`` means one thing: ``JitCall`` (a ``jit`` call a run made),
    ``RecordedCall`` (a record's ``call.json``). The survey's corpus is user code."""
    twice = {
        name: files
        for name, files in class_homes(SRC).items()
        if len([f for f in files if not f.startswith("survey/corpus/")]) > 1
    }
    assert twice == {}


def test_a_class_defined_in_two_files_is_found(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("class Call:\n    pass\n\n\nclass _Own:\n    pass\n")
    assert class_homes(tmp_path) == {"Call": ["a.py", "b.py"]}
