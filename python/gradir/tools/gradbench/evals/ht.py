"""GradBench's ``ht`` eval (hand tracking, from ADBench).

A skinned hand model (``B`` bones in a tree, ``V`` vertices) is posed by 26
parameters ``theta`` (global rotation, translation, finger angles); the
objective is the residual between ``npts`` observed points and the posed
model: the corresponding vertices (the "simple" variant, ``us`` empty) or
points inside the corresponding triangles at barycentric coordinates ``us``
(the "complicated" variant).

``objective``: the ``3 npts`` residuals. ``jacobian``: their Jacobian,
``3 npts`` rows by 26 columns (simple) or ``2 + 26`` (complicated: the first
two columns are each residual's derivatives with respect to its own point's
two ``us``, the Jacobian's block-diagonal part).

``@main(theta, du, us, model..., points)`` computes the residuals, where
``du`` (2 numbers) is added to every point's ``us``: the Jacobian with
respect to ``(theta, du)`` (``rlx-gradient{mode=jacobian}``, 28 forward
columns) holds the theta columns and the block-diagonal ``us`` columns.

The bone tree (``parents``) is unrolled into one matrix product per bone;
linear blend skinning is one product of the bones' stacked ``3 x 4``
transforms with the constant ``4B x V`` matrix of weighted base positions.
"""

import numpy as np

from ..build import function

FUNCTIONS = ("objective", "jacobian")
NTHETA = 26


def pose_index(bones):
    """Where each entry of the ``(B + 3) x 3`` pose parameters comes from in
    ``concat(theta, [0, 1])``: index 26 is zero, 27 is one (ADBench's
    to_pose_params)."""
    zero, one = NTHETA, NTHETA + 1
    idx = np.full((bones + 3, 3), zero, dtype=np.int64)
    idx[0] = [0, 1, 2]
    idx[1] = one
    idx[2] = [3, 4, 5]
    i_theta, row = 6, 5
    for _finger in range(5):
        for i in range(3):
            idx[row, 0] = i_theta
            i_theta += 1
            if i == 0:
                idx[row, 1] = i_theta
                i_theta += 1
            row += 1
        row += 1
    return idx.reshape(-1)


