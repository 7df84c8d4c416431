#!/usr/bin/env bash
# `lockguard check` (the pre-commit path) against bare Python start-up, on this project's own lock.
# Target: under 3x `python -c pass`. Writes the "check" section of bench/RESULTS.md.
#   bench/check.sh [path/to/venv/bin]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-.venv/bin}"
export LOCKGUARD_CACHE_DIR="$(mktemp -d)"
trap 'rm -rf "$LOCKGUARD_CACHE_DIR"' EXIT
"$BIN/python" bench/_timeit.py --section check --runs 30 \
  "python -c pass=$BIN/python -c pass" \
  "lockguard check (cached result)=$BIN/lockguard check" \
  "lockguard check --no-cache=$BIN/lockguard check --no-cache" \
  "lockguard check --strict --no-cache=$BIN/lockguard check --strict --no-cache"
