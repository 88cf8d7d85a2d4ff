// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='stage=bufferized threads=1' | FileCheck %s --check-prefix=BUF
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm=threads=1 | FileCheck %s --check-prefix=LLVM
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='opt-level=0 stage=bufferized threads=1' | FileCheck %s --check-prefix=O0

// The CPU pipeline.  ABI: results become out-params (caller-allocated,
// identity layouts) written in place, no function results, a C interface.
// An elementwise chain is one loop nest writing the out-param directly,
// vectorized: two 16-lane vectors (AVX-512 f32) per step along the rows.

// BUF-LABEL: func.func @chain(
// BUF-SAME: %[[A:[^:]*]]: memref<64x512xf32>, %[[B:[^:]*]]: memref<512xf32>, %[[OUT:[^:]*]]: memref<64x512xf32>) attributes
// BUF-NOT: memref.alloc
// BUF: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// BUF-NEXT: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c32 {
// BUF-DAG: %[[SA:.*]] = memref.subview %[[A]][%[[I]], %[[J]]] [1, 32]
// BUF-DAG: %[[SB:.*]] = memref.subview %[[B]][%[[J]]] [32]
// BUF-DAG: %[[SO:.*]] = memref.subview %[[OUT]][%[[I]], %[[J]]] [1, 32]
// BUF: %[[VA:.*]] = vector.transfer_read %[[SA]]{{.*}}, vector<32xf32>
// BUF: %[[VB:.*]] = vector.transfer_read %[[SB]]{{.*}}, vector<32xf32>
// BUF-NEXT: %[[S:.*]] = arith.addf %[[VA]], %[[VB]] : vector<32xf32>
// BUF-NEXT: %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : vector<32xf32>
// BUF-NEXT: %[[M:.*]] = arith.mulf %[[R]], %[[VA]] : vector<32xf32>
// BUF-NEXT: vector.transfer_write %[[M]], %[[SO]]
// BUF-NOT: linalg.generic
// BUF-NOT: memref.copy
// BUF: return{{$}}

// LLVM-LABEL: llvm.func @chain(
// LLVM-SAME: llvm.emit_c_interface
// Both loops (rows, 32-lane steps) are marked: LLVM does not unroll them
// again (rlx-loop-hints).
// LLVM-COUNT-2: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// LLVM-NOT: llvm.return %
// LLVM-LABEL: llvm.func @_mlir_ciface_chain(
// LLVM-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM: llvm.call @chain({{.*}}) : ({{.*}}) -> ()

// Without fusion (opt-level=0) there are three loop nests, each updating the
// out-param in place (no temporary buffer).
// O0-LABEL: func.func @chain(
// O0-NOT: memref.alloc
// O0-COUNT-3: linalg.generic {{.*}} outs(%arg2 : memref<64x512xf32>)
// O0-NOT: linalg.generic
// O0: return
func.func @chain(%a: tensor<64x512xf32>, %b: tensor<512xf32>) -> tensor<64x512xf32> {
  %0 = "rlx.add"(%a, %b) : (tensor<64x512xf32>, tensor<512xf32>) -> tensor<64x512xf32>
  %1 = "rlx.relu"(%0) : (tensor<64x512xf32>) -> tensor<64x512xf32>
  %2 = "rlx.multiply"(%1, %a) : (tensor<64x512xf32>, tensor<64x512xf32>) -> tensor<64x512xf32>
  return %2 : tensor<64x512xf32>
}

// -----

// Tuple results are flattened into out-params; the matmul is tiled to 8x32,
// vectorized (vector.fma) with the accumulator in registers across the K
// loop and written into the first out-param; exp fuses into the sum, as
// rlx-math-approx's polynomial (no libm call).
// BUF-LABEL: func.func @tuple_out(
// BUF-SAME: %{{[^:]*}}: memref<8x16xf32>, %{{[^:]*}}: memref<16x32xf32>, %[[MM:[^:]*]]: memref<8x32xf32>, %[[S:[^:]*]]: memref<f32>) attributes
// BUF-SAME: gradir.original_type = (tensor<8x16xf32>, tensor<16x32xf32>) -> tuple<tensor<8x32xf32>, tensor<f32>>
// BUF-NOT: memref.alloc
// BUF: %[[ACC:.*]] = vector.transfer_read %[[MM]]
// BUF: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (vector<8x32xf32>)
// BUF: vector.fma {{.*}} : vector<32xf32>
// BUF: vector.transfer_write %[[R]], %[[MM]]
// BUF: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[MM]] : memref<8x32xf32>) outs(%[[S]] : memref<f32>)
// BUF-NOT: math.exp
// BUF: math.roundeven
// BUF: math.fma
// BUF: linalg.yield
// BUF-NOT: memref.copy
// BUF: return

