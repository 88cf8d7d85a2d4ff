# RUN: %PYTHON %s | FileCheck %s
# _compat.linalg (the builders rlx-to-linalg uses instead of importing
# mlir.dialects.linalg and its opdsl, issue 14 compile time) gives the IR that
# upstream's mlir.dialects.linalg helpers give, byte for byte, for every op
# and form the lowering builds; and the C-API walks of _compat hand out plain
# ir.Operations, agreeing with the OpView-based ones.

import sys

import numpy as np
from mlir import ir

from gradir import _compat
from gradir.ir import make_context


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def build(lin):
    """A function with every op the lowering builds through ``lin``."""
    f32 = ir.F32Type.get()
    t = lambda *s: ir.RankedTensorType.get(list(s), f32)  # noqa: E731
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        from mlir.dialects import arith, func, tensor
        ftype = ir.FunctionType.get([t(4, 6), t(6, 5), t(2, 4, 6), t(2, 6, 5), t(1, 3, 9, 9)], [])
        fn = func.FuncOp("f", ftype)
        block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            a, b, ba, bb, x = block.arguments
            zero = arith.constant(f32, 0.0)
            out = lin.fill(zero, outs=[tensor.empty([4, 5], f32)])
            lin.matmul(a, b, outs=[out])
            at = lin.transpose(a, outs=[tensor.empty([6, 4], f32)], permutation=[1, 0]).results[0]
            m, n, k = (ir.AffineDimExpr.get(i) for i in range(3))
            maps = [ir.AffineMap.get(3, 0, [k, m]), ir.AffineMap.get(3, 0, [k, n]),
                    ir.AffineMap.get(3, 0, [m, n])]     # as matmul.py's in-place transposes
            lin.matmul(at, b, outs=[out], indexing_maps=maps)
            bout = lin.fill(zero, outs=[tensor.empty([2, 4, 5], f32)])
            lin.batch_matmul(ba, bb, outs=[bout])
            lin.broadcast(a, outs=[tensor.empty([3, 4, 6], f32)], dimensions=[0])
            lin.copy(a, outs=[tensor.empty([4, 6], f32)])
            window = tensor.empty([2, 2], f32)
            pool = lin.fill(zero, outs=[tensor.empty([1, 3, 4, 4], f32)])
            lin.pooling_nchw_max(x, window, outs=[pool], strides=[2, 2], dilations=[1, 1])
            lin.pooling_nchw_sum(x, window, outs=[pool], strides=[2, 2], dilations=[1, 1])
            lin.pooling_nchw_sum(x, tensor.empty([3, 3], f32),
                                 outs=[lin.fill(zero, outs=[tensor.empty([1, 3, 7, 7], f32)])])
            func.ReturnOp([])
    return module


@run
def walks_without_wrapping():
    src = """
    func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
      %v = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
      linalg.copy ins(%v : memref<2xf32, strided<[1]>>) outs(%v : memref<2xf32, strided<[1]>>)
      scf.execute_region {
        linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
        scf.yield
      }
      return
    }
    func.func private @g()
    """
    with make_context():
        m = ir.Module.parse(src)
        # CHECK-LABEL: TEST: walks_without_wrapping
        fns = _compat.child_ops(m, lambda op: op.name == "func.func")
        # CHECK-NEXT: functions: ['func.func', 'func.func'] Operation
        print("functions:", [f.name for f in fns], type(fns[0]).__name__)
        body = fns[0].regions[0].blocks[0]
        ops = _compat.block_ops(body)
        # CHECK-NEXT: block: ['memref.subview', 'linalg.copy', 'scf.execute_region', 'func.return']
        print("block:", [op.name for op in ops])
        # CHECK-NEXT: terminator: func.return; declaration has none: True
        print("terminator:", _compat.terminator(body).name, end="; ")
        print("declaration has none:", not list(fns[1].regions[0].blocks))
        a = body.arguments[0]
        uses = _compat.uses_of(a)
        # (in use-list order, as Value.uses: the latest use first)
        # CHECK-NEXT: uses of %a: [('linalg.copy', 0), ('memref.subview', 0)]
        print("uses of %a:", [(op.name, n) for op, n in uses])
        inner = next(op for op, _ in uses if op.name == "linalg.copy")
        # CHECK-NEXT: parents: scf.execute_region func.func
        print("parents:", _compat.parent_op(inner).name, _compat.parent_op(_compat.parent_op(inner)).name)
        # CHECK-NEXT: defining ops: memref.subview None
        print("defining ops:", _compat.defining_op(ops[0].results[0]).name, _compat.defining_op(a))
        # CHECK-NEXT: no linalg op wrapped: True
        print("no linalg op wrapped:", "mlir.dialects.linalg" not in sys.modules)


@run
def builders_match_upstream():
    with make_context(), ir.Location.unknown():
        ours = build(_compat.linalg)
        text = ours.operation.get_asm(print_generic_op_form=True)
        # CHECK-LABEL: TEST: builders_match_upstream
        # CHECK: no mlir.dialects.linalg: True
        print("no mlir.dialects.linalg:", "mlir.dialects.linalg" not in sys.modules)
        assert ours.operation.verify()
        from mlir.dialects import linalg
        upstream = build(linalg)
        # CHECK: identical: True
        print("identical:", text == upstream.operation.get_asm(print_generic_op_form=True))
        # CHECK: linalg.copy{{.*}}cast = #linalg.type_fn<cast_signed>
        # CHECK: linalg.pooling_nchw_max{{.*}}dilations = dense<1> : tensor<2xi64>{{.*}}strides = dense<2> : tensor<2xi64>
        for line in ours.operation.get_asm().splitlines():
            if "linalg.copy" in line or "linalg.pooling_nchw_max" in line:
                print(line.strip())


@run
def attribute_set_from_holder():
    # rlx-loop-hints' annotation: the inherent attribute of llvm.br (a
    # property, what the translation to LLVM IR reads), set without the LLVM
    # attribute ever reaching Python (which would import mlir.dialects.llvm).
    src = """
    llvm.func @f(%n: i64) {
      %c0 = llvm.mlir.constant(0 : i64) : i64
      llvm.br ^bb1(%c0 : i64)
    ^bb1(%i: i64):
      %c = llvm.icmp "slt" %i, %n : i64
      llvm.cond_br %c, ^bb2, ^bb3
    ^bb2:
      llvm.br ^bb1(%i : i64)
    ^bb3:
      llvm.return
    }
    """
    from gradir.conversion.cpu.rlx_loop_hints import RlxLoopHints
    with make_context():
        m = ir.Module.parse(src)
        had_llvm = "mlir.dialects.llvm" in sys.modules
        RlxLoopHints().apply(m.operation)
        # CHECK-LABEL: TEST: attribute_set_from_holder
        # CHECK-NEXT: mlir.dialects.llvm imported: False
        print("mlir.dialects.llvm imported:", not had_llvm and "mlir.dialects.llvm" in sys.modules)
        # CHECK-NEXT: #loop_unroll = #llvm.loop_unroll<disable = true>
        # CHECK-NEXT: #loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
        # CHECK-NEXT: "llvm.br"(%{{.*}})[^bb1] <{loop_annotation = #loop_annotation}>
        # CHECK-NOT: loop_annotation
        for line in m.operation.get_asm(print_generic_op_form=True).splitlines():
            if "loop_" in line:
                print(line.strip())
