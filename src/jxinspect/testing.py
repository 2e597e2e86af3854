"""Assertions for the user's own test suite.

    from jxinspect.testing import assert_debug_info

    def test_train_step_keeps_its_names():
        assert_debug_info(train_step, args=(params, opt_state, batch), ignore=["JX110"])

:func:`assert_debug_info` stages the function exactly as :func:`jxinspect.inspect` does
and raises a plain :class:`AssertionError` (pytest and unittest both report it) when a
finding is at or above ``fail_on``, a leaf carries another name than expected, or a leaf
has another sharding than expected. :func:`assert_max_compiles` fails a test when a
function compiled more often inside it than it should, with every compile's reasons;
:func:`assert_cache_hits` when a compile inside it was not answered by JAX's persistent
compilation cache, with what the cache did and why.
:func:`assert_peak_memory` fails when the compiled program holds more per device at its
peak than allowed, with every buffer live there.
Importing this module does not import JAX.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from jxinspect.core.errors import UsageError
from jxinspect.core.model import Finding, Input, MemoryPeak, Output, Report, gate
from jxinspect.core.units import human_bytes, recorded
from jxinspect.core.vocabulary import FAIL_ON, SEVERITIES, STAGES, FailOn, Severity, Stage
from jxinspect.project.config import Policy
from jxinspect.project.options import nearest

if TYPE_CHECKING:
    from jxinspect.core.model import Sharding
    from jxinspect.core.recompiles import FunctionCompiles

__all__ = ["assert_cache_hits", "assert_debug_info", "assert_max_compiles", "assert_peak_memory"]


def assert_debug_info(
    fun: Any,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    stage: Stage = "jit",
    options: dict[str, Any] | None = None,
    platform: str | None = None,
    fail_on: FailOn = "warning",
    ignore: Iterable[str] = (),
    select: Iterable[str] | None = None,
    severity: Mapping[str, Severity] | None = None,
    names: Mapping[str, str | None] | None = None,
    shardings: Mapping[str, str | None] | None = None,
    devices: int | None = None,
) -> Report:
    """Stage ``fun`` like :func:`jxinspect.inspect` and assert its debug info holds.

    Fails on findings at or above ``fail_on`` (``info``, ``warning``, ``error`` or
    ``never``) whose code matches ``select`` and not ``ignore`` (code prefixes such as
    ``"JX110"`` or ``"JX2"``, as ``jxinspect lint --select/--ignore``), each at the
    severity ``severity`` gives its code (code prefix → ``"info"``, ``"warning"`` or
    ``"error"``, as ``severity:`` in ``jxinspect.yaml``; the longest prefix wins), the
    report judged once under that policy; on ``names``
    (leaf path → the name the program should carry; ``None``: no name) that differ; on
    ``shardings`` (leaf path → ``"P('data', None)"``, ``"replicated"``; ``None``: no
    sharding) that differ. ``devices=N`` first checks that JAX has at least ``N``
    devices (it cannot add them once started: raises :class:`RuntimeError`).
    Returns the :class:`~jxinspect.core.model.Report` (its findings those of that
    policy) when everything holds.
    """
    policy = Policy(
        select=_codes("select", select) if select is not None else None,
        ignore=_codes("ignore", ignore) or (),
        severity=_severities(severity),
    )
    _check_arguments(stage, fail_on, devices, names, shardings)
    if devices is not None:
        _require_devices(devices)

    from jxinspect import _inspect

    report = _inspect(
        fun, args, kwargs, stage=stage, options=options, platform=platform, texts=False,
        policy=policy,
    )  # fmt: skip
    failing = [f for f in report.findings if gate((f,), fail_on)]
    name_lines, sharding_lines = _differences(report, names, shardings)
    if failing or name_lines or sharding_lines:
        raise AssertionError(_message(report, failing, fail_on, name_lines, sharding_lines))
    return report


def _differences(
    report: Report,
    names: Mapping[str, str | None] | None,
    shardings: Mapping[str, str | None] | None,
) -> tuple[list[str], list[str]]:
    """The lines saying each name and each sharding the report's leaves hold otherwise."""
    leaves = _known_leaves(report, names, shardings)
    name_lines = [
        line
        for path, want in (names or {}).items()
        if (line := _name_difference(path, leaves[path], want)) is not None
    ]
    sharding_lines = [
        line
        for path, want in (shardings or {}).items()
        if (line := _sharding_difference(path, leaves[path].sharding, want)) is not None
    ]
    return name_lines, sharding_lines


