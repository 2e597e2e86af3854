"""Raw JAX's facts of ``programs.NAME`` on this machine's chip: ``python raw_facts.py NAME
OUT`` writes OUT/NAME.facts.json (the compiled HLO, ``memory_analysis``, ``cost_analysis``)
and, with ``--trace``, three runs under JAX's profiler in OUT/NAME-trace (XProf's layout)."""

import json
import sys
import time
from pathlib import Path

import jax
import programs


def main(name: str, out: Path, trace: bool) -> None:
    args = getattr(programs, f"make_{name}")()
    started = time.perf_counter()
    lowered = jax.jit(getattr(programs, name)).lower(*args)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    analysis = compiled.memory_analysis()
    facts = {
        "device_kind": jax.devices()[0].device_kind, "jax": jax.__version__,
        "lower_s": lowered_at - started, "compile_s": compiled_at - lowered_at,
        "cost": {k: float(v) for k, v in (cost or {}).items()},
        "analysis": {k: int(getattr(analysis, k)) for k in dir(analysis)
                     if k.endswith("_in_bytes")},
        "text": compiled.as_text(),
    }  # fmt: skip
    if trace:
        for _ in range(2):
            jax.block_until_ready(compiled(*args))
        times = []
        with jax.profiler.trace(str(out / f"{name}-trace")):
            for _ in range(3):
                start = time.perf_counter()
                jax.block_until_ready(compiled(*args))
                times.append(time.perf_counter() - start)
        facts["timed_steps_s"] = times
    (out / f"{name}.facts.json").write_text(json.dumps(facts), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), "--trace" in sys.argv)
