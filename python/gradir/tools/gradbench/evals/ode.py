"""GradBench's ``ode`` eval (cmpad's ``an_ode``): s steps of classic
Runge-Kutta (RK4) from y(0) = 0 to t = 2 on

    y_0' = x_0,   y_i' = x_i y_{i-1}  (i > 0)

(the reference's ``ode_fun``). ``primal`` returns y(2); ``gradient`` returns
the gradient of its last element with respect to x.

``ode_fun(y)`` is ``x * concat(1, y[:-1])``. The steps are an ``scf.for``
carrying y (its adjoint stores y at every step); the step size 2 / s is a
constant of the compiled function, one per (n, s).

The primal carries y behind four ones instead (``primal_program``), with x
behind four zeros: each of a step's four right-hand sides is then the
product of two slices (the shift a view), one element shorter than the
previous stage's, the padding staying ones in the stages; one concat per
step (the new y behind the old ones) instead of a copy of y and of the
ones per right-hand side: the same operations on every element (bitwise the
same y), n=10000 s=100 1.39 -> 0.95 ms. The gradient keeps ``program``
(the padded adjoint measured slower, 5.3 -> 6.8 ms).
"""

import numpy as np

from ..build import Program, axes, function

FUNCTIONS = ("primal", "gradient")


def program(n, s, last_only):
    p = Program()
    x = p.arg((n,))
    y0 = p.op("rlx.zeros", [], (n,))
    one = p.op("rlx.ones", [], (1,))
    for name, v in (("c0", 0), ("c1", 1), ("cs", s)):
        p.raw(f"%{name} = arith.constant {v} : index")
    body = p.block()
    y = body.value("%y", (n,))
    h = 2.0 / s

    def f(v):
        shifted = body.op("rlx.strided_slice", [v], (n - 1,),
                          f"axes = {axes(0)}, begin = {axes(0)}, end = {axes(n - 1)}")
        shifted = body.op("rlx.concat", [one, shifted], (n,), f"axis = {axes(0)}")
        return body.op("rlx.multiply", [x, shifted], (n,))

    def axpy(a, k):                       # y + a * k
        return body.op("rlx.add", [y, body.op("rlx.multiply", [k, body.const(a)], (n,))], (n,))

    k1 = f(y)
    k2 = f(axpy(h / 2, k1))
    k3 = f(axpy(h / 2, k2))
    k4 = f(axpy(h, k3))
    two = body.const(2.0)
    ks = body.op("rlx.add", [k1, body.op("rlx.multiply", [k2, two], (n,))], (n,))
    ks = body.op("rlx.add", [ks, body.op("rlx.multiply", [k3, two], (n,))], (n,))
    ks = body.op("rlx.add", [ks, k4], (n,))
    ynew = body.op("rlx.add", [y, body.op("rlx.multiply", [ks, body.const(h / 6)], (n,))], (n,))

    res = p.fresh()
    t = f"tensor<{n}xf64>"
    p.raw(f"{res} = scf.for %i = %c0 to %cs step %c1 iter_args(%y = {y0.name}) -> ({t}) {{")
    p.lines += ["  " + line for line in body.lines]
    p.raw(f"  scf.yield {ynew.name} : {t}")
    p.raw("}")
    yf = p.value(res, (n,))
    if not last_only:
        return p.text([yf])
    last = p.op("rlx.strided_slice", [yf], (1,),
                f"axes = {axes(0)}, begin = {axes(n - 1)}, end = {axes(n)}")
    return p.text([p.op("rlx.reshape", [last], ())])


def primal_program(n, s):
    """``@main(x) -> y(2)``: ``program``'s steps on y behind four ones (``Y``,
    n + 4), x behind four zeros (``xe``): stage j's right-hand side covers the
    indices j .. n + 3 of Y, ``xe[j:] * v[:-1]`` of the previous stage's v
    (Y for j = 1), zero on the padding, so that its v stays one there."""
    big = n + 4
    p = Program()
    x = p.arg((n,))
    cat = f"axis = {axes(0)}"
    xe = p.op("rlx.concat", [p.op("rlx.zeros", [], (4,)), x], (big,), cat)
    y0 = p.op("rlx.concat", [p.op("rlx.ones", [], (4,)), p.op("rlx.zeros", [], (n,))], (big,), cat)
    for name, v in (("c0", 0), ("c1", 1), ("cs", s)):
        p.raw(f"%{name} = arith.constant {v} : index")
    body = p.block()
    y = body.value("%y", (big,))
    h = 2.0 / s

    def part(v, begin, end):
        return body.op("rlx.strided_slice", [v], (end - begin,),
                       f"axes = {axes(0)}, begin = {axes(begin)}, end = {axes(end)}")

    ks, v = [], y
    for j, a in enumerate((h / 2, h / 2, h, None), 1):
        k = body.op("rlx.multiply", [part(xe, j, big), part(v, 0, big - j)], (big - j,))
        ks.append(k)
        if a is not None:                 # y + a * k on the indices j ..
            v = body.op("rlx.add", [part(y, j, big), body.op(
                "rlx.multiply", [k, body.const(a)], (big - j,))], (big - j,))
    k1, k2, k3 = (part(k, 3 - j, big - 1 - j) for j, k in enumerate(ks[:3]))
    k4 = ks[3]
    two = body.const(2.0)
    acc = body.op("rlx.add", [k1, body.op("rlx.multiply", [k2, two], (n,))], (n,))
    acc = body.op("rlx.add", [acc, body.op("rlx.multiply", [k3, two], (n,))], (n,))
    acc = body.op("rlx.add", [acc, k4], (n,))
    ynew = body.op("rlx.add", [part(y, 4, big),
                               body.op("rlx.multiply", [acc, body.const(h / 6)], (n,))], (n,))
    # The ones from y itself: a loop-invariant one would be copied every step.
    ynew = body.op("rlx.concat", [part(y, 0, 4), ynew], (big,), cat)

    res = p.fresh()
    t = f"tensor<{big}xf64>"
    p.raw(f"{res} = scf.for %i = %c0 to %cs step %c1 iter_args(%y = {y0.name}) -> ({t}) {{")
    p.lines += ["  " + line for line in body.lines]
    p.raw(f"  scf.yield {ynew.name} : {t}")
    p.raw("}")
    yf = p.value(res, (big,))
    return p.text([p.op("rlx.strided_slice", [yf], (n,),
                        f"axes = {axes(0)}, begin = {axes(4)}, end = {axes(big)}")])


def prepare(name, input):
    x = np.asarray(input["x"], dtype=np.float64)
    n, s = x.shape[0], int(input["s"])
    if name == "primal":
        fn = function(primal_program(n, s))
        return lambda: fn(x)
    fn = function(program(n, s, True), "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    return lambda: fn(x)[1]