def assert_peak_memory(
    fun: Any,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    max_bytes: int,
    stage: Stage = "jit",
    options: dict[str, Any] | None = None,
    platform: str | None = None,
) -> MemoryPeak:
    """Compile ``fun`` like :func:`jxinspect.inspect` (``memory=True``) and assert the bytes
    live per device at its peak are at most ``max_bytes``; the failure shows the peak and
    every buffer live there (paths, lines), as ``jxinspect lower --memory`` does. A peak
    that could not be read fails too. Returns the :class:`~jxinspect.core.model.MemoryPeak`."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise UsageError(f"assert_peak_memory: max_bytes must be a whole number of bytes, "
                         f"got {max_bytes!r}")  # fmt: skip
    import jxinspect
    from jxinspect.render.report import memory_view

    report = jxinspect.inspect(
        fun, args, kwargs, stage=stage, options=options, platform=platform, texts=False,
        memory=True,
    )  # fmt: skip
    peak = report.compiled.peak if report.compiled is not None else None
    if peak is None or peak.bytes is None:
        why = peak.unread if peak is not None else report.error or "not compiled"
        raise AssertionError(f"{report.target}: the peak could not be read: {why}")
    if peak.bytes > max_bytes:
        raise AssertionError(
            f"{report.target}: {human_bytes(peak.bytes)} live per device at the peak, over "
            f"max_bytes {human_bytes(max_bytes)}\n{memory_view.render(report)}"
        )
    return peak


def _known_leaves(
    report: Report,
    names: Mapping[str, str | None] | None,
    shardings: Mapping[str, str | None] | None,
) -> dict[str, Input | Output]:
    """The report's leaves by path; raises ``ValueError`` for a path asked about that
    is not one of them."""
    leaves = _leaves(report)
    for what, expected in (("names", names), ("shardings", shardings)):
        for path in expected or {}:
            if path not in leaves:
                raise ValueError(
                    f"{what}: {path!r} is not a leaf of {report.target}; known: {', '.join(leaves)}"
                )
    return leaves


# ---- arguments ----------------------------------------------------------------------------


def _codes(what: str, items: Iterable[str]) -> tuple[str, ...]:
    """Code prefixes, checked against the known rules as the CLI's ``--select/--ignore``."""
    from jxinspect.project.codes import codes

    given = (items,) if isinstance(items, str) else tuple(items)
    if not all(isinstance(item, str) for item in given):
        raise ValueError(f"{what}: expected code prefixes such as 'JX102', got {given!r}")
    try:
        return codes(what, ",".join(given)) or ()
    except UsageError as err:
        raise ValueError(str(err).removeprefix("--")) from None


def _severities(given: Mapping[str, Severity] | None) -> tuple[tuple[str, Severity], ...]:
    """``severity``'s code prefixes and severities, checked as ``severity:`` in a
    configuration is."""
    if given is None:
        return ()
    if not isinstance(given, Mapping):
        raise ValueError(f"severity: expected a mapping of code prefix to severity, got {given!r}")
    for code, level in given.items():
        if level not in SEVERITIES:
            raise ValueError(
                f"severity: {code!r}: {level!r} is not one of {', '.join(SEVERITIES)}"
                + (nearest(level, SEVERITIES) if isinstance(level, str) else "")
            )
    return tuple(
        (prefix, level) for code, level in given.items() for prefix in _codes("severity", (code,))
    )


def _check_arguments(
    stage: str,
    fail_on: str,
    devices: int | None,
    names: Mapping[str, str | None] | None,
    shardings: Mapping[str, str | None] | None,
) -> None:
    if fail_on not in FAIL_ON:
        raise ValueError(
            f"fail_on={fail_on!r}: use one of {', '.join(FAIL_ON)}"
            + (nearest(fail_on, FAIL_ON) if isinstance(fail_on, str) else "")
        )
    if stage not in STAGES:
        raise ValueError(
            f"stage={stage!r}: use one of {', '.join(STAGES)}"
            + (nearest(stage, STAGES) if isinstance(stage, str) else "")
        )
    if devices is not None and (
        isinstance(devices, bool) or not isinstance(devices, int) or devices < 1
    ):
        raise ValueError(f"devices={devices!r}: give a number of devices, 1 or more")
    for what, expected in (("names", names), ("shardings", shardings)):
        if expected is None:
            continue
        if not isinstance(expected, Mapping):
            raise ValueError(f"{what}: expected a mapping of leaf path to text, got {expected!r}")
        for path, value in expected.items():
            if not isinstance(path, str) or not (value is None or isinstance(value, str)):
                raise ValueError(
                    f"{what}: expected leaf path → text or None, got {path!r}: {value!r}"
                )


