#!/usr/bin/env bash
# The doctor's real-GPU check. On a machine with an NVIDIA GPU: a temporary venv with lockguard and
# a CUDA build of torch, then `lockguard doctor --json --smoke` against it. The JSON goes to stdout
# and to $OUT/gpu_doctor.json when OUT is set (the device tool collects $OUT).
#   TORCH="torch==2.4.1" bench/gpu_doctor.sh      # default: the newest torch on the index
#   WHEELHOUSE=/path/to/wheels bench/gpu_doctor.sh # install without a network
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH="${TORCH:-torch}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv || true
python3 -m venv "$work/venv"
pip_args=(-q)
if [ -n "${WHEELHOUSE:-}" ]; then pip_args+=(--no-index --find-links "$WHEELHOUSE"); fi
"$work/venv/bin/pip" install "${pip_args[@]}" . "$TORCH"
out="${OUT:-$work}/gpu_doctor.json"
set +e
"$work/venv/bin/lockguard" doctor --python "$work/venv/bin/python" --json --smoke > "$out"
code=$?
set -e
cat "$out"
echo "lockguard doctor exit code: $code" >&2
"$work/venv/bin/lockguard" doctor --python "$work/venv/bin/python" --smoke >&2 || true
exit 0
