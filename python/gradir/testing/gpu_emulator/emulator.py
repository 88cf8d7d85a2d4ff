"""A lockstep SIMT emulator of gradir's GPU code, for testing without a GPU.

It runs a module after the ``kernels`` stage of the NVVM pipeline (host
functions that ``gpu.alloc``/``gpu.memcpy``/``gpu.launch``, kernels as
``gpu.launch`` bodies on device buffers) with numpy: every kernel runs all
threads of all blocks in lockstep, each SSA value being an array over the
threads (uniform values stay scalars), control flow under masks.  It is
strict where a GPU is undefined, so tests catch what a real run would get
wrong only sometimes:

* data races: two threads touching the same element of device or
  workgroup memory in one barrier interval, one of them writing (threads
  of different blocks: anywhere in one launch) -- so a missing
  ``gpu.barrier`` is an error even though lockstep order would hide it;
* ``gpu.barrier`` reached by part of a block (divergent barrier);
* out-of-bounds loads and stores, use after ``gpu.dealloc``, host code
  reading or writing device memory (anything but ``gpu.memcpy``), device
  code touching host memory;
* fresh device and workgroup buffers hold NaN (floats) or a junk pattern
  (integers), so reading uninitialised memory shows in the results.

``run(module, "f", *inputs)`` returns the output buffers of ``@f`` (the
bufferized ABI: inputs, then outputs).
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

__all__ = ["EmulationError", "run", "Emulator"]

_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
       "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64}
_UNSIGNED = {np.dtype(np.int8): np.uint8, np.dtype(np.int16): np.uint16,
             np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64,
             np.dtype(np.bool_): np.bool_}


class EmulationError(Exception):
    pass


def _dtype(t: ir.Type):
    key = str(t)
    if key not in _NP:
        raise EmulationError(f"type {t} is not supported by the emulator")
    return _NP[key]


def _op(x):
    return x.operation if hasattr(x, "operation") else x


class _Alloc:
    """One allocation: data, flat element ids, race trackers."""

    def __init__(self, data: np.ndarray, device: bool, blocks: int = 0):
        self.data = data
        self.device = device
        self.workgroup = blocks > 0
        self.freed = False
        n = data.size
        self.ids = np.arange(n, dtype=np.int64).reshape(data.shape)
        self.w_launch = np.full(n, -1, np.int64)
        self.w_epoch = np.full(n, -1, np.int64)
        self.w_lane = np.full(n, -1, np.int64)
        self.r_launch = np.full(n, -1, np.int64)
        self.r_epoch = np.full(n, -1, np.int64)
        self.r_lane = np.full(n, -1, np.int64)    # -2: several lanes
        self.r_block = np.full(n, -1, np.int64)   # -2: several blocks


class Buf:
    """A memref value: a numpy view of an allocation and its element ids."""

    def __init__(self, alloc: _Alloc, data: np.ndarray, ids: np.ndarray):
        self.alloc, self.data, self.ids = alloc, data, ids

    def view(self, fn) -> "Buf":
        return Buf(self.alloc, fn(self.data), fn(self.ids))


def _fresh(shape, dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return np.full(shape, np.nan, dtype)
    if dtype == np.bool_:
        return np.ones(shape, dtype)
    return np.full(shape, 0x5A5A5A5A5A5A5A5A & np.iinfo(dtype).max, dtype)


class _Kernel:
    """Lane geometry of one launch."""

    def __init__(self, grid, block, launch_id):
        self.grid, self.block = grid, block
        self.tpb = block[0] * block[1] * block[2]
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.n = self.tpb * self.nblocks
        lane = np.arange(self.n, dtype=np.int64)
        self.lane = lane
        self.block_of = lane // self.tpb
        self.launch = launch_id
        self.epoch = 0


class Emulator:
    def __init__(self, module: ir.Operation):
        self.module = _op(module)
        self.launches = 0
        self.kernel: _Kernel | None = None
        self.globals = {}
        self.llvm_globals = {}          # llvm.mlir.global name -> current value
        self.addresses = {}             # fake device address -> _Alloc
        self.next_address = 1 << 32
        self._foreign = {}              # (address, size) -> _Alloc of process memory
        for op in self.module.regions[0].blocks[0].operations:
            op = _op(op)
            name = ir.StringAttr(op.attributes["sym_name"]).value \
                if "sym_name" in op.attributes else None
            if op.name == "memref.global":
                self.globals[name] = op
            elif op.name == "llvm.mlir.global":
                value = op.attributes["value"] if "value" in op.attributes else None
                self.llvm_globals[name] = np.int64(ir.IntegerAttr(value).value) \
                    if isinstance(value, ir.IntegerAttr) else np.int64(0)

    # -- entry ------------------------------------------------------------------
    def call(self, name: str, args: list[np.ndarray]) -> None:
        fn = None
        for op in self.module.regions[0].blocks[0].operations:
            op = _op(op)
            if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
                fn = op
        if fn is None:
            raise EmulationError(f"no function @{name}")
        block = fn.regions[0].blocks[0]
        env = {}
        for a, arr in zip(block.arguments, args):
            alloc = _Alloc(arr, device=False)
            env[a] = Buf(alloc, arr, alloc.ids)
        self.kernel = None
        self._block(block, env, None)

    # -- evaluation -------------------------------------------------------------------
    def _block(self, block: ir.Block, env: dict, mask):
        for op in block.operations:
            op = _op(op)
            name = op.name
            if name in ("scf.yield", "func.return", "gpu.terminator", "gpu.yield", "gpu.return"):
                return [env[v] for v in op.operands]
            handler = getattr(self, "_op_" + name.replace(".", "_"), None)
            if handler is None:
                fn = _ELEMENTWISE.get(name)
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

    # -- host-level ---------------------------------------------------------------------
    def _op_arith_constant(self, op, env, mask):
        attr = op.attributes["value"]
        t = op.results[0].type
        if isinstance(t, (ir.RankedTensorType, ir.VectorType)):
            raise EmulationError("tensor/vector constants are not supported")
        if isinstance(attr, ir.FloatAttr):
            return [_dtype(t)(attr.value)]
        if isinstance(attr, ir.BoolAttr):
            return [np.bool_(attr.value)]
        v = ir.IntegerAttr(attr).value
        if str(t) == "i1":
            return [np.bool_(v & 1)]
        return [np.array(v).astype(_dtype(t))[()]]

    def _op_gpu_alloc(self, op, env, mask):
        self._host_only(op)
        t = op.results[0].type
        data = _fresh(t.shape, _dtype(t.element_type))
        alloc = _Alloc(data, device=True)
        alloc.address = self.next_address
        self.addresses[alloc.address] = alloc
        self.next_address += 1 << 32
        return [Buf(alloc, data, alloc.ids)]

    # LLVM glue of resident buffers and arenas: host globals holding device
    # addresses, and memref descriptors built from them.
    def _op_llvm_mlir_addressof(self, op, env, mask):
        return [("global", ir.FlatSymbolRefAttr(op.attributes["global_name"]).value)]

    def _op_llvm_load(self, op, env, mask):
        kind, name = env[op.operands[0]]
        return [self.llvm_globals[name]]

    def _op_llvm_store(self, op, env, mask):
        kind, name = env[op.operands[1]]
        self.llvm_globals[name] = np.int64(env[op.operands[0]])
        return []

    def _op_llvm_mlir_undef(self, op, env, mask):
        return [{}]

    def _op_llvm_insertvalue(self, op, env, mask):
        struct = dict(env[op.operands[0]])
        pos = tuple(ir.DenseI64ArrayAttr(op.attributes["position"]))
        struct[pos] = env[op.operands[1]]
        return [struct]

    def _op_llvm_inttoptr(self, op, env, mask):
        return [np.int64(env[op.operands[0]])]

    def _op_memref_extract_aligned_pointer_as_index(self, op, env, mask):
        buf = env[op.operands[0]]
        if not hasattr(buf.alloc, "address"):
            raise EmulationError(f"{op.location}: address of a buffer that is not a "
                                 "gpu.alloc")
        return [np.int64(buf.alloc.address)]

    def _op_builtin_unrealized_conversion_cast(self, op, env, mask):
        struct = env[op.operands[0]]
        t = op.results[0].type
        if not isinstance(struct, dict) or not isinstance(t, ir.MemRefType):
            raise EmulationError(f"{op.location}: unsupported unrealized_conversion_cast")
        alloc = self.addresses.get(int(struct.get((1,), -1)))
        if alloc is None or alloc.freed:
            raise EmulationError(f"{op.location}: descriptor of an unknown or freed device "
                                 "address")
        if int(struct.get((2,), -1)) != 0 or alloc.data.shape != tuple(t.shape):
            raise EmulationError(f"{op.location}: descriptor does not match its allocation")
        return [Buf(alloc, alloc.data, alloc.ids)]

    def _op_memref_view(self, op, env, mask):
        src = env[op.operands[0]]
        off = int(env[op.operands[1]])
        t = op.results[0].type
        dtype = np.dtype(_dtype(t.element_type))
        n = int(np.prod(t.shape)) if t.shape else 1
        nbytes = n * dtype.itemsize
        if src.data.ndim != 1 or off < 0 or off + nbytes > src.data.size:
            raise EmulationError(f"{op.location}: memref.view out of the source buffer")
        if off % dtype.itemsize:
            raise EmulationError(f"{op.location}: misaligned memref.view")
        data = src.data[off:off + nbytes].view(dtype).reshape(t.shape)
        ids = src.ids[off:off + nbytes:dtype.itemsize].reshape(t.shape)
        return [Buf(src.alloc, data, ids)]

    def _op_gpu_dealloc(self, op, env, mask):
        self._host_only(op)
        buf = env[op.operands[0]]
        if not buf.alloc.device:
            raise EmulationError(f"{op.location}: gpu.dealloc of host memory")
        if buf.alloc.freed:
            raise EmulationError(f"{op.location}: double gpu.dealloc")
        buf.alloc.freed = True
        return []

    def _op_gpu_memcpy(self, op, env, mask):
        self._host_only(op)
        dst, src = env[op.operands[0]], env[op.operands[1]]
        for b in (dst, src):
            if b.alloc.freed:
                raise EmulationError(f"{op.location}: gpu.memcpy uses a freed buffer")
        if dst.data.shape != src.data.shape:
            raise EmulationError(f"{op.location}: gpu.memcpy shape mismatch")
        np.copyto(dst.data, src.data)
        return []

    def _op_memref_get_global(self, op, env, mask):
        name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
        g = self.globals[name]
        t = op.results[0].type
        attr = g.attributes["initial_value"]
        if getattr(attr, "is_splat", False):
            value = np.full(t.shape, _scalar_of(attr.get_splat_value()), _dtype(t.element_type))
        else:
            value = np.array(attr).astype(_dtype(t.element_type)).reshape(t.shape)
        alloc = _Alloc(value, device=False)
        return [Buf(alloc, value, alloc.ids)]

    def _host_only(self, op):
        if self.kernel is not None:
            raise EmulationError(f"{op.location}: '{op.name}' inside a kernel")

    # views (host or device)
    def _op_memref_subview(self, op, env, mask):
        src = env[op.operands[0]]
        dyn = iter(int(env[v]) for v in list(op.operands)[1:])
        dyn_off = ir.ShapedType.get_dynamic_stride_or_offset()
        dyn_size = ir.ShapedType.get_dynamic_size()

        def static(name, marker):
            return [next(dyn) if x == marker else x
                    for x in ir.DenseI64ArrayAttr(op.attributes[name])]
        offs = static("static_offsets", dyn_off)
        sizes = static("static_sizes", dyn_size)
        strides = static("static_strides", dyn_off)
        out_t = op.results[0].type
        sl = tuple(slice(o, o + s * st, st) for o, s, st in zip(offs, sizes, strides))

        def view(a):
            v = a[sl]
            if v.shape != tuple(sizes):
                raise EmulationError(f"{op.location}: subview out of bounds")
            return v.reshape(out_t.shape) if v.shape != tuple(out_t.shape) else v
        return [src.view(view)]

    def _reshape_view(self, op, env, mask):
        shape = tuple(op.results[0].type.shape)

        def view(a):
            try:
                return a.reshape(shape, copy=False)
            except (ValueError, TypeError) as err:
                raise EmulationError(f"{op.location}: reshape needs a copy: {err}") from None
        return [env[op.operands[0]].view(view)]

    _op_memref_expand_shape = _reshape_view
    _op_memref_collapse_shape = _reshape_view

    def _op_memref_cast(self, op, env, mask):
        return [env[op.operands[0]]]

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
        if len(op.operands) != 6:
            raise EmulationError(f"{op.location}: async launches are not supported")
        sizes = [int(env[v]) for v in op.operands]
        body = op.regions[0].blocks[0]
        args = list(body.arguments)
        kenv = dict(env)
        for a, v in zip(args[6:12], sizes):
            kenv[a] = np.int64(v)
        self._launch(op, body, sizes[:3], sizes[3:], kenv, args[:6], args[12:])
        return []

    def run_kernel(self, func: ir.Operation, grid, block, args: list) -> None:
        """Runs an outlined ``gpu.func`` kernel on ``args`` (Bufs for memrefs,
        numpy scalars otherwise), e.g. for a launch caught by a fake driver."""
        func = _op(func)
        body = func.regions[0].blocks[0]
        n = len(args)
        n_wg = int(ir.IntegerAttr(func.attributes["workgroup_attributions"]).value) \
            if "workgroup_attributions" in func.attributes else 0
        params = list(body.arguments)
        kenv = dict(zip(params[:n], args))
        self._launch(func, body, list(grid), list(block), kenv, None, params[n:n + n_wg])

    def _launch(self, op, body, grid, block, kenv, id_args, workgroup_args):
        if block[0] * block[1] * block[2] > 1024:
            raise EmulationError(f"{op.location}: {block} exceeds 1024 threads per block")
        if grid[1] > 65535 or grid[2] > 65535 or grid[0] >= 2 ** 31:
            raise EmulationError(f"{op.location}: grid {grid} exceeds the CUDA limits")
        self.launches += 1
        k = _Kernel(grid, block, self.launches)
        if id_args is not None:
            t = k.lane % k.tpb
            b = k.block_of
            ids = [b % grid[0], (b // grid[0]) % grid[1], b // (grid[0] * grid[1]),
                   t % block[0], (t // block[0]) % block[1], t // (block[0] * block[1])]
            for a, v in zip(id_args, ids):
                kenv[a] = v
        for a in workgroup_args:
            mt = a.type
            data = _fresh([k.nblocks] + list(mt.shape), _dtype(mt.element_type))
            alloc = _Alloc(data, device=True, blocks=k.nblocks)
            kenv[a] = Buf(alloc, data, alloc.ids)
        k.written = set()
        for inner in _walk_ops(body):
            if inner.name == "memref.store":
                root = _view_root(inner.operands[1])
                if root in kenv:
                    k.written.add(id(kenv[root].alloc))
        self.kernel = k
        try:
            self._block(body, kenv, None)
        finally:
            self.kernel = None

    def foreign_buffer(self, base: int, size: int, dtype, shape, byte_offset: int,
                       strides) -> Buf:
        """A device Buf over ``size`` bytes of process memory at ``base``
        (one allocation, shared by every view of it): ``shape``/``strides``
        in elements, ``byte_offset`` from ``base``."""
        import ctypes
        alloc = self._foreign.get((base, size))
        if alloc is None:
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * max(size, 1)).from_address(base))
            alloc = _Alloc(raw[:size], device=True)
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

    def _op_gpu_barrier(self, op, env, mask):
        k = self.kernel
        if mask is not None:
            per_block = mask.reshape(k.nblocks, k.tpb)
            if (per_block.any(1) & ~per_block.all(1)).any():
                raise EmulationError(f"{op.location}: gpu.barrier reached by only part of "
                                     "a block")
        k.epoch += 1
        return []

    def _addresses(self, op, buf: Buf, idx, mask):
        k = self.kernel
        if buf.alloc.freed:
            raise EmulationError(f"{op.location}: access to a freed buffer")
        if k is None:
            raise EmulationError(f"{op.location}: '{op.name}' on the host")
        if not buf.alloc.device:
            raise EmulationError(f"{op.location}: a kernel accesses host memory")
        n = k.n
        active = np.ones(n, bool) if mask is None else mask
        idx = [np.broadcast_to(np.asarray(i, np.int64), (n,))[active] for i in idx]
        shape = buf.data.shape[1:] if buf.alloc.workgroup else buf.data.shape
        for d, (i, s) in enumerate(zip(idx, shape)):
            if i.size and (i.min() < 0 or i.max() >= s):
                bad = i[(i < 0) | (i >= s)][0]
                raise EmulationError(f"{op.location}: '{op.name}' index {bad} out of bounds "
                                     f"for dimension {d} of size {s}")
        if buf.alloc.workgroup:
            idx = [k.block_of[active]] + idx
        key = tuple(idx)
        flat = np.broadcast_to(buf.ids[key], (int(active.sum()),))
        return key, flat, active

    def _op_memref_load(self, op, env, mask):
        buf = env[op.operands[0]]
        idx = [env[v] for v in list(op.operands)[1:]]
        key, flat, active = self._addresses(op, buf, idx, mask)
        k = self.kernel
        out = np.zeros(k.n, buf.data.dtype)
        out[active] = buf.data[key]
        if buf.alloc.workgroup or id(buf.alloc) in k.written:
            self._check_read(op, buf.alloc, flat, k.lane[active])
        return [out]

    def _op_memref_store(self, op, env, mask):
        value = env[op.operands[0]]
        buf = env[op.operands[1]]
        idx = [env[v] for v in list(op.operands)[2:]]
        key, flat, active = self._addresses(op, buf, idx, mask)
        k = self.kernel
        vals = np.broadcast_to(np.asarray(value), (k.n,))[active]
        lanes = k.lane[active]
        if flat.size:
            order = np.argsort(flat, kind="stable")
            f, v = flat[order], vals[order]
            dup = f[1:] == f[:-1]
            if dup.any() and not np.array_equal(v[1:][dup], v[:-1][dup], equal_nan=True):
                raise EmulationError(f"{op.location}: data race: threads store different "
                                     "values to one element")
        self._check_write(op, buf.alloc, flat, lanes)
        if key:
            buf.data[key] = vals
        elif vals.size:
            buf.data[()] = vals[-1]
        return []

    def _op_memref_atomic_rmw(self, op, env, mask):
        kind = int(ir.IntegerAttr(op.attributes["kind"]).value)
        name = _ATOMIC_KINDS.get(kind)
        if name is None:
            raise EmulationError(f"{op.location}: atomic kind {kind} is not supported")
        value = env[op.operands[0]]
        buf = env[op.operands[1]]
        idx = [env[v] for v in list(op.operands)[2:]]
        key, _, active = self._addresses(op, buf, idx, mask)
        k = self.kernel
        vals = np.broadcast_to(np.asarray(value), (k.n,))[active].astype(buf.data.dtype)
        old = np.zeros(k.n, buf.data.dtype)
        if key:
            old[active] = buf.data[key]
            data = buf.data
            if name.endswith("u"):
                data, vals = _unsigned(data), _unsigned(vals)
            _ATOMIC_UFUNCS[name].at(data, key, vals)
        elif vals.size:
            old[active] = buf.data[()]
            data = buf.data
            if name.endswith("u"):
                data, vals = _unsigned(data), _unsigned(vals)
            total = _ATOMIC_UFUNCS[name].reduce(vals)
            data[()] = _ATOMIC_UFUNCS[name](data[()], total)
        return [old]

    def _check_read(self, op, alloc: _Alloc, flat, lanes):
        k = self.kernel
        if not flat.size:
            return
        same = alloc.w_launch[flat] == k.launch
        other = same & (alloc.w_lane[flat] != lanes)
        if alloc.workgroup:
            conflict = other & (alloc.w_epoch[flat] == k.epoch)
        else:
            wblock = alloc.w_lane[flat] // k.tpb
            conflict = other & ((wblock != k.block_of[lanes]) | (alloc.w_epoch[flat] == k.epoch))
        if conflict.any():
            raise EmulationError(f"{op.location}: data race: a thread reads an element "
                                 "another thread wrote without a barrier in between")
        # record the readers: a lane, or -2 for several (same for blocks)
        blocks = k.block_of[lanes]
        fresh = (alloc.r_launch[flat] != k.launch) | (alloc.r_epoch[flat] != k.epoch)
        for rec, mine in ((alloc.r_lane, lanes), (alloc.r_block, blocks)):
            prev = np.where(fresh, mine, rec[flat])
            new = np.where(prev == mine, mine, -2)
            rec[flat] = new
            clash = rec[flat] != new
            if clash.any():
                rec[flat[clash]] = -2
        alloc.r_launch[flat] = k.launch
        alloc.r_epoch[flat] = k.epoch

    def _check_write(self, op, alloc: _Alloc, flat, lanes):
        k = self.kernel
        if not flat.size:
            return
        my_block = k.block_of[lanes]
        same = alloc.w_launch[flat] == k.launch
        other = same & (alloc.w_lane[flat] != lanes)
        if alloc.workgroup:
            ww = other & (alloc.w_epoch[flat] == k.epoch)
        else:
            ww = other & (((alloc.w_lane[flat] // k.tpb) != my_block)
                          | (alloc.w_epoch[flat] == k.epoch))
        if ww.any():
            raise EmulationError(f"{op.location}: data race: two threads write one element "
                                 "without a barrier in between")
        rsame = alloc.r_launch[flat] == k.launch
        rl, rb = alloc.r_lane[flat], alloc.r_block[flat]
        rother = rsame & (rl != lanes)
        if alloc.workgroup:
            war = rother & (alloc.r_epoch[flat] == k.epoch)
        else:
            war = rother & ((rb != my_block) | (alloc.r_epoch[flat] == k.epoch))
        if war.any():
            raise EmulationError(f"{op.location}: data race: a thread overwrites an element "
                                 "another thread read without a barrier in between")
        alloc.w_launch[flat] = k.launch
        alloc.w_epoch[flat] = k.epoch
        alloc.w_lane[flat] = lanes

    def _op_affine_apply(self, op, env, mask):
        amap = ir.AffineMapAttr(op.attributes["map"]).value
        vals = [env[v] for v in op.operands]
        dims, syms = vals[:amap.n_dims], vals[amap.n_dims:]
        return [_affine(amap.results[0], dims, syms)]

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


def _view_root(v: ir.Value) -> ir.Value:
    while isinstance(v.owner, (ir.Operation, ir.OpView)) and \
            _op(v.owner).name.startswith("memref.") and _op(v.owner).name in _VIEWS:
        v = _op(v.owner).operands[0]
    return v


_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast")


def _walk_ops(block: ir.Block):
    for op in block.operations:
        op = _op(op)
        yield op
        for region in op.regions:
            for b in region.blocks:
                yield from _walk_ops(b)


def _scalar_of(attr):
    if isinstance(attr, ir.FloatAttr):
        return attr.value
    return ir.IntegerAttr(attr).value


def _affine(expr, dims, syms):
    if isinstance(expr, ir.AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, ir.AffineSymbolExpr):
        return syms[expr.position]
    if isinstance(expr, ir.AffineConstantExpr):
        return np.int64(expr.value)
    lhs, rhs = _affine(expr.lhs, dims, syms), _affine(expr.rhs, dims, syms)
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


# memref.atomic_rmw kinds (arith::AtomicRMWKind values) and their numpy ufuncs.
_ATOMIC_KINDS = {0: "addf", 1: "addi", 2: "andi", 4: "maximumf", 5: "maxnumf", 6: "maxs",
                 7: "maxu", 8: "minimumf", 9: "minnumf", 10: "mins", 11: "minu", 12: "mulf",
                 13: "muli", 14: "ori", 15: "xori"}
_ATOMIC_UFUNCS = {"addf": np.add, "addi": np.add, "andi": np.bitwise_and,
                  "maximumf": np.maximum, "maxnumf": np.fmax, "maxs": np.maximum,
                  "maxu": np.maximum, "minimumf": np.minimum, "minnumf": np.fmin,
                  "mins": np.minimum, "minu": np.minimum, "mulf": np.multiply,
                  "muli": np.multiply, "ori": np.bitwise_or, "xori": np.bitwise_xor}


# --- elementwise ops: fn(op, *operand values) -> value --------------------------------

def _rt(op):
    return _dtype(op.results[0].type)


def _cast(fn):
    return lambda op, *a: np.asarray(fn(*a)).astype(_rt(op))


def _unsigned(a):
    a = np.asarray(a)
    return a.view(_UNSIGNED[a.dtype]) if a.dtype in _UNSIGNED else a


def _cmpi(op, a, b):
    pred = ir.IntegerAttr(op.attributes["predicate"]).value
    names = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    p = names[pred]
    if p.startswith("u"):
        a, b = _unsigned(a), _unsigned(b)
        p = p[1:]
    elif p.startswith("s"):
        p = p[1:]
    return {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}[p](a, b)


def _cmpf(op, a, b):
    pred = ir.IntegerAttr(op.attributes["predicate"]).value
    names = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
             "ult", "ule", "une", "uno", "true"]
    p = names[pred]
    nan = np.isnan(a) | np.isnan(b)
    if p == "false":
        return np.zeros(np.broadcast(a, b).shape, bool)
    if p == "true":
        return np.ones(np.broadcast(a, b).shape, bool)
    if p == "ord":
        return ~nan
    if p == "uno":
        return nan
    cmp = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
           "le": np.less_equal, "ne": np.not_equal}[p[1:]](a, b)
    return (cmp & ~nan) if p[0] == "o" else (cmp | nan)


def _divsi(a, b):
    a, b = np.asarray(a), np.asarray(b)
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def _remsi(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.fmod(a, np.where(b == 0, 1, b)).astype(a.dtype)


def _ext_unsigned(op, a):
    return _unsigned(a).astype(_rt(op))


def _fptosi(op, a):
    return np.trunc(a).astype(_rt(op))


def _round_away(a):
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


def _erf(a):
    a = np.asarray(a)
    return np.vectorize(math.erf, otypes=[np.float64])(a).astype(a.dtype)


def _powi(a, b):
    return np.power(a, b.astype(np.float64) if hasattr(b, "astype") else b).astype(
        np.asarray(a).dtype)


def _bitcast(op, a):
    return np.asarray(a).view(_rt(op))


def _same(fn):
    """A float op computed by numpy in the operands' dtype."""
    return lambda op, *a: np.asarray(fn(*a)).astype(_rt(op))


