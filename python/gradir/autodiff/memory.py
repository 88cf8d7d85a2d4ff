"""The memory model: peak bytes of live tensors of a function in program order.

A function runs its ops one after the other.  Every tensor an op produces is
a new buffer; ``rlx.tuple``, ``rlx.tuple_get_item`` and the grad markers only
refer to buffers that exist already.  A buffer is live from the op that
produces it to the last op that uses it (through any value that refers to
it); arguments are live throughout (the caller owns them) and returned
values up to the return.  While an op runs, its operands and its results are
all live.  The peak is the largest total over the ops.

Live bytes are split three ways:

- *arguments*: the function's arguments;
- *saved for backward*: forward values that the backward part uses.  The
  forward part is what computes the first ``forward_results`` returned
  values (``@f_adjoint``/``@f_vjp``/``@f_fwd`` return ``@f``'s results
  first); a forward value is saved when an op outside the forward part uses
  it or it is returned after those results;
- *temporaries*: everything else.

``memory_report(fn)`` is the Python API; rlx-memory-report prints it as a
remark, and automatic rematerialization (``remat.py``) uses the same model
to check its plans.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ..ir import find_function, function_type, symbol_name
from .cost import op_flops, type_bytes

__all__ = ["AbstractOp", "Program", "MemoryReport", "abstract_block", "build_program",
           "peak_of", "forward_ops", "infer_forward_results", "memory_report"]

ALIAS_IDENTITY = frozenset({"grad.start_checkpoint", "grad.end_checkpoint", "grad.no_grad"})


@dataclass
class AbstractOp:
    """One op of a straight-line program, on integer value ids."""
    name: str
    operands: list[int]
    results: list[int]
    result_bytes: list[int]
    alias: str | None = None      # None, "tuple", "get" or "identity"
    index: int = 0                # the field of a "get"
    flops: int = 0


@dataclass
class Program:
    """Buffers and, per step, the buffers each step uses and defines.  The
    last step is the return."""
    sizes: list[int]
    is_arg: list[bool]
    uses: list[tuple[int, ...]]
    defs: list[tuple[int, ...]]
    names: list[str]
    value_buffers: dict = field(default_factory=dict)   # value id -> tuple of buffers


def alias_kind(name: str) -> str | None:
    if name == "rlx.tuple":
        return "tuple"
    if name == "rlx.tuple_get_item":
        return "get"
    if name in ALIAS_IDENTITY:
        return "identity"
    return None


def abstract_block(block: ir.Block, module: ir.Operation | None = None):
    """``(ids, args, ops, ret, ir_ops)``: a value -> id map, the argument ids
    with their bytes, the ops as ``AbstractOp`` (the terminator excluded),
    the return's operand ids and the matching ``ir.Operation`` list."""
    ids: dict = {}

    def vid(v) -> int:
        i = ids.get(v)
        if i is None:
            i = ids[v] = len(ids)
        return i

    args = [(vid(a), type_bytes(a.type)) for a in block.arguments]
    ops, ir_ops = [], []
    all_ops = [o.operation for o in block.operations]
    for op in all_ops[:-1]:
        kind = alias_kind(op.name)
        index = 0
        if kind == "get":
            index = int(ir.IntegerAttr(op.attributes["index"]).value)
        results = [vid(r) for r in op.results]
        result_bytes = [type_bytes(r.type) for r in op.results]
        operands = [vid(v) for v in op.operands]
        if op.name == "tensor.empty":
            result_bytes = [0]      # storage a loop fills in place (its result counts)
        if op.name in ("tensor.insert_slice", "tensor.insert"):
            # writes its destination (operand 1) in place: the result is that buffer
            operands = [vid(op.operands[1]), vid(op.operands[0])]
            ops.append(AbstractOp(op.name, operands, results, result_bytes, "identity"))
            ir_ops.append(op)
            continue
        if op.regions:
            # A loop or branch: what its bodies capture is used at this step,
            # and one run of a body needs its own temporaries (a scratch buffer
            # live at this step only).
            from .regions import captured_values
            operands += [vid(v) for v in captured_values(op)]
            results.append(len(ids) + 1_000_000_000 + len(ops))
            result_bytes.append(region_scratch(op, module))
        ops.append(AbstractOp(op.name, operands, results, result_bytes, kind, index,
                              op_flops(op, module)))
        ir_ops.append(op)
    ret = [vid(v) for v in all_ops[-1].operands] if all_ops else []
    return ids, args, ops, ret, ir_ops


