#!/bin/bash
# Time to the first measured point of a fresh exploration (empty variant, space, screen and model caches:
# what a user meets the first time a problem is explored), each output line stamped with the seconds
# since the command started; this tree, then, where BASE names a copy of another commit (its liftpy/,
# benchmarks/ and examples/), that tree, so both run on the same host.
#   [BASE=.whl/base] bash benchmarks/device/first_run.sh
set -e
nproc
grep -m1 "model name" /proc/cpuinfo
stamp() {  # label t0: prefix each line with the label and the seconds since t0
  python3 -u -c 'import sys, time
t0 = float(sys.argv[2])
for line in sys.stdin:
    print(f"{sys.argv[1]} {time.time() - t0:7.1f}  {line}", end="", flush=True)' "$1" "$2"
}
explore() {  # tree label explore-arguments...
  local tree=$1 label=$2
  shift 2
  local cache db t0
  cache=$(mktemp -d)
  db=$(mktemp -d)/r.sqlite
  t0=$(python3 -c 'import time; print(time.time())')
  (cd "$tree" && LIFTPY_CACHE_DIR=$cache python -m liftpy explore "$@" --db "$db" --repeat 1 --no-references 2>&1) | stamp "$label" "$t0"
}
for tree in . ${BASE:+"$BASE"}; do
  name=$([ "$tree" = . ] && echo this || echo base)
  explore "$tree" "$name:vgg16:12" conv --layer vgg16:12 --samples 3
  explore "$tree" "$name:sgemm:1024" examples/programs/matmul_highlevel.lift -s M=1024,N=1024,K=1024 --samples 3
done
