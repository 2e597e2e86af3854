"""The one pipeline behind every entry point: target → staged → Report → judged.

``inspect_target`` takes a target string and :class:`~jxinspect.project.options.TargetOptions`
(from flags, a ``JXINSPECT`` declaration or a config file), prepares devices *before*
importing the user's module, builds example inputs from specs, and calls
``inspect_function``, which takes a live function and the staging API's own options.
``report_of`` turns a staged program into its report, whether it was staged here or
lowered by a recorded run (``jxinspect record``'s hook), and ``judge`` is the one judge
step, with the project's rule settings (``project_config``) on every path.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect as pyinspect
import warnings
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from jxinspect import rules
from jxinspect.core.errors import UsageError, UserCodeError
from jxinspect.core.facts import Facts
from jxinspect.core.identity import ProgramComparison
from jxinspect.core.interrupts import reraise_if_stopping
from jxinspect.core.lint import LintResult, RuleInfo
from jxinspect.core.model import AcceptedCost, InputsFrom, Mesh, Report
from jxinspect.core.program import TextRequest
from jxinspect.core.recompiles import Compile
from jxinspect.core.vocabulary import Stage
from jxinspect.project import spec as specs
from jxinspect.project.annotations import infer_inputs
from jxinspect.project.config import Policy
from jxinspect.project.options import NO_OPTIONS, TargetOptions
from jxinspect.project.plan import StagingPlan, api_keywords, role_option
from jxinspect.project.resolve import Resolved, mesh_axes, resolve
from jxinspect.project.spec import SpecError
from jxinspect.project.targets import (
    Target,
    describe_exception,
    load_module,
    parse_target,
    resolve_attribute,
)

if TYPE_CHECKING:
    from jxinspect.core.model import StaticArg
    from jxinspect.tracer.read.report import Context
    from jxinspect.tracer.staged import Lowered, Staged, Traced


def callable_name(fun: Any) -> str:
    """``Model.apply`` for a function, ``Model`` for a callable object; never its
    ``repr``, which user code may make slow, huge or raising."""
    for candidate in (fun, type(fun)):
        name = getattr(candidate, "__qualname__", None) or getattr(candidate, "__name__", None)
        if isinstance(name, str) and name:
            return name
    return "<callable>"


def real_function(fun: Any) -> Any:
    """The user's function inside ``functools.partial``, ``jax.jit``/``jax.pmap`` objects
    and library wrappers (each keeps it in ``__wrapped__`` or ``func``)."""
    seen: set[int] = set()
    while id(fun) not in seen:
        seen.add(id(fun))
        if isinstance(fun, functools.partial):
            fun = fun.func
            continue
        try:
            inner = getattr(fun, "__wrapped__", None)
        except Exception:  # a property of the user's object
            inner = None
        if inner is None or inner is fun:
            break
        fun = inner
    return fun


def _function_line(fun: Any, traced: Traced) -> str | None:
    """``step at train.py:12``, JAX's way, for the user's function when JAX names another
    (a library wrapper's inner function) or none (``functools.partial`` inside ``pmap``)."""
    from jxinspect.tracer.read import report as extract

    said = extract.function_name(traced)
    real = real_function(fun)
    name = getattr(real, "__name__", None)
    qualified = getattr(real, "__qualname__", name)
    method = isinstance(qualified, str) and "." in qualified and "<locals>" not in qualified
    if traced.wrapper is None and said and "<unknown>" not in said and not method:
        return None
    file, line = _source(real)
    if not isinstance(name, str) or file is None:
        return None
    return f"{qualified if method else name} at {file}:{line}"


def _source(fun: Any) -> tuple[str | None, int | None]:
    """File and first line of the user's function (``def`` line, decorators excluded)."""
    code = getattr(real_function(fun), "__code__", None)
    if code is None:
        return None, None
    return code.co_filename, code.co_firstlineno


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
    policy = policy or Policy()
    facts = Facts(policy.settings, tuple(compiles), accepted_cost, tuple(comparisons))
    return report.with_findings(policy.apply(rules.apply_rules(report, facts).findings))


def rule_infos(policy: Policy) -> tuple[RuleInfo, ...]:
    """Every rule, with the severity ``policy`` gives it, its summary and explanation
    (for lint's results: the renderers that describe rules)."""
    return tuple(
        RuleInfo(r.code, policy.severity_of(r.code, r.severity), r.summary, r.explanation)
        for r in rules.RULES
    )


def described(result: LintResult, source: str) -> LintResult:
    """A lint result read back from its JSON (each rule's code and severity) with each
    rule's summary and explanation from this jxinspect's table; a code it does not know
    is a :class:`~jxinspect.core.errors.UsageError` naming ``source``."""
    unknown = [rule.code for rule in result.rules if rule.code not in rules.RULES_BY_CODE]
    if unknown:
        raise UsageError(
            f"{source} names rules this jxinspect does not know ({', '.join(unknown)}); read it "
            "with the jxinspect that wrote it"
        )
    table = rules.RULES_BY_CODE
    return replace(
        result,
        rules=tuple(
            replace(r, summary=table[r.code].summary, explanation=table[r.code].explanation)
            for r in result.rules
        ),
    )


def report_of(
    staged: Staged,
    context: Context,
    jax_mesh: Any = None,
    *,
    compile: bool = False,
    memory: bool = False,
) -> Report:
    """The one way from a staged program to its report (not judged yet), whether it was
    staged here or lowered by a recorded run: ``@main`` read over ``jax_mesh`` (else
    ``context.mesh``), the report built, and with ``compile`` what XLA chose (``memory``:
    and the buffers live at the peak)."""
    from jxinspect.tracer import inputs, seam
    from jxinspect.tracer.read import report as extract
    from jxinspect.tracer.staged import Lowered

    mesh = inputs.mesh_of(jax_mesh) if jax_mesh is not None else context.mesh
    device_ids = seam.mesh_device_ids(jax_mesh) if jax_mesh is not None else None
    with seam.partitioner(context.partitioner) as used:
        context = replace(
            context,
            mesh=mesh,
            num_devices=mesh.size if mesh is not None else seam.device_count(),
            platform=context.platform or seam.default_backend(),
            partitioner=used,
        )
        report = extract.build_report(
            staged, extract.read_lowered(staged, mesh, device_ids), context
        )
        report = with_axis_types(report, jax_mesh)
        if compile and isinstance(staged, Lowered):
            report = compiled_report(report, staged, memory=memory)
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
) -> Report:
    """Stage ``fun`` with ``options`` given to the staging API as they are; its Report,
    judged with ``policy`` (``judged``: not for a lint worker). ``compile``: also what
    XLA chose (``memory``: and the buffers live at the peak). ``inputs_from``: how the inputs were built, where the user gave none."""
    from jxinspect.tracer import inputs, seam
    from jxinspect.tracer import stage as staging
    from jxinspect.tracer.read.report import Context

    seam.require_supported()
    options = dict(options or {})
    platform, platform_note = seam.lowering_platform(platform)
    notes = (*notes, *([platform_note] if platform_note else []))
    # a function jit-wrapped already: its own statics say which arguments are static
    plan = StagingPlan.of(stage, options or seam.wrapper_keywords(fun))
    jax_mesh = inputs.find_jax_mesh(options.get("mesh"), plan.in_layout, plan.out_layout, args)
    called = _call_paths(fun, args, kwargs, plan)
    file, line = _source(fun)
    with warnings.catch_warnings(record=True) as caught, seam.partitioner(partitioner) as used:
        warnings.simplefilter("always")
        staged = staging.stage_function(fun, tuple(args), kwargs, stage, options, platform)
        expected, static_args = _program_paths(called, plan, staged.traced)
        already = staged.traced.wrapped and options
        context = Context(
            target=target or callable_name(real_function(fun)),
            function=_function_line(fun, staged.traced),
            expected_args=expected,
            static_args=tuple(static_args),
            platform=platform,
            mesh=inputs.pmap_mesh(args, plan) if stage == "pmap" and jax_mesh is None else None,
            partitioner=used,
            file=file,
            line=line,
            notes=(*notes, *([ALREADY_STAGED] if already else [])),
            keep_texts=keep_texts,
        )
        report = report_of(staged, context, jax_mesh, compile=compile, memory=memory)
    if inputs_from is not None:
        report = replace(report, inputs_from=inputs_from)
    said = [str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()]
    if said:
        report = replace(
            report, notes=(*report.notes, *dict.fromkeys(f"JAX warned: {m}" for m in said))
        )
    return judge(report, policy) if judged else report


