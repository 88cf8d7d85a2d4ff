// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='stage=bufferized cpu=x86-64-v4 threads=1' | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='stage=bufferized cpu=x86-64-v3 threads=1' | FileCheck %s --check-prefix=AVX2
// The schedule loads without a diagnostic (its entry points read their root
// handle, they do not consume it: marked consumed, every lowering printed
// "op argument #0 is not consumed in the body but is marked as consumed"):
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm=threads=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm=threads=2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='cpu=x86-64-v3 threads=2' -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: {{.}}

// The CPU schedule (cpu_schedule.mlir.in): odd matmul sizes are peeled, not
// padded; a transposed lhs is read in place; elementwise generics are
// vectorized by the target's vector width.

// N = 10 is less than one 32-column register tile: the tile is 8x10, no
// operand is copied into a padded buffer, no vector is masked.
// CHECK-LABEL: func.func @odd_n(
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: scf.for {{.*}} iter_args(%{{.*}}) -> (vector<8x10xf32>)
// CHECK-COUNT-8: vector.fma {{.*}} : vector<10xf32>
// CHECK-NOT: vector.mask
// CHECK-NOT: linalg.matmul
// CHECK: return
// AVX2 (8 lanes): the 10 columns are one vector and 2 columns.
// AVX2-LABEL: func.func @odd_n(
// AVX2-NOT: memref.alloc
// AVX2: iter_args(%{{.*}}) -> (vector<6x8xf32>)
// AVX2: iter_args(%{{.*}}) -> (vector<4x8xf32>)
// AVX2: iter_args(%{{.*}}) -> (vector<6x2xf32>)
// AVX2: iter_args(%{{.*}}) -> (vector<4x2xf32>)
// AVX2-NOT: x10xf32>)
// AVX2: return
func.func @odd_n(%a: tensor<64x512xf32>, %w: tensor<512x10xf32>) -> tensor<64x10xf32> {
  %0 = "rlx.matmul"(%a, %w) : (tensor<64x512xf32>, tensor<512x10xf32>) -> tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}

// -----

// 20 x 50: the M and N tile loops are peeled into full 8x32 tiles and
// remainder tiles of 4 rows and of 18 columns, each with a static shape;
// the 18 columns are split into one vector (16) and 2 (a vector<18xf32>
// would be legalized into shuffles and spills around the K loop).
// CHECK-LABEL: func.func @peeled(
// CHECK-NOT: memref.alloc
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<8x32xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<4x32xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<4x16xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<8x2xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<4x2xf32>)
// CHECK-NOT: vector<{{[0-9]+}}x18xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @peeled(%a: tensor<20x784xf32>, %w: tensor<784x50xf32>) -> tensor<20x50xf32> {
  %0 = "rlx.matmul"(%a, %w) : (tensor<20x784xf32>, tensor<784x50xf32>) -> tensor<20x50xf32>
  return %0 : tensor<20x50xf32>
}

// -----

// x^T @ dy: no transposed copy of x; each K step reads 8 contiguous
// elements of a row of x (a column of x^T, as a 1-D vector: the schedule's
// leading-unit-dim cleanup runs once per function) and broadcasts them.
// The only buffer is the packed rhs panel (K = 64 rows of a 32-column tile
// of dy).
// CHECK-LABEL: func.func @lhs_transposed(
// CHECK-SAME: %[[X:[^:]*]]: memref<64x784xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<{{.*}}784
// CHECK: %[[XB:.*]] = memref.subview %[[X]]{{.*}} : memref<64x784xf32> to memref<64x384xf32, strided<[784, 1], offset: ?>>
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<64x32xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: %[[COL:.*]] = memref.subview %[[XB]]{{.*}} [1, 8] [1, 1] : memref<64x384xf32, strided<[784, 1], offset: ?>> to memref<1x8xf32, strided<[784, 1], offset: ?>>
// CHECK-NEXT: %[[PROW:.*]] = memref.subview %[[P]]
// CHECK-NEXT: vector.transfer_read %[[COL]]{{.*}} vector<8xf32>
// CHECK-NEXT: vector.transfer_read %[[PROW]]{{.*}} vector<32xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: vector.transpose
// CHECK: return
func.func @lhs_transposed(%x: tensor<64x784xf32>, %dy: tensor<64x512xf32>) -> tensor<784x512xf32> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<64x784xf32>) -> tensor<784x64xf32>
  %0 = "rlx.matmul"(%xt, %dy) : (tensor<784x64xf32>, tensor<64x512xf32>) -> tensor<784x512xf32>
  return %0 : tensor<784x512xf32>
}

// -----

