"""Every way ``jxinspect lower`` can fail, through the installed command.

The contract (README, ``jxinspect.core.errors``): exit 2 for a usage, spec or configuration
error, 3 when the user's code failed (import, trace), 4 for a bug in jxinspect; in every
case exactly one line on stderr, starting with ``error:``, no traceback, nothing on stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, REPO, error_line, marker_line

FIXTURE = "tests/fixtures/targets.py"
TARGETS_PY = FIXTURES / "targets.py"
IMPORT_RAISES_PY = FIXTURES / "import_raises.py"

USAGE, USER_CODE = 2, 3

# (id, arguments after `lower`, exit code, substrings of the error line)
CASES = [
    ("no-such-module", ["nosuch.mod:f", "--args", "f32[3]"], USAGE,
     ["no such module: nosuch.mod"]),
    ("no-such-file", ["tests/fixtures/nope.py:f", "--args", "f32[3]"], USAGE,
     ["no such file: tests/fixtures/nope.py"]),
    ("import-raises", ["tests/fixtures/import_raises.py:f", "--args", "f32[3]"], USER_CODE,
     ["importing tests/fixtures/import_raises.py failed",
      "RuntimeError: config server unreachable",
      f"{IMPORT_RAISES_PY}:{marker_line(IMPORT_RAISES_PY, 'import_raises')}"]),
    ("no-such-function", [f"{FIXTURE}:bad_trac", "--args", "f32[3]"], USAGE,
     ["has no attribute `bad_trac`", "did you mean `bad_trace`?"]),
    ("not-callable", [f"{FIXTURE}:NOT_CALLABLE", "--args", "f32[3]"], USAGE,
     ["NOT_CALLABLE", "not a function"]),
    ("no-function-named", [FIXTURE, "--args", "f32[3]"], USAGE,
     [f"name the function: {FIXTURE}:FUNCTION"]),
    ("bad-target-name", [f"{FIXTURE}:not-a-name", "--args", "f32[3]"], USAGE,
     ["bad target", "not a dotted Python name"]),
    ("malformed-spec", [f"{FIXTURE}:double", "--args", "f32[3,,4]"], USAGE,
     ["--args: bad spec at column 6", "f32[3,,4]"]),
    ("unknown-dtype", [f"{FIXTURE}:double", "--args", "f33[3]"], USAGE,
     ["--args: bad spec at column 0", "unknown dtype 'f33'", "f32"]),
    ("too-many-args", [f"{FIXTURE}:double", "--args", "f32[3], f32[4]"], USAGE,
     ["do not fit double(x)", "too many positional arguments"]),
    ("unknown-kwarg", [f"{FIXTURE}:double", "--args", "f32[3]", "--kwargs", "z=1"], USAGE,
     ["do not fit double(x)", "'z'"]),
    ("unhashable-static", [f"{FIXTURE}:pair", "--args", "f32[3], [1,2]",
                           "--static-argnums", "1"], USAGE,
     ["static argument 1 is list [1, 2]", "not hashable"]),
    ("static-argnum-out-of-range", [f"{FIXTURE}:pair", "--args", "f32[3], 2",
                                    "--static-argnums", "5"], USAGE,
     ["static-argnums 5 is out of range", "2 positional arguments"]),
    ("mesh-larger-than-devices", [f"{FIXTURE}:double", "--args", "f32[8]", "--devices", "2",
                                  "--mesh", "data=4"], USAGE,
     ["mesh data=4 needs 4 devices", "has 2", "--abstract"]),
    ("unknown-axis-in-in-specs", [f"{FIXTURE}:double", "--args", "f32[8]", "--mesh", "data=2",
                                  "--in-specs", "P('batch')"], USAGE,
     ["--in-specs: unknown mesh axis 'batch'", "'data'"]),
    ("unknown-axis-in-args", [f"{FIXTURE}:double", "--args", "f32[8@batch]",
                              "--mesh", "data=2"], USAGE,
     ["unknown mesh axis 'batch'"]),
    ("not-divisible", [f"{FIXTURE}:double", "--args", "f32[7@data]", "--mesh", "data=2"], USAGE,
     ["f32[7@data]", "dimension 7 does not divide over data (2 devices)"]),
    ("axes-without-mesh", [f"{FIXTURE}:double", "--args", "f32[8@data]"], USAGE,
     ["names mesh axes but no mesh is given", "--mesh"]),
    ("specs-without-mesh", [f"{FIXTURE}:double", "--args", "f32[8]",
                            "--in-specs", "P('data')"], USAGE,
     ["need a mesh"]),
    ("shard-map-without-out-specs", [f"{FIXTURE}:double", "--args", "f32[8]",
                                     "--stage", "shard_map", "--mesh", "data=2"], USAGE,
     ["shard_map needs --out-specs"]),
    ("tracing-error", [f"{FIXTURE}:bad_trace", "--args", "f32[4]"], USER_CODE,
     ["tracing failed: TypeError: dot_general",
      f"(at {TARGETS_PY}:{marker_line(TARGETS_PY, 'bad_trace')} in bad_trace)"]),
    ("no-example-inputs", [f"{FIXTURE}:double"], USAGE,
     [f"no example inputs for {FIXTURE}:double", "--args", "--args-from", "JXINSPECT",
      '{"double": {"args": "..."}}']),
    ("args-from-raises", [f"{FIXTURE}:double", "--args-from", "make_args_raises"], USER_CODE,
     ["--args-from make_args_raises failed: ValueError: no example data here",
      f"{TARGETS_PY}:{marker_line(TARGETS_PY, 'make_args_raises')}"]),
    ("args-from-missing", [f"{FIXTURE}:double", "--args-from", "make_argz"], USAGE,
     ["no attribute `make_argz`"]),
    ("unwritable-output", ["sample_programs/unused_arg.py:f", "-o", "no/such/dir/out.txt"], USAGE,
     ["cannot write no/such/dir/out.txt"]),
]  # fmt: skip


@pytest.mark.parametrize("args, code, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error(args: list[str], code: int, expected: list[str], run_cli: Any) -> None:
    result = run_cli("lower", *args)
    assert result.returncode == code, result.describe()
    line = error_line(result)
    for text in expected:
        assert text in line, f"{text!r} not in {line!r}"
    assert result.stdout == "", result.describe()


@pytest.mark.parametrize(
    "declaration, expected",
    [
        ('{"f": {"arg": "f32[3]"}}', "unknown key `arg` (did you mean `args`?)"),
        ('{"f": {"args": "f32[3]", "devices": "8"}}', "`devices` must be a positive int"),
    ],
    ids=["unknown-key", "bad-value"],
)
def test_bad_declaration(declaration: str, expected: str, run_cli: Any, tmp_path: Path) -> None:
    """A module's JXINSPECT declaration is configuration: its mistakes exit 2."""
    module = tmp_path / "declared.py"
    module.write_text(f"JXINSPECT = {declaration}\n\n\ndef f(x):\n    return x\n",
                      encoding="utf-8")  # fmt: skip
    result = run_cli("lower", f"{module}:f")
    assert result.returncode == USAGE, result.describe()
    line = error_line(result)
    assert "'f' in JXINSPECT" in line and expected in line


