// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels=threads=2 | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels=threads=1 | FileCheck %s --check-prefix=ONE

// threads=2: a matmul of enough work (rlx-parallel-loops' hot-min-work,
// 2^20 of its units: m*n*k/8) runs as two strips of whole register tiles,
// one kernel call each, in an scf.parallel loop; each call carries its
// work (gradir.work) for rlx-parallel-loops' estimate.  Columns are split
// when there are register tiles enough across them (256 columns: 128 each,
// on AVX-512's 32-wide tiles and AVX2's 16-wide alike).
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_matmul_f32]](
// CHECK-LABEL: func.func @columns(
// CHECK-DAG: %[[CA:.*]] = memref.cast %arg0
// CHECK-DAG: %[[CB:.*]] = memref.cast %arg1
// CHECK-DAG: %[[CC:.*]] = memref.cast %arg2
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK: scf.parallel (%[[T:.*]]) = (%[[C0]]) to (%[[C2]])
// CHECK-NEXT: %[[S:.*]] = arith.muli %[[T]], %[[C128]] : index
// CHECK-NEXT: %[[L:.*]] = arith.subi %{{.*}}, %[[S]] : index
// CHECK-NEXT: %[[W:.*]] = arith.minsi %[[L]], %[[C128]] : index
// CHECK-NEXT: %[[B:.*]] = memref.subview %[[CB]][0, %[[S]]] [%{{.*}}, %[[W]]] [1, 1]
// CHECK-NEXT: %[[C:.*]] = memref.subview %[[CC]][0, %[[S]]] [%{{.*}}, %[[W]]] [1, 1]
// CHECK-NEXT: call @[[$K]](%[[CA]], %[[B]], %[[C]], %[[F]]) {gradir.work = 1048576 : i64}
// CHECK-NEXT: scf.reduce
// ONE-LABEL: func.func @columns(
// ONE-NOT: scf.parallel
// ONE: call @{{.*}} {gradir.work = 2097152 : i64}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @columns(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// One register tile of columns (10): the rows are split instead (the lhs and
// the result by rows, the rhs whole).
// CHECK-LABEL: func.func @rows(
// CHECK: scf.parallel
// CHECK: %[[A:.*]] = memref.subview %{{.*}}[%[[S:.*]], 0] [%[[H:.*]], %{{.*}}] [1, 1]
// CHECK-NEXT: %[[C:.*]] = memref.subview %{{.*}}[%[[S]], 0] [%[[H]], %{{.*}}] [1, 1]
// CHECK-NEXT: call @{{.*}}(%[[A]], %{{.*}}, %[[C]], %{{.*}}) {gradir.work = 1310720 : i64}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @rows(%a: memref<4096x512xf32>, %b: memref<512x10xf32>, %c: memref<4096x10xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4096x512xf32>, memref<512x10xf32>) outs(%c : memref<4096x10xf32>)
  return
}

// -----

// Too little work for the threads: one call.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: scf.parallel
// CHECK: call @{{.*}} {gradir.work = 7 : i64}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @small(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}
