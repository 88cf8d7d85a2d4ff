# RUN: %PYTHON %s | FileCheck %s
# remat=auto's planner (gradir.autodiff.remat) against brute force on small
# graphs: at every budget it recomputes no more FLOPs than the best plan
# that fits, never exceeds storing everything, reaches the lowest peak when
# the budget cannot be met, and its memory model agrees with
# rlx-memory-report on the IR it writes.

import itertools


import gradir
from gradir import _compat
from gradir.autodiff import remat
from gradir.autodiff.gradient import body_of
from gradir.ir import find_function
from gradir.autodiff.memory import memory_report
from gradir.testing import gradient_module


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def dense_chain(n, batch, width):
    t, w, b = f"tensor<{batch}x{width}xf32>", f"tensor<{width}x{width}xf32>", f"tensor<{width}xf32>"
    args = [f"%x: {t}"] + [f"%w{k}: {w}, %b{k}: {b}" for k in range(n)]
    lines = [f"func.func @main({', '.join(args)}) -> tensor<f32> {{"]
    h = "%x"
    for k in range(n):
        lines += [f"  %z{k} = \"rlx.matmul\"({h}, %w{k}) : ({t}, {w}) -> {t}",
                  f"  %a{k} = \"rlx.add\"(%z{k}, %b{k}) : ({t}, {b}) -> {t}",
                  f"  %h{k} = \"rlx.tanh\"(%a{k}) : ({t}) -> {t}"]
        h = f"%h{k}"
    lines += [f"  %l = \"rlx.sum\"({h}) : ({t}) -> tensor<f32>", "  return %l : tensor<f32>", "}"]
    return "\n".join(lines)


def residual(n, size):
    t = f"tensor<{size}xf32>"
    lines = [f"func.func @main(%x: {t}) -> tensor<f32> {{"]
    h = "%x"
    for k in range(n):
        lines += [f"  %s{k} = \"rlx.sigmoid\"({h}) : ({t}) -> {t}",
                  f"  %e{k} = \"rlx.exp\"(%s{k}) : ({t}) -> {t}",
                  f"  %r{k} = \"rlx.add\"({h}, %e{k}) : ({t}, {t}) -> {t}"]
        h = f"%r{k}"
    lines += [f"  %q = \"rlx.multiply\"({h}, {h}) : ({t}, {t}) -> {t}",
              f"  %l = \"rlx.sum\"(%q) : ({t}) -> tensor<f32>", "  return %l : tensor<f32>", "}"]
    return "\n".join(lines)


def graph_of(text):
    module = gradient_module(text)
    fn = find_function(module.operation, "main_adjoint")
    return module, fn, remat.AdjointGraph(body_of(fn), 1, module.operation)


def brute_force(g):
    """Every plan that keeps a subset of the values the backward uses (and
    nothing else: the rest is recomputed from those and the arguments)."""
    choices = sorted(i for i in g.used_by_backward if i not in g.always)
    out = []
    for bits in itertools.product((0, 1), repeat=len(choices)):
        kept = set(g.always) | {i for i, b in zip(choices, bits) if b}
        out.append(g.evaluate(kept))
    return out


def pareto(evals):
    front, best = [], None
    for e in sorted(evals, key=lambda e: (e.peak, e.flops)):
        if best is None or e.flops < best:
            front.append((e.peak, e.flops))
            best = e.flops
    return front


CASES = {"dense chain, 8 layers": dense_chain(8, 16, 4),
         "dense chain, 12 layers": dense_chain(12, 64, 16),
         "residual, 5 blocks": residual(5, 32)}


@run
def optimal_against_brute_force():
    for name, text in CASES.items():
        _, _, g = graph_of(text)
        evals = brute_force(g)
        store_all = g.evaluate(g.full_plan()).peak
        lowest = min(e.peak for e in evals)
        front = pareto(evals)
        # Budgets on and between the points of the brute-force Pareto front.
        budgets = sorted({p for p, _ in front} | {p + 7 for p, _ in front} | {lowest - 1})
        for budget in budgets:
            plan = remat.plan_auto(g, ("bytes", budget))
            fits = [e for e in evals if e.peak <= budget]
            assert plan.peak <= store_all, (name, budget)
            if fits:
                assert plan.met and plan.peak <= budget, (name, budget, plan.peak)
                best = min(e.flops for e in fits)
                assert plan.flops <= best, (name, budget, plan.flops, best)
            else:
                assert not plan.met and plan.peak <= lowest, (name, budget, plan.peak, lowest)
        print(f"{name}: {len(evals)} plans, {len(front)} on the Pareto front, "
              f"{len(budgets)} budgets: optimal")
