#!/bin/bash
# Code generation time per point on the device host's CPU, where a GPU search generates its kernels: this
# tree twice, and, where BASE names a copy of another commit (its liftpy/, benchmarks/ and examples/),
# that tree twice too, the runs alternating (one core each, the host's timings vary by about a tenth).
#   LIFTPY_CACHE_DIR=$PWD/.whl/lc [BASE=.whl/base] bash benchmarks/device/codegen.sh
set -e
nproc
grep -m1 "model name" /proc/cpuinfo
for round in 1 2; do
  python benchmarks/codegen.py --json "$OUT/codegen-$round.json"
  if [ -n "$BASE" ]; then
    (cd "$BASE" && python benchmarks/codegen.py --json "$OUT/codegen-base-$round.json")
  fi
done
