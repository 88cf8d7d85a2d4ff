# RUN: %PYTHON %s | FileCheck %s
# remat=auto's planner on deep programs (gradir.autodiff.auto_plan): the
# candidate cuts are thinned to MAX_CUTS, segment scans are computed once
# and shared by every dynamic program (the cached model answers exactly as
# a fresh one), and the plan fits its budget, checked on the adjoint.

from gradir.autodiff import auto_plan, remat
from gradir.autodiff.gradient import body_of, find_function
from gradir.testing import gradient_module


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def chain(n, batch=64, width=8):
    t, w = f"tensor<{batch}x{width}xf32>", f"tensor<{width}x{width}xf32>"
    args = [f"%x: {t}"] + [f"%w{k}: {w}" for k in range(n)]
    lines = [f"func.func @main({', '.join(args)}) -> tensor<f32> {{"]
    h = "%x"
    for k in range(n):
        lines += [f"  %z{k} = \"rlx.matmul\"({h}, %w{k}) : ({t}, {w}) -> {t}",
                  f"  %h{k} = \"rlx.tanh\"(%z{k}) : ({t}) -> {t}"]
        h = f"%h{k}"
    lines += [f"  %l = \"rlx.sum\"({h}) : ({t}) -> tensor<f32>", "  return %l : tensor<f32>", "}"]
    return "\n".join(lines)


def graph(n):
    module = gradient_module(chain(n))
    fn = find_function(module.operation, "main_adjoint")
    return module, remat.AdjointGraph(body_of(fn), 1, module.operation)


@run
def thinned_and_cached():
    _, g = graph(300)
    model = auto_plan.build_model(g, set(), set())
    assert model.m > auto_plan.EXHAUSTIVE_POSITIONS
    assert 0 < len(model.cuts.candidates) <= auto_plan.MAX_CUTS, len(model.cuts.candidates)
    store_all = g.evaluate(g.full_plan()).peak
    budgets = [store_all * f for f in (0.9, 0.5, 0.3, 0.2, 0.5)]
    cached = [auto_plan.dp(model, b) for b in budgets]
    fresh = [auto_plan.dp(auto_plan.build_model(g, set(), set()), b) for b in budgets]
    assert cached == fresh, (cached, fresh)
    assert cached[1] and cached[1] == cached[4]
    print(f"{len(model.cuts.candidates)} candidate cuts, {len(model.scans)} scans shared")
# CHECK-LABEL: TEST: thinned_and_cached
# CHECK: {{[0-9]+}} candidate cuts, {{[0-9]+}} scans shared


@run
def deep_plan_fits():
    for frac in (0.5, 0.3):
        _, g = graph(300)
        plan = remat.plan_auto(g, ("fraction", frac))
        assert plan.met and plan.peak <= plan.budget < plan.store_all_peak, plan
        check = g.evaluate(plan.kept)
        assert check.peak == plan.peak and check.flops == plan.flops
        # Recomputing costs at most one more forward pass.
        forward_flops = sum(g.ops[i].flops for i in g.forward)
        assert 0 < plan.flops <= forward_flops, (plan.flops, forward_flops)
        print(f"budget {frac}: fits, recomputes {plan.flops / forward_flops:.2f} of the forward")
# CHECK-LABEL: TEST: deep_plan_fits
# CHECK: budget 0.5: fits, recomputes {{[0-9.]+}} of the forward
# CHECK: budget 0.3: fits, recomputes {{[0-9.]+}} of the forward
