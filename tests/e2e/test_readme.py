"""The README and every page of the docs site (``docs/**/*.md``) run as written: every
command of their code blocks, in order, from the root of a copy of a fresh clone (one copy
per file), with the exit code it states and the output it shows.

What is read (the convention the README states under "Set up"):

* command lines of the code blocks (fenced, or indented four spaces): ``jxinspect ...``,
  ``$ jxinspect ...``, ``python bench/...`` and ``cd FOLDER`` (which holds for the lines
  after it, as in a shell); a line ending in ``\\`` goes on on the next;
* a comment ``# exit N`` at the end of a line: its exit code (else 0);
  ``finds CODE`` / ``finds no CODE`` in it (a rule page's example and its fix): its
  output holds that code / does not, checked on every release where the rule's fixture
  finds it (:data:`silent.SILENT`) but those named after it (``, but on JAX 0.7 and
  0.8``: series or releases);
  ``# template``: a line to fill in with one's own files, not run;
* after a ``$ `` command, the lines up to the next ``$`` or the end of the block: its
  standard output, where a line ``...`` stands for any lines. Paths under the copy read
  as the README writes them (relative), durations (``0.10 s``) as any.

Each command runs through ``run_cli`` in a temporary copy of what the commands read
(:data:`COPIED`), so nothing is
written in the repository; ``> FILE`` is the run's standard output, and the ``python``
that ``record`` runs is the warm one (:data:`helpers.WARM_PYTHON`).

A command that reads only what the clone ships (:func:`_shared_key`: a ``lower``,
``explain``, ``survey`` or ``diff-debug`` of shipped files that writes no file) runs once
per test process, whichever file shows it first: the others compare its result.

Outputs are those of JAX :data:`README_JAX`: they are compared only where that release
is the one running; exit codes are checked on every release (the README's release table
says which commands a release cannot run: those exit 2 there). The benches run with
their smallest options only when asked (``python -m pytest -m bench
tests/e2e/test_readme.py``: a minute or two); otherwise their flags are checked.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest
from helpers import JAX_RELEASE, REPO, WARM_PYTHON, CliResult, run_cli

from jxinspect.core.vocabulary import release_key

README = REPO / "README.md"
PAGES = tuple(sorted((REPO / "docs").rglob("*.md")))
"""The docs site's pages, whose commands run as the README's do."""
README_JAX = "0.10.2"
"""The JAX release whose output the README shows (its ``jax:`` lines say so)."""

COPIED = ("sample_programs", "sample_repo", "bench", "src/jxinspect/surveys", "tests/fixtures",
          "tests/rules/fixtures")  # fmt: skip
"""What the README's commands read (``bench/sharding_view.py`` a fixture, the rule pages'
examples the rule fixtures), copied into the test's folder."""

NEEDS = {"--abstract": "0.4.38"}
"""Flags a release before this one refuses with exit 2 (the README's release table)."""

BENCH_SMALLEST = {
    "overhead.py": ("--runs", "1"),
    "compile.py": ("--runs", "1"),
    "diff.py": ("--runs", "1"),
    "mlir_view.py": ("--ops", "300", "--runs", "1"),
    "lint.py": ("--runs", "1", "--count", "4"),
    "sharding_view.py": ("--runs", "1"),
    "processes_show.py": ("--processes", "16", "--against", "4"),
    "cache_watch.py": ("--runs", "1", "--count", "4"),
    "guard.py": ("--runs", "1", "--processes", "2"),
    "profile.py": ("--runs", "1"),
}
"""Each bench's smallest run, added to the README's command line under ``-m bench``."""

_PREFIXES = ("jxinspect ", "python bench/", "cd ")
_SHELL = set("();<>|&")


