// The same input gives byte-identical IR, whatever Python's hash seed (set
// and dict orders): the gradient with checkpoint planning and simplification,
// and the whole CPU lowering.
// RUN: env PYTHONHASHSEED=1 gradir-opt %gradir_src/examples/transformer_block.mlir --rlx-gradient='remat=auto budget=0.5' -o %t.grad1
// RUN: env PYTHONHASHSEED=2 gradir-opt %gradir_src/examples/transformer_block.mlir --rlx-gradient='remat=auto budget=0.5' -o %t.grad2
// RUN: diff %t.grad1 %t.grad2
// RUN: env PYTHONHASHSEED=3 gradir-opt %gradir_src/examples/convnet.mlir --rlx-gradient --rlx-lower-to-llvm='threads=2' -o %t.llvm1
// RUN: env PYTHONHASHSEED=4 gradir-opt %gradir_src/examples/convnet.mlir --rlx-gradient --rlx-lower-to-llvm='threads=2' -o %t.llvm2
// RUN: diff %t.llvm1 %t.llvm2
// RUN: FileCheck %s < %t.grad1
// CHECK: func.func @main_adjoint
