"""Pass speed: rlx-gradient (+ rlx-dce) on chains of N dense-tanh layers.

    build/venv/bin/python bench/gradient_pass.py [N ...]

Prints, per depth, the forward op count, the adjoint op count and the time
of rlx-gradient (raw: simplify=false; and with its default simplification),
side by side with TVM Relax's C++ ``relax.transform.Gradient`` on the same
program when TVM is installed (``build/venv/bin/pip install apache-tvm``;
not part of the pinned stack).  Best of 3; parse and print times are
excluded on both sides.  Ratio = TVM ms / gradir ms (>1: gradir faster).
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


def gradir_time(text: str, options: str):
    runs = []
    for _ in range(3):
        m = gradir.parse(text)
        t0 = time.perf_counter()
        gradir.run_pipeline(m, f"builtin.module(rlx-gradient{{{options}}})")
        runs.append((time.perf_counter() - t0, m))
    t, m = min(runs, key=lambda r: r[0])
    out = gradir.print_module(m)
    adj = out[out.index("@main_adjoint"):]
    return t, adj.count('"rlx.') + adj.count("arith.constant")


def tvm_chain(n: int, batch: int = 64, width: int = 128):
    from tvm import relax
    from tvm.script import relax as R
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((batch, width), "float32").as_ty())
    ws = [relax.Var(f"w{i}", R.Tensor((width, width), "float32").as_ty())
          for i in range(n)]
    with bb.function("main", [x] + ws):
        with bb.dataflow():
            cur = x
            for w in ws:
                cur = bb.emit(relax.op.tanh(relax.op.matmul(cur, w)))
            out = bb.emit_output(relax.op.sum(cur))
        bb.emit_func_output(out)
    return bb.get()


def tvm_time(n: int):
    try:
        from tvm import relax
    except ImportError:
        return None, None
    runs = []
    for _ in range(3):
        mod = tvm_chain(n)
        t0 = time.perf_counter()
        out = relax.transform.Gradient("main")(mod)
        runs.append((time.perf_counter() - t0, out))
    t, out = min(runs, key=lambda r: r[0])
    adj = out["main_adjoint"]
    n_ops = sum(len(b.bindings) for b in adj.body.blocks)
    return t, n_ops


def main(argv):
    depths = [int(a) for a in argv] or [16, 64, 256]
    print(f"{'N':>5} {'fwd ops':>8} {'raw ops':>8} {'raw ms':>8} {'simpl ops':>10} "
          f"{'simpl ms':>9} {'TVM ops':>8} {'TVM ms':>8} {'TVM/raw':>8} {'TVM/simpl':>10}")
    for n in depths:
        text = chain(n)
        t_raw, ops_raw = gradir_time(text, "simplify=false")
        t_simp, ops_simp = gradir_time(text, "")
        t_tvm, ops_tvm = tvm_time(n)
        tvm_cols = (f"{ops_tvm:>8} {t_tvm * 1e3:>8.1f} {t_tvm / t_raw:>8.2f} "
                    f"{t_tvm / t_simp:>10.2f}" if t_tvm is not None else
                    f"{'-':>8} {'-':>8} {'-':>8} {'-':>10}")
        print(f"{n:>5} {2 * n + 1:>8} {ops_raw:>8} {t_raw * 1e3:>8.1f} {ops_simp:>10} "
              f"{t_simp * 1e3:>9.1f} {tvm_cols}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
