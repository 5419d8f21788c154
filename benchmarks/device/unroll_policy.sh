#!/bin/bash
# Loops marked for unrolling copied by liftpy (policy none, as up to 042d57b) or as the default policy leaves them,
# on the device: the nine VGG-16 layers' fastest points (h100-vgg16-gemmview.json) and two SGEMM points
# (h100-sgemm-final.json), 8 points drawn from each of three workloads, then code generation time per point each
# way (codegen.py, alternating).  WAYS overrides the policies compared (first: the reference).
#   LIFTPY_CACHE_DIR=$PWD/.whl/lc bash benchmarks/device/unroll_policy.sh
set -e
P=benchmarks/results/h100-profile.json
W=${WAYS:-none reductions+registers}
V=db+flat+glb+splitK+stageT+tiled-strided+unroll-item+wrg#9c007c5684
python benchmarks/unroll_policy.py --rounds 3 --profile $P --json "$OUT/unroll-policy.json" --ways $W \
  --point vgg16:0 'db+flat+stageT+tiled-strided+unroll-item+wrg#cc6f4429c3' k0=27,m0=128,n0=64,r0=8,r1=8 \
  --point vgg16:2 'db+flat+stageT+tiled-strided+unroll-item+wrg#cc6f4429c3' k0=16,m0=196,n0=64,r0=14,r1=4 \
  --point vgg16:5 $V k0=8,ks0=288,m0=64,n0=128,r0=8,r1=8 \
  --point vgg16:7 $V k0=8,ks0=288,m0=128,n0=128,r0=8,r1=8 \
  --point vgg16:10 $V k0=8,ks0=288,m0=64,n0=128,r0=8,r1=8 \
  --point vgg16:12 'db+flat+glb+splitK+stageT+tiled+unroll-item+wrg#737b71dd21' k0=8,ks0=256,m0=112,n0=256,r0=28,r1=4 \
  --point vgg16:17 $V k0=8,ks0=256,m0=112,n0=256,r0=28,r1=4 \
  --point vgg16:19 $V k0=8,ks0=512,m0=112,n0=256,r0=16,r1=4 \
  --point vgg16:24 $V k0=8,ks0=288,m0=196,n0=32,r0=14,r1=8 \
  --point sgemm:2048 'stageT+tiled-strided+unroll-item+wrg#6d18a76bce' k0=16,m0=128,n0=256,r0=16,r1=8 \
  --point sgemm:4096 'stageT+tiled-strided+unroll-item+wrg#6d18a76bce' k0=8,m0=128,n0=256,r0=16,r1=8
timeout "${SAMPLED_S:-260}" python benchmarks/unroll_policy.py --rounds 2 --repeat 5 --profile $P --ways $W \
  --sample vgg16:12 --sample vgg16:5 --sample sgemm:1024 --points 8 --json "$OUT/unroll-policy-sampled.json" || true
for round in 1 2; do
  for way in $W; do
    python benchmarks/codegen.py --compiler-unrolls "$way" --json "$OUT/codegen-${way//+/-}-$round.json"
  done
done
