"""JX308: the program asks to move values to host memory and the compiled program keeps
nothing there: XLA did not apply the offload."""

from __future__ import annotations

from collections.abc import Iterator

from jxinspect.core.facts import Facts
from jxinspect.core.model import Finding, Report
from jxinspect.core.source import source_text
from jxinspect.core.units import human_bytes
from jxinspect.rules.base import Rule


def check(report: Report, facts: Facts) -> Iterator[Finding]:
    compiled = report.compiled
    if compiled is None or not compiled.offloads or compiled.memory.host != 0:
        return  # none asked, some applied, or the backend said nothing of host memory
    asked = sum(o.bytes for o in compiled.offloads)
    placed = [(o, source_text(o.file, o.line, o.library_file, o.library_line))
              for o in compiled.offloads]  # fmt: skip
    values = ", ".join(f"{o.name or o.type}" + (f" ({said})" if said else "") for o, said in placed)
    count = len(compiled.offloads)
    yield RULE.finding(
        report,
        f"{count} value{'s' if count != 1 else ''} asked to move to host memory "
        f"({human_bytes(asked)}: {values}), and the program compiled for "
        f"{report.platform or 'this backend'} keeps 0 B in host memory (XLA memory "
        f"analysis): the offload was not applied, and {'they stay' if count != 1 else 'it stays'} "
        "in device memory",
        path=", ".join(o.name for o in compiled.offloads if o.name) or None,
    )


RULE = Rule(
    code="JX308",
    severity="warning",
    summary="offload to host memory not applied by the compiler",
    explanation="""\
The traced program moves values to host memory (a `jax.checkpoint` policy such as
`save_and_offload_only_these_names(..., offload_dst="pinned_host")`, or a `device_put`
to a host memory kind), but XLA's memory analysis of the compiled program has no byte
in host memory (its host arguments, outputs and temporaries sum to 0): the compiler did
not apply the offload, and the values stay in device memory, where the code meant to
free room. XLA's CPU compiler ignores these requests; a TPU's applies them (compile for
one here with `--topology v5e:2x2`); a GPU's applies them where the release supports it.

Needs the compiled program (`compile: true`). The finding names each value by its
`checkpoint_name` (else its type) and the line that asked.

Fix: check the memory on the platform that runs the program (`--topology` for a TPU);
where the offload matters, make sure the backend supports host memory kinds
(`jax.devices()[0].addressable_memories()` lists `pinned_host`). Silence: `ignore:
[JX308]`.""",
    check=check,
    reads=("compiled",),
)
