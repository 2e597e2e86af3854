"""Names from user code and input files are escaped for the format they are written into.

The fault corpus ``tests/faults/`` holds one input per fault: ``hostile_names.mlir``
(StableHLO whose argument names and result paths hold a newline, ESC, BEL, NUL and a
pipe) and ``hostile_names.py`` (pytree keys, a static argument's repr, a function name
and an exception message with the same, plus HTML and rich markup). Every format is
checked through the installed command: plain and coloured text show control characters
as ``\\n`` / ``\\x1b`` and keep one line per leaf (no forged verdict line), Markdown tables
keep their column count, workflow commands stay one per line, JUnit parses as XML,
HTML has no tag from a name, the error line stays one line, and JSON keeps the exact
original names.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, CliResult, error_line

from jxinspect.render.common import escape
from jxinspect.render.lint.github import command, escape_data, escape_property

Run = Callable[..., CliResult]

FAULTS = REPO / "tests" / "faults"
MLIR = "tests/faults/hostile_names.mlir"
MLIR_PATH = str(REPO / MLIR)
MODULE = "tests/faults/hostile_names.py"
STEP = f"{MODULE}:step"

MLIR_NAMES = ("x\nverdict: improvement", "\x1b[31mred\x07bell\x00nul|pipe")
"""The argument names ``hostile_names.mlir`` carries, unescaped."""
MLIR_RESULT = "result\n\x1b[2J|cleared"
FORGED = "a\nverdict: improvement"
COLOURED = "\x1b[31mred\x07bell\x00nul|pipe <script>alert(1)</script> [b]bold[/b]"
"""The attribute keys of ``hostile_names.Box``: argument paths ``box.<key>``."""
STATIC = "Mode(\x1b[2J\nverdict: improvement)"

CLEAN_MLIR = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> loc("x"), %arg1: tensor<2xf32> loc("y")) \
-> (tensor<2xf32> {jax.result_info = "result[0]"}, tensor<2xf32> {jax.result_info = \
"result[1]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<2xf32>
    return %0, %arg0 : tensor<2xf32>, tensor<2xf32>
  }
}
"""
"""The same program with ordinary names: the other side of the diff."""

_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
"""Control characters but LF (the run reads stdout as text: a raw CR arrives as LF)."""
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def raw_controls(text: str) -> list[str]:
    """Each raw control character in ``text`` with a little context."""
    return [repr(text[max(m.start() - 20, 0) : m.end() + 5]) for m in _RAW.finditer(text)]


def assert_no_forged_lines(text: str) -> None:
    lines = text.splitlines()
    assert not raw_controls(text), raw_controls(text)
    assert not [line for line in lines if line.lstrip().startswith("verdict")], text
    assert not [line for line in lines if line.lstrip().startswith("cleared")], text


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def assert_tables_keep_columns(markdown: str) -> int:
    """Every row of every table has its header's cell count; the number of rows."""
    rows, columns = 0, None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        count = unescaped_pipes(line)
        if columns is None:
            columns = count
        assert count == columns, f"{line!r} has {count} pipes, its header {columns}"
        rows += 1
    return rows


def run(run_cli: Run, *args: str, rc: int | tuple[int, ...] = 0, cwd: Any = None) -> CliResult:
    result: CliResult = run_cli(*args, cwd=cwd)
    codes = rc if isinstance(rc, tuple) else (rc,)
    assert result.returncode in codes, result.describe()
    assert "Traceback" not in result.stderr, result.describe()
    return result


