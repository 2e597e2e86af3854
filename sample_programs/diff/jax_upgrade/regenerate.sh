#!/usr/bin/env bash
# Regenerate the sample reports of a JAX upgrade: the same targets lowered under an old
# and a new JAX, each from its own virtual environment with jxinspect installed.
#   bash sample_programs/diff/jax_upgrade/regenerate.sh OLD_VENV NEW_VENV
# e.g. OLD_VENV holds jax==0.4.35 and NEW_VENV the newest; then compare with
#   jxinspect diff-debug sample_programs/diff/jax_upgrade/predict-old.json sample_programs/diff/jax_upgrade/predict-new.json
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
cd "$repo"
for side in old new; do
    venv=$([ "$side" = old ] && echo "$1" || echo "$2")
    for target in mlp.py:predict data_parallel.py:step sharded.py:update; do
        name="${target#*:}"
        "$venv/bin/jxinspect" lower "sample_programs/$target" --format json \
            -o "$here/$name-$side.json" --fail-on never
    done
    "$venv/bin/python" -c "import jax; print('$side:', jax.__version__)"
done
