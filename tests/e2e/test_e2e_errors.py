"""Every way ``jxinspect lower`` can fail, through the installed command.

The contract (README, ``jxinspect.core.errors``): exit 2 for a usage, spec or configuration
error, 3 when the user's code failed (import, trace), 4 for a bug in jxinspect; in every
case exactly one line on stderr, starting with ``error:``, no traceback, nothing on stdout.
"""

from __future__ import annotations

import errno
import inspect
import os
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
import typer
from helpers import FIXTURES, REPO, error_line, marker_line

from jxinspect.core.vocabulary import Stage

FIXTURE = "tests/fixtures/targets.py"
TARGETS_PY = FIXTURES / "targets.py"
IMPORT_RAISES_PY = FIXTURES / "import_raises.py"

USAGE, USER_CODE = 2, 3


def _bind_error(*args: Any, **kwargs: Any) -> str:
    """What Python says when ``double(x)``'s signature cannot take these arguments."""
    try:
        inspect.signature(lambda x: x).bind(*args, **kwargs)
    except TypeError as err:
        return str(err)
    raise AssertionError("bound")


BIND_TOO_MANY, BIND_UNKNOWN_Z = _bind_error(1, 2), _bind_error(1, z=1)

# (id, arguments after `lower`, exit code, the error line)
CASES = [
    ("no-such-module", ["nosuch.mod:f", "--args", "f32[3]"], USAGE,
     "error: no such module: nosuch.mod (run from the folder that holds it, or give a file "
     "path such as path/to/file.py:function)"),
    ("no-such-file", ["tests/fixtures/nope.py:f", "--args", "f32[3]"], USAGE,
     "error: no such file: tests/fixtures/nope.py (relative to the current folder); check the "
     "path, or give the file's full path"),
    ("import-raises", ["tests/fixtures/import_raises.py:f", "--args", "f32[3]"], USER_CODE,
     "error: importing tests/fixtures/import_raises.py failed: RuntimeError: config server "
     f"unreachable (at {IMPORT_RAISES_PY}:{marker_line(IMPORT_RAISES_PY, 'import_raises')} "
     "in _load_config)"),
    ("no-such-function", [f"{FIXTURE}:bad_trac", "--args", "f32[3]"], USAGE,
     f"error: {FIXTURE} has no attribute `bad_trac` (did you mean `bad_trace`?)"),
    ("not-callable", [f"{FIXTURE}:NOT_CALLABLE", "--args", "f32[3]"], USAGE,
     f"error: {FIXTURE}:NOT_CALLABLE is an int, not a function; name a callable"),
    ("no-function-named", [FIXTURE, "--args", "f32[3]"], USAGE,
     f"error: name the function: {FIXTURE}:FUNCTION"),
    ("bad-target-name", [f"{FIXTURE}:not-a-name", "--args", "f32[3]"], USAGE,
     f"error: bad target '{FIXTURE}:not-a-name': 'not-a-name' is not a dotted Python name"),
    ("malformed-spec", [f"{FIXTURE}:double", "--args", "f32[3,,4]"], USAGE,
     "error: --args: bad spec at column 6: expected a value: f32[3,,4]"),
    ("unknown-dtype", [f"{FIXTURE}:double", "--args", "f33[3]"], USAGE,
     "error: --args: bad spec at column 0: unknown dtype 'f33' (expected one of f32, bf16, "
     "f16, i32, bool, ...): f33[3]"),
    ("too-many-args", [f"{FIXTURE}:double", "--args", "f32[3], f32[4]"], USAGE,
     f"error: the example inputs do not fit double(x): {BIND_TOO_MANY}; fix --args/--kwargs"),
    ("unknown-kwarg", [f"{FIXTURE}:double", "--args", "f32[3]", "--kwargs", "z=1"], USAGE,
     f"error: the example inputs do not fit double(x): {BIND_UNKNOWN_Z}; fix --args/--kwargs"),
    ("unhashable-static", [f"{FIXTURE}:pair", "--args", "f32[3], [1,2]",
                           "--static-argnums", "1"], USAGE,
     "error: static argument 1 is list [1, 2], which is not hashable; static values must be "
     "hashable (use a tuple instead of a list)"),
    ("static-argnum-out-of-range", [f"{FIXTURE}:pair", "--args", "f32[3], 2",
                                    "--static-argnums", "5"], USAGE,
     "error: static-argnums 5 is out of range: 2 positional arguments given"),
    ("mesh-larger-than-devices", [f"{FIXTURE}:double", "--args", "f32[8]", "--devices", "2",
                                  "--mesh", "data=4"], USAGE,
     "error: mesh data=4 needs 4 devices but the cpu backend has 2; use a smaller mesh, "
     "--devices 4 on CPU, or --abstract"),
    ("unknown-axis-in-in-specs", [f"{FIXTURE}:double", "--args", "f32[8]", "--mesh", "data=2",
                                  "--in-specs", "P('batch')"], USAGE,
     "error: --in-specs: unknown mesh axis 'batch' in P('batch'); the mesh has 'data'"),
    ("unknown-axis-in-args", [f"{FIXTURE}:double", "--args", "f32[8@batch]",
                              "--mesh", "data=2"], USAGE,
     "error: f32[8@batch]: unknown mesh axis 'batch' in P('batch'); the mesh has 'data'"),
    ("not-divisible", [f"{FIXTURE}:double", "--args", "f32[7@data]", "--mesh", "data=2"], USAGE,
     "error: f32[7@data]: dimension 7 does not divide over data (2 devices); pick a multiple "
     "of 2"),
    ("axes-without-mesh", [f"{FIXTURE}:double", "--args", "f32[8@data]"], USAGE,
     "error: f32[8@data] names mesh axes but no mesh is given; add --mesh, e.g. --mesh data=8"),
    ("specs-without-mesh", [f"{FIXTURE}:double", "--args", "f32[8]",
                            "--in-specs", "P('data')"], USAGE,
     "error: --in-specs need a mesh: add --mesh, e.g. --mesh data=8"),
    ("shard-map-without-out-specs", [f"{FIXTURE}:double", "--args", "f32[8]",
                                     "--stage", "shard_map", "--mesh", "data=2"], USAGE,
     "error: shard_map needs --out-specs, e.g. --out-specs \"P('data')\""),
    ("no-example-inputs", [f"{FIXTURE}:double"], USAGE,
     f"error: no example inputs for {FIXTURE}:double: give example inputs with "
     '--args "f32[8,128], 3" (and --kwargs "scale=2.0"), --args-from module:make_args, or a '
     'module-level JXINSPECT = {"double": {"args": "..."}} declaration, or annotate its '
     'arguments (x: Float[Array, "batch dim"]) and give --dims'),
    ("args-from-raises", [f"{FIXTURE}:double", "--args-from", "make_args_raises"], USER_CODE,
     "error: --args-from make_args_raises failed: ValueError: no example data here (at "
     f"{TARGETS_PY}:{marker_line(TARGETS_PY, 'make_args_raises')} in make_args_raises)"),
    ("args-from-missing", [f"{FIXTURE}:double", "--args-from", "make_argz"], USAGE,
     f"error: {FIXTURE} has no attribute `make_argz` (did you mean `make_args_raises`?)"),
    ("unwritable-output", ["sample_programs/unused_arg.py:f", "-o", "no/such/dir/out.txt"], USAGE,
     f"error: cannot write no/such/dir/out.txt: {os.strerror(errno.ENOENT)}"),
]  # fmt: skip


