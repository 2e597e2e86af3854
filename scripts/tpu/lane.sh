#!/usr/bin/env bash
# On a TPU machine, from the checkout's root: the TPU lane (tests marked tpu, one process:
# one program holds the chip at a time). `. scripts/tpu/install.sh` first where jxinspect's
# needs are not installed (a machine with no network: scripts/tpu/wheels.sh here).
set -uo pipefail
python3 -m pytest -q -p no:cacheprovider -m tpu tests/tpu "$@"