@pytest.fixture(scope="module")
def clean_mlir(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("escaping") / "clean.mlir"
    path.write_text(CLEAN_MLIR, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def lint_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only the hostile module, for ``jxinspect lint``."""
    folder = tmp_path_factory.mktemp("escaping-lint")
    shutil.copy(FAULTS / "hostile_names.py", folder / "hostile_names.py")
    return folder


# ---- the escaping functions ------------------------------------------------------------


def test_ordinary_text_is_unchanged_and_escaping_is_idempotent() -> None:
    for ordinary in ("params['w']", "result[0]", "f at mod.py:12", "a\\nb", "x → y · P('d')"):
        assert escape.text(ordinary) == ordinary
        assert escape.xml(ordinary) == ordinary
    hostile = "a\nb\r\t\x00\x07\x1b[31m\x7f\x85\u2028\u202e\ud800"
    shown = escape.text(hostile)
    assert shown == "a\\nb\\r\\t\\x00\\x07\\x1b[31m\\x7f\\x85\\u2028\\u202e\\ud800"
    assert escape.text(shown) == shown
    assert escape.program_text("a\x1b\nb\n") == "a\\x1b\nb\n"


def test_markdown_github_and_html_escaping() -> None:
    assert escape.markdown_text("loss_fn") == "loss_fn"
    assert escape.markdown_text("__init__ <b>|[x](y)") == "\\_\\_init\\_\\_ \\<b\\>\\|\\[x\\](y)"
    assert escape.markdown_code("a`b``c|d") == "``` a`b``c\\|d ```"
    assert escape.markdown_code("x\ny") == "`x\\ny`"
    assert escape.github_data("50%\r\n\x1b") == "50%25%0D%0A\\x1b"
    assert escape.github_property("a:b,c") == "a%3Ab%2Cc"
    assert escape.html('<a href="x">\x00') == "&lt;a href=&quot;x&quot;&gt;\\x00"


def test_github_escaping() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert command("error", "x\ny", "dir,1/f:2.py", 3, "JX102") == (
        "::error file=dir%2C1/f%3A2.py,line=3,title=JX102::x%0Ay"
    )
    assert command("notice", "plain") == "::notice::plain"


# ---- StableHLO text with hostile names ---------------------------------------------------


def test_mlir_names_in_text_diff(run_cli: Run, clean_mlir: str) -> None:
    out = run(run_cli, "diff-debug", clean_mlir, MLIR).stdout
    assert_no_forged_lines(out)
    lines = out.splitlines()
    for name in (*MLIR_NAMES, MLIR_RESULT):
        shown = [line for line in lines if escape.text(name) in line]
        assert len(shown) == 1 and "renamed" in shown[0], (name, out)
    assert [line for line in lines if line.startswith(("ok:", "FAIL:"))] == [lines[-1]], out


def test_mlir_names_in_coloured_diff(run_cli: Run, clean_mlir: str) -> None:
    out = run(run_cli, "diff-debug", clean_mlir, MLIR, "--color", "always").stdout
    plain = _SGR.sub("", out)
    assert "\x1b[" in out and not raw_controls(plain), raw_controls(plain)
    assert "\\x1b[31mred\\x07bell\\x00nul|pi" in plain


def test_mlir_names_in_markdown_diff(run_cli: Run, clean_mlir: str) -> None:
    out = run(run_cli, "diff-debug", clean_mlir, MLIR, "--format", "markdown").stdout
    assert not raw_controls(out), raw_controls(out)
    assert assert_tables_keep_columns(out) >= 4 + 9
    assert "`x\\nverdict: improvement`" in out
    assert "`\\x1b[31mred\\x07bell\\x00nul\\|pipe`" in out
    assert "`result\\n\\x1b[2J\\|cleared`" in out


def test_mlir_names_round_trip_in_json(run_cli: Run, clean_mlir: str) -> None:
    data = json.loads(run(run_cli, "diff-debug", clean_mlir, MLIR, "--format", "json").stdout)
    after = {change["after"] for target in data["targets"] for change in target["changes"]}
    assert {*MLIR_NAMES, MLIR_RESULT} <= after, after


# ---- a Python module with hostile names ---------------------------------------------------


def test_module_names_in_text_report(run_cli: Run) -> None:
    out = run(run_cli, "lower", STEP).stdout
    assert_no_forged_lines(out)
    lines = out.splitlines()
    inputs = lines.index("inputs (4)")
    assert lines[inputs + 6] == "" and lines[inputs + 7] == "outputs (2)", out
    assert f"static:       mode={escape.text(STATIC)}" in lines
    assert "function:     step\\n\\x1b[31mverdict: improvement at " in out
    for key in (FORGED, COLOURED):
        assert f"  argument box.{escape.text(key)} is unused and was pruned from @main" in out


def test_module_names_in_views_and_colour(run_cli: Run) -> None:
    views = ("--show", "jaxpr", "--show", "mlir", "--show", "sharding")
    out = run(run_cli, "lower", STEP, *views).stdout
    assert_no_forged_lines(out)
    assert f"# static mode = {escape.text(STATIC)} (position 2)" in out
    coloured = run(run_cli, "lower", STEP, *views, "--color", "always").stdout
    plain = _SGR.sub("", coloured)
    assert "\x1b[" in coloured and not raw_controls(plain), raw_controls(plain)
    assert "[b]bold[/b]" in plain  # rich markup in a name is text, not markup
    assert f"mode={escape.text(STATIC)}" in plain
    assert "│ 0 │ box.a\\nverdict:" in plain  # row 0 starts with its own path


def test_module_names_round_trip_in_json(run_cli: Run) -> None:
    report = json.loads(run(run_cli, "lower", STEP, "--format", "json").stdout)
    paths = [leaf["path"] for leaf in report["inputs"]]
    assert paths[:2] == [f"box.{FORGED}", f"box.{COLOURED}"]
    assert [leaf["path"].endswith((FORGED, COLOURED)) for leaf in report["outputs"]] == [True] * 2
    assert report["static_args"][0]["value"] == STATIC


def test_module_names_in_html(run_cli: Run) -> None:
    page = run(run_cli, "lower", STEP, "--format", "html").stdout
    assert not raw_controls(page), raw_controls(page)
    assert "<script>alert" not in page
    assert "box.\\x1b[31mred\\x07bell\\x00nul|pipe &lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_module_names_in_lint_text(run_cli: Run, lint_folder: Path) -> None:
    out = run(run_cli, "lint", "--format", "text", rc=3, cwd=lint_folder).stdout
    assert_no_forged_lines(out)
    assert "tracing failed: ValueError: \\x1b[31mboom\\x07 |pipe| ::error::forged" in out
    pruned = [line for line in out.splitlines() if "JX105" in line]
    assert len(pruned) == 2 and f"box.{escape.text(FORGED)} is unused" in pruned[0], out


def test_module_names_in_github_commands(run_cli: Run, lint_folder: Path) -> None:
    out = run(run_cli, "lint", "--format", "github", rc=3, cwd=lint_folder).stdout
    assert not raw_controls(out), raw_controls(out)
    lines = out.splitlines()
    assert len(lines) == 4, out  # one failed target, two findings, the summary
    assert all(line.startswith(("::error ", "::notice ")) for line in lines[:3]), out
    assert "box.a%0Averdict: improvement is unused" in out
    assert "box.\\x1b[31mred\\x07bell\\x00nul|pipe" in out


def test_module_names_in_junit(run_cli: Run, lint_folder: Path) -> None:
    out = run(run_cli, "lint", "--format", "junit", rc=3, cwd=lint_folder).stdout
    assert not raw_controls(out.replace("\n", "")), raw_controls(out)
    root = ET.fromstring(out)
    texts = [el.text or "" for el in root.iter("system-out")]
    texts += [el.get("message", "") for el in root.iter("error")]
    found = "\n".join(texts)
    assert f"box.{escape.text(FORGED)} is unused" in found
    assert f"box.{escape.text(COLOURED)} is unused" in found
    assert "ValueError: \\x1b[31mboom\\x07 |pipe|" in found
    assert all(len(text.splitlines()) <= 2 for text in texts), texts  # one line per finding


def test_module_names_in_markdown_diff(run_cli: Run) -> None:
    out = run(run_cli, "diff-debug", STEP, MLIR, "--format", "markdown").stdout
    assert not raw_controls(out), raw_controls(out)
    assert assert_tables_keep_columns(out) >= 9 + 5
    assert "| function | step\\\\n\\\\x1b\\[31mverdict: improvement | module @\u2060jit_f |" in out
    assert "`box.\\x1b[31mred\\x07bell\\x00nul\\|pipe <script>alert(1)</script> [b]bold[/b]`" in out


# ---- the error line ------------------------------------------------------------------------


def test_error_line_stays_one_line(run_cli: Run) -> None:
    bad = f"{MODULE}:no\nverdict: improvement\x1b[31m"
    line = error_line(run(run_cli, "lower", bad, rc=2))
    assert "no\\nverdict: improvement\\x1b[31m" in line and not raw_controls(line)
    failed = error_line(run(run_cli, "lower", f"{MODULE}:fails", rc=3))
    assert "ValueError: \\x1b[31mboom\\x07 |pipe|" in failed and not raw_controls(failed)


# ---- characters that act on what shows the text: JSON, SARIF, Markdown mentions -----------

ACTING = "\u202e@octocat\u2028\u2029"
"""A bidirectional override, a mention, the line and paragraph separators."""


def test_json_and_sarif_escape_bidi_controls_and_line_separators(
    run_cli: Run, tmp_path: Path
) -> None:
    module = tmp_path / f"r{ACTING}.py"
    module.write_text('def f(x, y):\n    return x * 2\n\n\nJXINSPECT = {"f": {"args": '
                      '"f32[3], f32[3]"}}\n', encoding="utf-8")  # fmt: skip
    found = {}
    for format in ("json", "sarif"):
        out = run(run_cli, "lint", ".", "--format", format, cwd=tmp_path).stdout
        assert not [c for c in "\u202e\u2028\u2029" if c in out], format
        assert "r\\u202e@octocat\\u2028\\u2029.py:f" in out, out
        found[format] = json.loads(out)
    assert found["json"]["targets"][0]["target"] == f"r{ACTING}.py:f"
    (result,) = found["sarif"]["runs"][0]["results"]
    assert result["ruleId"] == "JX105"


def test_markdown_text_mentions_no_one(run_cli: Run, tmp_path: Path) -> None:
    assert escape.markdown_text("@octocat and @org/team, a@b.com") == (
        "@\u2060octocat and @\u2060org/team, a@b.com"
    )
    assert escape.markdown_code("@octocat") == "`@octocat`"  # a code span links no one
    before = tmp_path / "@octocat.mlir"
    before.write_text(CLEAN_MLIR, encoding="utf-8")
    out = run(run_cli, "diff-debug", before.name, MLIR_PATH, "--format", "markdown",
              rc=(0, 1), cwd=tmp_path).stdout  # fmt: skip
    assert "| target | @\u2060octocat.mlir |" in out, out
    assert not re.search(r"(?<![`\w])@[0-9A-Za-z]", out.replace("`@", "`")), out


# ---- invisible characters: names that would print as another ------------------------------

INVISIBLE = REPO / "tests" / "faults" / "invisible_names.py"
ZERO_WIDTH, HIDDEN, TURNED = (
    "w\u200b",
    "b\u2060\ufeff\U000e0041\U000e007f",
    "\u202ex\u2066y\u200e\u061c",
)
"""The attribute keys of ``invisible_names.Params``, unescaped: leaf paths ``params.<key>``."""
_INVISIBLE = re.compile("[\u00ad\u061c\u115f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
                        "\u3164\ufe00-\ufe0f\ufeff\U000e0000-\U000e0fff]")  # fmt: skip
"""Characters that draw nothing, or turn the text around them."""


def assert_no_invisible(text: str) -> None:
    found = [repr(text[max(m.start() - 20, 0) : m.end() + 5]) for m in _INVISIBLE.finditer(text)]
    assert not found, found


@pytest.fixture()
def invisible(tmp_path: Path) -> Path:
    """A folder with the module, and ``plain.py``: the same with plain names."""
    source = INVISIBLE.read_text(encoding="utf-8")
    (tmp_path / "invisible_names.py").write_text(source, encoding="utf-8")
    for raw, plain in ((ZERO_WIDTH, "w"), (HIDDEN, "b"), (TURNED, "t"), ("step\u200b", "step")):
        source = source.replace(repr(raw)[1:-1], plain)
    (tmp_path / "plain.py").write_text(source, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("raw", "shown"),
    [("step\u200b", "step\\u200b"), ("a\u200c\u200db", "a\\u200c\\u200db"),
     ("w\u2060j", "w\\u2060j"), ("\ufeffbom", "\\ufeffbom"), ("soft\u00ad", "soft\\xad"),
     ("\u3164", "\\u3164"), ("x\ufe0f", "x\\ufe0f"), ("\u180e", "\\u180e"),
     ("tag\U000e0041\U000e007f", "tag\\U000e0041\\U000e007f"), ("\U000e0100", "\\U000e0100"),
     ("\u202ax\u202c\u2066\u2069\u200e\u200f\u061c",
      "\\u202ax\\u202c\\u2066\\u2069\\u200e\\u200f\\u061c")],
)  # fmt: skip
def test_invisible_and_bidirectional_characters_are_shown(raw: str, shown: str) -> None:
    assert escape.text(raw) == shown and escape.text(shown) == shown
    assert escape.program_text(raw + "\n") == shown + "\n"
    assert escape.html(raw) == shown
    assert escape.github_data(raw) == shown
    assert escape.text("step") != escape.text("step\u200b")


def test_visible_text_in_other_scripts_is_kept() -> None:
    for ordinary in ("Schritt_ä", "шаг", "步骤", "ステップ", "خطوة", "צעד", "x → y", "😀"):
        assert escape.text(ordinary) == ordinary


def test_invisible_names_in_every_report_view(run_cli: Run, invisible: Path) -> None:
    shown = [f"params.{escape.text(key)}" for key in (ZERO_WIDTH, HIDDEN, TURNED)]
    report = run(run_cli, "lower", "invisible_names.py:step", cwd=invisible).stdout
    assert_no_invisible(report)
    assert "function:     step\\u200b at " in report
    assert all(path in report for path in shown), report
    assert f"argument {shown[2]} is unused" in report
    views = ("--show", "sharding", "--show", "jaxpr", "--show", "mlir", "--color", "always")
    coloured = run(run_cli, "lower", "invisible_names.py:step", *views, cwd=invisible).stdout
    assert_no_invisible(coloured)
    assert shown[1] in _SGR.sub("", coloured)
    saved = run(run_cli, "lower", "invisible_names.py:step", "--format", "json", cwd=invisible)
    (invisible / "r.json").write_text(saved.stdout, encoding="utf-8")
    for args in (("show", "r.json"), ("show", "r.json", "--show", "sharding"),
                 ("show", "r.json", "--format", "html"), ("lower", "invisible_names.py:step",
                 "--format", "html")):  # fmt: skip
        out = run(run_cli, *args, cwd=invisible).stdout
        assert_no_invisible(out)
        assert shown[0] in out, args
    data = json.loads(saved.stdout)  # JSON keeps the exact names
    assert [leaf["path"] for leaf in data["inputs"]][:3] == [
        f"params.{k}" for k in (ZERO_WIDTH, HIDDEN, TURNED)
    ]
    assert data["function"].startswith("step\u200b at ")


def test_invisible_names_in_diff_and_lint(run_cli: Run, invisible: Path) -> None:
    diff = run(run_cli, "diff-debug", "plain.py:step", "invisible_names.py:step", rc=(0, 1),
               cwd=invisible).stdout  # fmt: skip
    assert_no_invisible(diff)
    assert "params.w\\u200b" in diff and "step\\u200b" in diff, diff
    for format in ("text", "github", "junit"):
        out = run(run_cli, "lint", "invisible_names.py", "--format", format, rc=(0, 1),
                  cwd=invisible).stdout  # fmt: skip
        assert_no_invisible(out)
        assert "\\u202ex\\u2066y" in out, (format, out)
    found = run(run_cli, "lint", "invisible_names.py", "--format", "json", rc=(0, 1), cwd=invisible)
    (finding,) = json.loads(found.stdout)["targets"][0]["findings"]
    assert f"params.{TURNED}" in finding["message"]


def test_invisible_names_in_the_record_summary(run_cli: Run, invisible: Path) -> None:
    from helpers import WARM_PYTHON

    said = run(run_cli, "record", "-o", "runs", "--", *WARM_PYTHON, "invisible_names.py",
               cwd=invisible)  # fmt: skip
    assert_no_invisible(said.stdout + said.stderr)
    summary = run(run_cli, "show", "runs", cwd=invisible).stdout
    assert_no_invisible(summary)
    assert "step\\u200b" in summary, summary
