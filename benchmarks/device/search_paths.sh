# Run on the lent H100 from the repository root:
#   . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/search_paths.sh WORKLOAD UNIFORM SEED...
# (carry .whl, the workload's uniform store at .whl/s/search-<workload>-uniform.sqlite).  Guided searches of 50
# runs over that one uniform store, each with another seed (search.py --guided-seed): how far one run's
# runs_to_5pct is one draw of a spread.  Each seed's record and guided store come back in $OUT/gSEED.
. benchmarks/device/bytecode.sh && keep_bytecode
git log --oneline | head -1
w=$1; u=$2; shift 2
tag=${w//:/_}; tag=${tag//@/_}
for s in "$@"; do
  mkdir -p $OUT/g$s
  cp .whl/s/search-$tag-uniform.sqlite $OUT/g$s/
  python benchmarks/search.py --profile benchmarks/results/h100-profile.json --jobs 15 --workloads $w --uniform $u --guided 50 \
    --guided-seed $s --json $OUT/g$s/h100-search-$tag.json 2>&1 | grep -v -i warn | tail -2 | cut -c1-400
  rm $OUT/g$s/search-$tag-uniform.sqlite
done
ls -la $OUT/g*
