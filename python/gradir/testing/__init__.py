"""Test helpers: gradients checked against central finite differences.

    from gradir.testing import check_gradient
    check_gradient(IR_TEXT, [x, w])            # float64 inputs

runs ``rlx-gradient`` (options as keyword arguments), evaluates
``@main_adjoint`` with the reference interpreter and compares every gradient
with central differences of ``@main`` (also through the interpreter).
Every adjoint it checks is also kept for the compiled-code oracle
(``gradir.testing.oracle``): at exit the process compiles them all and
compares them with the interpreter.
"""

from __future__ import annotations

import numpy as np

from .. import interpret, parse, run_pipeline

__all__ = ["finite_difference", "check_gradient", "gradient_module"]


def _flat_inputs(args):
    return [np.array(a, dtype=a.dtype, copy=True) for a in args]


def finite_difference(module, fn: str, args, wrt, target_index: int = 0,
                      eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of result ``target_index`` of ``@fn``."""
    grads = []
    for i in wrt:
        x = args[i]
        g = np.zeros_like(x, dtype=np.float64)
        it = np.nditer(x, flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            plus = _flat_inputs(args)
            minus = _flat_inputs(args)
            plus[i][idx] += eps
            minus[i][idx] -= eps
            fp = interpret(module, fn, *plus)[target_index]
            fm = interpret(module, fn, *minus)[target_index]
            g[idx] = (np.float64(fp) - np.float64(fm)) / (2 * eps)
        grads.append(g)
    return grads


def gradient_module(text: str, **options):
    """Parses ``text`` and runs rlx-gradient with ``options``."""
    module = parse(text)
    opts = " ".join(f"{k.replace('_', '-')}={_fmt(v)}" for k, v in options.items())
    run_pipeline(module, "builtin.module(rlx-gradient{" + opts + "})")
    return module


def _fmt(v):
    if isinstance(v, (list, tuple)):
        return ",".join(str(x) for x in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def check_gradient(text: str, args, wrt=None, func: str = "main", target_index: int = 0,
                   rtol: float = 1e-5, atol: float = 1e-7, eps: float = 1e-6,
                   **options) -> list[np.ndarray]:
    """Asserts that rlx-gradient's adjoint matches finite differences.

    ``args`` should be float64 arrays (integer arrays are passed through).
    Returns the adjoint's gradients."""
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.floating)]
    module = gradient_module(text, func=func, target_index=target_index,
                             wrt=list(wrt), **options)
    outs = interpret(module, f"{func}_adjoint", *args)
    from . import oracle
    oracle.record(module, f"{func}_adjoint", args)
    n_results = len(outs) - len(wrt)
    original = interpret(module, func, *args)
    assert n_results == len(original), (n_results, len(original))
    for got, want in zip(outs[:n_results], original):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    grads = list(outs[n_results:])
    expected = finite_difference(module, func, args, wrt, target_index, eps)
    for k, (g, e) in enumerate(zip(grads, expected)):
        assert g.shape == e.shape, f"gradient {k}: shape {g.shape} != {e.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {wrt[k]}")
    return grads
