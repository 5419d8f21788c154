// fastest correct implementation of conv3x3s1x1p1_1_1_1d1x1g2 (conv3x3s1x1p1_1_1_1d1x1g2#65eb2aa3:C=1024,H=7,M=1024,W=7) on NVIDIA CUDA | NVIDIA H100 80GB HBM3 | 580.159.04:
//   variant db+flat+glb+groups+splitK+stageT+tiled+unroll-item+wrg#8e786816e8: 0.04234 ms, 24.51 MB
//   parameters: k0 = 16, ks0 = 144, m0 = 49, n0 = 128, r0 = 7, r1 = 4
//   rule: flattenMap2D at map
//   rule: groupsOut at split.0/map
//   rule: splitKGroups at split (new parameters: ks0)
//   rule: tile2DReduce at let.0/toGlobal.0/map.f/map (new parameters: m0, n0, k0, r0, r1)
//   rule: mapWrg2 at let.0/toGlobal.0/map
//   rule: mapWrg1 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/map
//   rule: mapWrg0 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/map
//   rule: mapLcl1 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/map
//   rule: mapLcl1 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.f/map
//   rule: mapLcl1 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.0/map
//   rule: mapLcl0 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.f/map
//   rule: mapLcl0 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.f/mapLcl.f/map
//   rule: mapLcl0 at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.0/mapLcl.f/map
//   rule: mapGlb2 at let.f/split.0/map.0/transpose.0/map
//   rule: mapGlb1 at let.f/split.0/map.0/transpose.0/mapGlb.f/map
//   rule: mapGlb0 at let.f/split.0/map.0/transpose.0/mapGlb.f/mapGlb.f/map
//   rule: mapSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.f/mapLcl.f/map
//   rule: mapSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.f/mapLcl.f/mapSeq.f/map
//   rule: mapSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.f/mapLcl.f/mapLcl.f/join.0/reduce.f/map
//   rule: mapSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.f/mapLcl.f/mapLcl.f/join.0/reduce.f/mapSeq.f/map
//   rule: mapSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.0/mapLcl.f/mapLcl.f/map
//   rule: mapSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce.0/mapLcl.f/mapLcl.f/mapSeq.f/map
//   rule: reduceSeq at let.f/split.0/map.0/transpose.0/mapGlb.f/mapGlb.f/mapGlb.f/reduce
//   rule: reduceSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduce
//   rule: reduceSeq at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/mapLcl.f/mapLcl.f/join.0/reduce
//   rule: privateAccumulator at let.f/split.0/map.0/transpose.0/mapGlb.f/mapGlb.f/mapGlb.f/reduceSeq
//   rule: privateAccumulator at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq
//   rule: privateAccumulator at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/mapLcl.f/mapLcl.f/join.0/reduceSeq
//   rule: stageTilesT at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq
//   rule: doubleBuffer at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq
//   rule: unrollInItem at let.f/split.0/map.0/transpose.0/mapGlb.f/mapGlb.f/mapGlb.f/reduceSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.f/mapLcl.f/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.f/mapLcl.f/mapSeqUnroll.f/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/let.f/let.f/mapLcl.f/mapLcl.f/join.0/reduceSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/let.f/let.f/mapLcl.f/mapLcl.f/join.0/reduceSeqUnroll.f/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/let.f/let.f/mapLcl.f/mapLcl.f/join.0/reduceSeqUnroll.f/mapSeqUnroll.f/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/let.f/let.f/mapLcl.f/mapLcl.f/join.0/reduceSeqUnroll.0/toPrivate.0/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.f/let.f/let.f/mapLcl.f/mapLcl.f/join.0/reduceSeqUnroll.0/toPrivate.0/mapSeqUnroll.f/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.0/toPrivate.0/mapLcl.f/mapLcl.f/mapSeq
//   rule: unrollInItem at let.0/toGlobal.0/mapWrg.f/map.0/join.0/map.0/mapWrg.f/mapWrg.f/map.0/map.0/join.0/map.0/mapLcl.0/join.0/reduceSeq.0/toPrivate.0/mapLcl.f/mapLcl.f/mapSeqUnroll.f/mapSeq

