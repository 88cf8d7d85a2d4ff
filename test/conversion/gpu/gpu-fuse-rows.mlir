// RUN: gradir-opt %s --split-input-file --gpu-fuse-rows --canonicalize --cse | FileCheck %s

// Softmax over rows of 100: the fill, max, exp, sum and divide as one kernel,
// 128 threads per row striding over it, 2 rows per block (32 rows: 16
// blocks); each reduction is a tree in workgroup memory whose total every
// thread of the row reads back (the max starts from the fill's -inf, which
// canonicalize folds).  The threads read back the exponentials they stored;
// the max and the sum are stored by thread x 0 of each row at the end.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[X:.*]]: memref<32x100xf32>, %[[Y:.*]]: memref<32x100xf32>, %[[M:.*]]: memref<32xf32>, %[[S:.*]]: memref<32xf32>)
// CHECK-NOT:  linalg.generic
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c16, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in ({{.*}} = %c128, {{.*}} = %c2, {{.*}} = %c1) module(@softmax_kernels) function(@softmax_rows_0) workgroup(%[[WM:.*]] : memref<2x128xf32, #gpu.address_space<workgroup>>, %[[WS:.*]] : memref<2x128xf32, #gpu.address_space<workgroup>>) {
// CHECK:        %[[PM:.*]] = scf.for %{{.*}} = %[[TX]] to %c100 step %c128 iter_args(%{{.*}} = %cst{{.*}}) -> (f32) {
// CHECK:          arith.maximumf
// CHECK:        memref.store %[[PM]], %[[WM]][%[[TY]], %[[TX]]]
// CHECK-NEXT:   gpu.barrier
// CHECK-COUNT-7: gpu.barrier
// CHECK:        %[[MAX:.*]] = memref.load %[[WM]][%[[TY]], %c0]
// CHECK:        scf.for %[[I:.*]] = %[[TX]] to %c100 step %c128 {
// CHECK:          %[[V:.*]] = memref.load %[[X]]
// CHECK-NEXT:     %[[D:.*]] = arith.subf %[[V]], %[[MAX]]
// CHECK-NEXT:     %[[E:.*]] = math.exp %[[D]]
// CHECK-NEXT:     memref.store %[[E]], %[[Y]]
// CHECK:        scf.for
// CHECK:          memref.load %[[Y]]
// CHECK:        gpu.barrier
// CHECK:        %[[SUM:.*]] = memref.load %[[WS]][%[[TY]], %c0]
// CHECK:        scf.for
// CHECK:          arith.divf %{{.*}}, %[[SUM]]
// CHECK:        %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK:        scf.if %[[FIRST]] {
// CHECK-NEXT:     memref.store %[[MAX]], %[[M]]
// CHECK-NEXT:     memref.store %[[SUM]], %[[S]]
// CHECK:        gpu.terminator
// CHECK-NOT:  linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#r = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @softmax(%x: memref<32x100xf32>, %y: memref<32x100xf32>, %m: memref<32xf32>, %s: memref<32xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [#s, #r], iterator_types = ["parallel"]}
      ins(%ninf : f32) outs(%m : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x100xf32>) outs(%m : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<32x100xf32>, memref<32xf32>) outs(%y : memref<32x100xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<32x100xf32>) outs(%s : memref<32xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %s : memref<32x100xf32>, memref<32xf32>) outs(%y : memref<32x100xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %in, %sum : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Layer-norm statistics as the importer writes them: the mean (a sum, then a
// division over the rows only, which every thread computes) and the variance
// reading the mean through a view with a unit dim; then the normalisation
// over the rows times the inner dim.  One kernel: 6 rows of 48 (64 threads
// per row, 4 rows per block, the second block half full: rows 6 and 7 do no
// work but reach every barrier).  The mean is a result, stored by thread x 0
// of each row; the sum and the variance are device buffers only the chain
// uses (then deallocated): not stored.
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:.*]]: memref<2x3x48xf32>, %[[G:.*]]: memref<48xf32>, %[[Y:.*]]: memref<2x3x48xf32>, %[[MEAN:.*]]: memref<2x3xf32>)
// CHECK-NOT:  linalg.generic
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in ({{.*}} = %c64, {{.*}} = %c4, {{.*}} = %c1) module(@layer_norm_kernels) function(@layer_norm_rows_0)
// CHECK:        %[[VALID:.*]] = arith.cmpi ult, %{{.*}}, %c6
// CHECK:        %[[UB:.*]] = arith.select %[[VALID]], %c48, %c0
// CHECK:        scf.for %{{.*}} = %[[TX]] to %[[UB]] step %c64
// CHECK:        %[[S:.*]] = memref.load %{{.*}}[%[[TY]], %c0]
// CHECK:        %[[M:.*]] = arith.divf %[[S]], %cst
// CHECK:        scf.for %{{.*}} = %[[TX]] to %[[UB]] step %c64
// CHECK:          arith.subf %{{.*}}, %[[M]]
// CHECK:        %[[V:.*]] = memref.load %{{.*}}[%[[TY]], %c0]
// CHECK:        scf.for %{{.*}} = %[[TX]] to %[[UB]] step %c64
// CHECK:          memref.store %{{.*}}, %[[Y]]
// CHECK:        %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK:        %[[STORE:.*]] = arith.andi %[[FIRST]], %[[VALID]]
// CHECK:        scf.if %[[STORE]] {
// CHECK-NEXT:     memref.store %[[M]], %[[MEAN]]
// CHECK-NEXT:   }
// CHECK-NEXT:   gpu.terminator
// CHECK-NOT:  linalg.generic
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#g3 = affine_map<(d0, d1, d2) -> (d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#x4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#r4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @layer_norm(%x: memref<2x3x48xf32>, %g: memref<48xf32>, %y: memref<2x3x48xf32>,
                      %mean: memref<2x3xf32>) {
  %n = arith.constant 48.0 : f32
  %sum = gpu.alloc () : memref<2x3xf32>
  linalg.generic {indexing_maps = [#x3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x3x48xf32>) outs(%sum : memref<2x3xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<2x3xf32>) outs(%mean : memref<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %n : f32
    linalg.yield %0 : f32
  }
  %xv = memref.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 1, 3, 48] : memref<2x3x48xf32> into memref<2x1x3x48xf32>
  %mv = memref.expand_shape %mean [[0], [1, 2]] output_shape [2, 1, 3] : memref<2x3xf32> into memref<2x1x3xf32>
  %var = gpu.alloc () : memref<2x1x3xf32>
  linalg.generic {indexing_maps = [#x4, #r4, #r4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%xv, %mv : memref<2x1x3x48xf32>, memref<2x1x3xf32>) outs(%var : memref<2x1x3xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %mu: f32, %out: f32):
    %0 = arith.subf %in, %mu : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.addf %1, %out : f32
    linalg.yield %2 : f32
  }
  %vv = memref.collapse_shape %var [[0, 1], [2]] : memref<2x1x3xf32> into memref<2x3xf32>
  linalg.generic {indexing_maps = [#x3, #r3, #r3, #g3, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mean, %vv, %g : memref<2x3x48xf32>, memref<2x3xf32>, memref<2x3xf32>, memref<48xf32>) outs(%y : memref<2x3x48xf32>) {
  ^bb0(%in: f32, %mu: f32, %v: f32, %w: f32, %out: f32):
    %0 = arith.subf %in, %mu : f32
    %1 = arith.divf %v, %n : f32
    %2 = math.sqrt %1 : f32
    %3 = arith.divf %0, %2 : f32
    %4 = arith.mulf %3, %w : f32
    linalg.yield %4 : f32
  }
  gpu.dealloc %sum : memref<2x3xf32>
  gpu.dealloc %var : memref<2x1x3xf32>
  return
}

// -----

// Batch-norm statistics: per channel (the rows: d1) over batch and space
// (d0, d2, d3: the inner space, threads striding along the spatial dims).
// CHECK-LABEL: func.func @batch_norm_stats(
// CHECK-SAME: %[[X:.*]]: memref<4x5x10x10xf32>, %[[MEAN:.*]]: memref<5xf32>, %[[VAR:.*]]: memref<5xf32>)
// CHECK:      gpu.launch blocks(%[[C:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c5, {{.*}} = %c1, {{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) module(@batch_norm_stats_kernels) function(@batch_norm_stats_rows_0)
// CHECK:        scf.for %[[I:.*]] = %[[TX]] to %c400 step %c256
// CHECK-DAG:      %[[N:.*]] = arith.divui %[[I]], %c100
// CHECK-DAG:      %[[H0:.*]] = arith.divui %[[I]], %c10
// CHECK-DAG:      %[[H:.*]] = arith.remui %[[H0]], %c10
// CHECK-DAG:      %[[W:.*]] = arith.remui %[[I]], %c10
// CHECK:          memref.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK:        %[[S:.*]] = memref.load %{{.*}}[%c0, %c0]
// CHECK-NEXT:   %[[M:.*]] = arith.divf %[[S]], %cst
// CHECK:        scf.for %{{.*}} = %[[TX]] to %c400 step %c256
// CHECK:          arith.subf %{{.*}}, %[[M]]
// CHECK:        %[[V:.*]] = memref.load %{{.*}}[%c0, %c0]
// CHECK:        scf.if
// CHECK-NEXT:     memref.store %[[M]], %[[MEAN]][%[[C]]]
// CHECK-NEXT:     memref.store %[[V]], %[[VAR]][%[[C]]]
// CHECK-NOT:  linalg.generic
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c = affine_map<(n, c, h, w) -> (c)>
#c1 = affine_map<(c) -> (c)>
func.func @batch_norm_stats(%x: memref<4x5x10x10xf32>, %mean: memref<5xf32>, %var: memref<5xf32>) {
  %n = arith.constant 400.0 : f32
  linalg.generic {indexing_maps = [#x, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<4x5x10x10xf32>) outs(%mean : memref<5xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#c1, #c1], iterator_types = ["parallel"]}
      ins(%mean : memref<5xf32>) outs(%mean : memref<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %n : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x, #c, #c], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x, %mean : memref<4x5x10x10xf32>, memref<5xf32>) outs(%var : memref<5xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %mu: f32, %out: f32):
    %0 = arith.subf %in, %mu : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.addf %1, %out : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// Left alone: a matmul and its bias (a GEMM, not a row reduction); a sum
// over the middle dim (the rows would not be along the innermost dim); a
// total of 8192 (one row: gpu-linalg-to-kernels splits it over blocks).
// CHECK-LABEL: func.func @not_rows(
// CHECK-NOT:  gpu.launch
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:  gpu.launch
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#mid = affine_map<(d0, d1, d2) -> (d0, d2)>
#all = affine_map<(d0, d1) -> ()>
func.func @not_rows(%a: memref<16x32xf32>, %b: memref<32x24xf32>, %c: memref<16x24xf32>,
                    %x: memref<64x8x128xf32>, %s: memref<64x128xf32>, %t: memref<f32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x32xf32>, memref<32x24xf32>) outs(%c : memref<16x24xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.mulf %in, %in2 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<16x24xf32>) outs(%c : memref<16x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %two : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#x3, #mid], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<64x8x128xf32>) outs(%s : memref<64x128xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<64x128xf32>) outs(%s : memref<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %two : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%s : memref<64x128xf32>) outs(%t : memref<f32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #all, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %t : memref<64x128xf32>, memref<f32>) outs(%s : memref<64x128xf32>) {
  ^bb0(%in: f32, %tot: f32, %out: f32):
    %0 = arith.divf %in, %tot : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A short total (one row of 64, at most 4 x 256) and its use: one block.
// CHECK-LABEL: func.func @small_total(
// CHECK-NOT:  linalg.generic
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c64, {{.*}} = %c1, {{.*}} = %c1) {{.*}} function(@small_total_rows_0)
// CHECK-NOT:  linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @small_total(%s: memref<4x16xf32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%s : memref<4x16xf32>) outs(%t : memref<f32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #all, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %t : memref<4x16xf32>, memref<f32>) outs(%s : memref<4x16xf32>) {
  ^bb0(%in: f32, %tot: f32, %out: f32):
    %0 = arith.divf %in, %tot : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The chain stops where a member would read what another thread wrote: the
// normalised rows read back transposed.  A buffer written per row is read
// from the register of its row, not from memory.
// CHECK-LABEL: func.func @transposed_read(
// CHECK:      gpu.launch {{.*}} function(@transposed_read_rows_0)
// CHECK:        gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @transposed_read(%x: memref<16x16xf32>, %s: memref<16xf32>, %y: memref<16x16xf32>, %z: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16x16xf32>) outs(%s : memref<16xf32>) attrs = {gradir.zero_init} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<16x16xf32>, memref<16xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %in, %sum : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<16x16xf32>) outs(%z : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
