// RUN: %PYTHON -c "import numpy as np; np.save('%t.f64.npy', np.zeros(3)); np.save('%t.f32.npy', np.zeros(3, np.float32)); open('%t.bad.npy', 'w').write('junk')"
// RUN: not gradir-run %s --entry nope --random-inputs 0 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not gradir-run %s --input %t.f32.npy 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not gradir-run %s --input %t.f64.npy --input %t.f32.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not gradir-run %s --input %t.bad.npy --input %t.f32.npy 2>&1 | FileCheck %s --check-prefix=BADFILE
// RUN: not gradir-run %s --random-inputs x 2>&1 | FileCheck %s --check-prefix=SEED
// RUN: not gradir-run %s --bogus-flag 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not gradir-run %s --random-inputs -1 2>&1 | FileCheck %s --check-prefix=NEGSEED
// RUN: not gradir-run %s --random-inputs 0 -o %t.nodir/out.npz 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not gradir-run %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: rm -f %t.none.npz && not gradir-run %s --entry nope --random-inputs 0 -o %t.none.npz && not test -e %t.none.npz
// RUN: not gradir-run %s --random-inputs 0 --print-precision -1 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not gradir-run %s --random-inputs 0 --print-precision 99999999999 2>&1 | FileCheck %s --check-prefix=PRECISION-HUGE
// RUN: not gradir-run %s --random-inputs 0 --interpret=maybe 2>&1 | FileCheck %s --check-prefix=INTERPRET

func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.multiply"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
// ENTRY: errors.mlir:{{[0-9]+}}:1: error: no public function @nope to run (public functions: main)
// COUNT: errors.mlir:{{[0-9]+}}:1: error: @main takes 2 input tensors, got 1
// DTYPE: errors.mlir:{{[0-9]+}}:1: error: @main: argument 0 must be a float32 array of shape (3,), got a float64 array
// BADFILE: errors.mlir:{{[0-9]+}}:1: error: could not read input '{{.*}}bad.npy'
// SEED: gradir-run: error: --random-inputs expects a non-negative integer seed, not 'x'
// FLAG: gradir-run: error: unknown command line argument '--bogus-flag'
// MISSING: gradir-run: error: could not open input file '{{.*}}missing.mlir'
// NEGSEED: gradir-run: error: --random-inputs expects a non-negative integer seed, not '-1'
// NODIR: gradir-run: error: could not write output file '{{.*}}nodir/out.npz': No such file or directory
// PRECISION: gradir-run: error: --print-precision expects a number of digits from 0 to 1000, not -1
// (numpy's printer takes a C int: a larger value was an internal OverflowError)
// PRECISION-HUGE: gradir-run: error: --print-precision expects a number of digits from 0 to 1000, not 99999999999
// INTERPRET: gradir-run: error: --interpret takes no value or true/false, not 'maybe'
