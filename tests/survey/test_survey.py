"""``jxinspect survey`` on the installed JAX: its cells equal what raw JAX's own jaxprs and
lowering carry, it equals the survey shipped for this release, and it renders and
compares as the README says.

The oracle stages a subset of the corpus with plain JAX in a fresh process (as
``test_oracle.py`` does for the samples), reads ``@main``'s argument names and result
paths from the printed text with a regex, and walks the traced jaxpr for nested jaxprs
with no debug info: never through the tool's reader.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import JAX_RELEASE, RAW_MAIN, REPO, run_python

from jxinspect.core.survey import Survey, primitive_name

CORPUS = REPO / "src" / "jxinspect" / "survey" / "corpus" / "programs.py"
SHIPPED = REPO / "src" / "jxinspect" / "surveys"

# corpus program → the raw-JAX call that stages it as the corpus declares
RAW_CALLS: dict[str, str] = {
    "plain": "lowered = jax.jit(m.plain).lower(S(3), S(3))",
    "keywords": "lowered = jax.jit(m.keywords).lower(S(3), beta=S(3), alpha=S())",
    "star_args": "lowered = jax.jit(m.star_args).lower(S(3), S(3), S(3))",
    "pytree": "lowered = jax.jit(m.pytree).lower({'w': S(4, 2), 'b': S(2)}, {'x': S(8, 4)})",
    "grad": "lowered = jax.jit(m.grad).lower(S(4), S(4))",
    "scan": "lowered = jax.jit(m.scan).lower(S(), S(5))",
    "cond": "lowered = jax.jit(m.cond).lower(jax.ShapeDtypeStruct((), jnp.bool_), S(3))",
    "custom_jvp": "lowered = jax.jit(m.custom_jvp).lower(S(3))",
    "shard_map": "lowered = jax.jit(m.shard_map).lower(S(4, 3), S(3, 2))",
    "pmap": "lowered = jax.pmap(m.pmap, axis_name='batch', devices=jax.devices()[:4])"
    ".lower({'scale': S(4, 3)}, {'x': S(4, 3)})",
}

RAW_NESTED = r"""
def nested(jaxpr, found):
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else [value]:
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and hasattr(inner, "invars"):
                    info = getattr(inner, "debug_info", None)
                    source = getattr(info, "func_src_info", None) or ""
                    if "jax/_src" not in source:
                        found.append([eqn.primitive.name, info is None])
                    nested(inner, found)
    return found

found = []
if hasattr(lowered, "_jxinspect_pmap") or "pmap" in {name!r}:
    found = None
else:
    traced = getattr(jax.jit(getattr(m, {name!r})), "trace", None)
    found = nested(traced(*ARGS, **KWARGS).jaxpr.jaxpr, [])
print(json.dumps(found))
"""


def _raw(name: str) -> tuple[dict[str, Any], list[list[Any]] | None]:
    """Raw JAX's ``@main`` of the program and its nested jaxprs (``[primitive, missing]``)."""
    call = RAW_CALLS[name]
    args = call.split(".lower(", 1)[1].rsplit(")", 1)[0]
    prelude = f"m = load_corpus()\nARGS, KWARGS = (lambda *a, **k: (a, k))({args})\n"
    loader = (
        "import importlib.util\n"
        "def load_corpus():\n"
        f"    spec = importlib.util.spec_from_file_location('corpus', {str(CORPUS)!r})\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    return module\n"
    )
    script = RAW_MAIN.format(repo=str(REPO), call=loader + prelude + call)
    script += RAW_NESTED.format(name=name)
    result = run_python(script, warm=True)
    assert result.returncode == 0, result.describe()
    lines = result.stdout.strip().splitlines()
    return json.loads(lines[-2]), json.loads(lines[-1])


@pytest.fixture(scope="module")
def survey(run_cli: Any) -> Survey:
    result = run_cli("survey", "--format", "json")
    assert result.returncode == 0, result.describe()
    return Survey.from_dict(json.loads(result.stdout))


def _bare(path: str | None) -> str | None:
    """A result path without 0.4.x's missing ``result`` prefix difference."""
    return None if path is None else path.removeprefix("result")


