// RUN: gradir-opt %S/../autodiff/scf/Inputs/two_loops_captured.mlir --rlx-gradient='remat=auto budget=0.5' 2>/dev/null | FileCheck %s
// remat=auto recomputes a loop whose recorded stack the backward loop
// captures (reads inside its body, no operand of the loop): the body reads
// the clone's stack; the original stack is left to the forward only.
// (Numbers: test/autodiff/scf/numeric.py, remat_captured_stack.)

// CHECK-LABEL: func.func @main_adjoint(
// CHECK:         %[[FWD:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %arg0, %{{.*}} = %[[EMPTY:.*]])
// CHECK:           scf.yield
// CHECK:         %[[RE:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %arg0, %{{.*}} = %[[EMPTY]])
// CHECK:           scf.yield
// CHECK-NEXT:    } {grad.recomputed}
// CHECK-NEXT:    scf.for
// CHECK-NOT:       %[[FWD]]#1
// CHECK:           tensor.extract_slice %[[RE]]#1[
// CHECK-NOT:       %[[FWD]]#1
// CHECK:         return
