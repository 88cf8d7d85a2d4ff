// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-memory-report | FileCheck %s
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(rlx-memory-report))'
// Peaks worked out by hand: a tensor is live from its op to its last use,
// arguments throughout; while an op runs its operands and results are live.
// The IR is unchanged.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT: "rlx.multiply"
// CHECK-NEXT: "rlx.exp"
// CHECK-NEXT: "rlx.sum"
// CHECK-NEXT: return

// args 32; multiply 32+16; exp 32+16+16 = 64 (the peak); sum 32+16+4; return 32+4.
// expected-remark @+1 {{@plain: peak 64 bytes = arguments 32 + saved for backward 0 + temporaries 32, at 'rlx.exp' (op 1); saved for backward in all: 0 bytes; 12 FLOPs}}
func.func @plain(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = "rlx.multiply"(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "rlx.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "rlx.sum"(%1) : (tensor<4xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// @main_adjoint returns @main's one result first: exp and sum are the
// forward, %0 is saved for the backward's multiply.  At the multiply:
// x 16 + %0 16 (saved) + %1 4 + %3 16 + %4 16 = 68.
// expected-remark @+1 {{@main: peak 36 bytes = arguments 16 + saved for backward 0 + temporaries 20, at 'rlx.sum' (op 1); saved for backward in all: 0 bytes; 8 FLOPs}}
func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "rlx.sum"(%0) : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
// expected-remark @+1 {{@main_adjoint: peak 68 bytes = arguments 16 + saved for backward 16 + temporaries 36, at 'rlx.multiply' (op 4); saved for backward in all: 16 bytes; 12 FLOPs}}
func.func @main_adjoint(%x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %0 = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "rlx.sum"(%0) : (tensor<4xf32>) -> tensor<f32>
  %2 = "rlx.ones"() : () -> tensor<f32>
  %3 = "rlx.broadcast_to"(%2) : (tensor<f32>) -> tensor<4xf32>
  %4 = "rlx.multiply"(%3, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %4 : tensor<f32>, tensor<4xf32>
}

// -----

// A tuple and an item taken from it refer to existing buffers: %0 stays
// live until the negative (16 + 16 + 16 = 48).
// expected-remark @+1 {{@tuples: peak 48 bytes = arguments 16 + saved for backward 0 + temporaries 32, at 'rlx.negative' (op 3)}}
func.func @tuples(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "rlx.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "rlx.tuple"(%0, %x) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %2 = "rlx.tuple_get_item"(%1) {index = 0 : i64} : (tuple<tensor<4xf32>, tensor<4xf32>>) -> tensor<4xf32>
  %3 = "rlx.negative"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// f64 and a matmul: 2*M*N*K FLOPs; an unused result is live at its op only.
// args 2*3*8 + 3*2*8 = 96; matmul 96+32 = 128; exp (dead) 96+32+32 = 160.
// expected-remark @+1 {{@f64: peak 160 bytes = arguments 96 + saved for backward 0 + temporaries 64, at 'rlx.exp' (op 1); saved for backward in all: 0 bytes; 28 FLOPs}}
func.func @f64(%a: tensor<2x3xf64>, %b: tensor<3x2xf64>) -> tensor<2x2xf64> {
  %0 = "rlx.matmul"(%a, %b) : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>
  %1 = "rlx.exp"(%0) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}
