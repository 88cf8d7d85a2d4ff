# RUN: %PYTHON %s | FileCheck %s
"""The dialect-level helpers of gradir.dialects.util and the IR walks of gradir.ir."""

from mlir import ir

import gradir
from gradir.dialects.util import (ShapeError, checked_axes, elt_of, is_pure, normalize_axes,
                                  numel, reduction_axes, shape_of)
from gradir.ir import (blocks_of, find_function, function_type, functions, has_uses,
                       symbol_name, walk)


def run(f):
    print("\nTEST:", f.__name__)
    with gradir.make_context(), ir.Location.unknown():
        f()
    return f


@run
def axes():
    print(normalize_axes([-1, 0, -1], 3))
    print(reduction_axes([-1, 0, -1], 3), reduction_axes(None, 3), reduction_axes([0], 0))
    print(checked_axes([-2, 1], 3, unique=False))
    for bad in ([3], [-4], [0, -3]):
        try:
            checked_axes(bad, 3, "axes")
        except ShapeError as err:
            print("ShapeError:", err)


# CHECK-LABEL: TEST: axes
# CHECK-NEXT: [2, 0, 2]
# CHECK-NEXT: [0, 2] [0, 1, 2] []
# CHECK-NEXT: [1, 1]
# CHECK-NEXT: ShapeError: axes 3 is out of range for rank 3
# CHECK-NEXT: ShapeError: axes -4 is out of range for rank 3
# CHECK-NEXT: ShapeError: axes [0, -3] has duplicates


@run
def shapes():
    t = ir.RankedTensorType.get([2, 3], ir.F32Type.get())
    m = ir.MemRefType.get([4], ir.F64Type.get())
    print(shape_of(t), elt_of(t), numel(t), numel([2, 3, 4]))
    print(shape_of(m), elt_of(m), numel(m), elt_of(ir.F16Type.get()), numel(ir.F16Type.get()))


# CHECK-LABEL: TEST: shapes
# CHECK-NEXT: [2, 3] f32 6 24
# CHECK-NEXT: [4] f64 4 f16 1


PROGRAM = """
func.func private @decl(tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %0 = "rlx.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = scf.if %c -> tensor<2xf32> {
    %2 = "rlx.negative"(%0) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %2 : tensor<2xf32>
  } else {
    scf.yield %0 : tensor<2xf32>
  }
  %3 = func.call @decl(%1) : (tensor<2xf32>) -> tensor<2xf32>
  return %3 : tensor<2xf32>
}
"""


@run
def walks():
    module = gradir.parse(PROGRAM).operation
    print([symbol_name(f) for f in functions(module)])
    main = find_function(module, "main")
    print(symbol_name(main), function_type(main), find_function(module, "absent"))
    print([op.name for op in walk(main)])
    print([op.name for op in walk(main, descend=lambda op: op.name != "scf.if")])
    print(len(list(blocks_of(main))))
    print([(op.name, is_pure(op), has_uses(op)) for op in walk(main)
           if op.name.startswith(("rlx.", "func.call"))])


# CHECK-LABEL: TEST: walks
# CHECK-NEXT: ['decl', 'main']
# CHECK-NEXT: main (tensor<2xf32>, i1) -> tensor<2xf32> None
# CHECK-NEXT: ['rlx.exp', 'scf.if', 'rlx.negative', 'scf.yield', 'scf.yield', 'func.call', 'func.return']
# CHECK-NEXT: ['rlx.exp', 'scf.if', 'func.call', 'func.return']
# CHECK-NEXT: 3
# CHECK-NEXT: [('rlx.exp', True, True), ('rlx.negative', True, True), ('func.call', False, True)]
