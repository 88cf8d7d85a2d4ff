# RUN: %PYTHON %s | FileCheck %s
# rlx-fuse-chains: elementwise chains and trees fused in one step each.
# Against the reference interpreter in f32 and f64 (a chain of 60 unary
# ops, a chain alternating an add of one argument and a multiply by
# another, a chain through a broadcast, a chain multiplying by constants, a
# tree, diamonds, a chain's gradient); results bitwise the same as without
# the pass;
# the pass moves the ops of a 300-op chain into one generic (the same op
# objects, none copied) and upstream's elementwise fusion then has nothing
# left to fuse.

import os
import sys

import numpy as np
from mlir import ir
from mlir.dialects import arith

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402

import gradir  # noqa: E402
from gradir import _compat  # noqa: E402
from gradir.conversion.cpu import pipeline  # noqa: E402
from gradir.passes.pipeline import build_pass_manager  # noqa: E402

UNARY = ("rlx.sin", "rlx.tanh", "rlx.sigmoid", "rlx.negative", "rlx.exp", "rlx.cos")


def chain(x, n=60):
    for i in range(n):
        x = op(UNARY[i % len(UNARY)], x)
    return x


def two_inputs(x, a, b, n=40):
    for i in range(n):
        x = op("rlx.add", x, a) if i % 2 == 0 else op("rlx.multiply", x, b)
    return op("rlx.tanh", x)


def broadcast(dt, n=20):
    def build(x):
        w = op("rlx.broadcast_to", chain(x, n),
               result=((3,) + tuple(ir.RankedTensorType(x.type).shape), dt))
        return chain(w, n)
    return build


def constants(x, n=30):
    """Multiplies by splat constants (scalar constants in the fused body)."""
    t = ir.RankedTensorType(x.type)
    for i in range(n):
        c = arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(
            t, ir.FloatAttr.get(t.element_type, 1.0 + 0.01 * (i % 5)))).result
        x = op("rlx.sin", op("rlx.multiply", x, c))
    return x


def tree(x, y, z, w):
    a = op("rlx.add", op("rlx.sin", x), op("rlx.cos", y))
    b = op("rlx.multiply", op("rlx.exp", op("rlx.negative", z)), op("rlx.tanh", w))
    return op("rlx.subtract", op("rlx.sigmoid", a), op("rlx.multiply", b, a))


def diamonds(x, a, n=30):
    """Values each read twice by the next step's ops only: upstream fuses
    them once it merges duplicate inputs (late fusion here)."""
    for i in range(n):
        if i % 2:
            x = op("rlx.where", op("rlx.greater", x, a), x, op("rlx.multiply", x, a))
        else:
            x = op("rlx.add", op("rlx.sin", x), op("rlx.cos", x))
    return x


def gradient_chain(x, n=40):
    return op("rlx.sum", chain(x, n))


@run
def test_against_interpreter():
    s = Suite("fused chains")
    for dt in FLOATS:
        shape = (4, 37)
        s.case(f"chain_{short(dt)}", chain, rand(shape, dt, -1.0, 1.0))
        s.case(f"two_inputs_{short(dt)}", two_inputs, rand(shape, dt, -1.0, 1.0),
               rand(shape, dt, -0.1, 0.1), rand(shape, dt, 0.9, 1.05))
        s.case(f"broadcast_{short(dt)}", broadcast(dt), rand((37,), dt, -1.0, 1.0))
        s.case(f"constants_{short(dt)}", constants, rand(shape, dt, -1.0, 1.0))
        s.case(f"tree_{short(dt)}", tree, *[rand(shape, dt, -1.0, 1.0) for _ in range(4)])
        s.case(f"diamonds_{short(dt)}", diamonds, rand(shape, dt, -1.0, 1.0),
               rand(shape, dt, -0.5, 0.5))
    s.run()


@run
def test_gradient():
    s = Suite("fused chain gradient", gradient=True)
    for dt in FLOATS:
        s.case(f"gradient_chain_{short(dt)}", gradient_chain, rand((4, 37), dt, -1.0, 1.0))
    s.run()


@run
def test_same_bits():
    """Compiled with and without the pass: the same bits."""
    s = Suite("one")
    dt = np.float32
    s.case("two_inputs", lambda x, a, b: op("rlx.add", two_inputs(x, a, b), diamonds(x, a)),
           rand((4, 37), dt), rand((4, 37), dt), rand((4, 37), dt))
    args = (rand((4, 37), dt, -1.0, 1.0), rand((4, 37), dt, -0.1, 0.1),
            rand((4, 37), dt, 0.9, 1.05))
    with_pass = gradir.compile(s.module(), cache=False)["case0"]
    original = pipeline.linalg_to_llvm_pipeline

    def without(*a, **k):
        return original(*a, **k).replace("rlx-fuse-chains,", "")
    pipeline.linalg_to_llvm_pipeline = without
    try:
        apart = gradir.compile(s.module(), cache=False)["case0"]
    finally:
        pipeline.linalg_to_llvm_pipeline = original
    print("bitwise the same without the pass:",
          np.array_equal(with_pass(*args), apart(*args)))


@run
def test_moved_not_copied():
    """A 300-op chain: one generic holding the very ops of the chain's
    generics; upstream's fusion after it changes nothing."""
    s = Suite("long")
    s.case("chain", lambda x: chain(x, 300), rand((8,), np.float32))
    module = s.module()
    ctx = module.context
    build_pass_manager("builtin.module(rlx-to-linalg,canonicalize,cse)", ctx).run(
        module.operation)

    def body_ops(m):
        return [o for o in _compat.collect_ops(m.operation, lambda o: True)
                if o.name.startswith("math.") or o.name.startswith("arith.")]
    before = {_compat.op_key(o) for o in body_ops(module)}
    build_pass_manager("builtin.module(rlx-fuse-chains)", ctx).run(module.operation)
    generics = _compat.collect_ops(module.operation, lambda o: o.name == "linalg.generic")
    after = {_compat.op_key(o) for o in body_ops(module)}
    print("generics:", len(generics), "body ops:", len(after),
          "all moved:", after == before)
    text = str(module)
    build_pass_manager("builtin.module(linalg-fuse-elementwise-ops)", ctx).run(module.operation)
    print("upstream fusion changed nothing:", str(module) == text)

# CHECK-LABEL: TEST: test_against_interpreter
# CHECK: ok chain_f32
# CHECK: ok broadcast_f64
# CHECK: fused chains: all 12 cases match the interpreter
# CHECK-LABEL: TEST: test_gradient
# CHECK: fused chain gradient: all 2 cases match the interpreter
# CHECK-LABEL: TEST: test_same_bits
# CHECK: bitwise the same without the pass: True
# CHECK-LABEL: TEST: test_moved_not_copied
# CHECK: generics: 1 body ops: {{[0-9]+}} all moved: True
# CHECK: upstream fusion changed nothing: True
