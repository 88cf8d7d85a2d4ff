"""GradBench's ``ba`` eval (bundle adjustment, from ADBench).

The input is one camera (11 parameters: Rodrigues rotation, centre, focal
length, principal point, two radial distortion terms), one 3-D point, one
weight and one feature, duplicated to ``n`` cameras, ``m`` points and ``p``
observations (observation ``i`` sees camera ``i % n`` and point ``i % m``).
The duplication is not exploited: every observation is computed.

``objective``: the reprojection errors ``w_i (project(cam, X) - feat_i)``
(``p x 2``) and the weight errors ``1 - w_i^2`` (``p``), reported in
GradBench's compressed form (the first observation's values and the count).
Over ``OBJECTIVE_BLOCK`` observations it runs in blocks of that many in an
``scf.for`` (plus the tail): the gather and the residual's ~20 columns of
one block (about 0.7 MB) stay in cache; over all of ba3's 182072
observations at once each column was a pass over memory (30 MB in all),
2.5 times the time.

``jacobian``: the sparse Jacobian of both with respect to (cameras, points,
weights), ``2p + p`` rows by ``11n + 3m + p`` columns, in ADBench's CSR layout
(``rows`` offsets, ``cols``, ``vals``), of which GradBench takes the first 30
entries and the last. The residuals are ``@residual`` over the gathered
observations (row ``i``: observation ``i``'s camera, point, weight and
feature, each quantity a ``p x 1`` column), so observation ``i``'s two
residuals depend on row ``i`` only: ``@residual_vjp``
(``rlx-gradient{mode=vjp}``) with the cotangent 1 on every observation's
first residual gives every block's first row at once, then the second:
the nonzero ``p x 2 x 15`` blocks from two reverse sweeps (batched reverse
rows; the 15 forward columns of ``mode=jacobian`` over per-observation
offsets cost several times more). The CSR arrays are assembled from the
blocks in numpy.
"""

import functools

import numpy as np

from ..build import function
from .saddle import staged

FUNCTIONS = ("objective", "jacobian")

NCAM = 11
BLOCK = NCAM + 3 + 1  # the nonzeros of one reprojection row
# Observations per block of the objective's loop (ba3, paired: 4096 6.9 ms,
# 2048 7.1, 8192 7.4, 16384 8.0, all at once 17.8).
OBJECTIVE_BLOCK = 4096


def residual_text(p, name="residual", weights=True):
    """``@residual(cam p x 11, X p x 3, w p, feats p x 2) -> reproj_err p x 2``
    (observation i's camera, point, weight and feature in row i; named
    ``name``, none if None) and, with ``weights``, ``@weight_error(w p) ->
    1 - w^2``, built with the rlx builders."""
    from mlir import ir
    from mlir.dialects import arith, func

    import gradir
    from gradir.dialects import rlx

    ctx = gradir.make_context()
    with ctx, ir.Location.unknown():
        f64 = ir.F64Type.get()
        t = lambda *s: ir.RankedTensorType.get(list(s), f64)  # noqa: E731

        def const(value):
            t0 = t()
            return arith.ConstantOp(t0, ir.DenseElementsAttr.get_splat(
                t0, ir.FloatAttr.get(f64, float(value)))).result

        mul, add, sub = rlx.multiply, rlx.add, rlx.subtract

        def cross(a, b):
            return [sub(mul(a[1], b[2]), mul(a[2], b[1])),
                    sub(mul(a[2], b[0]), mul(a[0], b[2])),
                    sub(mul(a[0], b[1]), mul(a[1], b[0]))]

        def dot(a, b):
            return add(add(mul(a[0], b[0]), mul(a[1], b[1])), mul(a[2], b[2]))

        def rodrigues(rot, pt):
            """ADBench's rodrigues_rotate_point; 3-vectors as three p x 1 columns."""
            sq = dot(rot, rot)
            nonzero = rlx.not_equal(sq, const(0.0))
            theta = rlx.sqrt(rlx.where(nonzero, sq, const(1.0)))   # finite on both sides
            cos, sin = rlx.cos(theta), rlx.sin(theta)
            w = [rlx.divide(r, theta) for r in rot]
            w_x_pt = cross(w, pt)
            tmp = mul(dot(w, pt), sub(const(1.0), cos))
            r_x_pt = cross(rot, pt)
            return [rlx.where(nonzero,
                              add(add(mul(pt[i], cos), mul(w_x_pt[i], sin)), mul(w[i], tmp)),
                              add(pt[i], r_x_pt[i])) for i in range(3)]

        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            if name:
                @func.FuncOp.from_py_func(t(p, NCAM), t(p, 3), t(p), t(p, 2), name=name)
                def residual(cams, xs, w, feats):
                    # Structure of arrays: every quantity a p x 1 column, so that
                    # the ops (and their derivatives) are elementwise.
                    cam = rlx.split(cams, NCAM, axis=1)
                    x = rlx.split(xs, 3, axis=1)
                    feat = rlx.split(feats, 2, axis=1)
                    xcam = rodrigues(cam[0:3], [sub(x[i], cam[3 + i]) for i in range(3)])
                    proj = [rlx.divide(xcam[0], xcam[2]), rlx.divide(xcam[1], xcam[2])]
                    rsq = add(rlx.square(proj[0]), rlx.square(proj[1]))
                    distort = add(add(const(1.0), mul(cam[9], rsq)), mul(cam[10], rlx.square(rsq)))
                    wc = rlx.reshape(w, [p, 1])
                    err = [mul(wc, sub(add(mul(mul(proj[i], distort), cam[6]), cam[7 + i]),
                                       feat[i])) for i in range(2)]
                    return rlx.concat(err, axis=1)

            if weights:
                @func.FuncOp.from_py_func(t(p))
                def weight_error(w):
                    return rlx.subtract(const(1.0), rlx.square(w))
    text = str(module)
    return text[text.index("{") + 1:text.rindex("}")]


