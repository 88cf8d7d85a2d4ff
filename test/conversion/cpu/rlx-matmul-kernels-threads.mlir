// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels=threads=2 | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-matmul-kernels=threads=1 | FileCheck %s --check-prefix=ONE

// threads=2: a matmul of enough work (the pipeline's hot-min-work, 2^17
// units: m*n*k/8) calls the kernel's multi-threaded driver instead of the
// kernel: after A, B, C and the zero flag come whether the strips are
// columns, the strip size and count (whole register tiles: 256 columns are
// 2 strips of 128 on AVX-512's 32-wide tiles and AVX2's 16-wide alike), the
// threads, and whether the strips always run on them (2^22 units or more;
// here 2^21: only while libomp's workers spin).  The call carries its work
// (gradir.work) for rlx-parallel-loops' estimate of enclosing loops.
// CHECK: func.func private @[[$K:gradir_kernel_[0-9a-f]+_strips_f32]](memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i1, i1, index, index, i32, i1)
// CHECK-NOT: _matmul_f32
// CHECK-LABEL: func.func @columns(
// CHECK: %[[CA:.*]] = memref.cast %arg0
// CHECK-NEXT: %[[CB:.*]] = memref.cast %arg1
// CHECK-NEXT: %[[CC:.*]] = memref.cast %arg2
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: %[[N:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[T:.*]] = arith.constant true
// CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[F2:.*]] = arith.constant false
// CHECK-NEXT: call @[[$K]](%[[CA]], %[[CB]], %[[CC]], %[[F]], %[[T]], %[[C128]], %[[C2]], %[[N]], %[[F2]]) {gradir.work = 2097152 : i64}
// CHECK-NOT: scf.parallel
// ONE-NOT: _strips_
// ONE-LABEL: func.func @columns(
// ONE-NOT: scf.parallel
// ONE: call @{{.*}}_matmul_f32({{.*}}) {gradir.work = 2097152 : i64}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @columns(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// One register tile of columns (10): the rows are split instead (columns
// false; 4096 rows in 2 strips of 2048 whole 8-row tiles); 2^21.3 units.
// CHECK-LABEL: func.func @rows(
// CHECK: arith.constant 2 : i32
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: %[[S:.*]] = arith.constant 2048 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.constant false
// CHECK-NEXT: call @{{.*}}_strips_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[F]], %[[S]], %[[C2]], %{{.*}}, %{{.*}}) {gradir.work = 2621440 : i64}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @rows(%a: memref<4096x512xf32>, %b: memref<512x10xf32>, %c: memref<4096x10xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4096x512xf32>, memref<512x10xf32>) outs(%c : memref<4096x10xf32>)
  return
}

// -----

// 2^22 units of work or more: the strips always run on the threads (the
// last argument true); f64 calls the f64 driver.  Both drivers and the
// kernel are declared once, whichever matmuls call them.
// CHECK-DAG: func.func private @gradir_kernel_{{[0-9a-f]+}}_strips_f64(
// CHECK-DAG: func.func private @gradir_kernel_{{[0-9a-f]+}}_matmul_f64(
// CHECK-LABEL: func.func @always(
// CHECK: arith.constant 2 : index
// CHECK-NEXT: %[[T:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}_strips_f64({{.*}}, %[[T]]) {gradir.work = 16777216 : i64}
// CHECK: call @{{.*}}_strips_f64(
// CHECK: call @{{.*}}_matmul_f64(
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @always(%a: memref<512x512xf64>, %b: memref<512x512xf64>, %c: memref<512x512xf64>,
                  %d: memref<512x512xf64>, %x: memref<4x3xf64>, %y: memref<3x5xf64>,
                  %z: memref<4x5xf64>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<512x512xf64>, memref<512x512xf64>) outs(%c : memref<512x512xf64>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %c : memref<512x512xf64>, memref<512x512xf64>) outs(%d : memref<512x512xf64>)
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%x, %y : memref<4x3xf64>, memref<3x5xf64>) outs(%z : memref<4x5xf64>)
  return
}

// -----

