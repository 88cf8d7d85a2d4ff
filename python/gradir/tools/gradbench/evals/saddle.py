"""GradBench's ``saddle`` eval: a saddle point by nested gradient descent.

``f(p1, p2) = (p1[0]^2 + p1[1]^2) - (p2[0]^2 + p2[1]^2)``;
``r1 = argmin_{p1} max_{p2} f(p1, p2)`` and then ``r2 = argmax_{p2} f(r1, p2)``,
every descent started at ``start``, with GradBench's gradient-descent
solver (``cpp/gradbench/gd.hpp``: step ``eta`` from ``1e-5``, halved after
a step that does not decrease the objective, doubled after ten that do;
stop when the gradient or the step is below ``1e-5``). The output is
``r1`` and ``r2`` concatenated.

The four functions differ in the mode of the two derivatives: the first
letter is the outer one (the gradient of ``max_{p2} f(p1, p2)`` with
respect to ``p1``, through the inner descent loop), the second the inner one
(the gradient of ``f`` with respect to ``p2`` inside that loop); ``r`` is
reverse mode (``rlx-gradient``'s adjoint), ``f`` forward mode (one
``mode=jvp`` call per basis vector). The step-2 argmax uses the outer mode.

Everything is rlx: the solver is an ``scf.while`` whose body branches with
``scf.if`` and calls the objective and its gradient (``descent_text``, also
used by the ``particle`` eval); the inner gradient is generated first, then
the outer one differentiates the inner solver loop (calls inlined), and
the outer solver calls it. One compiled function per variant computes the
whole output.
"""

import numpy as np

from ..build import function

FUNCTIONS = ("rr", "ff", "fr", "rf")

T0 = "tensor<f64>"
TOLERANCE = 1e-5


def vec(n):
    return f"tensor<{n}xf64>"


