# Run on the lent H100 from the repository root:
#   . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/search_fresh.sh WORKLOAD [ARGS]
# (carry .whl).  A fresh uniform store of 1,000 points and a guided search of 50 for one workload, with the
# kernels code generation makes now; the stores come back in $OUT/s.  Where the uniform search outlives one
# call, put the returned folder at .whl/s and call again: search.py resumes its stores.
. benchmarks/device/bytecode.sh && keep_bytecode
mkdir -p $OUT/s
[ -d .whl/s ] && cp .whl/s/*.sqlite $OUT/s/ 2>/dev/null
git log --oneline | head -1
w=$1; shift
timeout 540 python benchmarks/search.py --profile benchmarks/results/h100-profile.json --jobs 15 --workloads $w --uniform 1000 --guided 50 \
  --json $OUT/s/h100-search-${w//:/_}.json "$@" 2>&1 | grep -v -i warn | tail -4 | cut -c1-800
ls -la $OUT/s
