// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v4 stage=bufferized threads=2' | FileCheck %s --check-prefix=BUF
// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v4 stage=bufferized threads=1' | FileCheck %s --check-prefix=BUF1
// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v4 stage=bufferized threads=3' | FileCheck %s --check-prefix=BUF3
// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3 threads=2' | FileCheck %s --check-prefix=LLVM
// RUN: gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3 threads=1' | FileCheck %s --check-prefix=LLVM1
// RUN: env GRADIR_NUM_THREADS=3 gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3' | FileCheck %s --check-prefix=ENV
// RUN: env GRADIR_NUM_THREADS=1 OMP_NUM_THREADS=2 gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3' | FileCheck %s --check-prefix=LLVM1
// RUN: env -u GRADIR_NUM_THREADS OMP_NUM_THREADS=3,1 gradir-opt %s --rlx-lower-to-llvm='cpu=x86-64-v3' | FileCheck %s --check-prefix=ENV

// threads > 1: the schedule tiles each matmul into an scf.forall over
// column strips (each strip K-blocked and register-tiled as with one
// thread); after bufferization every linalg op
// becomes scf.parallel loops, and rlx-parallel-loops makes the ones with
// enough work OpenMP loops over their first dimension (the matmul's strips,
// the blocks of the long sum, each at least 2^22 operations: the CPU
// pipeline's threshold; the bias + relu, vectorized by the schedule's
// elementwise sequence, in an scf.forall over its rows), num_threads fixed at
// compile time.  Small ops stay sequential.  threads=1 (or
// GRADIR_NUM_THREADS=1, which wins over OMP_NUM_THREADS) is the
// single-threaded pipeline: no forall, no OpenMP.

// A matmul that packs its rhs panels with one thread (at least 256 rows)
// runs the same packed schedule in one column strip per thread: 512
// columns = 16 register tiles of 32 (AVX-512) = two strips of 256 columns
// (8 tiles); per K block (the last one 784 - 768 = 16 rows: dynamic) and M
// block of its strip, each thread copies the rhs panel of each of its N
// tiles into its own buffer (allocated inside the strip: no buffer shared
// between threads), which the M tiles read.
// BUF-LABEL: func.func @mlp(
// BUF: scf.forall (%{{.*}}) in (2) {
// BUF: memref.subview %{{.*}}[0, %{{.*}}] [256, 256] [1, 1]
// BUF: scf.for {{.*}} step %c256
// BUF: scf.for %{{.*}} = %c0 to %c256 step %c32
// BUF: %[[P:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x32xf32>
// BUF: scf.for
// BUF: %[[ROW:.*]] = memref.subview %[[P]][%{{.*}}, 0] [1, 32]
// BUF: vector.transfer_write %{{.*}}, %[[ROW]]
// BUF: scf.for {{.*}} step %c8
// BUF: memref.subview %[[P]]
// BUF: vector.fma {{.*}} : vector<32xf32>
// BUF: memref.dealloc %[[P]]
// BUF: scf.forall (%{{.*}}) in (256) {
// BUF: arith.maximumf {{.*}} : vector<32xf32>
// BUF-NOT: scf.forall
// BUF-LABEL: func.func @total(
// Three threads: 15 of the 16 tiles in three strips of 160 columns, the
// last tile (columns 480..511) in a strip of its own, after them.
// BUF3-LABEL: func.func @mlp(
// BUF3: scf.forall (%{{.*}}) in (3) {
// BUF3: memref.subview %{{.*}}[0, %{{.*}}] [256, 160] [1, 1]
// BUF3: scf.for %{{.*}} = %c0 to %c160 step %c32
// BUF3: memref.alloc(%{{.*}}) {{.*}} : memref<?x32xf32>
// BUF3: vector.fma {{.*}} : vector<32xf32>
// BUF3: memref.subview %{{.*}}[0, 480] [256, 32] [1, 1]
// BUF3: memref.alloc(%{{.*}}) {{.*}} : memref<?x32xf32>
// BUF3: vector.fma {{.*}} : vector<32xf32>
// BUF3: scf.forall (%{{.*}}) in (256) {
// BUF3-NOT: scf.forall
// BUF3-LABEL: func.func @total(

