// remat=auto on a chain of six tanh (each output, 256 bytes, is what the
// backward needs).  Storing everything peaks at 2056 bytes.
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=1.0' | FileCheck %s --check-prefix=ALL
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=100MB' | FileCheck %s --check-prefix=ALL
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.8' | FileCheck %s --check-prefix=TWO
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=80%' | FileCheck %s --check-prefix=TWO
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=1600' | FileCheck %s --check-prefix=TWO
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.8 simplify=false' | FileCheck %s --check-prefix=TWO
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=1.5KiB' | FileCheck %s --check-prefix=THREE
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.8' --rlx-memory-report 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.8 split=true' | FileCheck %s --check-prefix=SPLIT
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.3' 2>&1 >/dev/null | FileCheck %s --check-prefix=LOW
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.3' 2>/dev/null | FileCheck %s --check-prefix=THREE
// RUN: gradir-opt %s --rlx-gradient='remat=auto budget=0.8' | gradir-opt --rlx-cse --rlx-verify | FileCheck %s --check-prefix=TWO

// ALL-LABEL: func.func @main_adjoint(
// ALL-NOT: grad.recomputed
// ALL: return

// 80% (1644 bytes): recomputing h1 and h2 from x at the end of the backward
// (the smallest saving that fits) gives 1544 bytes.
// TWO-LABEL: func.func @main_adjoint(
// TWO-SAME: %[[X:[^:]*]]: tensor<64xf32>)
// TWO: %[[H1:.*]] = "rlx.tanh"(%[[X]])
// TWO-NEXT: %[[H2:.*]] = "rlx.tanh"(%[[H1]])
// TWO-NEXT: %[[H3:.*]] = "rlx.tanh"(%[[H2]])
// TWO: %[[R1:.*]] = "rlx.tanh"(%[[X]]) {grad.recomputed}
// TWO-NEXT: %[[R2:.*]] = "rlx.tanh"(%[[R1]]) {grad.recomputed}
// TWO-NEXT: "rlx.square"(%[[R2]])
// TWO-NOT: grad.recomputed
// TWO: "rlx.square"(%[[R1]])
// TWO-NOT: grad.recomputed
// TWO: return

// REPORT: remark: @main_adjoint: peak 1544 bytes

// The backward's function takes the four kept values (and x), not h1, h2.
// SPLIT-LABEL: func.func @main_fwd(
// SPLIT-SAME: -> (tensor<f32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
// SPLIT-LABEL: func.func @main_bwd(
// SPLIT-COUNT-2: {grad.recomputed}
// SPLIT-NOT: grad.recomputed
// SPLIT: return

// 1.5 KiB (1536 bytes): h4 is recomputed from h3 too (1288 bytes).
// THREE-LABEL: func.func @main_adjoint(
// THREE-SAME: %[[X:[^:]*]]: tensor<64xf32>)
// THREE: %[[H1:.*]] = "rlx.tanh"(%[[X]])
// THREE-NEXT: %[[H2:.*]] = "rlx.tanh"(%[[H1]])
// THREE-NEXT: %[[H3:.*]] = "rlx.tanh"(%[[H2]])
// THREE: "rlx.tanh"(%[[H3]]) {grad.recomputed}
// THREE: %[[R1:.*]] = "rlx.tanh"(%[[X]]) {grad.recomputed}
// THREE-NEXT: "rlx.tanh"(%[[R1]]) {grad.recomputed}
// THREE-NOT: grad.recomputed
// THREE: return

// 30% cannot be met: a warning names the lowest peak, and the plan with it
// is used.
// LOW: warning: rlx-gradient: remat=auto cannot meet the budget of 616 bytes: the lowest peak it reaches is 1288 bytes (storing everything: 2056 bytes)
func.func @main(%x: tensor<64xf32>) -> tensor<f32> {
  %h1 = "rlx.tanh"(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %h2 = "rlx.tanh"(%h1) : (tensor<64xf32>) -> tensor<64xf32>
  %h3 = "rlx.tanh"(%h2) : (tensor<64xf32>) -> tensor<64xf32>
  %h4 = "rlx.tanh"(%h3) : (tensor<64xf32>) -> tensor<64xf32>
  %h5 = "rlx.tanh"(%h4) : (tensor<64xf32>) -> tensor<64xf32>
  %h6 = "rlx.tanh"(%h5) : (tensor<64xf32>) -> tensor<64xf32>
  %l = "rlx.sum"(%h6) : (tensor<64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
