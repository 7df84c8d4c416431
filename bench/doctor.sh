#!/usr/bin/env bash
# `lockguard doctor` (no --smoke) against bare Python start-up and against `import torch` alone.
# Targets (issue 11): without torch under 0.5 s; on a torch environment under 3 s, most of it
# `import torch`. Writes the "doctor" section of bench/RESULTS.md.
#   bench/doctor.sh [TORCH_VENV]    # TORCH_VENV: a venv with torch installed (never installed here)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-.venv/bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/bare"
cd "$work"  # no lockguard.toml here: the lock checks skip, as on a fresh node
args=("python -c pass=$OLDPWD/$BIN/python -c pass"
      "lockguard doctor, no torch=$OLDPWD/$BIN/lockguard doctor --python $work/bare/bin/python")
if [ -n "${1:-}" ]; then
  args+=("python -c 'import torch'=$1/bin/python -c 'import torch'"
         "lockguard doctor, torch=$OLDPWD/$BIN/lockguard doctor --python $1/bin/python")
fi
"$OLDPWD/$BIN/python" "$OLDPWD/bench/_timeit.py" --section doctor --runs "${RUNS:-9}" \
  --note "Targets: without torch under 500 ms; with torch under 3 s. Ratios are against \`python -c pass\`; compare the torch rows with each other. Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)." \
  "${args[@]}"
