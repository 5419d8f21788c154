# Run on the lent H100 from the repository root: . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/live2.sh [ARGS]
# (carry .whl; .whl/tau holds the uniform stores of the earlier records, .whl/tau2 the guided stores this session's earlier calls returned)
. benchmarks/device/bytecode.sh && keep_bytecode
mkdir -p $OUT/s $OUT/t && cp .whl/tau/search-sgemm_1024-uniform.sqlite $OUT/s/ && cp .whl/tau/search-vgg16_*-uniform.sqlite .whl/tau2/*.sqlite $OUT/t/
timeout 330 python benchmarks/search.py --transfer --profile benchmarks/results/h100-profile.json --jobs 15 --workloads sgemm:1024 --uniform 1000 --guided 50 --json $OUT/s/live-transfer.json 2>&1 | grep -v -i warn | cut -c1-300 | tail -3
timeout 240 python benchmarks/search.py --transfer --profile benchmarks/results/h100-profile.json --jobs 15 --workloads vgg16:24 --uniform 84 --guided 50 --json $OUT/t/live-transfer.json 2>&1 | grep -v -i warn | cut -c1-300 | tail -3
rm -f $OUT/s/*-uniform.sqlite* $OUT/t/*-uniform.sqlite* $OUT/t/search-vgg16_1*-guided.sqlite
ls -la $OUT/s $OUT/t
