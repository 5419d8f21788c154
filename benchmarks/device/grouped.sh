# Run on the lent H100 from the repository root: . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/grouped.sh [ARGS]
# (carry .whl; .whl/tau holds the uniform stores of the earlier records, .whl/tau2 the guided stores this session's earlier calls returned)
. benchmarks/device/bytecode.sh && keep_bytecode
L="conv2d:k=3,pad=1,groups=2@C=384,H=13,W=13,M=384 conv2d:k=3,pad=1,groups=2@C=384,H=13,W=13,M=256 conv2d:k=3,pad=1,groups=2@C=1024,H=7,W=7,M=1024 conv2d:k=3,pad=1,groups=4@C=2048,H=7,W=7,M=512"
mkdir -p $OUT/g
timeout 270 python benchmarks/conv_vgg16.py --profile benchmarks/results/h100-profile.json --samples 24 --search model --jobs 14 --repeat 10 --timeout 60 --rules 'groupsOut,splitKGroups' --layers $L --json $OUT/g/h100-conv-grouped-split.json 2>&1 | grep -v -i warn | tail -8
timeout 270 python benchmarks/conv_vgg16.py --profile benchmarks/results/h100-profile.json --samples 24 --search model --jobs 14 --repeat 10 --timeout 60 --rules 'tile2DReduce|tile2DReduceStrided|groupsOut' --layers $L --json $OUT/g/h100-conv-grouped-all.json 2>&1 | grep -v -i warn | tail -8
