"""The convolution and pooling ops of a LeNet-5 gradient step, one at a time:
gradir (compiled, checked against the interpreter) against PyTorch eager
(the same op, or the aten backward op it runs), float32, one thread.

    build/venv/bin/python bench/conv_ops.py [--batch 64] [--f64]
    build/venv/bin/python bench/conv_ops.py --threads 2   # both on 2 cores
    build/venv/bin/python bench/conv_ops.py --isa avx2    # gradir for x86-64-v3,
                                                          # torch held to AVX2

Rows: conv1/conv2 forward; conv2 dx (rlx.conv2d_transpose); conv1/conv2 dw
(the conv2d the conv2d VJP rule emits: data and gradient with N and C
swapped); max_pool2d forward and backward at both sizes.  Ratio = torch
time / gradir time (>1: gradir faster).  Prints the CPU, its vector ISA and
the load average.
"""

from __future__ import annotations

import os
import statistics
import sys

import _cli  # bench/_cli.py: --help, unknown options
import cpu  # bench/cpu.py: timeit

import numpy as np


def timeit(fn):
    return cpu.timeit(fn, max_runs=300,
                      stat=min if os.environ.get("CONV_OPS_MIN") else statistics.median)


def _t(shape, e):
    return "tensor<" + "x".join(map(str, shape)) + f"x{e}>"


CONV = ("{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, "
        "dilation = array<i64: 1, 1>, groups = 1 : i64}")
POOL = "{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}"


def cases(b):
    """(name, rlx op, attrs, operand shapes, result shape, torch fn)"""
    def conv(x, w):
        import torch
        return torch.nn.functional.conv2d(x, w)

    def convt(g, w):
        import torch
        return torch.nn.functional.conv_transpose2d(g, w)

    def pool(x):
        import torch
        return torch.nn.functional.max_pool2d(x, 2)

    def pool_bwd(g, x):
        import torch
        y, idx = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
        return torch.ops.aten.max_pool2d_with_indices_backward(g, x, [2, 2], [2, 2], [0, 0],
                                                               [1, 1], False, idx)

    def dw(x, g):                              # torch's weight gradient of conv2d
        import torch
        return torch.ops.aten.convolution_backward(
            g, x, torch.empty(g.shape[1], x.shape[1], x.shape[2] - g.shape[2] + 1,
                              x.shape[3] - g.shape[3] + 1, dtype=x.dtype),
            None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False])[1]

    return [
        ("conv1 fwd", "rlx.conv2d", CONV, [(b, 1, 28, 28), (6, 1, 5, 5)], (b, 6, 24, 24), conv),
        ("conv2 fwd", "rlx.conv2d", CONV, [(b, 6, 12, 12), (16, 6, 5, 5)], (b, 16, 8, 8), conv),
        ("conv2 dx", "rlx.conv2d_transpose", CONV, [(b, 16, 8, 8), (16, 6, 5, 5)], (b, 6, 12, 12),
         convt),
        ("conv1 dw", "rlx.conv2d", CONV, [(1, b, 28, 28), (6, b, 24, 24)], (1, 6, 5, 5),
         lambda xt, gt: dw(xt.transpose(0, 1).contiguous(),
                           gt.transpose(0, 1).contiguous()).transpose(0, 1)),
        ("conv2 dw", "rlx.conv2d", CONV, [(6, b, 12, 12), (16, b, 8, 8)], (6, 16, 5, 5),
         lambda xt, gt: dw(xt.transpose(0, 1).contiguous(),
                           gt.transpose(0, 1).contiguous()).transpose(0, 1)),
        ("pool1 fwd", "rlx.max_pool2d", POOL, [(b, 6, 24, 24)], (b, 6, 12, 12), pool),
        ("pool2 fwd", "rlx.max_pool2d", POOL, [(b, 16, 8, 8)], (b, 16, 4, 4), pool),
        ("pool1 bwd", "rlx.max_pool2d_backward", POOL, [(b, 6, 12, 12), (b, 6, 24, 24)],
         (b, 6, 24, 24), pool_bwd),
        ("pool2 bwd", "rlx.max_pool2d_backward", POOL, [(b, 16, 4, 4), (b, 16, 8, 8)],
         (b, 16, 8, 8), pool_bwd),
    ]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _cli.check(argv, __doc__, flags=("--f64",), valued=("--batch", "--threads", "--isa"),
               choices={"--isa": ("avx2", "host")})
    try:
        batch = int(argv[argv.index("--batch") + 1]) if "--batch" in argv else 64
        threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 1
    except ValueError:
        batch = threads = 0
    if batch < 1 or threads < 1:
        _cli._refuse("--batch and --threads take a positive count", "")
    elt, dtype = ("f64", np.float64) if "--f64" in argv else ("f32", np.float32)
    avx2 = "--isa" in argv and argv[argv.index("--isa") + 1] == "avx2"
    if avx2:
        os.environ.update(cpu.AVX2_ENV)      # before torch loads its kernels
    os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        cores = sorted(os.sched_getaffinity(0))
        threads = min(threads, len(cores))
        os.sched_setaffinity(0, set(cores[:threads]))
    except (AttributeError, OSError):
        pass
    import gradir
    from gradir.conversion.cpu.host import resolve
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    cpu_name = "x86-64-v3" if avx2 else "host"
    target = resolve(cpu_name)
    print(f"# {resolve('host').model}: gradir for {target.name}, vector ISA {target.isa}"
          f"{' (torch held to AVX2)' if avx2 else ''}; {elt}, batch {batch}, "
          f"{threads} thread{'s' if threads > 1 else ''}")
    print(f"{'op':<11} {'gradir ms':>10} {'torch ms':>10} {'torch/gradir':>13}")
    total = [0.0, 0.0]
    for name, opname, attrs, shapes, out, tfn in cases(batch):
        args = ", ".join(f"%a{i}: {_t(s, elt)}" for i, s in enumerate(shapes))
        operands = ", ".join(f"%a{i}" for i in range(len(shapes)))
        types = ", ".join(_t(s, elt) for s in shapes)
        text = (f"func.func @f({args}) -> {_t(out, elt)} {{\n"
                f"  %r = \"{opname}\"({operands}) {attrs} : ({types}) -> {_t(out, elt)}\n"
                f"  return %r : {_t(out, elt)}\n}}")
        m = gradir.parse(text)
        fn = gradir.compile(m, cpu=cpu_name, threads=threads)["f"]
        inputs = [rng.standard_normal(s).astype(dtype) for s in shapes]
        got = fn(*inputs)
        (want,) = gradir.interpret(m, "f", *inputs)
        tol = 1e-4 if elt == "f32" else 1e-10
        atol = tol * float(np.abs(want).max())
        np.testing.assert_allclose(got, want, rtol=tol, atol=atol, err_msg=name)
        tg = timeit(lambda: fn(*inputs))
        tt = float("nan")
        if torch is not None:
            targs = [torch.from_numpy(a) for a in inputs]
            with torch.no_grad():
                np.testing.assert_allclose(tfn(*targs).numpy(), want, rtol=tol, atol=atol,
                                           err_msg=name + " (torch)")
                tt = timeit(lambda: tfn(*targs))
        total[0] += tg
        total[1] += tt
        print(f"{name:<11} {tg * 1e3:10.3f} {tt * 1e3:10.3f} {tt / tg:13.2f}", flush=True)
    print(f"{'total':<11} {total[0] * 1e3:10.3f} {total[1] * 1e3:10.3f} {total[1] / total[0]:13.2f}")
    print(f"# load average {open('/proc/loadavg').read().split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
