#!/bin/bash
# Run on the lent H100 from the repository root:
#   . .whl/env.sh && bash benchmarks/device/ab_search.sh guided|uniform [RUNS]
# (carry .whl: the variant cache at .whl/lc, layer 24's uniform store at .whl/s/search-vgg16_24-uniform.sqlite, and
# the base tree at .whl/base, e.g. `git archive BASE liftpy benchmarks/search.py benchmarks/sgemm.py
# benchmarks/points.py benchmarks/pass_worth.py benchmarks/results/h100-profile.json | tar -x -C .whl/base`).
# The same search of VGG-16 layer 24 (or of W) with this tree and with the base tree, each run with its own liftpy,
# pyopencl and driver caches (empty at its start but for the carried variant cache), this tree first:
#   guided   50 guided runs (seed 1) over the carried uniform store;
#   uniform  80 uniform points (or U) and 4 guided runs on fresh stores.
# JOBS sets --jobs (15 by default), W the workload (uniform mode), U the uniform points.  NO_BINARY_CACHE=1 keeps pyopencl's and the driver's caches off altogether.  Records in $OUT/<run>/.
[ -n "$NO_BINARY_CACHE" ] && export PYOPENCL_NO_CACHE=1 CUDA_CACHE_DISABLE=1
. benchmarks/device/bytecode.sh && keep_bytecode .whl/base/liftpy
site=${PYTHONPATH%%:*}
mode=${1:-guided}; runs=${2:-new base}
w=${W:-vgg16:24}; tag=${w//:/_}
for which in $runs; do
  case $which in base*) root=$PWD/.whl/base;; *) root=$PWD;; esac
  cp -r .whl/lc /tmp/lc-$which
  mkdir -p $OUT/$which /tmp/xdg-$which /tmp/nv-$which
  if [ "$mode" = guided ]; then
    cp .whl/s/search-$tag-uniform.sqlite $OUT/$which/
    args="--uniform 300 --guided 50 --guided-seed 1"
  else
    args="--uniform ${U:-80} --guided 4"
  fi
  (cd $root && XDG_CACHE_HOME=/tmp/xdg-$which CUDA_CACHE_PATH=/tmp/nv-$which LIFTPY_CACHE_DIR=/tmp/lc-$which PYTHONPATH=$root:$site \
     python benchmarks/search.py --profile benchmarks/results/h100-profile.json --jobs ${JOBS:-15} --workloads $w $args \
     --json $OUT/$which/h100-search-$tag.json 2>&1 | grep -v -i warn | tail -1 | cut -c1-300)
  if [ "$mode" = guided ]; then rm $OUT/$which/search-$tag-uniform.sqlite; fi
done
