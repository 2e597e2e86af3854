"""The chip's own answer to "how much HBM does this program need?": ``python probe.py NAME``
(in the folder of ``programs.py``) compiles ``programs.NAME`` on the chip, places its
inputs, runs it once (the chip loads the code then), and fills the HBM left with buffers
of its own, largest first (8 GiB down to 4 KiB, each copied from the host, so no program
of the probe's own is loaded): a buffer after which the program no longer runs is taken
back. Prints one JSON line: the inputs' bytes, the code the first run loaded, the least
free HBM the run needed beyond them, their sum (``need``), and the device's counters."""

import json
import sys

import jax
import numpy as np
import programs

SMALLEST = 12  # 4 KiB


def in_use(device) -> int:
    return int(device.memory_stats()["bytes_in_use"])


def runs(compiled, args) -> bool:
    """Whether the program runs in the HBM left (else HBM ran out)."""
    try:
        outputs = compiled(*args)
        jax.block_until_ready(outputs)
    except Exception as err:
        if "RESOURCE_EXHAUSTED" not in str(err):
            raise
        return False
    jax.tree.map(lambda a: a.delete(), outputs)
    return True


def main(name: str) -> None:
    device = jax.devices()[0]
    before = in_use(device)
    args = getattr(programs, f"make_{name}")()
    jax.block_until_ready(args)
    placed = in_use(device)
    compiled = jax.jit(getattr(programs, name)).lower(*args).compile()
    loaded = in_use(device)
    assert runs(compiled, args)
    stats_after_run = device.memory_stats()
    base = in_use(device)
    filler = []
    for power in range(33, SMALLEST - 1, -1):
        try:
            chunk = jax.device_put(np.zeros(1 << power, np.uint8), device)
            chunk.block_until_ready()
        except Exception as err:
            if "RESOURCE_EXHAUSTED" not in str(err):
                raise
            continue
        if runs(compiled, args):
            filler.append(chunk)
        else:
            chunk.delete()
    limit = int(stats_after_run["bytes_limit"])
    free_needed = limit - in_use(device)  # the least left in which it still ran
    analysis = compiled.memory_analysis()
    print(json.dumps({
        "name": name, "device_kind": device.device_kind,
        "inputs": placed - before, "loaded_at_compile": loaded - placed,
        "loaded_by_first_run": base - loaded, "free_needed": free_needed,
        "filler": sum(c.nbytes for c in filler), "need": base - before + free_needed,
        "stats_after_first_run": {k: int(v) for k, v in stats_after_run.items()},
        "analysis": {k: int(getattr(analysis, k)) for k in dir(analysis)
                     if k.endswith("_in_bytes")},
    }))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
