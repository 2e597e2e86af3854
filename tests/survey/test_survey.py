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

from jxinspect.core import codec
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
    "custom_vjp": "lowered = jax.jit(m.custom_vjp).lower(S(3))",
    "grad_of_custom_vjp": "lowered = jax.jit(m.grad_of_custom_vjp).lower(S(3))",
    "vmap": "lowered = jax.jit(m.vmap).lower(S(4), S(8, 4))",
    "named_call": "lowered = jax.jit(m.named_call).lower(S(4), S(4))",
    "lax_map": "lowered = jax.jit(m.lax_map).lower(S(4), S(5, 4))",
    "associative_scan": "lowered = jax.jit(m.associative_scan).lower(S(8))",
    "custom_transpose": "lowered = jax.jit(m.custom_transpose).lower(S(4), S(4))",
    "custom_vmap": "lowered = jax.jit(m.custom_vmap).lower(S(3))",
    "pure_callback": "lowered = jax.jit(m.pure_callback).lower(S(3))",
    "checkify": "lowered = jax.jit(m.checkify).lower(S(3))",
    "shard_map": "lowered = jax.jit(m.shard_map).lower(S(4, 3), S(3, 2))",
    "pmap": "lowered = jax.pmap(m.pmap, axis_name='batch', devices=jax.devices()[:4])"
    ".lower({'scale': S(4, 3)}, {'x': S(4, 3)})",
}

_API_CHECKS = {
    "custom_transpose": "__import__('importlib.util').util.find_spec('jax.custom_transpose')"
    " is not None",
}
"""How raw JAX says it has a program's API, where some release lacks it."""

RAW_NESTED = r"""
def nested(jaxpr, found, where=""):
    for i, eqn in enumerate(jaxpr.eqns):
        for key, value in eqn.params.items():
            many = isinstance(value, (tuple, list))
            for k, sub in enumerate(value if many else [value]):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns") and hasattr(inner, "invars"):
                    label = f"{{key}}[{{k}}]" if many else key
                    place = f"{{where}}{{i}}:{{eqn.primitive.name}}.{{label}}"
                    found.append(dict(names(inner), primitive=eqn.primitive.name, where=place))
                    nested(inner, found, place + "/")
    return found

def names(jaxpr):
    info = getattr(jaxpr, "debug_info", None)
    source = getattr(info, "func_src_info", None) or ""
    args = getattr(info, "arg_names", None)
    paths = getattr(info, "result_paths", None)
    return {{"missing": info is None, "own": "jax/_src/" in source.replace("\\", "/"),
            "args": None if args is None else list(args),
            "results": None if paths is None else list(paths)}}

function = getattr(m, {name!r})
if {name!r} == "pmap":
    top = jax.make_jaxpr(jax.pmap(function, axis_name="batch", devices=jax.devices()[:4]))(
        *ARGS, **KWARGS).jaxpr
    eqns = top.eqns
    if len(eqns) == 1 and eqns[0].primitive.name == "xla_pmap":  # JAX lowers the body itself
        body = eqns[0].params["call_jaxpr"]
        body = getattr(body, "jaxpr", body)
        jaxprs = {{"top": names(top), "body": names(body)}}
        found = nested(body, [])
    else:
        jaxprs = {{"top": names(top)}}
        found = nested(top, [])
else:
    top = jax.jit(function).trace(*ARGS, **KWARGS).jaxpr.jaxpr
    jaxprs = {{"top": names(top)}}
    found = nested(top, [])
jaxprs.update((j["where"], j) for j in found)
print(json.dumps({{"nested": found, "jaxprs": jaxprs}}))
"""


