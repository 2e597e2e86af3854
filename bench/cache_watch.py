"""Cost of what `jxinspect record` adds to each compile to say what JAX's persistent cache
did and why it missed: its listener of JAX's cache events and the hook that reads each
compile's options (JAX's own digest of them, and the options by name). One process
compiles distinct small functions over a fresh persistent-cache folder (each compile asks
the cache, misses and writes), in blocks of N: plainly, then with those two installed as
`record` installs them, then removed again, alternately. Prints the median CPU seconds of
a block each way and their ratio (a few percent of noise either way on this machine), and
the seconds spent in those callbacks themselves per compile, timed around each call,
against a plain compile's: the ratio the aim is held to (<= 1.02, the issue's budget).
Usage: python bench/cache_watch.py [--runs N] [--count N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="blocks each way")
    parser.add_argument("--count", type=int, default=50, help="compiles per block")
    options = parser.parse_args()
    import jax
    import jax.numpy as jnp

    from jxinspect.record.recompiles import CompileLog
    from jxinspect.tracer import seam
    from jxinspect.tracer.seam import hooks

    spent = [0.0]

    def timed(function: Callable[..., T]) -> Callable[..., T]:
        def call(*args: Any) -> T:
            start = time.perf_counter()
            try:
                return function(*args)
            finally:
                spent[0] += time.perf_counter() - start

        return call

    hooks._options_seen = timed(hooks._options_seen)

    jax.config.update("jax_compilation_cache_dir", tempfile.mkdtemp())
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    x = jnp.ones((16, 16))
    made = iter(range(10**9))

    def block() -> float:
        start = time.process_time()
        for _ in range(options.count):
            i = next(made)
            jax.jit(lambda a, i=i: jnp.tanh(a @ a.T + i) * (i + 1))(x).block_until_ready()
        return time.process_time() - start

    block()  # warm-up: JAX's first compiles
    plain: list[float] = []
    watched: list[float] = []
    for _ in range(options.runs):
        plain.append(block())
        log = CompileLog()
        log.cache_settings = seam.cache_settings
        removes = [
            seam.install_cache_listener(timed(log.on_cache_event)),
            seam.install_compile_options_hook(timed(log.compile_starts), timed(log.compile_ended)),
        ]
        watched.append(block())
        for remove in removes:
            remove()
    mine, theirs = statistics.median(watched), statistics.median(plain)
    print(f"{options.count} compiles over a persistent cache, plainly: "
          f"median {theirs:.3f} CPU s over {options.runs} blocks")  # fmt: skip
    print(f"the same with record's cache listener and options hook: median {mine:.3f} CPU s")
    print(f"ratio of the blocks: {mine / theirs:.3f}")
    each = spent[0] / (options.runs * options.count)
    compile_s = theirs / options.count
    print(f"in the listener and the options read: {each * 1e6:.0f} µs per compile, of a "
          f"plain compile's {compile_s * 1e3:.1f} ms")  # fmt: skip
    print(f"ratio: {1 + each / compile_s:.4f} (aim <= 1.02)")


if __name__ == "__main__":
    main()