def region_scratch(op: ir.Operation, module=None) -> int:
    """Bytes of temporaries one run of ``op``'s largest body needs beyond its
    block arguments (the peak of the body as a program of its own)."""
    best = 0
    for region in op.regions:
        for block in region.blocks:
            if not len(list(block.operations)):
                continue
            _, args, ops, ret, _ = abstract_block(block, module)
            p = peak_of(build_program(args, ops, ret))
            best = max(best, p.bytes - p.arguments)
    return best


def loop_summaries(block: ir.Block) -> list:
    """``(op, trips or None, carried bytes per iteration, bytes of the
    results)`` of every ``scf.for``/``scf.while`` in ``block``: a loop that
    records its iterations for the backward returns stacks of trips x the
    carried bytes."""
    from .cost import static_trips
    out = []
    for op in block.operations:
        op = op.operation
        if op.name not in ("scf.for", "scf.while"):
            continue
        carried = [a for a in op.regions[0].blocks[0].arguments]
        if op.name == "scf.for":
            carried = carried[1:]
        stacks = [i for i, a in enumerate(carried) if _is_stack(a)]
        per_iter = sum(type_bytes(a.type) for i, a in enumerate(carried) if i not in stacks)
        stored = sum(type_bytes(op.results[i].type) for i in stacks)
        out.append((op, static_trips(op), per_iter, stored))
    return out


def _is_stack(arg) -> bool:
    """Whether a loop-carried block argument is a stack the loop records its
    iterations in (written by tensor.insert_slice/insert as the destination)."""
    for use in arg.uses:
        owner = use.owner
        owner = getattr(owner, "operation", owner)
        if owner.name in ("tensor.insert_slice", "tensor.insert") and use.operand_number == 1:
            return True
        if owner.name == "scf.if" or owner.name == "scf.yield":
            continue
    # written inside a nested scf.if (every-k-th recording)
    return any(_nested_dest(use) for use in arg.uses)


def _nested_dest(use) -> bool:
    owner = getattr(use.owner, "operation", use.owner)
    return owner.name == "tensor.insert_slice" and use.operand_number == 1


def build_program(args, ops, ret) -> Program:
    """Assigns buffers to values and lists each step's uses and defines.

    ``args``: ``[(value id, bytes)]``; ``ops``: ``AbstractOp`` list; ``ret``:
    returned value ids."""
    sizes: list[int] = []
    is_arg: list[bool] = []
    bufs: dict[int, tuple[int, ...]] = {}
    fields: dict[int, list[int]] = {}     # tuple value -> its field values

    def new(size: int, arg: bool) -> int:
        sizes.append(size)
        is_arg.append(arg)
        return len(sizes) - 1

    for v, size in args:
        bufs[v] = (new(size, True),)
    uses, defs, names = [], [], []
    for op in ops:
        used = set()
        for v in op.operands:
            used.update(bufs.get(v, ()))
        made = []
        if op.alias == "tuple":
            fields[op.results[0]] = list(op.operands)
            bufs[op.results[0]] = tuple(sorted(used))
        elif op.alias == "get":
            parts = fields.get(op.operands[0])
            if parts is not None and op.index < len(parts):
                part = parts[op.index]
                bufs[op.results[0]] = bufs.get(part, ())
                if part in fields:
                    fields[op.results[0]] = fields[part]
            else:
                bufs[op.results[0]] = bufs.get(op.operands[0], ())
        elif op.alias == "identity":
            src = op.operands[0]
            bufs[op.results[0]] = bufs.get(src, ())
            if src in fields:
                fields[op.results[0]] = fields[src]
        else:
            for r, size in zip(op.results, op.result_bytes):
                b = new(size, False)
                bufs[r] = (b,)
                made.append(b)
        uses.append(tuple(used))
        defs.append(tuple(made))
        names.append(op.name)
    used = set()
    for v in ret:
        used.update(bufs.get(v, ()))
    uses.append(tuple(used))
    defs.append(())
    names.append("func.return")
    return Program(sizes, is_arg, uses, defs, names, bufs)


@dataclass(frozen=True)
class Peak:
    bytes: int
    step: int
    arguments: int
    saved: int
    temporaries: int