// def conv3x3s1x1p1_1_1_1d1x1g2(input: [[[float]C]W]H, weights: [[[[float](C/2)]3]3]M, biases: [float]M) =
//   let(
//     fun(P_) =>
//       split(W,
//         map(
//           join,
//           transpose(
//             mapGlb(2,
//               fun(pg) =>
//                 mapGlb(1,
//                   fun(row) =>
//                     mapGlb(0,
//                       fun(q) => reduceSeqUnroll(add, toPrivate(id(q._1._1)), q._0),
//                       zip(row, zip(pg._1._1, pg._1._2))),
//                   map(transpose, transpose(map(fun(plane) => map(join, plane), pg._0)))),
//               zip(
//                 split((9*C/(2*ks0)), P_),
//                 zip(
//                   transpose(
//                     map(
//                       fun(win) =>
//                         transpose(
//                           map(
//                             transpose,
//                             map(
//                               fun(row1) => map(fun(px) => split((C/2), px), row1),
//                               map(fun(row2) => row2, win)))),
//                       join(
//                         map(
//                           transpose,
//                           slide(3, 1,
//                             map(
//                               fun(row3) => slide(3, 1, row3),
//                               transpose(
//                                 map(
//                                   fun(col) => pad(1, 1, 0.0f, col),
//                                   transpose(map(fun(row4) => pad(1, 1, 0.0f, row4), input)))))))))),
//                   split((M/2), weights),
//                   split((M/2), biases))))))),
//     toGlobal(
//       mapWrg(2,
//         fun(sp) =>
//           map(
//             join,
//             join(
//               map(
//                 transpose,
//                 mapWrg(1,
//                   fun(at) =>
//                     mapWrg(0,
//                       fun(bt) =>
//                         map(
//                           fun(row5) => split(1, row5),
//                           map(
//                             join,
//                             join(
//                               map(
//                                 transpose,
//                                 mapLcl(1,
//                                   fun(p) =>
//                                     mapLcl(0,
//                                       fun(q1) => mapSeqUnroll(fun(r) => mapSeqUnroll(id, r), q1),
//                                       p),
//                                   join(
//                                     reduceSeq(
//                                       fun(acc, kc) =>
//                                         let(
//                                           fun(tile) =>
//                                             let(
//                                               fun(tile1) =>
//                                                 mapLcl(1,
//                                                   fun(ra) =>
//                                                     mapLcl(0,
//                                                       fun(rb) =>
//                                                         join(
//                                                           reduceSeqUnroll(
//                                                             fun(acc1, kp) =>
//                                                               mapSeqUnroll(
//                                                                 fun(pr) =>
//                                                                   mapSeqUnroll(
//                                                                     fun(pc) =>
//                                                                       multAndSumUp(
//                                                                         pc._0,
//                                                                         pr._1,
//                                                                         pc._1),
//                                                                     zip(pr._0, kp._1)),
//                                                                 zip(acc1, kp._0)),
//                                                             toPrivate(
//                                                               mapSeqUnroll(
//                                                                 fun(y) => mapSeqUnroll(id, y),
//                                                                 rb._0)),
//                                                             zip(transpose(ra._1), transpose(rb._1)))),
//                                                       zip(ra._0, split(r1, transpose(tile1)))),
//                                                   zip(acc, split(r0, transpose(tile)))),
//                                               toLocalDouble(transpose(kc._1))),
//                                           toLocalDouble(transpose(kc._0))),
//                                       toPrivate(
//                                         mapLcl(1,
//                                           fun(p1) =>
//                                             mapLcl(0,
//                                               fun(q2) =>
//                                                 mapSeqUnroll(fun(r2) => mapSeqUnroll(id, r2), q2),
//                                               p1),
//                                           value(0.0f, [[[[float]r1]r0](n0/r1)](m0/r0)))),
//                                       zip(
//                                         transpose(map(fun(row6) => split(k0, row6), at)),
//                                         transpose(map(fun(row7) => split(k0, row7), bt)))))))))),
//                       split(n0, sp._1)),
//                   split(m0, sp._0))))),
//         join(
//           map(
//             fun(gv) =>
//               zip(
//                 transpose(map(fun(row8) => split(ks0, row8), map(fun(x) => join(join(x)), gv._0))),
//                 transpose(
//                   map(
//                     fun(row9) => split(ks0, row9),
//                     map(fun(x1) => join(join(x1._0)), zip(gv._1, gv._2))))),
//             zip(
//               transpose(
//                 map(
//                   fun(win1) =>
//                     transpose(
//                       map(
//                         transpose,
//                         map(
//                           fun(row10) => map(fun(px1) => split((C/2), px1), row10),
//                           map(fun(row11) => row11, win1)))),
//                   join(
//                     map(
//                       transpose,
//                       slide(3, 1,
//                         map(
//                           fun(row12) => slide(3, 1, row12),
//                           transpose(
//                             map(
//                               fun(col1) => pad(1, 1, 0.0f, col1),
//                               transpose(map(fun(row13) => pad(1, 1, 0.0f, row13), input)))))))))),
//               split((M/2), weights),
//               split((M/2), biases)))))))

