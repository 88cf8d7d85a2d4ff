"""GradBench's ``det`` eval (cmpad's ``det_by_minor``): the determinant of an
ell x ell matrix by expansion by minors (``primal``) and its gradient with
respect to the row-major matrix (``gradient``).

The expansion is the reference's recursion, with the same O(e * ell!)
multiply-adds (each minor is expanded anew wherever the recursion meets it;
nothing is shared between minors), laid out as tensors level by level:

- A level-t node of the recursion is an ordered choice of columns for rows
  0..t-1 (children in the order the recursion visits them: the remaining
  columns in increasing order, signs alternating). The determinant of the
  minor under a node is the sum over its children of sign * A[t, column] *
  (the child's minor): with the nodes of one level in a vector, that is a
  gather of row t (``rlx.take`` with a constant index vector), a product, a
  reshape to (nodes, children) and a sum, from the last row up.
- The number of nodes grows as ell! / (ell - t)!, so the expansion is cut in
  two: the top ``ell - s`` rows enumerate their column choices explicitly
  (each a product of ``ell - s`` entries, and a batch of s x s minors
  gathered from the bottom rows), and those s x s minors, s = min(ell, 7),
  are expanded by the level scheme above, batched. The index vectors are
  computed with numpy when a size is first prepared.

The gradient is ``rlx-gradient``'s adjoint of that function.
"""

import functools
import itertools
import math

import numpy as np

from ..build import Program, axes, function

FUNCTIONS = ("primal", "gradient")

MAX_BOTTOM = 7


@functools.lru_cache(maxsize=16)
def levels(s):
    """For the expansion of an s x s matrix: per row t, (cols, signs), the
    column and sign of every child of every level-t node, in node order."""
    out, nodes = [], [()]
    for t in range(s):
        cols, signs, children = [], [], []
        for node in nodes:
            rem = [c for c in range(s) if c not in node]
            for p, c in enumerate(rem):
                cols.append(c)
                signs.append(-1.0 if p % 2 else 1.0)
                children.append(node + (c,))
        out.append((np.array(cols, np.int64), np.array(signs)))
        nodes = children
    return out


@functools.lru_cache(maxsize=16)
def top(ell, k):
    """The top k rows' column choices, in the recursion's order: (cols (N, k),
    signs (N,), remaining columns (N, ell - k))."""
    cols, signs, rems = [], [], []
    for choice in itertools.permutations(range(ell), k):  # lexicographic = visiting order
        rem, sign = list(range(ell)), 1.0
        for c in choice:
            p = rem.index(c)
            sign *= -1.0 if p % 2 else 1.0
            rem.pop(p)
        cols.append(choice)
        signs.append(sign)
        rems.append(rem)
    n = max(1, len(cols))
    return (np.array(cols, np.int64).reshape(n, k), np.array(signs),
            np.array(rems, np.int64).reshape(n, ell - k))


