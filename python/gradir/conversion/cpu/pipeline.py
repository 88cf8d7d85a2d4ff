"""The CPU pipeline: rlx -> linalg -> bufferized loops/vectors -> LLVM.

``lower_to_llvm(module)`` runs ``rlx-to-linalg`` and then the upstream
pipeline ``LINALG_TO_LLVM`` (a textual pipeline, so ``gradir-opt`` and
``mlir-opt`` users can reproduce it: ``CPU_PIPELINE`` is the whole thing
for ``gradir-opt --pass-pipeline=...``).

ABI of the result (what the runtime relies on): every public function
``@f(inputs...) -> results...`` of the rlx module becomes
``@f(input memrefs..., output memrefs...)`` with no results, tuples
flattened depth-first (``gradir.original_type`` keeps the original
function type).  Memrefs have identity layouts; the caller allocates the
outputs (numpy arrays) and the function writes them.  Each public function
has ``llvm.emit_c_interface``: ``_mlir_ciface_f(ptr to input descriptor...,
ptr to output descriptor...)``.  Bool (i1) tensors are i8 memrefs holding 0
or 1, the layout of numpy ``bool`` arrays.  Intermediate buffers are freed
before the function returns; functions keep no state between calls.

The pipeline needs the MLIR context's dialect registry complete before a
pass manager runs it: ``convert-to-llvm`` extends the registry when a pass
manager holding it starts, which aborts inside a running pass manager (e.g.
``rlx-lower-to-llvm`` running ``lower_to_llvm`` from ``gradir-opt``), so
such callers run ``prepare_context`` first.
"""

from __future__ import annotations

from pathlib import Path

from mlir import ir
from mlir.passmanager import PassManager

__all__ = ["LINALG_TO_LLVM", "CPU_PIPELINE", "STAGES", "lower_to_llvm", "preload_schedule",
           "prepare_context", "linalg_to_llvm_pipeline", "SCHEDULE_LIBRARY"]

# The transform-dialect schedule (generalization before fusion; tiled, vectorized
# matmuls and transposes).
SCHEDULE_LIBRARY = Path(__file__).resolve().parent / "cpu_schedule.mlir"

_BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
              "function-boundary-type-conversion=identity-layout-map}")
_OUT_PARAMS = "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}"


STAGES = ("bufferized", "llvm")

# Float sums longer than 256 elements are blocked (pairwise-like accuracy).
RLX_TO_LINALG = "rlx-to-linalg{sum-block=256}"
# issue 14 (compile time): 2-D f32/f64 matmuls for gradir's kernel library
RLX_TO_LINALG_KERNELS = "rlx-to-linalg{sum-block=256 matmul-kernels=true pool-kernels=true}"
# issue 43: rlx-pool-indices (run before runtime/partition.py cuts a function)
# saves a max pool's arg-max positions as an rlx value, which the cut passes
# between the parts; here, a pool and its backward in one function go back
# to rlx-pool-kernels' pairing on buffers (byte positions: the ResNet stem
# pool's gradient 0.75 -> 0.70 ms)
RLX_POOL_INDICES = "rlx-pool-indices{undo=true}"

# The ops the schedule's matmul sequences match (after rlx-to-linalg).
_SCHEDULED_MATMULS = frozenset(("linalg.matmul", "linalg.batch_matmul"))


def _preload_step(schedule: str | Path | None) -> str:
    library = Path(schedule or SCHEDULE_LIBRARY)
    return f"transform-preload-library{{transform-library-paths={library}}}"


def preload_schedule(context: ir.Context, schedule: str | Path | None = None,
                     release_gil: bool = False) -> None:
    """Loads the transform-dialect schedule into ``context`` once.

    A context keeps its preloaded transform library: loading the same file
    again fails with "doubly defined symbol", which means it is there.
    ``release_gil``: parsed with the GIL released (a fresh context, see
    ``lower_to_llvm``)."""
    with context, ir.Location.unknown():
        scratch = ir.Module.create()
        if release_gil:
            from ... import _compat
            pm = PassManager.parse(f"builtin.module({_preload_step(schedule)})")
            if _compat.run_pass_manager_released(pm, scratch.operation):
                return
        try:
            PassManager.parse(f"builtin.module({_preload_step(schedule)})").run(scratch.operation)
        except ir.MLIRError as err:
            if not any("doubly defined symbol" in d.message for d in err.error_diagnostics):
                raise