def main_text(n, m, p):
    """``@main(cams n x 11, X m x 3, w p, feats p x 2, cam_idx p, pt_idx p)
    -> (reproj_err p x 2, w_err p)``: the gather, then ``@residual``."""
    cams, xs, v, f2 = f"tensor<{n}x{NCAM}xf64>", f"tensor<{m}x3xf64>", f"tensor<{p}xf64>", \
        f"tensor<{p}x2xf64>"
    cg, xg, idx = f"tensor<{p}x{NCAM}xf64>", f"tensor<{p}x3xf64>", f"tensor<{p}xi64>"
    return f"""
func.func @main(%cams: {cams}, %xs: {xs}, %w: {v}, %feats: {f2}, %ci: {idx}, %pi: {idx})
    -> ({f2}, {v}) {{
  %cam = "rlx.take"(%cams, %ci) {{axis = array<i64: 0>}} : ({cams}, {idx}) -> {cg}
  %x = "rlx.take"(%xs, %pi) {{axis = array<i64: 0>}} : ({xs}, {idx}) -> {xg}
  %r = func.call @residual(%cam, %x, %w, %feats) : ({cg}, {xg}, {v}, {f2}) -> {f2}
  %e = func.call @weight_error(%w) : ({v}) -> {v}
  return %r, %e : {f2}, {v}
}}
"""


