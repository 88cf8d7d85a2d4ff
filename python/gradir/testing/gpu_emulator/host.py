"""Host-side ops of the emulator: constants, device allocation and copies,
the LLVM glue of resident buffers and arenas (globals holding device
addresses, descriptors built from them), and memref views."""

from __future__ import annotations

import re

import numpy as np
from mlir import ir

from .values import Alloc, Buf, EmulationError, dtype_of, fresh

__all__ = ["HostOps", "scalar_of"]


def scalar_of(attr):
    if isinstance(attr, ir.FloatAttr):
        return attr.value
    return ir.IntegerAttr(attr).value


_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d+\.?\d*(?:[eE][-+]?\d+)?)")


def _dense_values(attr, t) -> np.ndarray:
    """The values of a non-splat dense attribute, as ``t`` (a memref).
    The bindings give no buffer of bf16 elements, so those are read from
    the attribute's text: ``dense<"0x...">`` (little-endian bits) or a list
    of decimals and ``0x`` bit patterns (NaN, infinities)."""
    dtype = dtype_of(t.element_type)
    if str(t.element_type) != "bf16":
        return np.array(attr).astype(dtype).reshape(t.shape)
    text = str(attr)
    body = text[text.index("dense<") + 6:text.rindex(">", 0, text.rindex(" : "))]
    if body.startswith('"0x'):
        bits = np.frombuffer(bytes.fromhex(body[3:-1]), dtype="<u2")
    else:
        bits = np.array([int(tok, 16) if tok.startswith("0x")
                         else np.float32(float(tok)).astype(dtype).view(np.uint16)
                         for tok in _NUMBER.findall(body)], dtype=np.uint16)
    return bits.view(dtype).reshape(t.shape).copy()


