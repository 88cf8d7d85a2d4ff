"""The simplifier's worklist driver: MLIR's greedy driver, in Python, on a mirror.

``run_patterns`` applies the patterns exactly as ``_compat.apply_patterns_configured``
(MLIR 22's greedy driver: folding, constant CSE and region simplification
off) would, with the same worklist: every iteration starts from all ops in
block order, popped from the back; a matched op's replaced results push
their users, and its erasure pushes the producers of its operands that are
left with at most one other user; ops a Python pattern creates are not
pushed (they are met in the next iteration); a dead ``arith.constant`` is
erased when popped; iterations repeat while anything changed, 16 at most.
So the result is the same IR, in the same order.

What makes it fast: an op whose patterns all failed is not tried again
until something they read changed (``Mirror.touch_*`` keeps a ``dirty``
bit per op), and a *gate* per pattern, a necessary condition checked on
the mirror, skips the Python patterns that cannot match (most ops of a
gradient match none).  ``cse``/``dce`` are rlx-cse and rlx-dce on the
mirror, with each op's key read once.
"""

from __future__ import annotations

from mlir import ir

from . import _facts, algebra, shape, transpose
from ..._compat import op_key
from ._mirror import _UNREAD, SPLAT_THROUGH, Mirror, Node, is_pure_name, pure_for_cse

MAX_ITERATIONS = 16

_SPLAT_SOURCES = frozenset({"rlx.zeros", "rlx.zeros_like", "rlx.ones", "rlx.ones_like",
                            "arith.constant"})


# --- gates: necessary conditions of the patterns, on the mirror ---------------

def _maybe_splat(m: Mirror, v, depth: int = 8) -> bool:
    """False only when ``_facts.splat_value(v)`` is None."""
    while depth > 0:
        p = m.producer(v)
        if p is None:
            return False
        if p.name in _SPLAT_SOURCES:
            if p.name != "arith.constant":
                return True
            if p.const is None:
                attr = p.op.attributes["value"]
                p.const = isinstance(attr, ir.DenseElementsAttr) and attr.is_splat
            return p.const
        if p.name not in SPLAT_THROUGH:
            return False
        v = m.operands(p)[0]
        depth -= 1
    return False


_STATIC_FLAGS = -2     # Node.splat_visit: the flags hold until n's operands change


def _splat_flags(m, n) -> list:
    """``_maybe_splat`` of each operand of ``n``, read once per visit of
    ``n`` (several gates ask; nothing changes between them: a pattern that
    does not match changes nothing, one that matches ends the visit).
    When no operand is made by a shape-only op (``SPLAT_THROUGH``), the
    flags depend only on which ops make the operands, so they hold until
    ``n``'s operands change (``Mirror.modified`` resets them)."""
    visit = n.splat_visit
    if visit == m.visit or visit == _STATIC_FLAGS:
        return n.splat_flags
    flags = []
    static = True
    of_value = m.of_value
    for v in m.operands(n):
        hit = of_value.get(v)
        if hit is None:                 # a block argument
            flags.append(False)
            continue
        if hit[0].name in SPLAT_THROUGH:
            static = False
        flags.append(_maybe_splat(m, v))
    n.splat_flags = flags
    n.splat_visit = _STATIC_FLAGS if static else m.visit
    return flags


def _any_splat(m, n):
    return True in _splat_flags(m, n)


def _all_splat(m, n):
    return False not in _splat_flags(m, n)


_MAYBE = object()      # ``_splat_number``: could be any value


def _splat_number(m: Mirror, v, depth: int = 8):
    """``_facts.splat_value(v)`` on the mirror, or ``_MAYBE`` where that
    would need the IR (``rlx.astype``'s conversion, a deep chain)."""
    while depth > 0:
        p = m.producer(v)
        if p is None:
            return None
        name = p.name
        if name == "rlx.zeros" or name == "rlx.zeros_like":
            return 0
        if name == "rlx.ones" or name == "rlx.ones_like":
            return 1
        if name == "arith.constant":
            if p.splat is _UNREAD:
                p.splat = _facts.splat_value(p.results[0])
            return p.splat
        if name == "rlx.astype":
            return _MAYBE
        if name not in SPLAT_THROUGH:
            return None
        v = m.operands(p)[0]
        depth -= 1
    return _MAYBE


# drop_neutral's neutral element per operand (None: that side is not tried)
_NEUTRAL = {"rlx.add": (0, 0), "rlx.subtract": (0, 0), "rlx.multiply": (1, 1),
            "rlx.divide": (None, 1), "rlx.power": (None, 1)}


