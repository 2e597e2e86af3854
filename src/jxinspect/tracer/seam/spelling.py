"""Names and result paths in one spelling, whichever release wrote them.

* **Result paths**: ``result['y']`` from 0.5.3 on, ``['y']`` (and ``""`` for a lone
  result) before (0.4.x, 0.5.0); :func:`normalize_result_path` maps both to the newer spelling.
* **Keys of nodes without key paths**: ``p[<flat index 0>]`` in 0.4.35, ``p[0]`` later;
  :func:`newer_spelling` reads both alike.
* **pmap's unnamed axis**: 0.8 to 0.10.1 name the mesh axis of a pmap without
  ``axis_name`` by an object's repr, ``<axis 0x7f3a…>`` (JAX's ``_TempAxisName``: the
  function's id, another each run); :func:`mesh_axis_name` reads it as ``(unnamed)``,
  as the older pmap's axis, so two runs of one program read alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from jxinspect.tracer.seam import jaxprs


@functools.cache
def result_paths_prefixed() -> bool:
    """Whether this release writes ``result['a']`` (0.5.3 on) rather than ``['a']`` (0.4.x, 0.5.0),
    found by tracing a one-line function (about a millisecond)."""
    import jax

    info = jaxprs.debug_info(jax.make_jaxpr(lambda x: {"a": x})(1.0).jaxpr)
    paths = info.result_paths if info is not None else None
    return not paths or paths[0].startswith("result")


PREFIXED_SINCE = "0.5.3"
"""The release table's first release with the ``result`` prefix (0.4.x and 0.5.0 write
``['a']``; the releases between are read as 0.5.0)."""


def result_paths_prefixed_in_release() -> bool:
    """:func:`result_paths_prefixed` from the release table, tracing nothing: for a
    recorded run, where nothing of jxinspect's may trace in the user's process."""
    from jxinspect.tracer.seam.release import running_since

    return running_since(PREFIXED_SINCE)


UNNAMED_AXIS = "(unnamed)"
"""What the report calls a pmap axis that the program names by no fixed name."""
_TEMPORARY_AXIS = re.compile(r"<axis 0x[0-9a-f]+>")


def mesh_axis_name(name: str) -> str:
    """A mesh axis name as the report spells it (:data:`UNNAMED_AXIS` for the
    ``<axis 0x…>`` of 0.8 to 0.10.1's pmap)."""
    return UNNAMED_AXIS if _TEMPORARY_AXIS.fullmatch(name) else name


_FLAT_INDEX = re.compile(r"\[<flat index (\d+)>\]")


def newer_spelling(name: str) -> str:
    """A name or path in the newer releases' spelling: 0.4.x printed the key of a pytree
    node without key paths as ``[<flat index 0>]`` where newer releases print ``[0]``."""
    return _FLAT_INDEX.sub(r"[\1]", name)


def normalize_result_path(carried: str, prefixed: bool) -> str:
    """A result path in the newer spelling: up to 0.5 JAX wrote ``['y']`` (``""`` for a
    lone result) where newer releases write ``result['y']`` (``result``); ``prefixed``
    says whether the release that wrote ``carried`` uses the newer spelling. Flat-index
    keys are respelled too (:func:`newer_spelling`)."""
    carried = newer_spelling(carried)
    if prefixed or carried.startswith("result"):
        return carried
    return "result" + carried


def prefixes_results(paths: Sequence[str | None]) -> bool | None:
    """Whether result paths follow the newer spelling; ``None`` when they do not say."""
    named = [p for p in paths if p]
    if any(p.startswith("result") for p in named):
        return True
    if any(p.startswith(("[", ".")) for p in named):
        return False
    return None