def objective_text(n, m, p, block=None):
    """The objective's module text: ``@main`` of ``main_text`` over all
    observations at once (``block`` 0 or at least ``p``), else over blocks of
    ``block`` observations (None: ``OBJECTIVE_BLOCK``) in an ``scf.for``, each
    block's slices gathered and passed to ``@residual_block``, its errors
    inserted into the result; the tail's to ``@residual_tail``."""
    block = OBJECTIVE_BLOCK if block is None else block
    if not block or block >= p:
        return residual_text(p) + main_text(n, m, p)
    q, r = divmod(p, block)
    cams, xs, v, f2 = f"tensor<{n}x{NCAM}xf64>", f"tensor<{m}x3xf64>", f"tensor<{p}xf64>", \
        f"tensor<{p}x2xf64>"
    idx = f"tensor<{p}xi64>"

    def rows(tag, offset, b, acc, indent):
        """Lines for observations offset .. offset + b: %{tag}_acc is ``acc``
        with their errors."""
        cg, xg, i, vb, fb = (f"tensor<{b}x{NCAM}xf64>", f"tensor<{b}x3xf64>",
                             f"tensor<{b}xi64>", f"tensor<{b}xf64>", f"tensor<{b}x2xf64>")
        lines = f"""%{tag}_ci = tensor.extract_slice %ci[{offset}] [{b}] [1] : {idx} to {i}
%{tag}_pi = tensor.extract_slice %pi[{offset}] [{b}] [1] : {idx} to {i}
%{tag}_w = tensor.extract_slice %w[{offset}] [{b}] [1] : {v} to {vb}
%{tag}_f = tensor.extract_slice %feats[{offset}, 0] [{b}, 2] [1, 1] : {f2} to {fb}
%{tag}_cam = "rlx.take"(%cams, %{tag}_ci) {{axis = array<i64: 0>}} : ({cams}, {i}) -> {cg}
%{tag}_x = "rlx.take"(%xs, %{tag}_pi) {{axis = array<i64: 0>}} : ({xs}, {i}) -> {xg}
%{tag}_r = func.call @residual_{tag}(%{tag}_cam, %{tag}_x, %{tag}_w, %{tag}_f)
    : ({cg}, {xg}, {vb}, {fb}) -> {fb}
%{tag}_acc = tensor.insert_slice %{tag}_r into {acc}[{offset}, 0] [{b}, 2] [1, 1]
    : {fb} into {f2}"""
        return "\n".join(indent + line for line in lines.splitlines())

    text = [residual_text(block, "residual_block", False)]
    if r:
        text.append(residual_text(r, "residual_tail", False))
    text.append(residual_text(p, None) + f"""
func.func @main(%cams: {cams}, %xs: {xs}, %w: {v}, %feats: {f2}, %ci: {idx}, %pi: {idx})
    -> ({f2}, {v}) {{
  %c0 = arith.constant 0 : index
  %cb = arith.constant {block} : index
  %cq = arith.constant {q * block} : index
  %init = tensor.empty() : {f2}
  %blocks = scf.for %i = %c0 to %cq step %cb iter_args(%acc = %init) -> ({f2}) {{
{rows("block", "%i", block, "%acc", "    ")}
    scf.yield %block_acc : {f2}
  }}""")
    if r:
        text.append(rows("tail", q * block, r, "%blocks", "  "))
    text.append(f"""
  %e = func.call @weight_error(%w) : ({v}) -> {v}
  return {"%tail_acc" if r else "%blocks"}, %e : {f2}, {v}
}}
""")
    return "".join(text)


def jacobian_text(n, m, p):
    """``@jacobian(cams, X, w, feats, cam_idx, pt_idx) -> (blocks p x 2 x 15,
    d w_err / dw p)``: two calls of ``@residual_vjp`` with the cotangent 1 on
    every observation's first, then second residual (each residual depends
    on its own row only: the gradient rows are the blocks' rows)."""
    cams, xs, v, f2 = f"tensor<{n}x{NCAM}xf64>", f"tensor<{m}x3xf64>", f"tensor<{p}xf64>", \
        f"tensor<{p}x2xf64>"
    cg, xg, idx = f"tensor<{p}x{NCAM}xf64>", f"tensor<{p}x3xf64>", f"tensor<{p}xi64>"
    row, rows = f"tensor<{p}x1x{BLOCK}xf64>", f"tensor<{p}x2x{BLOCK}xf64>"
    lines = [f"""
func.func @jacobian(%cams: {cams}, %xs: {xs}, %w: {v}, %feats: {f2}, %ci: {idx}, %pi: {idx})
    -> ({rows}, {v}) {{
  %cam = "rlx.take"(%cams, %ci) {{axis = array<i64: 0>}} : ({cams}, {idx}) -> {cg}
  %x = "rlx.take"(%xs, %pi) {{axis = array<i64: 0>}} : ({xs}, {idx}) -> {xg}
  %ones = "rlx.ones"() : () -> {v}
  %e, %dw = func.call @weight_error_vjp(%w, %ones) : ({v}, {v}) -> ({v}, {v})"""]
    for r in range(2):
        basis = "[1.0, 0.0]" if r == 0 else "[0.0, 1.0]"
        lines.append(f"""  %u{r} = arith.constant dense<{basis}> : tensor<2xf64>
  %ct{r} = "rlx.broadcast_to"(%u{r}) : (tensor<2xf64>) -> {f2}
  %r{r}, %dc{r}, %dx{r}, %dw{r} = func.call @residual_vjp(%cam, %x, %w, %feats, %ct{r})
      : ({cg}, {xg}, {v}, {f2}, {f2}) -> ({f2}, {cg}, {xg}, {v})
  %dwc{r} = "rlx.reshape"(%dw{r}) : ({v}) -> tensor<{p}x1xf64>
  %flat{r} = "rlx.concat"(%dc{r}, %dx{r}, %dwc{r}) {{axis = array<i64: 1>}}
      : ({cg}, {xg}, tensor<{p}x1xf64>) -> tensor<{p}x{BLOCK}xf64>
  %row{r} = "rlx.reshape"(%flat{r}) : (tensor<{p}x{BLOCK}xf64>) -> {row}""")
    lines.append(f"""  %blocks = "rlx.concat"(%row0, %row1) {{axis = array<i64: 1>}} : ({row}, {row}) -> {rows}
  return %blocks, %dw : {rows}, {v}
}}
""")
    return "\n".join(lines)