def _neutral(m, n):
    """``algebra.drop_neutral``: an operand that is the op's neutral splat."""
    want = _NEUTRAL.get(n.name)
    flags = _splat_flags(m, n)
    if want is None:
        return True in flags
    ops = m.operands(n)
    for i, w in enumerate(want):
        if w is None or not flags[i]:
            continue
        s = _splat_number(m, ops[i])
        if s is _MAYBE or (s is not None and s == w):
            return True
    return False


def _zero_operand(m, n):
    """``algebra.absorb_zero``: an operand at one of its positions may be a
    zero splat (a residual network's ``h * 0.5`` holds a splat that is not
    zero: reading its value from MLIR on every visit cost more than the
    rest of the visit)."""
    flags = _splat_flags(m, n)
    ops = m.operands(n)
    for i in algebra._ZERO_IF_ANY[n.name]:
        if i >= len(ops) or not flags[i]:
            continue
        s = _splat_number(m, ops[i])
        if s is _MAYBE or (s is not None and s == 0):
            return True
    return False


def _op0_from(*names):
    def gate(m, n):
        ops = m.operands(n)
        return bool(ops) and m.producer_name(ops[0]) in names
    return gate


def _any_from(*names):
    def gate(m, n):
        return any(m.producer_name(v) in names for v in m.operands(n))
    return gate


def _fold_constants(m, n):
    if n.name in ("rlx.zeros_like", "rlx.ones_like"):
        return True
    if n.name in algebra._BINARY:
        return _all_splat(m, n)
    return _any_splat(m, n)


_WIDENING = frozenset({"rlx.broadcast_to", "rlx.full", "rlx.reshape", "rlx.expand_dims"})


def _implicit_broadcast(m, n):
    flags = _splat_flags(m, n)
    users_of = m.users_of
    for i, v in enumerate(m.operands(n)):
        if not m.value_shape(v):
            continue
        if m.producer_name(v) in _WIDENING:
            return True
        # A splat operand becomes a 0-d constant: two new ops, so the
        # rewrite needs the splat's producer to die with the op (``removable``:
        # ``n`` its only user).  A constant shared by every layer (a residual
        # network's ``h * 0.5``) never does.
        if flags[i] and len(users_of.get(v) or ()) == 1:
            return True
    return False


def _fold_identity(m, n):
    ops = m.operands(n)
    return bool(ops) and m.value_type(ops[0]) == n.types[0]


def _attrs(m: Mirror, n: Node) -> dict:
    if n.pyattrs is None:
        # ``_facts.attrs(n.op)`` from the attributes the mirror read (its
        # static key's sorted (name, attribute) pairs: the op's attributes
        # never change while it lives)
        # (alike ops share the conversion: the mirror's memo, per block)
        named = n.static_key[1]
        hit = m.pyattrs.get(named)
        if hit is None:
            from ...dialects.infer import _py_value
            hit = m.pyattrs[named] = {name: _py_value(attr) for name, attr in named}
        n.pyattrs = hit
    return n.pyattrs


def _identity_reduction(m, n):
    s = m.value_shape(m.operands(n)[0])
    if s is None:
        return True
    if n.name == "rlx.collapse_sum_to":
        target = m.shape(n.types[0])
        if target is None:
            return True
        lead = len(s) - len(target)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(target)
                                    if d == 1 and s[lead + i] != 1]
    else:
        axis = _attrs(m, n).get("axis")
        rank = len(s)
        axes = range(rank) if axis is None else [a % rank for a in axis] if rank else []
    return all(s[i] == 1 for i in axes)


def _trivial_permute(m, n):
    s = m.value_shape(m.operands(n)[0])
    if s is None:
        return True
    axes = _attrs(m, n).get("axes")
    rank = len(s)
    perm = list(range(rank))[::-1] if axes is None else [a % rank for a in axes]
    moved = [i for i in perm if s[i] != 1]
    return moved == sorted(moved)


def _same_branches(m, n):
    ops = m.operands(n)
    return ops[1] == ops[2]


GATES = {
    transpose.fold_trivial_permute: _trivial_permute,
    transpose.fold_permute_permute: _op0_from("rlx.permute_dims"),
    transpose.swap_matmul_transpose: _op0_from("rlx.matmul"),
    shape.fold_identity: _fold_identity,
    shape.merge_reshapes: _op0_from(*sorted(shape.RESHAPES)),
    shape.merge_broadcasts: _op0_from("rlx.broadcast_to", "rlx.reshape", "rlx.expand_dims"),
    shape.move_broadcast: _op0_from("rlx.broadcast_to"),
    shape.reduce_of_broadcast: _op0_from("rlx.broadcast_to"),
    shape.identity_reduction: _identity_reduction,
    algebra.drop_neutral: _neutral,
    algebra.same_branches: _same_branches,
    algebra.double_negative: _op0_from("rlx.negative"),
    algebra.absorb_negative: _any_from("rlx.negative"),
    algebra.negative_out_of_reduction: _op0_from("rlx.negative"),
    algebra.absorb_zero: _zero_operand,
    algebra.fold_constants: _fold_constants,
    algebra.implicit_broadcast: _implicit_broadcast,
    algebra.sum_of_matmul: _op0_from("rlx.matmul"),
    algebra.matmul_of_splat: _any_splat,
}