@pytest.mark.parametrize("args, code, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error(args: list[str], code: int, expected: str, run_cli: Any) -> None:
    result = run_cli("lower", *args)
    assert result.returncode == code, result.describe()
    assert error_line(result) == expected, result.describe()
    assert result.stdout == "", result.describe()


def _tracing_error_line() -> str:
    """``lower FIXTURE:bad_trace --args f32[4]``'s line: JAX's own words for the
    contraction ``bad_trace`` makes (asked of the installed JAX), and the user's line."""
    import jax
    import jax.numpy as jnp

    try:
        jax.eval_shape(
            lambda x: jnp.dot(x, jnp.ones((3, 5))), jax.ShapeDtypeStruct((4,), "float32")
        )
    except TypeError as err:
        said = str(err).strip().splitlines()[0]
    else:
        raise AssertionError("JAX contracted f32[4] with f32[3,5]")
    where = f"{TARGETS_PY}:{marker_line(TARGETS_PY, 'bad_trace')} in bad_trace"
    return f"error: tracing failed: TypeError: {said} (at {where})"


def test_tracing_error(run_cli: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:bad_trace", "--args", "f32[4]")
    assert result.returncode == USER_CODE, result.describe()
    assert error_line(result) == _tracing_error_line(), result.describe()
    assert result.stdout == "", result.describe()


@pytest.mark.parametrize(
    "declaration, expected",
    [
        ('{"f": {"arg": "f32[3]"}}', "unknown key `arg` (did you mean `args`?)"),
        ('{"f": {"args": "f32[3]", "devices": "8"}}', "`devices` must be a positive int, got '8'"),
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
    assert error_line(result) == f"error: {module}:1: 'f' in JXINSPECT: {expected}"


def test_syntax_error_in_user_file(run_cli: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import jax\n\n\ndef f(x):\n    return x +\n", encoding="utf-8")
    result = run_cli("lower", f"{broken}:f", "--args", "f32[3]")
    assert result.returncode == USER_CODE, result.describe()
    assert error_line(result) == _syntax_error_line(broken), result.describe()


def test_syntax_error_in_user_module(run_cli: Any, tmp_path: Path) -> None:
    """The same through a dotted module name (the declaration cannot be read first)."""
    (tmp_path / "broken_mod.py").write_text("def f(x:\n    return x\n", encoding="utf-8")
    result = run_cli("lower", "broken_mod:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == USER_CODE, result.describe()
    assert error_line(result) == _syntax_error_line(tmp_path / "broken_mod.py"), result.describe()


def _syntax_error_line(path: Path) -> str:
    """The line for a file Python cannot compile: where and what, in this Python's words."""
    try:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    except SyntaxError as err:
        return f"error: syntax error in {path}:{err.lineno}: {err.msg}; fix the file and run again"
    raise AssertionError(f"{path} compiles")


def test_import_error_in_dotted_module(run_cli: Any, tmp_path: Path) -> None:
    """A module that exists but imports something that does not: the user's code failed,
    not "no such module"."""
    (tmp_path / "needs_dep.py").write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    result = run_cli("lower", "needs_dep:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == USER_CODE, result.describe()
    assert error_line(result) == (
        "error: importing needs_dep failed: ModuleNotFoundError: No module named "
        f"'no_such_dependency_xyz' (at {tmp_path / 'needs_dep.py'}:1 in <module>)"
    ), result.describe()


@pytest.mark.parametrize("exception", ["ValueError", "RuntimeError"])
def test_parent_package_import_fails(exception: str, run_cli: Any, tmp_path: Path) -> None:
    package = tmp_path / "badpkg"
    package.mkdir()
    (package / "__init__.py").write_text(f"raise {exception}('package init failed')\n",
                                         encoding="utf-8")  # fmt: skip
    (package / "sub.py").write_text("def f(x):\n    return x\n", encoding="utf-8")
    result = run_cli("lower", "badpkg.sub:f", "--args", "f32[3]", cwd=tmp_path)
    assert result.returncode == USER_CODE, result.describe()
    assert error_line(result) == (
        f"error: importing badpkg.sub failed: {exception}: package init failed "
        f"(at {package / '__init__.py'}:1 in <module>)"
    ), result.describe()


def test_sys_exit_while_tracing(run_cli: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:exits", "--args", "f32[3]")
    assert result.returncode == USER_CODE, result.describe()
    assert error_line(result) == (
        "error: tracing failed: called sys.exit(5) "
        f"(at {TARGETS_PY}:{marker_line(TARGETS_PY, 'exits')} in exits)"
    ), result.describe()


def test_base_exception_while_tracing(run_cli: Any) -> None:
    result = run_cli("lower", f"{FIXTURE}:raises_base_exception", "--args", "f32[3]")
    assert result.returncode == USER_CODE, result.describe()
    where = f"{TARGETS_PY}:{marker_line(TARGETS_PY, 'raises_base_exception')}"
    assert error_line(result) == (
        "error: tracing failed: GeneratorExit: not an Exception subclass "
        f"(at {where} in raises_base_exception)"
    ), result.describe()


def test_typer_usage_error_is_one_line(run_cli: Any) -> None:
    result = run_cli("lower", "sample_programs/mlp.py:predict", "--stage", "foo")
    assert result.returncode == USAGE, result.describe()
    said = _click_usage_error(["--stage", "foo"])
    assert error_line(result) == f"error: {said} (see `jxinspect lower --help`)", result.describe()


def test_typer_usage_error_exit_code(run_cli: Any) -> None:
    """A flag the command does not have: click's words, on one line, exit 2."""
    result = run_cli("lower", "sample_programs/mlp.py:predict", "--no-such-flag")
    assert result.returncode == USAGE, result.describe()
    said = _click_usage_error(["--no-such-flag"])
    assert error_line(result) == f"error: {said} (see `jxinspect lower --help`)", result.describe()
    assert result.stdout == ""


def _stage_option(stage: Annotated[Optional[Stage], typer.Option()] = None) -> None:
    """A command whose one option is ``--stage``, the stages its choices, as ``lower``'s."""
    raise AssertionError(f"typer took --stage {stage}")


def _click_usage_error(args: list[str]) -> str:
    """What the installed typer (its click, or click itself on older typer) says of
    ``args`` given to :func:`_stage_option`."""
    app = typer.Typer()
    app.command()(_stage_option)
    try:
        typer.main.get_command(app).main(args, standalone_mode=False)
    except Exception as err:  # click's UsageError, or typer's own copy of it
        return str(err.format_message())  # type: ignore[attr-defined]
    raise AssertionError(f"typer took {args}")


def test_traceback_flag_shows_a_traceback(cli_cache: Any) -> None:
    result = cli_cache.run("lower", f"{FIXTURE}:bad_trace", "--args", "f32[4]", "--traceback")
    assert result.returncode == USER_CODE, result.describe()
    assert "Traceback" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1] == _tracing_error_line(), result.describe()


def test_traceback_flag_shows_the_users_frame(cli_cache: Any) -> None:
    result = cli_cache.run("lower", f"{FIXTURE}:bad_trace", "--args", "f32[4]", "--traceback")
    line = marker_line(TARGETS_PY, "bad_trace")
    assert f'File "{TARGETS_PY}", line {line}, in bad_trace' in result.stderr, result.describe()


def test_traceback_flag_on_lowering_failure(cli_cache: Any) -> None:
    result = cli_cache.run("lower", f"{FIXTURE}:cpu_only", "--args", "f32[4,4]",
                           "--platform", "tpu", "--traceback")  # fmt: skip
    assert result.returncode == USER_CODE, result.describe()
    findings = result.stdout.split("\nfindings (1)\n", 1)[1].splitlines()[0]
    assert findings == f"  JX108 error   lowering failed: NotImplementedError: {_no_tpu_eig()}"
    assert "Traceback" in result.stderr, result.describe()
    # the advice where JAX's words say it has no tpu rule for eig (0.4.35 raises from the
    # eig rule itself, saying only that it needs the CPU backend)
    said = _no_tpu_eig(whole=True)
    fix = ("; JAX has no tpu lowering of eig: lower for a platform that has one (--platform "
           "cpu), or keep eig out of the tpu program"
           if "MLIR translation rule for primitive 'eig' not found for platform tpu" in said
           else "")  # fmt: skip
    assert result.stderr.rstrip().splitlines()[-1] == (
        f"error: lowering failed: NotImplementedError: {_no_tpu_eig()}{fix}"
    ), result.describe()


def _no_tpu_eig(whole: bool = False) -> str:
    """The installed JAX's words for lowering ``cpu_only``'s eig for TPU: the first line,
    or all of them."""
    import jax
    import jax.numpy as jnp

    traced = jax.jit(lambda x: jnp.linalg.eig(x)[0].real).trace(
        jax.ShapeDtypeStruct((4, 4), "float32")
    )
    try:
        traced.lower(lowering_platforms=("tpu",))
    except NotImplementedError as err:
        return str(err) if whole else str(err).strip().splitlines()[0]
    raise AssertionError("eig lowered for TPU")


@pytest.mark.parametrize("command", ["lower", "diff-debug"])
def test_a_maker_that_calls_sys_exit_never_exits_0(command: str, run_cli: Any) -> None:
    """``sys.exit(0)`` in an ``--args-from`` maker is the user's code failing: exit 3 and
    one line, never a silent exit 0 (a CI step would pass with no report)."""
    targets = [f"{FIXTURE}:double"] * (2 if command == "diff-debug" else 1)
    result = run_cli(command, *targets, "--args-from", f"{FIXTURE}:make_then_exit",
                     "--format", "json")  # fmt: skip
    assert result.returncode == 3, result.describe()
    assert result.stdout == "", result.describe()
    assert error_line(result) == (
        f"error: --args-from {FIXTURE}:make_then_exit failed: called sys.exit(0) (at "
        f"{TARGETS_PY}:{marker_line(TARGETS_PY, 'make_then_exit')} in make_then_exit)"
    ), result.describe()


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
