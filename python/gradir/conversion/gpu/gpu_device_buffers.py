"""gpu-device-buffers: moves the data of bufferized functions to the GPU."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import gpu, linalg, memref

from ... import _compat
from ...passes.base import ModulePass, option
from .gpu_check_host import host_buffers
from .resident import resident_buffer, upload_function
from .common import (ALLOC_OPS, HOST_MEMORY, VIEW_OPS, aliases_of, ancestor_in_block,
                     host_functions, index, is_memref, n_inputs, walk)

__all__ = ["GpuDeviceBuffers", "written_values"]

# Operand positions an op writes through (besides linalg outs).
_WRITES = {"memref.store": (1,), "memref.copy": (1,), "gpu.memcpy": (0,), "memref.copy_to": (1,)}
# Uses through which a buffer escapes the function (no dealloc can be placed;
# memref.store: the stored value, not the buffer stored into).  scf.yield /
# scf.condition hand a buffer to the enclosing scf op (_Ownership) unless
# the op is none of _SCF.
_ESCAPES = frozenset({"func.return", "scf.yield", "scf.condition", "func.call", "memref.store",
                      "cf.br", "cf.cond_br"})
# Ops whose memref results, iteration arguments and yields _Ownership follows.
_SCF = frozenset({"scf.for", "scf.while", "scf.if", "scf.index_switch", "scf.execute_region"})


def _linalg_inits(op: ir.Operation) -> list[ir.Value]:
    """The ``outs`` operands of a linalg structured op (DPS inits)."""
    if "operandSegmentSizes" in op.attributes:
        sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        return list(op.operands)[sizes[0]:sizes[0] + sizes[1]]
    return list(op.operands)[-1:] if len(op.operands) else []


def written_values(op: ir.Operation) -> list[ir.Value]:
    """Memrefs ``op`` writes (linalg outs, store/copy/memcpy targets)."""
    if op.name.startswith("linalg.") and op.name not in ("linalg.yield", "linalg.index"):
        return [v for v in _linalg_inits(op) if is_memref(v)]
    return [op.operands[i] for i in _WRITES.get(op.name, ())]


def _is_written(value: ir.Value, fn: ir.Operation) -> bool:
    views = aliases_of(value)
    for op in walk(fn):
        for w in written_values(op):
            if any(w == v for v in views):
                return True
    return False


@dataclass(frozen=True)
class GpuDeviceBuffers(ModulePass):
    """Moves every buffer of bufferized functions to GPU memory.

    Runs after one-shot-bufferize and buffer-results-to-out-params (host
    memref arguments: inputs, then outputs).  Each input argument is copied
    to a ``gpu.alloc`` buffer once at entry, each output is computed in a
    device buffer and copied back once before ``return``; ``memref.alloc``
    becomes ``gpu.alloc`` with a ``gpu.dealloc`` after its last use (through
    views); ``memref.get_global`` constants are copied to the device where
    they are used; ``memref.copy`` becomes ``linalg.copy`` (a kernel later).
    An input's device buffer is freed after its last use like an
    intermediate, an output's after the copy back.
    Buffers that scf.for / scf.while / scf.if carry or return are owned by
    the loop or branch they are handed to (``_Ownership``): a loop frees the
    buffer of the previous iteration once it has made the next one, and the
    results are freed after their last use, so a loop leaks no device
    memory whatever its trip count.
    Host bookkeeping stays on the host (``gpu_check_host.host_buffers``:
    integer buffers that only host loads and stores use, such as the
    trip-count stack of an scf.while adjoint checkpointed with an integer
    period): its ``memref.alloc`` stays, and ``_Ownership`` frees it with
    ``memref.dealloc`` (copies of it are host ``memref.copy``), and its
    loads are marked ``gradir.host_memory``: their scalars (a trip counter
    that selects data) reach kernels as arguments, not as loads that
    gpu-linalg-to-kernels would clone into the kernel.
    Inputs and outputs are told apart by ``gradir.original_type``; without
    it every argument is copied in and the written ones are copied back.
    Arguments whose index is in ``keep-resident`` are uploaded by the first
    call only and stay on the device (see gradir.conversion.gpu.nvvm).

        func.func @f(%a: memref<4xf32>, %out: memref<4xf32>) {
          linalg.generic ... ins(%a) outs(%out)
    becomes
        func.func @f(%a: memref<4xf32>, %out: memref<4xf32>) {
          %0 = gpu.alloc() : memref<4xf32>
          gpu.memcpy %0, %a : memref<4xf32>, memref<4xf32>
          %1 = gpu.alloc() : memref<4xf32>
          linalg.generic ... ins(%0) outs(%1)
          gpu.dealloc %0 : memref<4xf32>
          gpu.memcpy %out, %1 : memref<4xf32>, memref<4xf32>
          gpu.dealloc %1 : memref<4xf32>
    """

    name = "gpu-device-buffers"
    keep_resident: tuple[int, ...] = option((), "argument indices uploaded once and kept "
                                                "on the device across calls")

    def apply(self, module: ir.Operation) -> None:
        failed = False
        for fn in host_functions(module):
            if len(fn.regions[0].blocks) != 1:
                self.error(fn, "gpu-device-buffers expects functions with a single block")
                failed = True
                continue
            for op in walk(fn, into_kernels=False):
                if op.name in ("func.call", "call"):
                    self.error(op, "calls are not supported on the GPU path (inline them "
                                   "first)")
                    failed = True
        if failed:
            raise self.failure()
        body = module.regions[0].blocks[0]
        for fn in host_functions(module):
            globals_, indices = self._function(fn)
            if not globals_:
                continue
            with ir.InsertionPoint(body.operations[0]):
                for g in globals_:
                    ir.InsertionPoint.current.insert(g)
            with ir.InsertionPoint(body), fn.location:
                upload_function(fn, indices)

    # -- one function --------------------------------------------------------
    def _function(self, fn: ir.Operation):
        host = set(host_buffers(fn))
        entry = fn.regions[0].blocks[0]
        returns = [op.operation for op in entry.operations if op.operation.name == "func.return"]
        n_in = n_inputs(fn)
        args = [a for a in entry.arguments]
        head = entry.operations[0]
        new_globals = []
        resident_indices = []
        device_args = []
        for i, arg in enumerate(args):
            if not is_memref(arg) or not list(arg.uses):
                continue
            is_input = n_in is None or i < n_in
            is_output = _is_written(arg, fn) if n_in is None else i >= n_in
            resident = is_input and i in self.keep_resident
            if resident and _is_written(arg, fn):
                self.warning(fn, f"argument #{i} is written by the function; it is copied "
                                 "to the device on every call instead of staying resident")
                resident = False
            with ir.InsertionPoint(head), fn.location:
                if resident:
                    dev, glob = resident_buffer(fn, i, arg)
                    new_globals.append(glob)
                    resident_indices.append(i)
                    keep = list(_ops_using(arg))
                else:
                    dev = gpu.AllocOp(arg.type, None, [], [], []).result
                    keep = []
                    if is_input:
                        keep.append(gpu.MemcpyOp(None, [], dev, arg).operation)
            if keep:
                arg.replace_all_uses_except(dev, keep)
            else:
                arg.replace_all_uses_with(dev)
            device_args.append((arg, dev, is_output, resident))
        for ret in returns:
            with ir.InsertionPoint(ret), ret.location:
                for arg, dev, is_output, _ in device_args:
                    if is_output:
                        gpu.MemcpyOp(None, [], arg, dev)
                for _, dev, is_output, resident in device_args:
                    if is_output and not resident:
                        gpu.DeallocOp(None, [], dev)
        # Device buffers of the outputs are freed at the return above, resident
        # buffers never: no other scope owns them.  An input's device buffer is
        # the function's like any other (freed after its last use, or handed
        # to a loop).
        inputs = [dev for _, dev, is_output, resident in device_args
                  if not is_output and not resident]
        pinned = {op.results[0] for op in walk(fn, into_kernels=False)
                  if op.name == "gpu.alloc" and op.results[0] not in inputs}
        for op in list(walk(fn, into_kernels=False)):
            if op.name in ALLOC_OPS and op.results[0] in host:
                continue
            if op.name in ("memref.dealloc", "memref.copy") and op.operands[0] in host:
                continue
            if op.name in ALLOC_OPS:
                self._alloc(op)
            elif op.name == "memref.dealloc":
                with ir.InsertionPoint(op), op.location:
                    gpu.DeallocOp(None, [], op.operands[0])
                op.erase()
            elif op.name == "memref.get_global":
                self._global(op)
            elif op.name == "memref.copy":
                with ir.InsertionPoint(op), op.location:
                    linalg.copy(op.operands[0], outs=[op.operands[1]])
                op.erase()
        for op in walk(fn, into_kernels=False):
            if op.name == "memref.load" and op.operands[0] in host:
                op.attributes[HOST_MEMORY] = ir.UnitAttr.get()
        _Ownership(self, pinned, host).block(entry, [])
        return new_globals, resident_indices

    def _alloc(self, op: ir.Operation) -> None:
        with ir.InsertionPoint(op), op.location:
            dev = gpu.AllocOp(op.results[0].type, None, [], list(op.operands), []).result
        op.results[0].replace_all_uses_with(dev)
        op.erase()

    def _global(self, op: ir.Operation) -> None:
        host = op.results[0]
        with ir.InsertionPoint.after(op), op.location:
            dev = gpu.AllocOp(host.type, None, [], [], []).result
            copy = gpu.MemcpyOp(None, [], dev, host).operation
        host.replace_all_uses_except(dev, [copy])


def _ops_using(arg: ir.Value):
    """Uses of ``arg`` by the upload code (gpu.memcpy)."""
    for use in arg.uses:
        user = use.owner
        user = user.operation if hasattr(user, "operation") else user
        if user.name == "gpu.memcpy":
            yield user


def _root(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is a view of (through VIEW_OPS), or itself."""
    while True:
        op = _compat.defining_op(value)
        if op is None or op.name not in VIEW_OPS:
            return value
        value = op.operands[0]


def _user_ops(value: ir.Value):
    """``(user op, operand number)`` of every use of ``value`` or of a view
    of it, views themselves left out; plus ``(op, -1)`` for every op using
    (transitively) a scalar a host ``memref.load`` read from it: a kernel
    may read that scalar from the buffer itself (gpu-linalg-to-kernels), so
    the buffer lives until those ops have run."""
    seen = set()
    for v in aliases_of(value):
        for user, number in _compat.uses_of(v):
            if user.name in VIEW_OPS and number == 0:
                continue
            yield user, number
            if user.name == "memref.load":
                todo = [user]
                while todo:
                    op = todo.pop()
                    for r in op.results:
                        if is_memref(r):
                            continue
                        for u, _ in _compat.uses_of(r):
                            if u not in seen:
                                seen.add(u)
                                todo.append(u)
                                yield u, -1


class _Ownership:
    """Frees the device buffers of a function, through scf.for / scf.while /
    scf.if (see GpuDeviceBuffers).

    Every buffer has one owner scope (a block).  A block owns the buffers it
    allocates (``gpu.alloc``), the memref results of the scf ops in it and,
    for loop bodies, the buffers bound to its memref iteration arguments on
    entry.  The block frees each buffer it owns after its last use there
    (through views) unless it hands it on:

    * to a loop it starts (an init operand of scf.for / scf.while): only
      when the loop is the last use of the buffer in the block and the buffer
      is not passed twice; otherwise the loop gets a copy;
    * to the branches of an scf.if / scf.index_switch / scf.execute_region
      that yields it, when that op is its last use: each branch owns it, the
      one yielding it hands it on, the others free it;
    * through its terminator (scf.yield, scf.condition): to the next
      iteration or to the results of the scf op; a yielded value that the
      block does not own (a value from outside still used after, an output
      or resident buffer, one buffer yielded twice) is copied into a new
      buffer first.

    So every iteration argument and every result of an scf op owns a buffer
    of its own, whatever the trip count (zero trips: the results are the
    init buffers, which the loop owns) or the branch taken, and the buffers
    a loop carries are freed one iteration later.  The copies are
    ``linalg.copy`` kernels; a block that only forwards its argument (a
    loop body yielding its iteration argument) copies nothing.
    """

    def __init__(self, owner: GpuDeviceBuffers, pinned, host):
        self.owner = owner
        self.pinned = pinned
        self.host = host            # host buffers (memref.alloc / memref.dealloc)

    def block(self, block: ir.Block, owned_args: list[ir.Value], hands_on: bool = True
              ) -> None:
        """Frees what ``block`` owns; with ``hands_on`` its scf.yield /
        scf.condition hands buffers to the parent (an scf op in _SCF)."""
        owned = list(owned_args)
        handed = []                       # owned buffers handed on (not freed here)
        for op in _compat.block_ops(block):
            if op.name == "gpu.alloc" and op.results[0] not in self.pinned:
                owned.append(op.results[0])
            elif op.name == "memref.alloc" and op.results[0] in self.host:
                owned.append(op.results[0])
            elif op.name in _SCF:
                self._scf(op, block, owned, handed)
                owned.extend(r for r in op.results if is_memref(r))
            elif op.regions and op.name != "gpu.launch" and not op.name.startswith("linalg."):
                # any other region: its buffers are freed inside; one it
                # yields gets the escape warning (_free)
                for region in op.regions:
                    for b in region.blocks:
                        self.block(b, [], hands_on=False)
        term = _compat.terminator(block)
        if hands_on and term is not None and term.name in ("scf.yield", "scf.condition"):
            first = 1 if term.name == "scf.condition" else 0
            for k in range(first, len(term.operands)):
                value = term.operands[k]
                if not is_memref(value):
                    continue
                root = _root(value)
                if root in owned and root not in handed:
                    handed.append(root)
                else:
                    term.operands[k] = self._copy(term, value)
        for value in owned:
            if value not in handed:
                self._free(value, block)

    def _scf(self, op: ir.Operation, block: ir.Block, owned, handed) -> None:
        if op.name == "scf.for":
            body = op.regions[0].blocks[0]
            self._inits(op, 3, block, owned, handed)
            self.block(body, [a for a in list(body.arguments)[1:] if is_memref(a)])
        elif op.name == "scf.while":
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            self._inits(op, 0, block, owned, handed)
            self.block(before, [a for a in before.arguments if is_memref(a)])
            self.block(after, [a for a in after.arguments if is_memref(a)])
        else:
            given = self._given(op, block, owned, handed)
            for region in op.regions:
                for b in region.blocks:
                    self.block(b, list(given))

    def _given(self, op: ir.Operation, block: ir.Block, owned, handed) -> list[ir.Value]:
        """Buffers of ``block`` that a branch of ``op`` (scf.if, ...) yields
        and that ``op`` is the last use of: every branch owns them (the one
        that yields a buffer hands it to the result, the others free it), so
        a branch returning a buffer from outside needs no copy."""
        order = {o: i for i, o in enumerate(_compat.block_ops(block))}
        at = order[op]
        given = []
        for region in op.regions:
            for b in region.blocks:
                term = _compat.terminator(b)
                for value in (term.operands if term is not None else []):
                    if not is_memref(value):
                        continue
                    root = _root(value)
                    if root in owned and root not in handed and root not in given and all(
                            anc is None or order[anc] < at or anc == op
                            for anc in (ancestor_in_block(u, block) for u, _ in _user_ops(root))):
                        given.append(root)
        handed.extend(given)
        return given

    def _inits(self, loop: ir.Operation, first: int, block: ir.Block, owned, handed) -> None:
        """Hands the loop's memref init operands to it (or copies of them)."""
        order = {o: i for i, o in enumerate(_compat.block_ops(block))}
        at = order[loop]
        for k in range(first, len(loop.operands)):
            value = loop.operands[k]
            if not is_memref(value):
                continue
            root = _root(value)
            if (root in owned and root not in handed
                    and self._only_use(root, loop, k, block, order, at)):
                handed.append(root)
            else:
                loop.operands[k] = self._copy(loop, value)

    @staticmethod
    def _only_use(root, loop, k, block, order, at) -> bool:
        """Whether operand ``k`` of ``loop`` is the last use of ``root``."""
        for user, number in _user_ops(root):
            if user == loop and number == k:
                continue
            anc = ancestor_in_block(user, block)
            if anc is not None and order[anc] >= at:
                return False
        return True

    def _copy(self, op: ir.Operation, value: ir.Value) -> ir.Value:
        try:
            if value in self.host:
                new = _host_copy_before(op, value)
                self.host.update((new, _root(new)))
                return new
            return _copy_before(op, value)
        except ValueError as err:
            self.owner.error(op, str(err))
            raise self.owner.failure() from None

    def _free(self, value: ir.Value, block: ir.Block) -> None:
        """A gpu.dealloc of ``value`` after its last use (through views) in
        ``block`` (at its start when it has none there)."""
        ops = _compat.block_ops(block)
        order = {o: i for i, o in enumerate(ops)}
        defining = _compat.defining_op(value)
        last = defining if defining is not None and defining in order else None
        for user, number in _user_ops(value):
            anc = ancestor_in_block(user, block)
            if anc is None:
                continue                  # in another branch (see _given)
            if user.name in ("gpu.dealloc", "memref.dealloc"):
                return                    # freed already (a memref.dealloc)
            if number >= 0 and user.name in _ESCAPES and not (
                    user.name == "memref.store" and number):
                self.owner.warning(user, "a device buffer escapes through "
                                         f"'{user.name}'; it is not freed")
                return
            if last is None or order[anc] > order[last]:
                last = anc
        term = _compat.terminator(block)
        if last is None:
            ip = ir.InsertionPoint.at_block_begin(block)
        elif last == term:      # pragma: no cover - the terminator uses no freed buffer
            ip = ir.InsertionPoint(term)
        else:
            ip = ir.InsertionPoint.after(last)
        with ip, (defining or block.owner).location:
            if value in self.host:
                memref.DeallocOp(value)
            else:
                gpu.DeallocOp(None, [], value)


def _copy_before(op: ir.Operation, value: ir.Value) -> ir.Value:
    """A new device buffer holding a copy of ``value``, made before ``op``;
    of ``value``'s type (a memref.cast of an identity-layout buffer).
    Raises ValueError for a layout no contiguous buffer casts to."""
    def device(plain, sizes):
        dev = gpu.AllocOp(plain, None, [], sizes, []).result
        linalg.copy(value, outs=[dev])
        return dev
    return _copy_into_new(op, value, device)


def _host_copy_before(op: ir.Operation, value: ir.Value) -> ir.Value:
    """A new host buffer (``memref.alloc``) holding a copy of the host
    buffer ``value`` (``memref.copy``), made before ``op``."""
    def host(plain, sizes):
        new = memref.AllocOp(plain, sizes, []).result
        memref.copy(value, new)
        return new
    return _copy_into_new(op, value, host)


def _copy_into_new(op: ir.Operation, value: ir.Value, make) -> ir.Value:
    """``make(contiguous type, dynamic sizes)`` (a new buffer holding
    ``value``), before ``op``, cast back to ``value``'s type."""
    t = ir.MemRefType(value.type)
    if not _contiguous_fits(t):
        raise ValueError(f"cannot copy a buffer of type {t} into a new one (its layout "
                         "is no cast of a contiguous buffer)")
    with ir.InsertionPoint(op), op.location:
        sizes = [memref.dim(value, index(d)) for d in range(t.rank) if t.is_dynamic_dim(d)]
        plain = ir.MemRefType.get(t.shape, t.element_type, None, t.memory_space)
        new = make(plain, sizes)
        if plain != t:
            new = memref.cast(t, new)
    return new


def _contiguous_fits(t: ir.MemRefType) -> bool:
    """Whether a contiguous (identity layout) buffer of ``t``'s shape can be
    memref.cast to ``t``: every static stride and offset of ``t`` is the
    contiguous one."""
    strides, offset = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    if offset not in (0, dynamic):
        return False
    expected = 1
    for d in reversed(range(t.rank)):
        if strides[d] != dynamic and strides[d] != expected:
            return False
        expected = None if expected is None or t.is_dynamic_dim(d) else expected * t.shape[d]
    return True