@functools.lru_cache(maxsize=None)
def jacobian_program(n, m, p):
    """The module text of ``@jacobian``: ``@residual_vjp`` and
    ``@weight_error_vjp`` generated by rlx-gradient, then ``jacobian_text``."""
    return staged((residual_text(p),
                   "rlx-gradient{func=residual mode=vjp wrt=0,1,2},"
                   "rlx-gradient{func=weight_error mode=vjp wrt=0}"),
                  (jacobian_text(n, m, p), None))


def arrays(input):
    """GradBench's BAInput duplicated as ADBench does (ba.hpp's from_json)."""
    n, m, p = int(input["n"]), int(input["m"]), int(input["p"])
    cams = np.tile(np.asarray(input["cam"], np.float64), (n, 1))
    xs = np.tile(np.asarray(input["x"], np.float64), (m, 1))
    w = np.full(p, float(input["w"]), np.float64)
    feats = np.tile(np.asarray(input["feat"], np.float64), (p, 1))
    i = np.arange(p, dtype=np.int64)
    return n, m, p, [cams, xs, w, feats, i % n, i % m]


def sparse(n, m, p, cam_idx, pt_idx, blocks, w_d):
    """ADBench's BASparseMat (CSR) from the p x 2 x 15 reprojection blocks
    (columns: camera, point, weight) and the p weight-error derivatives."""
    rows = np.concatenate([np.arange(2 * p + 1, dtype=np.int64) * BLOCK,
                           2 * p * BLOCK + 1 + np.arange(p, dtype=np.int64)])
    cam_cols = NCAM * cam_idx[:, None] + np.arange(NCAM)
    pt_cols = NCAM * n + 3 * pt_idx[:, None] + np.arange(3)
    w_cols = (NCAM * n + 3 * m + np.arange(p))[:, None]
    block_cols = np.concatenate([cam_cols, pt_cols, w_cols], axis=1)     # p x 15
    cols = np.concatenate([np.repeat(block_cols[:, None, :], 2, axis=1).reshape(-1),
                           NCAM * n + 3 * m + np.arange(p)])
    vals = np.concatenate([blocks.reshape(-1), w_d])
    return rows, cols, vals


def dedup(a):
    """GradBench's compression of the sparse lists: the first 30 and the last."""
    return np.concatenate([a[:30], a[-1:]])


def prepare(name, input):
    n, m, p, args = arrays(input)
    if name == "objective":
        fn = function(objective_text(n, m, p))

        def run():
            reproj, w_err = fn(*args)
            return {"reproj_error": {"elements": reproj[0], "repeated": p},
                    "w_err": {"element": float(w_err[0]), "repeated": p}}
        return run
    if name != "jacobian":
        raise ValueError(f"ba has no function {name!r}")
    fn = function(jacobian_program(n, m, p), None, "jacobian")
    cam_idx, pt_idx = args[4], args[5]

    def run():
        blocks, w_d = fn(*args)
        rows, cols, vals = sparse(n, m, p, cam_idx, pt_idx, blocks, w_d)
        return {"rows": dedup(rows), "cols": dedup(cols), "vals": dedup(vals)}
    return run
