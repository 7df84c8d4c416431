#!/usr/bin/env bash
# `lockguard check` (the pre-commit path) against bare Python start-up, on examples/gpu-training.
# Targets (DESIGN.md): a cached result under 2x `python -c pass` (answered before click is imported),
# `check --no-cache` (the click command) under 5x.
# lockguard is installed from a wheel into a scratch venv: an editable install adds an import hook
# to every start-up of that Python (the yardstick's too) and the measure would flatter lockguard.
# Writes the "check" section of bench/RESULTS.md.
#   bench/check.sh [path/to/venv/bin]   (a venv with lockguard installed; default: a fresh one)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
if [ $# -ge 1 ]; then
  BIN="$(cd "$1" && pwd)"
else
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install -q --no-index --find-links "$ROOT/.wheelhouse" "$ROOT"
  BIN="$WORK/venv/bin"
fi
export LOCKGUARD_CACHE_DIR="$WORK/cache"
unset PYTHONDONTWRITEBYTECODE  # a user's Python keeps bytecode
cd examples/gpu-training
"$BIN/python" "$ROOT/bench/_timeit.py" --section check --runs 30 \
  --note "On examples/gpu-training (python 3.11, torch 2.1, CUDA 12.1, deepspeed, transformers; 48 pins). \`--no-cache\` skips the result cache; the parse memo of the TOML files (constraints/*.toml and the intent, keyed by their bytes) is warm, as on every commit after the first." \
  "python -c pass=$BIN/python -c pass" \
  "lockguard check (cached result)=$BIN/lockguard check" \
  "lockguard check --no-cache=$BIN/lockguard check --no-cache" \
  "lockguard check --strict --no-cache=$BIN/lockguard check --strict --no-cache"
