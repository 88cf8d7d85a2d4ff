# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# Property test of the compiled code: random small programs (elementwise ops,
# broadcasting, reductions, matmuls, constants; results repeated, arguments and
# constants returned as results; zero-size and 0-d tensors) and their
# rlx-gradient adjoints, compiled and run in a child process
# (gradir.testing.oracle) and compared with the reference interpreter.  A
# crash of compiled code names the program instead of killing the test.

import numpy as np

from gradir import parse, run_pipeline
from gradir.testing.oracle import Program, check_compiled

rng = np.random.default_rng(2026)

SHAPES = [(), (1,), (3,), (0,), (2, 3), (0, 3), (3, 0), (2, 0, 3), (1, 3)]
UNARY = ["exp", "tanh", "negative", "square", "sin", "sigmoid", "abs"]
BINARY = ["add", "multiply", "subtract", "maximum", "minimum"]


def ttype(shape, dt="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dt + ">"


class Gen:
    def __init__(self, dt):
        self.dt = dt
        self.lines = []
        self.vals = []          # (name, shape)
        self.n = 0

    def emit(self, text, shape):
        name = f"%v{self.n}"
        self.n += 1
        self.lines.append(f"  {name} = {text}")
        self.vals.append((name, shape))
        return name, shape

    def pick(self, shape=None):
        cands = [v for v in self.vals if shape is None or v[1] == shape]
        return cands[rng.integers(len(cands))] if cands else None

    def step(self):
        kind = rng.choice(["unary", "binary", "bcast", "sum", "matmul", "const", "reshape"])
        a, sa = self.pick()
        t = ttype
        dt = self.dt
        if kind == "unary":
            u = rng.choice(UNARY)
            return self.emit(f'"rlx.{u}"({a}) : ({t(sa, dt)}) -> {t(sa, dt)}', sa)
        if kind == "binary":
            other = self.pick(sa) or (a, sa)
            b = rng.choice(BINARY)
            return self.emit(f'"rlx.{b}"({a}, {other[0]}) : ({t(sa, dt)}, {t(sa, dt)}) -> '
                             f'{t(sa, dt)}', sa)
        if kind == "bcast":
            s = self.pick(())
            if s is None:
                s = self.emit(f'"rlx.sum"({a}) : ({t(sa, dt)}) -> {t((), dt)}', ())
            return self.emit(f'"rlx.multiply"({a}, {s[0]}) : ({t(sa, dt)}, {t((), dt)}) -> '
                             f'{t(sa, dt)}', sa)
        if kind == "sum":
            if sa and rng.random() < 0.5:
                out = sa[1:]
                return self.emit(f'"rlx.sum"({a}) {{axis = array<i64: 0>}} : ({t(sa, dt)}) -> '
                                 f'{t(out, dt)}', out)
            return self.emit(f'"rlx.sum"({a}) : ({t(sa, dt)}) -> {t((), dt)}', ())
        if kind == "matmul" and len(sa) == 2:
            m, k = sa
            n = int(rng.choice([0, 2]))
            w = self.emit(f'"rlx.permute_dims"({a}) {{axes = array<i64: 1, 0>}} : '
                          f'({t(sa, dt)}) -> {t((k, m), dt)}', (k, m))
            if n == 0:
                w = self.emit(f'"rlx.strided_slice"({w[0]}) {{axes = array<i64: 1>, '
                              f'begin = array<i64: 0>, end = array<i64: 0>}} : '
                              f'({t((k, m), dt)}) -> {t((k, 0), dt)}', (k, 0))
                n = 0
            else:
                n = m
            return self.emit(f'"rlx.matmul"({a}, {w[0]}) : ({t(sa, dt)}, {t(w[1], dt)}) -> '
                             f'{t((m, n), dt)}', (m, n))
        if kind == "const":
            vals = ", ".join(f"{x:.3f}" for x in rng.uniform(-1, 1, 3))
            return self.emit(f"arith.constant dense<[{vals}]> : {t((3,), dt)}", (3,))
        return self.emit(f'"rlx.reshape"({a}) : ({t(sa, dt)}) -> '
                         f'{t((int(np.prod(sa, dtype=int)),), dt)}',
                         (int(np.prod(sa, dtype=int)),))


def program(k, dt):
    g = Gen(dt)
    nargs = int(rng.integers(1, 4))
    shapes = [SHAPES[rng.integers(len(SHAPES))] for _ in range(nargs)]
    params = [f"%a{i}: {ttype(s, dt)}" for i, s in enumerate(shapes)]
    g.vals = [(f"%a{i}", s) for i, s in enumerate(shapes)]
    for _ in range(int(rng.integers(1, 7))):
        g.step()
    # Results: the last value, then repeats, arguments, constants, anything.
    results = [g.vals[-1]]
    for _ in range(int(rng.integers(0, 4))):
        results.append(g.vals[rng.integers(len(g.vals))])
    if rng.random() < 0.5:
        results.append(results[0])
    if rng.random() < 0.3:
        results.append(g.vals[0])
    target = g.emit(f'"rlx.sum"({results[0][0]}) : ({ttype(results[0][1], dt)}) -> '
                    f'{ttype((), dt)}', ())
    results.insert(0, target)
    names = ", ".join(r[0] for r in results)
    types = ", ".join(ttype(r[1], dt) for r in results)
    text = (f"func.func @main({', '.join(params)}) -> ({types}) {{\n" + "\n".join(g.lines)
            + f"\n  return {names} : {types}\n}}\n")
    args = [rng.uniform(-1, 1, s).astype(np.float64 if dt == "f64" else np.float32)
            for s in shapes]
    return text, args


def main():
    programs = []
    for k in range(60):
        dt = "f64" if k % 2 else "f32"
        text, args = program(k, dt)
        module = parse(text)
        run_pipeline(module, "builtin.module(rlx-gradient{func=main target-index=0})")
        from gradir.ir import print_module
        printed = print_module(module, generic=True)
        programs.append(Program(f"random#{k} main\n{text}", printed, "main", args))
        programs.append(Program(f"random#{k} main_adjoint\n{text}", printed, "main_adjoint",
                                args))
    failures = check_compiled(programs)
    for f in failures:
        print("FAIL", f)
    print(f"random programs: {len(programs) - len(failures)} of {len(programs)} match")


main()
# CHECK-NOT: FAIL
# CHECK: random programs: [[N:[0-9]+]] of [[N]] match
