"""issue 14 (compile time): a large function lowered and compiled in parts, at once.

MLIR's lowering and LLVM each run one module on one thread, and the
bindings hold the GIL while they do.  ``gradir.compile`` cuts each large
public function ``@f`` (its body, at the top level, where the estimated
compile work is halved) into ``@f__part0`` (``@f``'s arguments -> the
results it defines, plus the values the second part reads) and
``@f__part1``; each part is lowered and compiled in a context of its own,
in a thread of its own, with the GIL released around the upstream passes
and LLVM (``_compat.run_pass_manager_released``, ``ReleasedEngine``), so on
two cores the first call takes about half the time.  A *glue* calls the
parts in order with the values between them in temporary buffers: Python
here (the JIT), C beside the parts' objects in a library (compile cache,
``export_library``), so the library's ``_mlir_ciface_f`` has the ABI of an
unsplit function and ``gradir.runtime.load`` needs nothing new.

A part whose LLVM IR is large (``TOOLS_MIN_BLOCKS`` basic blocks, about
three per loop) goes to LLVM's tool binaries as a large whole module does
(``llvm_tools.part_object``: translated and written as bitcode through the
C API without the GIL, every loop nest outlined, ``opt | llc``, in the
part's thread), not to ExecutionEngine: LLVM's loop passes are superlinear
in the size of a function, and each part is one function of half the
program (torchvision's shufflenet_v2_x0_5 step, 2x3x64x64: 56 s of CPU in
ExecutionEngine's two parts against 11 s in the tools').  Then every part's
object (ExecutionEngine's dumped, for the parts that went there) is linked
with the C glue into one library (``jit.PartitionedToolchainExecutable``
loads it; the compile cache stores it as it is), and the JIT runs the
parts' functions of that library through the Python glue.  Which LLVM
compiles a part changes no bit (the parts' results are bitwise equal
either way: nothing in either pipeline reorders floating-point math).

Not split: functions with tuple, dynamic or non-tensor arguments or results,
a result that is an argument, a function another one calls, bodies with
fewer than two non-constant ops.  Numbers are unchanged: a cut only stores
an intermediate that the code computed anyway (nothing is contracted
across ops: LLVM fuses no fmul/fadd without fast-math flags).

Where a cut falls follows the program only, never the machine: storing
an intermediate between the parts can change the last bit of a result
(the LeNet step's conv2 weight gradient moved by 1.5e-8, the part boundary
changing what the schedule fuses), so a program split on one machine and
whole on another would give different bits at the same thread count.  On
one CPU the parts run one after the other.

``GRADIR_PARALLEL_COMPILE``: ``auto`` (default: functions of estimated
weight ``MIN_WEIGHT`` or more), ``1`` (every function that can be split:
tests), ``0`` (never).  ``GRADIR_LLVM_TOOLS`` for the parts: ``auto`` (parts
of ``TOOLS_MIN_BLOCKS`` blocks or more), ``1`` (every part, where the program
is split: with ``GRADIR_PARALLEL_COMPILE=auto`` it sends the whole module to
the tools instead), ``0`` (ExecutionEngine).  ``exe.llvm_ir`` of a split
executable is the module lowered whole (what ``gradir-opt
--rlx-lower-to-llvm`` prints), made on first use.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from mlir import ir

from .. import _compat
from ..ir import print_module
from .abi import TensorSpec
from .partition_glue import GLUE_PRELUDE, glue_c, python_glue  # noqa: F401 (python_glue: jit)
from .signature import CompileError, public_functions, select_functions
from .toolchain import install_check_hooks, llvm_opt_level

__all__ = ["MIN_WEIGHT", "PART", "Split", "Parts", "mode", "split_function", "glue_c",
           "python_glue", "compile_parts"]

PART = "__part"
_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Why the last parallel compile of this process fell back to the whole
# module (an exception in a part: the whole-module path then reports the
# error, or compiles); None when none did.
last_error = None

# Estimated compile work of an op (its nested ops included), in units of
# an eighth of a plain matmul's.  bench/compile_weights.py measures each op
# alone in a function (LeNet/MLP shapes, AMD EPYC Zen 5, AVX-512): the
# schedule's register-tiled matmuls, convolutions and 2-d transposes are
# most of the lowered code.  In a program the small ops cost less than
# alone (they fuse: the MLP step's 14 loss ops ~27 ms of CPU together,
# against ~70 for their isolated costs) and the gradients' matmuls, which
# read a transposed operand in place, more (~30 ms against ~25 for the
# forward ones; CPU of each part under forced cuts), so those are what the
# table follows: matmul 8, +2 for a transposed operand, the rest as measured
# alone, elementwise ops and reductions 1.  (The older table: matmul 8,
# conv 12, pool 4, everything else 1.)
_WEIGHTS = {"rlx.matmul": 8, "rlx.conv2d": 8, "rlx.conv2d_transpose": 10,
            "rlx.max_pool2d": 2, "rlx.avg_pool2d": 2, "rlx.max_pool2d_backward": 5,
            "rlx.avg_pool2d_backward": 5, "rlx.log_softmax": 3, "rlx.softmax": 3,
            "rlx.max_pool2d_with_indices": 2, "rlx.max_pool2d_indices_backward": 5}
_MATMUL_LHS_T, _MATMUL_RHS_T = 2, 2         # a permute_dims operand, read in place
_TRANSPOSE_2D = 8                           # a 2-d permute_dims no matmul reads in place
# With the matmul kernels (compile's default) a 2-D f32/f64 matmul is a call
# plus its output's initialization, and a transposed operand the kernel's
# other variant: the LLVM time of the MLP step's parts (bench/compile_time.py
# --timeline) was 42 and 64 ms cut at the weights above, 47 and 58 at these
# (first call 0.263 -> 0.258 s, median of 10).
_KERNEL_MATMUL, _KERNEL_MATMUL_T = 4, 1
_CONSTANTS = ("arith.constant", "rlx.constant")
# auto: functions this heavy are split (the MLP step weighs 100, LeNet's
# 188; 65 and 148 with kernel calls; an elementwise chain of 40 ops is not
# worth a second context).
MIN_WEIGHT = 48


def mode() -> str:
    flag = os.environ.get("GRADIR_PARALLEL_COMPILE", "auto").strip().lower()
    if flag in ("1", "on", "true", "yes"):
        return "on"
    if flag in ("0", "off", "false", "no"):
        return "off"
    return "auto"


def _weight(op: ir.Operation, kernels: bool = False) -> int:
    """Estimated compile work of ``op`` (see ``_WEIGHTS``); ``kernels``: 2-D
    f32/f64 matmuls call the kernel library (``_KERNEL_MATMUL``)."""
    if op.name in _CONSTANTS:
        w = 0
    elif op.name == "rlx.matmul":
        kernel = kernels and _kernel_matmul(op)
        w = _KERNEL_MATMUL if kernel else _WEIGHTS["rlx.matmul"]
        for i, adjust in ((0, _MATMUL_LHS_T), (1, _MATMUL_RHS_T)):
            if i < len(op.operands) and _permute_2d(op.operands[i]):
                w += _KERNEL_MATMUL_T if kernel else adjust
    elif op.name == "rlx.permute_dims":
        reads_in_place = all(u.owner.name == "rlx.matmul" for u in op.results[0].uses)
        w = 0 if reads_in_place and _permute_2d(op.results[0]) else (
            _TRANSPOSE_2D if _permute_2d(op.results[0]) else 1)
    else:
        w = _WEIGHTS.get(op.name, 1)
    for region in op.regions:
        for block in region.blocks:
            for inner in _compat.block_ops(block):
                w += _weight(inner, kernels)
    return w


def _kernel_matmul(op: ir.Operation) -> bool:
    """A matmul ``rlx-to-linalg{matmul-kernels}`` hands to the kernels: 2-D, f32 or f64."""
    t = op.results[0].type
    return (isinstance(t, ir.RankedTensorType) and t.rank == 2
            and str(t.element_type) in ("f32", "f64"))


def _permute_2d(value) -> bool:
    """``value`` is the result of a rank-2 ``rlx.permute_dims``."""
    owner = _compat.defining_op(value)
    return (owner is not None and owner.name == "rlx.permute_dims"
            and isinstance(value.type, ir.RankedTensorType) and value.type.rank == 2)


def _walk(op: ir.Operation):
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in _compat.block_ops(block):
                yield from _walk(inner)


_key = _compat.value_key


def _plain_tensor(t) -> bool:
    from .abi import DTYPES
    return (isinstance(t, ir.RankedTensorType) and t.has_static_shape
            and str(t.element_type) in DTYPES)


@dataclass
class Split:
    """``@name`` cut in ``parts``: per part, the slots of its inputs and of
    its outputs; a slot is ``("in", i)`` / ``("out", j)`` (an argument /
    result of ``@name``) or ``("tmp", k)`` (``temps[k]``, between parts)."""
    name: str
    parts: list[str] = field(default_factory=list)
    slots: list[tuple[list, list]] = field(default_factory=list)
    temps: list[TensorSpec] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)    # estimated work of each part


def _called(module_op: ir.Operation) -> set[str]:
    names = set()
    for fn in _compat.block_ops(module_op.regions[0].blocks[0]):
        for op in _walk(fn):
            if op.name == "func.call" and "callee" in op.attributes:
                names.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
    return names


def split_function(module_op: ir.Operation, fn: ir.Operation, min_weight: int,
                   called: set[str] | None = None, kernels: bool = False) -> Split | None:
    """Cuts ``fn`` (a public func.func of ``module_op``, in place) in two
    functions when it can be and weighs ``min_weight`` or more; returns the
    plan, or None (``fn`` untouched)."""
    from mlir.dialects import func as func_d
    name = ir.StringAttr(fn.attributes["sym_name"]).value
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    if not all(_plain_tensor(t) for t in list(ftype.inputs) + list(ftype.results)):
        return None
    if name in (called if called is not None else _called(module_op)):
        return None
    if not _C_NAME.fullmatch(name):
        return None     # the C glue names it (@"a.b" is a fine MLIR symbol, no C one)
    block = fn.regions[0].blocks[0]
    ops = _compat.block_ops(block)
    ret, body = ops[-1], ops[:-1]
    weights = [_weight(op, kernels) for op in body]
    total = sum(weights)
    heavy = [i for i, op in enumerate(body) if op.name not in _CONSTANTS]
    if total < min_weight or len(heavy) < 2:
        return None
    cut = _choose_cut(body, weights, heavy, ret)
    first, second = body[:cut], body[cut:]
    defined_first = {}
    for op in first:
        for r in op.results:
            defined_first[_key(r)] = (op, r)
    args = {_key(a): i for i, a in enumerate(block.arguments)}
    # Results: each from the part that defines it; an argument returned as
    # it is stays unsplit (no part writes it).
    result_part = []
    for v in ret.operands:
        k = _key(v)
        if k in args:
            return None
        result_part.append(0 if k in defined_first else 1)
    first_result = {}
    for j, v in enumerate(ret.operands):
        if result_part[j] == 0:
            first_result.setdefault(_key(v), j)
    # What the second part reads from outside itself.
    arg_uses, crossing, constants = [], [], []
    seen = set()
    for op in second:
        for inner in _walk(op):
            for v in inner.operands:
                k = _key(v)
                if k in seen or (k not in args and k not in defined_first):
                    continue
                seen.add(k)
                if k in args:
                    arg_uses.append(args[k])
                elif defined_first[k][0].name in _CONSTANTS:
                    constants.append(defined_first[k])
                else:
                    crossing.append(v)
    if not all(_plain_tensor(v.type) for v in crossing):
        return None     # a tuple, a dynamic shape or a dtype numpy lacks between the parts
    arg_uses.sort()
    plan = Split(name, [f"{name}{PART}0", f"{name}{PART}1"])
    plan.weights = [sum(weights[:cut]), sum(weights[cut:])]
    n_in = len(block.arguments)
    out0, out0_slots, in1_slots = [], [], []
    for j, v in enumerate(ret.operands):
        if result_part[j] == 0:
            out0.append(v)
            out0_slots.append(("out", j))
    for v in crossing:
        k = _key(v)
        if k in first_result:
            in1_slots.append(("out", first_result[k]))
        else:
            out0.append(v)
            t = ir.RankedTensorType(v.type)
            plan.temps.append(TensorSpec(tuple(t.shape), _dtype(t)))
            slot = ("tmp", len(plan.temps) - 1)
            out0_slots.append(slot)
            in1_slots.append(slot)
    plan.slots.append(([("in", i) for i in range(n_in)], out0_slots))
    plan.slots.append(([("in", i) for i in arg_uses] + in1_slots,
                       [("out", j) for j in range(len(result_part)) if result_part[j] == 1]))
    if not out0 or not plan.slots[1][1]:
        return None
    # The second function, after fn.
    out1 = [v for j, v in enumerate(ret.operands) if result_part[j] == 1]
    in_types = [block.arguments[i].type for i in arg_uses] + [v.type for v in crossing]
    with ir.InsertionPoint(module_op.regions[0].blocks[0]), fn.location:
        part1 = func_d.FuncOp(plan.parts[1], (in_types, [v.type for v in out1]))
        entry = part1.add_entry_block()
    with ir.InsertionPoint(entry), fn.location:
        anchor = func_d.ReturnOp([])
    remap = {}
    for i, a in zip(arg_uses, entry.arguments):
        remap[_key(block.arguments[i])] = a
    for v, a in zip(crossing, entry.arguments[len(arg_uses):]):
        remap[_key(v)] = a
    for op, r in constants:
        clone = op.clone(ip=ir.InsertionPoint(anchor))
        remap[_key(r)] = clone.results[0]
    for op in second:
        op.move_before(anchor)
    for op in second:
        for inner in _walk(op):
            for i, v in enumerate(inner.operands):
                new = remap.get(_key(v))
                if new is not None:
                    inner.operands[i] = new
    with ir.InsertionPoint(anchor), fn.location:
        func_d.ReturnOp(out1)
    anchor.operation.erase()
    # The first function: fn itself, renamed, returning its part.
    with ir.InsertionPoint(ret), ret.location:
        func_d.ReturnOp(out0)
    ret.erase()
    fn.attributes["sym_name"] = ir.StringAttr.get(plan.parts[0])
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(ftype.inputs), [v.type for v in out0]))
    if "res_attrs" in fn.attributes:
        del fn.attributes["res_attrs"]
    return plan


# A cut may fall where the first part has done between these fractions of
# the estimated work; among those, the ones storing the fewest bytes between
# the parts (an op fused with its consumer no longer is when the cut falls
# between them), up to BYTES_SLACK more, and of these the most balanced.
# The LeNet step cut at half its weight passed 10 buffers (forward
# activations: the whole function stores them too); cut here, 9.
# A window of 30-70% let the LeNet step's cut fall at 63% of the weight,
# 59% of the compile work: 0.545 s to compile against 0.51 s, the MLP
# step's the same.  With the fewest bytes alone deciding, the MLP step's
# cut fell at 44% of the weight for 3% fewer bytes than at 54%; at 54% it
# compiles in 0.202 against 0.217 s and runs the same (0.958 / 0.957 ms).
# Its run time at 1 thread moves with the cut (+0-7%; the whole function's
# code 1.82-2.05 ms in the same runs), not with the buffers' alignment
# (64-byte aligned temporaries changed nothing) nor the glue (its Python
# costs ~15 us a call); recomputing cheap ops (ReLU) in the second part
# instead of passing them cost run time (the recomputed buffer is one more
# pass over memory) and was dropped.
BALANCE = (0.4, 0.6)
BYTES_SLACK = 0.25


def _choose_cut(body, weights, heavy, ret) -> int:
    """Index of the first op of the second part: both parts hold a
    non-constant op; within ``BALANCE``, the most balanced of the cuts
    passing at most ``BYTES_SLACK`` more bytes than the fewest; the most
    balanced cut when none is within it."""
    index = {}
    for i, op in enumerate(body):
        for r in op.results:
            index[_key(r)] = i
    results = {_key(v) for v in ret.operands}
    last_use = {}
    for j, op in enumerate(body):
        for inner in _walk(op):
            for v in inner.operands:
                k = _key(v)
                if k in index and index[k] < j and body[index[k]].name not in _CONSTANTS:
                    last_use[k] = max(last_use.get(k, -1), j)
    sizes = {}
    for k, i in index.items():
        if k in last_use and k not in results:
            for r in body[i].results:
                if _key(r) == k:
                    sizes[k] = _tensor_bytes(r.type)
    total = sum(weights)
    candidates = []
    acc = 0
    for cut in range(1, len(body)):
        acc += weights[cut - 1]
        if cut <= heavy[0] or cut > heavy[-1]:
            continue
        crossing = sum(b for k, b in sizes.items() if index[k] < cut <= last_use[k])
        inside = BALANCE[0] * total <= acc <= BALANCE[1] * total
        candidates.append((inside, crossing, abs(2 * acc - total), cut))
    within = [c for c in candidates if c[0]]
    if within:
        fewest = min(c[1] for c in within)
        candidates = [c for c in within if c[1] <= fewest * (1 + BYTES_SLACK)]
    return min(candidates, key=lambda c: (c[2], c[3]))[3]


def _tensor_bytes(t) -> int:
    if not _plain_tensor(t):
        return 0
    import numpy as np
    return int(np.prod(t.shape, dtype=np.int64)) * np.dtype(_dtype(t)).itemsize


def _dtype(t) -> str:
    from .abi import DTYPES
    return DTYPES[str(t.element_type)]


# --- the glue: partition_glue.py (python_glue, glue_c, GLUE_PRELUDE) -------------------

# --- compiling the parts --------------------------------------------------------------

@dataclass
class _Unit:
    text: str
    entries: list[str]
    index: int = 0
    weight: int = 0     # the entries' estimated compile work (``_weight``)


class _Tools:
    """A part's way to LLVM's tool binaries (``llvm_tools.part_object``):
    parts whose LLVM IR has at least ``min_blocks`` basic blocks go there,
    each into ``directory()/unit<i>``, with ``workers`` partitions at once.
    The folder and the tools' presence are looked at by the first part
    that goes there (~3 ms a compile otherwise)."""

    def __init__(self, level: int, target, workers: int, min_blocks: int):
        import threading
        self.level, self.target, self.workers, self.min_blocks = level, target, workers, min_blocks
        self._lock = threading.Lock()
        self._available = None
        self._directory = None

    def available(self) -> bool:
        with self._lock:
            if self._available is None:
                from . import llvm_tools
                self._available = llvm_tools.available()
            return self._available

    def directory(self):
        from pathlib import Path
        with self._lock:
            if self._directory is None:
                import tempfile
                self._directory = Path(tempfile.mkdtemp(prefix="gradir-llvm-"))
            return self._directory

    def remove(self) -> None:
        if self._directory is not None:
            import shutil
            shutil.rmtree(self._directory, ignore_errors=True)


def _privatize(module_op: ir.Operation, keep) -> None:
    for fn in public_functions(module_op):
        if ir.StringAttr(fn.attributes["sym_name"]).value not in keep:
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")


def _compile_unit(unit: _Unit, options, libs: list[str], raw_context, threaded: bool = False,
                  tools: _Tools | None = None):
    """One part: parsed in a context of its own (``raw_context``, a future
    of a ``_compat.raw_context`` handle), lowered, compiled and looked up
    (the parse, the upstream passes and LLVM with the GIL released).
    Returns (engine, the entries' packed wrappers, None), or, where
    ``tools`` takes the part (``_tools_object``), (None, {}, its object)."""
    from ..conversion.cpu.pipeline import lower_to_llvm
    ctx = _compat.wrap_context(raw_context.result())
    if threaded:
        ctx.enable_multithreading(True)
    # (else single-threaded: one part per core already, and MLIR's own thread
    # pool would only compete with the other parts: MLP step 0.26 -> 0.25 s)
    with ctx:
        module = _compat.parse_module_released(unit.text, ctx)
        _privatize(module.operation, unit.entries)
        lower_to_llvm(module.operation, opt_level=options.opt_level, cpu=options.cpu,
                      threads=options.threads, release_gil=True, kernels=options.kernels)
        if tools is not None:
            obj = _tools_object(module, unit, tools)
            if obj is not None:
                return None, {}, obj
        from .toolchain import needs_runner_utils
        if not needs_runner_utils(module.operation):
            libs = [lib for lib in libs if not lib.endswith("/libmlir_c_runner_utils.so")]
        engine = _compat.ReleasedEngine(module, llvm_opt_level(options.opt_level), libs)
        pointers = {}
        for name in unit.entries:
            ptr = engine.raw_lookup("_mlir_ciface_" + name)
            if not ptr:
                raise CompileError(f"compiled part lacks '_mlir_ciface_{name}'")
            pointers[name] = ptr
        install_check_hooks(engine, module)
    return engine, pointers, None


def _tools_object(module, unit: _Unit, tools: _Tools):
    """The part's object compiled by ``opt | llc`` (``llvm_tools.part_object``:
    loop nests outlined), or None when its LLVM IR has fewer than
    ``tools.min_blocks`` basic blocks (ExecutionEngine compiles it)."""
    from . import llvm_tools
    if unit.weight < TOOLS_MIN_WEIGHT and tools.min_blocks > 0:
        return None
    part = llvm_tools.PartModule(module.operation)
    try:
        if part.blocks < tools.min_blocks or not tools.available():
            return None
        return llvm_tools.part_object(part, tools.level, tools.target,
                                      tools.directory() / f"unit{unit.index}", tools.workers)
    finally:
        part.close()


class _Prestart:
    """What the parts' threads need before their first pass, begun in
    threads (the C API, without the GIL) while the main thread splits the
    program and imports the lowering: ``count`` contexts (``ir.Context()``
    plus gradir's dialects: ~7 ms each, made one after the other with the
    GIL held before) and LLVM's native target (``warm_up_llvm_targets_released``).
    ``close`` waits for them and destroys the contexts no part took."""

    def __init__(self, count: int):
        from concurrent.futures import ThreadPoolExecutor
        from ..ir import DIALECT_FILES
        recipe = _compat.context_recipe(DIALECT_FILES)
        self._pool = ThreadPoolExecutor(max_workers=count + 1,
                                        thread_name_prefix="gradir-context")
        self.llvm = self._pool.submit(_compat.warm_up_llvm_targets_released)
        self._contexts = [self._pool.submit(_compat.raw_context, recipe) for _ in range(count)]
        self._taken = 0

    def take(self):
        """The next context (a future of its handle)."""
        future = self._contexts[self._taken]
        self._taken += 1
        return future

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for future in self._contexts[self._taken:]:
            if future.exception() is None:
                _compat.drop_context(future.result())


@dataclass
class Parts:
    """What ``compile_parts`` made: the public functions' signatures, the
    plans of the split ones, the engines, the looked-up C interfaces (packed
    wrappers) of every entry (parts and unsplit functions), the C glue."""
    module_text: str
    signatures: dict
    plans: dict
    engines: list
    pointers: dict
    glue_c: str
    # issue 14: where a part went through the LLVM tools, every part's object
    # linked with the C glue (``export_library``) in ``directory``: the
    # library (``jit.PartitionedToolchainExecutable`` loads it; engines and
    # pointers are then empty)
    library: object = None
    directory: object = None


def compile_parts(module, options, functions=None) -> Parts | None:
    """``gradir.compile``'s parallel path (``jit.PartitionedExecutable``
    wraps the result; ``jit.PartitionedToolchainExecutable`` where a part
    went through the LLVM tools and ``library`` is set), or None when no
    function is split (or anything fails: the caller then compiles the
    usual way, which reports the errors).  ``auto`` steps aside for
    ``GRADIR_LLVM_TOOLS=1`` (always the tool binaries, on the whole module)."""
    from . import llvm_tools
    flag = mode()
    if flag == "off" or options.target != "cpu" or options.opt_level < 1:
        return None
    if flag == "auto" and llvm_tools.mode() == "on":
        return None
    # The compiler's threads, not the compiled code's (options.threads).  The
    # cut itself never depends on them: a program gets the same code, and
    # the same bits, on every machine.
    cpus = _cpus()
    src = module.operation if hasattr(module, "operation") else module
    try:
        public = public_functions(src)
        heavy = [fn for fn in public
                 if flag == "on" or _weight(fn, options.kernels) >= MIN_WEIGHT]
    except (ir.MLIRError, ValueError, KeyError):
        return None
    if not heavy:
        return None     # nothing will be cut (the usual path; no context made for naught)
    # the parts' contexts, made while this thread splits (at most one per
    # core, and per entry: two parts per cut function, the others whole)
    prestart = _Prestart(max(1, min(cpus, len(public) + len(heavy))))
    try:
        return _compile_split(src, options, functions, flag, cpus, prestart)
    finally:
        prestart.close()


def _compile_split(src, options, functions, flag: str, cpus: int, prestart: _Prestart):
    from ..conversion.cpu import pipeline  # noqa: F401 - imported here, before the threads need it
    split = _split_copy(src, flag, functions, options.kernels)
    if split is None:
        return None
    text, sigs, plans, weights, split_text = split
    units = _units(split_text, plans, weights, cpus)
    threads = options.threads
    from .kernels import runtime_libraries as kernel_runtime_libraries
    libs = [str(p) for p in kernel_runtime_libraries(options.target, threads,
                                                     options.cpu if options.kernels else None,
                                                     process=True)]
    if threads > 1:
        import ctypes
        from .openmp import configure
        from .toolchain import process_openmp_library
        configure(ctypes.CDLL(str(process_openmp_library())))   # (libs holds it)
    tools = _tools_plan(options, len(units))
    from concurrent.futures import ThreadPoolExecutor
    try:
        prestart.llvm.result()
        with ThreadPoolExecutor(max_workers=max(1, min(len(units), cpus)),
                                thread_name_prefix="gradir-compile") as pool:
            threaded = cpus >= 2 * len(units)
            contexts = [prestart.take() for _ in units]
            results = list(pool.map(lambda u, c: _compile_unit(u, options, libs, c, threaded,
                                                               tools),
                                    units, contexts))
        glue = GLUE_PRELUDE + "".join(
            glue_c(plan, len(sigs[name].inputs), len(sigs[name].outputs))
            for name, plan in plans.items())
        library = None
        if any(obj is not None for _, _, obj in results):
            library = _link(results, sigs, glue, options, tools.directory())
    except Exception as err:  # noqa: BLE001 - the usual path compiles again and reports
        global last_error
        last_error = f"{type(err).__name__}: {err}"
        if os.environ.get("GRADIR_DEBUG"):
            import traceback
            traceback.print_exc()
        if tools is not None:
            tools.remove()
        return None
    from .heap import keep_freed_memory
    keep_freed_memory()
    if library is not None:
        return Parts(text, sigs, plans, [], {}, glue, library, tools.directory())
    if tools is not None:
        tools.remove()
    engines = [engine for engine, _, _ in results]
    pointers = {}
    for _, ptrs, _ in results:
        pointers.update(ptrs)
    return Parts(text, sigs, plans, engines, pointers, glue)


# issue 14: "auto" sends a part to LLVM's tool binaries (loop nests outlined,
# llvm_tools.py) when its LLVM IR has at least this many basic blocks (about
# three per loop), as jit.py sends a whole module with many branches; below
# it, ExecutionEngine (no processes to start, no library to link).  One part
# alone (AMD EPYC, 2 cores, loaded machine), LLVM's CPU time ExecutionEngine /
# tools: 333 blocks 0.22 / 0.20 s, 1465 0.67 / 0.51, 2821 1.49 / 1.08, 6366
# (torchvision resnet18's step) 8.3 / 2.6: superlinear against linear.  The
# whole compile pays ~0.1 s more for the link (cc: the signatures, the glue)
# once any part goes there.  Whole compiles, parts EE / tools, CPU s (medians
# of 4, threads 1 and 2; the parts' blocks): LeNet step (246-547) 0.73 / 0.81
# and 0.86 / 0.90; MLP step (43-167) 0.41 / 0.55, 0.46 / 0.56; transformer
# encoder step, bench/transformer.py (688-741) 1.26 / 1.36, (1284-1465) 1.69 /
# 1.64; ResNet step, bench/cnn.py (1276-1644) 2.76 / 2.46, (2353-2821) 3.41 /
# 2.84 (wall 5.9 / 5.3 s).  LeNet's and the MLP's parts stay well below.
TOOLS_MIN_BLOCKS = 1200
# A part lighter than this (``_weight``) is not even translated to be
# counted: the most blocks per unit of weight measured are ~11 (the ResNet
# step's parts at 2 threads; LeNet's 3.4 and 5.7, the encoder's ~7), so it
# stays below TOOLS_MIN_BLOCKS (the LeNet step's parts weigh 96 and 98: 3
# and 12 ms of translation spared).
TOOLS_MIN_WEIGHT = 100


def _tools_plan(options, units: int) -> _Tools | None:
    """How the parts reach the LLVM tools (``GRADIR_LLVM_TOOLS``: auto, the
    parts of ``TOOLS_MIN_BLOCKS`` blocks or more; 1, every part; 0, none),
    or None: none goes there (off, or a tool or the C compiler missing).
    ``GRADIR_LLVM_JOBS`` processes at once in all: each part's share."""
    from . import llvm_tools
    from ..conversion.cpu.host import resolve
    flag = llvm_tools.mode()
    if flag == "off" or llvm_opt_level(options.opt_level) < 1:
        return None
    workers = max(1, llvm_tools.jobs() // max(1, units))
    return _Tools(llvm_opt_level(options.opt_level), resolve(options.cpu), workers,
                  0 if flag == "on" else TOOLS_MIN_BLOCKS)


def _link(results, sigs: dict, glue: str, options, directory):
    """Every part's object (ExecutionEngine's dumped where it compiled one)
    and the C glue linked into ``directory/lib.so`` as ``export_library``
    links a split executable (what the compile cache stores)."""
    from pathlib import Path
    from types import SimpleNamespace
    from .export import export_library
    objs = []
    for i, (engine, _, obj) in enumerate(results):
        if obj is None:
            obj = Path(directory) / f"engine{i}.o"
            engine.dump_to_object_file(str(obj))
        objs.append(obj)
    exe = SimpleNamespace(signatures=sigs, options=options, llvm_ir="",
                          uses_openmp=options.threads > 1, uses_kernels=options.kernels,
                          glue_c=glue)
    return export_library(exe, Path(directory) / "lib.so", object_file=objs)


def _split_copy(src: ir.Operation, flag: str, functions, kernels: bool = False):
    """The program split: a copy of ``src`` (parsed in its context, which
    knows the dialects) with its large public functions cut.  Returns
    (``src``'s text, the signatures, the plans, the functions' weights, the
    copy's text), or None when nothing is cut."""
    text = print_module(src, debug_info=True, segments=True)
    try:
        with src.context:
            copy = ir.Module.parse(text)
            if kernels:     # issue 43: an overlapping pool's arg-max positions cross the
                # cut as rlx values (rlx_pool_indices.py: not worth it for 2x2/2)
                from ..passes.pipeline import build_pass_manager
                build_pass_manager("builtin.module(rlx-pool-indices{overlapping=true})",
                                   copy.context).run(copy.operation)
            sigs = select_functions(copy.operation, functions)
            if not sigs or (functions is not None and set(functions) - set(sigs)):
                return None
            called = _called(copy.operation)
            plans, weights = {}, {}
            for fn in public_functions(copy.operation):
                name = ir.StringAttr(fn.attributes["sym_name"]).value
                weights[name] = _weight(fn, kernels)
                plan = split_function(copy.operation, fn, 0 if flag == "on" else MIN_WEIGHT,
                                      called, kernels)
                if plan is not None:
                    plans[name] = plan
            if not plans:
                return None
            return text, sigs, plans, weights, print_module(copy.operation, debug_info=True,
                                                            segments=True)
    except (CompileError, ir.MLIRError, ValueError):
        return None


def _units(text: str, plans: dict, weights: dict, cpus: int) -> list[_Unit]:
    """The entries to compile (each split function's parts, the other
    public functions) in at most ``cpus`` modules of about equal estimated
    work (largest first, each to the lightest module so far).  Which module
    an entry lands in does not change its code: each is lowered alone."""
    entries = []
    for name, weight in weights.items():
        if name in plans:
            entries += list(zip(plans[name].weights, plans[name].parts))
        else:
            entries.append((weight, name))
    entries.sort(key=lambda e: (-e[0], e[1]))
    bins = [[0, []] for _ in range(max(1, min(cpus, len(entries))))]
    for weight, name in entries:
        lightest = min(bins, key=lambda b: b[0])
        lightest[0] += weight
        lightest[1].append(name)
    return [_Unit(text, names, i, weight)
            for i, (weight, names) in enumerate(b for b in bins if b[1])]


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
