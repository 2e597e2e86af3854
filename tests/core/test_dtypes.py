"""The one dtype table (``jxinspect.core.dtypes``) agrees with the running JAX: numpy's names
and bits, the jaxpr's short names, the lowered module's element types, the size of a
typed PRNG key; and reports count sub-byte arrays and keys by those sizes."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jxinspect.core import dtypes

FIXTURE = "tests/fixtures/targets.py"


def _bits(dt: Any) -> int:
    if jnp.issubdtype(dt, jnp.integer):
        return int(jnp.iinfo(dt).bits)
    if jnp.issubdtype(dt, jnp.floating):
        return int(jnp.finfo(dt).bits)
    return int(dt.itemsize * 8)  # bool, complex


def test_the_table_is_what_jax_says() -> None:
    checked = []
    for row in dtypes.TABLE:
        try:
            dt = jnp.dtype(row.name)
        except TypeError:
            continue  # a dtype this release (its ml_dtypes) does not have yet
        assert dt.name == row.name
        # older ml_dtypes report a sub-byte float's storage (8 bits), newer its width
        assert _bits(dt) == row.bits or (row.bits < 8 and _bits(dt) == 8), row
        checked.append(row.name)
        if jax.dtypes.canonicalize_dtype(dt) != dt:
            continue  # 64-bit types without jax_enable_x64: JAX stages them as 32-bit
        x = jax.ShapeDtypeStruct((1,), dt)
        assert f"{row.short}[1]" in str(jax.make_jaxpr(lambda v: v)(x)), row
        try:
            text = jax.jit(lambda v: v).lower(x).as_text()
        except Exception:  # a type this release cannot lower on CPU
            continue
        assert f"tensor<1x{row.mlir}>" in text, row
    assert {"bool", "int4", "int8", "bfloat16", "float32", "complex64",
            "float8_e4m3fn"} <= set(checked)  # fmt: skip


def test_typed_key_sizes_are_their_implementation_words() -> None:
    for impl in ("threefry2x32", "rbg", "unsafe_rbg"):
        key = jax.random.key(0, impl=impl)
        bits = jax.random.key_data(key).size * jax.random.key_data(key).dtype.itemsize * 8
        assert dtypes.element_bytes(str(key.dtype)) * 8 == bits, (impl, str(key.dtype))


def test_unknown_names_pass_through() -> None:
    assert dtypes.short_name("mystery") == "mystery"
    assert dtypes.from_mlir("!stablehlo.token") == "!stablehlo.token"
    assert dtypes.element_bytes("mystery") == 0


def test_sub_byte_arrays_and_keys_have_bytes_in_reports(lower_json: Any) -> None:
    _, report = lower_json(f"{FIXTURE}:keyed", "--args-from", f"{FIXTURE}:keyed_args")
    by_path = {leaf["path"]: leaf for leaf in report["inputs"]}
    assert by_path["key"]["dtype"].startswith("key<")
    assert by_path["key"]["bytes_per_device"] == 8  # two uint32 words
    assert by_path["packed"]["bytes_per_device"] == 8  # int4[16]: 16 half-bytes


def test_a_float0_result_is_named_as_a_jaxpr_names_it(lower_json: Any, lower_text: Any) -> None:
    """The tangent of an integer is ``float0[3]`` of 0 bytes, as the jaxpr writes it, not
    NumPy's ``[('float0', 'V')]``."""
    _, report = lower_json(f"{FIXTURE}:int_grad", "--args", "i32[3]")
    (result,) = report["outputs"]
    assert (result["dtype"], result["bytes_per_device"]) == ("float0", 0), result
    text = lower_text(f"{FIXTURE}:int_grad", "--args", "i32[3]").stdout
    assert "float0[3]" in text and "('float0'" not in text, text
