// RUN: %PYTHON -c "import numpy as np; np.save('%t.x.npy', np.array([1, 2, 3], np.float32)); np.save('%t.y.npy', np.array([4, 5, 6], np.float32))"
// RUN: gradir-run %s --input %t.x.npy --input %t.y.npy | FileCheck %s
// RUN: gradir-run %s --input %t.x.npy --input %t.y.npy --interpret | FileCheck %s
// RUN: gradir-run %s --rlx-gradient --entry main_adjoint --input %t.x.npy --input %t.y.npy | FileCheck %s --check-prefix=GRAD
// RUN: gradir-run %s --pass-pipeline='builtin.module(rlx-gradient{wrt=1})' --entry main_adjoint --random-inputs 7 | FileCheck %s --check-prefix=RAND
// RUN: gradir-run %s --entry main --input %t.x.npy --input %t.y.npy -o %t.out.npz
// RUN: %PYTHON -c "import numpy as np; d = np.load('%t.out.npz'); print(sorted(d), d['result_0'])" | FileCheck %s --check-prefix=NPZ

// sum(x * y) = 4 + 10 + 18; d/dx = y, d/dy = x.
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.multiply"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
// CHECK: result 0: float32 ()
// CHECK-NEXT: 32.0

// GRAD: result 0: float32 ()
// GRAD-NEXT: 32.0
// GRAD-NEXT: result 1: float32 (3,)
// GRAD-NEXT: [4. 5. 6.]
// GRAD-NEXT: result 2: float32 (3,)
// GRAD-NEXT: [1. 2. 3.]

// RAND: result 0: float32 ()
// RAND: result 1: float32 (3,)
// RAND-NOT: result 2

// NPZ: ['result_0'] 32.0
