// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels=cpu=x86-64-v3 | FileCheck %s --check-prefix=AVX2

// A marked contraction on buffers becomes a call of the kernel of its
// element type; transposed operands are passed as transposed views, every
// operand cast to the kernels' fully strided type; the kernel is declared
// once.  The symbol names the kernels' variant (the target's tiles and
// LLVM CPU): the host's and x86-64-v3's differ.  The last argument says
// whether the kernel writes C without reading it (false: it adds into C,
// whose contents nothing here shows to be zeros).
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_matmul_f32]](memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i1)
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[A:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3x5xf32>, %[[C:.*]]: memref<4x5xf32>)
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<4x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[B]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: call @[[$K]](%[[CA]], %[[CB]], %[[CC]], %[[F]])
// CHECK-NEXT: return
// AVX2: func.func private @[[$K2:gradir_kernel_[0-9a-f]+_matmul_f32]](
// AVX2: call @[[$K2]](
#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @plain(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}
// CHECK-LABEL: func.func @transposed(
// CHECK-SAME: %[[A:.*]]: memref<3x4xf32>, %[[W:.*]]: memref<5x3xf32>, %[[C:.*]]: memref<4x5xf32>)
// CHECK-NEXT: %[[AT:.*]] = memref.transpose %[[A]] (d0, d1) -> (d1, d0) : memref<3x4xf32> to memref<4x3xf32, strided<[1, 4]>>
// CHECK-NEXT: %[[WT:.*]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<5x3xf32> to memref<3x5xf32, strided<[1, 3]>>
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[AT]]
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[WT]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[C]]
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: call @[[$K]](%[[CA]], %[[CB]], %[[CC]], %[[F]])
func.func @transposed(%a: memref<3x4xf32>, %w: memref<5x3xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#km, #nk, #mn] {gradir.kernel} ins(%a, %w : memref<3x4xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  return
}
// Unmarked contractions and matmuls are left alone.
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.contract
// CHECK-NOT: call
func.func @unmarked(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}

// -----

// f64 (a view of a larger buffer: its strides go with it), one kernel per element type.
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_matmul_f64]](memref<?x?xf64, strided<[?, ?], offset: ?>>,
// CHECK-LABEL: func.func @view(
// CHECK: %[[S:.*]] = memref.subview
// CHECK: memref.cast %[[S]] : memref<4x3xf64, strided<[8, 1], offset: 2>> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK: call @[[$K]](
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @view(%big: memref<4x8xf64>, %b: memref<3x5xf64>, %c: memref<4x5xf64>) {
  %a = memref.subview %big[0, 2] [4, 3] [1, 1] : memref<4x8xf64> to memref<4x3xf64, strided<[8, 1], offset: 2>>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf64, strided<[8, 1], offset: 2>>, memref<3x5xf64>) outs(%c : memref<4x5xf64>)
  return
}

// -----

// C filled with +0.0 just before the contraction: the fill is left out and
// the kernel starts from zeros (true: C is written, not read).
// CHECK-LABEL: func.func @filled(
// CHECK-NOT: linalg.fill
// CHECK: %[[T:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[T]])
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @filled(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}

// -----

// The contraction in an scf.execute_region (rlx-to-linalg's shield against
// reshape fusion, before an unflatten), its fill in the parent block: the
// region stands for the contraction there, the fill is left out.  Not when
// something in the region reads C first (@read_in_region: the kernel adds).
// CHECK-LABEL: func.func @in_region(
// CHECK-NOT: linalg.fill
// CHECK: scf.execute_region
// CHECK: %[[T:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[T]])
// CHECK-LABEL: func.func @read_in_region(
// CHECK: linalg.fill
// CHECK: scf.execute_region
// CHECK: memref.load
// CHECK: %[[F:.*]] = arith.constant false
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[F]])
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @in_region(%a: memref<4x3xf32>, %b: memref<3x5xf32>) -> memref<2x2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  scf.execute_region no_inline {
    linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
    scf.yield
  }
  %e = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 2, 5] : memref<4x5xf32> into memref<2x2x5xf32>
  return %e : memref<2x2x5xf32>
}
func.func @read_in_region(%a: memref<4x3xf32>, %b: memref<3x5xf32>) -> (memref<4x5xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  %c = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  %v = scf.execute_region -> f32 no_inline {
    %x = memref.load %c[%i, %i] : memref<4x5xf32>
    linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
    scf.yield %x : f32
  }
  return %c, %v : memref<4x5xf32>, f32
}

// -----

