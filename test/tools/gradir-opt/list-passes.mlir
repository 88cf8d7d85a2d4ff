// RUN: gradir-opt --list-passes | FileCheck %s
// RUN: gradir-opt --help | FileCheck %s
// RUN: gradir-opt --version | FileCheck %s --check-prefix=VERSION

// CHECK: gradir passes
// CHECK-DAG: --rlx-cse  -  Merges rlx ops that compute the same value.
// CHECK-DAG: --rlx-dce  -  Removes rlx and grad ops whose results are never used.
// CHECK-DAG: --rlx-verify  -
// CHECK-DAG: --rlx-memory-report  -  Reports the peak bytes of live tensors of each function (a remark).
// CHECK-DAG: forward-results=<int>  -  how many leading results the forward part computes
// CHECK-DAG: remat=<string>  -  none: keep what the grad checkpoint markers keep
// CHECK-DAG: budget=<string>  -  remat=auto's limit on the adjoint's peak
// CHECK-DAG: --rlx-simplify-gradient  -  Simplifies rlx functions (generated gradients above all) in place.
// CHECK-DAG: func=<string>  -  simplify only this function (default: every function)
// CHECK-DAG: --rlx-to-linalg  -  Lowers rlx and grad ops to linalg, tensor, arith, math and scf.
// CHECK-DAG: --rlx-lower-to-llvm  -  Lowers an rlx module to the LLVM dialect for the CPU
// CHECK-DAG: stage=<string>  -  where to stop: bufferized (memrefs) or llvm (default: llvm)
// VERSION: gradir-opt (gradir {{.*}}, MLIR 22.1.8)
