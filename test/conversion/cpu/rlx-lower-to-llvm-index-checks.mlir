// RUN: gradir-opt %s --rlx-to-linalg='index-checks=true' | FileCheck %s --check-prefix=MARK
// RUN: gradir-opt %s --rlx-to-linalg | FileCheck %s --check-prefix=PLAIN
// RUN: gradir-opt %s --rlx-lower-to-llvm='stage=bufferized opt-level=0 threads=1' | FileCheck %s --check-prefix=BUF
// RUN: gradir-opt %s --rlx-lower-to-llvm=threads=1 | FileCheck %s --check-prefix=LLVM
// The CPU pipeline checks the indices of rlx.take (mode "fast") and the
// targets of rlx.nll_loss at run time (conversion/cpu/runtime_checks.py,
// add_index_checks): rlx-to-linalg{index-checks=true} marks their gathers
// (gradir.index_check: the op, the range, ignore_index, the words), and
// before each marked gather one reduction finds the smallest and the
// largest index (an ignored target counting as 0), and a value out of the
// range calls @gradir_check_fail with the op's location. "clip" and "wrap"
// define every index: no check. Without the option, no mark (the GPU
// pipeline, upstream-only pipelines). The numbers: numeric_index_checks.py.

func.func @take(%x: tensor<5x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  %t = "rlx.take"(%x, %i) {axis = array<i64: 0>} : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return %t : tensor<3x4xf32>
}

func.func @clip(%x: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %t = "rlx.take"(%x, %i) {axis = array<i64: 0>, mode = "clip"} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %t : tensor<3x4xf32>
}

func.func @nll(%p: tensor<4x3xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %l = "rlx.nll_loss"(%p, %t) {ignore_index = 1 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// MARK-LABEL: func.func @take(
// MARK: linalg.generic {{.*}} ins(%arg1 : tensor<3xi32>) {{.*}} attrs = {gradir.index_check = ["rlx.take", -5, 5, "", "index out of range [-5, 5) on axis 0"]}
// MARK-LABEL: func.func @clip(
// MARK-NOT: gradir.index_check
// MARK-LABEL: func.func @nll(
// MARK: linalg.generic {{.*}} ins(%arg1 : tensor<4xi64>) {{.*}} attrs = {gradir.index_check = ["rlx.nll_loss", 0, 3, 1, "target out of range [0, 3)"]}

// PLAIN-NOT: gradir.index_check

// BUF-LABEL: func.func @take(
// BUF-DAG: %[[MSG:.*]] = llvm.mlir.addressof @gradir_check_message_0 : !llvm.ptr
// BUF-DAG: %[[LEAST:.*]] = arith.constant -5 : i64
// BUF-DAG: %[[BOUND:.*]] = arith.constant 5 : i64
// BUF: arith.extsi %{{.*}} : i32 to i64
// BUF: arith.minsi %{{.*}} : i64
// BUF: arith.maxsi %{{.*}} : i64
// BUF: %[[BELOW:.*]] = arith.cmpi slt, %[[LO:.*]], %[[LEAST]] : i64
// BUF-NEXT: %[[ABOVE:.*]] = arith.cmpi sge, %[[HI:.*]], %[[BOUND]] : i64
// BUF-NEXT: %[[BAD:.*]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// BUF-NEXT: scf.if %[[BAD]] {
// BUF-NEXT: %[[V:.*]] = arith.select %[[BELOW]], %[[LO]], %[[HI]] : i64
// BUF-NEXT: llvm.call @gradir_check_fail(%[[MSG]], %[[V]]) : (!llvm.ptr, i64) -> ()
// BUF-LABEL: func.func @clip(
// BUF-NOT: gradir_check
// BUF-LABEL: func.func @nll(
// BUF-DAG: %[[MSG1:.*]] = llvm.mlir.addressof @gradir_check_message_1 : !llvm.ptr
// BUF-DAG: %[[IGNORE:.*]] = arith.constant 1 : i64
// BUF: %[[EQ:.*]] = arith.cmpi eq, %{{.*}}, %[[IGNORE]] : i64
// BUF-NEXT: arith.select %[[EQ]], %{{.*}}, %{{.*}} : i64
// BUF: llvm.call @gradir_check_fail(%[[MSG1]], %{{.*}}) : (!llvm.ptr, i64) -> ()
// BUF: llvm.mlir.global internal constant @gradir_check_message_0("{{.*}}rlx-lower-to-llvm-index-checks.mlir:16:8: 'rlx.take' op index out of range [-5, 5) on axis 0, got \00")
// BUF: llvm.mlir.global internal constant @gradir_check_message_1("{{.*}}rlx-lower-to-llvm-index-checks.mlir:26:8: 'rlx.nll_loss' op target out of range [0, 3), got \00")

// LLVM-LABEL: llvm.func @take(
// LLVM: llvm.call @gradir_check_fail
// LLVM-LABEL: llvm.func @clip(
// LLVM-NOT: gradir_check_fail
// LLVM-LABEL: llvm.func @nll(
// LLVM: llvm.call @gradir_check_fail