def objective_text(parents, nverts, npts, complicated, mirrored):
    """``@main(theta 26, du 2, us npts x 2, base_relatives B x 4 x 4,
    inverse_base_absolutes B x 4 x 4, skin 4B x V, points npts x 3,
    verts npts x 3 (or npts) i64) -> npts x 3`` residuals."""
    from mlir import ir
    from mlir.dialects import arith, func

    import gradir
    from gradir.dialects import rlx

    bones = len(parents)
    ctx = gradir.make_context()
    with ctx, ir.Location.unknown():
        f64 = ir.F64Type.get()
        i64 = ir.IntegerType.get_signless(64)
        t = lambda *s: ir.RankedTensorType.get(list(s), f64)  # noqa: E731

        def const(value, shape=()):
            tt = t(*shape)
            value = np.asarray(value, np.float64)
            if value.ndim == 0:
                attr = ir.DenseElementsAttr.get_splat(tt, ir.FloatAttr.get(f64, float(value)))
            else:
                attr = ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=tt)
            return arith.ConstantOp(tt, attr).result

        def iconst(values):
            values = np.ascontiguousarray(values, np.int64)
            tt = ir.RankedTensorType.get(list(values.shape), i64)
            return arith.ConstantOp(tt, ir.DenseElementsAttr.get(values, type=tt)).result

        def col(x, j):
            """Column j of an r x c tensor, as r x 1."""
            return rlx.strided_slice(x, [1], [j], [j + 1])

        def matrices(entries, rows):
            """``rows x 3 x 3`` matrices from nine ``rows x 1`` columns (row-major)."""
            return rlx.reshape(rlx.concat(entries, axis=1), [rows, 3, 3])

        def euler_to_rotation(xzy):
            """Rz Ry Rx of each row (tx, tz, ty) of a B x 3 tensor."""
            n = xzy.type.shape[0]
            zero, one = const(np.zeros((n, 1)), (n, 1)), const(np.ones((n, 1)), (n, 1))
            cx, sx = rlx.cos(col(xzy, 0)), rlx.sin(col(xzy, 0))
            cy, sy = rlx.cos(col(xzy, 2)), rlx.sin(col(xzy, 2))
            cz, sz = rlx.cos(col(xzy, 1)), rlx.sin(col(xzy, 1))
            rx = matrices([one, zero, zero, zero, cx, rlx.negative(sx), zero, sx, cx], n)
            ry = matrices([cy, zero, sy, zero, one, zero, rlx.negative(sy), zero, cy], n)
            rz = matrices([cz, rlx.negative(sz), zero, sz, cz, zero, zero, zero, one], n)
            return rlx.matmul(rlx.matmul(rz, ry), rx)

        def angle_axis_to_rotation(aa):
            """3 x 3 rotation of a 1 x 3 angle-axis (identity below norm 1e-4)."""
            norm = rlx.sqrt(rlx.sum(rlx.square(aa)))
            small = rlx.less(norm, const(1e-4))
            safe = rlx.where(small, const(1.0), norm)
            u = rlx.divide(aa, safe)
            x, y, z = col(u, 0), col(u, 1), col(u, 2)
            s, c = rlx.sin(safe), rlx.cos(safe)
            one = const(1.0)
            omc = rlx.subtract(one, c)
            mul = rlx.multiply

            def diag(a):
                return rlx.add(mul(a, a), mul(rlx.subtract(one, mul(a, a)), c))

            def off(a, b, d, sign):
                op = rlx.add if sign > 0 else rlx.subtract
                return op(mul(mul(a, b), omc), mul(d, s))
            r = matrices([diag(x), off(x, y, z, -1), off(x, z, y, 1),
                          off(x, y, z, 1), diag(y), off(y, z, x, -1),
                          off(x, z, y, -1), off(z, y, x, 1), diag(z)], 1)
            r = rlx.reshape(r, [3, 3])
            return rlx.where(small, const(np.eye(3), (3, 3)), r)

        args = [t(NTHETA), t(2), t(npts, 2), t(bones, 4, 4), t(bones, 4, 4),
                t(4 * bones, nverts), t(npts, 3),
                ir.RankedTensorType.get([npts, 3] if complicated else [npts], i64)]
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            @func.FuncOp.from_py_func(*args)
            def main(theta, du, us, base_relatives, inverse_base_absolutes, skin, points,
                     verts):
                ext = rlx.concat([theta, const([0.0, 1.0], (2,))], axis=0)
                pose = rlx.reshape(rlx.take(ext, iconst(pose_index(bones)), axis=0),
                                   [bones + 3, 3])
                rot = euler_to_rotation(rlx.strided_slice(pose, [0], [3], [bones + 3]))
                top = rlx.concat([rot, const(np.zeros((bones, 3, 1)), (bones, 3, 1))], axis=2)
                bottom = const(np.broadcast_to([0.0, 0.0, 0.0, 1.0], (bones, 1, 4)),
                               (bones, 1, 4))
                relatives = rlx.matmul(base_relatives, rlx.concat([top, bottom], axis=1))
                absolutes = []
                for b, parent in enumerate(parents):
                    rel = rlx.reshape(rlx.strided_slice(relatives, [0], [b], [b + 1]), [4, 4])
                    absolutes.append(rel if parent < 0
                                     else rlx.matmul(absolutes[parent], rel))
                absolutes = rlx.reshape(rlx.concat(absolutes, axis=0), [bones, 4, 4])
                transforms = rlx.matmul(absolutes, inverse_base_absolutes)
                top3 = rlx.strided_slice(transforms, [1], [0], [3])              # B x 3 x 4
                stacked = rlx.reshape(rlx.permute_dims(top3, [1, 0, 2]), [3, 4 * bones])
                positions = rlx.matmul(stacked, skin)                             # 3 x V
                if mirrored:
                    positions = rlx.multiply(positions, const([[-1.0], [1.0], [1.0]], (3, 1)))
                r = rlx.multiply(angle_axis_to_rotation(rlx.strided_slice(pose, [0], [0], [1])),
                                 rlx.strided_slice(pose, [0], [1], [2]))
                positions = rlx.add(rlx.matmul(r, positions),
                                    rlx.permute_dims(rlx.strided_slice(pose, [0], [2], [3])))
                vt = rlx.permute_dims(positions)                                  # V x 3
                if complicated:
                    u = rlx.add(us, du)
                    u0, u1 = col(u, 0), col(u, 1)
                    u2 = rlx.subtract(rlx.subtract(const(1.0), u0), u1)
                    corner = [rlx.take(vt, rlx.reshape(rlx.strided_slice(verts, [1], [j], [j + 1]),
                                                       [npts]), axis=0) for j in range(3)]
                    hand = rlx.add(rlx.add(rlx.multiply(u0, corner[0]),
                                           rlx.multiply(u1, corner[1])),
                                   rlx.multiply(u2, corner[2]))
                else:
                    hand = rlx.take(vt, verts, axis=0)
                return rlx.subtract(points, hand)
    return str(module)


