"""A Python mirror of one straight-line block, for the simplifier's driver.

Every Python<->C++ crossing of MLIR's bindings costs about a microsecond,
and walking a block (``list(block.operations)``), listing uses or printing
types costs several per op.  The driver reads each op once into a ``Node``
(name, operands, results, result types, use counts, position) and keeps the
mirror in step with every change it makes itself: ops the patterns create,
replacements, erasures by the patterns, CSE and DCE.  Nothing else may touch
the block while a mirror is in use.

Each node also carries a ``dirty`` bit: set while some pattern of the op
could match because something the patterns read changed since it last
failed them all (``touch_value``/``touch_op`` say what the patterns read).
"""

from __future__ import annotations

from mlir import ir

from ..._compat import op_key
from ._facts import SCAN, is_transpose

# Ops a straight-line gradient may hold.  The mirror refuses anything else
# (the caller falls back to MLIR's greedy driver).
_KNOWN_EXACT = frozenset({"arith.constant", "func.call", "func.return"})

# Ops through which ``_facts.splat_value`` looks at its operand.
SPLAT_THROUGH = frozenset({"rlx.reshape", "rlx.expand_dims", "rlx.squeeze", "rlx.flatten",
                           "rlx.broadcast_to", "rlx.permute_dims", "rlx.full", "rlx.astype"})



_UNREAD = object()


class Unsupported(Exception):
    """The block holds an op the mirror does not model."""


class Node:
    __slots__ = ("op", "name", "prev", "next", "alive", "dirty", "_operands", "results",
                 "types", "static_key", "pyattrs", "recomputed", "const", "stamp", "queued",
                 "passed", "splat_visit", "splat_flags", "candidates", "splat", "transpose")

    def __init__(self, op: ir.Operation, name: str):
        self.op = op
        self.name = name
        self.prev = self.next = None
        self.alive = True
        self.dirty = True
        self._operands = None
        self.results: list = []
        self.types: list = []
        self.static_key = None
        self.pyattrs = None
        self.recomputed = False
        self.const = None
        self.stamp = 0          # creation order (the driver's worklist)
        self.queued = False     # on the driver's worklist stack
        self.passed = 0         # the last iteration whose sweep passed it
        self.splat_visit = -1   # the driver's visit its splat_flags are from
        self.splat_flags = None
        self.candidates = None  # the driver's patterns for it (static gates applied)
        self.splat = _UNREAD    # an arith.constant's ``_facts.splat_value``, once read
        self.transpose = None   # a permute_dims's ``_facts.is_transpose``, once read

    def __repr__(self):     # pragma: no cover - debugging aid
        return f"<Node {self.name}>"


