"""GradBench's ``ode`` eval (cmpad's ``an_ode``): s steps of classic
Runge-Kutta (RK4) from y(0) = 0 to t = 2 on

    y_0' = x_0,   y_i' = x_i y_{i-1}  (i > 0)

(the reference's ``ode_fun``). ``primal`` returns y(2); ``gradient`` returns
the gradient of its last element with respect to x.

``ode_fun(y)`` is ``x * concat(1, y[:-1])``. The steps are an ``scf.for``
carrying y (its adjoint stores y at every step); the step size 2 / s is a
constant of the compiled function, one per (n, s).
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


def prepare(name, input):
    x = np.asarray(input["x"], dtype=np.float64)
    n, s = x.shape[0], int(input["s"])
    if name == "primal":
        fn = function(program(n, s, False))
        return lambda: fn(x)
    fn = function(program(n, s, True), "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    return lambda: fn(x)[1]
