#!/bin/bash
# Code generation per point on the device host, three alternating rounds: as committed (the header's program text
# printed once per variant) and with codegen.kernel._program_text uncached (printed for every point, as before 994eb85).
#   bash benchmarks/device/codegen_text_cache.sh   (carry .whl: wheels and the variant cache)
. .whl/env.sh && export LIFTPY_CACHE_DIR=$PWD/.whl/lc
python -c "import platform; print(platform.python_version())"
for i in 1 2 3; do
  python benchmarks/codegen.py --workloads vgg16:12 vgg16:5 --json $OUT/head-$i.json | tail -2
  python -c "
import runpy, sys, liftpy.codegen.kernel as k
k._program_text = k._program_text.__wrapped__  # as before 994eb85: printed for every point
sys.argv = ['codegen.py', '--workloads', 'vgg16:12', 'vgg16:5', '--json', '$OUT/uncached-$i.json']
runpy.run_path('benchmarks/codegen.py', run_name='__main__')" | tail -2
done
