#!/usr/bin/env bash
# Inventory of a synthetic 200k-file / 2k-distribution prefix against `find -name '*.so*'`.
#   bench/inventory.sh [path/to/venv/bin]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-.venv/bin}"
"$BIN/python" bench/inventory.py "${@:2}"
