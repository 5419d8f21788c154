# Run on the lent H100 from the repository root: . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/live_transfer.sh [ARGS]
# (carry .whl; .whl/tau holds the uniform stores of the earlier records, .whl/tau2 the guided stores this session's earlier calls returned)
. benchmarks/device/bytecode.sh && keep_bytecode
mkdir -p $OUT/t && cp .whl/tau/search-vgg16_*-uniform.sqlite .whl/tau2/*.sqlite $OUT/t/
git log --oneline | head -1
timeout ${LIMIT:-560} python benchmarks/search.py --transfer --profile benchmarks/results/h100-profile.json --jobs 15 --workloads "$@" --uniform 300 --guided 50 --json $OUT/t/live-transfer.json 2>&1 | grep -v -i warn | cut -c1-400 | tail -6
rm -f $OUT/t/*-uniform.sqlite* $OUT/t/search-vgg16_12-guided.sqlite
python - <<'PY'
import glob, os, sqlite3, json
for f in glob.glob(os.environ["OUT"] + "/t/*-guided.sqlite"):
    c = sqlite3.connect(f)
    layers = c.execute("select layer, count(*) from results group by layer").fetchall()
    print(f, layers)
PY