// // ===== kernel 1 of 2: writes P =====
// Generated by liftpy 0.1.0 from the program:
//
//   def conv3x3s1x1p1_1_1_1d1x1g2_0(input: [[[float]C]W]H, weights: [[[[float](C/2)]3]3]M, biases: [float]M) =
//     mapWrg(2,
//       fun(sp) =>
//         map(
//           join,
//           join(
//             map(
//               transpose,
//               mapWrg(1,
//                 fun(at) =>
//                   mapWrg(0,
//                     fun(bt) =>
//                       map(
//                         fun(row) => split(1, row),
//                         map(
//                           join,
//                           join(
//                             map(
//                               transpose,
//                               mapLcl(1,
//                                 fun(p) =>
//                                   mapLcl(0,
//                                     fun(q) => mapSeqUnroll(fun(r) => mapSeqUnroll(id, r), q),
//                                     p),
//                                 join(
//                                   reduceSeq(
//                                     fun(acc, kc) =>
//                                       let(
//                                         fun(tile) =>
//                                           let(
//                                             fun(tile1) =>
//                                               mapLcl(1,
//                                                 fun(ra) =>
//                                                   mapLcl(0,
//                                                     fun(rb) =>
//                                                       join(
//                                                         reduceSeqUnroll(
//                                                           fun(acc1, kp) =>
//                                                             mapSeqUnroll(
//                                                               fun(pr) =>
//                                                                 mapSeqUnroll(
//                                                                   fun(pc) =>
//                                                                     multAndSumUp(pc._0, pr._1, pc._1),
//                                                                   zip(pr._0, kp._1)),
//                                                               zip(acc1, kp._0)),
//                                                           toPrivate(
//                                                             mapSeqUnroll(
//                                                               fun(y) => mapSeqUnroll(id, y),
//                                                               rb._0)),
//                                                           zip(transpose(ra._1), transpose(rb._1)))),
//                                                     zip(ra._0, split(r1, transpose(tile1)))),
//                                                 zip(acc, split(r0, transpose(tile)))),
//                                             toLocalDouble(transpose(kc._1))),
//                                         toLocalDouble(transpose(kc._0))),
//                                     toPrivate(
//                                       mapLcl(1,
//                                         fun(p1) =>
//                                           mapLcl(0,
//                                             fun(q1) =>
//                                               mapSeqUnroll(fun(r2) => mapSeqUnroll(id, r2), q1),
//                                             p1),
//                                         value(0.0f, [[[[float]r1]r0](n0/r1)](m0/r0)))),
//                                     zip(
//                                       transpose(map(fun(row1) => split(k0, row1), at)),
//                                       transpose(map(fun(row2) => split(k0, row2), bt)))))))))),
//                     split(n0, sp._1)),
//                 split(m0, sp._0))))),
//       join(
//         map(
//           fun(gv) =>
//             zip(
//               transpose(map(fun(row3) => split(ks0, row3), map(fun(x) => join(join(x)), gv._0))),
//               transpose(
//                 map(
//                   fun(row4) => split(ks0, row4),
//                   map(fun(x1) => join(join(x1._0)), zip(gv._1, gv._2))))),
//           zip(
//             transpose(
//               map(
//                 fun(win) =>
//                   transpose(
//                     map(
//                       transpose,
//                       map(
//                         fun(row5) => map(fun(px) => split((C/2), px), row5),
//                         map(fun(row6) => row6, win)))),
//                 join(
//                   map(
//                     transpose,
//                     slide(3, 1,
//                       map(
//                         fun(row7) => slide(3, 1, row7),
//                         transpose(
//                           map(
//                             fun(col) => pad(1, 1, 0.0f, col),
//                             transpose(map(fun(row8) => pad(1, 1, 0.0f, row8), input)))))))))),
//             split((M/2), weights),
//             split((M/2), biases)))))
//
// sizes: C = 1024, H = 7, M = 1024, W = 7
// tuning parameters: k0 = 16, ks0 = 144, m0 = 49, n0 = 128, r0 = 7, r1 = 4
// launch: global (128, 7, 64), local (32, 7, 1)

float id_float(float x) {
  return x;
}

float multAndSumUp_float(float acc, float x, float y) {
  return acc + x * y;
}