ALREADY_STAGED = "the target is already staged; staging options were not applied"


def _call_paths(
    fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any], plan: StagingPlan
) -> tuple[list[str | None] | None, list[StaticArg]]:
    """The user's path of each flat input of the call, and its static arguments."""
    from jxinspect.tracer.read import paths

    unwrapped = getattr(fun, "__wrapped__", fun)
    return paths.argument_paths(  # type: ignore[return-value]
        unwrapped, tuple(args), kwargs, plan.statics, plan.static_names
    )


def _program_paths(
    called: tuple[list[str | None] | None, list[StaticArg]],
    plan: StagingPlan,
    traced: Traced,
) -> tuple[list[str | None] | None, list[StaticArg]]:
    """:func:`_call_paths` for the inputs the program receives, where staging
    rearranged the call (a wrapper, or the array leaves split from the rest)."""
    from jxinspect.tracer.read import paths
    from jxinspect.tracer.stage import wrapper_paths

    expected, static_args = called
    if traced.leaves is None or traced.call is None:
        return expected, static_args
    inner, call_args, call_kwargs = traced.call
    mapped = wrapper_paths(traced) or paths.mapped_paths(
        inner, call_args, call_kwargs, traced.leaves, plan.statics, plan.static_names
    )
    return mapped[0], [*static_args, *mapped[1]]


