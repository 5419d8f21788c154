#!/bin/bash
# Code generation per point on the device host's CPU, alone and with N generations running at once (the load a
# search's N compile workers put on the host), and the host's cores as lscpu counts them:
#   . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc [LOADS="8 15"] [LOADED=vgg16:24] bash benchmarks/device/codegen_load.sh
# (carry .whl: the variant cache).  $OUT/codegen-alone.json: the search benchmark's five workloads, one process;
# $OUT/codegen-load<N>-<i>.json: LOADED in N processes at once, each its own points (--seed i).
. benchmarks/device/bytecode.sh && keep_bytecode
nproc
lscpu | grep -E "^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU\(s\))"
python benchmarks/codegen.py --workloads sgemm:1024 vgg16:5 vgg16:10 vgg16:12 vgg16:24 --json "$OUT/codegen-alone.json"
for n in ${LOADS:-8 15}; do
  for i in $(seq "$n"); do
    python benchmarks/codegen.py --workloads "${LOADED:-vgg16:24}" --seed "$i" --json "$OUT/codegen-load$n-$i.json" > /dev/null &
  done
  wait
  python - "$OUT" "$n" <<'PY'
import json, statistics, sys
from pathlib import Path
meds = [json.loads(p.read_text())[0]["median_s"] for p in sorted(Path(sys.argv[1]).glob(f"codegen-load{sys.argv[2]}-*.json"))]
print(f"{sys.argv[2]} at once: median of the processes' medians {statistics.median(meds):.4f} s "
      f"({min(meds):.4f}-{max(meds):.4f})")
PY
done
