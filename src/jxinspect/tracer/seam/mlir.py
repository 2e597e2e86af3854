"""MLIR: parsing modules with JAX's dialects, and the arguments of a function's entry block.

* **Argument names in ``@main``**: block-argument locations everywhere; the bindings
  expose ``BlockArgument.location`` in 0.7.2 and 0.10.2 (not in 0.4.35 nor 0.5.3), and
  without it they are read from the printed header of a body-less copy of ``@main``.
* **Block arguments**: ``BlockArgument.isinstance`` casts a plain ``Value`` up to 0.8;
  jaxlib 0.9 and later have none (and hand out ``BlockArgument``s already).
"""

from __future__ import annotations

import functools
import importlib
import re
from types import ModuleType
from typing import Any

from jxinspect.tracer.seam import locations
from jxinspect.tracer.seam.objects import MlirBlock, MlirModule, MlirOperation, MlirValue


def parse_module(text: str | bytes) -> MlirModule:
    """Parse StableHLO text or bytecode with every dialect JAX registers."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir

    context = jax_mlir.make_ir_context()
    with context:
        return ir.Module.parse(text)


@functools.cache
def sdy() -> ModuleType:
    """jaxlib's Shardy dialect bindings (every supported release has them)."""
    return importlib.import_module("jaxlib.mlir.dialects.sdy")


@functools.cache
def stablehlo() -> ModuleType:
    """jaxlib's StableHLO dialect bindings."""
    return importlib.import_module("jaxlib.mlir.dialects.stablehlo")


@functools.cache
def ir() -> ModuleType:
    """jaxlib's MLIR core bindings (types and attributes whose API every release shares)."""
    return importlib.import_module("jaxlib.mlir.ir")


_LOC_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)$", re.M)
_BLOCK_ARG = re.compile(r"%arg(\d+): .*? loc\((#loc\d*|\"(?:[^\"\\]|\\.)*\"[^)]*|[^)]*)\)")
_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"')


def _printed_name(loc_text: str) -> str | None:
    """The name of a printed location (``"params['w']"``), ``None`` for other kinds."""
    match = _QUOTED.match(loc_text)
    if match is None:
        return None
    rest = loc_text[match.end() :]
    if rest.startswith(":"):  # "file.py":3:4, a file location
        return None
    return locations.unescape(match.group(1))


def block_argument_names(func: MlirOperation) -> list[str | None]:
    """Each entry-block argument's name (its ``NameLoc``), ``None`` where it has none.
    Which reader serves is a fact of the bindings (whether ``BlockArgument`` has a
    ``location``), never of the function: a function with no arguments has no names."""
    from jaxlib.mlir import ir as bindings

    arguments = list(func.regions[0].blocks[0].arguments)
    if not arguments:
        return []
    if hasattr(bindings.BlockArgument, "location"):
        return [locations.location_name(a.location) for a in arguments]
    return printed_argument_names(func)


def printed_argument_names(func: MlirOperation) -> list[str | None]:
    """:func:`block_argument_names` for bindings without ``BlockArgument.location``
    (0.4.35, 0.5.3): the names from the function's printed signature. The function is
    printed as it is (its constants elided), never copied or changed: a reader must not
    touch the module it reads."""
    arguments = list(func.regions[0].blocks[0].arguments)
    text = func.operation.get_asm(enable_debug_info=True, large_elements_limit=1)
    aliases = {m.group(1): m.group(2) for m in _LOC_ALIAS.finditer(text)}
    names: list[str | None] = [None] * len(arguments)
    for match in _BLOCK_ARG.finditer(text[: text.find("\n")]):
        index, loc = int(match.group(1)), match.group(2)
        loc = aliases.get(loc, loc)
        if index < len(names):
            names[index] = _printed_name(loc)
    return names


def manual_computation_shardings(op: MlirOperation) -> tuple[list[Any], list[Any]]:
    """The ``sdy.manual_computation`` (a shard_map)'s operand and result shardings."""
    per_value = sdy().TensorShardingPerValueAttr
    return (
        list(per_value(op.attributes["in_shardings"]).shardings),
        list(per_value(op.attributes["out_shardings"]).shardings),
    )


def block_argument_number(value: MlirValue, block: MlirBlock) -> int | None:
    """The argument number when ``value`` is an argument of ``block``, else ``None``.

    Up to jaxlib 0.8 the bindings hand operands out as plain ``Value``s, to be tested
    with ``BlockArgument.isinstance`` and cast; from 0.9 on they come downcast (a block
    argument is a ``BlockArgument``) and that test is gone."""
    from jaxlib.mlir import ir as bindings

    if not isinstance(value, bindings.BlockArgument):
        test = getattr(bindings.BlockArgument, "isinstance", None)
        if test is None or not test(value):
            return None
        value = bindings.BlockArgument(value)
    arguments = list(block.arguments)
    number = int(value.arg_number)
    if number < len(arguments) and arguments[number] == value:
        return number
    return None


def producer(value: MlirValue) -> tuple[MlirOperation, int] | None:
    """The operation whose result ``value`` is and the result's number; ``None`` for a
    block argument. Up to jaxlib 0.8 operands come as plain ``Value``s, cast with
    ``OpResult.isinstance``; from 0.9 on they come downcast."""
    from jaxlib.mlir import ir as bindings

    if not isinstance(value, bindings.OpResult):
        test = getattr(bindings.OpResult, "isinstance", None)
        if test is None or not test(value):
            return None
        value = bindings.OpResult(value)
    return value.owner, int(value.result_number)
