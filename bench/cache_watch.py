"""Cost of what `jxinspect record` adds to each compile to say what JAX's persistent cache
did and why it missed: its listener of JAX's cache events and the hook that reads each
compile's options (JAX's own digest of them, and the options by name). A script compiles
N distinct small functions over a fresh persistent-cache folder (each compile asks the
cache, misses and writes), plainly and with those two installed as `record` installs
them; prints the medians and their ratio (aim <= 1.02: the issue's budget for them).
Usage: python bench/cache_watch.py [--runs N] [--count N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import compare

SCRIPT = """
import sys, tempfile
import jax, jax.numpy as jnp

jax.config.update("jax_compilation_cache_dir", tempfile.mkdtemp())
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
if sys.argv[2] == "watched":  # as jxinspect.record.recorder installs them
    from jxinspect.record.recompiles import CompileLog
    from jxinspect.tracer import seam

    log = CompileLog()
    log.cache_settings = seam.cache_settings
    seam.install_cache_listener(log.on_cache_event)
    seam.install_compile_options_hook(log.compile_starts, log.compile_ended)
x = jnp.ones((16, 16))
for i in range(int(sys.argv[1])):
    step = jax.jit(lambda a, i=i: jnp.tanh(a @ a.T + i) * (i + 1))
    step(x).block_until_ready()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--count", type=int, default=200, help="functions compiled")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "compiles.py"
        script.write_text(SCRIPT, encoding="utf-8")
        plain = [sys.executable, str(script), str(options.count), "plain"]
        compare(
            plain,
            [*plain[:-1], "watched"],
            labels=(
                f"{options.count} compiles over a persistent cache:",
                "the same with record's cache listener and options hook:",
            ),
            aim=1.02,
            runs=options.runs,
            cwd=Path(tmp),
        )


if __name__ == "__main__":
    main()
