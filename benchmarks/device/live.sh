# Run on the lent H100 from the repository root: . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/live.sh [ARGS]
# (carry .whl; .whl/tau holds the uniform stores of the earlier records, .whl/tau2 the guided stores this session's earlier calls returned)
. benchmarks/device/bytecode.sh && keep_bytecode
mkdir -p $OUT/tau && cp .whl/tau/search-vgg16_12-uniform.sqlite .whl/tau/search-vgg16_10-uniform.sqlite $OUT/tau/
git log --oneline | head -1
timeout 540 python benchmarks/search.py --profile benchmarks/results/h100-profile.json --jobs 15 --workloads vgg16:12 vgg16:10 --uniform 300 --guided 50 --json $OUT/tau/live.json "$@" 2>&1 | grep -v -i warn | tail -4 | cut -c1-600
rm -f $OUT/tau/*-uniform.sqlite*
