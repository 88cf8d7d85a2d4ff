"""First-call time: parse + gradient + compile + first run, gradir against JAX.

    build/venv/bin/pip install jax torch==2.13.0    # peers (once; not in CI)
    build/venv/bin/python bench/compile_time.py     # lenet64 and mlp64, 3 rounds
    build/venv/bin/python bench/compile_time.py --rounds 5 --workloads lenet64
    build/venv/bin/python bench/compile_time.py --cpu x86-64-v3  # gradir's code for AVX2 (JAX: host)
    build/venv/bin/python bench/compile_time.py --breakdown      # gradir's first call, stage by stage
                                                    # (of the whole module: the default path
                                                    # compiles large functions in two parts at
                                                    # once, runtime/partition.py; compare the
                                                    # rows with GRADIR_PARALLEL_COMPILE=0 set)
    build/venv/bin/python bench/compile_time.py --timeline [--threads 2] [--warm]
                                                    # the default (split) path's compile of
                                                    # @main_adjoint, per thread: contexts,
                                                    # Python passes, released pass groups,
                                                    # LLVM (--warm: a second compile)
    build/venv/bin/python bench/compile_time.py --llvm-tools     # adds "gradir cold EE" / "... tools":
                                                    # GRADIR_LLVM_TOOLS=0 / 1 (runtime/llvm_tools.py)
    build/venv/bin/python bench/compile_time.py --llvm-levels --workloads lenet64,mlp64,gemm512
                                                    # LLVM O3 vs O2: compile and run time
    build/venv/bin/python bench/compile_time.py --llvm-passes --workloads lenet64,mlp64,gemm512
                                                    # the tools path's opt pipelines: gradir's
                                                    # (llvm_tools.PIPELINE, for OpenMP modules)
                                                    # vs LLVM's default<O2> (the others)
    build/venv/bin/python bench/compile_time.py --workloads resnet_step --parallel-compile
                                                    # a real model's step (needs torch), with
                                                    # the compile-in-parts rows (below)
    build/venv/bin/python bench/compile_time.py --json bench/results/compile_time.json
                                                    # any mode: the tables also as JSON, with
                                                    # their provenance (bench/_results.py)

Workloads (float32): lenet64, one LeNet-5 gradient step at batch 64
(bench/lenet.py: loss and the ten parameter gradients); mlp64, one step of
the 784-512-512-10 MLP of examples/mlp.py at batch 64 (loss, logits, six
gradients); these two are the default.  resnet_step (only when asked for,
needs torch): bench/cnn.py's ResNet gradient step (batch 32 of 3x32x32,
BatchNorm in training mode, 6 convolutions, 19 parameters), a real model
of 2.5x the LeNet step's estimated compile work (partition._weight: 373
against 148), at the size where compiling in parts (runtime/partition.py)
sends each part's LLVM to the tool binaries (runtime/llvm_tools.py;
partition.TOOLS_MIN_BLOCKS: the parts of the whole module at 1 and 2
threads and of @main_adjoint alone at 2 threads are above it, those of
@main_adjoint at 1 thread just below).  The parent imports it from PyTorch
once (torch.export -> rlx, not timed) and the children parse that text as
they parse LeNet's; there is no JAX version of the model in bench/, so its
rows have gradir's and PyTorch eager's numbers only (no JAX row or ratio).

Every measurement is a fresh Python process; a round runs every row once,
interleaved, and the table shows medians over the rounds.  Rows:

  gradir cold      GRADIR_CACHE=0, ``gradir.compile(module)`` (every public
                   function: @main and @main_adjoint)
  gradir cold EE / gradir cold tools  (--llvm-tools) as gradir cold, with
                   GRADIR_LLVM_TOOLS=0 (always ExecutionEngine) / 1 (always
                   runtime/llvm_tools.py: loop nests outlined, opt | llc processes
                   per partition, GRADIR_LLVM_JOBS at once, linked and loaded);
                   gradir cold itself runs the default, "auto" (tools for large modules)
  gradir cold whole / gradir cold parts EE  (--parallel-compile) as gradir cold,
                   with GRADIR_PARALLEL_COMPILE=0 (the whole module, never cut in
                   parts) / GRADIR_LLVM_TOOLS=0 (the parts' LLVM by ExecutionEngine,
                   what "auto" did for large programs before their parts went
                   through the tools; a program not cut: the whole module by
                   ExecutionEngine)
  gradir cold adj  GRADIR_CACHE=0, ``compile(module, functions=["main_adjoint"])``
                   (the step only, what ``jax.jit(jax.value_and_grad(f))`` compiles)
  gradir adj loaded  as gradir cold adj, with MLIR's and LLVM's shared
                   libraries loaded in "import" (``import mlir.ir``: ~50-100 ms,
                   which gradir otherwise pays on its first parse), as ``import
                   jax`` loads XLA's; JAX's first call also starts after its
                   CPU client is made (the inputs' ``jnp.asarray``)
  gradir adj Nthr  as gradir cold adj, for N threads (the cores this process may
                   use: gradir's default outside this benchmark, which sets
                   OMP_NUM_THREADS=1 for every process and so makes the other
                   gradir rows compile single-threaded code)
  gradir sched adj / gradir sched Nthr  as gradir cold adj / adj Nthr, with
                   GRADIR_KERNELS=0 (``kernels=False``: every 2-D matmul a register-
                   tiled loop nest of its own, compiled with the program; by default
                   they call gradir's matmul kernel library, built once per machine,
                   runtime/kernels.py)
  gradir miss      the compile cache on (the default) and empty: cold, plus
                   writing the entry (object dump; the link runs in a thread)
  gradir warm      the compile cache on, in a directory a previous (unmeasured)
                   process filled: a second process loads the library, LLVM is not run
  jax              ``jax.jit(jax.value_and_grad(loss))`` traced, compiled by XLA and run
  torch eager      PyTorch's first eager forward + autograd step (nothing to compile)

"first call" is measured inside the process from just before parsing (JAX:
before ``jax.jit``) to the first result, so imports are not in it; "import"
is the import of gradir (JAX: jax, torch: torch) and "process" the wall time
of the whole process as the parent sees it (interpreter start, imports,
first call, exit); "compile cpu" (gradir rows) the CPU time of the compile:
the process's threads and the tool processes it waited for (opt, llc, cc),
steadier than the wall time on a loaded machine; "jax imp+1st/this"
compares import + first call (JAX loads XLA at import, gradir loads MLIR on
its first call).  Ratios are
peer / gradir (>1: gradir is faster).  The
header names the CPU, its vector ISA and the load average before and after.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

T_START = time.perf_counter()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, HERE)

import _cli  # noqa: E402  bench/_cli.py: --help, unknown options
import _results  # noqa: E402  bench/_results.py: --json, the results' provenance

WORKLOADS = ("lenet64", "mlp64")
JAX_WORKLOADS = ("lenet", "mlp")        # the workloads (prefixes) JAX has a version of
MLP_SIZES = [784, 512, 512, 10]
RESNET_BATCH = 32                        # bench/cnn.py's default


def export_resnet(directory: str) -> None:
    """bench/cnn.py's ResNet imported from PyTorch (the forward, before
    rlx-gradient) as ``resnet_step.mlir`` in ``directory``, with its inputs
    and parameters in ``resnet_step.npz`` (the children need no torch)."""
    import numpy as np
    import torch

    import cnn
    from gradir.frontends.torch import import_module
    model = cnn.build_model(torch)
    x = torch.randn(RESNET_BATCH, 3, 32, 32)
    y = torch.randint(0, 10, (RESNET_BATCH,))
    module = import_module(model, (x, y))
    with open(os.path.join(directory, "resnet_step.mlir"), "w") as f:
        f.write(str(module))
    np.savez(os.path.join(directory, "resnet_step.npz"), x.numpy(), y.numpy(),
             *[p.detach().numpy() for p in model.parameters()])


def _resnet_file(ext: str) -> str:
    return os.path.join(os.environ["BENCH_RESNET_DIR"], "resnet_step." + ext)


# --- the children -------------------------------------------------------------------

def _inputs(workload: str):
    import numpy as np
    if workload == "resnet_step":
        data = np.load(_resnet_file("npz"))
        arrays = [data[f"arr_{i}"] for i in range(len(data.files))]
        return arrays[0], arrays[1], arrays[2:]
    if workload.startswith("lenet"):
        from lenet import lenet_inputs
        x, y, params = lenet_inputs(int(workload[5:]))
        return x, y, params
    from mlp import init_params
    batch = int(workload[3:])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, MLP_SIZES[0])).astype(np.float32)
    y = rng.integers(0, MLP_SIZES[-1], batch).astype(np.int64)
    return x, y, init_params(MLP_SIZES)


def _gradir_module(workload: str, times: dict):
    import gradir
    t0 = time.perf_counter()
    if workload == "resnet_step":
        with open(_resnet_file("mlir")) as f:
            m = gradir.parse(f.read())
        n_params = len(_inputs(workload)[2])
        wrt = ",".join(str(i) for i in range(2, 2 + n_params))
    elif workload.startswith("lenet"):
        from lenet import SHAPES, lenet_text
        m = gradir.parse(lenet_text(int(workload[5:])))
        wrt = ",".join(str(i) for i in range(2, 2 + len(SHAPES)))
    else:
        from mlp import build_mlp
        m = build_mlp(int(workload[3:]), MLP_SIZES)
        wrt = ",".join(str(i) for i in range(2, 2 + 2 * (len(MLP_SIZES) - 1)))
    t1 = time.perf_counter()
    gradir.run_pipeline(m, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    t2 = time.perf_counter()
    times.update(parse=t1 - t0, gradient=t2 - t1)
    return m, t0


def child_gradir(workload: str, functions, loaded: bool = False) -> dict:
    t_imp = time.perf_counter()
    import gradir
    from gradir.runtime import cache
    if loaded:      # MLIR's and LLVM's libraries, as ``import jax`` loads XLA's
        import mlir.ir  # noqa: F401
        import gradir.ir  # noqa: F401
    times = {"import": time.perf_counter() - t_imp}
    x, y, params = _inputs(workload)
    m, t0 = _gradir_module(workload, times)
    t2, c2 = time.perf_counter(), _cpu_s()
    exe = gradir.compile(m, functions=functions, cpu=os.environ.get("BENCH_GRADIR_CPU", "host"))
    t3, c3 = time.perf_counter(), _cpu_s()
    exe["main_adjoint"](x, y, *params)
    t4 = time.perf_counter()
    cache.wait()
    times.update(compile=t3 - t2, compile_cpu=c3 - c2, run=t4 - t3, first_call=t4 - t0,
                 cache_hit=exe.cache_hit)
    return times


def _cpu_s() -> float:
    """CPU seconds of this process's threads and of the children it waited
    for (the LLVM tools, the C compiler)."""
    import resource
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def child_jax(workload: str) -> dict:
    t_imp = time.perf_counter()
    import jax
    import jax.numpy as jnp
    times = {"import": time.perf_counter() - t_imp}
    x, y, params = _inputs(workload)
    x, y, params = jnp.asarray(x), jnp.asarray(y), [jnp.asarray(p) for p in params]
    jax.block_until_ready((x, y, params))
    t0 = time.perf_counter()
    if workload.startswith("lenet"):
        from lenet import jax_step
        step = jax_step(jax)
    else:
        def loss_fn(ps, xx, yy):
            h = xx
            for i in range(len(ps) // 2):
                h = h @ ps[2 * i] + ps[2 * i + 1]
                if 2 * i + 2 < len(ps):
                    h = jax.nn.relu(h)
            logp = jax.nn.log_softmax(h, -1)
            return -jnp.mean(jnp.take_along_axis(logp, yy[:, None], 1)), h
        step = jax.jit(jax.value_and_grad(loss_fn, has_aux=True))
    jax.block_until_ready(step(params, x, y))
    times["first_call"] = time.perf_counter() - t0
    return times


def child_torch(workload: str) -> dict:
    t_imp = time.perf_counter()
    import torch
    times = {"import": time.perf_counter() - t_imp}
    torch.set_num_threads(1)
    x, y, params = _inputs(workload)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    tp = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    t0 = time.perf_counter()
    if workload == "resnet_step":
        import cnn
        model = cnn.build_model(torch)
        with torch.no_grad():
            for p, value in zip(model.parameters(), params):
                p.copy_(torch.from_numpy(value))
        torch.autograd.grad(model(tx, ty), list(model.parameters()))
    elif workload.startswith("lenet"):
        from lenet import torch_step
        torch_step(torch)(tx, ty, tp)
    else:
        h = tx
        for i in range(len(tp) // 2):
            h = h @ tp[2 * i] + tp[2 * i + 1]
            if 2 * i + 2 < len(tp):
                h = torch.relu(h)
        loss = torch.nn.functional.nll_loss(torch.log_softmax(h, -1), ty)
        torch.autograd.grad(loss, tp)
    times["first_call"] = time.perf_counter() - t0
    return times


# --- the stage-by-stage profile of gradir's first call ----------------------------------

def child_breakdown(workload: str) -> dict:
    """gradir's first call with every stage timed separately (jit.lower's
    steps, run one by one; the MLIR pipeline cut in three groups; LLVM's
    IR optimization and code generation are ExecutionEngine's construction
    and its first lookup)."""
    t_imp = time.perf_counter()
    import gradir
    from mlir import ir

    from gradir import _compat
    from gradir.autodiff import simplify as simplify_mod
    from gradir.conversion.cpu import pipeline as cpu
    from gradir.conversion.cpu.codegen import set_llvm_target
    from gradir.conversion.cpu.host import resolve
    from gradir.conversion.cpu.schedule import schedule_params, schedule_path
    from gradir.ir import as_operation, make_context, print_module
    from gradir.passes.pipeline import build_pass_manager
    from gradir.runtime.abi import Function
    from gradir.runtime.signature import public_functions, signature_of
    from gradir.runtime.toolchain import llvm_opt_level, packed_caller, runtime_libraries
    import gradir.transforms.rlx_gradient as rlx_gradient
    stages = {"import gradir (+ mlir, passes)": time.perf_counter() - t_imp}

    inner = {"simplify": 0.0}
    original = simplify_mod.simplify_function

    def timed_simplify(*args, **kwargs):
        t = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            inner["simplify"] += time.perf_counter() - t
    rlx_gradient.simplify_function = timed_simplify

    x, y, params = _inputs(workload)
    times: dict = {}
    m, _ = _gradir_module(workload, times)
    stages["parse (incl. context + dialects)"] = times["parse"]
    stages["rlx-gradient"] = times["gradient"]
    stages["  of which simplification"] = inner["simplify"]

    cpu_s: dict = {}    # this process's CPU time per stage: on a loaded machine
                        # the wall time stretches, the CPU time does not

    def timed(name, fn):
        t, c = time.perf_counter(), time.process_time()
        result = fn()
        stages[name] = time.perf_counter() - t
        cpu_s[name] = time.process_time() - c
        return result

    def copy():
        with make_context():
            c = ir.Module.parse(print_module(as_operation(m), debug_info=True, segments=True))
            for fn in public_functions(c.operation):
                if signature_of(fn).name != "main_adjoint":
                    fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        return c
    c = timed("print + parse the copy to lower", copy)
    ctx = c.context
    target = resolve("host")
    with ctx:
        timed("rlx-to-linalg (first use imports it)", lambda: build_pass_manager(
            f"builtin.module({cpu.RLX_TO_LINALG})", ctx).run(c.operation))
        timed("preload transform schedule", lambda: cpu.preload_schedule(
            ctx, schedule_path(schedule_params(target))))
        steps = _split(cpu.linalg_to_llvm_pipeline(3, preload=False, cpu=target))
        groups = [("MLIR: inline, canonicalize, cse, schedule, fusion", "eliminate-empty-tensors"),
                  ("MLIR: bufferize, out-params, deallocation", "func.func(convert-linalg-to-loops"),
                  ("MLIR: loops and vectors to the LLVM dialect", None)]
        def run_unverified(group):      # as lower_to_llvm: the result is verified once
            pm = build_pass_manager("builtin.module(" + ",".join(group) + ")", ctx)
            pm.enable_verifier(False)
            pm.run(c.operation)

        for name, stop in groups:
            end = next((i for i, s in enumerate(steps) if stop and s.startswith(stop)), len(steps))
            group, steps = steps[:end], steps[end:]
            timed(name, lambda g=group: run_unverified(g))
        timed("MLIR: verify the result", lambda: c.operation.verify())
        set_llvm_target(c.operation, target)
        level = llvm_opt_level(3)
        libs = [str(p) for p in runtime_libraries("cpu")]
        engine = timed(f"LLVM: translate + optimize (O{level})", lambda: _compat.execution_engine(
            c, level, libs, pic=True))
        ptr = timed("LLVM: code generation (first lookup)",
                    lambda: engine.raw_lookup("_mlir_ciface_main_adjoint"))
        sig = next(signature_of(f) for f in public_functions(as_operation(m))
                   if signature_of(f).name == "main_adjoint")
        fn = Function(sig, packed_caller(ptr), keepalive=engine)
        timed("first run", lambda: fn(x, y, *params))
    return {"wall": stages, "cpu": cpu_s}


def child_timeline(workload: str, threads: int, warm: bool) -> dict:
    """One compile of @main_adjoint on the default path (runtime/partition.py
    when the step is cut), with a stamp at each stage of each thread: the
    split, each part's context, its Python passes (GIL held), its upstream
    pass groups (GIL released), ExecutionEngine (LLVM's optimization) and
    the first lookup (code generation), or the part's LLVM IR, its ``opt |
    llc`` processes and the link of all parts.  ``warm``: after a first compile of
    the same program (imports and LLVM's start-up done)."""
    import threading
    import gradir
    from gradir import _compat
    from gradir.conversion.cpu import pipeline as cpu
    from gradir.passes import pipeline as passes
    from gradir.runtime import partition
    events = []
    t0 = [time.perf_counter()]

    def stamp(tag):
        events.append((time.perf_counter() - t0[0], threading.current_thread().name, tag,
                       time.thread_time()))

    def wrap(owner, name, tag):
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            stamp("> " + tag)
            try:
                return inner(*args, **kwargs)
            finally:
                stamp("< " + tag)
        setattr(owner, name, timed)

    wrap(partition, "_split_copy", "split")
    wrap(_compat, "raw_context", "context (C API, no GIL)")
    wrap(_compat, "warm_up_llvm_targets_released", "LLVM native target")
    wrap(_compat, "parse_module_released", "parse (no GIL)")
    wrap(cpu, "preload_schedule", "schedule")
    build = passes.build_pass_manager

    class Timed:
        def __init__(self, pm, text):
            self.pm, self.text = pm, text

        def run(self, op):
            stamp("> python " + self.text)
            try:
                self.pm.run(op)
            finally:
                stamp("< python " + self.text)

        def __getattr__(self, name):
            return getattr(self.pm, name)

    def timed_build(text, *args, **kwargs):
        pm = build(text, *args, **kwargs)
        body = text[len("builtin.module("):-1]
        return Timed(pm, body[:48]) if any(
            e.has_gradir_pass() for e in passes.parse_pipeline(text)) else pm

    passes.build_pass_manager = timed_build
    released = _compat.run_pass_manager_released

    def unwrap(pm, op, *args):
        return released(pm.pm if isinstance(pm, Timed) else pm, op, *args)
    _compat.run_pass_manager_released = unwrap
    wrap(_compat, "run_pass_manager_released", "upstream passes (released)")
    engine_init = _compat.ReleasedEngine.__init__

    def timed_engine(self, *args, **kwargs):
        stamp("> LLVM: translate + optimize")
        engine_init(self, *args, **kwargs)
        stamp("< LLVM: translate + optimize")
    _compat.ReleasedEngine.__init__ = timed_engine
    lookup = _compat.ReleasedEngine.raw_lookup

    def timed_lookup(self, name):
        stamp("> LLVM: code generation")
        try:
            return lookup(self, name)
        finally:
            stamp("< LLVM: code generation")
    _compat.ReleasedEngine.raw_lookup = timed_lookup
    from gradir.runtime import llvm_tools
    part_module = llvm_tools.PartModule.__init__

    def timed_part_module(self, *args):
        stamp("> LLVM IR (translate, no GIL)")
        part_module(self, *args)
        stamp(f"< LLVM IR (translate, no GIL): {self.blocks} blocks")
    llvm_tools.PartModule.__init__ = timed_part_module
    wrap(llvm_tools, "part_object", "LLVM tools: opt | llc")
    wrap(partition, "_link", "link the parts and the glue (cc)")
    if warm:
        m, _ = _gradir_module(workload, {})
        gradir.compile(m, functions=["main_adjoint"], cache=False, threads=threads)
    m, _ = _gradir_module(workload, {})
    events.clear()
    t0[0] = time.perf_counter()
    exe = gradir.compile(m, functions=["main_adjoint"], cache=False, threads=threads)
    stamp("done")
    return {"events": events, "split": hasattr(exe, "_plans"),
            "fallback": partition.last_error}


def _split(pipeline: str) -> list[str]:
    from gradir.conversion.cpu.pipeline import top_level_elements
    return top_level_elements(pipeline)


def _timed_program(workload: str):
    """(module, function, arguments) of a workload whose compile and run
    time the LLVM comparisons measure (gemmN: bench/cpu.py's GEMM alone)."""
    import numpy as np
    if workload.startswith("gemm"):
        from cpu import gemm_module
        n = int(workload[4:])
        rng = np.random.default_rng(0)
        return gemm_module(n), "main", [rng.standard_normal((n, n)).astype(np.float32)
                                        for _ in range(2)]
    x, y, params = _inputs(workload)
    m, _ = _gradir_module(workload, {})
    return m, "main_adjoint", [x, y, *params]


# --- LLVM O3 against O2 ------------------------------------------------------------------

def child_llvm_levels(workload: str, rounds: int) -> dict:
    import numpy as np
    import gradir
    from gradir.runtime import jit
    m, fn_name, args = _timed_program(workload)
    out = {}
    results = {}
    for _ in range(rounds):
        for level in (3, 2):
            jit.llvm_opt_level = lambda opt_level, _l=level: _l
            t = time.perf_counter()
            exe = gradir.compile(m, functions=[fn_name], cache=False)
            compile_s = time.perf_counter() - t
            step = exe[fn_name]
            results[level] = step(*args)
            if not isinstance(results[level], tuple):
                results[level] = (results[level],)
            runs = []
            for _ in range(25):
                t = time.perf_counter()
                step(*args)
                runs.append(time.perf_counter() - t)
            out.setdefault(f"O{level} compile", []).append(compile_s)
            out.setdefault(f"O{level} run", []).append(statistics.median(runs[5:]))
    same = all(np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(results[3], results[2]))
    return {k: statistics.median(v) for k, v in out.items()} | {"same results": same}


# --- gradir's opt pipeline against LLVM's default<O2> (the tools path) ----------------------

def child_llvm_passes(workload: str, rounds: int, threads: int) -> dict:
    """The tools path (GRADIR_LLVM_TOOLS=1) with llvm_tools.PIPELINE (what
    gradir runs on modules with OpenMP regions) and with default<O2> (what
    it runs on the others), both forced through GRADIR_LLVM_PASSES, code for
    ``threads`` threads: compile
    wall and CPU time (this process and its opt/llc children), run time
    (median of 25), results compared."""
    import resource
    import numpy as np
    import gradir
    os.environ["GRADIR_LLVM_TOOLS"] = "1"
    m, fn_name, args = _timed_program(workload)

    def cpu_s():
        a = resource.getrusage(resource.RUSAGE_SELF)
        b = resource.getrusage(resource.RUSAGE_CHILDREN)
        return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
    out, results = {}, {}
    gradir.compile(m, functions=[fn_name], cache=False, threads=threads)  # first-use set-up: not timed
    for _ in range(rounds):
        from gradir.runtime.llvm_tools import PIPELINE
        for name, passes in (("gradir", PIPELINE), ("O2", "default<O2>")):
            os.environ["GRADIR_LLVM_PASSES"] = passes
            t, c = time.perf_counter(), cpu_s()
            exe = gradir.compile(m, functions=[fn_name], cache=False, threads=threads)
            out.setdefault(f"{name} compile", []).append(time.perf_counter() - t)
            out.setdefault(f"{name} cpu", []).append(cpu_s() - c)
            step = exe[fn_name]
            res = step(*args)
            results[name] = res if isinstance(res, tuple) else (res,)
            runs = []
            for _ in range(25):
                t = time.perf_counter()
                step(*args)
                runs.append(time.perf_counter() - t)
            out.setdefault(f"{name} run", []).append(statistics.median(runs[5:]))
    same = all(np.allclose(a, b, rtol=1e-4, atol=1e-5)
               for a, b in zip(results["gradir"], results["O2"]))
    return {k: statistics.median(v) for k, v in out.items()} | {"same results": same}


# --- the parent ------------------------------------------------------------------------------

def _run_child(args: list[str], env: dict) -> tuple[dict, float]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *args],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{proc.stdout}\n{proc.stderr[-3000:]}")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):]), wall


def _env(cache_dir: str | None) -> dict:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    env["OMP_NUM_THREADS"] = "1"
    if cache_dir is None:
        env["GRADIR_CACHE"] = "0"
    else:
        env["GRADIR_CACHE"] = "1"
        env["GRADIR_CACHE_DIR"] = cache_dir
    return env


def _have(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def header() -> str:
    import platform
    from gradir.conversion.cpu.host import detect_host
    host = detect_host()
    return (f"# {host.model or platform.machine()}, {os.cpu_count()} cores, vector ISA "
            f"{host.isa} ({host.vector_bits}-bit); python {platform.python_version()}; "
            f"load average {os.getloadavg()[0]:.2f}")


def main(argv: list[str]) -> int:
    if "--child" not in argv:       # (the children's arguments are this script's own)
        _cli.check(argv, __doc__, flags=("--breakdown", "--timeline", "--warm", "--llvm-levels",
                                         "--llvm-passes", "--llvm-tools", "--parallel-compile"),
                   valued=("--rounds", "--cpu", "--workloads", "--threads", "--json"))
    if "--child" in argv:
        kind, workload = argv[argv.index("--child") + 1:argv.index("--child") + 3]
        if kind == "gradir":
            result = child_gradir(workload, None)
        elif kind == "gradir-adjoint":
            result = child_gradir(workload, ["main_adjoint"])
        elif kind == "gradir-adjoint-loaded":
            result = child_gradir(workload, ["main_adjoint"], loaded=True)
        elif kind == "gradir-adjoint-cores":    # gradir's default outside this bench
            os.environ["GRADIR_NUM_THREADS"] = str(_cores())
            result = child_gradir(workload, ["main_adjoint"])
        elif kind in ("gradir-tools", "gradir-ee"):      # issue 14: runtime/llvm_tools.py
            os.environ["GRADIR_LLVM_TOOLS"] = "1" if kind == "gradir-tools" else "0"
            os.environ["GRADIR_PARALLEL_COMPILE"] = "0"     # the whole module, both rows
            result = child_gradir(workload, None)
        elif kind == "gradir-whole":        # issue 14: never cut in parts (partition.py)
            os.environ["GRADIR_PARALLEL_COMPILE"] = "0"
            result = child_gradir(workload, None)
        elif kind == "gradir-parts-ee":     # the parts' LLVM by ExecutionEngine
            os.environ["GRADIR_LLVM_TOOLS"] = "0"
            result = child_gradir(workload, None)
        elif kind == "export":
            export_resnet(argv[argv.index("--child") + 3])
            result = {}
        elif kind == "jax":
            result = child_jax(workload)
        elif kind == "torch":
            result = child_torch(workload)
        elif kind == "breakdown":
            result = child_breakdown(workload)
        elif kind == "timeline":
            result = child_timeline(workload, int(argv[argv.index("--child") + 3]),
                                    argv[argv.index("--child") + 4] == "warm")
        elif kind == "passes":
            result = child_llvm_passes(workload, *map(int, argv[argv.index("--child") + 3:
                                                                    argv.index("--child") + 5]))
        else:
            result = child_llvm_levels(workload, int(argv[argv.index("--child") + 3]))
        print("RESULT " + json.dumps(result))
        return 0
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    if _cli.fresh_bytecode():   # (edits since cmake: not the first call's to compile them)
        print("# byte-compiled gradir's modules edited since the last cmake")
    if "--cpu" in argv:     # gradir compiles for this CPU (x86-64-v3: AVX2 code); JAX for the host
        os.environ["BENCH_GRADIR_CPU"] = argv[argv.index("--cpu") + 1]
    workloads = (argv[argv.index("--workloads") + 1].split(",") if "--workloads" in argv
                 else list(WORKLOADS))
    print(header() + " at the start" + (f"; gradir compiles for cpu={os.environ['BENCH_GRADIR_CPU']}"
                                        if "BENCH_GRADIR_CPU" in os.environ else ""))
    if "resnet_step" in workloads:      # imported from PyTorch once, by a child
        if not _have("torch"):
            print("# resnet_step left out: bench/cnn.py's model is imported from PyTorch "
                  "(pip install torch)")
            workloads.remove("resnet_step")
        else:
            os.environ["BENCH_RESNET_DIR"] = tempfile.mkdtemp(prefix="gradir-bench-resnet-")
            import atexit
            import shutil
            atexit.register(shutil.rmtree, os.environ["BENCH_RESNET_DIR"], ignore_errors=True)
            _run_child(["export", "resnet_step", os.environ["BENCH_RESNET_DIR"]], _env(None))
    json_path = _results.json_option(argv)
    notes = [header()[2:].split("; load average")[0] + "."]
    if "BENCH_GRADIR_CPU" in os.environ:
        notes.append(f"gradir compiles for cpu={os.environ['BENCH_GRADIR_CPU']} (JAX for the host).")

    def save(name: str, tables: list[dict], more=()):
        if json_path:
            _results.save_results(json_path, name, tables, notes + list(more))
    if "--breakdown" in argv:
        tables = []
        for wl in workloads:
            r, wall = _run_child(["breakdown", wl], _env(None))
            stages, cpu = r["wall"], r["cpu"]
            print(f"\n{wl}: gradir's first call of @main_adjoint, stage by stage (fresh process)")
            print(f"  {'':<52}{'wall':>12}{'cpu':>10}")
            total = total_cpu = 0.0
            for name, s in stages.items():
                if s is None:
                    continue
                c = f"{cpu[name] * 1e3:>7.0f} ms" if name in cpu else f"{'-':>10}"
                print(f"  {name:<52}{s * 1e3:>9.0f} ms{c}")
                total += 0 if name.startswith("  ") else s
                total_cpu += cpu.get(name, 0.0)
            print(f"  {'sum':<52}{total * 1e3:>9.0f} ms   (process wall {wall:.2f} s; "
                  f"timed stages' cpu {total_cpu * 1e3:.0f} ms)")
            tables.append({
                "title": f"{wl}: gradir's first call of @main_adjoint, stage by stage "
                         f"(fresh process, wall {wall:.2f} s)",
                "columns": ["stage", "wall ms", "cpu ms"], "formats": [None, ".0f", ".0f"],
                "rows": [[name.strip() if not name.startswith("  ") else "(" + name.strip() + ")",
                          s_ * 1e3, cpu[name] * 1e3 if name in cpu else None]
                         for name, s_ in stages.items() if s_ is not None]
                + [["sum", total * 1e3, total_cpu * 1e3]]})
        print(header() + " at the end")
        save("compile_time-breakdown", tables)
        return 0
    if "--timeline" in argv:
        threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 1
        warm = "warm" if "--warm" in argv else "cold"
        tables = []
        for wl in workloads:
            r, wall = _run_child(["timeline", wl, str(threads), warm], _env(None))
            print(f"\n{wl}: {warm} compile of @main_adjoint at {threads} thread(s), "
                  f"{'split' if r['split'] else 'whole'}"
                  + (f" (fell back: {r['fallback']})" if r["fallback"] else "")
                  + "; ms since the compile began, per thread; on a '<' line, the CPU "
                    "ms this thread spent since its previous stamp (less than the wall time "
                    "between them where it waited, for the GIL or a core)")
            names, last = {}, {}
            events = []
            for t, thread, tag, cpu in r["events"]:
                who = names.setdefault(thread, "main" if thread == "MainThread"
                                       else f"part worker {len(names)}")
                spent = (f"{(cpu - last[thread]) * 1e3:7.1f} cpu" if thread in last
                         and tag.startswith("<") else " " * 11)
                events.append([t * 1e3, (cpu - last[thread]) * 1e3 if spent.strip() else None,
                               who, tag])
                last[thread] = cpu
                print(f"  {t * 1e3:8.1f}  {spent}  {who:<14} {tag}")
            tables.append({
                "title": f"{wl}: {warm} compile of @main_adjoint at {threads} thread(s), "
                         f"{'split' if r['split'] else 'whole'}"
                         + (f" (fell back: {r['fallback']})" if r["fallback"] else ""),
                "columns": ["ms", "cpu ms since the thread's previous stamp", "thread", "stage"],
                "formats": [".1f", ".1f", None, None], "rows": events})
        print(header() + " at the end")
        save("compile_time-timeline", tables)
        return 0
    if "--llvm-levels" in argv:
        print(f"\n{'workload':<10}{'O3 compile s':>14}{'O2 compile s':>14}{'O3 run ms':>11}"
              f"{'O2 run ms':>11}  same results")
        table = []
        for wl in workloads:
            r, _ = _run_child(["levels", wl, str(rounds)], _env(None))
            print(f"{wl:<10}{r['O3 compile']:>14.2f}{r['O2 compile']:>14.2f}"
                  f"{r['O3 run'] * 1e3:>11.2f}{r['O2 run'] * 1e3:>11.2f}  {r['same results']}")
            table.append([wl, r["O3 compile"], r["O2 compile"], r["O3 run"] * 1e3,
                          r["O2 run"] * 1e3, r["same results"]])
        print(header() + " at the end")
        save("compile_time-llvm-levels", [{
            "title": f"LLVM O3 against O2: compile and run time, medians of {rounds}",
            "columns": ["workload", "O3 compile s", "O2 compile s", "O3 run ms", "O2 run ms",
                        "same results"],
            "formats": [None, ".2f", ".2f", ".2f", ".2f", None], "rows": table}])
        return 0

    if "--llvm-passes" in argv:
        print("\nthe LLVM tools path (GRADIR_LLVM_TOOLS=1): opt with gradir's pipeline "
              "(llvm_tools.PIPELINE) or LLVM's default<O2>; compile wall / CPU (opt, llc "
              f"included) in s, run in ms; medians of {rounds}")
        print(f"{'workload':<10}{'threads':>8}{'gradir compile':>15}{'O2 compile':>11}"
              f"{'gradir cpu':>11}{'O2 cpu':>8}{'gradir run':>11}{'O2 run':>8}  same results")
        table = []
        for wl, th in ((wl, th) for wl in workloads for th in (1, 2)):
            r, _ = _run_child(["passes", wl, str(rounds), str(th)], _env(None))
            print(f"{wl:<10}{th:>8}{r['gradir compile']:>15.2f}{r['O2 compile']:>11.2f}"
                  f"{r['gradir cpu']:>11.2f}{r['O2 cpu']:>8.2f}{r['gradir run'] * 1e3:>11.3f}"
                  f"{r['O2 run'] * 1e3:>8.3f}  {r['same results']}")
            table.append([wl, th, r["gradir compile"], r["O2 compile"], r["gradir cpu"],
                          r["O2 cpu"], r["gradir run"] * 1e3, r["O2 run"] * 1e3,
                          r["same results"]])
        print(header() + " at the end")
        save("compile_time-llvm-passes", [{
            "title": "the LLVM tools path (GRADIR_LLVM_TOOLS=1): opt with gradir's pipeline or "
                     f"LLVM's default<O2>; medians of {rounds}",
            "columns": ["workload", "threads", "gradir compile s", "O2 compile s",
                        "gradir cpu s", "O2 cpu s", "gradir run ms", "O2 run ms",
                        "same results"],
            "formats": [None, None, ".2f", ".2f", ".2f", ".2f", ".3f", ".3f", None],
            "rows": table}])
        return 0

    rows = [("gradir cold", "gradir", False), ("gradir cold adj", "gradir-adjoint", False),
            ("gradir adj loaded", "gradir-adjoint-loaded", False),
            ("gradir miss", "gradir", "miss"), ("gradir warm", "gradir", True)]
    if _cores() > 1:
        rows.insert(3, (f"gradir adj {_cores()}thr", "gradir-adjoint-cores", False))
    # issue 14: 2-D matmuls compiled with the program (kernels=False)
    at = 4 if _cores() > 1 else 3
    rows[at:at] = [("gradir sched adj", "gradir-adjoint", False, {"GRADIR_KERNELS": "0"})]
    if _cores() > 1:
        rows.insert(at + 1, (f"gradir sched {_cores()}thr", "gradir-adjoint-cores", False,
                             {"GRADIR_KERNELS": "0"}))
    if "--llvm-tools" in argv:
        rows[1:1] = [("gradir cold EE", "gradir-ee", False),
                     ("gradir cold tools", "gradir-tools", False)]
    if "--parallel-compile" in argv:
        rows[1:1] = [("gradir cold whole", "gradir-whole", False),
                     ("gradir cold parts EE", "gradir-parts-ee", False)]
    if _have("jax"):
        rows.append(("jax", "jax", False))
    if _have("torch"):
        rows.append(("torch eager", "torch", False))
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="gradir-bench-cache-") as cache_dir:
        for wl in workloads:            # fill the cache (unmeasured)
            _run_child(["gradir", wl], _env(cache_dir))
        for _ in range(rounds):
            for wl in workloads:
                for name, kind, warm, *extra in rows:
                    if kind == "jax" and not wl.startswith(JAX_WORKLOADS):
                        continue        # (no JAX version of the model)
                    where = (tempfile.mkdtemp(dir=cache_dir) if warm == "miss" else
                             cache_dir if warm else None)
                    r, wall = _run_child([kind, wl], {**_env(where), **(extra[0] if extra else {})})
                    if warm is True and r.get("cache_hit") is not True:
                        raise RuntimeError(f"{wl}: the warm process missed the cache")
                    r["process"] = wall
                    results.setdefault((wl, name), []).append(r)
    print(f"\nfirst call = parse + gradient + compile + first run (JAX: jit + trace + XLA "
          f"compile + run), seconds, median of {rounds} fresh processes each")
    width = max(17, max(len(name) for name, *_ in rows))
    wl_width = max(9, max(len(wl) for wl in workloads) + 1)
    print(f"{'workload':<{wl_width}}{'row':<{width}}{'first call':>11}{'compile':>9}{'import':>8}"
          f"{'process':>9}{'jax/this':>10}{'jax imp+1st/this':>18}{'jax proc/this proc':>20}"
          f"{'compile cpu':>13}")
    table = []
    for wl in workloads:
        med = {name: {k: statistics.median(r[k] for r in results[(wl, name)])
                      for k in results[(wl, name)][0] if k != "cache_hit"}
               for name, *_ in rows if (wl, name) in results}
        jax = med.get("jax")
        for name, *_ in rows:
            if name not in med:
                continue
            r = med[name]
            ratio = f"{jax['first_call'] / r['first_call']:>10.2f}" if jax else f"{'-':>10}"
            both = (f"{(jax['import'] + jax['first_call']) / (r['import'] + r['first_call']):>18.2f}"
                    if jax else f"{'-':>18}")
            pratio = f"{jax['process'] / r['process']:>20.2f}" if jax else f"{'-':>20}"
            comp = f"{r['compile']:>9.2f}" if "compile" in r else f"{'-':>9}"
            ccpu = f"{r['compile_cpu']:>13.2f}" if "compile_cpu" in r else f"{'-':>13}"
            print(f"{wl:<{wl_width}}{name:<{width}}{r['first_call']:>11.2f}{comp}{r['import']:>8.2f}"
                  f"{r['process']:>9.2f}{ratio}{both}{pratio}{ccpu}")
            table.append([wl, name, r["first_call"], r.get("compile"), r["import"],
                          r["process"],
                          jax["first_call"] / r["first_call"] if jax else None,
                          (jax["import"] + jax["first_call"]) / (r["import"] + r["first_call"])
                          if jax else None,
                          jax["process"] / r["process"] if jax else None,
                          r.get("compile_cpu")])
    print(header() + " at the end")
    save("compile_time", [{
        "title": "first call = parse + gradient + compile + first run (JAX: jit + trace + XLA "
                 f"compile + run), seconds, median of {rounds} fresh processes each",
        "columns": ["workload", "row", "first call s", "compile s", "import s", "process s",
                    "jax/this", "jax imp+1st/this", "jax proc/this proc", "compile cpu s"],
        "formats": [None, None, ".2f", ".2f", ".2f", ".2f", ".2f", ".2f", ".2f", ".2f"],
        "rows": table}], [
        "Every measurement is a fresh Python process; a round runs every row once, "
        "interleaved; OMP_NUM_THREADS=1 in every process but the \"Nthr\" rows'. Ratios "
        "are JAX's time / the row's (>1: the row is faster)."])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
