# RUN: %PYTHON %s | FileCheck %s
# The interpreter's control flow and the index/tensor ops around it, against
# numpy: scf.for (lb, step, several iter_args), scf.if (both branches, no
# results), scf.while, tensor.extract/from_elements/empty/insert/
# extract_slice/insert_slice, arith on indices; errors are located.

import numpy as np

import gradir
from gradir import interpret
from gradir.interp import InterpreterError


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


LOOP = """
func.func @main(%x: tensor<3xf64>) -> (tensor<3xf64>, tensor<f64>) {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c11 = arith.constant 11 : index
  %z = arith.constant dense<0.0> : tensor<f64>
  %r:2 = scf.for %i = %c2 to %c11 step %c3 iter_args(%h = %x, %n = %z) -> (tensor<3xf64>, tensor<f64>) {
    %e = "rlx.sin"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    %i64 = arith.index_cast %i : index to i64
    %ti = tensor.from_elements %i64 : tensor<i64>
    %t = "rlx.astype"(%ti) : (tensor<i64>) -> tensor<f64>
    %n2 = "rlx.add"(%n, %t) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    scf.yield %e, %n2 : tensor<3xf64>, tensor<f64>
  }
  return %r#0, %r#1 : tensor<3xf64>, tensor<f64>
}
"""


@run
def for_loop():
    x = np.array([0.1, 0.2, 0.3])
    h, n = interpret(gradir.parse(LOOP), "main", x)
    np.testing.assert_allclose(h, np.sin(np.sin(np.sin(x))))
    assert int(n) == 2 + 5 + 8, n
    print("for ok")
# CHECK-LABEL: TEST: for_loop
# CHECK: for ok


BRANCH = """
func.func @main(%x: tensor<f64>) -> tensor<f64> {
  %z = "rlx.zeros"() : () -> tensor<f64>
  %gt = "rlx.greater"(%x, %z) : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %c = tensor.extract %gt[] : tensor<i1>
  %r = scf.if %c -> (tensor<f64>) {
    %e = "rlx.exp"(%x) : (tensor<f64>) -> tensor<f64>
    scf.yield %e : tensor<f64>
  } else {
    %n = "rlx.negative"(%x) : (tensor<f64>) -> tensor<f64>
    scf.yield %n : tensor<f64>
  }
  scf.if %c {
  }
  return %r : tensor<f64>
}
"""


@run
def branches():
    m = gradir.parse(BRANCH)
    assert float(interpret(m, "main", np.array(0.5))[0]) == np.exp(0.5)
    assert float(interpret(m, "main", np.array(-0.5))[0]) == 0.5
    print("if ok")
# CHECK-LABEL: TEST: branches
# CHECK: if ok


WHILE = """
func.func @main(%x: tensor<f64>) -> (tensor<f64>, tensor<i64>) {
  %c0 = arith.constant 0 : index
  %lim = arith.constant dense<100.0> : tensor<f64>
  %r:2 = scf.while (%h = %x, %i = %c0) : (tensor<f64>, index) -> (tensor<f64>, index) {
    %lt = "rlx.less"(%h, %lim) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %h, %i : tensor<f64>, index
  } do {
  ^bb0(%h: tensor<f64>, %i: index):
    %c1 = arith.constant 1 : index
    %d = "rlx.add"(%h, %h) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    %in = arith.addi %i, %c1 : index
    scf.yield %d, %in : tensor<f64>, index
  }
  %n = arith.index_cast %r#1 : index to i64
  %t = tensor.from_elements %n : tensor<i64>
  return %r#0, %t : tensor<f64>, tensor<i64>
}
"""


@run
def while_loop():
    h, n = interpret(gradir.parse(WHILE), "main", np.array(3.0))
    assert float(h) == 192.0 and int(n) == 6, (h, n)
    h, n = interpret(gradir.parse(WHILE), "main", np.array(300.0))
    assert float(h) == 300.0 and int(n) == 0, (h, n)
    print("while ok")
# CHECK-LABEL: TEST: while_loop
# CHECK: while ok


SLICES = """
func.func @main(%x: tensor<3xf64>) -> (tensor<?x3xf64>, tensor<3xf64>, tensor<?xindex>, index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %n = arith.ceildivsi %c7, %c2 : index
  %e = tensor.empty(%n) : tensor<?x3xf64>
  %s = tensor.insert_slice %x into %e[%c2, 0] [1, 3] [1, 1] : tensor<3xf64> into tensor<?x3xf64>
  %g = tensor.extract_slice %s[%c2, 0] [1, 3] [1, 1] : tensor<?x3xf64> to tensor<3xf64>
  %ei = tensor.empty(%n) : tensor<?xindex>
  %ins = tensor.insert %c7 into %ei[%c1] : tensor<?xindex>
  %d = tensor.dim %s, %c1 : tensor<?x3xf64>
  %r = arith.remsi %c7, %c2 : index
  %sum = arith.addi %d, %r : index
  return %s, %g, %ins, %sum : tensor<?x3xf64>, tensor<3xf64>, tensor<?xindex>, index
}
"""


@run
def tensor_ops():
    x = np.array([1.0, 2.0, 3.0])
    s, g, ins, d = interpret(gradir.parse(SLICES), "main", x)
    assert s.shape == (4, 3) and (s[2] == x).all() and (g == x).all()
    assert list(ins) == [0, 7, 0, 0] and int(d) == 4, (ins, d)
    print("tensor ops ok")
# CHECK-LABEL: TEST: tensor_ops
# CHECK: tensor ops ok


@run
def located_errors():
    text = LOOP.replace("%c3 = arith.constant 3 : index", "%c3 = arith.constant 0 : index")
    try:
        interpret(gradir.parse(text), "main", np.zeros(3))
    except InterpreterError as err:
        print(err)
# CHECK-LABEL: TEST: located_errors
# CHECK: <string>:{{[0-9]+}}:{{[0-9]+}}: 'scf.for' op step must be positive, got 0
