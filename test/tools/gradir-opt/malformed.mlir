// Malformed input: a located diagnostic with the source line, exit code 1,
// never a Python traceback.
// RUN: not gradir-opt %s 2>&1 | FileCheck %s
// RUN: not gradir-opt %s --rlx-dce -o %t.out 2>&1 | FileCheck %s
// RUN: not gradir-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: printf '\xff\xfe' > %t.bin && not gradir-opt %t.bin 2>&1 | FileCheck %s --check-prefix=BINARY

// CHECK-NOT: Traceback
// CHECK: malformed.mlir:[[@LINE+4]]:20: error: expected ')' to end operand list
// CHECK-NEXT: {{^}}  %0 = "rlx.exp"(%a : (tensor<2xf32>
// CHECK-NEXT: {{^}}                   ^
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "rlx.exp"(%a : (tensor<2xf32>
// CHECK-NOT: Traceback

// MISSING: gradir-opt: error: could not open input file '{{.*}}does-not-exist.mlir': No such file or directory
// BINARY-NOT: Traceback
// BINARY: error:
