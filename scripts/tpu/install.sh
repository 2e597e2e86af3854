# On the TPU machine, from the checkout's root (sourced: `. scripts/tpu/install.sh`):
# installs the wheels that scripts/tpu/wheels.sh made under /tmp/site, after the machine's
# own JAX on PYTHONPATH, and this checkout's src/ first (commands there run as an ordinary
# user with no network). Then `python -m jxinspect ...` runs this checkout.
PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-index --no-deps \
    --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-tpu/*.whl || return 1
export PYTHONPATH="$PWD/src:${PYTHONPATH:+$PYTHONPATH:}/tmp/site" PATH="/tmp/site/bin:$PATH"
export PYTHONUNBUFFERED=1