// A matmul whose N is one register tile wide or less (a classifier's 10
// outputs) would be one strip, on one thread: it keeps the single-threaded
// schedule, peeled instead of padded (no 64x32 copy of the output, no
// forall), at every thread count.
// BUF-LABEL: func.func @classifier(
// BUF-NOT: scf.forall
// BUF-NOT: memref<64x32xf32>
// BUF: scf.for {{.*}} step %c256
// BUF: scf.for {{.*}} step %c8
// BUF: vector.fma {{.*}} : vector<10xf32>
// BUF-NOT: scf.forall

// Fewer rows (no packing): strips of the register tile's width, the whole
// matrix padded to tile multiples, the rhs read in place.
// BUF-LABEL: func.func @strips(
// BUF-NOT: memref<?x32xf32>
// BUF: scf.forall (%{{.*}}) in (16) {
// BUF: memref.subview %{{.*}}[0, %{{.*}}] [784, 32] [1, 1]
// BUF: scf.for {{.*}} step %c256
// BUF: scf.for {{.*}} step %c8
// BUF: vector.fma {{.*}} : vector<32xf32>
// BUF-NOT: memref.alloc

// A packed matmul whose N is not a multiple of the register tile's width
// is padded to one (300 -> 320 columns: ten tiles, as with one thread);
// M is not padded.  Two threads: two strips of five tiles.
// BUF-LABEL: func.func @odd_strips(
// BUF: memref.alloc() {{.*}} : memref<64x320xf32>
// BUF: memref.alloc() {{.*}} : memref<256x320xf32>
// BUF: scf.forall (%{{.*}}) in (2) {
// BUF: memref.subview %{{.*}}[0, %{{.*}}] [256, 160] [1, 1]
// BUF: scf.for %{{.*}} = %c0 to %c160 step %c32
// BUF: memref.alloc() {{.*}} : memref<64x32xf32>
// BUF: vector.fma {{.*}} : vector<32xf32>
// BUF-NOT: scf.forall
// Three threads: nine tiles in three strips of three, the tenth after them.
// BUF3-LABEL: func.func @odd_strips(
// BUF3: memref.alloc() {{.*}} : memref<256x320xf32>
// BUF3: scf.forall (%{{.*}}) in (3) {
// BUF3: memref.subview %{{.*}}[0, %{{.*}}] [256, 96] [1, 1]
// BUF3: scf.for %{{.*}} = %c0 to %c96 step %c32
// BUF3: memref.subview %{{.*}}[0, 288] [256, 32] [1, 1]
// BUF3-NOT: scf.forall

// 330 columns -> 352 = 11 tiles.  Two threads: two strips of five tiles,
// then the last tile; three threads: three strips of three tiles, then the
// last two tiles in strips of one (an scf.forall of two).
// BUF-LABEL: func.func @odd_rest(
// BUF: memref.alloc() {{.*}} : memref<256x352xf32>
// BUF: scf.forall (%{{.*}}) in (2) {
// BUF: memref.subview %{{.*}}[0, %{{.*}}] [256, 160] [1, 1]
// BUF: memref.subview %{{.*}}[0, 320] [256, 32] [1, 1]
// BUF-NOT: scf.forall
// BUF3-LABEL: func.func @odd_rest(
// BUF3: memref.alloc() {{.*}} : memref<256x352xf32>
// BUF3: scf.forall (%{{.*}}) in (3) {
// BUF3: memref.subview %{{.*}}[0, %{{.*}}] [256, 96] [1, 1]
// BUF3: memref.subview %{{.*}}[0, 288] [256, 64] [1, 1]
// BUF3: scf.forall (%{{.*}}) in (2) {
// BUF3: memref.subview %{{.*}}[0, %{{.*}}] [256, 32] [1, 1]
// BUF3-NOT: scf.forall