__attribute__((reqd_work_group_size(32, 7, 1)))
kernel void conv3x3s1x1p1_1_1_1d1x1g2_0(
    global const float* restrict input,
    global const float* restrict weights,
    global const float* restrict biases,
    global float* restrict out) {
  local float loc_0[1568] __attribute__((aligned(16)));
  local float loc_1[4096] __attribute__((aligned(16)));
  {  // mapWrg(2)
    int wg_0 = get_group_id(2);
    int a_0 = ((wg_0 % 32) * 9) % 32;
    int a_1 = wg_0 / 32;
    int a_3 = (((wg_0 % 32) * 9) / 32) % 3;
    int a_4 = ((wg_0 % 32) * 3) / 32;
    {  // mapWrg(1)
      int wg_1 = get_group_id(1);
      {  // mapWrg(0)
        int wg_2 = get_group_id(0);
        float acc_0[28];
        {  // mapLcl(1)
          int l_0 = get_local_id(1);
          {  // mapLcl(0)
            int l_1 = get_local_id(0);
            acc_0[0] = id_float(0.0f);
            acc_0[1] = id_float(0.0f);
            acc_0[2] = id_float(0.0f);
            acc_0[3] = id_float(0.0f);
            acc_0[4] = id_float(0.0f);
            acc_0[5] = id_float(0.0f);
            acc_0[6] = id_float(0.0f);
            acc_0[7] = id_float(0.0f);
            acc_0[8] = id_float(0.0f);
            acc_0[9] = id_float(0.0f);
            acc_0[10] = id_float(0.0f);
            acc_0[11] = id_float(0.0f);
            acc_0[12] = id_float(0.0f);
            acc_0[13] = id_float(0.0f);
            acc_0[14] = id_float(0.0f);
            acc_0[15] = id_float(0.0f);
            acc_0[16] = id_float(0.0f);
            acc_0[17] = id_float(0.0f);
            acc_0[18] = id_float(0.0f);
            acc_0[19] = id_float(0.0f);
            acc_0[20] = id_float(0.0f);
            acc_0[21] = id_float(0.0f);
            acc_0[22] = id_float(0.0f);
            acc_0[23] = id_float(0.0f);
            acc_0[24] = id_float(0.0f);
            acc_0[25] = id_float(0.0f);
            acc_0[26] = id_float(0.0f);
            acc_0[27] = id_float(0.0f);
          }
        }
        float pf0[4];
        {  // work-items of the copy (0)
          int lc0_0 = get_local_id(0);
          int a_6 = lc0_0 % 16;
          {  // work-items of the copy (1)
            int lc0_1 = get_local_id(1);
            int a_2 = (lc0_1 * 2 + (lc0_0 / 16)) % 7;
            int a_5 = (lc0_1 * 2 + (lc0_0 / 16)) / 7;
            {  // work-items of the copy (2)
              int lc0_2 = get_local_id(2);
              pf0[0] = ((a_4 + a_5 - 1 >= 0) ? (((a_2 + a_3 - 1 >= 0) && (a_2 + a_3 - 8 < 0)) ? input[a_0 * 16 + a_1 * 512 + a_2 * 1024 + a_3 * 1024 + a_4 * 7168 + a_5 * 7168 + a_6 - 8192] : 0.0f) : 0.0f);
              pf0[1] = (((a_2 + a_3 - 1 >= 0) && (a_2 + a_3 - 8 < 0)) ? input[a_0 * 16 + a_1 * 512 + a_2 * 1024 + a_3 * 1024 + a_4 * 7168 + a_5 * 7168 + a_6 + 6144] : 0.0f);
              pf0[2] = (((a_2 + a_3 - 1 >= 0) && (a_2 + a_3 - 8 < 0)) ? input[a_0 * 16 + a_1 * 512 + a_2 * 1024 + a_3 * 1024 + a_4 * 7168 + a_5 * 7168 + a_6 + 20480] : 0.0f);
              if (lc0_0 + lc0_1 * 32 - 112 < 0) {
                pf0[3] = ((a_4 + a_5 - 2 < 0) ? (((a_2 + a_3 - 1 >= 0) && (a_2 + a_3 - 8 < 0)) ? input[a_0 * 16 + a_1 * 512 + a_2 * 1024 + a_3 * 1024 + a_4 * 7168 + a_5 * 7168 + a_6 + 34816] : 0.0f) : 0.0f);
              }
            }
          }
        }
        float pf1[10];
        {  // work-items of the copy (0)
          int lc1_0 = get_local_id(0);
          int a_7 = lc1_0 / 16;
          int a_8 = lc1_0 % 16;
          {  // work-items of the copy (1)
            int lc1_1 = get_local_id(1);
            {  // work-items of the copy (2)
              int lc1_2 = get_local_id(2);
              pf1[0] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824];
              pf1[1] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 64512];
              pf1[2] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 129024];
              pf1[3] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 193536];
              pf1[4] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 258048];
              pf1[5] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 322560];
              pf1[6] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 387072];
              pf1[7] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 451584];
              pf1[8] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 516096];
              if (lc1_0 + lc1_1 * 32 - 32 < 0) {
                pf1[9] = weights[a_0 * 16 + a_1 * 2359296 + a_3 * 512 + a_4 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 580608];
              }
            }
          }
        }
        for (int i_2 = 0; i_2 < 9; i_2++) {  // reduceSeq
          int a_11 = (i_2 + (wg_0 % 32) * 9 + 1) % 32;
          int a_12 = ((i_2 + (wg_0 % 32) * 9 + 1) / 32) % 3;
          int a_13 = (i_2 + (wg_0 % 32) * 9 + 1) / 96;
          int a_9 = i_2 % 2;
          {  // work-items of the copy (0)
            int lc0_0 = get_local_id(0);
            int a_10 = lc0_0 / 16;
            int a_6 = lc0_0 % 16;
            {  // work-items of the copy (1)
              int lc0_1 = get_local_id(1);
              {  // work-items of the copy (2)
                int lc0_2 = get_local_id(2);
                loc_0[a_10 + a_6 * 49 + a_9 * 784 + lc0_1 * 2] = pf0[0];
                loc_0[a_10 + a_6 * 49 + a_9 * 784 + lc0_1 * 2 + 14] = pf0[1];
                loc_0[a_10 + a_6 * 49 + a_9 * 784 + lc0_1 * 2 + 28] = pf0[2];
                if (lc0_0 + lc0_1 * 32 - 112 < 0) {
                  loc_0[a_10 + a_6 * 49 + a_9 * 784 + lc0_1 * 2 + 42] = pf0[3];
                }
              }
            }
          }
          {  // work-items of the copy (0)
            int lc1_0 = get_local_id(0);
            int a_7 = lc1_0 / 16;
            int a_8 = lc1_0 % 16;
            {  // work-items of the copy (1)
              int lc1_1 = get_local_id(1);
              {  // work-items of the copy (2)
                int lc1_2 = get_local_id(2);
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2] = pf1[0];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 14] = pf1[1];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 28] = pf1[2];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 42] = pf1[3];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 56] = pf1[4];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 70] = pf1[5];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 84] = pf1[6];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 98] = pf1[7];
                loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 112] = pf1[8];
                if (lc1_0 + lc1_1 * 32 - 32 < 0) {
                  loc_1[a_7 + a_8 * 128 + a_9 * 2048 + lc1_1 * 2 + 126] = pf1[9];
                }
              }
            }
          }
          barrier(CLK_LOCAL_MEM_FENCE);
          if (i_2 - 8 < 0) {
            {  // work-items of the copy (0)
              int lc0_0 = get_local_id(0);
              int a_6 = lc0_0 % 16;
              {  // work-items of the copy (1)
                int lc0_1 = get_local_id(1);
                int a_2 = (lc0_1 * 2 + (lc0_0 / 16)) % 7;
                int a_5 = (lc0_1 * 2 + (lc0_0 / 16)) / 7;
                {  // work-items of the copy (2)
                  int lc0_2 = get_local_id(2);
                  pf0[0] = ((a_13 + a_5 - 1 >= 0) ? (((a_12 + a_2 - 1 >= 0) && (a_12 + a_2 - 8 < 0)) ? input[a_1 * 512 + a_11 * 16 + a_12 * 1024 + a_13 * 7168 + a_2 * 1024 + a_5 * 7168 + a_6 - 8192] : 0.0f) : 0.0f);
                  pf0[1] = (((a_12 + a_2 - 1 >= 0) && (a_12 + a_2 - 8 < 0)) ? input[a_1 * 512 + a_11 * 16 + a_12 * 1024 + a_13 * 7168 + a_2 * 1024 + a_5 * 7168 + a_6 + 6144] : 0.0f);
                  pf0[2] = ((a_13 + a_5 - 4 < 0) ? (((a_12 + a_2 - 1 >= 0) && (a_12 + a_2 - 8 < 0)) ? input[a_1 * 512 + a_11 * 16 + a_12 * 1024 + a_13 * 7168 + a_2 * 1024 + a_5 * 7168 + a_6 + 20480] : 0.0f) : 0.0f);
                  if (lc0_0 + lc0_1 * 32 - 112 < 0) {
                    pf0[3] = ((a_13 + a_5 - 2 < 0) ? (((a_12 + a_2 - 1 >= 0) && (a_12 + a_2 - 8 < 0)) ? input[a_1 * 512 + a_11 * 16 + a_12 * 1024 + a_13 * 7168 + a_2 * 1024 + a_5 * 7168 + a_6 + 34816] : 0.0f) : 0.0f);
                  }
                }
              }
            }
            {  // work-items of the copy (0)
              int lc1_0 = get_local_id(0);
              int a_7 = lc1_0 / 16;
              int a_8 = lc1_0 % 16;
              {  // work-items of the copy (1)
                int lc1_1 = get_local_id(1);
                {  // work-items of the copy (2)
                  int lc1_2 = get_local_id(2);
                  pf1[0] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824];
                  pf1[1] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 64512];
                  pf1[2] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 129024];
                  pf1[3] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 193536];
                  pf1[4] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 258048];
                  pf1[5] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 322560];
                  pf1[6] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 387072];
                  pf1[7] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 451584];
                  pf1[8] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 516096];
                  if (lc1_0 + lc1_1 * 32 - 32 < 0) {
                    pf1[9] = weights[a_1 * 2359296 + a_11 * 16 + a_12 * 512 + a_13 * 1536 + a_7 * 4608 + a_8 + lc1_1 * 9216 + wg_2 * 589824 + 580608];
                  }
                }
              }
            }
          }
          {  // mapLcl(1)
            int l_2 = get_local_id(1);
            {  // mapLcl(0)
              int l_3 = get_local_id(0);
              float acc_1[28];
              acc_1[0] = id_float(acc_0[0]);
              acc_1[1] = id_float(acc_0[1]);
              acc_1[2] = id_float(acc_0[2]);
              acc_1[3] = id_float(acc_0[3]);
              acc_1[4] = id_float(acc_0[4]);
              acc_1[5] = id_float(acc_0[5]);
              acc_1[6] = id_float(acc_0[6]);
              acc_1[7] = id_float(acc_0[7]);
              acc_1[8] = id_float(acc_0[8]);
              acc_1[9] = id_float(acc_0[9]);
              acc_1[10] = id_float(acc_0[10]);
              acc_1[11] = id_float(acc_0[11]);
              acc_1[12] = id_float(acc_0[12]);
              acc_1[13] = id_float(acc_0[13]);
              acc_1[14] = id_float(acc_0[14]);
              acc_1[15] = id_float(acc_0[15]);
              acc_1[16] = id_float(acc_0[16]);
              acc_1[17] = id_float(acc_0[17]);
              acc_1[18] = id_float(acc_0[18]);
              acc_1[19] = id_float(acc_0[19]);
              acc_1[20] = id_float(acc_0[20]);
              acc_1[21] = id_float(acc_0[21]);
              acc_1[22] = id_float(acc_0[22]);
              acc_1[23] = id_float(acc_0[23]);
              acc_1[24] = id_float(acc_0[24]);
              acc_1[25] = id_float(acc_0[25]);
              acc_1[26] = id_float(acc_0[26]);
              acc_1[27] = id_float(acc_0[27]);
              float v0[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4)), 0, v0);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7], v0[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7], v0[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7], v0[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7], v0[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 1], v0[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 1], v0[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 1], v0[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 1], v0[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 2], v0[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 2], v0[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 2], v0[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 2], v0[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 3], v0[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 3], v0[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 3], v0[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 3], v0[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 4], v0[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 4], v0[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 4], v0[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 4], v0[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 5], v0[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 5], v0[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 5], v0[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 5], v0[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 6], v0[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 6], v0[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 6], v0[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 6], v0[3]);
              float v1[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 128)), 0, v1);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 49], v1[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 49], v1[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 49], v1[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 49], v1[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 50], v1[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 50], v1[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 50], v1[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 50], v1[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 51], v1[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 51], v1[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 51], v1[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 51], v1[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 52], v1[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 52], v1[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 52], v1[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 52], v1[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 53], v1[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 53], v1[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 53], v1[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 53], v1[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 54], v1[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 54], v1[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 54], v1[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 54], v1[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 55], v1[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 55], v1[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 55], v1[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 55], v1[3]);
              float v2[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 256)), 0, v2);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 98], v2[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 98], v2[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 98], v2[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 98], v2[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 99], v2[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 99], v2[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 99], v2[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 99], v2[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 100], v2[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 100], v2[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 100], v2[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 100], v2[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 101], v2[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 101], v2[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 101], v2[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 101], v2[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 102], v2[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 102], v2[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 102], v2[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 102], v2[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 103], v2[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 103], v2[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 103], v2[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 103], v2[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 104], v2[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 104], v2[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 104], v2[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 104], v2[3]);
              float v3[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 384)), 0, v3);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 147], v3[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 147], v3[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 147], v3[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 147], v3[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 148], v3[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 148], v3[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 148], v3[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 148], v3[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 149], v3[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 149], v3[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 149], v3[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 149], v3[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 150], v3[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 150], v3[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 150], v3[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 150], v3[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 151], v3[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 151], v3[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 151], v3[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 151], v3[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 152], v3[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 152], v3[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 152], v3[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 152], v3[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 153], v3[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 153], v3[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 153], v3[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 153], v3[3]);
              float v4[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 512)), 0, v4);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 196], v4[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 196], v4[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 196], v4[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 196], v4[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 197], v4[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 197], v4[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 197], v4[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 197], v4[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 198], v4[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 198], v4[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 198], v4[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 198], v4[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 199], v4[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 199], v4[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 199], v4[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 199], v4[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 200], v4[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 200], v4[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 200], v4[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 200], v4[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 201], v4[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 201], v4[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 201], v4[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 201], v4[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 202], v4[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 202], v4[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 202], v4[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 202], v4[3]);
              float v5[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 640)), 0, v5);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 245], v5[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 245], v5[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 245], v5[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 245], v5[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 246], v5[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 246], v5[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 246], v5[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 246], v5[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 247], v5[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 247], v5[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 247], v5[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 247], v5[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 248], v5[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 248], v5[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 248], v5[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 248], v5[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 249], v5[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 249], v5[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 249], v5[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 249], v5[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 250], v5[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 250], v5[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 250], v5[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 250], v5[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 251], v5[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 251], v5[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 251], v5[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 251], v5[3]);
              float v6[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 768)), 0, v6);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 294], v6[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 294], v6[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 294], v6[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 294], v6[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 295], v6[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 295], v6[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 295], v6[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 295], v6[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 296], v6[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 296], v6[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 296], v6[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 296], v6[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 297], v6[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 297], v6[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 297], v6[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 297], v6[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 298], v6[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 298], v6[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 298], v6[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 298], v6[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 299], v6[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 299], v6[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 299], v6[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 299], v6[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 300], v6[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 300], v6[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 300], v6[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 300], v6[3]);
              float v7[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 896)), 0, v7);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 343], v7[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 343], v7[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 343], v7[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 343], v7[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 344], v7[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 344], v7[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 344], v7[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 344], v7[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 345], v7[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 345], v7[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 345], v7[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 345], v7[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 346], v7[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 346], v7[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 346], v7[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 346], v7[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 347], v7[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 347], v7[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 347], v7[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 347], v7[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 348], v7[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 348], v7[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 348], v7[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 348], v7[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 349], v7[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 349], v7[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 349], v7[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 349], v7[3]);
              float v8[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1024)), 0, v8);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 392], v8[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 392], v8[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 392], v8[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 392], v8[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 393], v8[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 393], v8[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 393], v8[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 393], v8[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 394], v8[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 394], v8[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 394], v8[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 394], v8[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 395], v8[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 395], v8[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 395], v8[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 395], v8[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 396], v8[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 396], v8[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 396], v8[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 396], v8[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 397], v8[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 397], v8[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 397], v8[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 397], v8[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 398], v8[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 398], v8[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 398], v8[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 398], v8[3]);
              float v9[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1152)), 0, v9);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 441], v9[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 441], v9[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 441], v9[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 441], v9[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 442], v9[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 442], v9[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 442], v9[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 442], v9[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 443], v9[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 443], v9[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 443], v9[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 443], v9[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 444], v9[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 444], v9[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 444], v9[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 444], v9[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 445], v9[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 445], v9[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 445], v9[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 445], v9[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 446], v9[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 446], v9[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 446], v9[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 446], v9[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 447], v9[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 447], v9[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 447], v9[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 447], v9[3]);
              float v10[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1280)), 0, v10);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 490], v10[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 490], v10[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 490], v10[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 490], v10[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 491], v10[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 491], v10[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 491], v10[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 491], v10[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 492], v10[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 492], v10[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 492], v10[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 492], v10[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 493], v10[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 493], v10[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 493], v10[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 493], v10[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 494], v10[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 494], v10[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 494], v10[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 494], v10[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 495], v10[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 495], v10[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 495], v10[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 495], v10[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 496], v10[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 496], v10[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 496], v10[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 496], v10[3]);
              float v11[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1408)), 0, v11);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 539], v11[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 539], v11[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 539], v11[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 539], v11[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 540], v11[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 540], v11[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 540], v11[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 540], v11[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 541], v11[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 541], v11[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 541], v11[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 541], v11[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 542], v11[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 542], v11[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 542], v11[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 542], v11[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 543], v11[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 543], v11[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 543], v11[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 543], v11[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 544], v11[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 544], v11[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 544], v11[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 544], v11[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 545], v11[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 545], v11[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 545], v11[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 545], v11[3]);
              float v12[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1536)), 0, v12);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 588], v12[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 588], v12[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 588], v12[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 588], v12[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 589], v12[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 589], v12[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 589], v12[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 589], v12[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 590], v12[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 590], v12[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 590], v12[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 590], v12[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 591], v12[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 591], v12[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 591], v12[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 591], v12[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 592], v12[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 592], v12[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 592], v12[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 592], v12[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 593], v12[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 593], v12[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 593], v12[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 593], v12[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 594], v12[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 594], v12[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 594], v12[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 594], v12[3]);
              float v13[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1664)), 0, v13);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 637], v13[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 637], v13[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 637], v13[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 637], v13[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 638], v13[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 638], v13[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 638], v13[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 638], v13[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 639], v13[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 639], v13[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 639], v13[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 639], v13[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 640], v13[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 640], v13[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 640], v13[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 640], v13[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 641], v13[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 641], v13[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 641], v13[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 641], v13[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 642], v13[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 642], v13[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 642], v13[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 642], v13[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 643], v13[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 643], v13[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 643], v13[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 643], v13[3]);
              float v14[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1792)), 0, v14);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 686], v14[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 686], v14[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 686], v14[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 686], v14[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 687], v14[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 687], v14[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 687], v14[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 687], v14[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 688], v14[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 688], v14[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 688], v14[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 688], v14[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 689], v14[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 689], v14[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 689], v14[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 689], v14[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 690], v14[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 690], v14[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 690], v14[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 690], v14[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 691], v14[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 691], v14[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 691], v14[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 691], v14[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 692], v14[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 692], v14[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 692], v14[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 692], v14[3]);
              float v15[4];
              vstore4(*((local float4*)(loc_1 + a_9 * 2048 + l_3 * 4 + 1920)), 0, v15);
              acc_1[0] = multAndSumUp_float(acc_1[0], loc_0[a_9 * 784 + l_2 * 7 + 735], v15[0]);
              acc_1[1] = multAndSumUp_float(acc_1[1], loc_0[a_9 * 784 + l_2 * 7 + 735], v15[1]);
              acc_1[2] = multAndSumUp_float(acc_1[2], loc_0[a_9 * 784 + l_2 * 7 + 735], v15[2]);
              acc_1[3] = multAndSumUp_float(acc_1[3], loc_0[a_9 * 784 + l_2 * 7 + 735], v15[3]);
              acc_1[4] = multAndSumUp_float(acc_1[4], loc_0[a_9 * 784 + l_2 * 7 + 736], v15[0]);
              acc_1[5] = multAndSumUp_float(acc_1[5], loc_0[a_9 * 784 + l_2 * 7 + 736], v15[1]);
              acc_1[6] = multAndSumUp_float(acc_1[6], loc_0[a_9 * 784 + l_2 * 7 + 736], v15[2]);
              acc_1[7] = multAndSumUp_float(acc_1[7], loc_0[a_9 * 784 + l_2 * 7 + 736], v15[3]);
              acc_1[8] = multAndSumUp_float(acc_1[8], loc_0[a_9 * 784 + l_2 * 7 + 737], v15[0]);
              acc_1[9] = multAndSumUp_float(acc_1[9], loc_0[a_9 * 784 + l_2 * 7 + 737], v15[1]);
              acc_1[10] = multAndSumUp_float(acc_1[10], loc_0[a_9 * 784 + l_2 * 7 + 737], v15[2]);
              acc_1[11] = multAndSumUp_float(acc_1[11], loc_0[a_9 * 784 + l_2 * 7 + 737], v15[3]);
              acc_1[12] = multAndSumUp_float(acc_1[12], loc_0[a_9 * 784 + l_2 * 7 + 738], v15[0]);
              acc_1[13] = multAndSumUp_float(acc_1[13], loc_0[a_9 * 784 + l_2 * 7 + 738], v15[1]);
              acc_1[14] = multAndSumUp_float(acc_1[14], loc_0[a_9 * 784 + l_2 * 7 + 738], v15[2]);
              acc_1[15] = multAndSumUp_float(acc_1[15], loc_0[a_9 * 784 + l_2 * 7 + 738], v15[3]);
              acc_1[16] = multAndSumUp_float(acc_1[16], loc_0[a_9 * 784 + l_2 * 7 + 739], v15[0]);
              acc_1[17] = multAndSumUp_float(acc_1[17], loc_0[a_9 * 784 + l_2 * 7 + 739], v15[1]);
              acc_1[18] = multAndSumUp_float(acc_1[18], loc_0[a_9 * 784 + l_2 * 7 + 739], v15[2]);
              acc_1[19] = multAndSumUp_float(acc_1[19], loc_0[a_9 * 784 + l_2 * 7 + 739], v15[3]);
              acc_1[20] = multAndSumUp_float(acc_1[20], loc_0[a_9 * 784 + l_2 * 7 + 740], v15[0]);
              acc_1[21] = multAndSumUp_float(acc_1[21], loc_0[a_9 * 784 + l_2 * 7 + 740], v15[1]);
              acc_1[22] = multAndSumUp_float(acc_1[22], loc_0[a_9 * 784 + l_2 * 7 + 740], v15[2]);
              acc_1[23] = multAndSumUp_float(acc_1[23], loc_0[a_9 * 784 + l_2 * 7 + 740], v15[3]);
              acc_1[24] = multAndSumUp_float(acc_1[24], loc_0[a_9 * 784 + l_2 * 7 + 741], v15[0]);
              acc_1[25] = multAndSumUp_float(acc_1[25], loc_0[a_9 * 784 + l_2 * 7 + 741], v15[1]);
              acc_1[26] = multAndSumUp_float(acc_1[26], loc_0[a_9 * 784 + l_2 * 7 + 741], v15[2]);
              acc_1[27] = multAndSumUp_float(acc_1[27], loc_0[a_9 * 784 + l_2 * 7 + 741], v15[3]);
              acc_0[0] = acc_1[0];
              acc_0[1] = acc_1[1];
              acc_0[2] = acc_1[2];
              acc_0[3] = acc_1[3];
              acc_0[4] = acc_1[4];
              acc_0[5] = acc_1[5];
              acc_0[6] = acc_1[6];
              acc_0[7] = acc_1[7];
              acc_0[8] = acc_1[8];
              acc_0[9] = acc_1[9];
              acc_0[10] = acc_1[10];
              acc_0[11] = acc_1[11];
              acc_0[12] = acc_1[12];
              acc_0[13] = acc_1[13];
              acc_0[14] = acc_1[14];
              acc_0[15] = acc_1[15];
              acc_0[16] = acc_1[16];
              acc_0[17] = acc_1[17];
              acc_0[18] = acc_1[18];
              acc_0[19] = acc_1[19];
              acc_0[20] = acc_1[20];
              acc_0[21] = acc_1[21];
              acc_0[22] = acc_1[22];
              acc_0[23] = acc_1[23];
              acc_0[24] = acc_1[24];
              acc_0[25] = acc_1[25];
              acc_0[26] = acc_1[26];
              acc_0[27] = acc_1[27];
            }
          }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        {  // mapLcl(1)
          int l_4 = get_local_id(1);
          {  // mapLcl(0)
            int l_5 = get_local_id(0);
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128)) = ((float4)(id_float(acc_0[0]), id_float(acc_0[1]), id_float(acc_0[2]), id_float(acc_0[3])));
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128 + 512)) = ((float4)(id_float(acc_0[4]), id_float(acc_0[5]), id_float(acc_0[6]), id_float(acc_0[7])));
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128 + 1024)) = ((float4)(id_float(acc_0[8]), id_float(acc_0[9]), id_float(acc_0[10]), id_float(acc_0[11])));
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128 + 1536)) = ((float4)(id_float(acc_0[12]), id_float(acc_0[13]), id_float(acc_0[14]), id_float(acc_0[15])));
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128 + 2048)) = ((float4)(id_float(acc_0[16]), id_float(acc_0[17]), id_float(acc_0[18]), id_float(acc_0[19])));
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128 + 2560)) = ((float4)(id_float(acc_0[20]), id_float(acc_0[21]), id_float(acc_0[22]), id_float(acc_0[23])));
            *((global float4*)(out + l_4 * 3584 + l_5 * 4 + wg_0 * 25088 + wg_2 * 128 + 3072)) = ((float4)(id_float(acc_0[24]), id_float(acc_0[25]), id_float(acc_0[26]), id_float(acc_0[27])));
          }
        }
      }
    }
  }
}

