"""Resizing: ``F.interpolate`` / ``nn.Upsample`` (aten.upsample_*): nearest,
nearest-exact, linear/bilinear/trilinear and bicubic, with or without
``align_corners``, by output size or scale factor, 1-d to 3-d.

Every mode is separable: along each resized axis an output element is a
weighted sum of a few input elements (taps) whose positions and weights
depend only on the shapes, so they are computed here with numpy, as
PyTorch's CPU kernels compute them (``UpSample.h``: the source index in the
kernel's arithmetic type, float for f32 and f16/bf16, double for f64), and
each tap is an ``rlx.take`` of constant indices along that axis; the
gradient is take's (a scatter-add), as PyTorch's upsample backward sums
into the same positions.  The axes are resized last first (W, then H), the
order of PyTorch's loops, so f64 results match to the last bits.
``antialias=True`` (``_upsample_bilinear2d_aa``) has no mapping."""

from __future__ import annotations

import numpy as np

from gradir.dialects import rlx

from .registry import aten
from ._helpers import float_operands

__all__: list[str] = []

_CUBIC_A = -0.75


def _opmath(dtype):
    return np.float64 if str(dtype) == "torch.float64" else np.float32


def _scale(ft, size, out, scale, align_corners):
    """``area_pixel_compute_scale``: the source step per output element."""
    if align_corners:
        return ft(size - 1) / ft(out - 1) if out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(size) / ft(out)


def _nearest_taps(size, out, scale, exact):
    """``nearest_idx`` / ``nearest_exact_idx`` (float arithmetic)."""
    if out == size and not exact:
        return [(np.arange(out), None)]
    if out == 2 * size and not exact:
        return [(np.arange(out) >> 1, None)]
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(size / out)
    dst = np.arange(out, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    return [(np.minimum(src.astype(np.int64), size - 1), None)]


def _linear_taps(ft, size, out, scale, align_corners):
    step = _scale(ft, size, out, scale, align_corners)
    dst = np.arange(out, dtype=ft)
    if align_corners:
        real = step * dst
    else:
        real = np.maximum(step * (dst + ft(0.5)) - ft(0.5), ft(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), size - 1)
    i1 = i0 + (i0 < size - 1)
    lam1 = np.minimum(np.maximum(real - i0.astype(ft), ft(0)), ft(1))
    lam0 = ft(1) - lam1
    return [(i0, lam0), (i1, lam1)]


def _cubic_taps(ft, size, out, scale, align_corners):
    step = _scale(ft, size, out, scale, align_corners)
    dst = np.arange(out, dtype=ft)
    real = step * dst if align_corners else step * (dst + ft(0.5)) - ft(0.5)
    base = np.minimum(np.floor(real), ft(size - 1))
    t = np.minimum(np.maximum(real - base, ft(0)), ft(1)).astype(ft)
    a = ft(_CUBIC_A)

    def conv1(x):
        return ((a + ft(2)) * x - (a + ft(3))) * x * x + ft(1)

    def conv2(x):
        return ((a * x - ft(5) * a) * x + ft(8) * a) * x - ft(4) * a

    weights = [conv2(t + ft(1)), conv1(t), conv1(ft(1) - t), conv2(ft(1) - t + ft(1))]
    base = base.astype(np.int64)
    return [(np.clip(base - 1 + k, 0, size - 1), w) for k, w in enumerate(weights)]


def _resize_axis(cx, v, axis, taps):
    """sum over taps of ``w * take(v, idx, axis)`` (weights along ``axis``)."""
    rank = cx.rank(v)
    out = None
    for idx, w in taps:
        part = rlx.take(v, cx.const(np.ascontiguousarray(idx, dtype=np.int64)), [axis])
        if w is not None:
            shape = [1] * rank
            shape[axis] = len(w)
            part = rlx.multiply(part, cx.const(np.asarray(w).reshape(shape), cx.dtype(v)))
        out = part if out is None else rlx.add(out, part)
    return out


def _upsample(cx, x, mode, scales, align_corners=False):
    """``x`` resized to the node's result shape; ``scales``: the scale
    factor per spatial axis (None: from the sizes)."""
    (v,) = float_operands(cx, x, dtype=cx.dtype(x))
    shape, want = cx.shape(v), cx.out_shape
    spatial = list(range(2, len(shape)))
    scales = list(scales) if scales else [None] * len(spatial)
    ft = _opmath(cx.dtype(v))
    for axis, scale in reversed(list(zip(spatial, scales))):
        size, out = shape[axis], want[axis]
        if mode in ("nearest", "nearest-exact"):
            taps = _nearest_taps(size, out, scale, mode == "nearest-exact")
        elif mode == "linear":
            taps = _linear_taps(ft, size, out, scale, align_corners)
        else:
            taps = _cubic_taps(ft, size, out, scale, align_corners)
        if len(taps) == 1 and size == out and np.array_equal(taps[0][0], np.arange(out)):
            continue
        v = _resize_axis(cx, v, axis, taps)
    return v


def _vec_scales(scale_factors):
    return None if scale_factors is None else [float(s) for s in scale_factors]


@aten("aten.upsample_nearest1d.vec", "aten.upsample_nearest2d.vec",
      "aten.upsample_nearest3d.vec")
def upsample_nearest_vec(cx, x, output_size, scale_factors):
    return _upsample(cx, x, "nearest", _vec_scales(scale_factors))


@aten("aten._upsample_nearest_exact1d.vec", "aten._upsample_nearest_exact2d.vec",
      "aten._upsample_nearest_exact3d.vec")
def upsample_nearest_exact_vec(cx, x, output_size, scale_factors):
    return _upsample(cx, x, "nearest-exact", _vec_scales(scale_factors))


@aten("aten.upsample_nearest1d.default", "aten.upsample_nearest2d.default",
      "aten.upsample_nearest3d.default")
def upsample_nearest(cx, x, output_size, *scales):
    return _upsample(cx, x, "nearest", scales if any(s is not None for s in scales) else None)


@aten("aten._upsample_nearest_exact1d.default", "aten._upsample_nearest_exact2d.default",
      "aten._upsample_nearest_exact3d.default")
def upsample_nearest_exact(cx, x, output_size, *scales):
    return _upsample(cx, x, "nearest-exact",
                     scales if any(s is not None for s in scales) else None)


@aten("aten.upsample_linear1d.vec", "aten.upsample_bilinear2d.vec",
      "aten.upsample_trilinear3d.vec")
def upsample_linear_vec(cx, x, output_size, align_corners, scale_factors):
    return _upsample(cx, x, "linear", _vec_scales(scale_factors), bool(align_corners))


@aten("aten.upsample_linear1d.default", "aten.upsample_bilinear2d.default",
      "aten.upsample_trilinear3d.default")
def upsample_linear(cx, x, output_size, align_corners, *scales):
    return _upsample(cx, x, "linear", scales if any(s is not None for s in scales) else None,
                     bool(align_corners))


@aten("aten.upsample_bicubic2d.vec")
def upsample_bicubic_vec(cx, x, output_size, align_corners, scale_factors):
    return _upsample(cx, x, "cubic", _vec_scales(scale_factors), bool(align_corners))


@aten("aten.upsample_bicubic2d.default")
def upsample_bicubic(cx, x, output_size, align_corners, *scales):
    return _upsample(cx, x, "cubic", scales if any(s is not None for s in scales) else None,
                     bool(align_corners))

