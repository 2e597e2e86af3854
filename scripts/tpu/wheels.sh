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
# jxinspect's runtime needs (pyproject's dependencies) and theirs: each at the version installed
# beside this checkout's python3 where it is installed, else pip's newest that pyproject allows
needs=(typer click rich markdown-it-py mdurl pygments shellingham msgspec protobuf pyyaml
       typing_extensions)
wanted=()
for name in "${needs[@]}"; do
    if version=$(python3 -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' \
            "$name" 2>/dev/null); then
        wanted+=("$name==$version")
    else
        wanted+=("$name$([ "$name" = typer ] && echo '<0.29')")  # pyproject's bound
    fi
done
download "${wanted[@]}"
ls .whl-tpu
du -sh .whl-tpu
