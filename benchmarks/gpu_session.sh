#!/usr/bin/env bash
# The GPU figures of benchmarks/README.md, rerunnable on one GPU box (e.g. one H200) in three
# steps that each fit a 10-minute slot: `bash benchmarks/gpu_session.sh tests|default|modes OUT`.
#   tests    the CUDA tests, the CUDA corpus entries, and the --jobs sweep (8, 16, 24)
#   default  an 8-minute default-mode campaign with 16 workers (budget kept? buckets?)
#   modes    reduce-overhead and max-autotune campaigns, 3.5 minutes each
# Each step tars its campaign folders into OUT as soon as they are written, so a step cut short
# still leaves what it finished.
set -uo pipefail
step=${1:?usage: gpu_session.sh tests|default|modes OUT}
out=${2:?usage: gpu_session.sh tests|default|modes OUT}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
$py -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 \
    || { echo "gpu_session: pip install -e . failed"; exit 3; }
$py -c 'import torch, triton, fuzzcomp; print("torch", torch.__version__, "triton", triton.__version__, "gpus", torch.cuda.device_count(), torch.cuda.get_device_name(0))'
work=/tmp/gpu_session; mkdir -p $work
save() { tar czf "$out/$1.tgz" -C "$work" "$1" 2>/dev/null; }
campaign() {  # name minutes extra-args...
    local name=$1 minutes=$2; shift 2
    local t0=$SECONDS
    $py -m fuzzcomp run --device cuda --jobs "${JOBS:-16}" --minutes "$minutes" --seed "${SEED:-1201}" \
        --out "$work/$name" --quiet "$@" > "$work/$name.log" 2>&1
    echo "$name: exit $? after $((SECONDS - t0)) s for a ${minutes}-minute budget" | tee -a "$work/$name.log"
    tail -25 "$work/$name.log"
    cp "$work/$name.log" "$work/$name/" 2>/dev/null
    save "$name"
}
case $step in
tests)
    timeout 240 $py -m pytest -q -p no:cacheprovider -n 4 -rs tests/test_cuda.py 2>&1 | tee "$out/test_cuda.log" | tail -15
    timeout 120 $py -m pytest -q -p no:cacheprovider -n 4 -rxXs corpus/ -k cuda 2>&1 | tee "$out/corpus_cuda.log" | tail -8
    timeout 330 $py benchmarks/jobs_sweep.py --jobs 8,16,24 --minutes 1 --device cuda --out $work/sweep \
        2>&1 | tee "$out/jobs_sweep.log" | tail -12
    cp $work/sweep/jobs_sweep.json "$out/" 2>/dev/null
    ;;
default)
    campaign gpu-default "${MINUTES:-8}"
    ;;
modes)
    campaign gpu-reduce-overhead "${MINUTES:-3.5}" --mode reduce-overhead
    campaign gpu-max-autotune "${MINUTES:-3.5}" --mode max-autotune
    ;;
*) echo "gpu_session: unknown step $step"; exit 2 ;;
esac