def prepare_context(context: ir.Context) -> None:
    """Registers in ``context`` what a pass manager running the pipeline adds
    to the dialect registry when it starts (``convert-to-llvm``'s dialect
    extension), so that ``lower_to_llvm`` may then run inside a running pass
    manager.  Call it while no pass manager runs in ``context``."""
    with context, ir.Location.unknown():
        PassManager.parse("builtin.module(convert-to-llvm)").run(ir.Module.create().operation)


def _has_fma(cpu) -> bool:
    """Whether ``cpu`` (a name or a CpuTarget) has fused multiply-add
    instructions (every aarch64 CPU; x86 from x86-64-v3 on)."""
    from .host import resolve
    target = resolve(cpu)
    return target.arch == "aarch64" or "fma" in target.features


def linalg_to_llvm_pipeline(opt_level: int = 3, schedule: str | Path | None = None,
                            stage: str = "llvm", preload: bool = True,
                            early_dealloc: bool = True, cpu=None,
                            math_approx: bool | None = None, threads: int = 1,
                            kernels: bool = False, matmuls: bool = True) -> str:
    """The upstream pipeline from linalg-on-tensors to the LLVM dialect.

    ``opt_level`` 0: no fusion, no schedule (fastest to compile); 1:
    elementwise fusion (``linalg-fuse-elementwise-ops``, after generalizing
    reductions and broadcasts with the ``gradir_cpu_generalize`` sequence of
    ``schedule``, default ``SCHEDULE_LIBRARY``); 2 and more: also the
    ``gradir_cpu_tensor`` sequence before fusion, which tiles and vectorizes
    matmuls and transposes, and the ``gradir_cpu_elementwise`` sequence after
    fusion (and ``rlx-math-approx``), which vectorizes elementwise generics.  ``stage``
    "bufferized" stops after bufferization, out-params and deallocation
    (memrefs, linalg and vector ops), "llvm" goes all the way.  ``preload``
    False leaves out ``transform-preload-library`` (the schedule must then be
    loaded in the context already, see ``preload_schedule``).  ``early_dealloc``
    adds gradir's ``rlx-early-dealloc`` after deallocation (free each buffer
    after its last use, not at the function's end) and ``rlx-distinct-results``
    before bufferization (each returned value its own buffer: upstream
    ``buffer-results-to-out-params`` crashes on a function that returns one
    value twice); without them the pipeline is upstream passes only, for
    ``mlir-opt``, and must not be fed such functions.  ``cpu`` picks the
    schedule's register tiles (a cpu name or ``host.CpuTarget``, see
    ``schedule.schedule_params``; None: the AVX-512 instance,
    ``SCHEDULE_LIBRARY``); ``schedule`` overrides its file.  ``math_approx``
    (default: ``early_dealloc``, i.e. whenever gradir's own passes may run)
    adds gradir's ``rlx-math-approx`` after fusion at ``opt_level`` 1 and
    more: f32 exp/log/tanh/erf become polynomial code that vectorizes
    instead of libm calls.  ``threads`` > 1
    (issue 14): the schedule's parallel entry point (matmuls tiled into
    ``scf.forall`` blocks), linalg ops lowered to ``scf.parallel``,
    ``rlx-parallel-loops`` keeping the loops worth it and turning them into
    OpenMP loops, ``convert-openmp-to-llvm`` running them on
    LLVM's OpenMP runtime (``runtime.toolchain.openmp_library``);
    ``threads=1`` is the single-threaded pipeline unchanged.  ``kernels``
    (issue 14, compile time): ``rlx-matmul-kernels`` after bufferization
    turns the ``linalg.contract {gradir.kernel}`` ops that
    ``rlx-to-linalg{matmul-kernels=true}`` emits into calls of gradir's
    kernel library (``kernels.py``).  ``matmuls`` False: the schedule's
    instance without matmul sequences (``schedule.without_matmuls``), for
    a module with no ``linalg.matmul``/``linalg.batch_matmul``."""
    # --- issue 14: the schedule instance of the target (host.py, schedule.py) ---
    from .schedule import DEFAULT, schedule_params, schedule_path
    params = DEFAULT.for_threads(threads) if cpu is None else schedule_params(cpu, threads)
    if not matmuls:
        params = params.without_matmuls()
    if schedule is None and preload:
        schedule = schedule_path(params)
    # --- end issue 14 ---
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r} (one of {', '.join(STAGES)})")
    steps = ["inline", "symbol-dce", "canonicalize", "cse"]
    if opt_level >= 1:
        if preload:
            steps += [_preload_step(schedule)]
        steps += [f"transform-interpreter{{entry-point={params.generalize_entry_point}}}"]
    if opt_level >= 2:
        # Before elementwise fusion: its reshape propagation folds a
        # collapse/expand_shape next to a linalg.matmul into the matmul (a
        # generic contraction the schedule does not match, left to scalar
        # loops; e.g. LeNet's flatten before its first dense layer).
        entry = params.parallel_entry_point if threads > 1 else params.entry_point
        steps += [f"transform-interpreter{{entry-point={entry}}}", "canonicalize", "cse"]
    if opt_level >= 1:
        # rlx-fuse-chains: trees of single-use elementwise generics fused in
        # one step each (upstream's pass copies the fused body at each step:
        # quadratic along a chain), leaving upstream's the same result
        steps += [*(["rlx-fuse-chains"] if early_dealloc else []),
                  "linalg-fuse-elementwise-ops", "canonicalize", "cse"]
        if early_dealloc if math_approx is None else math_approx:
            steps += ["rlx-math-approx" if cpu is None or _has_fma(cpu)
                      else "rlx-math-approx{fma=false}"]
    if opt_level >= 2:
        # After fusion (the fused generics are vectorized).  No cse after it:
        # vectorized ops lose the grad.recomputed mark of their generic, and
        # cse would merge a recomputation with the forward computation again
        # (undoing rematerialization).  rlx-merge-elementwise first: a
        # producer that fusion left apart (other ops read it too) computed
        # in its consumer's loop (batch norm's x - mean, its output and relu
        # in one pass).
        steps += ["rlx-merge-elementwise", "rlx-collapse-elementwise",
                  f"transform-interpreter{{entry-point={params.elementwise_entry_point}}}",
                  "canonicalize"]
    # Tensors -> buffers: every public function gets identity-layout memref
    # arguments, its results become out-params written in place (static
    # allocations hoisted to the caller), intermediates are freed.
    if early_dealloc:
        # tiny tensors (0-d, 2-element) as scalars: no buffer per op and
        # loop iteration (rlx_scalarize.py; GradBench's particle and saddle)
        steps += ["rlx-scalarize", "canonicalize"]
    # (rlx-readonly-arguments: bufferization never writes into a caller's
    # argument; rlx-distinct-results: each result a buffer of its own)
    steps += ["eliminate-empty-tensors", "empty-tensor-to-alloc-tensor",
              *(["rlx-distinct-results"] if early_dealloc else []), "rlx-readonly-arguments",
              _BUFFERIZE, "rlx-order-globals",
              # loops that yield their buffer unchanged return the allocation
              # itself, which out-params can then hoist (no copy)
              "canonicalize",
              _OUT_PARAMS, "canonicalize", "cse", "buffer-deallocation-pipeline",
              "convert-bufferization-to-memref"]
    if kernels:
        from .host import NAMED_TARGETS, resolve
        name = getattr(cpu, "name", cpu) if cpu is not None else "host"
        kernels_cpu = name if name in NAMED_TARGETS else "host"
        if resolve(kernels_cpu) != resolve(cpu if cpu is not None else "host"):
            raise ValueError(f"no kernel library for the cpu {name!r}")
        steps += [f"rlx-matmul-kernels{{cpu={kernels_cpu} threads={threads}}}",
                  f"rlx-pool-kernels{{cpu={kernels_cpu} threads={threads}}}",
                  f"rlx-conv-kernels{{cpu={kernels_cpu} threads={threads}}}"]
    if early_dealloc:
        # (rlx-strided-copies: copies between strided buffers as linalg.copy
        # loops, not MLIR's element-by-element memrefCopy)
        steps += ["rlx-early-dealloc", "rlx-widen-bool-memrefs", "rlx-strided-copies"]
    if stage == "bufferized":
        return "builtin.module(" + ",".join(steps) + ")"
    if threads > 1:
        # --- issue 14: every core ---
        from . import rlx_parallel_loops
        steps += ["func.func(convert-linalg-to-parallel-loops)", "scf-forall-to-parallel",
                  f"rlx-parallel-loops{{threads={threads} min-work={rlx_parallel_loops.PIPELINE_MIN_WORK} "
                  f"hot-min-work={rlx_parallel_loops.PIPELINE_HOT_MIN_WORK}}}"]
    else:
        # scf-forall-to-for: a schedule may tile with scf.forall whatever the
        # thread count (a no-op on the schedules of this package at 1 thread).
        steps += ["func.func(convert-linalg-to-loops)", "scf-forall-to-for"]
    steps += ["func.func(convert-vector-to-scf{full-unroll=true})",
              "func.func(llvm-request-c-wrappers)", "fold-memref-alias-ops",
              "expand-strided-metadata", "lower-affine", "convert-scf-to-cf",
              # math first: libm calls on vectors (f64 erf) are unrolled into
              # vector ops, which the one convert-vector-to-llvm then lowers
              "convert-math-to-llvm", "convert-math-to-libm", "convert-vector-to-llvm",
              *(["convert-openmp-to-llvm"] if threads > 1 else []),
              # memref, arith, index, ub, cf and func in one conversion (issue 14,
              # compile time: one walk of the IR instead of six; see prepare_context)
              "convert-to-llvm",
              "reconcile-unrealized-casts", "canonicalize", "cse"]
    if early_dealloc and opt_level >= 1:
        # issue 14 (compile time): LLVM does not unroll the loops again
        # (rlx_loop_hints.py: LeNet step's LLVM time halved, run time the same).
        steps += ["rlx-loop-hints"]
    return "builtin.module(" + ",".join(steps) + ")"


