#!/bin/sh
# bench/compare.sh: run both sides in one go and print the markdown table.
# usage (from the checkout root): sh bench/compare.sh [filter]
set -e
out=$(mktemp -d)
lua5.4 bench/run.lua "$@" > "$out/lt.txt"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 bench/torch_bench.py "$@" > "$out/torch.txt"
else
  echo "PyTorch not installed (apt-get install python3-torch): ltensor figures only" >&2
  : > "$out/torch.txt"
fi
lua5.4 bench/compare.lua "$out/lt.txt" "$out/torch.txt"
rm -rf "$out"