@pytest.mark.parametrize("name", sorted(RAW_CALLS))
def test_cells_equal_what_raw_jax_carries(name: str, survey: Survey, run_cli: Any) -> None:
    main, nested = _raw(name)
    program = survey.program(name)
    assert program is not None and program.error is None, program
    report = json.loads(run_cli("lower", f"{CORPUS}:{name}", "--format", "json").stdout)
    # @main's arguments: JAX's own names (none are added to these programs)
    paths = [leaf["path"] for leaf in report["inputs"] if leaf["main_index"] is not None]
    names = [arg["name"] for arg in main["args"]]
    assert len(paths) == len(names), (paths, names)
    cell = program.cell("main.args")
    assert cell is not None
    assert cell.count("kept") == sum(1 for p, n in zip(paths, names) if n == p), (cell, names)
    assert cell.count("missing") == sum(1 for n in names if not n), (cell, names)
    # @main's results
    results = [leaf["path"] for leaf in report["outputs"]]
    carried = main["results"]
    cell = program.cell("main.results")
    assert cell is not None and len(carried) == len(results)
    kept = sum(1 for r, c in zip(results, carried) if c is not None and _bare(c) == _bare(r)
               and c != "")  # fmt: skip
    lone = len(results) == 1 and carried[0] == "" and results[0] == "result"  # 0.4.x's lone result
    assert cell.count("kept") == kept + (1 if lone else 0), (cell, carried)
    # nested jaxprs: how many of each primitive, and how many carry no debug info
    if nested is None:
        return
    raw_total = Counter(primitive_name(p) for p, _ in nested)
    raw_missing = Counter(primitive_name(p) for p, missing in nested if missing)
    ours = {
        c.level.removeprefix("nested."): c for c in program.cells if c.level.startswith("nested.")
    }
    assert {p: c.total for p, c in ours.items()} == dict(raw_total), (ours, nested)
    assert {p: c.count("missing") for p, c in ours.items() if c.count("missing")} == dict(
        raw_missing
    ), (ours, nested)


def test_the_survey_equals_the_one_shipped_for_this_release(survey: Survey) -> None:
    shipped = SHIPPED / f"jax-{JAX_RELEASE}.json"
    if not shipped.is_file():
        pytest.skip(f"no survey shipped for JAX {JAX_RELEASE}: bash .ci/surveys {JAX_RELEASE}")
    expected = Survey.from_dict(json.loads(shipped.read_text(encoding="utf-8")))
    assert survey.jax_version == expected.jax_version
    assert [p.to_dict() for p in survey.programs] == [p.to_dict() for p in expected.programs]


def test_every_shipped_survey_is_valid_and_named_for_its_release() -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads((REPO / "src/jxinspect/schemas/survey.schema.json").read_text())
    validator = Draft202012Validator(schema)
    files = sorted(SHIPPED.glob("jax-*.json"))
    assert len(files) >= 4, files
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        assert not list(validator.iter_errors(data)), file
        assert file.name == f"jax-{data['jax_version']}.json"


def test_text_html_and_an_unknown_program(run_cli: Any, tmp_path: Path) -> None:
    text = run_cli("survey", "--program", "scan", "--program", "pmap")
    assert text.returncode == 0, text.describe()
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"JAX {JAX_RELEASE} ") and "2 programs" in lines[0]
    assert [line.split()[0] for line in lines[3:5]] == ["scan", "pmap"]
    page = tmp_path / "survey.html"
    html = run_cli("survey", "--format", "html", "-o", page)
    assert html.returncode == 0 and html.stdout == "", html.describe()
    assert page.read_text().count('data-verdict="') >= 4 * 27
    bad = run_cli("survey", "--program", "scann")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("error: no program 'scann' in the survey's corpus; known: plain")
    assert "Traceback" not in bad.stderr


def test_compile_adds_the_compiled_programs_parameter_names(run_cli: Any) -> None:
    result = run_cli("survey", "--compile", "--program", "plain", "--program", "pytree",
                     "--format", "json")  # fmt: skip
    assert result.returncode == 0, result.describe()
    compiled = Survey.from_dict(json.loads(result.stdout))
    for program in compiled.programs:
        cell = program.cell("compiled.args")
        assert cell is not None and cell.verdict == "kept", program  # jit keeps them
        assert program.cell("main.args") == cell.__class__("main.args", cell.counts)
    plain = run_cli("survey", "--program", "plain")
    assert "compiled args" not in plain.stdout  # without --compile, no such column