class HostOps:
    """Host-level op rules (a mixin of ``Emulator``)."""

    def _op_arith_constant(self, op, env, mask):
        attr = op.attributes["value"]
        t = op.results[0].type
        if isinstance(t, (ir.RankedTensorType, ir.VectorType)):
            raise EmulationError("tensor/vector constants are not supported")
        if isinstance(attr, ir.FloatAttr):
            return [dtype_of(t)(attr.value)]
        if isinstance(attr, ir.BoolAttr):
            return [np.bool_(attr.value)]
        v = ir.IntegerAttr(attr).value
        if str(t) == "i1":
            return [np.bool_(v & 1)]
        return [np.array(v).astype(dtype_of(t))[()]]

    def _op_gpu_alloc(self, op, env, mask):
        self._host_only(op)
        t = op.results[0].type
        dyn = iter(int(env[v]) for v in op.operands if isinstance(v.type, ir.IndexType))
        shape = [next(dyn) if d == ir.ShapedType.get_dynamic_size() else d for d in t.shape]
        data = fresh(shape, dtype_of(t.element_type))
        alloc = Alloc(data, device=True)
        alloc.address = self.next_address
        self.addresses[alloc.address] = alloc
        self.next_address += 1 << 32
        self._device_bytes = self.device_bytes_in_use() + data.nbytes
        self._peak_device_bytes = max(self.peak_device_bytes(), self._device_bytes)
        return [Buf(alloc, data, alloc.ids)]

    # Host memory of the host code: bookkeeping gpu-device-buffers keeps on
    # the host (a loop adjoint's stack of trip counts), counted until freed.
    def _op_memref_alloc(self, op, env, mask):
        self._host_only(op)
        t = op.results[0].type
        dyn = iter(int(env[v]) for v in op.operands)
        shape = [next(dyn) if d == ir.ShapedType.get_dynamic_size() else d for d in t.shape]
        alloc = Alloc(fresh(shape, dtype_of(t.element_type)), device=False)
        self._host_allocations = self.live_host_allocations() + 1
        return [Buf(alloc, alloc.data, alloc.ids)]

    def _op_memref_dealloc(self, op, env, mask):
        self._host_only(op)
        buf = env[op.operands[0]]
        if buf.alloc.device:
            raise EmulationError(f"{op.location}: memref.dealloc of device memory")
        if buf.alloc.freed:
            raise EmulationError(f"{op.location}: memref.dealloc of freed memory")
        buf.alloc.freed = True
        self._host_allocations = self.live_host_allocations() - 1
        return []

    def live_host_allocations(self) -> int:
        """Host buffers (``memref.alloc``) the calls so far made and did not free."""
        return getattr(self, "_host_allocations", 0)

    def _op_memref_copy(self, op, env, mask):
        self._host_only(op)
        src, dst = env[op.operands[0]], env[op.operands[1]]
        if src.alloc.device or dst.alloc.device or src.alloc.freed or dst.alloc.freed:
            raise EmulationError(f"{op.location}: memref.copy of device or freed memory "
                                 "(the host copies host memory only)")
        np.copyto(dst.data, src.data)
        return []

    def _op_memref_dim(self, op, env, mask):
        return [np.int64(env[op.operands[0]].data.shape[int(env[op.operands[1]])])]

    def _op_memref_alloca(self, op, env, mask):
        """A host buffer (a condition copied from the device)."""
        self._host_only(op)
        t = op.results[0].type
        data = fresh(t.shape, dtype_of(t.element_type))
        alloc = Alloc(data, device=False)
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

    def _op_llvm_call(self, op, env, mask):
        """The run-time checks' report (``conversion/cpu/runtime_checks.py``):
        the first failure of a call is kept and raised as ``ExecutionError``
        when the call ends, as the compiled code's runtime does."""
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value \
            if "callee" in op.attributes else None
        if callee != "gradir_check_fail":
            raise EmulationError(f"{op.location}: the emulator has no rule for a call "
                                 f"of '{callee}'")
        kind, name = env[op.operands[0]]
        if self.failed_check is None:
            glob = self.llvm_string_globals.get(name, "")
            self.failed_check = glob + str(int(env[op.operands[1]]))
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
        """The device address of the memref's aligned pointer: its
        allocation's, moved by the byte shifts of the ``memref.view``s it
        comes through (not by a subview's offset)."""
        buf = env[op.operands[0]]
        if not hasattr(buf.alloc, "address"):
            raise EmulationError(f"{op.location}: address of a buffer that is not a "
                                 "gpu.alloc")
        return [np.int64(buf.alloc.address + buf.shift)]

    def _op_builtin_unrealized_conversion_cast(self, op, env, mask):
        """A memref from an LLVM descriptor built on the host (resident
        buffers, arenas): its aligned pointer is a device address, the start
        of a ``gpu.alloc`` of the memref's shape, or a byte shift into a
        byte buffer (as ``memref.view``)."""
        struct = env[op.operands[0]]
        t = op.results[0].type
        if not isinstance(struct, dict) or not isinstance(t, ir.MemRefType):
            raise EmulationError(f"{op.location}: unsupported unrealized_conversion_cast")
        address = int(struct.get((1,), -1))
        base = max((a for a in self.addresses if a <= address), default=None)
        alloc = self.addresses.get(base)
        if alloc is None or alloc.freed or address - base >= alloc.data.nbytes:
            raise EmulationError(f"{op.location}: descriptor of an unknown or freed device "
                                 "address")
        if int(struct.get((2,), -1)) != 0:
            raise EmulationError(f"{op.location}: descriptor does not match its allocation")
        if address == base and alloc.data.shape == tuple(t.shape):
            return [Buf(alloc, alloc.data, alloc.ids)]
        whole = Buf(alloc, alloc.data, alloc.ids)
        if alloc.data.dtype.itemsize != 1:
            raise EmulationError(f"{op.location}: descriptor does not match its allocation")
        return [self._byte_view(op, whole, address - base, t)]

    def _op_memref_view(self, op, env, mask):
        src = env[op.operands[0]]
        off = int(env[op.operands[1]])
        t = op.results[0].type
        if src.alloc.workgroup:
            dtype = np.dtype(dtype_of(t.element_type))
            nbytes = (int(np.prod(t.shape)) if t.shape else 1) * dtype.itemsize
            return [self._workgroup_view(op, src, off, t, dtype, nbytes)]
        return [self._byte_view(op, src, off, t)]

    def _byte_view(self, op, src, off: int, t) -> Buf:
        """The ``t`` at byte ``off`` of the 1-D byte buffer ``src`` (its
        aligned pointer ``off`` bytes past ``src``'s)."""
        dtype = np.dtype(dtype_of(t.element_type))
        nbytes = (int(np.prod(t.shape)) if t.shape else 1) * dtype.itemsize
        if src.data.ndim != 1 or off < 0 or off + nbytes > src.data.size:
            raise EmulationError(f"{op.location}: memref.view out of the source buffer")
        if off % dtype.itemsize:
            raise EmulationError(f"{op.location}: misaligned memref.view")
        data = src.data[off:off + nbytes].view(dtype).reshape(t.shape)
        ids = src.ids[off:off + nbytes:dtype.itemsize].reshape(t.shape)
        return Buf(src.alloc, data, ids, src.shift + off)

    def _workgroup_view(self, op, src, off: int, t, dtype, nbytes: int):
        """A typed view of a block's workgroup bytes (dynamic shared memory),
        one row per block as every workgroup buffer."""
        width = src.data.shape[-1] if src.data.ndim == 2 else -1
        if src.data.dtype != np.uint8 or width < 0 or off < 0 or off + nbytes > width:
            raise EmulationError(f"{op.location}: memref.view out of the workgroup buffer")
        if off % dtype.itemsize:
            raise EmulationError(f"{op.location}: misaligned memref.view")
        blocks = src.data.shape[0]
        data = src.data[:, off:off + nbytes].view(dtype).reshape([blocks] + list(t.shape))
        ids = src.ids[:, off:off + nbytes:dtype.itemsize].reshape([blocks] + list(t.shape))
        assert np.shares_memory(data, src.data)
        return Buf(src.alloc, data, ids)

    def _op_gpu_dealloc(self, op, env, mask):
        self._host_only(op)
        buf = env[op.operands[0]]
        if not buf.alloc.device:
            raise EmulationError(f"{op.location}: gpu.dealloc of host memory")
        if buf.alloc.freed:
            raise EmulationError(f"{op.location}: double gpu.dealloc")
        buf.alloc.freed = True
        if self.addresses.pop(getattr(buf.alloc, "address", None), None) is not None:
            self._device_bytes = self.device_bytes_in_use() - buf.alloc.data.nbytes
        return []

    # device memory accounting (every gpu.alloc is in ``addresses`` until freed)
    def device_bytes_in_use(self) -> int:
        """Bytes of device memory allocated (``gpu.alloc``) and not yet freed,
        every call so far together: what a loop that leaks buffers grows."""
        return getattr(self, "_device_bytes", 0)

    def peak_device_bytes(self) -> int:
        """The most ``device_bytes_in_use`` has been (since the last
        ``reset_peak_device_bytes``)."""
        return getattr(self, "_peak_device_bytes", 0)

    def reset_peak_device_bytes(self) -> None:
        self._peak_device_bytes = self.device_bytes_in_use()

    def live_device_allocations(self) -> int:
        """How many ``gpu.alloc`` buffers are allocated and not yet freed."""
        return sum(1 for a in self.addresses.values() if not a.freed)

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
            value = np.full(t.shape, scalar_of(attr.get_splat_value()), dtype_of(t.element_type))
        else:
            value = _dense_values(attr, t)
        alloc = Alloc(value, device=False)
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