def compiled_report(report: Report, staged: Lowered, *, memory: bool = False) -> Report:
    """``report`` with what XLA chose when compiling ``staged`` (``memory``: and the
    buffers live at the peak)."""
    from jxinspect.tracer import stage as staging
    from jxinspect.tracer.read import compiled
    from jxinspect.tracer.staged import CompileFailed

    compiled.check_compilable(report)
    done = staging.compile(staged)
    if isinstance(done, CompileFailed):
        return replace(report, error=f"compilation failed: {done.error}")
    return compiled.attach(report, done.executable, memory=memory)


def _parse(flag: str, parser: Any, text: str) -> Any:
    try:
        return parser(text)
    except SpecError as err:
        raise UsageError(f"{flag}: {err}") from None


def _example_inputs(
    options: TargetOptions,
    module: Any,
    target: Target,
    fun: Any,
    shared_dims: frozenset[str] = frozenset(),
) -> tuple[tuple[Any, ...], dict[str, Any], InputsFrom | None]:
    """The call's inputs in the spec language's values: from ``args_from``, from
    ``args``/``kwargs``, or, where those leave a required argument out, from the
    target's annotations (and what was chosen doing so). ``shared_dims``: the dims only
    the configuration's ``defaults`` give."""
    if options.args_from:
        ref = options.args_from
        if ":" in ref:
            source = parse_target(ref)
            maker = resolve_attribute(load_module(source), source)
        else:
            maker = resolve_attribute(module, target.with_attribute(ref))
        try:
            made = maker()
        except BaseException as err:  # the user's code may raise anything, sys.exit too
            reraise_if_stopping(err)
            raise UserCodeError(f"--args-from {ref} failed: {describe_exception(err)}") from None
        if (
            isinstance(made, tuple)
            and len(made) == 2
            and isinstance(made[0], (tuple, list))
            and isinstance(made[1], dict)
        ):
            return tuple(made[0]), dict(made[1]), None
        if isinstance(made, (tuple, list)):
            return tuple(made), {}, None
        raise UsageError(
            f"--args-from {ref} returned {type(made).__name__}; return args or (args, kwargs)"
        )
    kwargs = _parse("--kwargs", specs.parse_kwargs, options.kwargs or "")
    if options.args is None and _needs_more(fun, kwargs):
        owner = _owner_class(module, target)
        return _inferred_inputs(options, fun, target, kwargs, shared_dims, owner)
    if options.args is None:  # all given by name: in the signature's order, as inferred
        return (*_in_signature_order(fun, kwargs), None)
    args = _parse("--args", specs.parse_args, options.args or "")
    return args, kwargs, None


