"""Elementwise transcendental functions on the CPU: gradir against numpy,
PyTorch eager and JAX jit, side by side in one process, one thread.

    build/venv/bin/python bench/cpu_math.py            # 2^20 f32 elements
    build/venv/bin/python bench/cpu_math.py --n 65536

Each workload maps a float32 vector through one rlx op (exp, log, tanh, erf,
sigmoid, gelu) and through the peers' equivalents (numpy has no erf, gelu
or sigmoid: computed from exp/tanh where it has the pieces, "-" otherwise).
gradir compiles with the CPU pipeline (rlx-math-approx + the vectorizing
schedule); ``--libm`` compiles gradir's functions without rlx-math-approx
(the libm calls of before) as a second gradir column.  Timings: median of
repeated runs after warm-up; ratios are peer time / gradir time (>1: gradir
is faster).  The header names the CPU, its vector ISA and the load average.
"""

from __future__ import annotations

import os
import sys

import _cli  # bench/_cli.py: --help, unknown options
import cpu  # bench/cpu.py: timeit

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

OPS = ["exp", "log", "tanh", "erf", "sigmoid", "gelu"]


def timeit(fn):
    return cpu.timeit(fn, max_runs=300)


def compile_gradir(n: int, approx: bool):
    import gradir
    from gradir.conversion.cpu import pipeline
    t = f"tensor<{n}xf32>"
    text = "\n".join(f'''func.func @rlx_{name}(%x: {t}) -> {t} {{
  %0 = "rlx.{name}"(%x) : ({t}) -> {t}
  return %0 : {t}
}}''' for name in OPS)
    if approx:
        return gradir.compile(gradir.parse(text))
    # the pipeline without rlx-math-approx (libm calls), for comparison
    original = pipeline.linalg_to_llvm_pipeline

    def no_approx(*args, **kwargs):
        kwargs["math_approx"] = False
        return original(*args, **kwargs)
    pipeline.linalg_to_llvm_pipeline = no_approx
    try:
        return gradir.compile(gradir.parse(text))
    finally:
        pipeline.linalg_to_llvm_pipeline = original


def main(argv: list[str]) -> int:
    _cli.check(argv, __doc__, flags=("--libm",), valued=("--n",))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])
    n = int(argv[argv.index("--n") + 1]) if "--n" in argv else 1 << 20
    libm = "--libm" in argv
    import platform

    import numpy as np
    from gradir.conversion.cpu.host import detect_host

    rng = np.random.default_rng(0)
    x = rng.uniform(-5.0, 5.0, n).astype(np.float32)
    xpos = rng.uniform(1e-3, 50.0, n).astype(np.float32)
    exe = compile_gradir(n, True)
    old = compile_gradir(n, False) if libm else None

    peers = {}
    try:
        import torch
        torch.set_num_threads(1)
        peers["torch"] = {
            "exp": torch.exp, "log": torch.log, "tanh": torch.tanh, "erf": torch.erf,
            "sigmoid": torch.sigmoid,
            "gelu": torch.nn.functional.gelu}
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        peers["jax"] = {name: jax.jit(f) for name, f in {
            "exp": jnp.exp, "log": jnp.log, "tanh": jnp.tanh, "erf": jax.scipy.special.erf,
            "sigmoid": jax.nn.sigmoid,
            "gelu": lambda v: jax.nn.gelu(v, approximate=False)}.items()}
    except ImportError:
        pass
    numpy_ops = {"exp": np.exp, "log": np.log, "tanh": np.tanh,
                 "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}

    host = detect_host()
    cols = ["gradir"] + (["gradir-libm"] if libm else []) + ["numpy"] + list(peers)
    print(f"# {host.model or platform.machine()}, vector ISA {host.isa} "
          f"({host.vector_bits}-bit), one thread, {n} f32 elements")
    print(f"{'op':<9}" + "".join(f"{c + ' ms':>15}" for c in cols)
          + "".join(f"{c + '/gradir':>20}" for c in cols[1:]))
    for name in OPS:
        arg = xpos if name == "log" else x
        times = {"gradir": timeit(lambda: exe["rlx_" + name](arg))}
        if libm:
            times["gradir-libm"] = timeit(lambda: old["rlx_" + name](arg))
        times["numpy"] = timeit(lambda: numpy_ops[name](arg)) if name in numpy_ops else None
        if "torch" in peers:
            t = torch.from_numpy(arg)
            times["torch"] = timeit(lambda: peers["torch"][name](t))
        if "jax" in peers:
            j = jax.device_put(arg)
            f = peers["jax"][name]
            times["jax"] = timeit(lambda: f(j).block_until_ready())
        row = f"{name:<9}" + "".join(
            f"{times[c] * 1e3:>15.3f}" if times[c] else f"{'-':>15}" for c in cols)
        row += "".join(f"{times[c] / times['gradir']:>20.2f}" if times[c] else f"{'-':>20}"
                       for c in cols[1:])
        print(row)
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