// Too little work for the threads: the kernel itself.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: _strips_
// CHECK: call @{{.*}}_matmul_f32({{.*}}) {gradir.work = 7 : i64}
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @small(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.contract indexing_maps = [#mk, #kn, #mn] {gradir.kernel} ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}

// -----

// Batched matmuls worth the threads call the batched driver with 3-D views
// (a 2-D operand as a view of batch stride 0): a batch of 32 shares evenly
// (one call per element: strips of all 128 columns, 1 per element); a
// batch of 3 on 2 threads is split into 2 strips of columns per element
// (6 calls); the last argument as for 2-D (2^22 units or more).  Too
// little work: a kernel call per element in an scf.for.
// CHECK-DAG: func.func private @gradir_kernel_{{[0-9a-f]+}}_batch_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i1, i1, index, index, i32, i1)
// CHECK-LABEL: func.func @batched(
// CHECK: %[[QT:.*]] = memref.transpose
// CHECK: %[[KT:.*]] = memref.transpose
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: %[[CQ:.*]] = memref.cast %[[QT]] : memref<32x128x64xf32, strided<[64, 2048, 1]>> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NEXT: %[[CK:.*]] = memref.cast %[[KT]]
// CHECK-NEXT: %[[CC:.*]] = memref.cast %arg2
// CHECK-NEXT: %[[N:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[COLS:.*]] = arith.constant true
// CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ALWAYS:.*]] = arith.constant true
// CHECK-NEXT: call @{{.*}}_batch_f32(%[[CQ]], %[[CK]], %[[CC]], %[[F]], %[[COLS]], %[[C128]], %[[C1]], %[[N]], %[[ALWAYS]]) {gradir.work = 4194304 : i64}
// CHECK: %[[BASE:[a-z_0-9]+]], %[[OFF:[a-z_0-9]+]], %{{[a-z_0-9]+}}:2, %[[STR:[a-z_0-9]+]]:2 = memref.extract_strided_metadata %arg3 : memref<100x70xf32> -> memref<f32>, index, index, index, index, index
// CHECK-NEXT: %[[A3:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [3, 100, 70], strides: [0, %[[STR]]#0, %[[STR]]#1] : memref<f32> to memref<3x100x70xf32, strided<[0, ?, ?], offset: ?>>
// CHECK-NEXT: memref.cast %[[A3]]
// CHECK: %[[C96:.*]] = arith.constant 96 : index
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[SOMETIMES:.*]] = arith.constant false
// CHECK-NEXT: call @{{.*}}_batch_f32({{.*}}, %[[C96]], %[[C2]], %{{.*}}, %[[SOMETIMES]]) {gradir.work = 341250 : i64}
// CHECK: scf.for
// CHECK: call @{{.*}}_matmul_f32({{.*}}) {gradir.work = 1250 : i64}
// ONE-LABEL: func.func @batched(
// ONE-NOT: _batch_f32
// ONE: scf.for
// ONE: call @{{.*}}_matmul_f32({{.*}}) {gradir.work = 131072 : i64}
#q = affine_map<(b, m, n, k) -> (m, b, k)>
#k = affine_map<(b, m, n, k) -> (n, b, k)>
#a = affine_map<(b, m, n, k) -> (m, k)>
#bkn = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batched(%q: memref<128x32x64xf32>, %k: memref<128x32x64xf32>, %c: memref<32x128x128xf32>,
                   %a: memref<100x70xf32>, %b: memref<3x70x130xf32>, %d: memref<3x100x130xf32>,
                   %x: memref<10x10xf32>, %y: memref<3x10x100xf32>, %z: memref<3x10x100xf32>) {
  linalg.contract indexing_maps = [#q, #k, #c] {gradir.kernel} ins(%q, %k : memref<128x32x64xf32>, memref<128x32x64xf32>) outs(%c : memref<32x128x128xf32>)
  linalg.contract indexing_maps = [#a, #bkn, #c] {gradir.kernel} ins(%a, %b : memref<100x70xf32>, memref<3x70x130xf32>) outs(%d : memref<3x100x130xf32>)
  linalg.contract indexing_maps = [#a, #bkn, #c] {gradir.kernel} ins(%x, %y : memref<10x10xf32>, memref<3x10x100xf32>) outs(%z : memref<3x10x100xf32>)
  return
}
