#!/usr/bin/env bash
# Two builds side by side in one run (issue 24's rule): check cached and uncached, resolve cold and
# warm (live PyPI), inventory. Each build installed from a wheel into its own venv; BEFORE_TREE is
# the before build's source tree (its lockguard/ byte-compiled) for the inventory rounds.
#   bench/before_after.sh BEFORE_VENV_BIN AFTER_VENV_BIN BEFORE_TREE [UV]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
B="$(cd "$1" && pwd)"; A="$(cd "$2" && pwd)"; TREE="$(cd "$3" && pwd)"; UV="${4:-$ROOT/.venv/bin/uv}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
unset PYTHONDONTWRITEBYTECODE
echo "load: $(cat /proc/loadavg)"
echo "## check (examples/gpu-training, 30 alternated rounds)"
cd examples/gpu-training
"$A/python" "$ROOT/bench/check_rounds.py" 30 \
  "python -c pass=env LOCKGUARD_CACHE_DIR=$WORK/after $A/python -c pass" \
  "before: check (cached)=env LOCKGUARD_CACHE_DIR=$WORK/before $B/lockguard check" \
  "after: check (cached)=env LOCKGUARD_CACHE_DIR=$WORK/after $A/lockguard check" \
  "before: check --no-cache=env LOCKGUARD_CACHE_DIR=$WORK/before $B/lockguard check --no-cache" \
  "after: check --no-cache=env LOCKGUARD_CACHE_DIR=$WORK/after $A/lockguard check --no-cache"
cd "$ROOT"
echo "load: $(cat /proc/loadavg)"
echo "## resolve cold and warm"
"$A/python" bench/resolve_vs_uv.py --rounds 3 --lockguard "before=$B/lockguard" --lockguard "after=$A/lockguard" --uv "$UV"
echo "load: $(cat /proc/loadavg)"
echo "## inventory (100k files, 1k distributions)"
PREFIX="$("$A/python" -c "import sys; sys.path.insert(0, 'bench'); from pathlib import Path; from inventory import build; print(build(Path('$WORK'), 1000, 100))")"
"$A/python" bench/inventory_rounds.py "$PREFIX" "$TREE" --rounds 11
echo "load: $(cat /proc/loadavg)"
