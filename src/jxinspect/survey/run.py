"""Stage every program of the corpus through the one pipeline, in one process, and grade
each report into the survey's cells."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from jxinspect.core.errors import InternalError, JxError, UsageError, releases
from jxinspect.core.survey import Survey, SurveyProgram
from jxinspect.core.vocabulary import Partitioner
from jxinspect.pipeline import inspect_target
from jxinspect.project.declarations import static_declaration
from jxinspect.project.options import NO_OPTIONS
from jxinspect.project.resolve import Resolved, resolve
from jxinspect.survey import grade

CORPUS = Path(__file__).parent / "corpus" / "programs.py"
"""The corpus: a module whose ``JXINSPECT`` declares each program's inputs and staging."""

DEVICES = 4
"""CPU devices simulated for every program (pmap and shard_map need several)."""

NEEDS: dict[str, tuple[str, str]] = {
    "custom_transpose": ("jax.custom_transpose.custom_transpose", "JAX 0.10 removed it"),
}
"""The programs whose public API not every supported release has, with what to say of
the releases that lack it: there the program is not staged and is graded as not
available (``jax.custom_transpose`` is in 0.4.35 to 0.9.x). Every other program stages
on every supported release."""

FAMILIES: dict[str, str] = {"keywords": "keywords", "pmap": "pmap"}
"""Programs whose ``@main`` names stand for a program shape findings are advised by:
keyword arguments (named in signature order by 0.4.x), and pmap's arguments and results."""


def run_survey(
    only: tuple[str, ...] = (), partitioner: Partitioner | None = None, compile: bool = False
) -> Survey:
    """Stage the programs (``only`` these, when given; with ``compile``, compiled too) and
    grade them."""
    from jxinspect.tracer import seam

    # the corpus's programs, in order, read once from its source (nothing imported)
    declaration = static_declaration(CORPUS)
    names = declaration.functions if declaration is not None else ()
    unknown = [name for name in only if name not in names]
    if unknown:
        raise UsageError(
            f"no program {unknown[0]!r} in the survey's corpus; known: {', '.join(names)}"
        )
    given = replace(NO_OPTIONS, devices=DEVICES, partitioner=partitioner)
    surveyed: list[SurveyProgram] = []
    ours: list[tuple[str, Exception]] = []
    chosen = [name for name in names if not only or name in only]
    for name in chosen:
        api, why = NEEDS.get(name, (None, ""))
        if api is not None and not seam.has_public_api(api):
            entry = (declaration.entries.get(name) if declaration else None) or {}
            said = f"{api.rpartition('.')[0]} is not in this release ({why})"
            surveyed.append(SurveyProgram(name, entry.get("stage", "jit"), "failed",
                                          unavailable=said))  # fmt: skip
            continue
        try:
            resolved = resolve(f"{CORPUS}:{name}", given, None, lambda _: declaration)
            surveyed.append(_program(resolved, compile))
        except JxError:
            raise
        except Exception as err:  # jxinspect's own failure: the others still go on
            ours.append((name, err))
    if ours:  # a survey would grade JAX with what failed in jxinspect
        first, failure = ours[0]
        raise InternalError(
            f"internal error ({releases()}): {len(ours)} of {len(chosen)} survey programs "
            f"failed inside jxinspect, not in JAX (first, {first}: "
            f"{type(failure).__name__}: {failure}); no survey was made (rerun with "
            "--traceback and report it)"
        ) from failure
    return Survey(
        jax_version=seam.jax_version(),
        jaxlib_version=seam.jaxlib_version(),
        platform=seam.default_backend(),
        partitioner=partitioner or ("shardy" if seam.shardy_default() else "gspmd"),
        programs=tuple(surveyed),
    )


def _program(resolved: Resolved, compile: bool) -> SurveyProgram:
    name, stage = str(resolved.target.attribute), resolved.options.stage_name
    try:
        report = inspect_target(resolved, compile=compile, freeze=False)
    except JxError as err:
        if isinstance(err, InternalError):
            raise
        return SurveyProgram(name, stage, "failed", error=str(err))
    family = FAMILIES.get(name)
    if report.reached == "failed":
        return SurveyProgram(name, stage, "failed", error=report.error or "did not trace")
    return SurveyProgram(
        name,
        stage,
        report.reached,
        error=report.error,
        reads=grade.reads(report),
        jax_own=grade.jax_own(report),
        cells=grade.cells(report, family),
    )