def test_syntax_error_in_user_file(run_cli: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import jax\n\n\ndef f(x):\n    return x +\n", encoding="utf-8")
    result = run_cli("lower", f"{broken}:f", "--args", "f32[3]")
    assert result.returncode == USER_CODE, result.describe()
    line = error_line(result)
    assert f"syntax error in {broken}:5" in line


def test_syntax_error_in_user_module(run_cli: Any, tmp_path: Path) -> None:
    """The same through a dotted module name (the declaration cannot be read first)."""
    (tmp_path / "broken_mod.py").write_text("def f(x:\n    return x\n", encoding="utf-8")
    result = run_cli("lower", "broken_mod:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == USER_CODE, result.describe()
    line = error_line(result)
    assert "syntax error in" in line and "broken_mod.py:1" in line


def test_import_error_in_dotted_module(run_cli: Any, tmp_path: Path) -> None:
    """A module that exists but imports something that does not: the user's code failed,
    not "no such module"."""
    (tmp_path / "needs_dep.py").write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    result = run_cli("lower", "needs_dep:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == USER_CODE, result.describe()
    line = error_line(result)
    assert "importing needs_dep failed" in line and "no_such_dependency_xyz" in line


@pytest.mark.parametrize("exception", ["ValueError", "RuntimeError"])
def test_parent_package_import_fails(exception: str, run_cli: Any, tmp_path: Path) -> None:
    package = tmp_path / "badpkg"
    package.mkdir()
    (package / "__init__.py").write_text(f"raise {exception}('package init failed')\n",
                                         encoding="utf-8")  # fmt: skip
    (package / "sub.py").write_text("def f(x):\n    return x\n", encoding="utf-8")
    result = run_cli("lower", "badpkg.sub:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == USER_CODE, result.describe()
    line = error_line(result)
    assert "package init failed" in line


def test_sys_exit_while_tracing(run_cli: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:exits", "--args", "f32[3]")
    assert result.returncode == USER_CODE, result.describe()
    line = error_line(result)
    assert f"{TARGETS_PY}:{marker_line(TARGETS_PY, 'exits')}" in line


def test_base_exception_while_tracing(run_cli: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:raises_base_exception", "--args", "f32[3]")
    assert result.returncode == USER_CODE, result.describe()
    error_line(result)


def test_typer_usage_error_is_one_line(run_cli: Any) -> None:
    result = run_cli("lower", "sample_programs/mlp.py:predict", "--stage", "foo")
    assert result.returncode == USAGE, result.describe()
    line = error_line(result)
    assert "--stage" in line and "foo" in line


def test_typer_usage_error_exit_code(run_cli: Any) -> None:
    """Whatever its layout, a click-level usage error exits 2 without a traceback."""
    result = run_cli("lower", "sample_programs/mlp.py:predict", "--no-such-flag")
    assert result.returncode == USAGE, result.describe()
    assert "Traceback" not in result.stderr and "--no-such-flag" in result.stderr
    assert result.stdout == ""


def test_traceback_flag_shows_a_traceback(cli_cache: Any) -> None:
    result = cli_cache.run("lower", f"{FIXTURE}:bad_trace", "--args", "f32[4]", "--traceback")
    assert result.returncode == USER_CODE, result.describe()
    assert "Traceback" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: tracing failed")


def test_traceback_flag_shows_the_users_frame(cli_cache: Any) -> None:
    result = cli_cache.run("lower", f"{FIXTURE}:bad_trace", "--args", "f32[4]", "--traceback")
    line = marker_line(TARGETS_PY, "bad_trace")
    assert f'File "{TARGETS_PY}", line {line}, in bad_trace' in result.stderr, result.describe()


def test_traceback_flag_on_lowering_failure(cli_cache: Any) -> None:
    result = cli_cache.run("lower", f"{FIXTURE}:cpu_only", "--args", "f32[4,4]",
                           "--platform", "tpu", "--traceback")  # fmt: skip
    assert result.returncode == USER_CODE and "JX108" in result.stdout, result.describe()
    assert "Traceback" in result.stderr, result.describe()
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: lowering failed: ")


@pytest.mark.parametrize("command", ["lower", "diff-debug"])
def test_a_maker_that_calls_sys_exit_never_exits_0(command: str, run_cli: Any) -> None:
    """``sys.exit(0)`` in an ``--args-from`` maker is the user's code failing: exit 3 and
    one line, never a silent exit 0 (a CI step would pass with no report)."""
    targets = [f"{FIXTURE}:double"] * (2 if command == "diff-debug" else 1)
    result = run_cli(command, *targets, "--args-from", f"{FIXTURE}:make_then_exit",
                     "--format", "json")  # fmt: skip
    assert result.returncode == 3, result.describe()
    assert result.stdout == "", result.describe()
    assert error_line(result).startswith(
        f"error: --args-from {FIXTURE}:make_then_exit failed: called sys.exit(0) (at "
    )


@pytest.mark.parametrize(
    "command",
    [["lower", "sample_programs/mlp.py:predict"], ["lint", "--no-cache"],
     ["diff-debug", "sample_programs/mlp.py:predict", "sample_programs/mlp.py:predict"]],
    ids=["lower", "lint", "diff-debug"],
)  # fmt: skip
def test_a_jax_older_than_the_oldest_supported_is_one_line(
    command: list[str], run_cli: Any, tmp_path: Path
) -> None:
    """JAX below 0.4.35 (installed with ``--no-deps``): exit 2 naming the release found and
    the oldest supported, before anything imports it (was exit 4, an ImportError). The
    distribution's metadata says 0.4.30 here: a ``jax-0.4.30.dist-info`` first on the path."""
    info = tmp_path / "site" / "jax-0.4.30.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jax\nVersion: 0.4.30\n")
    cwd = REPO / "sample_repo" if command[0] == "lint" else REPO
    result = run_cli(*command, cwd=cwd, env={"PYTHONPATH": str(tmp_path / "site")})
    assert result.returncode == 2, result.describe()
    assert error_line(result) == (
        "error: jxinspect needs JAX 0.4.35 or newer; this environment has JAX 0.4.30 "
        "(pip install -U 'jax>=0.4.35' 'jaxlib>=0.4.35')"
    ), result.describe()
    assert "Traceback" not in result.stderr
