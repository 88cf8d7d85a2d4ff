"""rlx-to-linalg: lowers every rlx and grad op to linalg, tensor, arith,
math and scf on tensors."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from .. import _compat
from ..dialects.infer import ALL_ELEMENT_TYPES
from ..dialects.verify import RESOURCE_OPS, resource_problems, verify_op
from ..ir import function_type, functions, symbol_name, walk
from ..passes.base import ModulePass, option
from .linalg import LOWERINGS, TUPLE_OPS, flatten_tuples, flatten_type, patterns
from .linalg import reduce
from .linalg.bools import retype_bools
from .linalg.scalars import fill_from_elements
from .linalg.tuples import TupleError

__all__ = ["RlxToLinalg", "LAYOUTS"]

# Layout attributes (Relax names) and the only value each op supports.
LAYOUTS = {
    "rlx.conv2d": {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW"},
    "rlx.conv2d_transpose": {"data_layout": "NCHW", "kernel_layout": "IOHW",
                             "out_layout": "NCHW"},
    **{f"rlx.{n}": {"layout": "NCHW", "out_layout": "NCHW"}
       for n in ("max_pool2d", "avg_pool2d", "max_pool2d_backward", "avg_pool2d_backward")},
}
_TAKE_MODES = ("fast", "clip", "wrap")


# No single buffer may exceed this: larger ones cannot be allocated on any
# machine gradir targets, and their byte sizes can overflow int64.  Refusing
# them here beats a NULL malloc in the compiled code.
MAX_TENSOR_BYTES = 1 << 40      # 1 TiB


def _type_problem(t: ir.Type) -> str | None:
    """Why ``t`` cannot be lowered, or None."""
    for leaf in flatten_type(t):
        if not isinstance(leaf, ir.RankedTensorType):
            return f"type {leaf} is not supported (only ranked tensors and tuples of them)"
        if not leaf.has_static_shape:
            return f"dynamic shapes are not supported: {leaf}"
        if leaf.encoding is not None:
            return f"tensor encodings are not supported: {leaf}"
        count = 1
        for n in leaf.shape:
            count *= n
        width = max(1, (getattr(leaf.element_type, "width", 8) + 7) // 8)
        if count * width > MAX_TENSOR_BYTES:
            return (f"{leaf} is too large ({count} elements; one buffer may hold at most "
                    f"{MAX_TENSOR_BYTES >> 30} GiB)")
        if str(leaf.element_type) not in ALL_ELEMENT_TYPES:
            return (f"element type {leaf.element_type} of {leaf} is not supported (one of "
                    f"{', '.join(ALL_ELEMENT_TYPES)})")
    return None


def _attr_str(op, name):
    a = op.attributes[name] if name in op.attributes else None
    return ir.StringAttr(a).value if isinstance(a, ir.StringAttr) else None


def _op_problems(op) -> list[str]:
    name = op.name
    for attr, want in LAYOUTS.get(name, {}).items():
        got = _attr_str(op, attr) if attr in op.attributes else None
        if got is not None and got != want:
            return [f"'{name}' op {attr} = \"{got}\" is not supported (only \"{want}\")"]
    if name == "scf.for":
        return verify_op(op)    # a constant step <= 0
    if name.startswith(("rlx.", "grad.")):
        errors = verify_op(op)
        if errors:
            return errors
        if name not in LOWERINGS and name not in TUPLE_OPS:
            return [f"'{name}' has no lowering to linalg"]
    if name == "arith.constant" and not isinstance(op.results[0].type,
                                                   (ir.RankedTensorType, ir.TupleType)):
        return []   # index/integer/float scalars (loop bounds, conditions)
    if name.startswith(("rlx.", "grad.")) or name in ("func.call", "arith.constant"):
        for v in list(op.operands) + list(op.results):
            problem = _type_problem(v.type)
            if problem:
                return [f"'{name}' op {problem}"]
    if name == "rlx.take" and "mode" in op.attributes:
        mode = _attr_str(op, "mode")
        if mode not in _TAKE_MODES:
            return [f"'rlx.take' op unknown mode {op.attributes['mode']} (one of "
                    f"{', '.join(_TAKE_MODES)})"]
    return []


def _empty_results(ops: list) -> list:
    """Replaces each rlx op whose results all have no element (a static
    shape with a 0 dimension) by ``tensor.empty`` ops: there is nothing to
    compute, and the lowerings and the CPU schedule's tiling of a zero-size
    dimension crashed (conv2d with 0 output channels: an assertion in
    linalg's tiling; max_pool2d of a batch of 0 images, strided_slice of an
    empty tensor).  ``ops``: the module's rlx ops; returns those left."""
    left = []
    for op in ops:
        results = list(op.results)
        if not results or len(op.regions):
            left.append(op)
            continue
        if not all(isinstance(r.type, ir.RankedTensorType)
                   and ir.RankedTensorType(r.type).has_static_shape
                   and 0 in ir.RankedTensorType(r.type).shape for r in results):
            left.append(op)
            continue
        with op.location:
            for r in results:
                empty = ir.Operation.create("tensor.empty", results=[r.type], operands=[],
                                            ip=ir.InsertionPoint(op))
                r.replace_all_uses_with(empty.result)
        op.erase()
    return left