def _always(m, n):
    return True


# Gates that read only the op's own attributes and result types and its
# operands' types: none of these changes while the op lives (every rewrite
# replaces a value by one of the same type), so each is asked once per op.
_STATIC_GATES = frozenset({_trivial_permute, _identity_reduction, _fold_identity})


def _candidates(m, node, table) -> list:
    """``node``'s (pattern, gate) pairs less those a static gate rules out
    (and with the static gates that pass dropped)."""
    out = []
    for fn, gate in table.get(node.name, ()):
        if gate in _STATIC_GATES:
            if not gate(m, node):
                continue
            gate = _always
        out.append((fn, gate))
    return out


# --- the greedy driver ----------------------------------------------------------

class _Rewriter:
    """What the patterns see of MLIR's PatternRewriter (``ip``,
    ``replace_op``); ``_facts.Rewrite`` reports the ops it built."""

    def __init__(self, driver: "_Driver"):
        self.driver = driver
        self.node: Node | None = None
        self.created: list = []

    @property
    def ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self.node.op)

    def transpose_before(self, v):
        """``_facts.existing_transpose``'s search, from the mirror's index
        (``Mirror.transpose_before``)."""
        return self.driver.m.transpose_before(v, self.node)

    def record_created(self, ops) -> None:
        self.created = list(ops)

    def replace_op(self, op, values) -> None:
        self.driver.replace(self.node, list(values), self.created)
        self.created = []


_TABLES: dict = {}     # id(patterns) -> (the patterns, as a tuple; their table)


def _table(patterns) -> dict:
    """Root op name -> [(pattern, gate)], built once per pattern list."""
    key = tuple(patterns)
    hit = _TABLES.get(id(patterns))
    if hit is not None and hit[0] == key:
        return hit[1]
    table: dict[str, list] = {}
    for root, fn in key:
        table.setdefault(root, []).append((fn, GATES.get(fn, _always)))
    if len(_TABLES) > 16:
        _TABLES.clear()
    _TABLES[id(patterns)] = (key, table)
    return table


class _Driver:
    def __init__(self, mirror: Mirror, patterns):
        self.m = mirror
        self.table: dict[str, list] = _table(patterns)
        self.rewriter = _Rewriter(self)
        self.stack: list = []
        self.cursor: Node | None = None
        self.iteration = 0
        self.iteration_start = 0
        self.fired = 0

    # -- worklist -----------------------------------------------------------------
    # MLIR's Worklist holds, at the start of an iteration, every op in block
    # order, and appends what is pushed later (a push of an op already in it
    # does nothing); ops are popped from the back.  Here the initial part is
    # a cursor walking the mirror backwards over the ops born before the
    # iteration (``Node.stamp``), and the appended part a stack: an op the
    # cursor has not passed yet is still in the initial part.
    def push(self, node: Node) -> None:
        if not node.alive or node.queued:
            return
        if node.stamp < self.iteration_start and node.passed != self.iteration:
            return
        node.queued = True
        self.stack.append(node)

    def remove(self, node: Node) -> None:
        node.queued = False

    def _pop(self):
        stack = self.stack
        while stack:
            node = stack.pop()
            if node.queued:
                node.queued = False
                return node
        # The cursor passes the ops that nothing changed around (``dirty``
        # unset) here: ``run`` would pop and skip them one by one.
        cur = self.cursor
        start = self.iteration_start
        iteration = self.iteration
        while cur is not None:
            if cur.stamp < start:
                cur.passed = iteration
                if cur.dirty:
                    break
            cur = cur.prev
        if cur is None:
            self.cursor = None
            return None
        self.cursor = cur.prev
        return cur

    def push_operands(self, node: Node) -> None:
        """MLIR's addOperandsToWorklist before ``node`` is erased."""
        m = self.m
        users_of = m.users_of
        for v in m.operands(node):
            p = m.producer(v)
            if p is None:
                continue
            # pushed unless two users other than ``node`` remain
            by = users_of.get(v) or ()
            if len(by) - (node in by) < 2:
                self.push(p)

    # -- rewriting ----------------------------------------------------------------
    def replace(self, node: Node, values: list, created: list) -> None:
        m = self.m
        new_nodes = m.insert_before(created, node)
        for n in new_nodes:
            if n.name == "rlx.permute_dims":
                m.touch_transpose_user(m.operands(n)[0])
        for old, new in zip(node.results, values):
            if m.uses.get(old):
                # (MLIR's use-list order: the order of the pushes)
                for u in old.uses:
                    un = m.of_op.get(op_key(u.owner))
                    if un is not None:
                        self.push(un)
            old.replace_all_uses_with(new)
            m.replace_value(old, new)
        self.erase(node)

    def erase(self, node: Node) -> None:
        self.push_operands(node)
        self.remove(node)
        if node.name == "rlx.permute_dims":
            self.m.touch_transpose_user(self.m.operands(node)[0])
        self.m.erase(node)

    # -- one greedy run ---------------------------------------------------------
    def run(self) -> bool:
        """Returns whether the patterns reached a fixpoint."""
        m = self.m
        rewriter = self.rewriter
        for _ in range(MAX_ITERATIONS):
            self.iteration += 1
            self.iteration_start = m.stamp
            self.cursor = m.tail
            self.stack = []
            changed = False
            while True:
                node = self._pop()
                if node is None:
                    break
                if not node.dirty:
                    continue
                if node.name == "arith.constant" and not m.result_uses(node):
                    self.erase(node)
                    changed = True
                    continue
                matched = False
                m.visit += 1
                candidates = node.candidates
                if candidates is None:
                    candidates = node.candidates = _candidates(m, node, self.table)
                for fn, gate in candidates:
                    if not gate(m, node):
                        continue
                    rewriter.node = node
                    rewriter.created = []
                    if not fn(node.op, rewriter):
                        matched = True
                        break
                if matched:
                    self.fired += 1
                    changed = True
                else:
                    node.dirty = False
            if not changed:
                return True
        return False