// Packing: each (K block, N tile) copies its rhs panel (K block rows of one
// register tile's width, rows 100 elements apart in %w) into a contiguous
// buffer, one vector row per step, before the M tiles read it; the peeled
// N remainder (4 columns) packs a 4-wide panel.  The K block's remainder
// (300 = 256 + 44) gives the panel a dynamic row count.  No memref.copy
// (a strided one would call a runtime function).
// CHECK-LABEL: func.func @packed(
// CHECK-SAME: %[[A:[^:]*]]: memref<256x300xf32>, %[[W:[^:]*]]: memref<300x100xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c300 step %c256 {
// CHECK: %[[KB:.*]] = affine.min
// CHECK: scf.for %[[N:.*]] = %c0 to %c96 step %c32 {
// CHECK: %[[P:.*]] = memref.alloc(%[[KB]]) {{.*}} : memref<?x32xf32>
// CHECK-NEXT: scf.for %[[R:.*]] = %c0 to %[[KB]] step %c1 {
// CHECK-NEXT: %[[DST:.*]] = memref.subview %[[P]][%[[R]], 0] [1, 32] [1, 1]
// CHECK: %[[ROW:.*]] = vector.transfer_read %[[W]][%{{.*}}, %[[N]]]{{.*}} : memref<300x100xf32>, vector<32xf32>
// CHECK-NEXT: vector.transfer_write %[[ROW]], %[[DST]][%c0, %c0] {{.*}} : vector<32xf32>, memref<1x32xf32, strided<[32, 1], offset: ?>>
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c8 {
// CHECK: scf.for {{.*}} iter_args(%{{.*}}) -> (vector<8x32xf32>) {
// CHECK: memref.subview %[[P]]
// CHECK: vector.transfer_read {{.*}} : memref<1x32xf32, strided<[32, 1], offset: ?>>, vector<32xf32>
// CHECK: memref.dealloc %[[P]]
// CHECK: %[[P4:.*]] = memref.alloc(%[[KB]]) {{.*}} : memref<?x4xf32>
// CHECK: vector.transfer_read %[[W]][%{{.*}}, %c96]{{.*}} : memref<300x100xf32>, vector<4xf32>
// CHECK: iter_args(%{{.*}}) -> (vector<8x4xf32>)
// CHECK: memref.dealloc %[[P4]]
// CHECK-NOT: memref.copy
// CHECK: return
// AVX2-LABEL: func.func @packed(
// AVX2: memref.alloc(%{{.*}}) {{.*}} : memref<?x16xf32>
// AVX2: vector.transfer_read {{.*}} : memref<300x100xf32>, vector<16xf32>
// AVX2: iter_args(%{{.*}}) -> (vector<6x16xf32>)
// AVX2: iter_args(%{{.*}}) -> (vector<4x16xf32>)
// AVX2: memref.alloc(%{{.*}}) {{.*}} : memref<?x4xf32>
// AVX2-NOT: memref.copy
// AVX2: return
func.func @packed(%a: tensor<256x300xf32>, %w: tensor<300x100xf32>) -> tensor<256x100xf32> {
  %0 = "rlx.matmul"(%a, %w) : (tensor<256x300xf32>, tensor<300x100xf32>) -> tensor<256x100xf32>
  return %0 : tensor<256x100xf32>
}

// -----

// M blocks (f64: 192 rows, 3/8 of a 1 MiB L2 at K block 256): 1000 rows
// are five blocks and a 40-row remainder block, each with its own packed
// 16-wide panels (8x16 f64 tiles).
// CHECK-LABEL: func.func @packed_m_blocks(
// CHECK: scf.for %{{.*}} = %c0 to %c960 step %c192 {
// CHECK: memref.alloc() {{.*}} : memref<40x16xf64>
// CHECK: iter_args(%{{.*}}) -> (vector<8x16xf64>)
// CHECK: memref.alloc() {{.*}} : memref<40x16xf64>
// CHECK: iter_args(%{{.*}}) -> (vector<8x16xf64>)
// CHECK: return
func.func @packed_m_blocks(%a: tensor<1000x40xf64>, %w: tensor<40x48xf64>) -> tensor<1000x48xf64> {
  %0 = "rlx.matmul"(%a, %w) : (tensor<1000x40xf64>, tensor<40x48xf64>) -> tensor<1000x48xf64>
  return %0 : tensor<1000x48xf64>
}

// -----

// Elementwise: two vector registers per step along the rows (32 f32 lanes
// on AVX-512, 16 on AVX2), the last step masked; exp is rlx-math-approx's
// polynomial on vectors (no libm call).
// CHECK-LABEL: func.func @exp_rows(
// CHECK: scf.for %{{.*}} = %c0 to %c7 step %c1 {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c33 step %c32 {
// CHECK: vector.create_mask {{.*}} : vector<1x32xi1>
// CHECK: math.roundeven %{{.*}} : vector<32xf32>
// CHECK: math.fma %{{.*}} : vector<32xf32>
// CHECK: vector.transfer_write
// CHECK-NOT: math.exp
// CHECK-NOT: call
// CHECK: return
// AVX2-LABEL: func.func @exp_rows(
// AVX2: scf.for %{{.*}} = %c0 to %c33 step %c16 {
// AVX2: math.roundeven %{{.*}} : vector<16xf32>
func.func @exp_rows(%x: tensor<7x33xf32>) -> tensor<7x33xf32> {
  %0 = "rlx.exp"(%x) : (tensor<7x33xf32>) -> tensor<7x33xf32>
  return %0 : tensor<7x33xf32>
}

// -----

// Rows shorter than one step of the tile (12 < 32 lanes, < 16 on AVX2) stay
// scalar loops: a masked partial vector per row ran slower than the scalar
// loop (LeNet-5's 12- and 4-wide pooled rows: 9.3 ms a step against 2.2 ms).
// Rows that are contiguous in every operand are merged into one first
// (rlx-collapse-elementwise: 64x12 is one 768-element row, vectorized); a
// per-row operand (%b, read along the rows only) keeps them apart.
// CHECK-LABEL: func.func @exp_short_rows(
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<64x12xf32> into memref<768xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c32 {
// CHECK: vector<32xf32>
// CHECK: return
// CHECK-LABEL: func.func @exp_short_rows_per_row(
// CHECK-NOT: vector<
// CHECK: return
// AVX2-LABEL: func.func @exp_short_rows(
// AVX2: scf.for %{{.*}} = %c0 to %c768 step %c16 {
// AVX2-LABEL: func.func @exp_short_rows_per_row(
// AVX2-NOT: vector<
// AVX2: return
func.func @exp_short_rows(%x: tensor<64x12xf32>) -> tensor<64x12xf32> {
  %0 = "rlx.exp"(%x) : (tensor<64x12xf32>) -> tensor<64x12xf32>
  return %0 : tensor<64x12xf32>
}
func.func @exp_short_rows_per_row(%x: tensor<64x12xf32>, %b: tensor<64x1xf32>) -> tensor<64x12xf32> {
  %0 = "rlx.add"(%x, %b) : (tensor<64x12xf32>, tensor<64x1xf32>) -> tensor<64x12xf32>
  %1 = "rlx.exp"(%0) : (tensor<64x12xf32>) -> tensor<64x12xf32>
  return %1 : tensor<64x12xf32>
}

// -----

// f64: 2 x 8 lanes on AVX-512; exp is rlx-math-approx's f64 polynomial.
// CHECK-LABEL: func.func @exp_f64(
// CHECK: scf.for %{{.*}} = %c0 to %c20 step %c16 {
// CHECK-NOT: math.exp
// CHECK: math.roundeven %{{.*}} : vector<16xf64>
func.func @exp_f64(%x: tensor<20xf64>) -> tensor<20xf64> {
  %0 = "rlx.exp"(%x) : (tensor<20xf64>) -> tensor<20xf64>
  return %0 : tensor<20xf64>
}

// -----

// batch_matmul peels the same way (no padded copies).
// CHECK-LABEL: func.func @batch_peeled(
// CHECK-NOT: memref.alloc
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<1x8x32xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<1x4x16xf32>)
// CHECK-DAG: iter_args(%{{.*}}) -> (vector<1x4x2xf32>)
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @batch_peeled(%a: tensor<3x20x300xf32>, %b: tensor<3x300x50xf32>) -> tensor<3x20x50xf32> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<3x20x300xf32>, tensor<3x300x50xf32>) -> tensor<3x20x50xf32>
  return %0 : tensor<3x20x50xf32>
}