def peak_of(program: Program, saved: set[int] = frozenset()) -> Peak:
    """The peak of ``program``; ``saved`` are the buffers counted as saved
    for backward."""
    n = len(program.uses)
    first = [0] * len(program.sizes)
    last = [-1] * len(program.sizes)
    for t, made in enumerate(program.defs):
        for b in made:
            first[b] = t
            last[b] = t
    for t, used in enumerate(program.uses):
        for b in used:
            if last[b] < t:
                last[b] = t
    delta = [0] * (n + 1)
    for b, size in enumerate(program.sizes):
        if program.is_arg[b]:
            delta[0] += size
            delta[n] -= size
        else:
            delta[first[b]] += size
            delta[last[b] + 1] -= size
    best, at, live = -1, 0, 0
    for t in range(n):
        live += delta[t]
        if live > best:
            best, at = live, t
    args = saved_bytes = temps = 0
    for b, size in enumerate(program.sizes):
        if program.is_arg[b]:
            args += size
        elif first[b] <= at <= last[b]:
            if b in saved:
                saved_bytes += size
            else:
                temps += size
    return Peak(max(best, 0), at, args, saved_bytes, temps)


def forward_ops(ops: list[AbstractOp], ret: list[int], n_results: int) -> list[bool]:
    """Which ops compute the first ``n_results`` returned values (all ops
    when those are all the returned values)."""
    if n_results >= len(ret):
        return [True] * len(ops)
    need = set(ret[:n_results])
    fwd = [False] * len(ops)
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if any(r in need for r in op.results):
            fwd[i] = True
            need.update(op.operands)
    return fwd


def saved_buffers(program: Program, ops: list[AbstractOp], ret: list[int],
                  n_results: int) -> set[int]:
    """Buffers made by forward ops and used by non-forward ops (or returned
    after the first ``n_results`` values)."""
    fwd = forward_ops(ops, ret, n_results)
    fwd_bufs = set()
    for i, op in enumerate(ops):
        if fwd[i]:
            fwd_bufs.update(program.defs[i])
    saved = set()
    for i, op in enumerate(ops):
        if not fwd[i]:
            saved.update(b for b in program.uses[i] if b in fwd_bufs)
    for v in ret[n_results:]:
        saved.update(b for b in program.value_buffers.get(v, ()) if b in fwd_bufs)
    return saved


# ----------------------------------------------------------------------------
# The IR-level API

def _n_results(fn: ir.Operation) -> int:
    return len(function_type(fn).results)


def infer_forward_results(fn: ir.Operation, module: ir.Operation | None = None) -> int:
    """How many of ``fn``'s results its forward part computes.

    ``@f_adjoint``, ``@f_vjp`` and ``@f_fwd`` (rlx-gradient's outputs) return
    ``@f``'s results first; any other function is all forward."""
    fn = fn.operation
    name = symbol_name(fn)
    if module is not None:
        for suffix in ("_adjoint", "_vjp", "_fwd"):
            if name.endswith(suffix) and len(name) > len(suffix):
                base = find_function(module, name[: -len(suffix)])
                if base is not None:
                    return min(_n_results(base), _n_results(fn))
    return _n_results(fn)


@dataclass(frozen=True)
class MemoryReport:
    """The peak of one function (bytes) and what is live at it."""
    function: str
    peak: int
    arguments: int
    saved: int
    temporaries: int
    op_index: int              # the op at the peak (len(body) - 1 = the return)
    op_name: str
    saved_total: int           # bytes of every saved-for-backward buffer
    forward_results: int
    flops: int

    def summary(self) -> str:
        return (f"peak {self.peak} bytes = arguments {self.arguments} + saved for backward "
                f"{self.saved} + temporaries {self.temporaries}, at '{self.op_name}' "
                f"(op {self.op_index}); saved for backward in all: {self.saved_total} bytes; "
                f"{self.flops} FLOPs")


def memory_report(fn, forward_results: int | None = None,
                  module: ir.Operation | None = None) -> MemoryReport:
    """The memory report of ``fn`` (a ``func.func`` with one block).

    ``forward_results`` defaults to ``infer_forward_results`` (needs the
    module, found from ``fn``'s parent when not given)."""
    fn = fn.operation
    if module is None:
        parent = fn.parent
        module = parent.operation if parent is not None else None
    if forward_results is None:
        forward_results = infer_forward_results(fn, module)
    block = fn.regions[0].blocks[0]
    _, args, ops, ret, _ = abstract_block(block, module)
    program = build_program(args, ops, ret)
    saved = saved_buffers(program, ops, ret, forward_results)
    p = peak_of(program, saved)
    return MemoryReport(
        function=symbol_name(fn),
        peak=p.bytes, arguments=p.arguments, saved=p.saved, temporaries=p.temporaries,
        op_index=p.step, op_name=program.names[p.step],
        saved_total=sum(program.sizes[b] for b in saved),
        forward_results=forward_results,
        flops=sum(op.flops for op in ops))