# --- rlx-cse and rlx-dce on the mirror ---------------------------------------------

def cse(m: Mirror, driver: _Driver) -> int:
    """``cleanup.cse_block`` on the mirror: merges each pure op into the first
    identical one before it.  Returns how many ops it erased."""
    seen = {}
    erased = 0
    transposed: dict = {}     # values that lost a transpose (an ordered set)
    n = m.head
    operands = m.operands
    while n is not None:
        nxt = n.next
        name = n.name
        if (name.startswith("rlx.") or name == "arith.constant") and not n.recomputed:
            # (``pure_for_cse``, inlined)
            key = (n.static_key, tuple(n._operands or operands(n)))
            first = seen.get(key)
            if first is None:
                seen[key] = n
            else:
                for old, new in zip(n.results, first.results):
                    old.replace_all_uses_with(new)
                    m.replace_value(old, new)
                if n.name == "rlx.permute_dims":
                    transposed[m.operands(n)[0]] = None
                m.erase(n)
                erased += 1
        n = nxt
    _touch_transposed(m, transposed)
    return erased


def _touch_transposed(m: Mirror, values) -> None:
    """``Mirror.touch_transpose_user`` once per value that lost transposes
    during a sweep of cse or dce, after it: the marks are dirty bits, which
    only the driver reads, and the users it reaches then include every
    live one it would have reached at each erasure (neither sweep moves a
    use away from a surviving op).  Once per erasure, a weight shared by n
    layers (n transposes, merged by cse) would cost n walks of its n
    users."""
    for v in values:
        m.touch_transpose_user(v)


_PURE: dict = {}      # op name -> is_pure_name(name)


def dce(m: Mirror) -> int:
    """``cleanup.erase_dead_ops`` on the mirror (reverse order)."""
    erased = 0
    uses = m.uses
    pure = _PURE
    transposed: dict = {}
    n = m.tail
    while n is not None:
        prev = n.prev           # (erasing ``n`` leaves ``prev`` in place)
        name = n.name
        is_pure = pure.get(name)
        if is_pure is None:
            is_pure = pure[name] = is_pure_name(name)
        if is_pure:
            for r in n.results:
                if uses[r]:
                    break
            else:
                if name == "rlx.permute_dims":
                    transposed[m.operands(n)[0]] = None
                m.erase(n)
                erased += 1
        n = prev
    _touch_transposed(m, transposed)
    return erased


def simplify_block(m: Mirror, patterns, max_rounds: int, dce_first: bool = False) -> None:
    """``simplify_function``'s rounds (patterns, cse, dce) on a mirrored block."""
    if dce_first:
        dce(m)
    driver = _Driver(m, patterns)
    for round_ in range(max_rounds):
        driver.fired = 0
        before = m.size
        driver.run()
        if round_ and not driver.fired:
            # The last round's cse and dce left a fixpoint of both, and no
            # pattern changed anything since (a dead constant the driver
            # erased changes neither): they would erase nothing.
            if m.size == before:
                break
            continue
        cse(m, driver)
        dce(m)
        if not driver.fired and m.size == before:
            break
    driver.rewriter.driver = None     # the driver <-> rewriter cycle
    m.release()
