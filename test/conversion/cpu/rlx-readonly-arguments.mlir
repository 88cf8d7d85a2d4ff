// RUN: gradir-opt %s --rlx-readonly-arguments --split-input-file | FileCheck %s
// RUN: gradir-opt %s --split-input-file --rlx-readonly-arguments --rlx-readonly-arguments | FileCheck %s
// The whole CPU pipeline up to bufferization: the loop updates a copy of
// %a (its result's out-param), never %a's own buffer.
// RUN: gradir-opt %s --split-input-file --rlx-lower-to-llvm='stage=bufferized' | FileCheck %s --check-prefix=BUF

// A public function's tensor arguments become read-only; existing argument
// attributes stay.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME: %{{.*}}: tensor<4x3xf32> {bufferization.writable = false}
// CHECK-SAME: %{{.*}}: tensor<1x3xf32> {bufferization.writable = false, gradir.name = "b"})
// BUF-LABEL: func.func @loop(
// BUF-SAME: %[[A:arg0]]: memref<4x3xf32>
// BUF-SAME: %[[OUT:arg2]]: memref<4x3xf32>
// BUF: memref.copy %[[A]], %[[OUT]]
// BUF: scf.for
// BUF-NOT: %[[A]][
// BUF: memref.store {{.*}}, %[[OUT]][
// BUF-NOT: %[[A]][
// BUF: return
func.func @loop(%a: tensor<4x3xf32>, %b: tensor<1x3xf32> {gradir.name = "b"}) -> tensor<4x3xf32> {
  %n = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4x3xf32>) {
    %u = tensor.insert_slice %b into %acc[%i, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
    scf.yield %u : tensor<4x3xf32>
  }
  return %r : tensor<4x3xf32>
}

// -----

// A caller that donates its buffer (writable = true) keeps that; private
// functions and declarations are left alone.
// CHECK-LABEL: func.func @donated(
// CHECK-SAME: {bufferization.writable = true}
// CHECK-SAME: {bufferization.writable = false}
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: writable
// CHECK: func.func private @external(tensor<2xf32>)
func.func @donated(%a: tensor<2xf32> {bufferization.writable = true}, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = call @helper(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @helper(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @external(tensor<2xf32>)