// Two tiles (64 columns): two strips of one tile, at two threads and at
// three (fewer tiles than threads).  (K = 512: with K = 64 the matmul is
// too small for threads and keeps the single-threaded schedule, see
// @small below.)
// BUF-LABEL: func.func @narrow_packed(
// BUF: scf.forall (%{{.*}}) in (2) {
// BUF: memref.subview %{{.*}}[0, %{{.*}}] [256, 32] [1, 1]
// BUF-NOT: scf.forall
// BUF-LABEL: func.func @tiny(
// BUF3-LABEL: func.func @narrow_packed(
// BUF3: scf.forall (%{{.*}}) in (2) {
// BUF3: memref.subview %{{.*}}[0, %{{.*}}] [256, 32] [1, 1]
// BUF3-NOT: scf.forall
// BUF3-LABEL: func.func @tiny(

// BUF1-LABEL: func.func @mlp(
// BUF1-NOT: scf.forall
// BUF1: scf.for {{.*}} step %c256
// BUF1: scf.for {{.*}} step %c32
// BUF1: scf.for {{.*}} step %c8
// BUF1-NOT: scf.forall

// LLVM-LABEL: llvm.func @mlp(
// LLVM-SAME: target_cpu = "x86-64-v3"
// LLVM: %[[N:.*]] = llvm.mlir.constant(2 : i32) : i32
// LLVM: omp.parallel num_threads(%[[N]] : i32) {
// LLVM-NEXT: omp.wsloop schedule(guided) {
// LLVM-NEXT: omp.loop_nest
// LLVM: llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// LLVM: omp.terminator
// LLVM-LABEL: llvm.func @_mlir_ciface_mlp(
// LLVM-LABEL: llvm.func @total(
// LLVM: omp.parallel num_threads(%{{.*}} : i32) {
// LLVM-LABEL: llvm.func @_mlir_ciface_total(
// LLVM-LABEL: llvm.func @tiny(
// LLVM-NOT: omp.
// LLVM-LABEL: llvm.func @_mlir_ciface_tiny(

// LLVM1-LABEL: llvm.func @mlp(
// LLVM1-NOT: omp.
// LLVM1-LABEL: llvm.func @_mlir_ciface_tiny(

// ENV-LABEL: llvm.func @mlp(
// ENV: llvm.mlir.constant(3 : i32) : i32
// ENV: omp.parallel

func.func @mlp(%x: tensor<256x784xf32>, %w: tensor<784x512xf32>, %b: tensor<512xf32>) -> tensor<256x512xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<256x784xf32>, tensor<784x512xf32>) -> tensor<256x512xf32>
  %z = "rlx.add"(%y, %b) : (tensor<256x512xf32>, tensor<512xf32>) -> tensor<256x512xf32>
  %r = "rlx.relu"(%z) : (tensor<256x512xf32>) -> tensor<256x512xf32>
  return %r : tensor<256x512xf32>
}
func.func @total(%x: tensor<8388608xf32>) -> tensor<f32> {
  %s = "rlx.sum"(%x) : (tensor<8388608xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
func.func @classifier(%h: tensor<64x512xf32>, %w: tensor<512x10xf32>) -> tensor<64x10xf32> {
  %y = "rlx.matmul"(%h, %w) : (tensor<64x512xf32>, tensor<512x10xf32>) -> tensor<64x10xf32>
  return %y : tensor<64x10xf32>
}
func.func @strips(%x: tensor<64x784xf32>, %w: tensor<784x512xf32>) -> tensor<64x512xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<64x784xf32>, tensor<784x512xf32>) -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}
func.func @odd_strips(%x: tensor<256x64xf32>, %w: tensor<64x300xf32>) -> tensor<256x300xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<256x64xf32>, tensor<64x300xf32>) -> tensor<256x300xf32>
  return %y : tensor<256x300xf32>
}
func.func @odd_rest(%x: tensor<256x64xf32>, %w: tensor<64x330xf32>) -> tensor<256x330xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<256x64xf32>, tensor<64x330xf32>) -> tensor<256x330xf32>
  return %y : tensor<256x330xf32>
}
func.func @narrow_packed(%x: tensor<256x512xf32>, %w: tensor<512x64xf32>) -> tensor<256x64xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<256x512xf32>, tensor<512x64xf32>) -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}
func.func @tiny(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = "rlx.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %e : tensor<8xf32>
}

