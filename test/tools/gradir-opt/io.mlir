// Input from a file, from stdin (with and without "-"), output to -o.
// RUN: gradir-opt %S/Inputs/add.mlir | FileCheck %s
// RUN: gradir-opt < %S/Inputs/add.mlir | FileCheck %s
// RUN: cat %S/Inputs/add.mlir | gradir-opt - | FileCheck %s
// RUN: rm -f %t && gradir-opt %S/Inputs/add.mlir -o %t && FileCheck %s --input-file=%t
// Output is deterministic and re-parses to the same text.
// RUN: gradir-opt %S/Inputs/add.mlir > %t.1 && gradir-opt %t.1 > %t.2 && diff %t.1 %t.2

// CHECK: module {
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[S:.*]] = "rlx.add"(%[[A]], %[[B]])
// CHECK-NEXT: "rlx.exp"(%[[A]])
// CHECK-NEXT: return %[[S]]