class Mirror:
    """The nodes of ``block`` in order, their results and use counts."""

    def __init__(self, block: ir.Block, records=None):
        """Raises ``Unsupported`` when ``block`` holds an op with regions or
        of another dialect (the caller then uses MLIR's greedy driver).

        ``records``: what ``rlx.recording()`` gathered while ops of the
        block were built, in creation order; an op met in the block that is
        the next record's is read from the record instead of from MLIR.
        The recorded ops must be in the block, unchanged since they were
        built (an op that is not where the records expect it is read
        from MLIR)."""
        self.block = block
        self.head: Node | None = None
        self.tail: Node | None = None
        self.size = 0
        self.of_op: dict = {}        # op_key(op) -> Node
        self.of_value: dict = {}     # result ir.Value -> (Node, index)
        self.uses: dict = {}         # ir.Value -> number of uses (block arguments too)
        self.users_of: dict = {}     # ir.Value -> {user Node: uses by it}
        self.type_info: dict = {}    # ir.Type -> shape tuple (None: not a ranked tensor)
        self.stamp = 0
        self.visit = 0               # the driver's count of op visits
        self.max_operands = 1        # of the ops other than the terminator
        self.terminator_uses: dict = {}
        self.pyattrs: dict = {}      # a static key's attributes -> them as Python values
        self.permutes_of: dict = {}  # ir.Value -> {permute_dims Node of it: None}
        # ir.Value -> {recomputed: [its earliest transpose in that phase, how many]}
        # (``transpose_before``; built on the first question, then kept in step)
        self.transposes: dict = {}
        make = self._make
        prev = None
        size = 0
        records = records or ()
        n_records = len(records)
        j = 0
        pending = records[0][0] if n_records else None
        for op in block.operations:      # (``_link`` at the tail, inlined)
            op = op.operation
            if pending is not None and op == pending:
                node = self._make_recorded(op, records[j])
                j += 1
                pending = records[j][0] if j < n_records else None
            else:
                node = make(op, check=True)
            node.prev = prev
            if prev is None:
                self.head = node
            else:
                prev.next = node
            prev = node
            size += 1
        self.tail = prev
        self.size = size

    # -- reading ---------------------------------------------------------------
    def _make(self, op: ir.Operation, check: bool = False) -> Node:
        # The hot loop of reading a block: every line is a crossing into the
        # bindings or a dictionary update, so it is written flat.
        name = op.name
        if check and not (name.startswith(("rlx.", "grad.")) or name in _KNOWN_EXACT):
            raise Unsupported(name)
        node = Node(op, name)
        results = list(op.results)
        types = [r.type for r in results]
        operands = list(op.operands)
        self._index(node, op, results, types, operands)
        if name == "func.return":
            terminator_uses = self.terminator_uses = {}
            for v in operands:
                terminator_uses[v] = terminator_uses.get(v, 0) + 1
        elif len(operands) > self.max_operands:
            self.max_operands = len(operands)
        attrs = op.attributes
        n_attrs = len(attrs)
        if n_attrs:
            named = []
            for k in range(n_attrs):
                a = attrs[k]
                named.append((a.name, a.attr))
            named.sort()
            named = tuple(named)
            for a, _ in named:
                if a == "grad.recomputed":
                    node.recomputed = True
        else:
            named = ()
        # rlx-cse's key, less the operands (attributes and types are uniqued:
        # equal objects print alike).
        node.static_key = (name, named, tuple(types))
        node.stamp = self.stamp
        self.stamp += 1
        if name == "rlx.permute_dims" and operands:
            self._add_permute(node, operands[0])
        return node

    def _index(self, node: Node, op: ir.Operation, results: list, types: list,
               operands: list) -> None:
        """Enters a new node in the indexes (its op, results, uses and users);
        the bookkeeping both readers share, written flat (the hot loop)."""
        self.of_op[op_key(op)] = node
        node.results = results
        node.types = types
        node._operands = operands
        of_value = self.of_value
        uses = self.uses
        i = 0
        for r in results:
            of_value[r] = (node, i)
            uses[r] = 0
            i += 1
        get = uses.get
        users_of = self.users_of
        for v in operands:
            uses[v] = get(v, 0) + 1
            by = users_of.get(v)
            if by is None:
                users_of[v] = {node: 1}
            else:
                by[node] = by.get(node, 0) + 1

    def _make_recorded(self, op: ir.Operation, record) -> Node:
        """``_make`` from what ``build_op`` recorded (an rlx op)."""
        _, operands, types, named = record
        name = op.name
        node = Node(op, name)
        self._index(node, op, list(op.results), types, list(operands))
        if len(operands) > self.max_operands:
            self.max_operands = len(operands)
        for a, _ in named:
            if a == "grad.recomputed":
                node.recomputed = True
        node.static_key = (name, named, tuple(types))
        node.stamp = self.stamp
        self.stamp += 1
        if name == "rlx.permute_dims" and operands:
            self._add_permute(node, operands[0])
        return node

    def operands(self, node: Node) -> list:
        ops = node._operands
        if ops is None:
            ops = node._operands = list(node.op.operands)
        return ops

    def producer(self, v: ir.Value):
        """The node defining ``v``; None for block arguments."""
        hit = self.of_value.get(v)
        return None if hit is None else hit[0]

    def producer_name(self, v: ir.Value) -> str:
        hit = self.of_value.get(v)
        return "" if hit is None else hit[0].name

    def shape(self, t: ir.Type):
        """The shape tuple of a ranked tensor type, None for other types."""
        info = self.type_info.get(t)
        if info is None:
            info = tuple(ir.RankedTensorType(t).shape) if isinstance(t, ir.RankedTensorType) \
                else None
            self.type_info[t] = info
        return info

    def value_shape(self, v: ir.Value):
        hit = self.of_value.get(v)
        if hit is not None:
            return self.shape(hit[0].types[hit[1]])
        return self.shape(v.type)

    def value_type(self, v: ir.Value) -> ir.Type:
        hit = self.of_value.get(v)
        return v.type if hit is None else hit[0].types[hit[1]]

    def result_uses(self, node: Node) -> int:
        uses = self.uses
        return sum(uses[r] for r in node.results)

    def nodes(self) -> list:
        out = []
        n = self.head
        while n is not None:
            out.append(n)
            n = n.next
        return out

    # -- transposes of a value ------------------------------------------------------
    def transpose_before(self, v: ir.Value, root: Node):
        """``_facts.existing_transpose``'s search of ``v``'s users, from the
        index: None when no transpose of ``v`` in ``root``'s phase precedes
        ``root``, that transpose's result when it is the only one of ``v``
        in the phase, else ``SCAN`` (the use list decides which).  A weight
        shared by n layers has n users: scanning them for every
        ``transpose(matmul(h, w))`` cost O(n) each."""
        entry = self.transposes.get(v)
        if entry is None:
            entry = self.transposes[v] = {False: [None, 0], True: [None, 0]}
            for node in self.permutes_of.get(v, ()):
                self._count_transpose(entry, node)
        first, count = entry[root.recomputed]
        if first is None or not first.op.is_before_in_block(root.op):
            return None
        return first.results[0] if count == 1 else SCAN

    def _count_transpose(self, entry: dict, node: Node) -> None:
        if node.transpose is None:
            node.transpose = is_transpose(node.op)
        if not node.transpose:
            return
        slot = entry[node.recomputed]
        if slot[0] is None or node.op.is_before_in_block(slot[0].op):
            slot[0] = node
        slot[1] += 1

    def _add_permute(self, node: Node, v: ir.Value) -> None:
        by = self.permutes_of.get(v)
        if by is None:
            self.permutes_of[v] = {node: None}
        else:
            by[node] = None
        entry = self.transposes.get(v)
        if entry is not None:
            self._count_transpose(entry, node)

    def _drop_permute(self, node: Node, v: ir.Value) -> None:
        by = self.permutes_of.get(v)
        if by is not None:
            by.pop(node, None)
        entry = self.transposes.get(v)
        if entry is None or not node.transpose:
            return
        slot = entry[node.recomputed]
        if slot[0] is node:
            del self.transposes[v]      # (the next question finds the new earliest)
        else:
            slot[1] -= 1

    # -- changing ----------------------------------------------------------------
    def _link(self, node: Node, before: Node | None) -> None:
        if before is None:
            node.prev, node.next = self.tail, None
            if self.tail is None:
                self.head = node
            else:
                self.tail.next = node
            self.tail = node
        else:
            node.prev, node.next = before.prev, before
            if before.prev is None:
                self.head = node
            else:
                before.prev.next = node
            before.prev = node
        self.size += 1

    def insert_before(self, ops, before: Node) -> list:
        """Mirrors ops just created (in order) right before ``before``."""
        made = []
        for op in ops:
            node = self._make(op.operation)
            self._link(node, before)
            made.append(node)
            for v in self.operands(node):
                self.touch_value(v)
            self.touch_op(node)
        return made

    def modified(self, node: Node) -> None:
        """``node``'s operands changed (the caller fixed the use counts, and
        ``terminator_uses`` for a ``func.return``)."""
        node._operands = None
        node.splat_visit = -1
        self.touch_op(node)

    def replace_value(self, old: ir.Value, new: ir.Value) -> None:
        """Mirrors ``old.replace_all_uses_with(new)`` (called after it)."""
        n = self.uses.get(old, 0)
        self.uses[old] = 0
        self.uses[new] = self.uses.get(new, 0) + n
        moved = self.users_of.pop(old, None) or {}
        self.transposes.pop(old, None)
        permutes = self.permutes_of.pop(old, None)
        if permutes:
            for node in permutes:
                self._add_permute(node, new)
        if moved:
            by = self.users_of.get(new)
            if by is None:
                by = self.users_of[new] = {}
            for node, k in moved.items():
                by[node] = by.get(node, 0) + k
                if node.name == "func.return":
                    # old's operands of the return are new's now: counted
                    # here, not recounted over the whole return (one
                    # operand per parameter gradient: rebuilding the counts
                    # at each replacement was quadratic in the parameters)
                    tu = self.terminator_uses
                    tu[new] = tu.get(new, 0) + tu.pop(old, 0)
        transposed = False
        for node in moved:
            if node.alive:
                self.modified(node)
                transposed |= node.name == "rlx.permute_dims"
        self.touch_value(new)
        if transposed:
            self.touch_transpose_user(new)

    def erase(self, node: Node) -> None:
        """Erases ``node``'s op (its results must be unused)."""
        operands = self.operands(node)
        if node.name == "rlx.permute_dims":
            self._drop_permute(node, operands[0])
        for r in node.results:
            self.of_value.pop(r, None)
            self.uses.pop(r, None)
            self.users_of.pop(r, None)
            self.permutes_of.pop(r, None)
            self.transposes.pop(r, None)
        self.of_op.pop(op_key(node.op), None)
        node.op.erase()
        node.alive = False
        if node.prev is None:
            self.head = node.next
        else:
            node.prev.next = node.next
        if node.next is None:
            self.tail = node.prev
        else:
            node.next.prev = node.prev
        self.size -= 1
        uses = self.uses
        users_of = self.users_of
        for v in operands:
            uses[v] -= 1
            by = users_of[v]
            k = by[node] - 1
            if k:
                by[node] = k
            else:
                del by[node]
        for v in operands:
            self.touch_value(v)
        node.op = None

    def release(self) -> None:
        """Unlinks the nodes (reference cycles) and drops the tables, so
        refcounting frees everything now: left to Python's cyclic collector,
        the mirror's objects (about 30 per op) cost a collection that walks
        them all once the pass re-enables it."""
        n = self.head
        while n is not None:
            nxt = n.next
            n.prev = n.next = None
            n = nxt
        self.head = self.tail = None
        self.of_op = {}
        self.of_value = {}
        self.uses = {}
        self.users_of = {}
        self.terminator_uses = {}
        self.pyattrs = {}
        self.permutes_of = {}
        self.transposes = {}

    # -- what the patterns read ---------------------------------------------------
    def touch_op(self, node: Node) -> None:
        """``node`` is new or its operands changed: it, and the ops whose
        patterns look at it (two levels of users, and chains of shape ops
        of it that ``splat_value`` follows), may match now."""
        node.dirty = True
        self._down(node, 2, 8)

    def _down(self, node: Node, hops: int, splat_hops: int) -> None:
        stack = [(node, hops, splat_hops)]
        seen = set()
        while stack:
            n, h, s = stack.pop()
            for r in n.results:
                for user in self._users(r):
                    user.dirty = True
                    nh, ns = h - 1, (s - 1 if user.name in SPLAT_THROUGH else 0)
                    if (nh > 0 or ns > 0) and (id(user), nh, ns) not in seen:
                        seen.add((id(user), nh, ns))
                        stack.append((user, max(nh, 0), ns))

    def touch_value(self, v: ir.Value) -> None:
        """``v`` gained or lost a user: the ops that read its users
        (``only_used_by``, ``removable``, ``existing_transpose``) may match."""
        p = self.producer(v)
        values = p.results if p is not None else [v]
        if self.uses.get(v, 0) - self.terminator_uses.get(v, 0) > self._wide():
            return
        if p is not None:
            p.dirty = True
        for r in values:
            for user in self._users(r):
                user.dirty = True
                for r2 in user.results:
                    for u2 in self._users(r2):
                        u2.dirty = True

    def touch_transpose_user(self, v: ir.Value) -> None:
        """A transpose of ``v`` appeared or went: ``existing_transpose(v)``
        of transposes of matmuls of ``v`` may change."""
        for user in self._users(v):
            if user.name == "rlx.matmul":
                for r in user.results:
                    for u2 in self._users(r):
                        u2.dirty = True

    def _wide(self) -> int:
        """Uses (the terminator's aside) above which a value has more
        distinct users (at least uses / m, m: the most operands of an op)
        than any pattern's single-use or all-users-dying test can see:
        ``removable`` lets at most 1 + m + m * m ops die, one more or one
        fewer user included."""
        m = self.max_operands
        return m * (m * m + m + 2)

    def _users(self, v: ir.Value) -> list:
        """The nodes using ``v`` (from the mirror's own index: asking MLIR
        for a use list costs a crossing per use)."""
        by = self.users_of.get(v)
        return list(by) if by else []


def is_pure_name(name: str) -> bool:
    """``dialects.util.is_pure`` by name."""
    return name.startswith(("rlx.", "grad.")) or name == "arith.constant"


def pure_for_cse(node: Node) -> bool:
    """What ``cleanup.cse_block`` merges: pure ops, not grad markers, not
    checkpointing's recomputed ops."""
    if node.recomputed:
        return False
    return node.name.startswith("rlx.") or node.name == "arith.constant"
