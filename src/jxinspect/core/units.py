"""Sizes and array types as people read them: for renderers, rules and diffs alike."""

from __future__ import annotations

from jxinspect.core.dtypes import short_name

NOT_RECORDED = "not recorded"


def recorded(value: str | None) -> str:
    """A fact as shown to a person: ``not recorded`` when the source did not say."""
    return NOT_RECORDED if value is None else value


def human_bytes(count: int | None) -> str:
    """``1536`` → ``1.5 KiB``; ``None`` (a symbolic size) → ``?``."""
    if count is None:
        return "? B"
    return _scaled(count, 1024, ("B", "KiB", "MiB", "GiB", "TiB"))


def human_flops(count: float | None) -> str:
    """``260.0`` → ``260 FLOP``; ``4.2e9`` → ``4.2 GFLOP``; ``None`` → ``? FLOP``."""
    if count is None:
        return "? FLOP"
    return _scaled(count, 1000, ("FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"))


def human_seconds(value: float) -> str:
    """``1.23 ms``, ``45.6 µs``, ``2.01 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def _scaled(count: float, base: int, units: tuple[str, ...]) -> str:
    """``count`` in the largest of ``units`` (each ``base`` times the one before) it
    reaches: whole in the first unit, one decimal in the others."""
    size = float(count)
    for unit in units[:-1]:
        if size < base:
            return f"{size:.0f} {unit}" if unit == units[0] else f"{size:.1f} {unit}"
        size /= base
    return f"{size:.1f} {units[-1]}"


def type_text(shape: tuple[int, ...], dtype: str) -> str:
    """``f32[8,128]``, as a jaxpr prints it."""
    return f"{short_name(dtype)}[{','.join(str(d) for d in shape)}]"


def source_parts(source: str | None) -> tuple[str | None, str | None, int | None]:
    """``(name, file, line)`` of JAX's ``step at /path/train.py:12``; ``None`` for each
    part it does not say."""
    name, sep, where = (source or "").rpartition(" at ")
    if not sep:
        return None, None, None
    file, _, line = where.rpartition(":")
    return name or None, file or None, int(line) if line.isdigit() else None


def plural(count: int, word: str) -> str:
    """``1 compile``, ``3 compiles``."""
    return f"{count} {word}{'s' if count != 1 else ''}"
