"""gradir demo: build a small rlx function with the Python API, print it,
verify it, run it with the reference interpreter, then differentiate it.

    cmake -S . -B build && cmake --build build --target demo
"""

import sys

import numpy as np
from mlir import ir
from mlir.dialects import func

import gradir
from gradir.dialects import rlx
from gradir.dialects.verify import verify_module


def tensor(*shape, dtype="f32"):
    return ir.RankedTensorType.get(shape, rlx.to_dtype(dtype))


def build():
    """A dense layer with a squared-error loss: sum((relu(x @ w + b) - t)^2)."""
    ctx = gradir.make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(tensor(4, 3), tensor(3, 2), tensor(2), tensor(4, 2))
            def main(x, w, b, t):
                h = rlx.relu(rlx.add(rlx.matmul(x, w), b))   # broadcasting bias
                d = rlx.subtract(h, t)
                return rlx.sum(rlx.square(d)), h             # 0-d loss, activations
    return module


def main() -> int:
    module = build()
    print("== the program (rlx dialect, generic form) ==")
    print(gradir.print_module(module))
    errors = verify_module(module.operation)
    if errors:
        for loc, msg in errors:
            print(f"{loc}: error: {msg}", file=sys.stderr)
        return 1

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal((2,)).astype(np.float32)
    t = rng.standard_normal((4, 2)).astype(np.float32)
    loss, h = gradir.interpret(module, "main", x, w, b, t)

    print("== interpreted on random inputs ==")
    print("loss =", loss, f"({loss.dtype}, shape {loss.shape})")
    print("activations =\n", h)
    ref_h = np.maximum(x @ w + b, 0)
    ref_loss = np.sum((ref_h - t) ** 2)
    ok = np.allclose(h, ref_h, rtol=1e-6) and np.allclose(loss, ref_loss, rtol=1e-5)
    print("matches numpy:", ok)

    # Reverse mode: @main_adjoint returns @main's results, then dloss/dw, dloss/db.
    gradir.run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=1,2},rlx-cse,rlx-dce)")
    text = gradir.print_module(module)
    print("== after rlx-gradient{func=main wrt=1,2} ==")
    print(text[text.index("func.func @main_adjoint"):].rstrip().rstrip("}"))
    _, _, gw, gb = gradir.interpret(module, "main_adjoint", x, w, b, t)
    dh = 2 * (ref_h - t) * (x @ w + b > 0)
    grads_ok = np.allclose(gw, x.T @ dh, rtol=1e-4) and np.allclose(gb, dh.sum(0), rtol=1e-4)
    print("dloss/dw =\n", gw)
    print("dloss/db =", gb)
    print("gradients match numpy:", grads_ok)
    return 0 if ok and grads_ok else 1


if __name__ == "__main__":
    sys.exit(main())
