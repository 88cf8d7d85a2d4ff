// RUN: gradir-opt --list-passes | FileCheck %s
// RUN: gradir-opt --help | FileCheck %s
// RUN: gradir-opt --version | FileCheck %s --check-prefix=VERSION

// CHECK: gradir passes
// CHECK-DAG: --rlx-cse  -  Merges rlx ops that compute the same value.
// CHECK-DAG: --rlx-dce  -  Removes rlx and grad ops whose results are never used.
// CHECK-DAG: --rlx-early-dealloc  -  Frees each block-local buffer right after its last use.
// CHECK-DAG: --rlx-strided-copies  -  Makes each copy between non-contiguous buffers a linalg.copy (loops, not memrefCopy).
// CHECK-DAG: --rlx-verify  -
// CHECK-DAG: --rlx-memory-report  -  Reports the peak bytes of live tensors of each function (a remark).
// CHECK-DAG: --rlx-math-approx  -  Rewrites f32 math.exp/log/tanh/erf and f64 math.exp as vectorizing polynomials (no libm).
// CHECK-DAG: ops=<list<exp|log|tanh|erf>>  -  the math ops to approximate (f32; exp also f64) (default: exp,log,tanh,erf)
// CHECK-DAG: fma=<bool>  -  use math.fma (false: mulf + addf, for a CPU without FMA instructions) (default: true)
// CHECK-DAG: forward-results=<int>  -  how many leading results the forward part computes
// CHECK-DAG: remat=<none|auto>  -  none: keep what the grad checkpoint markers keep
// CHECK-DAG: budget=<string>  -  remat=auto's limit on the adjoint's peak
// CHECK-DAG: --rlx-simplify-gradient  -  Simplifies rlx functions (generated gradients above all) in place.
// CHECK-DAG: func=<string>  -  simplify only this function (default: every function)
// CHECK-DAG: --gpu-check-host  -  Checks that host code only allocates, copies and launches.
// CHECK-DAG: --gpu-device-buffers  -  Moves every buffer of bufferized functions to GPU memory.
// CHECK-DAG: keep-resident=<list<int>>  -  argument indices uploaded once and kept on the device across calls{{$}}
// CHECK-DAG: --gpu-fold-transposes  -  Reads transposed or broadcast tensors through the consumer's indexing map.
// CHECK-DAG: --gpu-fold-zero-init  -  Lets reductions into a zero fill start from zero in their kernels.
// CHECK-DAG: --gpu-kernel-attributes  -  Puts the attributes gpu-linalg-to-kernels recorded on outlined kernels.
// CHECK-DAG: --gpu-linalg-to-kernels  -  Turns every linalg.generic on device buffers into a gpu.launch kernel.
// CHECK-DAG: --gpu-persistent-buffers  -  Carves the device buffers of each host function out of one arena.
// CHECK-DAG: --gpu-rlx-to-nvvm  -  Lowers an rlx module to GPU kernels on device buffers (gradir.compile target=cuda).
// CHECK-DAG: --rlx-to-linalg  -  Lowers rlx and grad ops to linalg, tensor, arith, math and scf.
// CHECK-DAG: --rlx-lower-to-llvm  -  Lowers an rlx module to the LLVM dialect for the CPU
// CHECK-DAG: stage=<bufferized|llvm>  -  where to stop: bufferized (memrefs) or llvm (default: llvm)
// VERSION: gradir-opt (gradir {{.*}}, MLIR 22.1.8)
// Enumerated options list their choices; defaults read as IR does (no Python spellings).
// CHECK-DAG: mode=<adjoint|vjp|jvp|jacobian|hvp|hessian>  -  adjoint (scalar target), vjp (cotangent per result), jvp (forward mode: tangent per wrt argument), jacobian, hvp (Hessian-vector product of the target) or hessian (default: adjoint)
// CHECK-DAG: format=<isa|bin|fatbin>  -
// CHECK-DAG: simplify=<bool>  -  {{.*}} (default: true)
// CHECK-DAG: wrt=<list<int>>  -  argument indices to differentiate with respect to (default: every floating-point argument){{$}}
// CHECK-NOT: True
// CHECK-NOT: False