# What a reduction over no element gives (numpy's answers; max and min of
# nothing are refused by rlx-verify).
_EMPTY_REDUCTION = {"rlx.sum": 0.0, "rlx.prod": 1.0, "rlx.mean": float("nan"),
                    "rlx.variance": float("nan")}


def _empty_reductions(ops: list) -> None:
    """Replaces each reduction of an operand with no element (a reduced axis
    of size 0) whose result has elements by a splat constant: the GPU
    pipeline's reduction kernels summed nothing into NaN."""
    for op in ops:
        if op.name not in _EMPTY_REDUCTION or len(op.operands) != 1 or len(op.results) != 1:
            continue
        src, res = op.operands[0].type, op.results[0].type
        if not (isinstance(src, ir.RankedTensorType) and isinstance(res, ir.RankedTensorType)
                and src.has_static_shape and res.has_static_shape
                and 0 in src.shape and 0 not in res.shape):
            continue
        res = ir.RankedTensorType(res)
        value = _EMPTY_REDUCTION[op.name]
        elt = res.element_type
        if isinstance(elt, ir.FloatType):
            scalar = ir.FloatAttr.get(elt, value)
        elif isinstance(elt, ir.IntegerType) and value == value:    # not NaN
            scalar = ir.IntegerAttr.get(elt, int(value))
        else:
            continue
        with op.location:
            const = ir.Operation.create(
                "arith.constant", results=[res], operands=[],
                attributes={"value": ir.DenseElementsAttr.get_splat(res, scalar)},
                ip=ir.InsertionPoint(op))
        op.results[0].replace_all_uses_with(const.result)
        op.erase()


def _nested_modules_with_rlx(module: ir.Operation) -> list:
    """Modules directly inside ``module`` that hold rlx or grad ops."""
    out = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "builtin.module" and any(
                inner.name.startswith(("rlx.", "grad.")) for inner in walk(op)):
            out.append(op)
    return out


