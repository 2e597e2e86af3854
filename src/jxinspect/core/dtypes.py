"""The one dtype table: every array element type jxinspect names, reads or counts.

Each row says how JAX names a dtype (numpy's name, ``float32``; a jaxpr's short name,
``f32``), how a StableHLO module spells it (``f32``, ``i4``, ``ui8``, ``f8E4M3FN``,
``complex<f32>``) and how many bits an element takes. No JAX import: the spec parser,
the data model and the renderers read it before JAX loads. ``tests/core/test_dtypes.py``
holds it to what the running JAX says (``jnp.dtype``'s bits, the jaxpr's short names,
the element types of a lowered module), so a release that adds a dtype shows up there.

Typed PRNG keys (``key<fry>``) are arrays of their implementation's words: a threefry
key (``key<fry>``) is two ``uint32`` (8 bytes), an RBG key (``key<rbg>``, ``key<urbg>``)
four (16 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    """One element type, as JAX and StableHLO name it."""

    name: str
    """numpy's name, as JAX reports it: ``float32``, ``int4``, ``float8_e4m3fn``."""
    short: str
    """The jaxpr's (and the spec language's) name: ``f32``, ``i4``, ``f8_e4m3fn``."""
    mlir: str
    """The StableHLO element type: ``f32``, ``i4``, ``ui8``, ``f8E4M3FN``, ``i1``."""
    bits: int


TABLE: tuple[DType, ...] = (
    DType("bool", "bool", "i1", 8),
    DType("int2", "i2", "i2", 2),
    DType("int4", "i4", "i4", 4),
    DType("int8", "i8", "i8", 8),
    DType("int16", "i16", "i16", 16),
    DType("int32", "i32", "i32", 32),
    DType("int64", "i64", "i64", 64),
    DType("uint2", "u2", "ui2", 2),
    DType("uint4", "u4", "ui4", 4),
    DType("uint8", "u8", "ui8", 8),
    DType("uint16", "u16", "ui16", 16),
    DType("uint32", "u32", "ui32", 32),
    DType("uint64", "u64", "ui64", 64),
    DType("float4_e2m1fn", "f4_e2m1fn", "f4E2M1FN", 4),
    DType("float8_e3m4", "f8_e3m4", "f8E3M4", 8),
    DType("float8_e4m3", "f8_e4m3", "f8E4M3", 8),
    DType("float8_e4m3fn", "f8_e4m3fn", "f8E4M3FN", 8),
    DType("float8_e4m3fnuz", "f8_e4m3fnuz", "f8E4M3FNUZ", 8),
    DType("float8_e4m3b11fnuz", "f8_e4m3b11fnuz", "f8E4M3B11FNUZ", 8),
    DType("float8_e5m2", "f8_e5m2", "f8E5M2", 8),
    DType("float8_e5m2fnuz", "f8_e5m2fnuz", "f8E5M2FNUZ", 8),
    DType("float8_e8m0fnu", "f8_e8m0fnu", "f8E8M0FNU", 8),
    DType("bfloat16", "bf16", "bf16", 16),
    DType("float16", "f16", "f16", 16),
    DType("float32", "f32", "f32", 32),
    DType("float64", "f64", "f64", 64),
    DType("complex64", "c64", "complex<f32>", 64),
    DType("complex128", "c128", "complex<f64>", 128),
)

KEY_BITS: dict[str, int] = {"fry": 64, "rbg": 128, "urbg": 128}
"""Bits of one typed PRNG key, by the implementation name ``key<...>`` prints."""

FLOAT_SHORTS: tuple[str, ...] = ("f32", "bf16", "f16", "f64")
"""The dtypes an abstract float annotation (jaxtyping's ``Float``) may stand for: ``f32``
unless the ``dtype`` option says otherwise."""

BY_NAME = {d.name: d for d in TABLE}
BY_SHORT = {d.short: d for d in TABLE}
BY_MLIR = {d.mlir: d for d in TABLE}
BY_HLO = {
    ("pred" if d.name == "bool" else
     f"s{d.bits}" if d.name.startswith("int") else
     f"u{d.bits}" if d.name.startswith("uint") else
     f"c{d.bits}" if d.name.startswith("complex") else d.mlir.lower()): d
    for d in TABLE
}  # fmt: skip
"""The element types as HLO text writes them: ``pred``, ``s32``, ``u8``, ``f8e4m3fn``."""


def short_name(name: str) -> str:
    """``float32`` → ``f32``; names the table lacks are returned unchanged."""
    found = BY_NAME.get(name)
    return found.short if found else name


def from_mlir(element_type: str) -> str:
    """A StableHLO element type (``f8E4M3FN``) → its numpy name; unknown ones unchanged."""
    found = BY_MLIR.get(element_type)
    return found.name if found else element_type


def from_hlo(element_type: str) -> str:
    """An HLO text element type (``s32``, ``f8e4m3fn``) → its numpy name; unknown ones
    unchanged."""
    found = BY_HLO.get(element_type)
    return found.name if found else element_type


def element_bytes(name: str) -> float:
    """Bytes per element (``0.5`` for ``int4``); ``0`` for a name the table lacks."""
    if name.startswith("key<") and name.endswith(">"):
        return KEY_BITS.get(name[4:-1], 0) / 8
    found = BY_NAME.get(name)
    return found.bits / 8 if found else 0
