"""Compiled programs: the shardings XLA chose and the optimized HLO as StableHLO.

* **Optimized HLO → StableHLO**: ``hlo_to_stablehlo`` (0.6 on); before,
  ``xla_computation_to_mlir_module``, which can emit MHLO for async collectives in 0.4.35
  but not in 0.5.3 (:func:`reads_async_collectives`). HLO text:
  ``_hlo.hlo_module_from_text`` (0.10.2 on; not in 0.8.3 to 0.10.1), ``xla_extension``/
  ``xla_client._xla`` before.
* **Cost analysis**: ``Compiled.cost_analysis()`` is a list of one dict per program up
  to 0.4.38, a dict from 0.5.0 on (jaxlib's change; the changelog dates it 0.4.38)
  (:func:`cost_analysis`); ``None`` or an error on a backend without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

from jxinspect.tracer.seam import mlir
from jxinspect.tracer.seam.objects import Compiled, HloModule, MlirModule, Sharding


def compiled_shardings(compiled: Compiled) -> tuple[list[Sharding | None], list[Sharding | None]]:
    """Flat (input, output) shardings XLA chose, ``None`` where it gave none; none at all
    from the pmap of JAX 0.4.x to 0.7, whose compiled executable keeps no shardings (it
    raises ``NotImplementedError``, or from 0.5 an ``AttributeError``)."""
    import jax

    def flat(attribute: str) -> list[Sharding | None]:
        try:
            tree = getattr(compiled, attribute)
        except (NotImplementedError, AttributeError):  # 0.4.x's pmap; 0.5 to 0.7's
            return []
        return list(jax.tree_util.tree_leaves(tree, is_leaf=lambda x: x is None))

    return flat("input_shardings"), flat("output_shardings")


def cost_analysis(compiled: Compiled) -> dict[str, float] | None:
    """XLA's cost analysis of the compiled program (``flops``, ``bytes accessed``, …) as
    one dict, whatever this release returns (a list of one dict up to 0.4.38, a dict from
    0.5.0 on); ``None`` where the backend gives none."""
    try:
        costs = compiled.cost_analysis()
    except Exception:  # a backend without the analysis (NotImplementedError, XlaRuntimeError)
        return None
    if isinstance(costs, (list, tuple)):  # up to 0.4.38: one dict per program
        costs = costs[0] if costs else None
    if not isinstance(costs, dict):
        return None
    return {str(key): float(value) for key, value in costs.items()}


def optimized_module(compiled: Compiled) -> MlirModule:
    """The compiled program's optimized HLO as a StableHLO module."""
    hlo = compiled.runtime_executable().hlo_modules()[0]
    return _hlo_to_module(hlo)


def module_from_hlo_text(text: str) -> MlirModule:
    """An HLO text module (e.g. an XLA dump) as a StableHLO module."""
    from jax._src.lib import xla_client as xc

    try:
        from jaxlib import _hlo

        reader = _hlo.hlo_module_from_text
    except ImportError:
        reader = xc._xla.hlo_module_from_text
    return _hlo_to_module(reader(text))


def _hlo_to_module(hlo: HloModule) -> MlirModule:
    from jax._src import lib

    proto = hlo.as_serialized_hlo_module_proto()
    converter = _hlo_to_stablehlo()
    if converter is not None:
        return mlir.parse_module(converter(proto))
    # 0.4.35: the XlaComputation route; StableHLO where it converts, else MHLO (async
    # collectives have no StableHLO form there), which names its ops alike (mhlo.all_gather)
    computation = lib.xla_client.XlaComputation(proto)
    convert = lib.xla_client._xla.mlir.xla_computation_to_mlir_module
    try:
        with _native_stderr_dropped():  # the failed legalization's MLIR diagnostic
            converted = convert(computation)
        return mlir.parse_module(converted)
    except Exception as err:  # XlaRuntimeError: MHLO => StableHLO failed
        if not reads_async_collectives():
            raise ValueError(
                "this jaxlib converts optimized HLO to StableHLO only, and the program's "
                "asynchronous collectives have none (JAX 0.6 reads them)"
            ) from err
        return mlir.parse_module(convert(computation, emit_stable_hlo=False))


@contextlib.contextmanager
def _native_stderr_dropped() -> Iterator[None]:
    """What native code writes to file descriptor 2 meanwhile, dropped: 0.4.35's converter
    prints ``loc(...): error: failed to legalize operation 'mhlo.fusion'`` there before it
    raises, for a program it then reads as MHLO (the error is the exception it raises)."""
    sys.stderr.flush()
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        saved = os.dup(2)
        try:
            os.dup2(sink, 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    finally:
        os.close(sink)


def reads_async_collectives() -> bool:
    """Whether an optimized program with asynchronous collectives (``all-gather-start``)
    can be read: through ``hlo_to_stablehlo``, or as MHLO (0.4.35); not in 0.5.3, whose
    converter emits StableHLO only."""
    import inspect

    from jax._src import lib

    if _hlo_to_stablehlo() is not None:
        return True
    convert = lib.xla_client._xla.mlir.xla_computation_to_mlir_module
    try:
        return "emit_stable_hlo" in inspect.signature(convert).parameters
    except (TypeError, ValueError):  # a builtin without a signature: its docstring says
        return "emit_stable_hlo" in (convert.__doc__ or "")


def _hlo_to_stablehlo() -> Callable[[bytes], str] | None:
    """jaxlib's ``hlo_to_stablehlo`` (``_jax.mlir`` or ``xla_client._xla.mlir``), where
    this release has one."""
    from jax._src import lib

    for holder in (getattr(lib, "_jax", None), getattr(lib.xla_client, "_xla", None)):
        converter = getattr(getattr(holder, "mlir", None), "hlo_to_stablehlo", None)
        if converter is not None:
            return converter  # type: ignore[no-any-return]
    return None