// One zero buffer copied into each output (what bufferization makes of the
// one zero tensor that CSE leaves for every matmul): the copies are left
// out, and so is the zero buffer once nothing reads it.
// CHECK-LABEL: func.func @shared_zeros(
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.copy
// CHECK: %[[C1:.*]] = memref.alloc()
// CHECK: %[[T1:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[T1]])
// CHECK: %[[T2:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[T2]])
// CHECK-NOT: memref.dealloc %{{.*}} : memref<4x5xf32>
// CHECK: return %[[C1]]
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @shared_zeros(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %d: memref<4x3xf32>,
                        %out: memref<4x5xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<4x5xf32>)
  %c1 = memref.alloc() : memref<4x5xf32>
  memref.copy %z, %c1 : memref<4x5xf32> to memref<4x5xf32>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c1 : memref<4x5xf32>)
  memref.copy %z, %out : memref<4x5xf32> to memref<4x5xf32>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%d, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%out : memref<4x5xf32>)
  memref.dealloc %z : memref<4x5xf32>
  return %c1 : memref<4x5xf32>
}

// -----

// Left as they are (false: the kernel adds into C): a fill of -0.0 (a
// kernel starting from +0.0 could give +0.0 where -0.0 + (-0.0) is -0.0),
// a read of C between its fill and the contraction, an output that is a
// view (its buffer may be written through another view), a zero buffer
// written again before it is copied; a zero buffer still read after its
// copies are left out is kept.
// CHECK-LABEL: func.func @kept(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C0:.*]] : memref<4x5xf32>)
// CHECK: %[[F0:.*]] = arith.constant false
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[F0]])
// CHECK: linalg.fill
// CHECK-NEXT: memref.copy
// CHECK: %[[F1:.*]] = arith.constant false
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[F1]])
// CHECK: linalg.fill
// CHECK-NEXT: memref.subview
// CHECK: %[[F2:.*]] = arith.constant false
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[F2]])
// CHECK: linalg.fill
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.copy
// CHECK: %[[F3:.*]] = arith.constant false
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[F3]])
// CHECK: %[[Z:.*]] = memref.alloc() : memref<4x5xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[Z]] : memref<4x5xf32>)
// CHECK-NOT: memref.copy
// CHECK: %[[T4:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[T4]])
// CHECK: memref.copy %[[Z]], %{{.*}}
// CHECK: return
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @kept(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c0: memref<4x5xf32>,
                %c1: memref<4x5xf32>, %big: memref<8x5xf32>, %c3: memref<4x5xf32>,
                %c4: memref<4x5xf32>, %keep: memref<4x5xf32>) {
  %neg = arith.constant -0.0 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %i0 = arith.constant 0 : index
  linalg.fill ins(%neg : f32) outs(%c0 : memref<4x5xf32>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c0 : memref<4x5xf32>)
  linalg.fill ins(%zero : f32) outs(%c1 : memref<4x5xf32>)
  memref.copy %c1, %keep : memref<4x5xf32> to memref<4x5xf32>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c1 : memref<4x5xf32>)
  linalg.fill ins(%zero : f32) outs(%big : memref<8x5xf32>)
  %c2 = memref.subview %big[0, 0] [4, 5] [1, 1] : memref<8x5xf32> to memref<4x5xf32, strided<[5, 1]>>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c2 : memref<4x5xf32, strided<[5, 1]>>)
  %w = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%w : memref<4x5xf32>)
  memref.store %one, %w[%i0, %i0] : memref<4x5xf32>
  memref.copy %w, %c3 : memref<4x5xf32> to memref<4x5xf32>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c3 : memref<4x5xf32>)
  memref.dealloc %w : memref<4x5xf32>
  %z = memref.alloc() : memref<4x5xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<4x5xf32>)
  memref.copy %z, %c4 : memref<4x5xf32> to memref<4x5xf32>
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c4 : memref<4x5xf32>)
  memref.copy %z, %keep : memref<4x5xf32> to memref<4x5xf32>
  memref.dealloc %z : memref<4x5xf32>
  return
}

// -----