@dataclass(frozen=True)
class Command:
    """One command line of the README or a docs page."""

    line: int
    """Its line in the file (1-based)."""
    text: str
    argv: tuple[str, ...]
    stdout: str | None
    """``> FILE``: where its output goes."""
    exit: int
    template: bool
    expected: tuple[str, ...] | None
    """The output shown after a ``$ `` command (``None``: none shown)."""
    file: str = "README.md"
    """The file that shows it, relative to the repository."""
    finds: tuple[str, bool] | None = None
    """``# finds CODE`` (``True``) or ``# finds no CODE`` (``False``): whether its output
    holds the rule's code."""
    finds_but_on: tuple[str, ...] = ()
    """The JAX series or releases where ``finds`` is not checked."""

    def where(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def _code_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """``(block, line number, text)`` of every line of a code block, the block's
    indentation removed."""
    block = 0
    fence: int | None = None
    previous_blank = True
    in_indented = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if fence is not None:
            if stripped.startswith("```"):
                fence = None
            else:
                yield block, number, line[fence:] if line[:fence].strip() == "" else stripped
            continue
        if stripped.startswith("```"):
            block += 1
            fence = indent
            in_indented = False
            continue
        if indent >= 4 and stripped and (previous_blank or in_indented):
            if not in_indented:
                block += 1
            in_indented = True
            yield block, number, line[4:]
        elif stripped:
            in_indented = False
        elif in_indented:
            yield block, number, ""  # a blank line of a shown output
        previous_blank = not stripped


def _split_comment(text: str) -> tuple[str, str]:
    """The command and its trailing comment (a ``#`` after a space, outside quotes)."""
    quote = ""
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip(), text[i + 1 :].strip()
    return text.rstrip(), ""


def _command(line: int, text: str, expected: tuple[str, ...] | None, file: str) -> Command:
    body, comment = _split_comment(text)
    lexer = shlex.shlex(body, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    stdout = None
    if len(tokens) >= 2 and tokens[-2] == ">":
        stdout, tokens = tokens[-1], tokens[:-2]
    shell = [t for t in tokens if set(t) <= _SHELL]
    assert not shell, (
        f"{file}:{line}: `{' '.join(shell)}` makes a shell pipeline or list of this "
        f"line; write one command a line (a choice of values in the comment): {text}"
    )
    found = re.match(r"exit (\d+)\b", comment)
    finds = re.search(r"\bfinds (no )?(JX\d{3})\b(?:, but on JAX ([\d. and]+))?", comment)
    return Command(
        line=line,
        text=body,
        argv=tuple(tokens),
        stdout=stdout,
        exit=int(found.group(1)) if found else 0,
        template=comment.startswith("template"),
        expected=expected,
        file=file,
        finds=(finds.group(2), finds.group(1) is None) if finds else None,
        finds_but_on=tuple(finds.group(3).split(" and ")) if finds and finds.group(3) else (),
    )


def readme_commands(text: str, file: str = "README.md") -> list[Command]:
    """Every command of the code blocks of ``text`` (the README's, or a page's), in order."""
    lines = list(_code_lines(text))
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        block, number, line = lines[i]
        i += 1
        shown = line.startswith("$ ")
        command = line[2:] if shown else line
        if not command.startswith(_PREFIXES):
            continue
        while command.endswith("\\") and i < len(lines) and lines[i][0] == block:
            command = command[:-1].rstrip() + " " + lines[i][2].strip()
            i += 1
        output: list[str] = []
        while shown and i < len(lines) and lines[i][0] == block:
            if lines[i][2].startswith("$ "):
                break
            output.append(lines[i][2].rstrip())
            i += 1
        while output and not output[-1]:
            output.pop()
        commands.append(_command(number, command, tuple(output) if output else None, file))
    return commands


_DURATION = re.compile(r"\b\d+\.\d+(?= s\b)|(?<=\b(?:trace|lower) )\d+\.\d+|(?<=compile )\d+\.\d+")


def _normalized(text: str, root: Path) -> list[str]:
    text = text.replace(f"{root}/", "").replace(str(root), ".")
    return [_DURATION.sub("<s>", line.rstrip()) for line in text.splitlines()]


def output_matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    """Whether ``actual`` reads as ``expected``, where a line ``...`` is any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in actual)) is not None


def _expected_exit(command: Command) -> int:
    for flag, since in NEEDS.items():
        if flag in command.argv and release_key(JAX_RELEASE) < release_key(since):
            return 2
    return command.exit


_LIBRARY = re.compile(r"^\s*(?:import|from)\s+(flax|equinox|optax|jaxtyping)\b", re.MULTILINE)


def _missing_library(command: Command, cwd: Path) -> str | None:
    """The model library a command's target imports that is not installed (the samples of
    ``sample_programs/libraries/`` need the test extra's)."""
    import importlib.util

    for arg in command.argv[2:]:
        path = cwd / arg.split(":")[0]
        if path.suffix == ".py" and path.is_file():
            for library in _LIBRARY.findall(path.read_text(encoding="utf-8")):
                if importlib.util.find_spec(library) is None:
                    return library
    return None


def _copy(root: Path) -> None:
    for name in COPIED:
        shutil.copytree(
            REPO / name,
            root / name,
            ignore=shutil.ignore_patterns("__pycache__", ".jxinspect_cache"),
        )


def _run(command: Command, root: Path, cwd: Path) -> CliResult:
    argv = list(command.argv)
    if argv[0] == "python":
        argv[0] = sys.executable
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
        return CliResult(proc.returncode, proc.stdout, proc.stderr, tuple(argv))
    if "--" in argv and argv[argv.index("--") + 1 :][:1] == ["python"]:
        at = argv.index("--") + 1
        argv[at : at + 1] = WARM_PYTHON
    stdout = None
    if command.stdout is not None:
        stdout = cwd / command.stdout
        stdout.touch()
    return run_cli(*argv[1:], cwd=cwd, stdout=stdout)


def _problem(command: Command, result: CliResult, root: Path, compare: bool) -> str | None:
    if result.returncode != _expected_exit(command):
        return (
            f"{command.where()}\n  exit {result.returncode}, {command.file} says "
            f"{_expected_exit(command)}\n  stderr: {result.stderr[-800:]}"
        )
    series = ".".join(JAX_RELEASE.split(".")[:2])
    checked = not {JAX_RELEASE, series} & set(command.finds_but_on)
    if command.finds is not None and checked and _fires(command.finds[0]):
        code, wanted = command.finds
        if (code in result.stdout) != wanted:
            said = "prints no" if wanted else "prints a"
            return f"{command.where()}\n  {said} {code} finding:\n{result.stdout[-2000:]}"
    if compare and command.expected is not None:
        actual = _normalized(result.stdout, root)
        expected = tuple(_DURATION.sub("<s>", line) for line in command.expected)
        if not output_matches(expected, actual):
            import difflib

            diff = "\n".join(
                difflib.unified_diff(list(expected), actual, command.file, "run", lineterm="")
            )
            return f"{command.where()}\n  prints other output than {command.file} shows:\n{diff}"
    return None


def _fires(code: str) -> bool:
    """Whether this release's fixture of ``code`` finds it (``tests/rules/silent.py``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("silent", REPO / "tests/rules/silent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    said = module.SILENT.get(code, {})
    series = ".".join(JAX_RELEASE.split(".")[:2])
    return (said[JAX_RELEASE] if JAX_RELEASE in said else said.get(series)) is None


_PURE = ("lower", "explain", "survey", "diff-debug")
"""Commands that change nothing a later command reads (given no ``-o``/``>`` file)."""
_SHARED: dict[tuple[str, tuple[str, ...]], tuple[CliResult, Path]] = {}
"""Results of the commands that read only what the clone ships, by folder and command
line, with the copy each ran in: run once per test process, for every file that shows
them."""


def _shared_key(command: Command, root: Path, cwd: Path) -> tuple[str, tuple[str, ...]] | None:
    """The key of a command whose result any copy gives alike, else ``None``: a
    :data:`_PURE` command that writes no file and whose every argument naming a path here
    names one the clone ships (none an earlier command wrote)."""
    argv = command.argv
    if len(argv) < 2 or argv[1] not in _PURE or command.stdout is not None:
        return None
    if {"-o", "--output"} & set(argv) or any(a.startswith("--output=") for a in argv):
        return None
    folder = cwd.relative_to(root)
    for arg in argv[2:]:
        name = arg.split(":")[0]
        if name and (cwd / name).exists() and not (REPO / folder / name).exists():
            return None
    return folder.as_posix(), argv


def _run_shared(command: Command, root: Path, cwd: Path) -> tuple[CliResult, Path]:
    """The command's result, and the copy it ran in (an earlier file's, when shared)."""
    key = _shared_key(command, root, cwd)
    if key is not None and key in _SHARED:
        return _SHARED[key]
    ran = (_run(command, root, cwd), root)
    if key is not None and ran[0].returncode == _expected_exit(command):
        _SHARED[key] = ran
    return ran


def test_the_readme_commands_run_as_documented(tmp_path: Path) -> None:
    _runs_as_documented(README, tmp_path)


class TestTheDocsPages:
    """A class of its own: ``--dist loadscope`` runs it on another worker than the
    README's test (a command both show then runs in each worker's process once)."""

    @pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
    def test_commands_run_as_documented(self, page: Path, tmp_path: Path) -> None:
        _runs_as_documented(page, tmp_path)


def _runs_as_documented(page: Path, tmp_path: Path) -> None:
    """Every command of ``page``, in order, in a copy of its own."""
    file = page.relative_to(REPO).as_posix()
    commands = readme_commands(page.read_text(encoding="utf-8"), file)
    root = tmp_path / "clone"
    _copy(root)
    cwd = root
    compare = JAX_RELEASE == README_JAX
    problems: list[str] = []
    skipped: list[str] = []
    for command in commands:
        if command.template:
            continue
        if command.argv[0] == "cd":
            cwd = (cwd / command.argv[1]).resolve()
            assert cwd.is_dir() and cwd.is_relative_to(root), command.where()
            continue
        if command.argv[0] == "python":
            continue  # the benches: test_the_benches_*
        library = _missing_library(command, cwd)
        if library is not None:
            skipped.append(f"{command.where()} ({library} is not installed)")
            continue
        result, ran_in = _run_shared(command, root, cwd)
        problem = _problem(command, result, ran_in, compare)
        if problem is not None:
            problems.append(problem)
    assert cwd == root, f"{file}: a block that goes into a folder comes back out"
    assert not problems, f"{len(problems)} commands of {file} do not run as documented:\n" + (
        "\n\n".join(problems)
    )
    if skipped:
        pytest.skip("not run, the test extra's libraries missing: " + "; ".join(skipped))
    if not compare and any(c.expected for c in commands):
        pytest.skip(
            f"exit codes checked; outputs not compared: {file} shows JAX {README_JAX}'s, "
            f"this is {JAX_RELEASE}"
        )


def test_the_readme_is_read_as_written() -> None:
    """The reader finds the commands, the blocks' folders, the outputs shown, the exit
    codes and the templates; every ``jax:`` line shown names :data:`README_JAX`."""
    commands = readme_commands(README.read_text(encoding="utf-8"))
    assert len(commands) >= 8
    by_text = {c.text: c for c in commands}
    shown = by_text["jxinspect lower sample_programs/data_parallel.py:step"]
    assert shown.expected is not None and shown.expected[0].startswith("target: ")
    assert shown.expected[-1].startswith("0/4 arguments and 3/3 results")
    assert by_text["jxinspect lint"].exit == 1
    folder = PurePosixPath(".")
    for command in commands:
        if command.argv[0] == "cd":
            folder = PurePosixPath(posixpath.normpath(folder / command.argv[1]))
        elif command.text == "jxinspect lint":
            assert folder == PurePosixPath("sample_repo"), command.where()
    assert folder == PurePosixPath("."), "a block that goes into a folder comes back out"
    pages = [c for page in PAGES for c in readme_commands(page.read_text(encoding="utf-8"))]
    assert len(commands) + len(pages) >= 60
    assert any(c.argv[0] == "python" for c in pages)
    continued = next(c for c in pages if c.text.startswith("jxinspect lower sample_programs/tp"))
    assert "--out-specs" in continued.argv and "--args" in continued.argv
    shown = [line for c in (*commands, *pages) for line in c.expected or ()]
    assert {line for line in shown if line.startswith("jax:")} == {f"jax:          {README_JAX}"}


def test_a_drifted_readme_fails() -> None:
    """What the main test would see if a command or an output drifted."""
    text = "\n".join(
        [
            "```",
            "$ jxinspect explain JX105   # exit 1",
            "JX105 info",
            "...",
            "```",
            "",
            "    jxinspect lower model.py:f   # template",
            "    python bench/lint.py --mode cold|edit",
        ]
    )
    with pytest.raises(AssertionError, match="shell pipeline"):
        readme_commands(text)
    explain, template = readme_commands(text.rsplit("\n", 1)[0])
    assert (explain.exit, explain.expected, template.template) == (1, ("JX105 info", "..."), True)
    assert output_matches(explain.expected or (), ["JX105 info", "more", "lines"])
    assert not output_matches(explain.expected or (), ["JX105 warning"])
    assert not output_matches(("a", "b"), ["a", "b", "c"])


def test_a_rule_example_that_does_not_find_its_code_fails(tmp_path: Path) -> None:
    """``# finds CODE`` and ``# finds no CODE``: what the command prints must say so (on a
    release whose fixture finds the code: JX105's, every release)."""
    bad, fix, excepted = readme_commands(
        "```\njxinspect lower m.py:f   # exit 3, finds JX105\n"
        "jxinspect lower m.py:g   # finds no JX105\n"
        "jxinspect lower m.py:h   # finds no JX105, but on JAX 0.7 and 0.12.1\n```\n"
    )
    assert (bad.exit, bad.finds, fix.exit, fix.finds) == (3, ("JX105", True), 0, ("JX105", False))
    assert (fix.finds_but_on, excepted.finds, excepted.finds_but_on) == (
        (),
        ("JX105", False),
        ("0.7", "0.12.1"),
    )
    finding, nothing = "  JX105 info    argument unused is unused\n", "0 findings\n"
    assert _problem(bad, CliResult(3, finding, ""), tmp_path, compare=True) is None
    assert "prints no JX105" in (_problem(bad, CliResult(3, nothing, ""), tmp_path, True) or "")
    assert _problem(fix, CliResult(0, nothing, ""), tmp_path, compare=True) is None
    assert "prints a JX105" in (_problem(fix, CliResult(0, finding, ""), tmp_path, True) or "")