// -----

// A generic with no input (an iota) is left to convert-linalg-to-loops
// (the matcher's input check would assert upstream on zero inputs).
// CHECK-LABEL: func.func @no_inputs(
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : memref<4x40xf32>)
// CHECK: return
func.func @no_inputs() -> tensor<4x40xf32> {
  %e = tensor.empty() : tensor<4x40xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x40xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4x40xf32>
  return %0 : tensor<4x40xf32>
}

// -----

// dy @ W^T: W is read in place.  Each (K block, N tile) transposes its
// panel of W^T (256 x 32, from 32 rows of W) into a buffer of its own, in
// 16x16 vector tiles (shuffles), that the M tiles read: no transpose of
// the whole of W, no pack copy.
// CHECK-LABEL: func.func @rhs_transposed(
// CHECK-SAME: %[[DY:[^:]*]]: memref<64x512xf32>, %[[W:[^:]*]]: memref<512x512xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<512x512xf32>
// CHECK: scf.for %[[K:.*]] = %c0 to %c512 step %c256 {
// CHECK: scf.for %[[N:.*]] = %c0 to %c512 step %c32 {
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<256x32xf32>
// CHECK: vector.transfer_read {{.*}} : memref<16x16xf32, strided<[512, 1], offset: ?>>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<16x16xf32>, memref<16x16xf32, strided<[32, 1], offset: ?>>
// CHECK: scf.for {{.*}} iter_args(%{{.*}}) -> (vector<8x32xf32>) {
// CHECK: memref.subview %[[P]]
// CHECK: memref.dealloc %[[P]]
// CHECK-NOT: memref.copy
// CHECK: return
// AVX2-LABEL: func.func @rhs_transposed(
// AVX2-NOT: memref.alloc() {{.*}} : memref<512x512xf32>
// AVX2: memref.alloc() {{.*}} : memref<256x16xf32>
// AVX2: iter_args(%{{.*}}) -> (vector<6x16xf32>)
// AVX2: return
func.func @rhs_transposed(%dy: tensor<64x512xf32>, %w: tensor<512x512xf32>) -> tensor<64x512xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %0 = "rlx.matmul"(%dy, %wt) : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  return %0 : tensor<64x512xf32>
}

