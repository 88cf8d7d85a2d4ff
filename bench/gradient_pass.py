"""Pass speed: rlx-gradient (+ rlx-dce) on chains of N dense-tanh layers.

    build/venv/bin/python bench/gradient_pass.py [N ...]

Prints, per depth, the forward op count, the adjoint op count and the time
of parsing, of rlx-gradient and of printing (best of 3).  No peer runs here
yet (TVM's C++ Gradient pass is the one to compare with once TVM installs on
this machine); this script makes no comparative claim.
"""

import sys
import time

import gradir


def chain(n: int, batch: int = 64, width: int = 128) -> str:
    t = f"tensor<{batch}x{width}xf32>"
    w = f"tensor<{width}x{width}xf32>"
    args = [f"%x: {t}"] + [f"%w{i}: {w}" for i in range(n)]
    lines = [f"func.func @main({', '.join(args)}) -> tensor<f32> {{"]
    cur = "%x"
    for i in range(n):
        lines.append(f'  %m{i} = "rlx.matmul"({cur}, %w{i}) : ({t}, {w}) -> {t}')
        lines.append(f'  %h{i} = "rlx.tanh"(%m{i}) : ({t}) -> {t}')
        cur = f"%h{i}"
    lines.append(f'  %s = "rlx.sum"({cur}) : ({t}) -> tensor<f32>')
    lines.append("  return %s : tensor<f32>\n}")
    return "\n".join(lines)


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv):
    depths = [int(a) for a in argv] or [16, 64, 256]
    print(f"{'N':>5} {'fwd ops':>8} {'adj ops':>8} {'parse ms':>9} {'grad ms':>8} {'print ms':>9}")
    for n in depths:
        text = chain(n)
        t_parse, module = best(lambda: gradir.parse(text))

        def grad():
            m = gradir.parse(text)
            t0 = time.perf_counter()
            gradir.run_pipeline(m, "builtin.module(rlx-gradient,rlx-dce)")
            return time.perf_counter() - t0, m
        runs = [grad() for _ in range(3)]
        t_grad, module = min(runs, key=lambda r: r[0])
        t_print, out = best(lambda: gradir.print_module(module))
        adj = out[out.index("@main_adjoint"):]
        n_adj = adj.count('"rlx.') + adj.count("arith.constant")
        print(f"{n:>5} {2 * n + 1:>8} {n_adj:>8} {t_parse * 1e3:>9.1f} {t_grad * 1e3:>8.1f} "
              f"{t_print * 1e3:>9.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
