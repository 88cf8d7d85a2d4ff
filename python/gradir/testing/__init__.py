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

__all__ = ["finite_difference", "check_gradient", "gradient_module", "directional_difference",
           "check_jvp", "check_jacobian", "jacobian_difference", "outcome"]


def outcome(call, *args):
    """``call(*args)``'s results as a tuple, or its error as (location,
    message): the compiled code's ``ExecutionError`` and the interpreter's
    ``InterpreterError`` in one form, for tests checking that both refuse
    the same input at the same place."""
    from ..interp.core import InterpreterError
    from ..runtime import ExecutionError
    try:
        got = call(*args)
    except ExecutionError as err:
        return err.location, err.message
    except InterpreterError as err:
        location, _, message = str(err).rpartition(": '")
        return location, "'" + message
    return got if isinstance(got, tuple) else (got,)


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


# ----------------------------------------------------------------------------
# Forward mode

def _is_float(a) -> bool:
    return np.issubdtype(np.asarray(a).dtype, np.floating)


def directional_difference(module, fn: str, args, wrt, tangents,
                           eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of every result of ``@fn`` along ``tangents``
    (one per ``wrt`` argument); None for a result that is not a float."""
    plus, minus = _flat_inputs(args), _flat_inputs(args)
    for i, t in zip(wrt, tangents):
        plus[i] = plus[i] + eps * t
        minus[i] = minus[i] - eps * t
    fp = interpret(module, fn, *plus)
    fm = interpret(module, fn, *minus)
    return [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
            if _is_float(p) else None for p, m in zip(fp, fm)]


def check_jvp(text: str, args, wrt=None, func: str = "main", rtol: float = 1e-5,
              atol: float = 1e-7, eps: float = 1e-6, seed: int = 7, **options):
    """Asserts that ``rlx-gradient{mode=jvp}``'s ``@<func>_jvp`` returns
    ``@<func>``'s results and tangents matching central differences along
    random tangents.  ``args`` should be float64.  Returns the tangents."""
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if _is_float(a)]
    module = gradient_module(text, func=func, mode="jvp", wrt=list(wrt), **options)
    rng = np.random.default_rng(seed)
    tangents = [rng.uniform(-1.0, 1.0, size=np.shape(args[i])).astype(np.asarray(args[i]).dtype)
                for i in wrt]
    outs = interpret(module, f"{func}_jvp", *args, *tangents)
    from . import oracle
    oracle.record(module, f"{func}_jvp", list(args) + tangents)
    original = interpret(module, func, *args)
    n = len(original)
    assert len(outs) == 2 * n, (len(outs), n)
    for got, want in zip(outs[:n], original):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    expected = directional_difference(module, func, args, wrt, tangents, eps)
    for k, (got, want) in enumerate(zip(outs[n:], expected)):
        assert np.shape(got) == np.shape(original[k]), f"tangent {k}: shape {np.shape(got)}"
        if want is None:
            assert not np.any(got), f"tangent {k} of a non-float result is not zero"
            continue
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"tangent of result {k}")
    return list(outs[n:])


def jacobian_difference(module, fn: str, args, i: int, result: int,
                        eps: float = 1e-6) -> np.ndarray:
    """Central-difference Jacobian of result ``result`` w.r.t. argument
    ``i``, shaped result.shape + arg.shape."""
    x = np.asarray(args[i])
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        cols.append(directional_difference(module, fn, args, [i], [e.reshape(x.shape)], eps)[result])
    r = np.asarray(cols[0]) if cols else np.zeros(0)
    jac = np.stack(cols, axis=-1) if cols else np.zeros(np.shape(r) + (0,))
    return jac.reshape(np.shape(r) + x.shape)


def check_jacobian(text: str, args, wrt=None, func: str = "main", rtol: float = 1e-5,
                   atol: float = 1e-7, eps: float = 1e-6, **options):
    """Asserts that ``rlx-gradient{mode=jacobian}``'s ``@<func>_jacobian``
    returns ``@<func>``'s results and, per (float result, wrt argument), the
    Jacobian of central differences.  Returns the Jacobians."""
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if _is_float(a)]
    module = gradient_module(text, func=func, mode="jacobian", wrt=list(wrt), **options)
    outs = interpret(module, f"{func}_jacobian", *args)
    from . import oracle
    oracle.record(module, f"{func}_jacobian", list(args))
    original = interpret(module, func, *args)
    n = len(original)
    for got, want in zip(outs[:n], original):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    float_results = [r for r, v in enumerate(original) if _is_float(v)]
    jacs = list(outs[n:])
    assert len(jacs) == len(float_results) * len(wrt), (len(jacs), float_results, wrt)
    k = 0
    for r in float_results:
        for i in wrt:
            want = jacobian_difference(module, func, args, i, r, eps)
            assert np.shape(jacs[k]) == want.shape, \
                f"Jacobian of result {r} w.r.t. {i}: shape {np.shape(jacs[k])} != {want.shape}"
            np.testing.assert_allclose(jacs[k], want, rtol=rtol, atol=atol,
                                       err_msg=f"Jacobian of result {r} w.r.t. argument {i}")
            k += 1
    return jacs
