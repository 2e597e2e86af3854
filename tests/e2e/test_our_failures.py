"""A failure inside jxinspect's own code is never the user's: the seam reading something
this JAX release no longer has (0.12 dropped ``jax._src.core.ClosedJaxpr``) is an
internal error, exit 4, whose one line names the releases, in ``lower``, ``lint``,
``record`` (tests/record/test_record_programs.py) and ``survey``; a JAX newer than the
newest CI tests gets a note in every report, never a refusal."""

from __future__ import annotations

import operator
import re
import textwrap
from pathlib import Path

import pytest
from helpers import JAX_RELEASE, ci_releases, error_line, run_cli

import jxinspect
from jxinspect.tracer import seam
from jxinspect.tracer.seam import release

if not seam.backend_started():
    seam.simulate_cpu_devices(8)  # the survey's programs need 4

# The user's module takes the seam's place of a JAX internal that is gone: ``jaxpr_of``
# reads an attribute the traced program does not have, from jxinspect's own frame, as
# the seam read ``core.ClosedJaxpr`` on JAX 0.12 (which was reported as "tracing failed").
SEAM_GONE = textwrap.dedent("""
    import operator
    import jax.numpy as jnp
    from jxinspect.tracer import seam
    seam.jaxpr_of = operator.attrgetter("attribute_this_release_lacks")

    def f(x):
        return jnp.sin(x) + 1

    JXINSPECT = {"f": {"args": "f32[4]"}}
""")

INTERNAL = re.compile(
    r"^error: internal error \(jxinspect [^,]+, JAX (?P<jax>[^)]+)\): AttributeError: .*"
    r"attribute_this_release_lacks.* \(rerun with --traceback and report it\)$"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "gone.py").write_text(SEAM_GONE, encoding="utf-8")
    return tmp_path


def test_lower_says_our_seam_failed_and_names_the_release(project: Path) -> None:
    result = run_cli("lower", "gone.py:f", cwd=project)
    assert result.returncode == 4, result.describe()
    line = error_line(result)
    said = INTERNAL.match(line)
    assert said is not None and said["jax"] == JAX_RELEASE, line
    assert "tracing failed" not in line


def test_lint_counts_it_as_an_internal_failure(project: Path) -> None:
    result = run_cli("lint", "gone.py", "--format", "json", cwd=project)
    assert result.returncode == 4, result.describe()
    assert f"JAX {JAX_RELEASE}): AttributeError" in result.stdout, result.stdout
    assert "tracing failed" not in result.stdout


def test_a_user_error_while_tracing_is_still_the_users(tmp_path: Path) -> None:
    """The other side of the line: what the user's own function raises is exit 3."""
    (tmp_path / "mine.py").write_text(
        "def f(x):\n    raise ValueError('mine')\n\nJXINSPECT = {'f': {'args': 'f32[4]'}}\n",
        encoding="utf-8",
    )
    result = run_cli("lower", "mine.py:f", cwd=tmp_path)
    assert result.returncode == 3, result.describe()
    assert error_line(result).startswith("error: tracing failed: ValueError: mine")


def test_a_survey_that_fails_in_our_code_exits_4_and_makes_no_survey(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from jxinspect.cli.app import make_app

    if seam.device_count() < 4:
        pytest.skip(f"the survey needs 4 devices; JAX started with {seam.device_count()}")
    monkeypatch.setattr(seam, "jaxpr_of", operator.attrgetter("attribute_this_release_lacks"))
    written = tmp_path / "survey.json"
    result = CliRunner().invoke(
        make_app(["survey"]),
        ["survey", "--program", "plain", "--program", "scan", "--format", "json", "-o", written],
    )
    assert result.exit_code == 4, result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert f"JAX {JAX_RELEASE})" in line and "2 of 2 survey programs failed inside" in line
    assert not written.exists()


def test_a_newer_jax_than_ci_tests_is_a_note_in_the_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import jax
    import jax.numpy as jnp

    def f(x: jax.Array) -> jax.Array:
        return x + 1

    args = (jax.ShapeDtypeStruct((2,), jnp.float32),)
    assert not any("tested up to" in n for n in jxinspect.inspect(f, args).notes)
    monkeypatch.setattr(release, "NEWEST_TESTED", "0.4.35")
    report = jxinspect.inspect(f, args)
    note = f"tested up to JAX 0.4.35; this is {JAX_RELEASE}"
    assert any(n.startswith(note) for n in report.notes) == (JAX_RELEASE != "0.4.35")
    assert report.reached == "lowered"


def test_the_newest_tested_release_is_the_newest_ci_leg() -> None:
    """``seam.release.NEWEST_TESTED`` names the newest release of ``.ci/releases``."""
    legs = ci_releases()
    assert legs and legs[-1] == release.NEWEST_TESTED
