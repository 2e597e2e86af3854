#!/usr/bin/env bash
# Here (a machine with the package index): the wheels a TPU machine with no network needs to
# run jxinspect (its JAX, jaxlib, libtpu, numpy and pytest are there already), into
# .whl-tpu/ (ignored by git; the device call carries it). Then on the TPU machine:
# scripts/tpu/install.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qxF /.whl-tpu/ .git/info/exclude 2>/dev/null || echo /.whl-tpu/ >> .git/info/exclude
rm -rf .whl-tpu && mkdir -p .whl-tpu
# jxinspect itself runs from this checkout (install.sh puts src/ on PYTHONPATH)
download() {
    python3 -m pip download -q --only-binary=:all: --python-version 3.11 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 --platform any -d .whl-tpu "$@"
}
# jxinspect's runtime needs (pyproject's dependencies), with theirs as pip resolves them:
# the versions installed beside this checkout's own tests, or pip's newest that pyproject allows
pins=$(python3 -m pip list --format=freeze 2>/dev/null | grep -i -E '^(typer|click|rich|markdown-it-py|mdurl|pygments|shellingham|msgspec|protobuf|pyyaml|typing.extensions)==' || true)
# shellcheck disable=SC2086
download ${pins:-"typer<0.29" click rich markdown-it-py mdurl pygments shellingham msgspec protobuf pyyaml \
    typing_extensions}
ls .whl-tpu
du -sh .whl-tpu