// -----

// Packed sizes (M = 400: an M block of 384 rows and a 16-row remainder;
// N = 136: four 32-column tiles and a peeled 8-column one; K = 200 in
// 16x16 transpose tiles, masked as 200 is not a multiple of 16): each N
// tile's panel is
// transposed from W into a 200x32 / 200x8 buffer (the two M blocks'
// identical panels are one after cse), no pack copy.
// CHECK-LABEL: func.func @rhs_transposed_packed(
// CHECK-SAME: %[[X:[^:]*]]: memref<400x200xf32>, %[[W:[^:]*]]: memref<136x200xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<200x136xf32>
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<200x32xf32>
// CHECK: vector.create_mask
// CHECK: vector.transfer_read %{{.*}} : memref<16x?xf32, strided<[200, 1], offset: ?>>, vector<16x16xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<16x16xf32>, memref<?x16xf32, strided<[32, 1], offset: ?>>
// CHECK: scf.for %{{.*}} = %c0 to %c384 step %c8 {
// CHECK: iter_args(%{{.*}}) -> (vector<8x32xf32>)
// CHECK: %[[P8:.*]] = memref.alloc() {{.*}} : memref<200x8xf32>
// CHECK: iter_args(%{{.*}}) -> (vector<8x8xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @rhs_transposed_packed(%x: tensor<400x200xf32>, %w: tensor<136x200xf32>) -> tensor<400x136xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<136x200xf32>) -> tensor<200x136xf32>
  %0 = "rlx.matmul"(%x, %wt) : (tensor<400x200xf32>, tensor<200x136xf32>) -> tensor<400x136xf32>
  return %0 : tensor<400x136xf32>
}

// -----

// A small W (fewer than 128 rows or columns, e.g. LeNet-5's dense layers):
// W^T is materialized (a tiled transpose) and the matmul packs its panels
// from it; fusing costs more compile time than it saves there.
// CHECK-LABEL: func.func @rhs_transposed_small(
// CHECK: memref.alloc() {{.*}} : memref<50x40xf32>
// CHECK: memref.alloc() {{.*}} : memref<50x32xf32>
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c50 step %c1 {
// CHECK: return
func.func @rhs_transposed_small(%x: tensor<400x50xf32>, %w: tensor<40x50xf32>) -> tensor<400x40xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<40x50xf32>) -> tensor<50x40xf32>
  %0 = "rlx.matmul"(%x, %wt) : (tensor<400x50xf32>, tensor<50x40xf32>) -> tensor<400x40xf32>
  return %0 : tensor<400x40xf32>
}

// -----

// A transposed rhs with another user (here returned): W^T is materialized
// (a tiled transpose into the result buffer) and the matmul packs its
// panels from it (MLIR's fuse_into_containing_op fuses a producer with a
// later user into an scf.forall only).
// CHECK-LABEL: func.func @rhs_transposed_shared(
// CHECK-SAME: %[[WT:[^:]*]]: memref<50x40xf32>)
// CHECK: %[[TILE:.*]] = memref.subview %[[WT]]
// CHECK: vector.transfer_write {{.*}} %[[TILE]]
// CHECK: memref.alloc() {{.*}} : memref<50x32xf32>
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c50 step %c1 {
// CHECK: vector.transfer_read %[[WT]]
// CHECK: return
func.func @rhs_transposed_shared(%x: tensor<400x50xf32>, %w: tensor<40x50xf32>) -> (tensor<400x40xf32>, tensor<50x40xf32>) {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<40x50xf32>) -> tensor<50x40xf32>
  %0 = "rlx.matmul"(%x, %wt) : (tensor<400x50xf32>, tensor<50x40xf32>) -> tensor<400x40xf32>
  return %0, %wt : tensor<400x40xf32>, tensor<50x40xf32>
}