# CHECK-LABEL: TEST: optimal_against_brute_force
# CHECK: dense chain, 8 layers: 256 plans, {{[0-9]+}} on the Pareto front, {{[0-9]+}} budgets: optimal
# CHECK: dense chain, 12 layers: 4096 plans, {{[0-9]+}} on the Pareto front, {{[0-9]+}} budgets: optimal
# CHECK: residual, 5 blocks: {{[0-9]+}} plans, {{[0-9]+}} on the Pareto front, {{[0-9]+}} budgets: optimal


@run
def model_agrees_with_memory_report():
    """The planner's peak of a plan is what rlx-memory-report measures on
    the adjoint the pass writes, and its FLOPs are the adjoint's extra FLOPs."""
    text = dense_chain(10, 32, 8)
    plain_module, plain_fn, _ = graph_of(text)
    plain = memory_report(plain_fn)
    del plain_module
    for budget in ("1.0", "0.75", "0.6", "0.5", "0.3"):
        module, fn, g = graph_of(text)
        plan = remat.plan_auto(g, ("fraction", float(budget)))
        remat.apply_plan(g, plan.kept)
        report = memory_report(fn)
        assert report.peak == plan.peak, (budget, report.peak, plan.peak)
        assert report.flops == plain.flops + plan.flops, (budget, report.flops, plan.flops)
        with_pass = gradient_module(text, remat="auto", budget=budget) if plan.met else None
        if with_pass is not None:
            got = memory_report(find_function(with_pass.operation, "main_adjoint"))
            assert got.peak == plan.peak and got.flops == report.flops, (budget, got)
    print("model == rlx-memory-report on the rewritten adjoint")
# CHECK-LABEL: TEST: model_agrees_with_memory_report
# CHECK: model == rlx-memory-report on the rewritten adjoint


@run
def never_above_store_everything():
    sink = []
    _compat.push_diagnostic_sink(lambda *d: sink.append(d))
    try:
        for text in CASES.values():
            _, _, g = graph_of(text)
            store_all = g.evaluate(g.full_plan()).peak
            for frac in (0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 1.0, 2.0):
                plan = remat.plan_auto(g, ("fraction", frac))
                assert plan.peak <= store_all
                assert plan.met == (plan.peak <= plan.budget)
    finally:
        _compat.pop_diagnostic_sink()
    print("no plan above storing everything")
# CHECK-LABEL: TEST: never_above_store_everything
# CHECK: no plan above storing everything


@run
def budgets():
    assert remat.parse_budget("0.25") == ("fraction", 0.25)
    assert remat.parse_budget("25%") == ("fraction", 0.25)
    assert remat.parse_budget("1") == ("fraction", 1.0)
    assert remat.parse_budget("4096") == ("bytes", 4096.0)
    assert remat.parse_budget("64MiB") == ("bytes", 64 * 2 ** 20)
    assert remat.parse_budget("1.5GB") == ("bytes", 1.5e9)
    for bad in ("", "-3", "0", "x", "12parsecs", "0%"):
        try:
            remat.parse_budget(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
    print("budget spellings ok")
# CHECK-LABEL: TEST: budgets
# CHECK: budget spellings ok


@run
def memory_report_api():
    text = dense_chain(3, 8, 4)
    module = gradient_module(text)
    main = find_function(module.operation, "main")
    adj = find_function(module.operation, "main_adjoint")
    a, b = memory_report(main), memory_report(adj)
    assert a.forward_results == 1 and a.saved == 0 and a.saved_total == 0
    assert b.forward_results == 1 and b.saved_total == 3 * 8 * 4 * 4  # the three tanh
    assert b.peak == b.arguments + b.saved + b.temporaries
    assert memory_report(adj, forward_results=11).saved_total == 0
    print(a.function, a.peak, a.flops)
    print(b.function, b.peak, b.flops)
    print(gradir.print_module(module).count("grad.recomputed"), "recomputed")
# CHECK-LABEL: TEST: memory_report_api
# CHECK: main 624 992
# CHECK: main_adjoint {{[0-9]+}} {{[0-9]+}}
# CHECK: 0 recomputed