def _raw(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Raw JAX's ``@main`` of the program, and its jaxprs: ``nested`` (each nested jaxpr's
    primitive, place, whether it has debug info, is JAX's own, and its names) and
    ``jaxprs`` (the same by place, with ``top`` and the older pmap's ``body``)."""
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


def _read_place(reads: str | None) -> str:
    """The raw jaxpr a program's ``reads`` names: ``top`` (its own, or make_jaxpr's top),
    pmap's ``body``, or a nested jaxpr's place (``0:jit.jaxpr``)."""
    if reads is None or reads.startswith("the top jaxpr"):
        return "top"
    if reads.startswith("pmap's body"):
        return "body"
    return reads.split(" of make_jaxpr", 1)[0]


@pytest.fixture(scope="module")
def survey(run_cli: Any) -> Survey:
    result = run_cli("survey", "--format", "json")
    assert result.returncode == 0, result.describe()
    return codec.decode(result.stdout, Survey, source="stdout")


def _bare(path: str | None) -> str | None:
    """A result path without 0.4.x's missing ``result`` prefix difference."""
    return None if path is None else path.removeprefix("result")


@pytest.mark.parametrize("name", sorted(RAW_CALLS))
def test_cells_equal_what_raw_jax_carries(name: str, survey: Survey, run_cli: Any) -> None:
    program = survey.program(name)
    assert program is not None and program.error is None, program
    if program.unavailable is not None:  # raw JAX lacks the API too
        check = run_python(f"import jax\nprint({_API_CHECKS[name]})", warm=True)
        assert check.returncode == 0 and check.stdout.split()[-1] == "False", check.describe()
        assert program.cells == () and program.reached == "failed"
        return
    main, raw = _raw(name)
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
    # the jaxpr levels: the names of the raw jaxpr the program says they read, which for
    # pmap is the one @main is lowered from (make_jaxpr's top may keep other names)
    read = raw["jaxprs"][_read_place(program.reads)]
    expected = [leaf["path"] for leaf in report["inputs"]]
    cell = program.cell("jaxpr.args")
    assert cell is not None
    # no name list at all (0.7.2's pmap body): every argument missing
    read_args = read["args"] if read["args"] is not None else [None] * len(expected)
    if read["args"] is None:
        assert cell.count("missing") == len(expected), (cell, read)
    assert cell.count("kept") == sum(1 for p, n in zip(expected, read_args) if n == p), (
        cell,
        read,
        program.reads,
    )
    if program.stage == "pmap":  # @main's names are that jaxpr's: the level reads the right one
        assert [a["name"] or "" for a in main["args"]] == [n or "" for n in read_args], read
    # nested jaxprs: how many of each primitive, how many carry no debug info, how many
    # carry debug info without any name (partial), and how many are JAX's own (not counted)
    nested = raw["nested"]
    ours = {
        c.level.removeprefix("nested."): c for c in program.cells if c.level.startswith("nested.")
    }
    user = [j for j in nested if not j["own"]]
    raw_total = Counter(primitive_name(j["primitive"]) for j in user)
    raw_missing = Counter(primitive_name(j["primitive"]) for j in user if j["missing"])
    assert {p: c.total for p, c in ours.items()} == dict(raw_total), (ours, nested)
    assert {p: c.count("missing") for p, c in ours.items() if c.count("missing")} == dict(
        raw_missing
    ), (ours, nested)
    for cell in ours.values():  # each example said of a jaxpr, judged from raw JAX's
        for example in cell.examples:
            jaxpr = raw["jaxprs"][example.split(": ", 1)[0]]
            nameless = (
                not jaxpr["missing"]
                and not any(jaxpr["args"] or [])
                and not any(jaxpr["results"] or [])
            )
            assert example.endswith("debug info without names") == nameless, (example, jaxpr)
            assert example.endswith("no debug info") == jaxpr["missing"], (example, jaxpr)
    own = Counter(primitive_name(j["primitive"]) for j in nested if j["own"])
    assert dict(program.jax_own) == dict(own), (program.jax_own, nested)


def test_the_survey_equals_the_one_shipped_for_this_release(survey: Survey) -> None:
    shipped = SHIPPED / f"jax-{JAX_RELEASE}.json"
    if not shipped.is_file():
        pytest.skip(f"no survey shipped for JAX {JAX_RELEASE}: bash .ci/surveys {JAX_RELEASE}")
    expected = codec.decode(shipped.read_bytes(), Survey, source=str(shipped))
    assert survey.jax_version == expected.jax_version
    assert survey.programs == expected.programs


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
    compiled = codec.decode(result.stdout, Survey, source="stdout")
    for program in compiled.programs:
        cell = program.cell("compiled.args")
        assert cell is not None and cell.verdict == "kept", program  # jit keeps them
        assert program.cell("main.args") == cell.__class__("main.args", cell.counts)
    plain = run_cli("survey", "--program", "plain")
    assert "compiled args" not in plain.stdout  # without --compile, no such column


def test_the_matrix_says_what_it_counts_and_what_it_leaves_out(
    survey: Survey, run_cli: Any
) -> None:
    """Each cell's unit (names, paths, jaxprs) and each verdict's meaning are said; a
    nested jaxpr that has debug info but no names is ``partial`` and said to have none;
    JAX's own nested jaxprs (``jnp.clip``'s jit) are said and not counted; pmap's jaxpr
    levels say which jaxpr they read."""
    result = run_cli("survey", "--program", "grad", "--program", "grad_of_custom_vjp",
                     "--program", "pmap")  # fmt: skip
    assert result.returncode == 0, result.describe()
    lines = result.stdout.splitlines()
    assert "cells count names (args), result paths (results) or nested jaxprs (nested)" in (
        result.stdout
    )
    assert "  partial: a nested jaxpr with debug info that lacks some or all of its names" in lines
    assert "  missing: no name (a nested jaxpr: no debug info at all)" in lines
    rows = {line.split()[0]: line for line in lines[3:6]}
    grad = survey.program("grad")
    assert grad is not None and grad.cell("nested.jit") is not None
    assert f"jit {grad.cell('nested.jit').counted}" in rows["grad"]  # type: ignore[union-attr]
    assert rows["grad"].endswith(" jaxprs")
    clip = survey.program("grad_of_custom_vjp")
    assert clip is not None and dict(clip.jax_own).get("jit", 0) >= 1, clip  # jnp.clip's jit
    own = ", ".join(f"{p} {n}" for p, n in clip.jax_own.items())
    assert rows["grad_of_custom_vjp"].endswith(f"JAX's own, not counted: {own}")
    pmap = survey.program("pmap")
    assert pmap is not None and pmap.reads is not None and "make_jaxpr(pmap(f))" in pmap.reads
    assert f"  pmap: jaxpr args and results are read from {pmap.reads}" in lines
    assert all(p.reads is None for p in survey.programs if p.stage == "jit")


def test_the_html_page_shows_its_details_and_no_empty_column(
    survey: Survey, run_cli: Any, tmp_path: Path
) -> None:
    page = tmp_path / "survey.html"
    result = run_cli("survey", "--format", "html", "-o", page)
    assert result.returncode == 0, result.describe()
    html = page.read_text()
    assert ">compiled.args</th>" not in html  # no column of dashes without --compile
    assert '<ul id="details">' in html and 'id="legend"' in html
    for program in survey.programs:
        for cell in program.cells:
            if cell.verdict != "kept":
                assert f"<li>{program.name} {cell.level}: {cell.counted}" in html, cell
    compiled = tmp_path / "compiled.html"
    result = run_cli("survey", "--compile", "--program", "plain", "--format", "html", "-o",
                     compiled)  # fmt: skip
    assert result.returncode == 0 and ">compiled.args</th>" in compiled.read_text()


def test_a_program_this_release_lacks_the_api_of_is_not_available(
    survey: Survey, run_cli: Any, tmp_path: Path
) -> None:
    """custom_transpose (``jax.custom_transpose``, removed in JAX 0.10): graded on the
    releases that have it, said plainly to be not available on the others; never a
    failure (exit 0, no warning)."""
    program = survey.program("custom_transpose")
    assert program is not None
    check = run_python(f"import jax\nprint({_API_CHECKS['custom_transpose']})", warm=True)
    has = check.stdout.split()[-1] == "True"
    result = run_cli("survey", "--program", "custom_transpose", "--program", "plain")
    assert result.returncode == 0 and "did not stage" not in result.stderr, result.describe()
    row = next(line for line in result.stdout.splitlines() if line.startswith("custom_transpose"))
    if has:
        assert program.unavailable is None and program.cell("main.args") is not None
        assert "not available" not in result.stdout
        return
    assert program.unavailable == (
        "jax.custom_transpose is not in this release (JAX 0.10 removed it)"
    )
    assert program.cells == () and program.error is None
    assert row.split() == ["custom_transpose", "jit", "not", "available"]
    assert "1 not available on this release" in result.stdout.splitlines()[0]
    assert (f"  custom_transpose: not available on JAX {JAX_RELEASE}: {program.unavailable}"
            in result.stdout.splitlines())  # fmt: skip
    page = tmp_path / "survey.html"
    html = run_cli("survey", "--program", "custom_transpose", "--format", "html", "-o", page)
    assert html.returncode == 0
    assert page.read_text().count('<td class="na"') == len(codec.decode(
        run_cli("survey", "--program", "custom_transpose", "--format", "json").stdout, Survey,
        source="stdout").shown_levels)  # fmt: skip
