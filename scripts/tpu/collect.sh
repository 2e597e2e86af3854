#!/usr/bin/env bash
# On the TPU machine, from the checkout's root, after `. scripts/tpu/install.sh`: what the
# chip says of tests/tpu/programs.py (raw JAX's facts and profiler traces, the HBM probe)
# beside what jxinspect says there, into $OUT/chip.tar.gz with the log; then the tpu lane.
set -uo pipefail
out=${OUT:-/tmp/out}/chip
mkdir -p "$out"
python3 -c 'import platform, jax; print(platform.libc_ver(), jax.__version__, jax.devices(), jax.devices()[0].memory_stats())'
python3 -m pip list 2>/dev/null | grep -i -E "^(jax|jaxlib|libtpu|numpy|pytest) "
phase=${1:-all}  # programs: facts, probe, lower, profile; timing: lower against raw JAX; all: both
budget=${BUDGET_S:-520}
step() {  # step NAME COMMAND...: run, timed, its output in $out/NAME.txt (skipped past the budget)
    local name=$1; shift
    if [ "$SECONDS" -gt "$budget" ]; then echo "$name: skipped (past ${budget} s)"; return; fi
    local start
    start=$(date +%s%N)
    ( cd tests/tpu && timeout 300 "$@" ) > "$out/$name.txt" 2> "$out/$name.err"
    local status=$?
    echo "$name: exit $status in $(( ($(date +%s%N) - start) / 1000000 )) ms"
}
programs=(two_matmuls block train_step)
[ "$phase" != timing ] && for p in "${programs[@]}"; do
    step "raw-$p" python3 raw_facts.py "$p" "$out" --trace
    step "probe-$p" timeout 150 python3 probe.py "$p"
    step "lower-$p" python3 -m jxinspect lower "programs.py:$p" --args-from "programs:make_$p" --compile --memory --format json
    [ "$p" = train_step ] && step "lower-text-$p" python3 -m jxinspect lower "programs.py:$p" --args-from "programs:make_$p" --compile --memory
    step "topology-$p" python3 -m jxinspect lower "programs.py:$p" --args-from "programs:make_$p" --topology v5e:1x1 --memory --format json
    step "profile-$p" python3 -m jxinspect profile "programs.py:$p" --args-from "programs:make_$p" --steps 5 --format json -o "$out/profile-$p-trace"
    [ "$p" = two_matmuls ] && step "profile-text-$p" python3 -m jxinspect profile "programs.py:$p" --args-from "programs:make_$p" --steps 5
done
# lower against raw JAX's trace and lower of the same step, whole processes, RUNS pairs, the
# order swapped each pair; the medians and their ratio at the end
[ "$phase" != programs ] && {
cat > tests/tpu/raw_lower.py <<'PY'
import jax, programs
print(jax.jit(programs.train_step).lower(*programs.make_train_step()).as_text()[:80])
PY
raw=(python3 raw_lower.py)
tool=(python3 -m jxinspect lower programs.py:train_step --args-from programs:make_train_step)
for i in $(seq 1 "${RUNS:-3}"); do
    if [ $((i % 2)) = 1 ]; then
        step "time-raw-$i" "${raw[@]}"; step "time-lower-$i" "${tool[@]}"
    else
        step "time-lower-$i" "${tool[@]}"; step "time-raw-$i" "${raw[@]}"
    fi
done | tee "$out/timing.txt"
python3 - "$out/timing.txt" <<'PY'
import re, statistics, sys
runs = re.findall(r"time-(raw|lower)-\d+: exit 0 in (\d+) ms", open(sys.argv[1]).read())
raw = statistics.median(int(ms) for kind, ms in runs if kind == "raw")
tool = statistics.median(int(ms) for kind, ms in runs if kind == "lower")
print(f"median: raw JAX {raw / 1000:.2f} s, jxinspect lower {tool / 1000:.2f} s: {tool / raw:.3f}x")
PY
[ -n "${PROFILE:-}" ] && step importtime python3 -X importtime "${tool[@]:1}"
[ -n "${PROFILE:-}" ] && step cprofile python3 -m cProfile -o "$out/lower.prof" "${tool[@]:1}"
rm -f tests/tpu/raw_lower.py
}
tar -czf "${OUT:-/tmp/out}/chip-$phase.tar.gz" -C "$(dirname "$out")" chip
ls -la "${OUT:-/tmp/out}"