def program(ell):
    s = min(ell, MAX_BOTTOM)
    k = ell - s
    nb = math.perm(ell, k)                      # minors in the batch
    p = Program()
    a = p.arg((ell * ell,))
    consts = []                                 # (value, array) of the constant operands

    def const_arg(array, dtype):
        v = p.arg(array.shape, dtype)
        consts.append(array)
        return v

    a2 = p.op("rlx.reshape", [a], (ell, ell))
    if k == 0:
        b = p.op("rlx.reshape", [a], (1, s, s))
    else:
        tcols, tsigns, rems = top(ell, k)
        bottom = p.op("rlx.strided_slice", [a2], (s, ell),
                      f"axes = {axes(0)}, begin = {axes(k)}, end = {axes(ell)}")
        remv = const_arg(rems, "i64")
        b = p.op("rlx.take", [bottom, remv], (s, nb, s), f"axis = {axes(1)}")
        b = p.op("rlx.permute_dims", [b], (nb, s, s), f"axes = {axes(1, 0, 2)}")
        coef = const_arg(tsigns, "f64")
        flat_top = p.op("rlx.reshape", [p.op("rlx.strided_slice", [a2], (k, ell),
                        f"axes = {axes(0)}, begin = {axes(0)}, end = {axes(k)}")], (k * ell,))
        tidx = const_arg(tcols + np.arange(k, dtype=np.int64) * ell, "i64")
        entries = p.op("rlx.take", [flat_top, tidx], (nb, k))
        for i in range(k):
            e = p.op("rlx.strided_slice", [entries], (nb, 1),
                     f"axes = {axes(1)}, begin = {axes(i)}, end = {axes(i + 1)}")
            coef = p.op("rlx.multiply", [coef, p.op("rlx.reshape", [e], (nb,))], (nb,))

    value, helpers = None, []                   # value: (nb, nodes at level t + 1)
    for t in reversed(range(s)):
        cols, signs = levels(s)[t]
        nodes = math.perm(s, t)
        row = p.op("rlx.strided_slice", [b], (nb, 1, s),
                   f"axes = {axes(1)}, begin = {axes(t)}, end = {axes(t + 1)}")
        row = p.op("rlx.reshape", [row], (nb, s))
        g = p.fresh()
        p.raw(f"{g} = func.call @gather_{t}({row.name}) {{grad.vjp = @gather_{t}_vjp}} "
              f": ({row.type}) -> tensor<{nb}x{cols.size}xf64>")
        g = p.value(g, (nb, cols.size))
        helpers.append(gather_functions(t, nb, s, cols))
        if t == s - 1:                          # one child each, sign +1
            value = g
            continue
        g = p.op("rlx.multiply", [g, const_arg(signs, "f64")], (nb, cols.size))
        g = p.op("rlx.multiply", [g, value], (nb, cols.size))
        g = p.op("rlx.reshape", [g], (nb, nodes, s - t))
        value = p.op("rlx.sum", [g], (nb, nodes), f"axis = {axes(2)}")
    minors = p.op("rlx.reshape", [value], (nb,))
    if k:
        minors = p.op("rlx.multiply", [minors, coef], (nb,))
    det = p.op("rlx.sum", [minors], ())
    return p.text([det]) + "".join(helpers), tuple(consts)


def gather_functions(t, nb, s, cols):
    """@gather_<t>: row t of every minor gathered to its level's children,
    (nb, s) -> (nb, N); its VJP @gather_<t>_vjp sums the children's
    cotangents back per column as one (nb, N) x (N, s) matmul with the
    constant one-hot matrix (``rlx.take``'s own VJP is a batched matmul of a
    one-hot (s, N) against (nb, N, 1))."""
    n = cols.size
    lit = ", ".join(map(str, cols.tolist()))
    lit2 = ", ".join(f"[{c}]" for c in cols.tolist())
    rt, gt = f"tensor<{nb}x{s}xf64>", f"tensor<{nb}x{n}xf64>"
    return f"""
func.func private @gather_{t}(%row: {rt}) -> {gt} {{
  %cols = arith.constant dense<[{lit}]> : tensor<{n}xi64>
  %r = "rlx.take"(%row, %cols) {{axis = array<i64: 1>}} : ({rt}, tensor<{n}xi64>) -> {gt}
  return %r : {gt}
}}
func.func private @gather_{t}_vjp(%row: {rt}, %g: {gt}) -> {rt} {{
  %cols = arith.constant dense<[{lit2}]> : tensor<{n}x1xi64>
  %iota = arith.constant dense<[{", ".join(map(str, range(s)))}]> : tensor<{s}xi64>
  %eq = "rlx.equal"(%cols, %iota) : (tensor<{n}x1xi64>, tensor<{s}xi64>) -> tensor<{n}x{s}xi1>
  %onehot = "rlx.astype"(%eq) : (tensor<{n}x{s}xi1>) -> tensor<{n}x{s}xf64>
  %r = "rlx.matmul"(%g, %onehot) : ({gt}, tensor<{n}x{s}xf64>) -> {rt}
  return %r : {rt}
}}
"""


@functools.lru_cache(maxsize=16)
def _program(ell):
    return program(ell)


def prepare(name, input):
    ell = int(input["ell"])
    a = np.asarray(input["A"], dtype=np.float64).reshape(ell * ell)
    text, consts = _program(ell)
    args = (a,) + consts
    if name == "primal":
        fn = function(text)
        return lambda: fn(*args)
    fn = function(text, "builtin.module(rlx-gradient{wrt=0})", "main_adjoint")
    return lambda: fn(*args)[1]
