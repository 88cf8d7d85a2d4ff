"""rlx-fuse-chains: trees of single-use elementwise generics fused into one
generic in one step, in time linear in their ops, before
``linalg-fuse-elementwise-ops``.

Upstream's elementwise fusion fuses a producer into its one consumer by
building a new generic whose body is a copy of both bodies; along a chain of
N generics the fused body grows by one op per step and is copied each time:
O(N^2) ops copied (a chain of 4000 ``rlx.sin``: 3.3 s of the pipeline's
4.4 s; 10,000: two minutes).  Long elementwise chains come from generated
gradients and from any input.  Here each tree of generics that upstream's
pass would fuse into its root becomes that one generic directly: the ops of
every body are moved (not copied) into one block, in the order upstream's
pass leaves them, so its pass then finds nothing left to fuse in the tree
and the pipeline's output is the same:

    %a = linalg.generic {maps = [id, id]} ins(%x) outs(%e) { sin ; yield }
    %b = linalg.generic {maps = [id, id]} ins(%a) outs(%e) { cos ; yield }
    %c = linalg.generic {maps = [id, id, id]} ins(%b, %y) outs(%e) { mulf ; yield }
becomes
    %c = linalg.generic {maps = [id, id, id]} ins(%x, %y) outs(%e)
           { %s = sin %in ; %t = cos %s ; %m = mulf %t, %in_1 ; yield %m }

Upstream's order (its greedy driver goes top-down; a consumer fuses its
fusable producers in operand order, each already fused with its own, each
prepended to the body): a node's body comes after the bodies of its fused
producers, the producer of its last fusable operand first; the inputs are
the consumer's with each fused operand replaced by its producer's inputs.
A splat constant input becomes a scalar ``arith.constant`` before the op
that read it, as upstream's ``FoldScalarOrSplatConstant`` does when it
visits that op (one body copy per constant there); the fused op carries no
discardable attribute (upstream's neither).

Fused here: a producer whose one use is an input of its consumer, both
all-parallel generics on static tensors over the same loops, in one block,
the producer with one result indexed by the identity and read through the
identity, not reading its output; neither reads its loop indices
(``linalg.index``), a reshape's result (upstream propagates reshapes
through them) or carries a discardable attribute (``grad.recomputed``:
left to upstream as before).  A producer upstream would fuse but this pass
does not (a broadcast read, a transposed result, a multi-result op, ...)
stays an input of the fused op, which upstream's pass then fuses in one
step; the tree is kept only where upstream's order is then the same (such
producers first in the body), otherwise its root is left alone and its
subtrees are fused apart.  A value that only a tree's ops read, twice or
more (a diamond: ``where(x > a, x, a)``, ``sin(x) + cos(x)``), upstream
fuses once it has merged the duplicate inputs, where the reads meet, before
the body there; so does this pass when the value's own tree is of its kind
and nothing is left pending (else the tree is cut where the reads meet, or
at the root left to upstream).  Run before ``linalg-fuse-elementwise-ops``."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg

from ... import _compat
from ...passes.base import ModulePass

__all__ = ["RlxFuseChains"]

_STRUCTURAL = {"indexing_maps", "iterator_types", "operandSegmentSizes"}
_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


_key = _compat.value_key


def _identity(m: ir.AffineMap, n: int) -> bool:
    if m.n_dims != n or m.n_symbols or len(m.results) != n:
        return False
    for i, e in enumerate(m.results):
        if not isinstance(e, ir.AffineDimExpr) or ir.AffineDimExpr(e).position != i:
            return False
    return True


def _splat(value):
    """The splat value of a constant tensor ``value`` (int or float
    elements), else None: what upstream's ``FoldScalarOrSplatConstant``
    turns into a scalar constant."""
    owner = _compat.defining_op(value)
    if owner is None or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not attr.is_splat:
        return None
    et = ir.ShapedType(attr.type).element_type
    if not isinstance(et, (ir.IntegerType, ir.FloatType)):
        return None
    return attr.get_splat_value(), owner.location


def _folded(value):
    """What upstream's pass reads instead of input ``value`` when it visits
    the op reading it: ``("splat", attribute, location)`` for a splat
    constant (``FoldScalarOrSplatConstant``: a scalar constant, the input
    dropped), ``("fill", scalar)`` for a ``linalg.fill`` of a scalar of the
    element type (``FoldFillWithGenericOp``: the scalar, the input dropped
    as unread; on one fused op with many such inputs, dropping them one by
    one costs upstream quadratic time), else None."""
    splat = _splat(value)
    if splat is not None:
        return ("splat", *splat)
    owner = _compat.defining_op(value)
    if owner is None or owner.name != "linalg.fill" or not owner.operands:
        return None
    scalar = owner.operands[0]
    if scalar.type != ir.RankedTensorType(value.type).element_type:
        return None
    return ("fill", scalar)


class _Node:
    """A generic of the class this pass fuses, as read before any change."""

    __slots__ = ("op", "n_in", "n", "maps", "fusable", "children", "pending", "parent",
                 "member_ok", "late", "absorbed", "open", "closed", "index")

    def __init__(self, op, n_in, n, maps):
        self.op, self.n_in, self.n, self.maps = op, n_in, n, maps
        self.fusable: list[int] = []      # inputs upstream would fuse, in order
        self.children: dict[int, _Node] = {}   # those fused here
        self.pending: list[int] = []      # those left to upstream
        self.parent: _Node | None = None
        self.member_ok = False
        # diamonds fused here (roots of their own trees, in upstream's order)
        self.late: list[_Node] = []
        self.absorbed = False             # a root fused into another tree late
        # (for a root) generic-made inputs of its tree read elsewhere too:
        # value key -> [reads in the tree, value]
        self.open: dict[int, list] = {}
        # (for a root) upstream finishes it alone: pending producers, or a
        # diamond at the root left to upstream
        self.closed = False
        self.index = 0                    # program order


_INFO: dict = {}


def _generic_info(op):
    """(n inputs, loops, maps, all-parallel) of a generic (memoized for the
    pass's run in ``_INFO``)."""
    key = _compat.op_key(op)
    info = _INFO.get(key)
    if info is None:
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        its = ir.ArrayAttr(op.attributes["iterator_types"])
        info = _INFO[key] = (len(op.operands) - len(op.results), len(its), maps,
                             "reduction" not in str(its))
    return info


def _upstream_fusable(op, i: int, maps) -> bool:
    """Whether upstream's elementwise fusion (its default control: the
    producer's only use) fuses the producer of input ``i`` of generic ``op``."""
    value = op.operands[i]
    if not isinstance(value.type, ir.RankedTensorType):
        return False
    p = _compat.defining_op(value)
    if p is None or p.name != "linalg.generic":
        return False
    if any(isinstance(v.type, ir.MemRefType) for v in p.operands):
        return False
    n_in, n, pmaps, parallel = _generic_info(p)
    if not parallel or len(maps[i].results) != n:
        return False
    result = next(k for k, r in enumerate(p.results) if r == value)
    if not pmaps[n_in + result].is_permutation:
        return False
    return sum(len(_compat.uses_of(r)) for r in p.results) == 1


def _node(op) -> _Node | None:
    """A ``_Node`` for a generic this pass may fuse (as producer or root)."""
    attrs = {a if isinstance(a, str) else a.name for a in op.attributes}
    if attrs - _STRUCTURAL or not op.results:
        return None
    n_in, n, maps, parallel = _generic_info(op)
    if not parallel:
        return None
    for v in op.operands:
        if not isinstance(v.type, ir.RankedTensorType) \
                or not ir.RankedTensorType(v.type).has_static_shape:
            return None
    if not all(_identity(m, n) for m in maps[n_in:]):
        return None
    for i in range(n_in):
        owner = _compat.defining_op(op.operands[i])
        if owner is not None and owner.name in _RESHAPES:
            return None
        if owner is not None and owner.name == "arith.constant" and n_in == 1 \
                and _splat(op.operands[i]) is None:
            return None     # (upstream's constant folding of transposes)
    if _compat.collect_ops(op, lambda o: o.name == "linalg.index"):
        return None
    node = _Node(op, n_in, n, maps)
    body = op.regions[0].blocks[0]
    node.member_ok = (len(op.results) == 1 and not any(
        _compat.uses_of(body.arguments[j]) for j in range(n_in, len(body.arguments))))
    return node


class RlxFuseChains(ModulePass):
    """Fuses trees of single-use elementwise generics into one generic each,
    moving their ops once (module docstring)."""

    name = "rlx-fuse-chains"

    def apply(self, module: ir.Operation) -> None:
        try:
            self._apply(module)
        finally:
            _INFO.clear()

    def _apply(self, module: ir.Operation) -> None:
        nodes: dict[int, _Node] = {}
        order: list[_Node] = []
        for op in _compat.collect_ops(module, lambda o: o.name == "linalg.generic"):
            node = _node(op)
            if node is None:
                continue
            nodes[_compat.op_key(op)] = node
            order.append(node)
            for i in range(node.n_in):
                if not _upstream_fusable(op, i, node.maps):
                    continue
                node.fusable.append(i)
                p = nodes.get(_compat.op_key(_compat.defining_op(op.operands[i])))
                if p is not None and p.member_ok and p.op.block == op.block \
                        and _identity(node.maps[i], node.n) and p.n == node.n \
                        and _identity(p.maps[p.n_in], p.n):
                    node.children[i] = p
                    p.parent = node
                else:
                    node.pending.append(i)
            node.index = len(order) - 1
        for nd in order:
            if nd.parent is None:
                _decide(nd, nodes)
        for nd in order:
            if nd.parent is None and not nd.absorbed \
                    and (nd.children or nd.late or _folds(nd)):
                _materialize(nd)


def _decide(root: _Node, nodes: dict) -> None:
    """Settles ``root``'s tree (cutting it where upstream's order would
    differ; fusing diamonds late where upstream does) before any later
    root's; the trees cut off are settled first."""
    while True:
        cut = _absorb(root, nodes)
        if cut is None:
            break
        _detach(cut)
        _decide(cut, nodes)
    if _prefix_ok(root):
        return
    for p in list(root.children.values()):
        p.parent = None
        _decide(p, nodes)
    root.pending = sorted(root.pending + list(root.children))
    root.children = {}
    root.closed = True
    root.open = {}


def _detach(node: _Node) -> None:
    parent = node.parent
    for i, c in list(parent.children.items()):
        if c is node:
            del parent.children[i]
            parent.pending = sorted(parent.pending + [i])
    node.parent = None


def _members(root: _Node) -> list[_Node]:
    """The nodes of ``root``'s fused op, late trees included (pre-order)."""
    out, stack = [], [root]
    while stack:
        nd = stack.pop()
        out.append(nd)
        stack.extend(nd.children.values())
        stack.extend(nd.late)
    return out


def _folds(node: _Node) -> list[int]:
    """The inputs of ``node`` upstream replaces by scalars (``_folded``)."""
    return [i for i in range(node.n_in)
            if i not in node.children and i not in node.pending
            and _folded(node.op.operands[i]) is not None]


def _inputs(root: _Node, late: dict | None = None) -> list[tuple[_Node, int]]:
    """The fused op's inputs as (node, input position), in order (pending
    producers included), splat constants left out.  ``late`` (value key ->
    late tree): a late tree's inputs at the first read of its value, the
    other reads dropped; None: late trees not followed."""
    out = []
    seen = set()
    stack = [(root, 0)]
    while stack:
        nd, i = stack.pop()
        if i >= nd.n_in:
            continue
        stack.append((nd, i + 1))
        if i in nd.children:
            stack.append((nd.children[i], 0))
        elif i in nd.pending:
            out.append((nd, i))
        elif _folded(nd.op.operands[i]) is None:
            x = late.get(_key(nd.op.operands[i])) if late else None
            if x is None:
                out.append((nd, i))
            elif id(x) not in seen:
                seen.add(id(x))
                stack.append((x, 0))
    return out


def _prefix_ok(root: _Node) -> bool:
    """Whether upstream, fusing the pending producers into the fused op in
    input order (each prepended), gets its own order: the pending atoms are
    the sequence's first elements, in reverse input order."""
    atoms = [(nd, i) for nd, i in _inputs(root) if i in nd.pending]
    if not atoms:
        return True
    seq = _sequence(root)
    head = seq[:len(atoms)]
    return all(isinstance(h, tuple) and h[0] is a[0] and h[1] == a[1]
               for h, a in zip(head, reversed(atoms)))


def _sequence(root: _Node) -> list:
    """Upstream's body order: per node, its late trees from the last fused
    to the first, the producers of its fusable inputs from the last to the
    first (each after its own producers), then the node; pending producers
    as ``(node, input)`` atoms."""
    out = []
    stack: list = [("node", root)]
    while stack:
        kind, item = stack.pop()
        if kind == "atom":
            out.append(item)
        elif kind == "emit":
            out.append(item)
        else:
            stack.append(("emit", item))
            for i in item.fusable:
                if i in item.children:
                    stack.append(("node", item.children[i]))
                else:
                    stack.append(("atom", (item, i)))
            # (late trees: fused after the others, each before the body)
            for x in item.late:
                stack.append(("node", x))
    return out


def _tree(root: _Node) -> list[_Node]:
    """The nodes fused into ``root`` through single uses (pre-order)."""
    out, stack = [], [root]
    while stack:
        nd = stack.pop()
        out.append(nd)
        stack.extend(nd.children.values())
    return out


def _absorb(root: _Node, nodes: dict) -> _Node | None:
    """Finds the diamonds of ``root``'s tree: generic-made values that only
    the tree's ops read, twice or more.  Upstream fuses one where its reads
    meet, once its duplicate inputs are merged (after the producers fused
    through single uses), each before the body there, in the order of their
    first reads.  Those it can take (a tree of this pass's kind, read through
    the identity, nothing left pending) are recorded as ``late`` producers of
    that node; returns a node to cut the tree at where upstream's order
    could not be kept, else None."""
    tree = _tree(root)
    for nd in tree:
        nd.late = []
    reads: dict[int, list] = {}
    first: dict[int, int] = {}
    pending = False
    for pos, (nd, i) in enumerate(_inputs(root)):
        if i in nd.pending:
            pending = True
            continue
        v = nd.op.operands[i]
        owner = _compat.defining_op(v)
        if owner is None or owner.name != "linalg.generic":
            continue
        k = _key(v)
        reads.setdefault(k, []).append((nd, i, v, owner))
        first.setdefault(k, pos)
    diamonds = [(k, occ) for k, occ in reads.items()
                if len(occ) >= 2 and len(_compat.uses_of(occ[0][2])) == len(occ)]
    root.closed = pending
    if not diamonds:
        root.open = {k: [len(occ), occ[0][2]] for k, occ in reads.items()}
        return None
    depth = {id(m): d for m, d in _depths(root)}
    late: list = []
    at_root_left = False
    for k, occ in diamonds:
        lca = occ[0][0]
        for nd, _, _, _ in occ[1:]:
            lca = _lca(lca, nd, depth)
        x = nodes.get(_compat.op_key(occ[0][3]))
        ok = (not pending and x is not None and x.parent is None and not x.absorbed
              and not x.closed and x.member_ok and x.op.block == root.op.block
              and x.n == root.n and _identity(x.maps[x.n_in], x.n)
              and all(_identity(nd.maps[i], nd.n) for nd, i, _, _ in occ))
        if not ok:
            if lca is not root:
                return lca
            at_root_left = True
            continue
        late.append((first[k], lca, x, k))
    if at_root_left:
        # (upstream fuses the diamonds at the root in the order of their
        # first reads: all of them or none here)
        late = [t for t in late if t[1] is not root]
        root.closed = True
    # the values the late trees read: one that only the tree reads now
    # (upstream would fuse it in a second round) is not followed here.
    # (the largest reads table is extended in place: linear overall)
    taken = {t[3] for t in late}
    parts = [x.open for _, _, x, _ in late]
    parts.append({k: [len(occ), occ[0][2]] for k, occ in reads.items() if k not in taken})
    parts.sort(key=len)
    merged = parts.pop()
    touched = set()
    for part in parts:
        for k, (c, v) in part.items():
            entry = merged.get(k)
            if entry is None:
                merged[k] = [c, v]
            else:
                entry[0] += c
                touched.add(k)
    for k in touched:
        c, v = merged[k]
        if len(_compat.uses_of(v)) == c:
            return _give_up_late(root, reads, late)
    for pos, lca, x, _ in sorted(late, key=lambda t: t[0]):
        lca.late.append(x)
        x.absorbed = True
    root.open = merged
    return None


def _give_up_late(root: _Node, reads: dict, late: list) -> _Node | None:
    """No late fusion in ``root``'s tree: the first diamond below the root
    cuts it (upstream finishes the rest alone)."""
    for _, lca, _, _ in late:
        if lca is not root:
            return lca
    root.closed = True
    root.open = {k: [len(occ), occ[0][2]] for k, occ in reads.items()}
    return None


def _depths(root: _Node):
    stack = [(root, 0)]
    while stack:
        nd, d = stack.pop()
        yield nd, d
        stack.extend((c, d + 1) for c in nd.children.values())


def _lca(a: _Node, b: _Node, depth: dict) -> _Node:
    while depth[id(a)] > depth[id(b)]:
        a = a.parent
    while depth[id(b)] > depth[id(a)]:
        b = b.parent
    while a is not b:
        a, b = a.parent, b.parent
    return a


def _materialize(root: _Node) -> None:
    """Builds the fused generic at ``root``'s place and erases the tree."""
    rop = root.op
    members = _members(root)
    late = {_key(x.op.results[0]): x for nd in members for x in nd.late}
    ins = _inputs(root, late)
    n_out = len(rop.results)
    rblock = rop.regions[0].blocks[0]
    in_args = [nd.op.regions[0].blocks[0].arguments[i] for nd, i in ins]
    out_args = [rblock.arguments[root.n_in + k] for k in range(n_out)]
    maps = [nd.maps[i] for nd, i in ins] + root.maps[root.n_in:]
    # scalar constants for splat inputs, before the op that read them;
    # fills' scalars
    scalars = {}
    for nd in members:
        for i in _folds(nd):
            fold = _folded(nd.op.operands[i])
            if fold[0] == "fill":
                scalars[(id(nd), i)] = fold[1]
                continue
            with ir.InsertionPoint(nd.op), fold[2]:
                scalars[(id(nd), i)] = arith.ConstantOp(fold[1].type, fold[1]).result
    with ir.InsertionPoint(rop), rop.location:
        new = linalg.GenericOp([r.type for r in rop.results], [nd.op.operands[i] for nd, i in ins],
                               [rop.operands[root.n_in + k] for k in range(n_out)],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                               rop.attributes["iterator_types"])
    args = in_args + out_args
    block = new.regions[0].blocks.append(*[a.type for a in args],
                                         arg_locs=[a.location for a in args])
    for a, b in zip(args, block.arguments):
        a.replace_all_uses_with(b)
    # producers' yielded values for their consumers' arguments (a value
    # replaced later carries the uses along: any order)
    for nd in members:
        body = nd.op.regions[0].blocks[0]
        for i, c in nd.children.items():
            value = _compat.terminator(c.op.regions[0].blocks[0]).operands[0]
            body.arguments[i].replace_all_uses_with(value)
        for i in _folds(nd):
            body.arguments[i].replace_all_uses_with(scalars[(id(nd), i)])
        if late:
            for i in range(nd.n_in):
                x = None if i in nd.children else late.get(_key(nd.op.operands[i]))
                if x is not None:
                    value = _compat.terminator(x.op.regions[0].blocks[0]).operands[0]
                    body.arguments[i].replace_all_uses_with(value)
    ip = ir.InsertionPoint(block)
    for nd in _sequence(root):
        if isinstance(nd, tuple):
            continue
        ops = _compat.block_ops(nd.op.regions[0].blocks[0])
        for o in ops[:-1]:
            o.detach_from_parent()
            ip.insert(o)
    with ip, rop.location:
        linalg.YieldOp(list(_compat.terminator(rblock).operands))
    for old, r in zip(rop.results, new.results):
        old.replace_all_uses_with(r)
    # (the splat constants, fills and the members' outputs left unread: erased, as
    # upstream's pass does as it goes; left, they would stand between the
    # constants that its driver hoists, in another order)
    orphans = [nd.op.operands[i] for nd in members for i in _folds(nd)]
    orphans += [nd.op.operands[nd.n_in] for nd in members if nd is not root]
    orphans = list({_key(v): v for v in orphans}.values())
    for nd in sorted(members, key=lambda m: -m.index):     # users first
        nd.op.erase()
    for v in orphans:
        owner = _compat.defining_op(v)
        if owner is not None and not _compat.uses_of(v) \
                and owner.name in ("arith.constant", "tensor.empty", "linalg.fill"):
            owner.erase()
