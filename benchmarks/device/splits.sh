# Run on the lent H100 from the repository root (carry .whl):
#   . .whl/env.sh && LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/splits.sh
# (POINTS=benchmarks/device/splits-best.points: the fastest of them on the H200, again on an H100)
# Re-times issue 18's best point of each VGG-16 layer (h100-vgg16-gemmview.json) beside the points of
# splits.points: split-K chunks and tiles longer than any input dimension, which the tuning space admits
# since a parameter that must divide a length may reach that length.  One process, the
# vendor timed beside every point; the file of each layer's fastest point in conv_vgg16.py's shape.
. benchmarks/device/bytecode.sh && keep_bytecode
args=()
while read -r w v c; do args+=(--point "$w" "$v" "$c"); done < "${POINTS:-benchmarks/device/splits.points}"
timeout 560 python benchmarks/retime.py --profile benchmarks/results/h100-profile.json \
  --from benchmarks/results/h100-vgg16-gemmview.json "${args[@]}" --vendor-repeats 3 \
  --json "$OUT/h100-retime-splits.json" --best "$OUT/h100-vgg16-gemmview.json" "$@" 2>&1 | grep -v -i warn
