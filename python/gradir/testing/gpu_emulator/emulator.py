"""The emulator's core: evaluation of blocks under lane masks, structured
control flow, kernel launches (``gpu.launch`` and outlined ``gpu.func``s
started by a fake driver) and the GPU index ops."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ...ir import find_function
from .host import HostOps
from .memory import MemoryOps
from .scalar_ops import ELEMENTWISE
from .tensor_cores import TensorCoreOps
from .async_copies import AsyncCopyOps
from .tma import TmaOps
from .wgmma import WgmmaOps
from .values import Alloc, Buf, EmulationError, Kernel, as_op, dtype_of, fresh

__all__ = ["Emulator", "STATIC_SMEM", "OPTIN_SMEM"]

# Workgroup (shared) memory per block: static (the kernel's workgroup
# buffers) at most 48 KiB; static and dynamic (the launch's
# dynamic_shared_memory_size) together at most sm_90's 227 KiB, which the
# runtime allows a function with cuFuncSetAttribute (the fake driver checks
# that call; here every dynamic size is taken as allowed).
STATIC_SMEM = 48 * 1024
OPTIN_SMEM = 227 * 1024


class Emulator(AsyncCopyOps, TmaOps, WgmmaOps, HostOps, MemoryOps, TensorCoreOps):
    """Runs host functions and their kernels (see the package docstring)."""

    def __init__(self, module: ir.Operation):
        self.module = as_op(module)
        self.launches = 0               # gpu.launches run so far, every call together
        self.last_launches = 0          # gpu.launches run by the last call
        self.kernel: Kernel | None = None
        self.globals = {}
        self.llvm_globals = {}          # llvm.mlir.global name -> current value
        self.llvm_string_globals = {}   # name -> text (run-time checks' messages)
        self.failed_check = None        # the first failed run-time check of a call
        self.addresses = {}             # fake device address -> Alloc
        self.next_address = 1 << 32
        self._foreign = {}              # (address, size) -> Alloc of process memory
        for op in self.module.regions[0].blocks[0].operations:
            op = as_op(op)
            name = ir.StringAttr(op.attributes["sym_name"]).value \
                if "sym_name" in op.attributes else None
            if op.name == "memref.global":
                self.globals[name] = op
            elif op.name == "llvm.mlir.global":
                value = op.attributes["value"] if "value" in op.attributes else None
                if isinstance(value, ir.StringAttr):      # a check's message
                    self.llvm_string_globals[name] = value.value.rstrip("\0")
                    continue
                self.llvm_globals[name] = np.int64(ir.IntegerAttr(value).value) \
                    if isinstance(value, ir.IntegerAttr) else np.int64(0)

    # -- entry ------------------------------------------------------------------
    def call(self, name: str, args: list[np.ndarray]) -> None:
        """Runs ``@name`` on host buffers ``args`` (inputs, then outputs);
        ``last_launches`` is then the number of kernels it launched."""
        fn = find_function(self.module, name)
        if fn is None:
            raise EmulationError(f"no function @{name}")
        block = fn.regions[0].blocks[0]
        env = {}
        for a, arr in zip(block.arguments, args):
            alloc = Alloc(arr, device=False)
            env[a] = Buf(alloc, arr, alloc.ids)
        self.kernel = None
        start = self.launches
        self.failed_check = None
        try:
            self._block(block, env, None)
        finally:
            self.last_launches = self.launches - start
        if self.failed_check is not None:
            from gradir.runtime import ExecutionError
            raise ExecutionError(name, self.failed_check)

    # -- evaluation -------------------------------------------------------------------
    def _block(self, block: ir.Block, env: dict, mask):
        for op in block.operations:
            op = as_op(op)
            name = op.name
            if name in ("scf.yield", "scf.condition", "func.return", "gpu.terminator",
                        "gpu.yield", "gpu.return"):
                return [env[v] for v in op.operands]
            handler = getattr(self, "_op_" + name.replace(".", "_"), None)
            if handler is None:
                fn = ELEMENTWISE.get(name)
                if fn is None:
                    raise EmulationError(f"{op.location}: the emulator has no rule for "
                                         f"'{name}'")
                with np.errstate(all="ignore"):
                    results = fn(op, *[env[v] for v in op.operands])
                if not isinstance(results, (list, tuple)):
                    results = [results]
            else:
                results = handler(op, env, mask)
            for r, v in zip(op.results, results or []):
                env[r] = v
        return []

    def _where(self, mask, new, old):
        if mask is None:
            return new
        return np.where(mask, new, old)

    # -- control flow ---------------------------------------------------------------------
    def _op_scf_for(self, op, env, mask):
        lb, ub, step = (env[v] for v in list(op.operands)[:3])
        inits = [env[v] for v in list(op.operands)[3:]]
        body = op.regions[0].blocks[0]
        args = list(body.arguments)
        uniform = all(np.ndim(x) == 0 for x in (lb, ub, step)) and mask is None
        if uniform:
            iters = inits
            for i in range(int(lb), int(ub), int(step)):
                env[args[0]] = np.int64(i)
                for a, v in zip(args[1:], iters):
                    env[a] = v
                iters = self._block(body, env, None)
            return iters
        n = self._lanes()
        iv = np.broadcast_to(np.asarray(lb, np.int64), (n,)).copy()
        ub = np.broadcast_to(np.asarray(ub, np.int64), (n,))
        step = np.asarray(step, np.int64)
        base = np.ones(n, bool) if mask is None else mask
        active = base & (iv < ub)
        iters = [np.broadcast_to(np.asarray(v), (n,)).copy() for v in inits]
        while active.any():
            env[args[0]] = iv
            for a, v in zip(args[1:], iters):
                env[a] = v
            new = self._block(body, env, active)
            iters = [np.where(active, nv, ov) for nv, ov in zip(new, iters)]
            iv = iv + step
            active = active & (iv < ub)
        return iters

    def _op_scf_while(self, op, env, mask):
        """Host loops only (kernels have no scf.while)."""
        self._host_only(op)
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        vals = [env[v] for v in op.operands]
        while True:
            for a, v in zip(before.arguments, vals):
                env[a] = v
            cond, *passed = self._block(before, env, None)
            if not bool(cond):
                return passed
            for a, v in zip(after.arguments, passed):
                env[a] = v
            vals = self._block(after, env, None)

    def _op_scf_if(self, op, env, mask):
        cond = env[op.operands[0]]
        then_b = op.regions[0].blocks[0]
        else_b = op.regions[1].blocks[0] if len(op.regions[1].blocks) else None
        if np.ndim(cond) == 0 and mask is None:
            if cond:
                return self._block(then_b, env, None)
            return self._block(else_b, env, None) if else_b is not None else []
        n = self._lanes()
        cond = np.broadcast_to(np.asarray(cond, bool), (n,))
        base = np.ones(n, bool) if mask is None else mask
        tm, em = base & cond, base & ~cond
        tres = self._block(then_b, env, tm) if tm.any() else None
        eres = self._block(else_b, env, em) if else_b is not None and em.any() else None
        if not op.results:
            return []
        if tres is None:
            return eres
        if eres is None:
            return tres
        return [np.where(cond, t, e) for t, e in zip(tres, eres)]

    def _lanes(self) -> int:
        return 1 if self.kernel is None else self.kernel.n

    # -- kernels --------------------------------------------------------------------------
    def _op_gpu_launch(self, op, env, mask):
        self._host_only(op)
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) \
            if "operandSegmentSizes" in op.attributes else [0] + [1] * 6
        if segments[0] or len(segments) > 7 and any(segments[7:-1]):
            raise EmulationError(f"{op.location}: async and cluster launches are not "
                                 "supported")
        sizes = [int(env[v]) for v in list(op.operands)[:6]]
        dynamic = int(env[op.operands[6]]) if len(op.operands) > 6 else 0
        body = op.regions[0].blocks[0]
        args = list(body.arguments)
        kenv = dict(env)
        for a, v in zip(args[6:12], sizes):
            kenv[a] = np.int64(v)
        self._launch(op, body, sizes[:3], sizes[3:], kenv, args[:6], args[12:], dynamic)
        return []

    def run_kernel(self, func: ir.Operation, grid, block, args: list,
                   dynamic_smem: int = 0) -> None:
        """Runs an outlined ``gpu.func`` kernel on ``args`` (Bufs for memrefs,
        numpy scalars otherwise), e.g. for a launch caught by a fake driver,
        with ``dynamic_smem`` bytes of dynamic workgroup memory per block."""
        func = as_op(func)
        body = func.regions[0].blocks[0]
        n = len(args)
        n_wg = int(ir.IntegerAttr(func.attributes["workgroup_attributions"]).value) \
            if "workgroup_attributions" in func.attributes else 0
        params = list(body.arguments)
        kenv = dict(zip(params[:n], args))
        self._launch(func, body, list(grid), list(block), kenv, None, params[n:n + n_wg],
                     dynamic_smem)

    def _launch(self, op, body, grid, block, kenv, id_args, workgroup_args, dynamic=0):
        if block[0] * block[1] * block[2] > 1024:
            raise EmulationError(f"{op.location}: {block} exceeds 1024 threads per block")
        if grid[1] > 65535 or grid[2] > 65535 or grid[0] >= 2 ** 31:
            raise EmulationError(f"{op.location}: grid {grid} exceeds the CUDA limits")
        static = sum(int(np.prod(a.type.shape)) * np.dtype(dtype_of(a.type.element_type))
                     .itemsize for a in workgroup_args)
        if static > STATIC_SMEM:
            raise EmulationError(f"{op.location}: {static} bytes of static workgroup memory "
                                 f"per block exceed {STATIC_SMEM} (48 KiB)")
        if dynamic < 0 or static + dynamic > OPTIN_SMEM:
            raise EmulationError(f"{op.location}: {static} bytes of static and {dynamic} of "
                                 f"dynamic workgroup memory per block exceed {OPTIN_SMEM} "
                                 "(227 KiB)")
        self.launches += 1
        k = Kernel(grid, block, self.launches)
        k.dynamic = None
        if dynamic:
            data = fresh([k.nblocks, dynamic], np.uint8)
            alloc = Alloc(data, device=True, blocks=k.nblocks)
            alloc.dynamic = True
            k.dynamic = Buf(alloc, data, alloc.ids)
        if id_args is not None:
            t = k.lane % k.tpb
            b = k.block_of
            ids = [b % grid[0], (b // grid[0]) % grid[1], b // (grid[0] * grid[1]),
                   t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1])]
            for a, v in zip(id_args, ids):
                kenv[a] = v
        for a in workgroup_args:
            mt = a.type
            data = fresh([k.nblocks] + list(mt.shape), dtype_of(mt.element_type))
            alloc = Alloc(data, device=True, blocks=k.nblocks)
            kenv[a] = Buf(alloc, data, alloc.ids)
        k.written = set()
        for inner in walk_ops(body):
            if inner.name == "memref.store":
                root = view_root(inner.operands[1])
                if root in kenv:
                    k.written.add(id(kenv[root].alloc))
        self.kernel = k
        try:
            self._block(body, kenv, None)
        finally:
            self.kernel = None

    def _op_gpu_dynamic_shared_memory(self, op, env, mask):
        """The block's dynamic workgroup memory (``memref<?xi8>``)."""
        k = self.kernel
        if k is None or k.dynamic is None:
            raise EmulationError(f"{op.location}: gpu.dynamic_shared_memory in a launch "
                                 "without dynamic shared memory")
        return [k.dynamic]

    def foreign_buffer(self, base: int, size: int, dtype, shape, byte_offset: int,
                       strides) -> Buf:
        """A device Buf over ``size`` bytes of process memory at ``base``
        (one allocation, shared by every view of it): ``shape``/``strides``
        in elements, ``byte_offset`` from ``base``."""
        import ctypes
        alloc = self._foreign.get((base, size))
        if alloc is None:
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * max(size, 1)).from_address(base))
            alloc = Alloc(raw[:size], device=True)
            alloc.address = base
            self._foreign[(base, size)] = alloc
        dtype = np.dtype(dtype)
        bstrides = tuple(int(st) * dtype.itemsize for st in strides)
        data = np.ndarray(tuple(shape), dtype, buffer=alloc.data, offset=byte_offset,
                          strides=bstrides)
        ids = np.lib.stride_tricks.as_strided(
            alloc.ids[byte_offset:], tuple(shape),
            tuple(st * alloc.ids.itemsize for st in bstrides))
        return Buf(alloc, data, ids)

    def _op_affine_apply(self, op, env, mask):
        amap = ir.AffineMapAttr(op.attributes["map"]).value
        vals = [env[v] for v in op.operands]
        dims, syms = vals[:amap.n_dims], vals[amap.n_dims:]
        return [affine_value(amap.results[0], dims, syms)]

    def _gpu_id(self, which):
        def handler(self, op, env, mask):
            k = self.kernel
            dim = str(op.attributes["dimension"]).split("<")[-1].rstrip(">")
            d = "xyz".index(dim[-1])
            t = k.lane % k.tpb
            b = k.block_of
            g, bl = k.grid, k.block
            if which == "thread":
                v = [t % bl[0], (t // bl[0]) % bl[1], t // (bl[0] * bl[1])][d]
            elif which == "block":
                v = [b % g[0], (b // g[0]) % g[1], b // (g[0] * g[1])][d]
            elif which == "block_dim":
                v = np.int64(bl[d])
            else:
                v = np.int64(g[d])
            return [v]
        return handler


Emulator._op_gpu_thread_id = Emulator._gpu_id(None, "thread")
Emulator._op_gpu_block_id = Emulator._gpu_id(None, "block")
Emulator._op_gpu_block_dim = Emulator._gpu_id(None, "block_dim")
Emulator._op_gpu_grid_dim = Emulator._gpu_id(None, "grid_dim")


def view_root(v: ir.Value) -> ir.Value:
    while isinstance(v.owner, (ir.Operation, ir.OpView)) and \
            as_op(v.owner).name.startswith("memref.") and as_op(v.owner).name in VIEWS:
        v = as_op(v.owner).operands[0]
    return v


VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast")


def walk_ops(block: ir.Block):
    for op in block.operations:
        op = as_op(op)
        yield op
        for region in op.regions:
            for b in region.blocks:
                yield from walk_ops(b)


def affine_value(expr, dims, syms):
    if isinstance(expr, ir.AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return syms[expr.position]
    if isinstance(expr, ir.AffineConstantExpr):
        return np.int64(expr.value)
    lhs, rhs = affine_value(expr.lhs, dims, syms), affine_value(expr.rhs, dims, syms)
    if isinstance(expr, ir.AffineAddExpr):
        return lhs + rhs
    if isinstance(expr, ir.AffineMulExpr):
        return lhs * rhs
    if isinstance(expr, ir.AffineModExpr):
        return np.mod(lhs, rhs)
    if isinstance(expr, ir.AffineFloorDivExpr):
        return np.floor_divide(lhs, rhs)
    if isinstance(expr, ir.AffineCeilDivExpr):
        return -np.floor_divide(-lhs, rhs)
    raise EmulationError(f"affine expression {expr} is not supported")
