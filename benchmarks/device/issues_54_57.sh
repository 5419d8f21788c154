#!/bin/bash
# The measurements issues 54 and 57 still need, sized for the lent GPU's 10-minute commands (carry .whl):
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh networks    # ResNet-18, VGG-16, MobileNetV2
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh memory      # add and max on the roofline, half storage
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh vgghalf     # VGG-16's nine layers, float and half storage
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh probed      # ResNet-18, MobileNetV2, add and a VGG-16
#                                                                         # layer in half storage, the model probed
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh probed2     # VGG-16, sum, max, layer-norm rows, probed
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh recheck     # VGG-16 and the matrix products' spellings
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh fused       # ResNet-18 and MobileNetV2, residual adds fused;
#                                                                         # MobileNetV2 unfused in the same command
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh recombined  # the spellings whose pipelines the model
#                                                                         # search recombines (ModelSearch._recombined);
#                                                                         # 'recombined chained': the chained products only
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh chainedgrid # chained products at 1024 over a grid of tiles
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh unrolled    # SGEMM 2048 and chained products, k 8 to 64
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh modelcheck  # the matrix products' spellings and VGG-16
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh halfword    # memory-bound operators in half storage, MobileNetV2
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh halfsum     # sum and max eight lanes a step (vectorizeSumWide)
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh stencils    # stencils and pools in runs of a row (splitRuns)
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh checknets   # ResNet-18 and VGG-16 (their pools in runs too)
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh vggrows     # VGG-16; gemv, softmax and layer-norm rows in half
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh pools       # average and max pooling read as vectors; jacobi3d
#                                                                         # with the budget its 512^3 validation needs
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh probe       # the full device probe, for the cost model offline
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh groupsum    # sum and max, partial sums added by one work-group
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh diag        # uniform samples where the model ties or the search
#                                                                         # measured few points: jacobi3d, gemv and softmax rows-vec
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh rows48      # gemv, softmax and layer-norm rows with 48 samples
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh stencils40  # jacobi2d and blur2d with 40 samples
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh stencils3   # jacobi3d, jacobi2d, blur2d, runs guarded by rows
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh sweeps      # gemv's rows space uniformly; gemv, blur2d, 64 samples
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh modelhalf   # rows, pools, blur with 24 samples, half reads weighed as halves
#   . .whl/env.sh && bash benchmarks/device/issues_54_57.sh onekernel   # sum and max in half storage, and dot, sum, max of
#                                                                         # 2^24 floats by kind, with the last work-group's sum
# Each benchmark writes its JSON under $OUT as it goes (the networks into one file, one record per network),
# every output line stamped with the seconds since the command started; each part has its own time limit,
# so one that overruns leaves the others their time.
set -u
export PYTHONPYCACHEPREFIX=/tmp/pyc
unset PYTHONDONTWRITEBYTECODE
OUT=${OUT:-/tmp}
t0=$(date +%s)
stamp() { while IFS= read -r line; do echo "$(( $(date +%s) - t0 )) $line"; done; }
case "${1:-}" in
  networks)
    for n in resnet18 vgg16 mobilenet_v2; do
      timeout 190 python benchmarks/networks.py --only "$n" --samples 8 --jobs 14 --json "$OUT/h200-networks.json" \
        --db "$OUT/networks-$n.sqlite" 2>&1 \
        | grep -v -i warn | stamp
    done ;;
  memory)
    timeout 200 python benchmarks/roofline.py --only add,max,sum --samples 24 --budget 40 --jobs 14 \
      --json "$OUT/h200-roofline.json" 2>&1 | grep -v -i warn | stamp
    timeout 330 python benchmarks/half.py --only add,sum,max,gemv,softmax_rows,layernorm_rows --samples 24 --budget 20 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  vgghalf)
    # (a convolution's variants take most of a small budget to derive: 25 s per layer and precision)
    timeout 540 python benchmarks/half.py --only vgg16:0,vgg16:5,vgg16:12,vgg16:24,vgg16:2,vgg16:7,vgg16:10,vgg16:17,vgg16:19 \
      --samples 10 --budget 25 --jobs 14 --json "$OUT/h200-half-vgg16.json" 2>&1 | grep -v -i warn | stamp ;;
  probed)
    # (the first exploration measures the device for the cost model, liftpy.probe.saved: counted in ResNet-18's)
    for n in resnet18 mobilenet_v2; do
      timeout 190 python benchmarks/networks.py --only "$n" --samples 8 --jobs 14 --json "$OUT/h200-networks.json" \
        --db "$OUT/networks-$n.sqlite" 2>&1 | grep -v -i warn | stamp
    done
    cp "${LIFTPY_CACHE_DIR:-$HOME/.cache/liftpy}"/devices/*.json "$OUT/" 2>/dev/null
    timeout 150 python benchmarks/half.py --only add,vgg16:12 --samples 12 --budget 25 --jobs 14 --db "$OUT/half.sqlite" \
      --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  probed2)
    timeout 190 python benchmarks/networks.py --only vgg16 --samples 8 --jobs 14 --json "$OUT/h200-networks.json" \
      --db "$OUT/networks-vgg16.sqlite" 2>&1 | grep -v -i warn | stamp
    timeout 140 python benchmarks/half.py --only sum,max,layernorm_rows --samples 12 --budget 20 --jobs 14 \
      --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  recheck)
    # (what ran with the staged-copy count error, f8c41ba: VGG-16 whole, in 170 s, the matrix products' spellings)
    timeout 190 python benchmarks/networks.py --only vgg16 --samples 8 --time 170 --jobs 14 --json "$OUT/h200-networks.json" \
      --db "$OUT/networks-vgg16.sqlite" 2>&1 | grep -v -i warn | stamp
    timeout 380 python benchmarks/spellings.py --only sgemm,chained_products,gemm_epilogue --samples 24 --budget 55 \
      --jobs 14 --json "$OUT/h200-spellings.json" 2>&1 | grep -v -i warn | stamp ;;
  fused)
    for n in resnet18 mobilenet_v2; do
      timeout 185 python benchmarks/networks.py --only "$n" --samples 8 --time 150 --jobs 14 --json "$OUT/h200-networks.json" \
        --db "$OUT/networks-$n.sqlite" 2>&1 | grep -v -i warn | stamp
    done
    timeout 185 python benchmarks/networks.py --only mobilenet_v2 --unfused --samples 8 --time 150 --jobs 14 \
      --json "$OUT/h200-networks-unfused.json" --db "$OUT/networks-mobilenet_v2.sqlite" 2>&1 | grep -v -i warn | stamp ;;
  recombined)
    timeout 260 python benchmarks/spellings.py --only chained_products --samples 24 --budget 55 --jobs 14 \
      --json "$OUT/h200-spellings.json" --db "$OUT/spellings-chained.sqlite" 2>&1 | grep -v -i warn | stamp
    [ "${2:-}" = chained ] && exit 0
    timeout 300 python benchmarks/spellings.py --only atax,axpby_gemv --samples 24 --budget 45 --jobs 14 \
      --json "$OUT/h200-spellings-matvec.json" 2>&1 | grep -v -i warn | stamp ;;
  chainedgrid)
    timeout 560 python benchmarks/device/tile_grid.py --size 1024 --budget 480 --json "$OUT/h200-chained-grid.json" \
      --variants db+stageT+tiled-strided+unroll-item+wrg,stageT+tiled-strided+unroll-item+wrg 2>&1 | grep -v -i warn | stamp ;;
  unrolled)
    # (does a long unrolled stretch slow a tile? the same tiles with k 8, 16, 32, register blocks 8 x 4 to 8 x 16)
    S="128,128,8,8,16 128,128,16,8,16 128,128,8,8,8 128,128,16,8,8 128,128,32,8,8 64,128,8,8,8 64,128,16,8,8 64,128,32,8,8"
    timeout 200 python benchmarks/device/tile_grid.py --computation sgemm --size 2048 --budget 150 --json "$OUT/h200-sgemm-unrolled.json" \
      --variants db+stageT+tiled-strided+unroll-item+wrg,stageT+tiled-strided+unroll-item+wrg --shapes $S 2>&1 | grep -v -i warn | stamp
    S="64,128,32,8,4 64,128,64,8,4 64,64,32,8,8 64,64,32,4,8 32,256,32,4,8 64,128,32,8,8 64,128,16,8,8 64,128,8,8,8"
    timeout 200 python benchmarks/device/tile_grid.py --size 1024 --budget 150 --json "$OUT/h200-chained-unrolled.json" \
      --variants db+stageT+tiled-strided+unroll-item+wrg,stageT+tiled-strided+unroll-item+wrg --shapes $S 2>&1 | grep -v -i warn | stamp ;;
  modelcheck)
    # (the model's cost of long unrolled stretches and the search's composed points: the matrix products, VGG-16)
    timeout 200 python benchmarks/spellings.py --only chained_products,sgemm --samples 24 --budget 55 --jobs 14 \
      --json "$OUT/h200-spellings.json" --db "$OUT/spellings-mm.sqlite" 2>&1 | grep -v -i warn | stamp
    timeout 200 python benchmarks/networks.py --only vgg16 --samples 8 --time 170 --jobs 14 --json "$OUT/h200-networks.json" \
      --db "$OUT/networks-vgg16.sqlite" 2>&1 | grep -v -i warn | stamp ;;
  halfword)
    # (half storage's eight-halves words, liftpy.codegen.half.WORD_HELPERS; MobileNetV2 with the model's unrolled term)
    timeout 300 python benchmarks/half.py --only add,sum,max,gemv,softmax_rows,layernorm_rows --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp
    timeout 190 python benchmarks/networks.py --only mobilenet_v2 --samples 8 --time 150 --jobs 14 --json "$OUT/h200-networks.json" \
      --db "$OUT/networks-mobilenet_v2.sqlite" 2>&1 | grep -v -i warn | stamp ;;
  halfsum)
    timeout 300 python benchmarks/half.py --only sum,max --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  stencils)
    timeout 420 python benchmarks/half.py --only jacobi2d,blur2d,jacobi3d,maxpool2d,avgpool2d --samples 24 --budget 20 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  checknets)
    for n in resnet18 vgg16; do
      timeout 175 python benchmarks/networks.py --only "$n" --samples 8 --time 120 --jobs 14 --json "$OUT/h200-networks.json" \
        --db "$OUT/networks-$n.sqlite" 2>&1 | grep -v -i warn | stamp
    done ;;
  vggrows)
    timeout 200 python benchmarks/networks.py --only vgg16 --samples 8 --time 150 --jobs 14 --json "$OUT/h200-networks.json" \
      --db "$OUT/networks-vgg16.sqlite" 2>&1 | grep -v -i warn | stamp
    timeout 300 python benchmarks/half.py --only gemv,softmax_rows,layernorm_rows --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  pools)
    timeout 280 python benchmarks/half.py --only avgpool2d,maxpool2d --samples 24 --budget 20 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp
    timeout 280 python benchmarks/half.py --only jacobi3d --samples 24 --budget 45 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  groupsum)
    timeout 330 python benchmarks/half.py --only sum,max --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  onekernel)
    timeout 300 python benchmarks/half.py --only sum,max --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp
    timeout 270 python benchmarks/reductions.py --n 16777216 --samples 24 --jobs 14 \
      --json "$OUT/h200-reductions.json" 2>&1 | grep -v -i warn | stamp ;;
  diag)
    timeout 170 python -m liftpy explore jacobi3d -s D=512,H=512,W=512 --precision fp16-storage --search uniform \
      --samples 60 --budget 150s --jobs 14 --db "$OUT/diag-jacobi3d.sqlite" 2>&1 | grep -v -i warn | tail -12 | stamp
    timeout 110 python -m liftpy explore gemv -s M=8192,N=8192 --precision fp16-storage --rules dealRowsVector \
      --search uniform --samples 40 --budget 90s --jobs 14 --db "$OUT/diag-gemv.sqlite" 2>&1 | grep -v -i warn | tail -12 | stamp
    timeout 100 python -m liftpy explore softmax_rows -s M=8192,N=8192 --precision fp16-storage --rules dealRowsVector \
      --search uniform --samples 30 --budget 80s --jobs 14 --db "$OUT/diag-softmax.sqlite" 2>&1 | grep -v -i warn | tail -12 | stamp ;;
  rows48)
    # (the model ties the rows variants; a uniform search found words of eight halves fastest: more samples)
    timeout 400 python benchmarks/half.py --only gemv,softmax_rows,layernorm_rows --samples 48 --budget 30 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  stencils40)
    timeout 200 python benchmarks/half.py --only jacobi2d,blur2d --samples 40 --budget 20 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  stencils3)
    # (runs guarded by their rows and planes only: every warp of a 512-wide row took the border's branch)
    timeout 300 python benchmarks/half.py --only jacobi3d --samples 32 --budget 60 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp
    timeout 250 python benchmarks/half.py --only jacobi2d,blur2d --samples 40 --budget 25 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  sweeps)
    # (how far the rows' and the blur's spaces go: every configuration of gemv's rows read as words, uniformly;
    # then the benchmark itself with more samples in both precisions)
    timeout 150 python -m liftpy explore gemv -s M=8192,N=8192 --precision fp16-storage --rules dealRowsVector,unrollInItem \
      --search uniform --samples 60 --budget 90s --jobs 14 --no-references --db "$OUT/gemv-rows.sqlite" 2>&1 | grep -v -i warn | tail -25 | stamp
    timeout 380 python benchmarks/half.py --only gemv,blur2d --samples 64 --budget 60 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  modelhalf)
    # (the model weighs half arrays' reads as halves: the default 24 samples, rows and pools and the blur)
    timeout 280 python benchmarks/half.py --only gemv,softmax_rows,layernorm_rows --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp
    timeout 280 python benchmarks/half.py --only maxpool2d,avgpool2d,blur2d --samples 24 --budget 15 \
      --jobs 14 --db "$OUT/half.sqlite" --json "$OUT/h200-half.json" 2>&1 | grep -v -i warn | stamp ;;
  probe)
    timeout 400 python -m liftpy probe --out "$OUT/h200-profile.json" 2>&1 | grep -v -i warn | stamp ;;
  *)
    echo "usage: bash benchmarks/device/issues_54_57.sh networks|memory|vgghalf|probed|probed2|recheck|fused|recombined|chainedgrid|unrolled|modelcheck|halfword|halfsum|stencils|checknets|vggrows|pools|probe|groupsum|onekernel|diag|rows48|stencils40|stencils3|sweeps|modelhalf" >&2
    exit 2 ;;
esac
