# Run on the lent H100 from the repository root: . .whl/env.sh && N=600 bash benchmarks/device/abort_ab.sh
# A uniform search of SGEMM 1024 (N points, --abort-factor 2, 15 compile workers) with this tree and with the base tree
# in .whl/base, alternating (new base new2 base2), each with its own liftpy, pyopencl and driver caches; the second pair
# starts from the first pair's liftpy caches (variants, plan).  One JSON line per run.
. benchmarks/device/bytecode.sh && keep_bytecode .whl/base/liftpy
site=${PYTHONPATH%%:*}
for which in new base new2 base2; do
  case $which in base*) root=$PWD/.whl/base;; *) root=$PWD;; esac
  rm -rf /tmp/lc-$which; case $which in *2) cp -r /tmp/lc-${which%2} /tmp/lc-$which;; *) cp -r .whl/lc /tmp/lc-$which;; esac; mkdir -p /tmp/xdg-$which /tmp/nv-$which; rm -f /tmp/abort-$which.sqlite
  cp benchmarks/device/abort_search.py $root/abort_run.py 2>/dev/null
  echo "$which $(cd $root && XDG_CACHE_HOME=/tmp/xdg-$which CUDA_CACHE_PATH=/tmp/nv-$which LIFTPY_CACHE_DIR=/tmp/lc-$which PYTHONPATH=$root:$site python abort_run.py /tmp/abort-$which.sqlite 2 ${N:-600} 2>/dev/null | tail -1)"
done