// A transposed rhs (dy @ W^T): each strip transposes its 32 rows of W into
// a 512x32 buffer of its own (allocated inside the strip), whose K blocks
// the register tiles read; W^T is never materialized.
// BUF-LABEL: func.func @rhs_t_strips(
// BUF-SAME: %[[W:[^:]*]]: memref<512x512xf32>
// BUF-NOT: memref<512x512xf32>
// BUF: scf.forall (%{{.*}}) in (16) {
// BUF: memref.subview %[[W]][%{{.*}}, 0] [32, 512] [1, 1]
// BUF: memref.alloc() {{.*}} : memref<512x32xf32>
// BUF: vector.transfer_write {{.*}} : vector<16x16xf32>, memref<16x16xf32, strided<[32, 1], offset: ?>>
// BUF: scf.for {{.*}} step %c256
// BUF: iter_args(%{{.*}}) -> (vector<8x32xf32>)
// BUF: return
// BUF3-LABEL: func.func @rhs_t_strips(
// BUF3: memref.alloc() {{.*}} : memref<512x32xf32>
// BUF3: return
// BUF1-LABEL: func.func @rhs_t_strips(
// BUF1: scf.for {{.*}} step %c256
// BUF1: scf.for {{.*}} step %c32
// BUF1: memref.alloc() {{.*}} : memref<256x32xf32>
// BUF1: return
func.func @rhs_t_strips(%dy: tensor<64x512xf32>, %w: tensor<512x512xf32>) -> tensor<64x512xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %y = "rlx.matmul"(%dy, %wt) : (tensor<64x512xf32>, tensor<512x512xf32>) -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}

// Fewer than 2^22 multiply-adds (rlx-to-linalg marks the matmul
// gradir.small_matmul): never worth threads, so scheduled as with one
// thread (peeled: 120 columns are 3 tiles of 32 and one of 24 = 16 + 8,
// no padding to 128 columns, no strips).
// BUF-LABEL: func.func @small(
// BUF-NOT: scf.forall
// BUF-NOT: memref.alloc
// BUF: iter_args(%{{.*}}) -> (vector<8x32xf32>)
// BUF: iter_args(%{{.*}}) -> (vector<8x16xf32>)
// BUF: iter_args(%{{.*}}) -> (vector<8x8xf32>)
// BUF: return
func.func @small(%x: tensor<64x256xf32>, %w: tensor<256x120xf32>) -> tensor<64x120xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<64x256xf32>, tensor<256x120xf32>) -> tensor<64x120xf32>
  return %y : tensor<64x120xf32>
}

// Elementwise at threads > 1: a rank-1 loop in an scf.forall over chunks of
// 64 vector steps (2048 f32 on AVX-512: 49 chunks, the last 1699 elements),
// each chunk's steps peeled (full vectors, then one masked step); the
// forall runs on the threads when rlx-parallel-loops finds it enough work.
// BUF-LABEL: func.func @long_exp(
// BUF: scf.forall (%{{.*}}) in (49) {
// BUF: %[[N:.*]] = affine.min
// BUF: %[[FULL:.*]] = affine.apply #{{.*}}()[%[[N]]]
// BUF: scf.for %{{.*}} = %c0 to %[[FULL]] step %c32 {
// BUF: vector.transfer_read {{.*}} {in_bounds = [true]} : memref<32xf32, strided<[1], offset: ?>>, vector<32xf32>
// BUF: scf.for %{{.*}} = %[[FULL]] to %[[N]] step %c32 {
// BUF: vector.create_mask
// BUF: return
// BUF1-LABEL: func.func @long_exp(
// BUF1-NOT: scf.forall
// BUF1: return
func.func @long_exp(%x: tensor<100003xf32>) -> tensor<100003xf32> {
  %e = "rlx.exp"(%x) : (tensor<100003xf32>) -> tensor<100003xf32>
  return %e : tensor<100003xf32>
}