def _benches() -> list[Command]:
    """The benches the README and the docs pages run (``python bench/...``)."""
    return [
        c
        for path in (README, *PAGES)
        for c in readme_commands(
            path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix()
        )
        if c.argv[0] == "python" and not c.template
    ]


@pytest.mark.parametrize("command", _benches(), ids=lambda c: " ".join(c.argv[1:]))
def test_the_benches_take_the_readme_flags(command: Command) -> None:
    """Without ``-m bench``: the script is there and parses the README's flags."""
    script = REPO / command.argv[1]
    assert script.name in BENCH_SMALLEST, f"{command.where()}: add its smallest run"
    result = subprocess.run(
        [sys.executable, script, *command.argv[2:], "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and "usage:" in result.stdout, result.stderr


@pytest.mark.bench
@pytest.mark.parametrize("command", _benches(), ids=lambda c: " ".join(c.argv[1:]))
def test_the_benches_run(command: Command, tmp_path: Path) -> None:
    """``-m bench``: the README's command with the bench's smallest options."""
    _copy(tmp_path)
    smallest = BENCH_SMALLEST[Path(command.argv[1]).name]
    result = subprocess.run(
        [sys.executable, *command.argv[1:], *smallest],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == command.exit, f"{command.where()}\n{result.stderr[-2000:]}"
    assert "ratio" in result.stdout, result.stdout