// A batched contraction (d0, d1, d2, d3) = (batch, M, N, K): one kernel call
// per batch element in an scf.for, on rank-reduced subviews of A, B and C.
// An operand whose dims are permuted (a head split read in place: q and k
// as (S, B*H, D)) is brought to (batch, M, K) / (batch, K, N) by a
// memref.transpose view first; the zero fill of C is left out as in 2-D.
// CHECK-LABEL: func.func @heads(
// CHECK-SAME: %[[Q:.*]]: memref<128x32x64xf32>, %[[K:.*]]: memref<128x32x64xf32>, %[[C:.*]]: memref<32x128x128xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[QT:.*]] = memref.transpose %[[Q]] (d0, d1, d2) -> (d1, d0, d2) : memref<128x32x64xf32> to memref<32x128x64xf32, strided<[64, 2048, 1]>>
// CHECK-NEXT: %[[KT:.*]] = memref.transpose %[[K]] (d0, d1, d2) -> (d1, d2, d0) : memref<128x32x64xf32> to memref<32x64x128xf32, strided<[64, 1, 2048]>>
// CHECK-NEXT: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C32]] step %[[C1]] {
// CHECK-NEXT: %[[QI:.*]] = memref.subview %[[QT]][%[[I]], 0, 0] [1, 128, 64] [1, 1, 1] : memref<32x128x64xf32, strided<[64, 2048, 1]>> to memref<128x64xf32, strided<[2048, 1], offset: ?>>
// CHECK-NEXT: %[[CQ:.*]] = memref.cast %[[QI]]
// CHECK-NEXT: %[[KI:.*]] = memref.subview %[[KT]][%[[I]], 0, 0] [1, 64, 128] [1, 1, 1] : memref<32x64x128xf32, strided<[64, 1, 2048]>> to memref<64x128xf32, strided<[1, 2048], offset: ?>>
// CHECK-NEXT: %[[CK:.*]] = memref.cast %[[KI]]
// CHECK-NEXT: %[[CI:.*]] = memref.subview %[[C]][%[[I]], 0, 0] [1, 128, 128] [1, 1, 1] : memref<32x128x128xf32> to memref<128x128xf32, strided<[128, 1], offset: ?>>
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[CI]]
// CHECK-NEXT: call @{{.*}}_matmul_f32(%[[CQ]], %[[CK]], %[[CC]], %[[T]]) {gradir.work = 131072 : i64}
// CHECK-NEXT: }
#q = affine_map<(b, m, n, k) -> (m, b, k)>
#k = affine_map<(b, m, n, k) -> (n, b, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @heads(%q: memref<128x32x64xf32>, %k: memref<128x32x64xf32>, %c: memref<32x128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x128x128xf32>)
  linalg.contract indexing_maps = [#q, #k, #c] {gradir.kernel} ins(%q, %k : memref<128x32x64xf32>, memref<128x32x64xf32>) outs(%c : memref<32x128x128xf32>)
  return
}

// -----

// A 2-D operand (a lhs shared by the batch) is the same matrix for every
// element; f64; an operand in (batch, M, K) order is not transposed.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[A:.*]]: memref<5x3xf64>, %[[B:.*]]: memref<4x3x6xf64>, %[[C:.*]]: memref<4x5x6xf64>)
// CHECK-NOT: memref.transpose
// CHECK: %[[F:.*]] = arith.constant false
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[CA:.*]] = memref.cast %[[A]] : memref<5x3xf64> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK-NEXT: %[[BI:.*]] = memref.subview %[[B]][%[[I]], 0, 0] [1, 3, 6] [1, 1, 1]
// CHECK-NEXT: %[[CB:.*]] = memref.cast %[[BI]]
// CHECK-NEXT: %[[CI:.*]] = memref.subview %[[C]][%[[I]], 0, 0] [1, 5, 6] [1, 1, 1]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %[[CI]]
// CHECK-NEXT: call @{{.*}}_matmul_f64(%[[CA]], %[[CB]], %[[CC]], %[[F]])
#a = affine_map<(b, m, n, k) -> (m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @shared(%a: memref<5x3xf64>, %b: memref<4x3x6xf64>, %c: memref<4x5x6xf64>) {
  linalg.contract indexing_maps = [#a, #b, #c] {gradir.kernel} ins(%a, %b : memref<5x3xf64>, memref<4x3x6xf64>) outs(%c : memref<4x5x6xf64>)
  return
}

// -----

// An output written in another order (a head merge: C's map (m, b, n), N
// innermost): a memref.transpose view of C brings it to (batch, M, N).
// CHECK-LABEL: func.func @merged(
// CHECK-SAME: %[[P:.*]]: memref<32x128x128xf32>, %[[V:.*]]: memref<32x128x64xf32>, %[[C:.*]]: memref<128x32x64xf32>)
// CHECK: %[[CT:.*]] = memref.transpose %[[C]] (d0, d1, d2) -> (d1, d0, d2) : memref<128x32x64xf32> to memref<32x128x64xf32, strided<[64, 2048, 1]>>
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.subview %[[CT]][%[[I]], 0, 0] [1, 128, 64] [1, 1, 1] : memref<32x128x64xf32, strided<[64, 2048, 1]>> to memref<128x64xf32, strided<[2048, 1], offset: ?>>
// CHECK: call @{{.*}}_matmul_f32(
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (m, b, n)>
func.func @merged(%p: memref<32x128x128xf32>, %v: memref<32x128x64xf32>, %c: memref<128x32x64xf32>) {
  linalg.contract indexing_maps = [#a, #b, #c] {gradir.kernel} ins(%p, %v : memref<32x128x128xf32>, memref<32x128x64xf32>) outs(%c : memref<128x32x64xf32>)
  return
}
