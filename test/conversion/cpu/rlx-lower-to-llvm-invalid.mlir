// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-lower-to-llvm
// RUN: gradir-opt %s --split-input-file --verify-diagnostics --rlx-lower-to-llvm='stage=bufferized'
// RUN: not gradir-opt %s --split-input-file --rlx-lower-to-llvm='stage=objects' 2>&1 | FileCheck %s --check-prefix=STAGE
// Refusals of the CPU pipeline surface at the offending op.

// STAGE: <pass-pipeline>:1:16: error: option 'stage' of pass 'rlx-lower-to-llvm' must be one of bufferized, llvm, got 'objects'
// STAGE-NOT: rlx.exp

func.func @dynamic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tensor.cast %x : tensor<4xf32> to tensor<?xf32>
  // expected-error @+1 {{'rlx.exp' op operand must have a static shape, got tensor<?xf32>}}
  %0 = "rlx.exp"(%c) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = tensor.cast %0 : tensor<?xf32> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error @+1 {{function argument #0: element type i8 of tensor<4xi8> is not supported}}
func.func @bad_element(%x: tensor<4xi8>) -> tensor<4xi32> {
  %0 = arith.extsi %x : tensor<4xi8> to tensor<4xi32>
  return %0 : tensor<4xi32>
}