def _require_devices(count: int) -> None:
    from jxinspect.tracer import seam

    have = seam.device_count()
    if have < count:
        raise RuntimeError(
            f"devices={count}: JAX has {have} device(s) in this process and cannot add more "
            f"once started; simulate CPU devices before JAX starts, e.g. at the top of "
            f"conftest.py: XLA_FLAGS=--xla_force_host_platform_device_count={count} in the "
            f'environment, or jax.config.update("jax_num_cpu_devices", {count}) on JAX ≥ 0.5'
        )


# ---- comparisons --------------------------------------------------------------------------


def _leaves(report: Report) -> dict[str, Input | Output]:
    """Every argument and result by its path (arguments first)."""
    leaves: dict[str, Input | Output] = {}
    for leaf in report.inputs:
        leaves.setdefault(leaf.path, leaf)
    for result in report.outputs:
        leaves.setdefault(result.path, result)
    return leaves


def _name_difference(path: str, leaf: Input | Output, want: str | None) -> str | None:
    carried = leaf.name
    if isinstance(leaf, Output):
        # 0.4.x writes ['y'] where newer releases write result['y']: one path, two spellings
        from jxinspect.tracer.seam import normalize_result_path

        same = (want is None) == (carried is None) and (
            want is None
            or carried is None
            or normalize_result_path(want, False) == normalize_result_path(carried, False)
        )
    else:
        same = want == carried
    if same:
        return None
    shown = repr(carried) if carried is not None else "no name"
    expected = repr(want) if want is not None else "no name"
    return f"  name {path}: expected {expected}, carries {shown} ({leaf.status})"


_REPLICATED = re.compile(r"P\((None,?)*\)")


def _sharding_text(text: str) -> str:
    """One spelling for a spec: no spaces, single quotes, ``P(None)`` as ``replicated``."""
    text = re.sub(r"\s+", "", text).replace('"', "'").replace("PartitionSpec(", "P(")
    return "replicated" if _REPLICATED.fullmatch(text) else text


def _sharding_difference(path: str, sharding: Sharding | None, want: str | None) -> str | None:
    have = sharding.readable if sharding is not None else None
    if want is None or have is None:
        if want == have:
            return None
    elif _sharding_text(want) == _sharding_text(have):
        return None
    return (
        f"  sharding {path}: expected {want if want is not None else 'no sharding'}, "
        f"declared {have if have is not None else 'no sharding'}"
    )


# ---- the message --------------------------------------------------------------------------


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _message(
    report: Report,
    failing: list[Finding],
    fail_on: str,
    name_lines: list[str],
    sharding_lines: list[str],
) -> str:
    what = []
    if failing:
        what.append(f"{_count(len(failing), 'finding')} at or above {fail_on}")
    if name_lines:
        what.append(f"{_count(len(name_lines), 'name')} not as expected")
    if sharding_lines:
        what.append(f"{_count(len(sharding_lines), 'sharding')} not as expected")
    where = report.function or report.target
    staged = f"{recorded(report.stage)}, JAX {recorded(report.jax_version)}"
    lines = [f"debug info of {where} ({staged}): {'; '.join(what)}"]
    lines += [f"  {f.code} {f.severity} {f.message}" for f in failing]
    distinct = list(dict.fromkeys(f.code for f in failing))
    lines += [f"  see: jxinspect explain {code}" for code in distinct]
    if distinct:
        lines.append(f"  to accept them: ignore={distinct!r}")
    return "\n".join([*lines, *name_lines, *sharding_lines])


class _CompileWatch(contextlib.ContextDecorator):
    """The compiles of the functions of the user's inside a block, with their reasons,
    seconds and what the persistent compilation cache did, read from JAX's own lowerings
    and events: nothing is traced, lowered or compiled for it."""

    function: Callable[..., Any] | str | None = None

    def __enter__(self) -> Any:
        from jxinspect.record.fingerprint import fingerprint, static_values
        from jxinspect.record.identity import identity_of
        from jxinspect.record.recompiles import CompileLog
        from jxinspect.tracer import seam

        self.log = log = CompileLog(cache_settings=seam.cache_settings)

        def on_lowering(lowering: seam.RunLowering) -> None:
            if lowering.internal:
                return log.add_internal()
            source = lowering.source or lowering.name
            program = seam.program_digest(lowering.lowered) if lowering.lowered else ""
            done = fingerprint(lowering, static_values(lowering.call), program)
            # no record folder here: each compile is filed under its program's identity
            made = lowering.lowered
            same = identity_of(seam.program_text(made), None).program if made else ""
            log.add(source, lowering.name, same, done, lowering.call_site)

        self._stop = [
            seam.install_lowering_hook(on_lowering, lambda name, err: None),
            seam.install_duration_listener(log.on_duration),
            seam.install_cache_listener(log.on_cache_event),
        ]
        return self

    def __exit__(self, *exc: object) -> None:
        from jxinspect.core.recompiles import with_cache_held

        for stop in self._stop:
            stop()
        self.log.compiles[:] = with_cache_held(
            self.log.compiles, {c.folder: c.folder for c in self.log.compiles}
        )
        if exc[0] is None:
            self.check()

    def check(self) -> None:
        """Raise ``AssertionError`` saying what went against the expectation."""
        raise NotImplementedError

    def wanted(self) -> list[FunctionCompiles]:
        """The compiles in the block of the function asked for (every function's)."""
        from jxinspect.core.recompiles import by_function

        return [f for f in by_function(self.log.compiles) if self._wanted(f.function, f.source)]

    def _wanted(self, name: str, source: str | None) -> bool:
        if self.function is None:
            return True
        if isinstance(self.function, str):
            return name == self.function
        from jxinspect.tracer import seam

        return source is not None and source == seam.function_source(self.function)


