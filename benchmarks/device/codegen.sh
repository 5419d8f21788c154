#!/bin/bash
# Code generation time per point on the device host's CPU, where a GPU search generates its kernels: this
# tree ROUNDS times (2 by default), and, where BASE names a copy of another commit (its liftpy/, benchmarks/ and
# examples/), that tree as often, the runs alternating (one core each; the host's timings vary by up to a quarter).
#   LIFTPY_CACHE_DIR=$PWD/.whl/lc [BASE=.whl/base] [ROUNDS=2] bash benchmarks/device/codegen.sh
set -e
nproc
grep -m1 "model name" /proc/cpuinfo
for round in $(seq "${ROUNDS:-2}"); do
  python benchmarks/codegen.py --json "$OUT/codegen-$round.json"
  if [ -n "$BASE" ]; then
    (cd "$BASE" && python benchmarks/codegen.py --json "$OUT/codegen-base-$round.json")
  fi
done
