"""The one pipeline behind every entry point: target → staged → Report → judged.

``inspect_target`` takes a target string and :class:`~jxinspect.project.options.TargetOptions`
(from flags, a ``JXINSPECT`` declaration or a config file), prepares devices *before*
importing the user's module, builds example inputs (:mod:`jxinspect.project.example_inputs`)
and the staging API's call over the mesh it builds once (:mod:`jxinspect.tracer.call`),
and stages them as ``inspect_function`` does a live function with the staging API's own
options. ``report_of`` turns a staged program into its report, whether it was staged
here or lowered by a recorded run (``jxinspect record``'s hook), and ``judge`` runs the
rules with the project's rule settings (``project_config``) on every path.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from jxinspect.core import interrupts, progress
from jxinspect.core.model import AcceptedCost, Finding, InputsFrom, Mesh, Report, Topology
from jxinspect.core.program import TextRequest
from jxinspect.core.vocabulary import Stage
from jxinspect.project.function import callable_name, function_line, real_function, source
from jxinspect.project.options import NO_OPTIONS, TargetOptions
from jxinspect.project.plan import StagingPlan

# What only judging, or resolving and staging a target here, needs (the rules, the
# configuration, the example-input readers) is imported where it is used: a recorded
# run builds its reports through ``report_of`` and loads none of it.
if TYPE_CHECKING:
    from jxinspect.core.facts import Read
    from jxinspect.core.identity import ProgramComparison
    from jxinspect.core.recompiles import Compile
    from jxinspect.project.config import Policy
    from jxinspect.project.resolve import Resolved
    from jxinspect.rules.base import RulePolicy
    from jxinspect.tracer.partitioner_run import PartitionerRun
    from jxinspect.tracer.read.profile import Measure
    from jxinspect.tracer.read.report import Context
    from jxinspect.tracer.staged import Lowered, Staged


def judge(
    report: Report,
    policy: Policy | None = None,
    *,
    compiles: Sequence[Compile] = (),
    accepted_cost: AcceptedCost | None = None,
    comparisons: Sequence[ProgramComparison] = (),
) -> Report:
    """The one judge step (``lower``, ``lint``, ``record``, ``show``, ``diff-debug``, the
    API): every rule once, against the report and the facts its path knows (a
    recording's ``compiles``, a lint baseline's ``accepted_cost``, the function's
    lowerings compared across processes), then the policy's select/ignore and
    severities once (default: the rules' own). Lint's workers do not judge: the lint
    run judges each report it receives or reads."""
    from jxinspect import rules
    from jxinspect.core.facts import Facts
    from jxinspect.project.config import Policy

    policy = policy or Policy()
    facts = Facts(policy.settings, tuple(compiles), accepted_cost, tuple(comparisons))
    return report.with_findings(policy.apply(rules.apply_rules(report, facts).findings))


def judge_comparisons(
    comparisons: Sequence[ProgramComparison], policy: Policy | None = None
) -> tuple[Finding, ...]:
    """The judge step of lowerings compared apart from any one report (``show`` of a
    recording of several processes, ``diff-debug`` of two runs): the comparison rules,
    then the policy's select/ignore and severities, as :func:`judge` applies them."""
    from jxinspect import rules
    from jxinspect.project.config import Policy

    policy = policy or Policy()
    return policy.apply(f for c in comparisons for f in rules.apply_comparison_rules(c))


def needs(policy: RulePolicy, *, topology: bool = False) -> frozenset[Read]:
    """What to stage for ``policy``'s rules (:func:`jxinspect.rules.needs`)."""
    from jxinspect import rules

    return rules.needs(policy, topology=topology)


def report_of(
    staged: Staged,
    context: Context,
    jax_mesh: Any = None,
    *,
    compile: bool = False,
    memory: bool = False,
    built_over: Any = None,
    why: PartitionerRun | None = None,
    measure: Measure | None = None,
    compiled_program: Callable[[str, str], object] | None = None,
) -> Report:
    """The one way from a staged program to its report (not judged yet), whether it was
    staged here or lowered by a recorded run: ``@main`` read over ``jax_mesh`` (else
    ``context.mesh``), the report built, and with ``compile`` what XLA chose (``memory``:
    and the buffers live at the peak; ``why``: each collective's origins from that run;
    ``compiled_program``: called with the compiled module's name, as the profiler's events
    say it, and its optimized HLO text).
    Its axis types are ``jax_mesh``'s, else those of the mesh the inputs were
    ``built_over``."""
    from jxinspect.tracer import seam
    from jxinspect.tracer.mesh_facts import mesh_of, with_mesh_facts
    from jxinspect.tracer.read import report as extract
    from jxinspect.tracer.staged import Lowered

    mesh = mesh_of(jax_mesh) if jax_mesh is not None else context.mesh
    device_ids = seam.mesh_device_ids(jax_mesh) if jax_mesh is not None else None
    with seam.partitioner(context.partitioner) as used:
        context = replace(
            context,
            mesh=mesh,
            num_devices=mesh.size if mesh else 1 if context.topology else seam.device_count(),
            platform=context.platform or seam.default_backend(),
            partitioner=used,
        )
        report = extract.build_report(
            staged, extract.read_lowered(staged, mesh, device_ids), context
        )
        report = with_mesh_facts(report, jax_mesh, built_over)
        if compile and isinstance(staged, Lowered):
            report = compiled_report(report, staged, memory=memory, why=why, measure=measure,
                                     compiled_program=compiled_program)  # fmt: skip
    return report


def inspect_mlir(text: str, source: str, policy: Policy | None = None) -> Report:
    """The judged report of StableHLO text (``source`` names it in errors)."""
    from jxinspect.tracer.read.stablehlo import report_from_text

    return judge(report_from_text(text, source), policy)


def inspect_function(
    fun: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    stage: Stage = "jit",
    options: dict[str, Any] | None = None,
    platform: str | None = None,
    partitioner: str | None = None,
    target: str | None = None,
    notes: tuple[str, ...] = (),
    keep_texts: TextRequest | None = None,
    compile: bool = False,
    memory: bool = False,
    policy: Policy | None = None,
    inputs_from: InputsFrom | None = None,
    judged: bool = True,
    built_over: Any = None,
    why: PartitionerRun | None = None,
    topology: Topology | None = None,
    measure: Measure | None = None,
) -> Report:
    """Stage ``fun`` with ``options`` as the staging API takes them; its Report, judged
    with ``policy`` unless not ``judged`` (a lint worker); ``compile``: with what XLA chose
    (``memory``: the buffers live at the peak); ``inputs_from``, ``built_over``: how and
    over which JAX mesh the inputs were built; ``topology``: the TPU it is compiled for
    (the caller places it there). The caller checked the JAX release."""
    from jxinspect.tracer import call, inputs, mesh_facts, seam
    from jxinspect.tracer import stage as staging
    from jxinspect.tracer.read import report as extract

    options = dict(options or {})
    platform, platform_note = seam.lowering_platform(platform)
    plan = StagingPlan.of(stage, options or seam.wrapper_keywords(fun))  # jitted: its statics
    layouts = (options.get("mesh"), plan.in_layout, plan.out_layout, args)
    jax_mesh = mesh_facts.find_jax_mesh(*layouts, built_over=built_over)
    file, line = source(fun)
    with warnings.catch_warnings(record=True) as caught, seam.partitioner(partitioner) as used:
        warnings.simplefilter("always")
        staged = staging.stage_function(fun, tuple(args), kwargs, stage, options, platform, plan)
        traced = staged.traced
        expected, static_args = traced.paths or (None, [])
        already = [call.ALREADY_STAGED] if traced.wrapped and options else []
        context = extract.Context(
            target=target or callable_name(real_function(fun)),
            function=function_line(fun, extract.function_name(traced), traced.wrapper),
            expected_args=expected, static_args=tuple(static_args), platform=platform,
            mesh=inputs.pmap_mesh(args, plan) if stage == "pmap" and jax_mesh is None else None,
            partitioner=used, file=file, line=line, keep_texts=keep_texts, topology=topology,
            notes=(*notes, *filter(None, (platform_note, seam.partitioner_note(partitioner))),
                   *already),
        )  # fmt: skip
        report = report_of(
            staged, context, jax_mesh, compile=compile, memory=memory, built_over=built_over,
            why=why, measure=measure,
        )  # fmt: skip
    report = replace(report, inputs_from=inputs_from or report.inputs_from,
                     notes=(*report.notes, *call.warned(caught)),
                     topology=report.topology or _chips_here(report))  # fmt: skip
    return judge(report, policy) if judged else report


def _chips_here(report: Report) -> Topology | None:
    """The TPU chips this machine staged ``report``'s program on (none for a CPU's)."""
    from jxinspect.tracer import seam

    return seam.local_tpu() if report.platform == "tpu" and report.error is None else None


def compiled_report(
    report: Report,
    staged: Lowered,
    *,
    memory: bool = False,
    why: PartitionerRun | None = None,
    measure: Measure | None = None,
    compiled_program: Callable[[str, str], object] | None = None,
) -> Report:
    """``report`` with what XLA chose when compiling ``staged`` (``memory``: and the
    buffers live at the peak; ``why``: each collective's origins from that run;
    ``measure``: its steps run under the profiler; ``compiled_program``: told the compiled
    module's name and optimized HLO text)."""
    from jxinspect.tracer import seam
    from jxinspect.tracer import stage as staging
    from jxinspect.tracer.call import check_compiled_for
    from jxinspect.tracer.partitioner_run import with_provenance
    from jxinspect.tracer.read import compiled, residuals
    from jxinspect.tracer.staged import CompileFailed

    compiled.check_compilable(report)
    progress.stage("compiling")
    done = staging.compile(staged, dump_assignment=memory and report.platform == "tpu")
    if isinstance(done, CompileFailed):
        short = seam.hbm_shortfall(done.error) if report.platform == "tpu" else None
        return replace(report, error=f"compilation failed: {done.error}", does_not_fit=short)
    if report.topology is not None:
        check_compiled_for(report.topology, done.executable)
    progress.stage("reading the compiled program")
    report = compiled.attach(report, done.executable, memory=memory, dumped=done.assignment,
                             lowered_calls=seam.custom_call_targets(staged.lowered))  # fmt: skip
    if why is not None:
        report = with_provenance(report, staged.lowered, why)
    report = residuals.with_offloads(report, staged.traced.jaxpr)
    if compiled_program is not None:
        compiled_program(seam.profiled_module(done.executable), done.executable.as_text())
    if measure is not None:
        from jxinspect.tracer.read.profile import measured

        progress.stage(f"running {measure.warmup} + {measure.steps} steps under the profiler")
        report = replace(report, profile=measured(report, done.executable, measure))
    return residuals.with_residuals(report, staged.traced.jaxpr) if memory else report


def _imported(
    resolved: Resolved, run: PartitionerRun | None, freeze: bool
) -> tuple[Resolved, Any, Any, Mesh | None, list[str]]:
    """The user's module imported on the devices its options ask for (a declaration
    built at import applied after), the partitioner's child told the conditions, the
    target function; and the mesh and the notes of preparing the devices."""
    from jxinspect.project.targets import load_module, resolve_attribute
    from jxinspect.tracer import call

    progress.stage("starting JAX")
    mesh, notes = call.prepare_devices(resolved.options_before_import)
    progress.stage("importing the module")
    module = load_module(resolved.target)
    interrupts.check()  # a Ctrl-C the import swallowed (user code, a gc callback)
    if resolved.declared_at_import:
        resolved = resolved.imported(module)
        mesh, notes = call.prepare_devices(resolved.options)
    if run is not None:
        run.send_conditions()
    fun = resolve_attribute(module, resolved.target)
    if freeze:
        # JAX and the user's module live as long as this process: in the collector's
        # permanent generation, a full collection while tracing skips them (~50 ms).
        gc.freeze()
    return resolved, module, fun, mesh, notes


def _resolved(target: Resolved | str, given: TargetOptions) -> Resolved:
    """``target`` as it is, or resolved under ``given``."""
    from jxinspect.project.resolve import Resolved, resolve

    return target if isinstance(target, Resolved) else resolve(target, given)


def inspect_target(
    target: Resolved | str,
    given: TargetOptions = NO_OPTIONS,
    *,
    keep_texts: TextRequest | None = None,
    compile: bool = False,
    memory: bool = False,
    policy: Policy | None = None,
    freeze: bool = True,
    judged: bool = True,
    why: bool = False,
    why_of: tuple[str, ...] = (),
    measure: Measure | None = None,
) -> Report:
    """Inspect a target, resolved by :func:`jxinspect.project.resolve.resolve` (a string
    under ``given``); judged as :func:`inspect_function` says. ``freeze``: the process
    ends after this target, so what is loaded may move to the collector's permanent
    generation (never in a worker that stages many: frozen objects are never collected).
    ``why``: compiled, with each collective's origins (``why_of``: and these values'),
    from a child that stages the target again meanwhile (:class:`PartitionerRun`), under
    the conditions this process has once the module is imported and the devices prepared.
    Devices are prepared before the user's module is imported when the declaration can
    be read from the source; a declaration built at import time is applied after.
    ``measure``: compiled, and its steps run under the profiler (``jxinspect profile``)."""
    from jxinspect.project.example_inputs import example_inputs, unused_dims_note
    from jxinspect.tracer import call, seam
    from jxinspect.tracer.partitioner_run import PartitionerRun

    seam.require_supported()
    resolved = _resolved(target, given)
    work = partial(inspect_target, resolved, compile=True)
    run = PartitionerRun.start(work, why_of) if why or why_of else None
    try:
        resolved, module, fun, mesh, notes = _imported(resolved, run, freeze)
        options = resolved.options
        on = call.topology(options)
        jax_mesh = call.target_mesh(mesh, options.explicit, on)
        progress.stage("building the example inputs")
        with call.building_under(jax_mesh):
            args, kwargs, said = example_inputs(resolved, module, fun, seam.wrapper_keywords(fun))
            args, kwargs = call.abstract_inputs(args, kwargs, jax_mesh)
        interrupts.check()
        stage_options = call.staging_options(options, jax_mesh)
        args, context = call.under_the_mesh(options, stage_options, args, kwargs, jax_mesh)
        with context, call.placed_on(on), call.auto_axes_said(jax_mesh, options.explicit):
            report = inspect_function(
                fun, args, kwargs, stage=options.stage_name, options=stage_options,
                platform=options.platform or ("tpu" if on else "cpu" if options.abstract else None),
                topology=on.topology if on else None,
                partitioner=options.partitioner, target=resolved.target.text,
                notes=(*notes, *unused_dims_note(resolved, said)), keep_texts=keep_texts,
                compile=compile or run is not None or on is not None or measure is not None,
                memory=memory, policy=policy, inputs_from=said, judged=judged,
                built_over=jax_mesh, why=run, measure=measure,
            )  # fmt: skip
        interrupts.check()  # one that tracing, lowering or compiling swallowed
        return report
    finally:
        if run is not None:
            run.stop()