# Upstream passes only (mlir-opt): buffers are freed at the end of each block;
# functions returning one value twice crash buffer-results-to-out-params there.
LINALG_TO_LLVM = linalg_to_llvm_pipeline(2, early_dealloc=False)

# The whole CPU pipeline in gradir-opt syntax.
CPU_PIPELINE = (f"builtin.module({RLX_TO_LINALG},"
                + linalg_to_llvm_pipeline(2)[len("builtin.module("):])


def lower_to_llvm(module, *, opt_level: int = 3, stage: str = "llvm", cpu: str = "host",
                  threads: int = 1, verify_each: bool = False, release_gil: bool = False,
                  kernels: bool = False) -> None:
    """Lowers ``module`` (rlx functions; mutated in place) to the LLVM
    dialect with the ABI described in this module's docstring, for the CPU
    ``cpu`` ("host" or a name of ``host.NAMED_TARGETS``: the schedule's
    register tiles and LLVM's target-cpu/target-features follow it), on
    ``threads`` threads (1: single-threaded code; see
    ``linalg_to_llvm_pipeline``).  ``verify_each``: the IR is verified after
    every pass of the pipeline (as ``gradir-opt`` and ``rlx-lower-to-llvm``
    do), not only its result (issue 14, compile time: verifying the LeNet
    step after each of ~55 passes was a fifth of the pipeline's time).

    ``release_gil`` (issue 14, parallel compile: ``runtime/partition.py``
    lowers the parts of a program in threads): the upstream passes run with
    the GIL released, between gradir's Python passes; a failure there raises
    ``RuntimeError`` without diagnostics (the caller lowers again the usual
    way to report them).

    ``kernels``: 2-D f32/f64 matmuls call gradir's matmul kernel library
    (``kernels.py``; the runtime links it, ``runtime/kernels.py``) instead
    of being tiled into register-tiled loops here.

    Raises ``mlir.ir.MLIRError`` with the diagnostics of the failing pass
    (rlx-to-linalg reports refusals at the offending op) and a note naming a
    command that reproduces the failure."""
    from ...passes.pipeline import build_pass_manager

    op = module.operation if hasattr(module, "operation") else module
    with op.context:
        to_linalg = f"{RLX_POOL_INDICES},{RLX_TO_LINALG_KERNELS}" if kernels else RLX_TO_LINALG
        # (the gathers whose indices add_index_checks checks below)
        to_linalg = to_linalg[:-1] + " index-checks=true}"
        pm = build_pass_manager(f"builtin.module({to_linalg})", op.context)
        try:
            pm.run(op)
        except ir.MLIRError as err:
            err.add_note(f"reproduce with: gradir-opt --pass-pipeline='builtin.module({to_linalg})' "
                         "input.mlir")
            raise
        # a loop step computed at run time is checked there, and the indices of
        # take and nll_loss (runtime_checks.py)
        from .runtime_checks import add_index_checks, add_step_checks
        add_step_checks(op)
        add_index_checks(op)
        # --- issue 14: per-target schedule and LLVM target attributes ---
        from .codegen import internalize_private_functions, set_llvm_target
        from .host import resolve
        from .schedule import schedule_params, schedule_path
        from ... import _compat
        target = resolve(cpu)
        # Without the matmul sequences where the program holds no matmul for
        # the schedule (its 2-D ones call the kernels): an instance of its
        # own, with its own symbols, since one context may lower programs of
        # both kinds (gradir-opt --split-input-file)
        matmuls = bool(_compat.collect_ops(op, lambda o: o.name in _SCHEDULED_MATMULS))
        if opt_level >= 1:
            params = schedule_params(target, threads)
            preload_schedule(op.context, schedule_path(
                params if matmuls else params.without_matmuls()), release_gil=release_gil)
        text = linalg_to_llvm_pipeline(opt_level, stage=stage, preload=False, cpu=target,
                                       threads=threads, kernels=kernels, matmuls=matmuls)
        # --- end issue 14 ---
        try:
            if release_gil:
                _run_released(text, op, verify_each)
            else:
                pm = build_pass_manager(text, op.context)
                pm.enable_verifier(verify_each)
                pm.run(op)
            if not verify_each:
                op.verify()
            if stage == "llvm":
                set_llvm_target(op, target)
                internalize_private_functions(op)
        except ir.MLIRError as err:
            full = linalg_to_llvm_pipeline(opt_level, stage=stage, cpu=target, threads=threads,
                                           kernels=kernels)
            err.add_note(f"reproduce with: gradir-opt --pass-pipeline='builtin.module({to_linalg})' "
                         f"input.mlir | "
                         f"gradir-opt --pass-pipeline='{full}'")
            raise


