// RUN: gradir-opt %s --split-input-file --gpu-linalg-to-kernels --canonicalize --cse | FileCheck %s
// RUN: gradir-opt %s --split-input-file --gpu-linalg-to-kernels='tiled=false' --canonicalize --cse | FileCheck %s --check-prefix=SERIAL

// With tiled=false every op is one thread per output with serial loops.
// SERIAL-LABEL: func.func @matmul(
// SERIAL:      gpu.launch {{.*}} function(@matmul_reduce_serial_0) {
// SERIAL-NOT:  gpu.barrier
// SERIAL:      scf.for %{{.*}} = %c0 to %c48 step %c1
// SERIAL-LABEL: func.func @row_sum(
// SERIAL:      gpu.launch {{.*}} function(@row_sum_reduce_serial_0) {
// SERIAL-NOT:  gpu.barrier

// One thread per element, thread x along the innermost dimension; 500
// elements in 2 blocks of 256 threads, so the last block is guarded.
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[A:.*]]: memref<5x100xf32>, %[[B:.*]]: memref<100xf32>, %[[OUT:.*]]: memref<5x100xf32>)
// CHECK:      gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) module(@elementwise_kernels) function(@elementwise_map_0) {
// CHECK-NEXT:   %[[BASE:.*]] = arith.muli %[[BX]], %c256
// CHECK-NEXT:   %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK-NEXT:   %[[IN:.*]] = arith.cmpi ult, %[[I]], %c500
// CHECK-NEXT:   scf.if %[[IN]] {
// CHECK-NEXT:     %[[R:.*]] = arith.divui %[[I]], %c100
// CHECK-NEXT:     %[[C:.*]] = arith.remui %[[I]], %c100
// CHECK-NEXT:     %[[X:.*]] = memref.load %[[A]][%[[R]], %[[C]]]
// CHECK-NEXT:     %[[Y:.*]] = memref.load %[[B]][%[[C]]]
// CHECK-NEXT:     %[[S:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT:     %[[E:.*]] = math.exp %[[S]]
// CHECK-NEXT:     memref.store %[[E]], %[[OUT]][%[[R]], %[[C]]]
// CHECK:        gpu.terminator
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @elementwise(%a: memref<5x100xf32>, %b: memref<100xf32>, %out: memref<5x100xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<5x100xf32>, memref<100xf32>) outs(%out : memref<5x100xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// C += A*B: 16x16 threads per 16x16 tile of C; BKx(BM+pad) and BKxBN tiles
// of A and B staged in workgroup memory between two barriers per K step.
// The GEMM kernels ask for 2 blocks per multiprocessor (nvvm.minctasm).
// CHECK: module attributes {gradir.kernel_attributes = {matmul_gemm_0 = {nvvm.minctasm = 2 : i32}}}
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:.*]]: memref<64x48xf32>, %[[B:.*]]: memref<48x80xf32>, %[[C:.*]]: memref<64x80xf32>)
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c5, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c16, {{.*}} = %c16, {{.*}} = %c1) module(@matmul_kernels) function(@matmul_gemm_0) workgroup(%[[AS:.*]] : memref<16x18xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>) {
// CHECK:        %[[ACC:.*]] = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK:          %[[VA:.*]] = memref.load %[[A]]
// CHECK-NEXT:     memref.store %[[VA]], %[[AS]]
// CHECK:          %[[VB:.*]] = memref.load %[[B]]
// CHECK-NEXT:     memref.store %[[VB]], %[[BS]]
// CHECK-NEXT:     gpu.barrier
// CHECK-COUNT-16: math.fma
// CHECK:          gpu.barrier
// CHECK-NEXT:     scf.yield
// CHECK:        %[[OLD:.*]] = memref.load %[[C]]
// CHECK-NEXT:   %[[NEW:.*]] = arith.addf %[[OLD]], %[[ACC]]
// CHECK-NEXT:   memref.store %[[NEW]], %[[C]]
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @matmul(%a: memref<64x48xf32>, %b: memref<48x80xf32>, %c: memref<64x80xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x48xf32>, memref<48x80xf32>) outs(%c : memref<64x80xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Reduction along the innermost dimension: a block per row, threads stride
// over the row, then a tree in workgroup memory (log2(256) steps).
// CHECK-LABEL: func.func @row_sum(
// CHECK-SAME: %[[A:.*]]: memref<6x1000xf32>, %[[OUT:.*]]: memref<6xf32>)
// CHECK:      gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c6, {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c256, {{.*}}) module(@row_sum_kernels) function(@row_sum_reduce_0) workgroup(%[[S:.*]] : memref<1x256xf32, #gpu.address_space<workgroup>>) {
// CHECK-NEXT:   %[[P:.*]] = scf.for %[[R:.*]] = %[[TX]] to %c1000 step %c256 iter_args(%[[ACC:.*]] = %cst) -> (f32) {
// CHECK-NEXT:     %[[X:.*]] = memref.load %[[A]][%[[BX]], %[[R]]]
// CHECK-NEXT:     %[[M:.*]] = arith.maximumf %[[ACC]], %[[X]]
// CHECK-NEXT:     scf.yield %[[M]]
// CHECK:        memref.store %[[P]], %[[S]][%c0, %[[TX]]]
// CHECK-NEXT:   gpu.barrier
// CHECK-COUNT-8: gpu.barrier
// CHECK:        scf.if
// CHECK:          %[[T:.*]] = memref.load %[[S]][%c0, %[[TX]]]
// CHECK-NEXT:     %[[I:.*]] = memref.load %[[OUT]][%[[BX]]]
// CHECK-NEXT:     %[[F:.*]] = arith.maximumf %[[I]], %[[T]]
// CHECK-NEXT:     memref.store %[[F]], %[[OUT]][%[[BX]]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%a: memref<6x1000xf32>, %out: memref<6xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x1000xf32>) outs(%out : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Reduction along the outer dimension: thread x runs along the (parallel)
// innermost dimension so loads stay coalesced, thread y strides over rows.
// CHECK-LABEL: func.func @column_sum(
// CHECK:      gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c8, {{.*}} = %c32, {{.*}} = %c1) module(@column_sum_kernels) function(@column_sum_reduce_0) workgroup(%{{.*}} : memref<32x8xf32, #gpu.address_space<workgroup>>)
// CHECK:        scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%a: memref<1000x6xf32>, %out: memref<6xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<1000x6xf32>) outs(%out : memref<6xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction whose combiner is not recognised runs one thread per output
// with a serial loop (correct, slower).
// CHECK-LABEL: func.func @argmax(
// CHECK:      gpu.launch {{.*}} function(@argmax_reduce_serial_0) {
// CHECK:        %{{.*}}:2 = scf.for %{{.*}} = %c0 to %c10 step %c1 iter_args
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @argmax(%a: memref<6x10xf32>, %m: memref<6xf32>, %i: memref<6xi64>) {
  linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<6x10xf32>) outs(%m, %i : memref<6xf32>, memref<6xi64>) {
  ^bb0(%x: f32, %best: f32, %bi: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %x, %best : f32
    %nb = arith.select %gt, %x, %best : f32
    %ni = arith.select %gt, %ji, %bi : i64
    linalg.yield %nb, %ni : f32, i64
  }
  return
}

// -----

// A scalar the host would read from device memory is read in the kernel.
// CHECK-LABEL: func.func @fill_from_device(
// CHECK-SAME: %[[S:.*]]: memref<f32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK-NOT:  memref.load
// CHECK:      gpu.launch
// CHECK-NEXT:   %[[V:.*]] = memref.load %[[S]][]
// CHECK-NEXT:   memref.store %[[V]], %[[OUT]]
func.func @fill_from_device(%s: memref<f32>, %out: memref<8xf32>) {
  %v = memref.load %s[] : memref<f32>
  %d = arith.extf %v : f32 to f64
  %t = arith.truncf %d : f64 to f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : f32) outs(%out : memref<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A host scalar read from device memory and used inside the body (a fused
// rlx.full): its load and the ops on it are cloned into the kernel before
// the body op that uses them, not after.
// CHECK-LABEL: func.func @scale_by_device_scalar(
// CHECK-SAME: %[[S:.*]]: memref<f32>, %[[X:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK-NOT:  memref.load
// CHECK:      gpu.launch
// CHECK-NEXT:   %[[A:.*]] = memref.load %[[X]]
// CHECK-NEXT:   %[[E:.*]] = math.exp %[[A]]
// CHECK-NEXT:   %[[V:.*]] = memref.load %[[S]][]
// CHECK-NEXT:   %[[N:.*]] = arith.negf %[[V]]
// CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[N]], %[[E]]
// CHECK-NEXT:   memref.store %[[M]], %[[OUT]]
func.func @scale_by_device_scalar(%s: memref<f32>, %x: memref<8xf32>, %out: memref<8xf32>) {
  %v = memref.load %s[] : memref<f32>
  %n = arith.negf %v : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    %m = arith.mulf %n, %e : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// The same scalar used in a region nested in the body: the clones go
// before the body op holding that region.
// CHECK-LABEL: func.func @device_scalar_in_region(
// CHECK-SAME: %[[S:.*]]: memref<f32>, %[[X:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK-NOT:  memref.load
// CHECK:      gpu.launch
// CHECK-NEXT:   %[[A:.*]] = memref.load %[[X]]
// CHECK-NEXT:   %[[P:.*]] = arith.cmpf ogt, %[[A]]
// CHECK-NEXT:   %[[V:.*]] = memref.load %[[S]][]
// CHECK-NEXT:   %[[R:.*]] = scf.if %[[P]]
// CHECK-NEXT:     %[[M:.*]] = arith.mulf %[[V]], %[[A]]
// CHECK-NEXT:     scf.yield %[[M]]
func.func @device_scalar_in_region(%s: memref<f32>, %x: memref<8xf32>, %out: memref<8xf32>) {
  %v = memref.load %s[] : memref<f32>
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.cmpf ogt, %a, %zero : f32
    %r = scf.if %p -> f32 {
      %m = arith.mulf %v, %a : f32
      scf.yield %m : f32
    } else {
      scf.yield %a : f32
    }
    linalg.yield %r : f32
  }
  return
}

// -----

// A scalar loaded from host memory (a load marked gradir.host_memory by
// gpu-device-buffers: a trip counter kept on a host stack) stays on the
// host and reaches the kernel as a value (a kernel argument once outlined);
// the kernel never reads the host buffer %s.
// CHECK-LABEL: func.func @scale_by_host_scalar(
// CHECK-SAME: %[[X:.*]]: memref<7x8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK:      %[[S:.*]] = memref.alloc() : memref<3xindex>
// CHECK:      %[[K:.*]] = memref.load %[[S]][%{{.*}}] {gradir.host_memory} : memref<3xindex>
// CHECK-NEXT: gpu.launch
// CHECK-NOT:    memref.load %[[S]]
// CHECK:        memref.load %[[X]][%[[K]], %{{.*}}]
// CHECK:        gpu.terminator
// CHECK:      memref.dealloc %[[S]]
func.func @scale_by_host_scalar(%x: memref<7x8xf32>, %out: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = memref.alloc() : memref<3xindex>
  memref.store %c4, %s[%c1] : memref<3xindex>
  %k = memref.load %s[%c1] {gradir.host_memory} : memref<3xindex>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%out : memref<8xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 0 : index
    %v = memref.load %x[%k, %j] : memref<7x8xf32>
    linalg.yield %v : f32
  }
  memref.dealloc %s : memref<3xindex>
  return
}

// -----

// Few outputs and a long K: the K loop is split over blocks (grid z); the
// zero-initialised C is cleared by a kernel first and the partial sums are
// added atomically.
// CHECK-LABEL: func.func @matmul_splitk(
// CHECK-SAME: %{{.*}}: memref<32x4096xf32>, %{{.*}}: memref<4096x16xf32>, %[[C:.*]]: memref<32x16xf32>)
// CHECK:      gpu.launch {{.*}} function(@matmul_splitk_zero_0) {
// CHECK:        memref.store %cst, %[[C]]
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c32) threads({{.*}}) module(@matmul_splitk_kernels) function(@matmul_splitk_gemm_splitk_1) workgroup(
// CHECK:        %[[ACC:.*]] = scf.for
// CHECK-NOT:    memref.load %[[C]]
// CHECK:        memref.atomic_rmw addf %[[ACC]], %[[C]]
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_splitk(%a: memref<32x4096xf32>, %b: memref<4096x16xf32>, %c: memref<32x16xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x4096xf32>, memref<4096x16xf32>) outs(%c : memref<32x16xf32>) attrs = {gradir.zero_init} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A column sum whose 64 outputs make 2 blocks: the rows are split over
// blocks (grid y) and combined atomically into the (non-zero) init.
// CHECK-LABEL: func.func @column_sum_split(
// CHECK-SAME: %{{.*}}: memref<8192x64xf32>, %[[OUT:.*]]: memref<64xf32>)
// CHECK-NOT:  function(@column_sum_split_zero
// CHECK:      gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c{{[0-9]+}}, {{.*}} = %c1) {{.*}} function(@column_sum_split_reduce_split_0) workgroup(
// CHECK:        memref.atomic_rmw addf %{{.*}}, %[[OUT]]
func.func @column_sum_split(%a: memref<8192x64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<8192x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