def descent_text(name, n, objective, gradient, extra=(), maximize=False):
    """``@name(extra..., x0: tensor<n x f64>) -> tensor<n x f64>``: GradBench's
    multivariate argmin (argmax when ``maximize``) of ``@objective(extra...,
    x) -> tensor<f64>`` with gradient ``@gradient(extra..., x) -> tensor<n x f64>``,
    as an ``scf.while`` over (x, f(x), grad f(x), eta, i) with ``scf.if``
    branches. ``extra`` lists the types of the arguments passed through."""
    v = vec(n)
    ex = [f"%e{k}" for k in range(len(extra))]
    ex_decl = "".join(f"{a}: {t}, " for a, t in zip(ex, extra))
    ex_use = "".join(f"{a}, " for a in ex)
    call_t = "(" + "".join(f"{t}, " for t in extra) + v + ")"
    state_t = f"{v}, {T0}, {v}, {T0}, {T0}"

    def call(fn, x, result, dest, ind):
        text = f"{ind}%{dest}_raw = func.call @{fn}({ex_use}{x}) : {call_t} -> {result}\n"
        if maximize:
            return text + (f'{ind}%{dest} = "rlx.negative"(%{dest}_raw) : '
                           f"({result}) -> {result}\n")
        return text + f'{ind}%{dest} = "rlx.add"(%{dest}_raw, %zero) : ({result}, {T0}) -> {result}\n'

    def norm(x, dest, ind):
        return (f'{ind}%{dest}_sq = "rlx.square"({x}) : ({v}) -> {v}\n'
                f'{ind}%{dest}_sum = "rlx.sum"(%{dest}_sq) : ({v}) -> {T0}\n'
                f'{ind}%{dest} = "rlx.sqrt"(%{dest}_sum) : ({T0}) -> {T0}\n')

    def step(dest, ind):
        """x' = x - eta * g (GradBench's x_prime)."""
        return (f'{ind}%{dest}_d = "rlx.multiply"(%eta, %g) : ({T0}, {v}) -> {v}\n'
                f'{ind}%{dest} = "rlx.subtract"(%x, %{dest}_d) : ({v}, {v}) -> {v}\n')

    i4, i6, i8 = " " * 4, " " * 6, " " * 8
    return f"""
func.func @{name}({ex_decl}%x0: {v}) -> {v} {{
  %zero = arith.constant dense<0.0> : {T0}
  %one = arith.constant dense<1.0> : {T0}
  %two = arith.constant dense<2.0> : {T0}
  %ten = arith.constant dense<10.0> : {T0}
  %tol = arith.constant dense<{TOLERANCE:.17e}> : {T0}
  %eta0 = arith.constant dense<{TOLERANCE:.17e}> : {T0}
  %true = arith.constant true
{call(objective, "%x0", T0, "f0", "  ")}{call(gradient, "%x0", v, "g0", "  ")}  %r:5 = scf.while (%x = %x0, %f = %f0, %g = %g0, %eta = %eta0, %i = %zero) : ({state_t}) -> ({state_t}) {{
{norm("%g", "gn", i4)}    %small_g = "rlx.less_equal"(%gn, %tol) : ({T0}, {T0}) -> tensor<i1>
{step("xp", i4)}    %dx = "rlx.subtract"(%x, %xp) : ({v}, {v}) -> {v}
{norm("%dx", "dn", i4)}    %small_step = "rlx.less_equal"(%dn, %tol) : ({T0}, {T0}) -> tensor<i1>
    %not10 = "rlx.not_equal"(%i, %ten) : ({T0}, {T0}) -> tensor<i1>
    %b1 = tensor.extract %small_g[] : tensor<i1>
    %b2 = tensor.extract %small_step[] : tensor<i1>
    %b3 = tensor.extract %not10[] : tensor<i1>
    %b23 = arith.andi %b3, %b2 : i1
    %stop = arith.ori %b1, %b23 : i1
    %go = arith.xori %stop, %true : i1
    scf.condition(%go) %x, %f, %g, %eta, %i : {state_t}
  }} do {{
  ^bb0(%x: {v}, %f: {T0}, %g: {v}, %eta: {T0}, %i: {T0}):
    %is10t = "rlx.equal"(%i, %ten) : ({T0}, {T0}) -> tensor<i1>
    %is10 = tensor.extract %is10t[] : tensor<i1>
    %s:5 = scf.if %is10 -> ({state_t}) {{
      %eta2 = "rlx.multiply"(%eta, %two) : ({T0}, {T0}) -> {T0}
      scf.yield %x, %f, %g, %eta2, %zero : {state_t}
    }} else {{
{step("xq", i6)}{call(objective, "%xq", T0, "fq", i6)}      %lt = "rlx.less"(%fq, %f) : ({T0}, {T0}) -> tensor<i1>
      %better = tensor.extract %lt[] : tensor<i1>
      %t:5 = scf.if %better -> ({state_t}) {{
{call(gradient, "%xq", v, "gq", i8)}        %i1 = "rlx.add"(%i, %one) : ({T0}, {T0}) -> {T0}
        scf.yield %xq, %fq, %gq, %eta, %i1 : {state_t}
      }} else {{
        %eta_half = "rlx.divide"(%eta, %two) : ({T0}, {T0}) -> {T0}
        scf.yield %x, %f, %g, %eta_half, %zero : {state_t}
      }}
      scf.yield %t#0, %t#1, %t#2, %t#3, %t#4 : {state_t}
    }}
    scf.yield %s#0, %s#1, %s#2, %s#3, %s#4 : {state_t}
  }}
  return %r#0 : {v}
}}
"""


def forward_gradient(name, n, jvp, extra=()):
    """``@name(extra..., x) -> grad``: the gradient of a scalar function from
    ``n`` calls of its ``@jvp(extra..., x, tangent) -> (f, df)``, one per basis vector."""
    v = vec(n)
    ex = [f"%e{k}" for k in range(len(extra))]
    decl = "".join(f"{a}: {t}, " for a, t in zip(ex, extra))
    use = "".join(f"{a}, " for a in ex)
    types = "(" + "".join(f"{t}, " for t in extra) + f"{v}, {v})"
    lines = [f"func.func @{name}({decl}%x: {v}) -> {v} {{"]
    for k in range(n):
        basis = ", ".join("1.0" if j == k else "0.0" for j in range(n))
        lines += [f"  %t{k} = arith.constant dense<[{basis}]> : {v}",
                  f"  %f{k}, %d{k} = func.call @{jvp}({use}%x, %t{k}) : {types} -> ({T0}, {T0})",
                  f'  %c{k} = "rlx.reshape"(%d{k}) : ({T0}) -> tensor<1xf64>']
    parts = ", ".join(f"%c{k}" for k in range(n))
    lines += [f'  %g = "rlx.concat"({parts}) {{axis = array<i64: 0>}} : '
              f"({', '.join(['tensor<1xf64>'] * n)}) -> {v}",
              f"  return %g : {v}", "}"]
    return "\n".join(lines) + "\n"


