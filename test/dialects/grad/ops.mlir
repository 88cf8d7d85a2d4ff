// Round trip of the grad markers (tensor and tuple operands).
// RUN: mlir-opt --irdl-file=%grad_irdl %s | mlir-opt --irdl-file=%grad_irdl | FileCheck %s
// RUN: gradir-opt %s | gradir-opt | FileCheck %s
// RUN: gradir-opt %s --rlx-verify | FileCheck %s

// CHECK-LABEL: func.func @markers(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[T:.*]]: tuple<tensor<2x3xf32>, tensor<f32>>)
// CHECK:         %[[S:.*]] = "grad.start_checkpoint"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[E:.*]] = "grad.end_checkpoint"(%[[S]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[N:.*]] = "grad.no_grad"(%[[E]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[NT:.*]] = "grad.no_grad"(%[[T]]) : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tuple<tensor<2x3xf32>, tensor<f32>>
// CHECK-NEXT:    %[[ST:.*]] = "grad.start_checkpoint"(%[[NT]]) : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tuple<tensor<2x3xf32>, tensor<f32>>
// CHECK-NEXT:    return %[[N]], %[[ST]]
func.func @markers(%x: tensor<2x3xf32>, %t: tuple<tensor<2x3xf32>, tensor<f32>>) -> (tensor<2x3xf32>, tuple<tensor<2x3xf32>, tensor<f32>>) {
  %0 = "grad.start_checkpoint"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "grad.end_checkpoint"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "grad.no_grad"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "grad.no_grad"(%t) : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tuple<tensor<2x3xf32>, tensor<f32>>
  %4 = "grad.start_checkpoint"(%3) : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tuple<tensor<2x3xf32>, tensor<f32>>
  return %2, %4 : tensor<2x3xf32>, tuple<tensor<2x3xf32>, tensor<f32>>
}