// LLVM-LABEL: llvm.func @_mlir_ciface_tuple_out(
// LLVM-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @tuple_out(%a: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tuple<tensor<8x32xf32>, tensor<f32>> {
  %0 = "rlx.matmul"(%a, %w) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = "rlx.exp"(%0) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %2 = "rlx.sum"(%1) : (tensor<8x32xf32>) -> tensor<f32>
  %t = "rlx.tuple"(%0, %2) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<8x32xf32>, tensor<f32>) -> tuple<tensor<8x32xf32>, tensor<f32>>
  return %t : tuple<tensor<8x32xf32>, tensor<f32>>
}

// -----

// An intermediate that no result aliases is allocated and freed before the
// function returns.
// BUF-LABEL: func.func @intermediate(
// BUF: %[[T:.*]] = memref.alloc() {{.*}} : memref<8x32xf32>
// BUF: vector.transfer_write %{{.*}}, %[[T]]
// BUF: linalg.generic {{.*}} ins(%[[T]] : memref<8x32xf32>)
// BUF: memref.dealloc %[[T]] : memref<8x32xf32>
// BUF-NEXT: return
func.func @intermediate(%a: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8xf32> {
  %0 = "rlx.matmul"(%a, %w) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = "rlx.sum"(%0) {axis = array<i64: 1>} : (tensor<8x32xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// A result that is an argument is copied into its out-param (rlx-distinct-results); a private
// callee is inlined and removed.
// BUF-LABEL: func.func @passthrough(
// BUF-SAME: %[[X:[^:]*]]: memref<64xf32>, %[[O1:[^:]*]]: memref<64xf32>, %[[O2:[^:]*]]: memref<64xf32>) attributes
// BUF-DAG: linalg.copy {{.*}}ins(%[[X]] : memref<64xf32>) outs(%[[O1]] : memref<64xf32>)
// BUF-DAG: %[[S2:.*]] = memref.subview %[[O2]]
// BUF-DAG: vector.transfer_write %{{.*}}, %[[S2]]
// BUF-NOT: call
// BUF-NOT: func.func private
// LLVM-NOT: @helper
func.func private @helper(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = "rlx.tanh"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
func.func @passthrough(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = call @helper(%x) : (tensor<64xf32>) -> tensor<64xf32>
  return %x, %0 : tensor<64xf32>, tensor<64xf32>
}

// -----

// A value returned twice (two parameters with one gradient, as the biases of
// a ResNet block's two BatchNorms) fills both out-params; upstream
// buffer-results-to-out-params alone crashes on a buffer returned twice
// (rlx-distinct-results copies the later ones).
// BUF-LABEL: func.func @twice(
// BUF-SAME: %[[X:[^:]*]]: memref<64xf32>, %[[O1:[^:]*]]: memref<64xf32>, %[[O2:[^:]*]]: memref<64xf32>, %[[O3:[^:]*]]: memref<64xf32>) attributes
// BUF-DAG: %[[S1:.*]] = memref.subview %[[O1]]
// BUF-DAG: vector.transfer_write %{{.*}}, %[[S1]]
// BUF-DAG: linalg.copy {{.*}}ins(%[[O1]] : memref<64xf32>) outs(%[[O2]] : memref<64xf32>)
// BUF-DAG: linalg.copy {{.*}}ins(%[[O1]] : memref<64xf32>) outs(%[[O3]] : memref<64xf32>)
// LLVM-LABEL: llvm.func @twice(
func.func @twice(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = "rlx.tanh"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  return %0, %0, %0 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
