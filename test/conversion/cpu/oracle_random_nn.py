# RUN: %PYTHON %s | FileCheck %s
# Property test of the compiled convolutions and pools: random programs
# conv2d (strides, asymmetric padding, dilation, groups of 1-3) -> relu ->
# max_pool2d or avg_pool2d (windows of 1-3, strides, padding, ceil_mode
# with its overhang windows, count_include_pad) weighted and summed, and
# their rlx-gradient adjoints (the input's and the weights' gradients:
# conv2d_transpose, the weight gradient's conv, the pools' backward), f32
# and f64, compiled and run in a child process (gradir.testing.oracle) and
# compared with the reference interpreter.  Max pools read inputs on a
# coarse grid (ties between window elements; the backward gives the
# gradient to the first maximum).

import numpy as np

from gradir import parse, run_pipeline
from gradir.ir import print_module
from gradir.testing.oracle import Program, check_compiled

rng = np.random.default_rng(2611)


def ttype(shape, dt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt + ">"


def arr(name, values):
    return f"{name} = array<i64: {', '.join(map(str, values))}>"


def out_size(n, before, after, k, s, d, ceil=False):
    """Relax's output size (ceil_mode: the division rounded up, no
    PyTorch correction), or 0 when the window does not fit."""
    span = n + before + after - d * (k - 1) - 1
    if span < 0:
        return 0
    return (-(-span // s) if ceil else span // s) + 1


def program(dt):
    while True:
        groups = int(rng.choice([1, 1, 2, 3]))
        n = int(rng.integers(1, 4))
        c, o = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
        kh, kw = (int(v) for v in rng.integers(1, 6, 2))
        strides = [int(v) for v in rng.integers(1, 4, 2)]
        dilation = [int(v) for v in rng.integers(1, 3, 2)]
        padding = [int(v) for v in rng.integers(0, 3, 4)]
        h, w = (int(v) for v in rng.integers(4, 20, 2))
        oh = out_size(h, padding[0], padding[2], kh, strides[0], dilation[0])
        ow = out_size(w, padding[1], padding[3], kw, strides[1], dilation[1])
        kind = str(rng.choice(["max_pool2d", "avg_pool2d"]))
        pool = [2, 2] if rng.random() < 0.3 else [int(v) for v in rng.integers(1, 4, 2)]
        pstrides = list(pool) if rng.random() < 0.4 else [int(v) for v in rng.integers(1, 4, 2)]
        ppad = ([0, 0, 0, 0] if rng.random() < 0.5 else
                [int(rng.integers(0, pool[i % 2] // 2 + 1)) for i in range(4)])
        ceil = bool(rng.random() < 0.3)
        ph = out_size(oh, ppad[0], ppad[2], pool[0], pstrides[0], 1, ceil)
        pw = out_size(ow, ppad[1], ppad[3], pool[1], pstrides[1], 1, ceil)
        if min(oh, ow, ph, pw) > 0:
            break
    xs, ws, cs, ps = [n, c, h, w], [o, c // groups, kh, kw], [n, o, oh, ow], [n, o, ph, pw]
    extra = ", ceil_mode = true" if ceil else ""
    if kind == "avg_pool2d" and rng.random() < 0.5:
        extra += ", count_include_pad = true"
    t = lambda s: ttype(s, dt)  # noqa: E731
    text = f"""func.func @main(%x: {t(xs)}, %w: {t(ws)}, %g: {t(ps)}) -> {t([])} {{
  %c = "rlx.conv2d"(%x, %w) {{{arr('strides', strides)}, {arr('padding', padding)}, {arr('dilation', dilation)}, groups = {groups} : i64}} : ({t(xs)}, {t(ws)}) -> {t(cs)}
  %r = "rlx.relu"(%c) : ({t(cs)}) -> {t(cs)}
  %p = "rlx.{kind}"(%r) {{{arr('pool_size', pool)}, {arr('strides', pstrides)}, {arr('padding', ppad)}{extra}}} : ({t(cs)}) -> {t(ps)}
  %m = "rlx.multiply"(%p, %g) : ({t(ps)}, {t(ps)}) -> {t(ps)}
  %s = "rlx.sum"(%m) : ({t(ps)}) -> {t([])}
  return %s : {t([])}
}}
"""
    np_dt = np.float32 if dt == "f32" else np.float64
    args = [np.round(rng.standard_normal(xs) * 2) / 2, rng.standard_normal(ws),
            rng.standard_normal(ps)]
    return text, [a.astype(np_dt) for a in args]


def main():
    programs = []
    for k in range(32):
        dt = "f64" if k % 3 == 2 else "f32"
        text, args = program(dt)
        module = parse(text)
        run_pipeline(module, "builtin.module(rlx-gradient{func=main wrt=0,1})")
        programs.append(Program(f"random nn#{k} main_adjoint\n{text}",
                                print_module(module, generic=True), "main_adjoint", args))
    failures = check_compiled(programs)
    for f in failures:
        print("FAIL", f)
    print(f"random nn programs: {len(programs) - len(failures)} of {len(programs)} match")


main()
# CHECK-NOT: FAIL
# CHECK: random nn programs: [[N:[0-9]+]] of [[N]] match