def _recursive_calls(module: ir.Operation) -> list:
    """``func.call`` ops that are part of a cycle of the call graph."""
    calls: dict[str, list] = {}
    for fn in functions(module):
        name = symbol_name(fn)
        calls[name] = [(op, ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
                       for op in walk(fn) if op.name == "func.call"]

    def reaches(start: str, target: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            f = todo.pop()
            if f == target:
                return True
            if f in seen:
                continue
            seen.add(f)
            todo.extend(callee for _, callee in calls.get(f, ()))
        return False

    return [op for caller, ops in calls.items() for op, callee in ops
            if reaches(callee, caller)]


# Symbols the compiled code itself calls or defines: the allocator and C
# library functions the lowering emits calls to, libm functions (opt level 0
# calls them), the OpenMP and GPU runtimes, the C interfaces, the run-time
# checks (gradir_check_*: conversion/cpu/runtime_checks.py).  A function of
# the program with such a name took their place (a function @free was called
# as the deallocator: "free(): invalid pointer", SIGABRT).
_RESERVED_NAMES = frozenset((
    "malloc", "free", "calloc", "realloc", "aligned_alloc", "posix_memalign", "abort",
    "memcpy", "memmove", "memset", "memrefCopy", "exit", "printf", "puts",
    "expf", "exp", "logf", "log", "tanhf", "tanh", "erff", "erf", "powf", "pow",
    "sqrtf", "sqrt", "fmaf", "fma", "sinf", "sin", "cosf", "cos", "log1pf", "log1p",
    "expm1f", "expm1", "atan2f", "atan2", "fabsf", "fabs", "floorf", "floor", "ceilf", "ceil",
    "roundf", "round", "fmodf", "fmod", "fputs", "stderr",
    # what an exported library defines besides the functions
    "gradir_signatures", "gradir_signatures_sha", "gradir_cpu_target", "gradir_target",
    "gradir_glue_oom", "gradir_load_kernels", "gradir_unload_kernels"))
_RESERVED_PREFIXES = ("_mlir_", "__kmpc_", "kmp_", "omp_", "mgpu", "llvm.", "__",
                      "gradir_orc_", "gradir_check_")


def _reserved_name(name: str) -> str | None:
    if name in _RESERVED_NAMES or name.startswith(_RESERVED_PREFIXES):
        return (f"function name '@{name}' is reserved: the compiled code calls or defines a "
                f"symbol of that name (the C library, libm, the OpenMP or GPU runtime, "
                f"MLIR's C interfaces, an exported library's metadata, the run-time checks); "
                f"rename the function")
    return None


def _calls_without_body(module: ir.Operation) -> list:
    """``(call, callee)`` for each ``func.call`` of a function of ``module``
    to a function declared without a body (nothing to compile; the JIT
    failed to find its symbol, with an unlocated error)."""
    bodiless = {symbol_name(fn) for fn in functions(module) if not len(fn.regions[0].blocks)}
    if not bodiless:
        return []
    out = []
    for fn in functions(module):
        for op in walk(fn):
            if op.name == "func.call":
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                if callee in bodiless:
                    out.append((op, callee))
    return out


@dataclass(frozen=True)
class RlxToLinalg(ModulePass):
    """Lowers rlx and grad ops to linalg, tensor, arith, math and scf.

    Named linalg ops where upstream has one (matmul, batch_matmul,
    conv_2d_nchw_fchw, conv_2d_ngchw_gfchw, pooling_nchw_max/sum, fill,
    transpose, broadcast, reduce), ``linalg.generic`` otherwise (elementwise
    ops with numpy broadcasting in their indexing maps, fused reductions,
    gathers).  Results match the reference interpreter (``gradir.interp``).
    Tuples are flattened: functions take and return the tuples' tensors
    depth-first and keep their original type in ``gradir.original_type``.
    Dynamic shapes and element types outside f16/bf16/f32/f64/i1/i32/i64 are
    refused with an error at the op.

        %0 = "rlx.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    becomes
        %e = tensor.empty() : tensor<4xf32>
        %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
               ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
        ^bb0(%in: f32, %out: f32):
          %cst = arith.constant 0.000000e+00 : f32
          %m = arith.maximumf %in, %cst : f32
          linalg.yield %m : f32
        } -> tensor<4xf32>
    """

    name = "rlx-to-linalg"

    sum_block: int = option(0, "sum float reductions longer than this in blocks of it, then "
                               "the partial sums (pairwise-like accuracy); 0: sequential")

    matmul_kernels: bool = option(False, "2-D f32/f64 matmuls as linalg.contract {gradir.kernel}, "
                                         "called in gradir's kernel library after bufferization "
                                         "(rlx-matmul-kernels), not tiled by the CPU schedule")

    pool_kernels: bool = option(False, "f32/f64 max pools with 2x2 windows of stride 2, their "
                                       "backward and the average pools' backward as ops "
                                       "rlx-pool-kernels turns into calls of gradir's pooling "
                                       "kernels after bufferization")

    direct_convolutions: bool = option(False, "convolutions (and their gradients) as one "
                                              "linalg.generic over the whole batch, read in "
                                              "place by the GPU's implicit-GEMM kernels; "
                                              "false: im2col GEMMs per block of images (CPU)")

    index_checks: bool = option(False, "mark the gathers of rlx.take (mode \"fast\") and "
                                       "rlx.nll_loss (gradir.index_check) for the CPU's run-time "
                                       "range check of their indices (rlx-lower-to-llvm adds it)")

    def __post_init__(self):
        if self.sum_block < 0 or self.sum_block == 1:
            raise self.bad_option("sum-block", "be 0 or at least 2", self.sum_block)

    def apply(self, module: ir.Operation) -> None:
        module = module.operation
        failed = False
        for nested in _nested_modules_with_rlx(module):
            self.error(nested, "rlx ops in a nested module are not lowered: rlx-to-linalg "
                               "(and the CPU pipeline) lower the functions of the module "
                               "they run on; move them to the top-level module")
            failed = True
        for call, callee in _calls_without_body(module):
            self.error(call, f"the call to '@{callee}' cannot be compiled: '@{callee}' is "
                             "declared without a body (define it in the module)")
            failed = True
        for call in _recursive_calls(module):
            self.error(call, "recursive calls cannot be compiled (the compiled code has no "
                             "control flow to end the recursion)")
            failed = True
        for fn in functions(module):
            reserved = _reserved_name(symbol_name(fn))
            if reserved:
                self.error(fn, reserved)
                failed = True
            ftype = function_type(fn)
            for kind, types in (("argument", ftype.inputs), ("result", ftype.results)):
                for i, t in enumerate(types):
                    problem = _type_problem(t)
                    if problem:
                        self.error(fn, f"function {kind} #{i}: {problem}")
                        failed = True
            for op in walk(fn):
                for message in _op_problems(op):
                    self.error(op, message)
                    failed = True
        holders = _compat.collect_ops(module, lambda o: o.name in RESOURCE_OPS)
        for loc, message in resource_problems(module, holders):
            self.error(loc, message)
            failed = True
        if failed:
            raise self.failure()
        try:
            flatten_tuples(module)
        except TupleError as err:
            self.error(err.op, str(err))
            raise self.failure() from None
        retype_bools(module)
        fill_from_elements(module)      # loop indices as 0-d tensors (scf bodies)
        # one walk for both (rlx ops only)
        _empty_reductions(_empty_results(
            _compat.collect_ops(module, lambda o: o.name.startswith("rlx."))))
        from .linalg.matmul import fold_batch_sums, isolate_kernel_operands, matmul_kernels
        from .linalg.pooling import pool_kernels
        from .linalg.conv_direct import direct_convolutions
        from .linalg.linalg_utils import index_checks
        fold_batch_sums(module)     # weight gradients of batched matmuls: one 2-D matmul
        with reduce.sum_blocks(self.sum_block), matmul_kernels(self.matmul_kernels), \
                pool_kernels(self.pool_kernels), direct_convolutions(self.direct_convolutions), \
                index_checks(self.index_checks):
            _compat.apply_patterns(module, patterns())
        if self.matmul_kernels:
            isolate_kernel_operands(module)
        # MLIR's walk: the lowered ops are not wrapped for Python (wrapping a
        # linalg op would import mlir.dialects.linalg, see _compat.linalg)
        for op in _compat.collect_ops(module, lambda o: o.name.startswith(("rlx.", "grad."))):
            self.error(op, f"failed to lower '{op.name}'")
            failed = True
        if failed:
            raise self.failure()
