"""Where the user's code is: the frames of a lowered module and of an error line are the
user's own, known by where modules are, never by a word in a path (issue 47, items 3-4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import error_line, needs_axis_types, run_cli, run_python

SIMPLE = """\
import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2


def broken(x):
    raise ValueError("boom")


JXINSPECT = {"f": {"args": "f32[4]"}, "broken": {"args": "f32[4]"}}
"""

_FILE_LOCATION = re.compile(r'loc\("([^"]+)":\d+')


def _files(module_text: str) -> set[str]:
    return set(_FILE_LOCATION.findall(module_text))


@pytest.mark.parametrize("subprocess", [False, True], ids=["forked", "new-process"])
def test_the_lowered_module_holds_the_users_frames_only(tmp_path: Path, subprocess: bool) -> None:
    (tmp_path / "simple.py").write_text(SIMPLE)
    result = run_cli("lower", "simple.py:f", "--show", "mlir", "--debug-info",
                     cwd=tmp_path, subprocess=subprocess)  # fmt: skip
    assert result.returncode == 0, result.describe()
    ours = _files(result.stdout)
    # the oracle: JAX's own lowering of the same function from a script, whose files are
    # the module's and the script's (the caller of .lower())
    raw = run_python(
        "import jax, jax.numpy as jnp, simple\n"
        "lowered = jax.jit(simple.f).lower(jnp.zeros(4, jnp.float32))\n"
        "try:\n"
        "    print(lowered.as_text(debug_info=True))\n"
        "except TypeError:  # 0.4 has no debug_info=: the module's own printer\n"
        "    print(lowered.compiler_ir('stablehlo').operation.get_asm(enable_debug_info=True))",
        cwd=tmp_path,
    )
    assert raw.returncode == 0, raw.describe()
    module = str(tmp_path / "simple.py")
    assert module in _files(raw.stdout)
    assert ours == {module}, ours


@pytest.mark.parametrize("folder", ["jax", "jxinspect", "lib/python3/importlib"])
def test_a_users_file_in_a_folder_named_like_a_library_keeps_its_line(
    tmp_path: Path, folder: str
) -> None:
    where = tmp_path / folder
    where.mkdir(parents=True)
    (where / "model.py").write_text(SIMPLE)
    result = run_cli("lower", f"{folder}/model.py:broken", cwd=tmp_path)
    assert result.returncode == 3, result.describe()
    assert error_line(result) == (
        f"error: tracing failed: ValueError: boom (at {where / 'model.py'}:9 in broken)"
    )


NNX_MODEL = """\
import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P


class Model(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(512, 64, rngs=rngs)
        self.up = nnx.Linear(64, 256, rngs=rngs)
        self.down = nnx.Linear(256, 64, rngs=rngs)

    def __call__(self, ids):
        h = self.embed(ids)
        h = jax.nn.relu(self.up(h))
        h = self.down(h)
        return self.embed.attend(h)


GRAPHDEF, _ = nnx.split(nnx.eval_shape(lambda: Model(nnx.Rngs(0))))


def loss_fn(model, ids, labels):
    logits = model(ids)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def step(state, ids, labels):
    model = nnx.merge(GRAPHDEF, state)
    return nnx.value_and_grad(loss_fn)(model, ids, labels)


def make():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    _, state = nnx.split(nnx.eval_shape(lambda: Model(nnx.Rngs(0))))
    rep = NamedSharding(mesh, P())
    state = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=rep), state)
    ids = jax.ShapeDtypeStruct((32, 16), jnp.int32, sharding=NamedSharding(mesh, P("data")))
    return state, ids, ids
"""

# JAX's own record: the compiled module's proto (its stack-frame index, 1-based ids, 0 for
# none), decoded here from the wire format, each instruction's innermost frame in the
# user's file and its innermost frame
FRAMES_ORACLE = """\
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax
from google.protobuf.internal.decoder import _DecodeVarint
import model

def fields(buf):
    i, out = 0, []
    while i < len(buf):
        key, i = _DecodeVarint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _DecodeVarint(buf, i)
        elif wire == 2:
            n, i = _DecodeVarint(buf, i)
            value, i = buf[i:i + n], i + n
        else:
            value, i = buf[i:i + (4 if wire == 5 else 8)], i + (4 if wire == 5 else 8)
        out.append((number, value))
    return out

compiled = jax.jit(model.step).lower(*model.make()).compile()
proto = compiled.runtime_executable().hlo_modules()[0].as_serialized_hlo_module_proto()
top = fields(proto)
index = fields(next(v for n, v in top if n == 17))
files = [v.decode() for n, v in index if n == 1]
locations = [dict(fields(v)) for n, v in index if n == 3]
frames = [dict(fields(v)) for n, v in index if n == 4]
mine = os.path.abspath("model.py")
found = {}
for number, computation in top:
    if number != 3:
        continue
    for n, instruction in fields(computation):
        if n != 2:
            continue
        parts = dict(fields(instruction))
        metadata = dict(fields(parts.get(7, b"")))
        frame = metadata.get(15, 0)
        chain = []
        while frame:
            where = frames[frame - 1]
            at = locations[where[1] - 1]
            chain.append((files[at[1] - 1], at[3]))
            frame = where.get(2, 0)
        user = next((c for c in chain if c[0] == mine), None)
        found[parts[1].decode()] = {"user": user, "innermost": chain[0] if chain else None}
print(json.dumps(found))
"""


@needs_axis_types
def test_buffers_and_collectives_name_the_users_line_with_the_librarys(tmp_path: Path) -> None:
    """A Flax NNX model with an optax loss on 8 devices: the largest temporaries at the
    peak and every collective say the user's line of the model file, the Flax or optax
    frame beside it, each as JAX's own module proto holds them."""
    (tmp_path / "model.py").write_text(NNX_MODEL)
    flags = ("--args-from", "model:make", "--devices", "8", "--memory")
    result = run_cli("lower", "model.py:step", *flags, "--show", "collectives", "--format", "json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.describe()
    compiled = json.loads(result.stdout)["compiled"]
    raw = run_python(FRAMES_ORACLE, cwd=tmp_path)
    assert raw.returncode == 0, raw.describe()
    oracle = json.loads(raw.stdout.strip().splitlines()[-1])
    mine = str(tmp_path / "model.py")
    temporaries = [b for b in compiled["peak"]["buffers"] if b["kind"] == "temporary"][:4]
    said = [*temporaries, compiled["peak"]["at"], *compiled["collectives"]]
    assert compiled["collectives"] and len(said) > 5
    libraries = 0
    for item in said:
        name = item["instruction"]
        assert item["file"] == mine, item
        assert [item["file"], item["line"]] == oracle[name]["user"], (item, oracle[name])
        innermost = oracle[name]["innermost"]
        if innermost[0] != mine:
            libraries += 1
            assert "site-packages" in innermost[0]
            assert [item["library_file"], item["library_line"]] == innermost, item
        else:
            assert item["library_file"] is None and item["library_line"] is None
    assert libraries >= 2  # Flax's and optax's lines, beside the user's
    text = run_cli("lower", "model.py:step", *flags, cwd=tmp_path).stdout
    assert re.search(r"model\.py:\d+ \((flax|optax)/[\w/]+\.py:\d+\)", text), text