# --- issue 14: the pipeline run with the GIL released (runtime/partition.py) ---

def top_level_elements(text: str) -> list[str]:
    """The elements of ``builtin.module(a,b{x=1},func.func(c,d))``: ``a``,
    ``b{x=1}``, ``func.func(c,d)``."""
    body = text[len("builtin.module("):-1]
    elements, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            elements.append(cur)
            cur = ""
            continue
        depth += ch in "({"
        depth -= ch in ")}"
        cur += ch
    return elements + [cur]


def pipeline_groups(text: str) -> list[tuple[bool, list[str]]]:
    """The top-level elements of ``builtin.module(...)`` pipeline ``text`` in
    runs: ``(True, gradir passes)`` (Python, they need the GIL) or
    ``(False, upstream elements)``."""
    from ...passes.pipeline import parse_pipeline
    groups: list[tuple[bool, list[str]]] = []
    for element in top_level_elements(text):
        # a gradir pass anywhere in it, nested under func.func(...) too
        python = any(e.has_gradir_pass() for e in parse_pipeline(element))
        if groups and groups[-1][0] == python:
            groups[-1][1].append(element)
        else:
            groups.append((python, [element]))
    return groups


def _run_released(text: str, op, verify_each: bool) -> None:
    from ... import _compat
    from ...passes.pipeline import build_pass_manager
    for python, group in pipeline_groups(text):
        pm = build_pass_manager("builtin.module(" + ",".join(group) + ")", op.context)
        pm.enable_verifier(verify_each)
        if python:
            pm.run(op)
        else:
            diagnostics = []
            if not _compat.run_pass_manager_released(pm, op, diagnostics):
                raise RuntimeError("the lowering pipeline failed (" + ",".join(group)[:200]
                                   + "): " + "; ".join(diagnostics[:3]))
