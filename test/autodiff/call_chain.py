# RUN: %PYTHON %s | FileCheck %s
# Calls differentiated through by inlining (hostile-input review: a chain of
# 2,000 functions, each calling the next, ran rlx-gradient past 300 s: the
# recursion check scanned the module for every function it reached, for
# every call, at every inlining depth).  The behaviour at the limits: a
# chain as deep as inlining goes has its gradient against finite
# differences (f64, interpreter); one call deeper, and a chain of hundreds,
# is a located error at the first call past the limit, in either mode;
# recursion, also through a loop body or far from the differentiated
# function, is a located error naming the callee.

import numpy as np

import gradir
from gradir.testing import check_gradient, gradient_module

rng = np.random.default_rng(0)
OPS = ("sin", "tanh", "sigmoid", "cos")


def chain(n, name="chain.mlir"):
    """@main calls @f0, @f{i} calls @f{i+1}, @f{n-1} calls nothing; each
    applies one rlx op.  The call in @f{i} is on line 5 * i + 3 (the one to
    @f0 in @main, at the end)."""
    out = []
    for i in range(n):
        op = OPS[i % len(OPS)]
        call = (f"  %z = func.call @f{i + 1}(%y) : (tensor<3xf64>) -> tensor<3xf64>\n"
                if i + 1 < n else "  %z = \"rlx.negative\"(%y) : (tensor<3xf64>) -> tensor<3xf64>\n")
        out.append(f"func.func private @f{i}(%x: tensor<3xf64>) -> tensor<3xf64> {{\n"
                   f"  %y = \"rlx.{op}\"(%x) : (tensor<3xf64>) -> tensor<3xf64>\n"
                   + call +
                   "  return %z : tensor<3xf64>\n}")
    out.append("""func.func @main(%x: tensor<3xf64>) -> tensor<f64> {
  %y = func.call @f0(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %t = "rlx.sum"(%y) : (tensor<3xf64>) -> tensor<f64>
  return %t : tensor<f64>
}""")
    return "\n".join(out)


def errors(text, mode="adjoint", name="chain.mlir"):
    module = gradir.parse(text, source_name=name)
    try:
        gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{mode={mode}}})")
    except Exception as err:  # MLIRError with the diagnostics
        return [f"{d.location} {d.message}" for d in err.error_diagnostics]
    raise AssertionError("rlx-gradient accepted it")


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def deepest_chain():
    # 30 functions: the calls nest 30 deep (the limit is 32); the gradient is
    # the product of the 30 derivatives
    text = chain(30)
    x = rng.normal(size=3)
    (g,) = check_gradient(text, [x])
    h, d = x, np.ones(3)
    for i in range(30):
        op = OPS[i % len(OPS)]
        s = 1 / (1 + np.exp(-h))
        d = d * {"sin": np.cos(h), "tanh": 1 - np.tanh(h) ** 2, "sigmoid": s * (1 - s),
                 "cos": -np.sin(h)}[op]
        h = {"sin": np.sin, "tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
             "cos": np.cos}[op](h)
    np.testing.assert_allclose(g, -d, rtol=1e-12)
    for mode in ("vjp", "jvp"):
        gradient_module(text, mode=mode)
    print("30 deep ok")
    check_gradient(chain(32), [x])
    print("32 deep ok")
# CHECK-LABEL: TEST: deepest_chain
# CHECK: 30 deep ok
# CHECK: 32 deep ok


@run
def too_deep():
    # 33 functions: the call to @f32 (in @f31, line 5 * 31 + 3) is the 33rd
    # nested one; 300 functions stop at the same call
    for n in (33, 300):
        for mode in ("adjoint", "jvp"):
            keep = "grad.jvp" if mode == "jvp" else "grad.vjp"
            (msg,) = errors(chain(n), mode)
            assert msg == (f'loc("chain.mlir":158:8) cannot differentiate through \'@f32\': '
                           f"calls nest more than 32 deep (give a call a {keep} function to "
                           "stop inlining there)"), msg
        print(n, "ok")
    print(msg)
# CHECK-LABEL: TEST: too_deep
# CHECK: 33 ok
# CHECK: 300 ok
# CHECK: loc("chain.mlir":158:8) cannot differentiate through '@f32': calls nest more than 32 deep (give a call a grad.jvp function to stop inlining there)


RECURSIVE_IN_LOOP = """
func.func private @g(%x: tensor<3xf64>) -> tensor<3xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%h = %x) -> (tensor<3xf64>) {
    %y = func.call @h(%h) : (tensor<3xf64>) -> tensor<3xf64>
    scf.yield %y : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func private @h(%x: tensor<3xf64>) -> tensor<3xf64> {
  %y = "rlx.sin"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %z = func.call @g(%y) : (tensor<3xf64>) -> tensor<3xf64>
  return %z : tensor<3xf64>
}
func.func private @a(%x: tensor<3xf64>) -> tensor<3xf64> {
  %y = func.call @g(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %y : tensor<3xf64>
}
func.func @main(%x: tensor<3xf64>) -> tensor<f64> {
  %y = func.call @a(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %t = "rlx.sum"(%y) : (tensor<3xf64>) -> tensor<f64>
  return %t : tensor<f64>
}
"""


@run
def recursion():
    # @g -> (loop body) @h -> @g, reached through @a: refused at @a's call
    # to @g (it ran to the depth limit: the cycle runs through a loop body)
    for mode in ("adjoint", "jvp"):
        (msg,) = errors(RECURSIVE_IN_LOOP, mode, "rec.mlir")
        print(msg)
    # a call with grad.vjp is not inlined, so no cycle: differentiated (not
    # run: this program never returns)
    kept = RECURSIVE_IN_LOOP.replace("%z = func.call @g(%y)",
                                     "%z = func.call @g(%y) {grad.vjp = @g_vjp}")
    kept += """func.func private @g_vjp(%x: tensor<3xf64>, %c: tensor<3xf64>) -> tensor<3xf64> {
  return %c : tensor<3xf64>
}"""
    m = gradir.print_module(gradient_module(kept))
    assert "call @g_vjp(" in m.split("@main_adjoint(")[1], m
    print("kept ok")
    # a long chain ending in a self-call beyond the depth limit: the depth
    # limit speaks first
    looped = chain(40).replace('%z = "rlx.negative"(%y)', "%z = func.call @f39(%y)")
    (msg,) = errors(looped)
    assert "nest more than 32 deep" in msg, msg
    # a self-call near the top: refused at the call that reaches it (in @f3)
    looped = chain(5).replace('%z = "rlx.negative"(%y)', "%z = func.call @f4(%y)")
    print(errors(looped)[0])
# CHECK-LABEL: TEST: recursion
# CHECK-NEXT: loc("rec.mlir":18:8) recursive call to '@g' is not supported
# CHECK-NEXT: loc("rec.mlir":18:8) recursive call to '@g' is not supported
# CHECK-NEXT: kept ok
# CHECK-NEXT: loc("chain.mlir":18:8) recursive call to '@f4' is not supported
