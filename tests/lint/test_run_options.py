"""Lint's run options: the command line's over the configuration's over the defaults,
merged in one place."""

from __future__ import annotations

from pathlib import Path

from jxinspect.lint.options import LintRequest, run_options
from jxinspect.lint.workers.supervisor import DEFAULT_TIMEOUT_S
from jxinspect.project.config import CONFIG_KEYS, Config, Policy


def test_nothing_given_is_every_default(tmp_path: Path) -> None:
    options = run_options(LintRequest(), Config(path=None, root=tmp_path))
    assert options.fail_on == "error" and options.timeout == DEFAULT_TIMEOUT_S
    assert options.cache and not options.keep_workers and options.idle is None
    assert options.baseline == tmp_path / "jxinspect-baseline.json"


def test_the_defaults_the_table_of_keys_states_are_the_runs(tmp_path: Path) -> None:
    stated = {key.name: key.default for key in CONFIG_KEYS if key.default}
    assert stated == {
        "select": "every rule", "compile": "false", "why": "false",
        "baseline": "jxinspect-baseline.json",
        "fail_on": "error", "timeout": "300", "cache": "true", "keep_workers": "false",
    }  # fmt: skip
    options = run_options(LintRequest(), Config(path=None, root=tmp_path))
    assert options.baseline == tmp_path / stated["baseline"]
    assert (options.fail_on, options.timeout) == (stated["fail_on"], float(stated["timeout"]))
    assert (str(options.cache).lower(), str(options.keep_workers).lower()) == ("true", "false")
    assert str(Policy().compile).lower() == stated["compile"] and Policy().select is None
    assert str(Policy().why).lower() == stated["why"]


def test_the_configuration_over_the_defaults(tmp_path: Path) -> None:
    config = Config(path=None, root=tmp_path, fail_on="warning", timeout=0, cache=False,
                    keep_workers=30.0, baseline="base.json")  # fmt: skip
    options = run_options(LintRequest(), config)
    assert options.fail_on == "warning" and options.timeout is None  # 0: no limit
    assert not options.cache and options.keep_workers and options.idle == 30.0
    assert options.baseline == tmp_path / "base.json"


def test_the_command_line_over_the_configuration(tmp_path: Path) -> None:
    config = Config(path=None, root=tmp_path, fail_on="warning", timeout=5, cache=False,
                    keep_workers=30.0, baseline="base.json")  # fmt: skip
    request = LintRequest(fail_on="info", timeout=7, cache=True, keep_workers=False,
                          baseline=Path("other.json"))  # fmt: skip
    options = run_options(request, config)
    assert (options.fail_on, options.timeout, options.cache) == ("info", 7, True)
    assert not options.keep_workers and options.baseline == Path("other.json")