_ELEMENTWISE = {
    "arith.addf": _same(np.add), "arith.subf": _same(np.subtract),
    "arith.mulf": _same(np.multiply), "arith.divf": _same(np.divide),
    "arith.remf": _same(np.fmod), "arith.negf": _same(np.negative),
    "arith.maximumf": _same(np.maximum), "arith.minimumf": _same(np.minimum),
    "arith.maxnumf": _same(np.fmax), "arith.minnumf": _same(np.fmin),
    "arith.addi": _same(np.add), "arith.subi": _same(np.subtract),
    "arith.muli": _same(np.multiply),
    "arith.divsi": _same(_divsi), "arith.remsi": _same(_remsi),
    "arith.divui": lambda op, a, b: (_unsigned(a) // _unsigned(b)).astype(_rt(op)),
    "arith.remui": lambda op, a, b: (_unsigned(a) % _unsigned(b)).astype(_rt(op)),
    "arith.floordivsi": _same(np.floor_divide),
    "arith.ceildivsi": _same(lambda a, b: -np.floor_divide(-a, b)),
    "arith.ceildivui": lambda op, a, b: (-(-_unsigned(a) // _unsigned(b))).astype(_rt(op)),
    "arith.andi": _same(np.bitwise_and), "arith.ori": _same(np.bitwise_or),
    "arith.xori": _same(np.bitwise_xor), "arith.shli": _same(np.left_shift),
    "arith.shrsi": _same(np.right_shift),
    "arith.shrui": lambda op, a, b: (_unsigned(a) >> _unsigned(b)).view(_rt(op)),
    "arith.maxsi": _same(np.maximum), "arith.minsi": _same(np.minimum),
    "arith.maxui": lambda op, a, b: np.maximum(_unsigned(a), _unsigned(b)).view(_rt(op)),
    "arith.minui": lambda op, a, b: np.minimum(_unsigned(a), _unsigned(b)).view(_rt(op)),
    "arith.cmpi": _cmpi, "arith.cmpf": _cmpf,
    "arith.select": lambda op, c, a, b: np.where(c, a, b).astype(_rt(op)),
    "arith.extf": _cast(lambda a: a), "arith.truncf": _cast(lambda a: a),
    "arith.sitofp": _cast(lambda a: a), "arith.uitofp": lambda op, a: _unsigned(a).astype(_rt(op)),
    "arith.fptosi": _fptosi, "arith.fptoui": _fptosi,
    "arith.extsi": _cast(lambda a: a), "arith.extui": _ext_unsigned,
    "arith.trunci": _cast(lambda a: a),
    "arith.index_cast": _cast(lambda a: a), "arith.index_castui": _ext_unsigned,
    "arith.bitcast": _bitcast,
    "math.exp": _same(np.exp), "math.exp2": _same(np.exp2), "math.expm1": _same(np.expm1),
    "math.log": _same(np.log), "math.log2": _same(np.log2), "math.log10": _same(np.log10),
    "math.log1p": _same(np.log1p), "math.sqrt": _same(np.sqrt),
    "math.rsqrt": _same(lambda a: 1 / np.sqrt(a)), "math.cbrt": _same(np.cbrt),
    "math.tanh": _same(np.tanh), "math.sin": _same(np.sin), "math.cos": _same(np.cos),
    "math.tan": _same(np.tan), "math.atan": _same(np.arctan), "math.atan2": _same(np.arctan2),
    "math.sinh": _same(np.sinh), "math.cosh": _same(np.cosh), "math.asin": _same(np.arcsin),
    "math.acos": _same(np.arccos), "math.erf": _same(_erf), "math.powf": _same(np.power),
    "math.fpowi": _same(_powi), "math.ipowi": _same(np.power),
    "math.absf": _same(np.abs), "math.absi": _same(np.abs), "math.floor": _same(np.floor),
    "math.ceil": _same(np.ceil), "math.round": _same(_round_away),
    "math.roundeven": _same(np.rint), "math.trunc": _same(np.trunc),
    "math.copysign": _same(np.copysign), "math.fma": _same(lambda a, b, c: a * b + c),
    "math.isnan": lambda op, a: np.isnan(a), "math.isinf": lambda op, a: np.isinf(a),
    "math.isfinite": lambda op, a: np.isfinite(a),
}


def run(module, name: str, *inputs: np.ndarray, emulator: "Emulator | None" = None
        ) -> list[np.ndarray]:
    """Runs ``@name`` of a module after the ``kernels`` stage on ``inputs``
    (the first arguments); returns the remaining (output) arguments.  Pass
    the same ``emulator`` to keep device state (resident buffers, arenas)
    across calls."""
    module = _op(module)
    fn = None
    for op in module.regions[0].blocks[0].operations:
        op = _op(op)
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            fn = op
    if fn is None:
        raise EmulationError(f"no function @{name}")
    args = list(fn.regions[0].blocks[0].arguments)
    if len(inputs) > len(args):
        raise EmulationError(f"@{name} takes {len(args)} buffers, got {len(inputs)} inputs")
    bufs = [np.array(x, dtype=_dtype(a.type.element_type), order="C", copy=True)
            for x, a in zip(inputs, args)]
    outs = [_fresh(a.type.shape, _dtype(a.type.element_type)) for a in args[len(inputs):]]
    em = emulator if emulator is not None else Emulator(module)
    em.call(name, bufs + outs)
    return outs


# --- an Executable-like front end ----------------------------------------------------

def _arrays_from_descriptors(ptrs, specs):
    """numpy arrays viewing the memory of memref descriptors (runtime.abi)."""
    import ctypes
    from ...runtime.abi import descriptor_type
    out = []
    for p, spec in zip(ptrs, specs):
        desc = descriptor_type(len(spec.shape)).from_address(p)
        dtype = np.dtype(spec.dtype)
        n = int(np.prod(spec.shape)) if spec.shape else 1
        raw = (ctypes.c_byte * (n * dtype.itemsize)).from_address(desc.aligned)
        out.append(np.frombuffer(raw, dtype=dtype, count=n).reshape(spec.shape))
    return out


class Emulated:
    """``gradir.compile``'s interface on the emulator: ``exe["f"](x, w)``.

    The module is lowered like ``target="cuda"`` up to the ``kernels``
    stage (gpu.launch kernels on device buffers) and every call is
    emulated.  ``opt_level``/``sm_count`` as for lower_to_nvvm."""

    def __init__(self, module, opt_level: int = 3, sm_count: int = 132, keep_resident=()):
        from ...ir import as_operation, make_context, print_module
        from ...runtime.abi import Function, Signature
        from ...runtime.signature import public_functions, signature_of
        from ...conversion.gpu.nvvm import lower_to_nvvm

        src = as_operation(module)
        self.context = make_context()
        with self.context:
            self.lowered = ir.Module.parse(print_module(src, debug_info=True))
            self.signatures = {}
            for fn in public_functions(self.lowered.operation):
                sig = signature_of(fn)
                self.signatures[sig.name] = sig
                idx = [i for i in keep_resident if i < len(sig.input_tree)]
                if idx:
                    name = sig.name + "_upload_resident"
                    self.signatures[name] = Signature(
                        name, tuple(sig.inputs[sig.input_tree[i]] for i in idx),
                        tuple(range(len(idx))), (), ())
            lower_to_nvvm(self.lowered.operation, opt_level=opt_level, sm_count=sm_count,
                          keep_resident=tuple(keep_resident), stop_after="kernels")
            self.emulator = Emulator(self.lowered.operation)
        self._functions = {name: Function(sig, self._caller(sig)) for name, sig in
                           self.signatures.items()}

    def _caller(self, sig):
        def call(ptrs):
            arrays = _arrays_from_descriptors(ptrs, list(sig.inputs) + list(sig.outputs))
            ins, outs = arrays[:len(sig.inputs)], arrays[len(sig.inputs):]
            with self.context:
                results = run(self.lowered.operation, sig.name, *ins, emulator=self.emulator)
            for dst, src in zip(outs, results):
                np.copyto(dst, src, casting="unsafe")
        return call

    def __getitem__(self, name: str):
        return self._functions[name]

    @property
    def functions(self) -> list[str]:
        return list(self._functions)