def _in_signature_order(fun: Any, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``--kwargs`` passed as the inferred inputs are: each leading parameter that can
    be positional in its place, the rest by name (one rule for both: the program's
    arguments follow the signature, not the keywords' sorted order)."""
    try:
        parameters = list(pyinspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return (), kwargs
    args: list[Any] = []
    rest = dict(kwargs)
    for param in parameters:
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        if param.name not in rest:
            break
        args.append(rest.pop(param.name))
    return tuple(args), rest


def _owner_class(module: Any, target: Target) -> type | None:
    """The class a method target belongs to (``Model`` of ``file.py:Model.__call__``)."""
    parts = (target.attribute or "").split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner if len(parts) > 1 and isinstance(owner, type) else None


def _needs_more(fun: Any, given: dict[str, Any]) -> bool:
    """Whether a call with only ``given`` keyword arguments lacks one ``fun`` requires."""
    try:
        parameters = pyinspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        p.default is p.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and p.name not in given
        for p in parameters
    )


def _inferred_inputs(
    options: TargetOptions,
    fun: Any,
    target: Target,
    given: dict[str, Any],
    shared_dims: frozenset[str],
    owner: type | None,
) -> tuple[tuple[Any, ...], dict[str, Any], InputsFrom]:
    """The inputs the target's annotations describe (``given``: those named by
    ``--kwargs``), its static arguments as its staging options (or its own ``jax.jit``)
    say."""
    from jxinspect.tracer import seam

    plan = StagingPlan.of(options.stage_name, api_keywords(options) or seam.wrapper_keywords(fun))
    real = real_function(fun)
    inferred = infer_inputs(
        real if pyinspect.isfunction(real) else fun,
        given=given,
        dims=_parse("--dims", specs.parse_dims, options.dims or ""),
        float_dtype=options.dtype,
        statics=frozenset(plan.statics),
        static_names=plan.static_names,
        where=target.text,
        shared_dims=shared_dims,
        owner=owner,
    )
    return inferred.args, inferred.kwargs, inferred.said


def _single_or_tuple(values: tuple[Any, ...]) -> Any:
    return values[0] if len(values) == 1 else values


def _staging_options(options: TargetOptions, jax_mesh: Any) -> dict[str, Any]:
    """The staging API's keyword arguments: the options it takes as written, and the
    declared layouts as JAX objects under the keyword the stage takes them by
    (``PartitionSpec`` trees for shard_map, ``NamedSharding`` trees for jit/pjit)."""
    from jxinspect.tracer import inputs

    stage = options.stage_name
    result = api_keywords(options)
    layouts = [
        (option, _parse(option.flag, option.parse, value))
        for role in ("in_layout", "out_layout")
        if (option := role_option(stage, role)) and option.parse
        if (value := getattr(options, option.name))
    ]
    if layouts and jax_mesh is None:
        flags = "/".join(option.flag for option, _ in layouts)
        raise UsageError(f"{flags} need a mesh: add --mesh, e.g. --mesh data=8")
    if stage == "shard_map":
        if jax_mesh is None:
            raise UsageError("shard_map needs a mesh: add --mesh, e.g. --mesh data=2,model=4")
        result["mesh"] = jax_mesh
    for option, tree in layouts:
        value = inputs.layout_tree(tree, jax_mesh, option.flag, specs_only=stage == "shard_map")
        single = option.role == "out_layout"
        result[option.keyword_for(stage)] = _single_or_tuple(value) if single else value
    return result


def _prepare_devices(options: TargetOptions) -> tuple[Mesh | None, list[str]]:
    from jxinspect.tracer import devices

    axes = mesh_axes(options.mesh) if options.mesh else None
    mesh = Mesh(axes, abstract=bool(options.abstract)) if axes else None
    needed = mesh.size if mesh and not mesh.abstract else None
    return mesh, devices.prepare_devices(options.devices, needed)


def _dim_names(options: TargetOptions | None) -> set[str]:
    if options is None or not options.dims:
        return set()
    return {name for name, _ in _parse("--dims", specs.parse_dims, options.dims)}


def _own_dims(resolved: Resolved) -> set[str]:
    """The dims a layer over the configuration's ``defaults`` gives (flags, the
    configuration's entry, the declaration)."""
    layers = (resolved.given, resolved.entry, resolved.declared)
    return set().union(*(_dim_names(layer) for layer in layers))


def _shared_dims(resolved: Resolved) -> frozenset[str]:
    """The dims only the configuration's ``defaults`` give: given to every target, so a
    target that does not use them is not told so."""
    return frozenset(_dim_names(resolved.defaults) - _own_dims(resolved))


def _unused_dims_note(resolved: Resolved, said: InputsFrom | None) -> list[str]:
    """Dims given for a target whose inputs are given too: said, not silently ignored."""
    own = sorted(_own_dims(resolved))
    if said is not None or not own:
        return []
    return [
        f"dims unused ({', '.join(own)}): the inputs are given (args, kwargs or "
        "args_from), and dims only size inputs read from the annotations"
    ]


def _abstract_inputs(
    options: TargetOptions, mesh: Mesh | None, module: Any, resolved: Resolved, fun: Any
) -> tuple[Any, tuple[Any, ...], dict[str, Any], InputsFrom | None]:
    """The JAX mesh (if any), the example inputs as abstract values laid out on it, and
    how they were built when the user gave none."""
    from jxinspect.tracer import inputs

    shared = _shared_dims(resolved)
    args, kwargs, said = _example_inputs(options, module, resolved.target, fun, shared)
    jax_mesh = (
        inputs.build_mesh(mesh, abstract=mesh.abstract, explicit=options.explicit) if mesh else None
    )
    args = tuple(inputs.to_abstract(a, jax_mesh) for a in args)
    kwargs = {k: inputs.to_abstract(v, jax_mesh) for k, v in kwargs.items()}
    return jax_mesh, args, kwargs, said


def _over_explicit_axes(
    options: TargetOptions, stage_options: dict[str, Any], args: tuple[Any, ...], jax_mesh: Any
) -> tuple[tuple[Any, ...], AbstractContextManager[object]]:
    """Over a mesh whose axes are all ``Explicit``, as a real run over it: the stage's
    inputs that declare no layout laid out as its input specs say (``shard_map`` requires
    the types to match them), and staging under the mesh."""
    from jxinspect.tracer import inputs, seam

    if jax_mesh is None or not seam.all_explicit(jax_mesh):
        return args, contextlib.nullcontext()
    layout = role_option(options.stage_name, "in_layout")
    given = stage_options.get(layout.keyword_for(options.stage_name)) if layout else None
    if options.stage_name == "shard_map" and given is not None:
        args = inputs.laid_out_as_specs(args, given, jax_mesh)
    return args, seam.use_mesh(jax_mesh)


def with_axis_types(report: Report, jax_mesh: Any) -> Report:
    """``report`` saying each axis's type of the JAX mesh it was staged over, where its
    mesh is that one (as many axes)."""
    from jxinspect.tracer import seam

    types = seam.axis_type_names(jax_mesh) if jax_mesh is not None else None
    if report.axis_types is not None or types is None or report.mesh is None:
        return report
    return replace(report, axis_types=types) if len(types) == len(report.mesh.axes) else report


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
) -> Report:
    """Inspect a target, resolved by :func:`jxinspect.project.resolve.resolve` (a string
    under ``given``); judged as :func:`inspect_function` says. ``freeze``: the process
    ends after this target, so what is loaded may move to the collector's permanent
    generation (never in a worker that stages many: frozen objects are never collected).

    Devices are prepared before the user's module is imported when the declaration can
    be read from the source; a declaration built at import time is applied after.
    """
    from jxinspect.tracer import seam

    seam.require_supported()
    resolved = target if isinstance(target, Resolved) else resolve(target, given)
    mesh, notes = _prepare_devices(resolved.options_before_import)
    module = load_module(resolved.target)
    if resolved.declared_at_import:
        resolved = resolved.imported(module)
        mesh, notes = _prepare_devices(resolved.options)
    options = resolved.options
    fun = resolve_attribute(module, resolved.target)
    if freeze:
        # JAX and the user's module live as long as this process: move them to the
        # collector's permanent generation, or a full collection while tracing rescans
        # them all (~50 ms).
        gc.freeze()
    jax_mesh, args, kwargs, said = _abstract_inputs(options, mesh, module, resolved, fun)
    notes = [*notes, *_unused_dims_note(resolved, said)]
    stage_options = _staging_options(options, jax_mesh)
    args, context = _over_explicit_axes(options, stage_options, args, jax_mesh)
    platform = options.platform or ("cpu" if options.abstract else None)
    with context:
        report = inspect_function(
            fun,
            args,
            kwargs,
            stage=options.stage_name,
            options=stage_options,
            platform=platform,
            partitioner=options.partitioner,
            target=resolved.target.text,
            notes=tuple(notes),
            keep_texts=keep_texts,
            compile=compile,
            memory=memory,
            policy=policy,
            inputs_from=said,
            judged=judged,
        )
    return with_axis_types(report, jax_mesh)