// ===== kernel 2 of 2: writes out =====
// Generated by liftpy 0.1.0 from the program:
//
//   def conv3x3s1x1p1_1_1_1d1x1g2_1(input: [[[float]C]W]H, weights: [[[[float](C/2)]3]3]M, biases: [float]M, P: [[[[float]1](M/2)](H*W)](9*C/ks0)) =
//     split(W,
//       map(
//         join,
//         transpose(
//           mapGlb(2,
//             fun(pg) =>
//               mapGlb(1,
//                 fun(row) =>
//                   mapGlb(0,
//                     fun(q) => reduceSeqUnroll(add, toPrivate(id(q._1._1)), q._0),
//                     zip(row, zip(pg._1._1, pg._1._2))),
//                 map(transpose, transpose(map(fun(plane) => map(join, plane), pg._0)))),
//             zip(
//               split((9*C/(2*ks0)), P),
//               zip(
//                 transpose(
//                   map(
//                     fun(win) =>
//                       transpose(
//                         map(
//                           transpose,
//                           map(
//                             fun(row1) => map(fun(px) => split((C/2), px), row1),
//                             map(fun(row2) => row2, win)))),
//                     join(
//                       map(
//                         transpose,
//                         slide(3, 1,
//                           map(
//                             fun(row3) => slide(3, 1, row3),
//                             transpose(
//                               map(
//                                 fun(col) => pad(1, 1, 0.0f, col),
//                                 transpose(map(fun(row4) => pad(1, 1, 0.0f, row4), input)))))))))),
//                 split((M/2), weights),
//                 split((M/2), biases)))))))
//
// sizes: C = 1024, H = 7, M = 1024, W = 7, ks0 = 144
// tuning parameters: k0 = 16, m0 = 49, n0 = 128, r0 = 7, r1 = 4
// launch: global (512, 49, 2), local driver's choice

