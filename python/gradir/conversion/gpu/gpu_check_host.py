"""gpu-check-host: fails when host code computes or touches device memory."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass
from .common import VIEW_OPS, host_functions, is_memref, walk

__all__ = ["GpuCheckHost", "host_problem", "host_buffers"]

# Host ops that may take device buffers: allocation, copies, launches, views.
_BUFFER_OPS = frozenset({
    "gpu.alloc", "gpu.dealloc", "gpu.memcpy", "gpu.memset", "gpu.launch", "gpu.launch_func",
    "gpu.wait", "func.return", "scf.yield", "scf.if", "scf.for", "scf.while", "scf.condition",
    "memref.extract_aligned_pointer_as_index", "memref.extract_strided_metadata",
    "builtin.unrealized_conversion_cast", *VIEW_OPS,
})
# Dialects whose ops are computation and belong in kernels.
_COMPUTE_DIALECTS = ("linalg.", "math.", "tensor.", "vector.", "bufferization.", "affine.for",
                     "affine.parallel", "scf.parallel", "scf.forall")
_FLOAT_ARITH = frozenset({
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
    "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.cmpf",
    "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi",
    "arith.fptoui",
})


# Host ops that may use host-memory buffers (host_buffers).
_HOST_MEMORY_OPS = frozenset({"memref.alloc", "memref.load", "memref.store", "memref.dealloc",
                              "memref.dim", "memref.copy"})
# scf ops whose memref operands, region arguments, yields and results
# host_buffers follows (one buffer through a loop or branch).
_CARRIERS = frozenset({"scf.for", "scf.while", "scf.if", "scf.index_switch",
                       "scf.execute_region", "scf.yield", "scf.condition"})


def host_problem(op: ir.Operation, host: frozenset = frozenset()) -> str | None:
    """Why ``op`` (in host code) cannot stay on the host, or None.
    ``host``: the memref values in host memory (``host_buffers``), which
    host loads, stores, copies and frees may use."""
    name = op.name
    if name in _HOST_MEMORY_OPS:
        memrefs = [v for v in list(op.operands) + list(op.results) if is_memref(v)]
        if memrefs and all(v in host for v in memrefs):
            return None
        if name == "memref.alloc":
            return ("'memref.alloc' on the host: host memory may only hold integers that "
                    "host loads and stores alone use (no kernel, no copy to or from device "
                    "data); device buffers are gpu.alloc")
    if name == "memref.get_global":
        users = [u.owner for u in op.results[0].uses]
        if all(getattr(u, "name", None) == "gpu.memcpy" for u in users):
            return None
        return "a host constant is used by something other than a copy to the device"
    if name.startswith(_COMPUTE_DIALECTS) or name in _FLOAT_ARITH:
        return (f"'{name}' computes on the host; every computation must be inside a GPU "
                "kernel")
    if name in _BUFFER_OPS:
        return None
    if name in ("memref.alloca", "memref.load") and _host_scalar(op):
        return None     # a condition copied to the host (gpu-host-conditions)
    if any(is_memref(v) for v in list(op.operands) + list(op.results)):
        return (f"'{name}' touches a device buffer on the host; only gpu.alloc, "
                "gpu.dealloc, gpu.memcpy and kernel launches may")
    return None


def host_buffers(fn: ir.Operation) -> frozenset:
    """The memref values of ``fn``'s host code that are host memory the
    host alone uses: buffers (through views, and through the iteration
    arguments, yields and results of scf loops and branches) all of whose
    sources are ``memref.alloc`` of integer or index elements and whose
    every use is a host ``memref.load``, ``memref.store`` into it,
    ``memref.dim``, ``memref.dealloc`` or a ``memref.copy`` with another
    such buffer.  The integer bookkeeping of the host (the trip-count
    stacks of checkpointed scf.while adjoints) stays in such buffers.  A
    scalar loaded from one may reach kernels (a trip counter that selects
    data): gpu-device-buffers marks those loads ``gradir.host_memory``, so
    the kernels take the scalar as an argument instead of reading the
    buffer."""
    parent: dict = {}

    def find(v):
        root = v
        while parent[root] != root:
            root = parent[root]
        while parent[v] != root:
            parent[v], v = root, parent[v]
        return root

    def add(v):
        if is_memref(v) and v not in parent:
            parent[v] = v

    def union(a, b):
        if is_memref(a) and is_memref(b):
            add(a)
            add(b)
            parent[find(a)] = find(b)

    for a in fn.regions[0].blocks[0].arguments:
        add(a)
    ops = list(walk(fn, into_kernels=False))
    for op in ops:
        for r in op.results:
            add(r)
        for region in op.regions:
            for b in region.blocks:
                for a in b.arguments:
                    add(a)
        name = op.name
        if name in VIEW_OPS and op.results and len(op.operands):
            union(op.results[0], op.operands[0])
        elif name == "scf.for":
            body = op.regions[0].blocks[0]
            term = _compat.terminator(body)
            for k, r in enumerate(op.results):
                union(r, op.operands[3 + k])
                union(r, body.arguments[1 + k])
                union(r, term.operands[k])
        elif name == "scf.while":
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            cond, yld = _compat.terminator(before), _compat.terminator(after)
            for k, a in enumerate(before.arguments):
                union(a, op.operands[k])
                union(a, yld.operands[k])
            for k, r in enumerate(op.results):
                union(r, after.arguments[k])
                union(r, cond.operands[1 + k])
        elif name in ("scf.if", "scf.index_switch", "scf.execute_region"):
            for region in op.regions:
                for b in region.blocks:
                    term = _compat.terminator(b)
                    for k, r in enumerate(op.results):
                        if term is not None and k < len(term.operands):
                            union(r, term.operands[k])
    bad = set()
    copies = []
    for v in list(parent):
        cls = find(v)
        if cls in bad:
            continue
        if not _host_source(v):
            bad.add(cls)
            continue
        for user, number in _compat.uses_of(v):
            if _in_kernel_or_linalg(user):
                bad.add(cls)
            elif user.name in VIEW_OPS and number == 0 or user.name in _CARRIERS:
                continue
            elif user.name == "memref.store" and number == 1:
                continue
            elif user.name in ("memref.load", "memref.dim", "memref.dealloc") and number == 0:
                continue
            elif user.name == "memref.copy":
                copies.append((user.operands[0], user.operands[1]))
            else:
                bad.add(cls)
            if cls in bad:
                break
    changed = True
    while changed:
        changed = False
        for a, b in copies:
            ca, cb = find(a), find(b)
            if (ca in bad) != (cb in bad):
                bad.update((ca, cb))
                changed = True
    return frozenset(v for v in parent if find(v) not in bad)


def _host_source(v: ir.Value) -> bool:
    """Whether ``v`` is a view, an scf iteration argument or result (its
    buffer comes from elsewhere), or a ``memref.alloc`` of integers."""
    op = _compat.defining_op(v)
    if op is None:
        block_parent = v.owner.owner
        block_parent = getattr(block_parent, "operation", block_parent)
        return block_parent is not None and block_parent.name in ("scf.for", "scf.while")
    if op.name in VIEW_OPS or op.name in _CARRIERS:
        return True
    if op.name != "memref.alloc":
        return False
    elem = ir.MemRefType(v.type).element_type
    return isinstance(elem, (ir.IntegerType, ir.IndexType))


def _in_kernel_or_linalg(op: ir.Operation) -> bool:
    while op is not None:
        if op.name.startswith(("linalg.", "gpu.launch", "gpu.func", "gpu.module")):
            return True
        op = _compat.parent_op(op)
    return False


def _host_scalar(op: ir.Operation) -> bool:
    buf = op.results[0] if op.name == "memref.alloca" else op.operands[0]
    owner = getattr(buf.owner, "operation", buf.owner)
    return isinstance(owner, ir.Operation) and "gradir.host_scalar" in owner.attributes


@dataclass(frozen=True)
class GpuCheckHost(ModulePass):
    """Checks that host code only allocates, copies and launches.

    After gpu-linalg-to-kernels (or kernel outlining), the code of every
    function outside ``gpu.launch`` bodies may allocate and free device
    buffers, copy between host and device, take views of buffers, compute
    integer/index scalars and launch kernels.  Anything else (a linalg op
    left over, ``memref.load``/``store`` on a buffer, floating-point or
    ``math`` computation) is an error at that op: there is no silent
    fallback to host execution.  Host memory that only the host uses
    (``host_buffers``: integer bookkeeping such as the trip-count stack of
    a checkpointed scf.while adjoint, which gpu-device-buffers leaves in
    ``memref.alloc`` buffers) may be allocated, loaded, stored, copied and
    freed on the host.

        %v = memref.load %dev[%c0] : memref<4xf32>    // in host code
    fails with
        error: 'memref.load' touches a device buffer on the host; ...
    """

    name = "gpu-check-host"

    def apply(self, module: ir.Operation) -> None:
        failed = False
        for fn in host_functions(module):
            failed |= self._check(fn, host_buffers(fn))
        if failed:
            raise self.failure()

    def _check(self, op: ir.Operation, host: frozenset) -> bool:
        """Checks the ops nested in ``op`` (not inside kernels, not inside an
        op already refused)."""
        failed = False
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    problem = host_problem(inner, host)
                    if problem:
                        self.error(inner, problem)
                        failed = True
                    elif inner.name != "gpu.launch":
                        failed |= self._check(inner, host)
        return failed