def arrays(input):
    """(text arguments, call arguments) of GradBench's HTInput."""
    data, model = input["data"], input["data"]["model"]
    parents = [int(p) for p in model["parents"]]
    bones = len(parents)
    weights = np.asarray(model["weights"], np.float64)                  # V x B
    base = np.asarray(model["base_positions"], np.float64)              # V x 4
    nverts = base.shape[0]
    # skin[4 b + k, v] = weights[v, b] * base[v, k]
    skin = (weights.T[:, None, :] * base.T[None, :, :]).reshape(4 * bones, nverts)
    points = np.asarray(data["points"], np.float64).reshape(-1, 3)
    npts = points.shape[0]
    corr = np.asarray(data["correspondences"], np.int64)
    us = np.asarray(input.get("us") or np.zeros((0, 2)), np.float64).reshape(-1, 2)
    complicated = us.shape[0] != 0
    if complicated:
        verts = np.asarray(model["triangles"], np.int64)[corr]
    else:
        verts, us = corr, np.zeros((npts, 2))
    theta = np.asarray(input["theta"], np.float64)
    if theta.shape != (NTHETA,):
        raise ValueError(f"ht: theta has {theta.size} parameters, not {NTHETA}")
    key = (tuple(parents), nverts, npts, complicated, bool(model.get("is_mirrored", False)))
    call = [theta, np.zeros(2), np.ascontiguousarray(us),
            np.asarray(model["base_relatives"], np.float64).reshape(bones, 4, 4),
            np.asarray(model["inverse_base_absolutes"], np.float64).reshape(bones, 4, 4),
            np.ascontiguousarray(skin), np.ascontiguousarray(points), np.ascontiguousarray(verts)]
    return key, call


def prepare(name, input):
    key, call = arrays(input)
    text = objective_text(*key)
    if name == "objective":
        fn = function(text)
        return lambda: fn(*call).reshape(-1)
    if name != "jacobian":
        raise ValueError(f"ht has no function {name!r}")
    complicated = key[3]
    fn = function(text, "builtin.module(rlx-gradient{mode=jacobian wrt=0,1})", "main_jacobian")

    def run():
        _, d_theta, d_us = fn(*call)                       # npts x 3 x 26, npts x 3 x 2
        rows = d_theta.shape[0] * 3
        d_theta = d_theta.reshape(rows, NTHETA)
        if not complicated:
            return d_theta
        return np.concatenate([d_us.reshape(rows, 2), d_theta], axis=1)
    return run
