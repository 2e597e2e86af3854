"""Write ``before.mlir`` and ``after.mlir``: this pair's ``predict`` lowered by JAX
(``as_text(debug_info=True)``), for ``jxinspect diff-debug before.mlir after.mlir``.

Only the locations that name arguments (``loc("w")``) are kept; source locations become
``loc(unknown)``, so the files hold no paths of this machine and every supported jaxlib
parses them (0.4's cannot read the location ranges newer releases print).
Usage: python sample_programs/diff/result_key_renamed/regenerate_mlir.py
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import jax

HERE = Path(__file__).resolve().parent
_DEFINITION = re.compile(r"#(loc\d+) = (loc\(.*\))$")
_NAME = re.compile(r'loc\("[^"]*"\)')


def module_text(side: str) -> str:
    spec = importlib.util.spec_from_file_location(side, HERE / f"{side}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    w = jax.ShapeDtypeStruct((784, 10), "float32")
    x = jax.ShapeDtypeStruct((32, 784), "float32")
    return jax.jit(module.predict).trace(w, x).lower().as_text(debug_info=True)


def names_only(text: str) -> str:
    names: dict[str, str] = {}
    kept = []
    for line in text.splitlines():
        found = _DEFINITION.match(line)
        if found is None:
            kept.append(line)
        elif _NAME.fullmatch(found.group(2)):
            names[found.group(1)] = found.group(2)
    return (
        re.sub(
            r"loc\(#(loc\d+)\)", lambda m: names.get(m.group(1), "loc(unknown)"), "\n".join(kept)
        )
        + "\n"
    )


if __name__ == "__main__":
    for side in ("before", "after"):
        (HERE / f"{side}.mlir").write_text(names_only(module_text(side)), encoding="utf-8")