class assert_max_compiles(_CompileWatch):  # noqa: N801 (reads as a function)
    """Fail (``AssertionError``) when any function (or ``function``, a function or its
    name) compiled more than ``n`` times inside the block or the decorated test, saying
    why it compiled each time (the reasons ``jxinspect record`` gives), no ``record``
    needed::

        with assert_max_compiles(1):
            for batch in batches:
                train_step(state, batch)

    The block's compiles are judged as ``jxinspect lint --records`` judges a recording's:
    rule JX402 with the budget ``n``, under the project's ``jxinspect.yaml`` (its
    ``select``/``ignore`` and ``severity``; it fails at the configuration's ``fail_on``,
    ``error`` unless set), and the message is JX402's finding with the reasons below it.
    Only JAX's own lowerings are read: nothing is traced, lowered or compiled for it.
    """

    def __init__(self, n: int, function: Callable[..., Any] | str | None = None) -> None:
        if n < 1:
            raise UsageError(f"assert_max_compiles: n must be at least 1, got {n}")
        self.n = n
        self.function = function

    def check(self) -> None:
        from jxinspect.core.recompiles import FunctionCompiles
        from jxinspect.project.config import DEFAULT_FAIL_ON, project_config
        from jxinspect.record.judged import compile_budget, judged_compiles
        from jxinspect.render.record.recompiles import group_text

        config = project_config()
        policy = compile_budget(config.policy, self.n)
        wanted = [c for c in self.log.compiles if self._wanted(c.function, c.source)]
        judged = [(found, report.findings) for found, report in judged_compiles(wanted, policy)]
        if not gate(
            (f for _, findings in judged for f in findings), config.fail_on or DEFAULT_FAIL_ON
        ):
            return
        lines = []
        for found, findings in judged:
            groups = FunctionCompiles(found[0].function, found[0].source, compiles=found).groups
            for f in findings:
                where = f"{f.file}:{f.line}: " if f.file and f.line else ""
                lines.append(f"{where}{f.code} {f.severity} {f.message}")
                lines += [f"  {group_text(g)}" for g in groups]
        raise AssertionError("\n".join(lines))


class assert_cache_hits(_CompileWatch):  # noqa: N801 (reads as a function)
    """Fail (``AssertionError``) unless every compile of any function (or ``function``)
    inside the block was answered by JAX's persistent compilation cache, saying for each
    one that was not what the cache did and why (``miss``, ``not_written`` under the
    minimum compile time, ``off`` without a cache folder); a block in which nothing of
    the user's compiled fails too (nothing read the cache)::

        jax.config.update("jax_compilation_cache_dir", str(tmp_path))
        step(state, batch)           # compiles, written to the cache
        jax.clear_caches()
        with assert_cache_hits(step):
            step(state, batch)       # read back from the cache folder

    Only JAX's own lowerings and events are read.
    """

    def __init__(self, function: Callable[..., Any] | str | None = None) -> None:
        self.function = function

    def check(self) -> None:
        found = self.wanted()
        if not found:
            what = f"`{self.function}`" if isinstance(self.function, str) else "no function"
            raise AssertionError(f"{what} of yours compiled in the block: nothing read the "
                                 "persistent compilation cache")  # fmt: skip
        lines = [
            f"{each.function} ({each.source}) compile #{c.number}: "
            f"{c.cache.outcome if c.cache else 'not known'}"
            + (f" ({c.cache.reason})" if c.cache and c.cache.reason else "")
            for each in found
            for c in each.compiles
            if c.cache is None or c.cache.outcome != "hit"
        ]
        if lines:
            raise AssertionError("not answered by the persistent compilation cache:\n  "
                                 + "\n  ".join(lines))  # fmt: skip