def reverse_gradient(name, n, adjoint, extra=()):
    """``@name(extra..., x) -> grad`` from ``@adjoint(extra..., x) -> (f, grad x)``."""
    v = vec(n)
    ex = [f"%e{k}" for k in range(len(extra))]
    decl = "".join(f"{a}: {t}, " for a, t in zip(ex, extra))
    use = "".join(f"{a}, " for a in ex)
    types = "(" + "".join(f"{t}, " for t in extra) + f"{v})"
    return (f"func.func @{name}({decl}%x: {v}) -> {v} {{\n"
            f"  %f, %g = func.call @{adjoint}({use}%x) : {types} -> ({T0}, {v})\n"
            f"  return %g : {v}\n}}\n")


def gradient_fn(mode, name, n, fn, extra=()):
    """The gradient of ``@fn`` w.r.t. its last argument, as ``@name``, by ``mode``
    ("r": from ``@fn_adjoint``; "f": from ``@fn_jvp``)."""
    if mode == "r":
        return reverse_gradient(name, n, f"{fn}_adjoint", extra)
    return forward_gradient(name, n, f"{fn}_jvp", extra)


def differentiate(fn, last):
    """The pipeline adding ``@fn_adjoint`` and ``@fn_jvp`` w.r.t. argument ``last``."""
    return (f"rlx-gradient{{func={fn} wrt={last}}},"
            f"rlx-gradient{{func={fn} mode=jvp wrt={last}}}")


def staged(*stages):
    """Module text built in stages: each stage is (text appended, pipeline or
    None) run on the module so far (a stage's functions call what the
    earlier stages' passes generated)."""
    import gradir
    text = ""
    for more, pipeline in stages:
        module = gradir.parse(text + more, source_name="gradbench")
        if pipeline:
            gradir.run_pipeline(module, f"builtin.module({pipeline})")
        text = str(module)
        text = text[text.index("{") + 1:text.rindex("}")]       # the module's body
    return text


V2 = vec(2)

OBJECTIVE = f"""
func.func @r2_cost(%p1: {V2}, %p2: {V2}) -> {T0} {{
  %a = "rlx.square"(%p1) : ({V2}) -> {V2}
  %b = "rlx.square"(%p2) : ({V2}) -> {V2}
  %d = "rlx.subtract"(%a, %b) : ({V2}, {V2}) -> {V2}
  %f = "rlx.sum"(%d) : ({V2}) -> {T0}
  return %f : {T0}
}}
"""


def program(variant):
    """The module text whose ``@saddle_<variant>(start) -> (r1, r2)`` is the eval."""
    outer, inner = variant
    max_p2 = (gradient_fn(inner, "r2_grad", 2, "r2_cost", [V2])
              + descent_text("r2_argmax", 2, "r2_cost", "r2_grad", [V2], maximize=True)
              + f"""
func.func @r1_cost(%start: {V2}, %p1: {V2}) -> {T0} {{
  %p2 = func.call @r2_argmax(%p1, %start) : ({V2}, {V2}) -> {V2}
  %f = func.call @r2_cost(%p1, %p2) : ({V2}, {V2}) -> {T0}
  return %f : {T0}
}}
""")
    solve = (gradient_fn(outer, "r1_grad", 2, "r1_cost", [V2])
             + descent_text("r1_argmin", 2, "r1_cost", "r1_grad", [V2])
             + gradient_fn(outer, "r2_grad_outer", 2, "r2_cost", [V2])
             + descent_text("r2_argmax_outer", 2, "r2_cost", "r2_grad_outer", [V2],
                            maximize=True)
             + f"""
func.func @saddle(%start: {V2}) -> ({V2}, {V2}) {{
  %r1 = func.call @r1_argmin(%start, %start) : ({V2}, {V2}) -> {V2}
  %r2 = func.call @r2_argmax_outer(%r1, %start) : ({V2}, {V2}) -> {V2}
  return %r1, %r2 : {V2}, {V2}
}}
""")
    return staged((OBJECTIVE, differentiate("r2_cost", 1)),
                  (max_p2, differentiate("r1_cost", 1)),
                  (solve, None))


_programs = {}


def prepare(name, input):
    if name not in FUNCTIONS:
        raise ValueError(f"saddle has no function {name!r}")
    start = np.asarray(input["start"], np.float64)
    if start.shape != (2,):
        raise ValueError(f"saddle: start has shape {start.shape}, not (2,)")
    if name not in _programs:
        _programs[name] = program(name)
    fn = function(_programs[name], None, "saddle")

    def run():
        r1, r2 = fn(start)
        return np.concatenate([r1, r2])
    return run
