"""GradBench's ``particle`` eval: steer a charged particle through the origin.

A particle starts at (0, 8) with velocity (0.75, 0) in the field of two
unit charges at (10, 10 - w) and (10, 0); naive Euler integration
(``dt = 0.1``) with acceleration ``-grad_x p(x; w)``, where
``p(x; w) = sum_charges 1 / |x - charge|``, runs until the particle would
cross the x axis; linear interpolation finds where it crosses, at
``x_f``. GradBench's gradient-descent solver (``saddle.descent_text``) then
minimises ``x_f[0]^2`` over ``w`` from the input ``w``; the output is the
final ``w``.

The four functions differ in the mode of the two derivatives: the first
letter is the outer one (``d x_f[0]^2 / dw``, through the whole Euler
loop), the second the inner one (``grad_x p`` inside the loop); ``r`` is
reverse mode (``rlx-gradient``'s adjoint), ``f`` forward mode
(``mode=jvp``, one call per basis vector).

The Euler loop is an ``scf.while`` whose body calls the inner gradient
(generated first); the outer gradient differentiates that loop (reverse:
the loop is replayed backwards; forward: tangents ride along), and the
solver's own ``scf.while`` calls it. One compiled function per variant
computes the whole output.
"""

import numpy as np

from ..build import function
from .saddle import T0, descent_text, differentiate, gradient_fn, staged, vec

FUNCTIONS = ("rr", "ff", "fr", "rf")

V1, V2 = vec(1), vec(2)

POTENTIAL = f"""
func.func @accel(%w: {T0}, %x: {V2}) -> {T0} {{
  %base = arith.constant dense<[[10.0, 10.0], [10.0, 0.0]]> : tensor<2x2xf64>
  %dir = arith.constant dense<[[0.0, 1.0], [0.0, 0.0]]> : tensor<2x2xf64>
  %shift = "rlx.multiply"(%dir, %w) : (tensor<2x2xf64>, {T0}) -> tensor<2x2xf64>
  %charges = "rlx.subtract"(%base, %shift) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %d = "rlx.subtract"(%charges, %x) : (tensor<2x2xf64>, {V2}) -> tensor<2x2xf64>
  %sq = "rlx.square"(%d) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %s = "rlx.sum"(%sq) {{axis = array<i64: 1>}} : (tensor<2x2xf64>) -> {V2}
  %dist = "rlx.sqrt"(%s) : ({V2}) -> {V2}
  %one = arith.constant dense<1.0> : {T0}
  %inv = "rlx.divide"(%one, %dist) : ({T0}, {V2}) -> {V2}
  %p = "rlx.sum"(%inv) : ({V2}) -> {T0}
  return %p : {T0}
}}
"""


def euler_text(inner):
    """``@euler_<inner>(x: tensor<1xf64>) -> x_f[0]^2`` with ``w = x[0]``: the
    Euler loop, the acceleration from ``@accel_grad_<inner>(w, x)``."""
    g = f"accel_grad_{inner}"
    state = f"{V2}, {V2}"
    return gradient_fn(inner, g, 2, "accel", [T0]) + f"""
func.func @euler_{inner}(%wv: {V1}) -> {T0} {{
  %w = "rlx.reshape"(%wv) : ({V1}) -> {T0}
  %x0 = arith.constant dense<[0.0, 8.0]> : {V2}
  %v0 = arith.constant dense<[0.75, 0.0]> : {V2}
  %dt = arith.constant dense<0.1> : {T0}
  %zero = arith.constant dense<0.0> : {T0}
  %ey = arith.constant dense<[0.0, 1.0]> : {V2}
  %ex = arith.constant dense<[1.0, 0.0]> : {V2}
  %r:2 = scf.while (%x = %x0, %v = %v0) : ({state}) -> ({state}) {{
    %step = "rlx.multiply"(%v, %dt) : ({V2}, {T0}) -> {V2}
    %xn = "rlx.add"(%x, %step) : ({V2}, {V2}) -> {V2}
    %yv = "rlx.multiply"(%xn, %ey) : ({V2}, {V2}) -> {V2}
    %y = "rlx.sum"(%yv) : ({V2}) -> {T0}
    %above = "rlx.greater"(%y, %zero) : ({T0}, {T0}) -> tensor<i1>
    %go = tensor.extract %above[] : tensor<i1>
    scf.condition(%go) %x, %v : {state}
  }} do {{
  ^bb0(%x: {V2}, %v: {V2}):
    %g = func.call @{g}(%w, %x) : ({T0}, {V2}) -> {V2}
    %step = "rlx.multiply"(%v, %dt) : ({V2}, {T0}) -> {V2}
    %xn = "rlx.add"(%x, %step) : ({V2}, {V2}) -> {V2}
    %dv = "rlx.multiply"(%g, %dt) : ({V2}, {T0}) -> {V2}
    %vn = "rlx.subtract"(%v, %dv) : ({V2}, {V2}) -> {V2}
    scf.yield %xn, %vn : {state}
  }}
  %yv = "rlx.multiply"(%r#0, %ey) : ({V2}, {V2}) -> {V2}
  %y = "rlx.sum"(%yv) : ({V2}) -> {T0}
  %vyv = "rlx.multiply"(%r#1, %ey) : ({V2}, {V2}) -> {V2}
  %vy = "rlx.sum"(%vyv) : ({V2}) -> {T0}
  %ny = "rlx.negative"(%y) : ({T0}) -> {T0}
  %tf = "rlx.divide"(%ny, %vy) : ({T0}, {T0}) -> {T0}
  %move = "rlx.multiply"(%r#1, %tf) : ({V2}, {T0}) -> {V2}
  %xf = "rlx.add"(%r#0, %move) : ({V2}, {V2}) -> {V2}
  %xfv = "rlx.multiply"(%xf, %ex) : ({V2}, {V2}) -> {V2}
  %x_f = "rlx.sum"(%xfv) : ({V2}) -> {T0}
  %cost = "rlx.square"(%x_f) : ({T0}) -> {T0}
  return %cost : {T0}
}}
"""


def program(variant):
    """The module text whose ``@particle(w0: tensor<1xf64>) -> w`` is the eval."""
    outer, inner = variant
    return staged((POTENTIAL, differentiate("accel", 1)),
                  (euler_text(inner), differentiate(f"euler_{inner}", 0)),
                  (gradient_fn(outer, "euler_grad", 1, f"euler_{inner}")
                   + descent_text("particle", 1, f"euler_{inner}", "euler_grad"), None))


_programs = {}


def prepare(name, input):
    if name not in FUNCTIONS:
        raise ValueError(f"particle has no function {name!r}")
    w0 = np.asarray([float(input["w"])], np.float64)
    if name not in _programs:
        _programs[name] = program(name)
    fn = function(_programs[name], None, "particle")
    return lambda: float(fn(w0)[0])