float id_float(float x) {
  return x;
}

float add_float(float x, float y) {
  return x + y;
}

kernel void conv3x3s1x1p1_1_1_1d1x1g2_1(
    global const float* restrict input,
    global const float* restrict weights,
    global const float* restrict biases,
    global const float* restrict P,
    global float* restrict out) {
  {  // mapGlb(2)
    int gl_0 = get_global_id(2);
    {  // mapGlb(1)
      int gl_1 = get_global_id(1);
      int a_0 = gl_1 % 7;
      int a_1 = gl_1 / 7;
      {  // mapGlb(0)
        int gl_2 = get_global_id(0);
        float acc_0;
        acc_0 = id_float(biases[gl_0 * 512 + gl_2]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 25088]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 50176]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 75264]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 100352]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 125440]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 150528]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 175616]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 200704]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 225792]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 250880]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 275968]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 301056]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 326144]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 351232]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 376320]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 401408]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 426496]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 451584]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 476672]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 501760]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 526848]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 551936]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 577024]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 602112]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 627200]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 652288]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 677376]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 702464]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 727552]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 752640]);
        acc_0 = add_float(acc_0, P[gl_0 * 802816 + gl_1 * 512 + gl_2 + 777728]);
        out[a_0 * 1024 + a_1 * 7168 + gl_0 * 512 + gl_2] = acc_0;
      }
    }
  }
}

