"""issue 14: 2x2 (and 3x3 of stride 2) pooling kernels in gradir's kernel library.

A 2x2 window with stride 2 (LeNet's, VGG's, most CNNs') reads its input
rows in pairs of columns: the output row ``j`` takes columns ``2j`` and
``2j + 1``.  As linalg (strided views of the input, one per window
element) the innermost loop reads with stride 2 and runs over the short
output rows (LeNet: 12 and 4 columns); the schedule leaves such loops
scalar and LLVM does not vectorize them (its max is ``llvm.maximum``,
which AVX2 has no instruction for): the pools took 1.6 of the LeNet step's
3.9 ms on AVX2 (``bench/conv_ops.py --isa avx2``).  The kernels read whole
rows instead: per step of ``w`` output columns they load ``2w`` elements of
both input rows, take their maximum, and split it into the even and odd
columns with two shuffles (what BLAS-style code does for pooling).

    void gradir_kernel_<variant>_max_pool2x2_<elt>(x, y)
        y[n, c, i, j] = max(x[n, c, 2i + a, 2j + b] for a, b in {0, 1})
    void gradir_kernel_<variant>_max_pool2x2_backward_<elt>(g, x, dx)
        dx[n, c, 2i + a, 2j + b] = g[n, c, i, j] where (a, b) is the first
        maximum of the window in row-major order (``a * 2 + b``), else 0
    void gradir_kernel_<variant>_avg_pool2x2_backward_<elt>(g, dx)
        dx[n, c, 2i + a, 2j + b] = g[n, c, i, j] / 4
    void gradir_kernel_<variant>_max_pool3x3s2_<elt>(xp, y)
        y[n, c, i, j] = max(xp[n, c, 2i + a, 2j + b] for a, b in 0..2)
    void gradir_kernel_<variant>_max_pool3x3s2_backward_<elt>(g, xp, dx)
        the input gradient of 3x3 windows of stride 2 and padding 1 (ResNet's
        stem pool) over dx (2 Ho, 2 Wo): xp is the input padded with -inf
        (2 Ho + 2 columns: each step loads two columns past its last
        window's start)

The 3x3 kernels (``_forward3_step``, ``_backward3_kernel``) replace the
generic lowering's de-interleaved copy, arg-max pass and per-phase gathers
(``nn._gather_backward``) with one pass over each image's channel: the
arg-max positions and gradients of a row of windows go to scratch rows
(zero past the last window), then each input row's even and odd columns sum
their windows' gradients in the gather's order (the same bits).  bench/cnn.py's
stem pool, 32x32x32x32 f32, one thread, AMD EPYC Zen 5 AVX-512, min of 300
(load 3-8), generic -> kernels: forward 0.42 -> 0.27 ms (with the pad),
backward 1.25 -> 0.65 ms (with both pads; in the step the input's pad is
the forward's).

A forward and a backward of one input (a gradient program's pool) pair up
(rlx-pool-kernels): ``..._<pool>_indices_<elt>(x, y, idx)`` also writes
each window's first-maximum position (i8: ``_first_equal``, from the
maximum it computed, a compare and a select a window element) and
``..._<pool>_backward_indices_<elt>(g, idx, dx)`` reads it (the 3x3: phase
2 alone, ``idx`` a row and column more of ``NO_WINDOW``): the same
positions and sums in the same order, the same bits.  ``sum(w *
max_pool(x))``'s gradient, x 32x32x32x32 f32, one pinned thread, min of
300 alternating calls (load 7.7), unpaired -> paired: 3x3 0.873 -> 0.726
ms (kernels, perf: forward 0.17 -> 0.27, backward 0.38 -> 0.19), 2x2 0.412
-> 0.374 (x86-64-v3's code, load 8: 3x3 0.825 -> 0.815, no gain: AVX2 takes
two shuffles a de-interleaved value; 2x2 0.408 -> 0.382); bench/cnn.py's
ResNet step compiled whole (GRADIR_PARALLEL_COMPILE=0, CPU time, min /
median of 200, load 9.7) 18.84 / 19.47 -> 18.67 / 19.33 ms.

Arguments are 4-D memrefs (NCHW) of any strides but a unit innermost one.
``x`` may have an odd row or column more than ``2 * y``'s (floor mode: it is
not read); the backward's ``dx`` is exactly twice ``g``.  Columns go in
vector steps of the target's vector width, then one step of each smaller
power of two down to 16 bytes, then one at a time.

The results are bitwise those of rlx-to-linalg's generic lowering: the
maximum (``arith.maximumf``: NaN-propagating, +0 above -0) is commutative
and associative, the max backward picks the first maximum (the first NaN,
if any) with the same chain of comparisons from -inf as
``nn.lower_max_pool2d_backward``, and the average's backward divides by 4
as the generic does.  (The average pool's forward has no kernel: its
generic's additions vectorize, 0.055 ms for LeNet's first pool on AVX2,
where a kernel of the sums and the division after it took 0.088.)
"""

from __future__ import annotations

__all__ = ["POOL_ELEMENT_TYPES", "pool_memref_type", "max_pool_name",
           "max_pool3x3_name", "max_pool3x3_backward_name", "max_pool_backward_name", "avg_pool_backward_name",
           "pool_type", "pool_text", "indices_name", "index_memref_type", "NO_WINDOW"]

KERNEL_PREFIX = "gradir_kernel_"
POOL_ELEMENT_TYPES = ("f32", "f64")
_BITS = {"f32": 32, "f64": 64}


def pool_memref_type(elt: str) -> str:
    """The pooling kernels' argument type: NCHW, unit innermost stride."""
    return f"memref<?x?x?x?x{elt}, strided<[?, ?, ?, 1], offset: ?>>"


def max_pool_name(elt: str, var: str) -> str:
    return f"{KERNEL_PREFIX}{var}_max_pool2x2_{elt}"


def max_pool3x3_name(elt: str, var: str) -> str:
    return f"{KERNEL_PREFIX}{var}_max_pool3x3s2_{elt}"


def max_pool_backward_name(elt: str, var: str) -> str:
    return f"{KERNEL_PREFIX}{var}_max_pool2x2_backward_{elt}"


def avg_pool_backward_name(elt: str, var: str) -> str:
    return f"{KERNEL_PREFIX}{var}_avg_pool2x2_backward_{elt}"


def pool_type(elt: str, args: int) -> str:
    """The type of a kernel taking ``args`` buffers."""
    t = pool_memref_type(elt)
    return "(" + ", ".join([t] * args) + ") -> ()"


def _widths(lanes: int, elt: str) -> list[int]:
    """Vector widths of the column steps: the target's, then halves down to
    16 bytes (at least 2 elements)."""
    smallest = max(2, 128 // _BITS[elt])
    widths, w = [], max(lanes, smallest)
    while w >= smallest:
        widths.append(w)
        w //= 2
    return widths


def _shuffle(a: str, b: str, mask: list[int], width: int, elt: str) -> str:
    return (f"vector.shuffle {a}, {b} [{', '.join(map(str, mask))}] : "
            f"vector<{width}x{elt}>, vector<{width}x{elt}>")


def _forward_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """``w`` output columns from column ``j`` of output row ``%oh``."""
    T = pool_memref_type(elt)
    V2, V = f"vector<{2 * w}x{elt}>", f"vector<{w}x{elt}>"
    return [f"%col{s} = arith.muli {j}, %c2 : index",
            f"%a{s} = vector.load %x[%i, %ch, %h0, %col{s}] : {T}, {V2}",
            f"%b{s} = vector.load %x[%i, %ch, %h1, %col{s}] : {T}, {V2}",
            f"%m{s} = arith.maximumf %a{s}, %b{s} : {V2}",
            f"%e{s} = " + _shuffle(f"%m{s}", f"%m{s}", list(range(0, 2 * w, 2)), 2 * w, elt),
            f"%o{s} = " + _shuffle(f"%m{s}", f"%m{s}", list(range(1, 2 * w, 2)), 2 * w, elt),
            f"%r{s} = arith.maximumf %e{s}, %o{s} : {V}",
            f"vector.store %r{s}, %y[%i, %ch, %oh, {j}] : {T}, {V}"]


def _forward3_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """``w`` output columns of a 3x3 window of stride 2 from column ``j``
    of output row ``%oh``: the three input rows' maxima over columns ``2j``
    .. ``2j + 2w - 1`` and, two columns on, ``2j + 2`` ..; the window of
    output ``j + t`` is the even and odd columns ``t`` of the first and the
    even column ``t`` of the second."""
    T = pool_memref_type(elt)
    V2, V = f"vector<{2 * w}x{elt}>", f"vector<{w}x{elt}>"
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    lines = [f"%col{s} = arith.muli {j}, %c2 : index",
             f"%cob{s} = arith.addi %col{s}, %c2 : index"]
    for r in range(3):
        lines += [f"%a{r}{s} = vector.load %x[%i, %ch, %h{r}, %col{s}] : {T}, {V2}",
                  f"%b{r}{s} = vector.load %x[%i, %ch, %h{r}, %cob{s}] : {T}, {V2}"]
    return lines + [
        f"%ma{s} = arith.maximumf %a0{s}, %a1{s} : {V2}",
        f"%va{s} = arith.maximumf %ma{s}, %a2{s} : {V2}",
        f"%mb{s} = arith.maximumf %b0{s}, %b1{s} : {V2}",
        f"%vb{s} = arith.maximumf %mb{s}, %b2{s} : {V2}",
        f"%e{s} = " + _shuffle(f"%va{s}", f"%va{s}", even, 2 * w, elt),
        f"%o{s} = " + _shuffle(f"%va{s}", f"%va{s}", odd, 2 * w, elt),
        f"%f{s} = " + _shuffle(f"%vb{s}", f"%vb{s}", even, 2 * w, elt),
        f"%eo{s} = arith.maximumf %e{s}, %o{s} : {V}",
        f"%r{s} = arith.maximumf %eo{s}, %f{s} : {V}",
        f"vector.store %r{s}, %y[%i, %ch, %oh, {j}] : {T}, {V}"]


def _forward3_scalar(elt: str, j: str) -> list[str]:
    T = pool_memref_type(elt)
    lines = ["%col = arith.muli " + j + ", %c2 : index",
             "%col1 = arith.addi %col, %c1 : index",
             "%col2 = arith.addi %col, %c2 : index"]
    m = None
    for r in range(3):
        for k, col in enumerate(("%col", "%col1", "%col2")):
            v = f"%v{r}{k}"
            lines.append(f"{v} = memref.load %x[%i, %ch, %h{r}, {col}] : {T}")
            if m is not None:
                lines.append(f"%m{r}{k} = arith.maximumf {m}, {v} : {elt}")
                v = f"%m{r}{k}"
            m = v
    return lines + [f"memref.store {m}, %y[%i, %ch, %oh, {j}] : {T}"]


def _scalar_window(elt: str, j: str) -> list[str]:
    """Output column ``j``'s window, one element at a time: ``%v0``..``%v3``
    in row-major order (input columns ``%col`` and ``%col1``)."""
    T = pool_memref_type(elt)
    return ["%col = arith.muli " + j + ", %c2 : index",
            "%col1 = arith.addi %col, %c1 : index",
            f"%v0 = memref.load %x[%i, %ch, %h0, %col] : {T}",
            f"%v1 = memref.load %x[%i, %ch, %h0, %col1] : {T}",
            f"%v2 = memref.load %x[%i, %ch, %h1, %col] : {T}",
            f"%v3 = memref.load %x[%i, %ch, %h1, %col1] : {T}"]


def _forward_scalar(elt: str, j: str) -> list[str]:
    T = pool_memref_type(elt)
    return _scalar_window(elt, j) + [
        f"%m0 = arith.maximumf %v0, %v2 : {elt}",
        f"%m1 = arith.maximumf %v1, %v3 : {elt}",
        f"%r = arith.maximumf %m0, %m1 : {elt}",
        f"memref.store %r, %y[%i, %ch, %oh, {j}] : {T}"]


def _avg_backward_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """Each window's four input-gradient elements: its output gradient / 4."""
    T = pool_memref_type(elt)
    V2, V = f"vector<{2 * w}x{elt}>", f"vector<{w}x{elt}>"
    interleave = [i // 2 + (w if i % 2 else 0) for i in range(2 * w)]
    return [f"%col{s} = arith.muli {j}, %c2 : index",
            f"%four{s} = arith.constant dense<4.0> : {V}",
            f"%gv{s} = vector.load %g[%i, %ch, %oh, {j}] : {T}, {V}",
            f"%gq{s} = arith.divf %gv{s}, %four{s} : {V}",
            f"%t{s} = " + _shuffle(f"%gq{s}", f"%gq{s}", interleave, w, elt),
            f"vector.store %t{s}, %dx[%i, %ch, %h0, %col{s}] : {T}, {V2}",
            f"vector.store %t{s}, %dx[%i, %ch, %h1, %col{s}] : {T}, {V2}"]


def _avg_backward_scalar(elt: str, j: str) -> list[str]:
    T = pool_memref_type(elt)
    return ["%col = arith.muli " + j + ", %c2 : index",
            "%col1 = arith.addi %col, %c1 : index",
            f"%four = arith.constant 4.0 : {elt}",
            f"%gv = memref.load %g[%i, %ch, %oh, {j}] : {T}",
            f"%gq = arith.divf %gv, %four : {elt}",
            f"memref.store %gq, %dx[%i, %ch, %h0, %col] : {T}",
            f"memref.store %gq, %dx[%i, %ch, %h0, %col1] : {T}",
            f"memref.store %gq, %dx[%i, %ch, %h1, %col] : {T}",
            f"memref.store %gq, %dx[%i, %ch, %h1, %col1] : {T}"]


def _first_max(values: list[str], elt: str, shape: str, s: str) -> tuple[list[str], str]:
    """Lines computing the position of the first maximum of ``values``, NaN
    counting as the maximum (``nn._beats`` from -inf, position 0 when none
    beats it: as the generic lowering), and its name."""
    ft = f"vector<{shape}x{elt}>" if shape else elt
    it = f"vector<{shape}xi32>" if shape else "i32"
    dense = (lambda v: f"dense<{v}>") if shape else (lambda v: v)
    ninf = "0xFF800000" if elt == "f32" else "0xFFF0000000000000"
    lines = [f"%ninf{s} = arith.constant {dense(ninf)} : {ft}",
             f"%p0{s} = arith.constant {dense(0)} : {it}"]
    m, k = f"%ninf{s}", f"%p0{s}"
    for pos, v in enumerate(values):
        if pos:
            lines.append(f"%p{pos}{s} = arith.constant {dense(pos)} : {it}")
        # greater, or the first NaN (nn._beats): v > m or isnan(v), unless isnan(m)
        lines += [f"%ug{pos}{s} = arith.cmpf ugt, {v}, {m} : {ft}",
                  f"%om{pos}{s} = arith.cmpf ord, {m}, {m} : {ft}",
                  f"%gt{pos}{s} = arith.andi %ug{pos}{s}, %om{pos}{s} : "
                  + (f"vector<{shape}xi1>" if shape else "i1"),
                  f"%mx{pos}{s} = arith.select %gt{pos}{s}, {v}, {m} : "
                  + (f"vector<{shape}xi1>, {ft}" if shape else ft),
                  f"%k{pos}{s} = arith.select %gt{pos}{s}, %p{pos}{s}, {k} : "
                  + (f"vector<{shape}xi1>, {it}" if shape else it)]
        m, k = f"%mx{pos}{s}", f"%k{pos}{s}"
    return lines, k


def _picks(g: str, k: str, elt: str, shape: str, s: str) -> list[str]:
    """``%d{pos}{s}``: ``g`` where the first maximum is at ``pos``, else 0."""
    ft = f"vector<{shape}x{elt}>" if shape else elt
    it = f"vector<{shape}xi32>" if shape else "i32"
    mt = f"vector<{shape}xi1>, " if shape else ""
    zero = "dense<0.0>" if shape else "0.0"
    lines = [f"%z{s} = arith.constant {zero} : {ft}"]
    for pos in range(4):
        lines += [f"%hit{pos}{s} = arith.cmpi eq, {k}, %p{pos}{s} : {it}",
                  f"%d{pos}{s} = arith.select %hit{pos}{s}, {g}, %z{s} : {mt}{ft}"]
    return lines


def _backward_step(elt: str, w: int, j: str, s: str) -> list[str]:
    T = pool_memref_type(elt)
    V2, V = f"vector<{2 * w}x{elt}>", f"vector<{w}x{elt}>"
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    interleave = [i // 2 + (w if i % 2 else 0) for i in range(2 * w)]
    lines = [f"%col{s} = arith.muli {j}, %c2 : index",
             f"%a{s} = vector.load %x[%i, %ch, %h0, %col{s}] : {T}, {V2}",
             f"%b{s} = vector.load %x[%i, %ch, %h1, %col{s}] : {T}, {V2}",
             f"%v0{s} = " + _shuffle(f"%a{s}", f"%a{s}", even, 2 * w, elt),
             f"%v1{s} = " + _shuffle(f"%a{s}", f"%a{s}", odd, 2 * w, elt),
             f"%v2{s} = " + _shuffle(f"%b{s}", f"%b{s}", even, 2 * w, elt),
             f"%v3{s} = " + _shuffle(f"%b{s}", f"%b{s}", odd, 2 * w, elt)]
    found, k = _first_max([f"%v{p}{s}" for p in range(4)], elt, str(w), s)
    lines += found + [f"%gv{s} = vector.load %g[%i, %ch, %oh, {j}] : {T}, {V}"]
    lines += _picks(f"%gv{s}", k, elt, str(w), s)
    lines += [f"%top{s} = " + _shuffle(f"%d0{s}", f"%d1{s}", interleave, w, elt),
              f"%bot{s} = " + _shuffle(f"%d2{s}", f"%d3{s}", interleave, w, elt),
              f"vector.store %top{s}, %dx[%i, %ch, %h0, %col{s}] : {T}, {V2}",
              f"vector.store %bot{s}, %dx[%i, %ch, %h1, %col{s}] : {T}, {V2}"]
    return lines


def _backward_scalar(elt: str, j: str) -> list[str]:
    T = pool_memref_type(elt)
    lines = _scalar_window(elt, j)
    found, k = _first_max([f"%v{p}" for p in range(4)], elt, "", "")
    lines += found + [f"%gv = memref.load %g[%i, %ch, %oh, {j}] : {T}"]
    lines += _picks("%gv", k, elt, "", "")
    lines += [f"memref.store %d0, %dx[%i, %ch, %h0, %col] : {T}",
              f"memref.store %d1, %dx[%i, %ch, %h0, %col1] : {T}",
              f"memref.store %d2, %dx[%i, %ch, %h1, %col] : {T}",
              f"memref.store %d3, %dx[%i, %ch, %h1, %col1] : {T}"]
    return lines


def _kernel(name: str, args: str, out: str, elt: str, lanes: int, step, scalar,
            row_end: tuple[str, ...] = (), channel_end: tuple[str, ...] = ()) -> list[str]:
    """A kernel's function: loops over images, channels and output rows
    (``out``'s dims), the columns of a row in vector steps (``step``, widths
    ``_widths``), the rest one at a time (``scalar``); ``row_end`` and
    ``channel_end``: lines after each output row's columns and after each
    channel's rows."""
    T = pool_memref_type(elt)
    widths = _widths(lanes, elt)
    L = widths[0]
    ind = "          "
    w = [f"  func.func @{name}({args}) attributes {{llvm.emit_c_interface}} {{",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         "    %c2 = arith.constant 2 : index",
         "    %c3 = arith.constant 3 : index",
         f"    %cL = arith.constant {L} : index",
         f"    %n = memref.dim {out}, %c0 : {T}",
         f"    %c = memref.dim {out}, %c1 : {T}",
         f"    %ho = memref.dim {out}, %c2 : {T}",
         f"    %wo = memref.dim {out}, %c3 : {T}",
         "    %q = arith.divui %wo, %cL : index",
         "    %wfull = arith.muli %q, %cL : index",
         "    scf.for %i = %c0 to %n step %c1 {",
         "      scf.for %ch = %c0 to %c step %c1 {",
         "        scf.for %oh = %c0 to %ho step %c1 {",
         f"{ind}%h0 = arith.muli %oh, %c2 : index",
         f"{ind}%h1 = arith.addi %h0, %c1 : index",
         f"{ind}%h2 = arith.addi %h0, %c2 : index",
         f"{ind}scf.for %j = %c0 to %wfull step %cL {{"]
    w += [ind + "  " + line for line in step(elt, L, "%j", "v")]
    w += [ind + "}"]
    pos = "%wfull"
    for n, width in enumerate(widths[1:]):
        w += [f"{ind}%rem{n} = arith.subi %wo, {pos} : index",
              f"{ind}%cw{n} = arith.constant {width} : index",
              f"{ind}%ok{n} = arith.cmpi uge, %rem{n}, %cw{n} : index",
              f"{ind}scf.if %ok{n} {{"]
        w += [ind + "  " + line for line in step(elt, width, pos, f"w{n}")]
        w += [ind + "}",
              f"{ind}%adv{n} = arith.select %ok{n}, %cw{n}, %c0 : index",
              f"{ind}%pos{n} = arith.addi {pos}, %adv{n} : index"]
        pos = f"%pos{n}"
    w += [f"{ind}scf.for %js = {pos} to %wo step %c1 {{"]
    w += [ind + "  " + line for line in scalar(elt, "%js")]
    w += [ind + "}"] + [ind + line for line in row_end] + ["        }"]
    w += ["        " + line for line in channel_end]
    w += ["      }", "    }", "    return", "  }"]
    return w


def pool_text(var: str, lanes: dict[str, int]) -> list[str]:
    """The pooling kernels of variant ``var`` (lines of a module's body):
    forward and backward, both element types; ``lanes``: the target's vector
    lanes per element type."""
    lines = []
    for elt in POOL_ELEMENT_TYPES:
        T = pool_memref_type(elt)
        lines += _kernel(max_pool_name(elt, var), f"%x: {T}, %y: {T}", "%y", elt, lanes[elt],
                         _forward_step, _forward_scalar)
        lines += _kernel(max_pool3x3_name(elt, var), f"%x: {T}, %y: {T}", "%y", elt,
                         lanes[elt], _forward3_step, _forward3_scalar)
        lines += _backward3_kernel(max_pool3x3_backward_name(elt, var), elt, lanes[elt])
        lines += _kernel(max_pool_backward_name(elt, var), f"%g: {T}, %x: {T}, %dx: {T}", "%g",
                         elt, lanes[elt], _backward_step, _backward_scalar)
        lines += _kernel(avg_pool_backward_name(elt, var), f"%g: {T}, %dx: {T}", "%g",
                         elt, lanes[elt], _avg_backward_step, _avg_backward_scalar)
        lines += indices_text(var, elt, lanes[elt])
    return lines


# --- 3x3 windows of stride 2, padding 1 (ResNet's stem pool) ---------------------------


def max_pool3x3_backward_name(elt: str, var: str) -> str:
    return f"{KERNEL_PREFIX}{var}_max_pool3x3s2_backward_{elt}"


def _columns(elt: str, lanes: int, total: str, tag: str, step, scalar, ind: str) -> list[str]:
    """Columns ``0 .. total`` in vector steps (``step(elt, width, j, sfx)``,
    widths ``_widths``), the rest one at a time (``scalar(elt, j, sfx)``);
    ``tag`` keeps the names apart."""
    widths = _widths(lanes, elt)
    L = widths[0]
    w = [f"{ind}%cL{tag} = arith.constant {L} : index",
         f"{ind}%q{tag} = arith.divui {total}, %cL{tag} : index",
         f"{ind}%wfull{tag} = arith.muli %q{tag}, %cL{tag} : index",
         f"{ind}scf.for %j{tag} = %c0 to %wfull{tag} step %cL{tag} {{"]
    w += [ind + "  " + line for line in step(elt, L, f"%j{tag}", f"{tag}v")]
    w += [ind + "}"]
    pos = f"%wfull{tag}"
    for n, width in enumerate(widths[1:]):
        s = f"{tag}w{n}"
        w += [f"{ind}%rem{s} = arith.subi {total}, {pos} : index",
              f"{ind}%cw{s} = arith.constant {width} : index",
              f"{ind}%ok{s} = arith.cmpi uge, %rem{s}, %cw{s} : index",
              f"{ind}scf.if %ok{s} {{"]
        w += [ind + "  " + line for line in step(elt, width, pos, s)]
        w += [ind + "}",
              f"{ind}%adv{s} = arith.select %ok{s}, %cw{s}, %c0 : index",
              f"{ind}%pos{s} = arith.addi {pos}, %adv{s} : index"]
        pos = f"%pos{s}"
    w += [f"{ind}scf.for %js{tag} = {pos} to {total} step %c1 {{"]
    w += [ind + "  " + line for line in scalar(elt, f"%js{tag}", f"{tag}s")]
    return w + [ind + "}"]


def _argmax3_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """Phase 1 of the 3x3 backward, ``w`` windows of output row ``%oy`` from
    column ``j``: the position of each window's first maximum (row-major,
    ``_first_max``) into the scratch ``%A``, the output gradient into
    ``%G``."""
    T = pool_memref_type(elt)
    V2, V = f"vector<{2 * w}x{elt}>", f"vector<{w}x{elt}>"
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    lines = [f"%col{s} = arith.muli {j}, %c2 : index",
             f"%cob{s} = arith.addi %col{s}, %c2 : index"]
    values = []
    for r in range(3):
        lines += [f"%a{r}{s} = vector.load %x[%i, %ch, %h{r}, %col{s}] : {T}, {V2}",
                  f"%b{r}{s} = vector.load %x[%i, %ch, %h{r}, %cob{s}] : {T}, {V2}",
                  f"%t{r}0{s} = " + _shuffle(f"%a{r}{s}", f"%a{r}{s}", even, 2 * w, elt),
                  f"%t{r}1{s} = " + _shuffle(f"%a{r}{s}", f"%a{r}{s}", odd, 2 * w, elt),
                  f"%t{r}2{s} = " + _shuffle(f"%b{r}{s}", f"%b{r}{s}", even, 2 * w, elt)]
        values += [f"%t{r}{k}{s}" for k in range(3)]
    found, k = _first_max(values, elt, str(w), s)
    S = f"memref<?x?x{elt}>"
    return lines + found + [
        f"vector.store {k}, %A[%oy, {j}] : memref<?x?xi32>, vector<{w}xi32>",
        f"%gv{s} = vector.load %g[%i, %ch, %oy, {j}] : {T}, {V}",
        f"vector.store %gv{s}, %G[%oy, {j}] : {S}, {V}"]


def _argmax3_scalar(elt: str, j: str, s: str) -> list[str]:
    T = pool_memref_type(elt)
    lines = [f"%col{s} = arith.muli {j}, %c2 : index",
             f"%col1{s} = arith.addi %col{s}, %c1 : index",
             f"%col2{s} = arith.addi %col{s}, %c2 : index"]
    values = []
    for r in range(3):
        for k, col in enumerate((f"%col{s}", f"%col1{s}", f"%col2{s}")):
            lines.append(f"%t{r}{k}{s} = memref.load %x[%i, %ch, %h{r}, {col}] : {T}")
            values.append(f"%t{r}{k}{s}")
    found, k = _first_max(values, elt, "", s)
    return lines + found + [
        f"memref.store {k}, %A[%oy, {j}] : memref<?x?xi32>",
        f"%gv{s} = memref.load %g[%i, %ch, %oy, {j}] : {T}",
        f"memref.store %gv{s}, %G[%oy, {j}] : memref<?x?x{elt}>"]


# Phase 2: input row 2q + py, column 2t + px takes, in this order, the
# output gradients of the windows (row, column, position in the window):
# the taps of nn._gather_backward for padding 1 (the kernel offsets in
# row-major order; window ho or wo is the zero padding past the last).
_TAPS = {(0, 0): [("lo", "t", 4)],
         (0, 1): [("lo", "t1", 3), ("lo", "t", 5)],
         (1, 0): [("hi", "t", 1), ("lo", "t", 7)],
         (1, 1): [("hi", "t1", 0), ("hi", "t", 2), ("lo", "t1", 6), ("lo", "t", 8)]}


def _gather3(elt: str, shape: str, py: int, loads, s: str,
             idx: str = "i32") -> tuple[list[str], list[str]]:
    """The even and odd columns' sums (``_TAPS``) of an input row of phase
    ``py``; ``loads(kind, row, col)`` names the value there (kind ``A``: the
    first-maximum position, of type ``idx``; ``G``: the gradient)."""
    ft = f"vector<{shape}x{elt}>" if shape else elt
    it = f"vector<{shape}x{idx}>" if shape else idx
    mt = f"vector<{shape}xi1>, " if shape else ""
    dense = (lambda v: f"dense<{v}>") if shape else (lambda v: v)
    lines = [f"%z{s} = arith.constant {dense('0.0')} : {ft}"]
    sums = []
    for px in range(2):
        acc = None
        for n, (row, col, pos) in enumerate(_TAPS[(py, px)]):
            name = f"{px}{n}{s}"
            lines += [f"%p{name} = arith.constant {dense(pos)} : {it}",
                      f"%h{name} = arith.cmpi eq, {loads('A', row, col)}, %p{name} : {it}",
                      f"%d{name} = arith.select %h{name}, {loads('G', row, col)}, %z{s} : "
                      f"{mt}{ft}"]
            if acc is None:
                acc = f"%d{name}"
            else:
                lines.append(f"%s{name} = arith.addf {acc}, %d{name} : {ft}")
                acc = f"%s{name}"
        sums.append(acc)
    return lines, sums


def _source3(kind: str, row: str, c: str, elt: str, direct: bool) -> tuple[str, str, str]:
    """Where phase 2 reads the first-maximum positions (``kind`` ``A``) or
    the gradients (``G``) of the windows of row ``row``: the scratch rows
    (``[row, c]``) or, ``direct``, the index buffer (i8) and the padded
    gradient (``[%i, %ch, row, c]``); (buffer and indices, memref type,
    element type)."""
    if not direct:
        e = "i32" if kind == "A" else elt
        return f"%{kind}[%{row}, {c}]", f"memref<?x?x{e}>", e
    if kind == "A":
        return f"%idx[%i, %ch, %{row}, {c}]", index_memref_type(), "i8"
    return f"%g[%i, %ch, %{row}, {c}]", pool_memref_type(elt), elt


def _spread3_step(py: int, direct: bool = False):
    def step(elt: str, w: int, j: str, s: str) -> list[str]:
        T = pool_memref_type(elt)
        V = f"vector<{w}x{elt}>"
        lines = [f"%t1{s} = arith.addi {j}, %c1 : index",
                 f"%col{s} = arith.muli {j}, %c2 : index"]
        names = {}

        def loads(kind, row, col):
            key = (kind, row, col)
            if key not in names:
                where, typ, e = _source3(kind, row, j if col == "t" else f"%t1{s}", elt, direct)
                names[key] = f"%{kind}{row}{col}{s}"
                lines.append(f"{names[key]} = vector.load {where} : {typ}, vector<{w}x{e}>")
            return names[key]

        body, (ev, od) = _gather3(elt, str(w), py, loads, s, "i8" if direct else "i32")
        interleave = [i // 2 + (w if i % 2 else 0) for i in range(2 * w)]
        return lines + body + [
            f"%iv{s} = " + _shuffle(ev, od, interleave, w, elt),
            f"vector.store %iv{s}, %dx[%i, %ch, %r{py}, %col{s}] : {T}, vector<{2 * w}x{elt}>"]
    return step


def _spread3_scalar(py: int, direct: bool = False):
    def scalar(elt: str, j: str, s: str) -> list[str]:
        T = pool_memref_type(elt)
        lines = [f"%t1{s} = arith.addi {j}, %c1 : index",
                 f"%col{s} = arith.muli {j}, %c2 : index",
                 f"%col1{s} = arith.addi %col{s}, %c1 : index"]
        names = {}

        def loads(kind, row, col):
            key = (kind, row, col)
            if key not in names:
                where, typ, _ = _source3(kind, row, j if col == "t" else f"%t1{s}", elt, direct)
                names[key] = f"%{kind}{row}{col}{s}"
                lines.append(f"{names[key]} = memref.load {where} : {typ}")
            return names[key]

        body, (ev, od) = _gather3(elt, "", py, loads, s, "i8" if direct else "i32")
        return lines + body + [f"memref.store {ev}, %dx[%i, %ch, %r{py}, %col{s}] : {T}",
                               f"memref.store {od}, %dx[%i, %ch, %r{py}, %col1{s}] : {T}"]
    return scalar


def _backward3_kernel(name: str, elt: str, lanes: int) -> list[str]:
    """``(g, xp, dx)``: ``dx`` (2 * Ho, 2 * Wo), ``g`` its windows' gradient
    (Ho x Wo read; the lowering's is zero-padded by one), ``xp`` the input
    padded with -inf (2 * Ho + 2 rows and columns read).  Per image and channel:
    phase 1 (``_argmax3_step``) writes each window's first-maximum position
    and gradient into scratch rows zero-padded past the last window, phase 2
    (``_spread3_step``) each input row's elements, the sums of
    ``nn._gather_backward`` in its order (the same bits)."""
    T = pool_memref_type(elt)
    L = _widths(lanes, elt)[0]
    ind = "        "
    w = [f"  func.func @{name}(%g: {T}, %x: {T}, %dx: {T}) attributes {{llvm.emit_c_interface}} {{",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         "    %c2 = arith.constant 2 : index",
         "    %c3 = arith.constant 3 : index",
         f"    %n = memref.dim %g, %c0 : {T}",
         f"    %c = memref.dim %g, %c1 : {T}",
         f"    %hx = memref.dim %dx, %c2 : {T}",
         f"    %wx = memref.dim %dx, %c3 : {T}",
         "    %ho = arith.divui %hx, %c2 : index",
         "    %wo = arith.divui %wx, %c2 : index",
         "    %rows = arith.addi %ho, %c1 : index",
         f"    %cols0 = arith.addi %wo, %c1 : index",
         f"    %cLs = arith.constant {L} : index",
         "    %cols = arith.addi %cols0, %cLs : index",
         f"    %A = memref.alloc(%rows, %cols) : memref<?x?xi32>",
         f"    %G = memref.alloc(%rows, %cols) : memref<?x?x{elt}>",
         "    %zi = arith.constant 0 : i32",
         f"    %zf = arith.constant 0.0 : {elt}",
         "    scf.for %zr = %c0 to %rows step %c1 {",
         "      scf.for %zc = %c0 to %cols step %c1 {",
         "        memref.store %zi, %A[%zr, %zc] : memref<?x?xi32>",
         f"        memref.store %zf, %G[%zr, %zc] : memref<?x?x{elt}>",
         "      }",
         "    }",
         "    scf.for %i = %c0 to %n step %c1 {",
         "      scf.for %ch = %c0 to %c step %c1 {",
         "        scf.for %oy = %c0 to %ho step %c1 {",
         f"{ind}  %h0 = arith.muli %oy, %c2 : index",
         f"{ind}  %h1 = arith.addi %h0, %c1 : index",
         f"{ind}  %h2 = arith.addi %h0, %c2 : index"]
    w += _columns(elt, lanes, "%wo", "a", _argmax3_step,
                  lambda e, j, s: _argmax3_scalar(e, j, s), ind + "  ")
    w += [f"{ind}}}",
          f"{ind}scf.for %lo = %c0 to %ho step %c1 {{",
          f"{ind}  %hi = arith.addi %lo, %c1 : index",
          f"{ind}  %r0 = arith.muli %lo, %c2 : index",
          f"{ind}  %r1 = arith.addi %r0, %c1 : index"]
    for py in range(2):
        w += _columns(elt, lanes, "%wo", f"p{py}", _spread3_step(py), _spread3_scalar(py),
                      ind + "  ")
    w += [f"{ind}}}", "      }", "    }",
          "    memref.dealloc %A : memref<?x?xi32>",
          f"    memref.dealloc %G : memref<?x?x{elt}>",
          "    return", "  }"]
    return w


# --- the forward's arg-max indices, read by the backward -------------------------------


def indices_name(kernel: str, elt: str, var: str) -> str:
    """The variant of ``kernel`` (``max_pool2x2``, ``max_pool3x3s2`` and
    their ``_backward``) that saves (forward) or reads (backward) the
    windows' arg-max indices."""
    return f"{KERNEL_PREFIX}{var}_{kernel}_indices_{elt}"


def index_memref_type() -> str:
    """The index buffer's type in the kernels: NCHW i8, unit innermost stride."""
    return "memref<?x?x?x?xi8, strided<[?, ?, ?, 1], offset: ?>>"


# the 3x3 index buffer's value past the last window (no tap's position)
NO_WINDOW = 9


def _first_equal(values: list[str], m: str, elt: str, shape: str,
                 s: str, idx: str = "i8") -> tuple[list[str], str]:
    """Lines computing, as ``idx``, the position of the first of ``values``
    equal to their maximum ``m`` (``arith.maximumf``) or NaN, and its name.
    It is ``_first_max``'s position: without NaN both are the first value
    numerically equal to the maximum (-0 equal to +0; all -inf: 0); with a
    NaN, ``m`` is NaN, equal to nothing, and both are the first NaN.  From
    the last value back (the last where no other is), a compare and a
    select a value; NaN (rare) takes a second branch that also tests each
    value for NaN (``_first_max`` from the first: five operations a value)."""
    ft = f"vector<{shape}x{elt}>" if shape else elt
    it = f"vector<{shape}x{idx}>" if shape else idx
    mt = f"vector<{shape}xi1>" if shape else "i1"
    dense = (lambda v: f"dense<{v}>") if shape else (lambda v: v)
    last = len(values) - 1
    lines = [f"%ixp{pos}{s} = arith.constant {dense(pos)} : {it}" for pos in range(last + 1)]
    lines += [f"%ixm{s} = arith.cmpf uno, {m}, {m} : {ft}"]
    if shape:
        lines += [f"%ixa{s} = vector.reduction <or>, %ixm{s} : {mt} into i1"]
    lines += [f"%ixk{s} = scf.if {f'%ixa{s}' if shape else f'%ixm{s}'} -> ({it}) {{"]
    for nan in (True, False):
        k = f"%ixp{last}{s}"
        for pos in reversed(range(last)):
            n = f"{pos}{'n' if nan else 'f'}{s}"
            lines.append(f"  %ixe{n} = arith.cmpf oeq, {values[pos]}, {m} : {ft}")
            hit = f"%ixe{n}"
            if nan:
                lines += [f"  %ixn{n} = arith.cmpf uno, {values[pos]}, {values[pos]} : {ft}",
                          f"  %ixh{n} = arith.ori %ixe{n}, %ixn{n} : {mt}"]
                hit = f"%ixh{n}"
            lines.append(f"  %ixk{n} = arith.select {hit}, %ixp{pos}{s}, {k} : "
                         + (f"{mt}, {it}" if shape else it))
            k = f"%ixk{n}"
        lines += [f"  scf.yield {k} : {it}", "} else {" if nan else "}"]
    return lines, f"%ixk{s}"


def _forward_indices_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """``_forward_step`` and the windows' first-maximum positions into ``%idx``."""
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    lines = _forward_step(elt, w, j, s) + [
        f"%v0{s} = " + _shuffle(f"%a{s}", f"%a{s}", even, 2 * w, elt),
        f"%v1{s} = " + _shuffle(f"%a{s}", f"%a{s}", odd, 2 * w, elt),
        f"%v2{s} = " + _shuffle(f"%b{s}", f"%b{s}", even, 2 * w, elt),
        f"%v3{s} = " + _shuffle(f"%b{s}", f"%b{s}", odd, 2 * w, elt)]
    found, k = _first_equal([f"%v{p}{s}" for p in range(4)], f"%r{s}", elt, str(w), s)
    return lines + found + [
        f"vector.store {k}, %idx[%i, %ch, %oh, {j}] : {index_memref_type()}, vector<{w}xi8>"]


def _forward_indices_scalar(elt: str, j: str) -> list[str]:
    found, k = _first_equal([f"%v{p}" for p in range(4)], "%r", elt, "", "")
    return _forward_scalar(elt, j) + found + [
        f"memref.store {k}, %idx[%i, %ch, %oh, {j}] : {index_memref_type()}"]


def _forward3_indices_step(elt: str, w: int, j: str, s: str) -> list[str]:
    """``_forward3_step`` and the windows' first-maximum positions (row-major)."""
    even, odd = list(range(0, 2 * w, 2)), list(range(1, 2 * w, 2))
    lines = _forward3_step(elt, w, j, s)
    for r in range(3):
        lines += [f"%t{r}0{s} = " + _shuffle(f"%a{r}{s}", f"%a{r}{s}", even, 2 * w, elt),
                  f"%t{r}1{s} = " + _shuffle(f"%a{r}{s}", f"%a{r}{s}", odd, 2 * w, elt),
                  f"%t{r}2{s} = " + _shuffle(f"%b{r}{s}", f"%b{r}{s}", even, 2 * w, elt)]
    found, k = _first_equal([f"%t{r}{c}{s}" for r in range(3) for c in range(3)],
                            f"%r{s}", elt, str(w), s)
    return lines + found + [
        f"vector.store {k}, %idx[%i, %ch, %oh, {j}] : {index_memref_type()}, vector<{w}xi8>"]


def _forward3_indices_scalar(elt: str, j: str) -> list[str]:
    found, k = _first_equal([f"%v{r}{c}" for r in range(3) for c in range(3)], "%m22",
                            elt, "", "")
    return _forward3_scalar(elt, j) + found + [
        f"memref.store {k}, %idx[%i, %ch, %oh, {j}] : {index_memref_type()}"]


def _no_window() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The 3x3 forward's lines after each output row (``NO_WINDOW`` at
    column Wo) and after each channel (in row Ho)."""
    TI = index_memref_type()
    return ((f"%nw = arith.constant {NO_WINDOW} : i8",
             f"memref.store %nw, %idx[%i, %ch, %oh, %wo] : {TI}"),
            (f"%nwc = arith.constant {NO_WINDOW} : i8", "%wo1 = arith.addi %wo, %c1 : index",
             "scf.for %jn = %c0 to %wo1 step %c1 {",
             f"  memref.store %nwc, %idx[%i, %ch, %ho, %jn] : {TI}", "}"))


def _backward_indices(elt: str, w: int, j: str, s: str, index: str = "i8") -> list[str]:
    """``_backward_step`` (``w`` columns; 0: ``_backward_scalar``) with the
    positions read from ``%idx`` (``index``: their element type, i8 here,
    i32 for ``pool_index_kernels``)."""
    T = pool_memref_type(elt)
    TI = index_memref_type().replace("xi8,", f"x{index},")
    V, V2 = (f"vector<{w}x{elt}>", f"vector<{2 * w}x{elt}>") if w else (elt, elt)
    it, mt = (f"vector<{w}x{index}>", f"vector<{w}xi1>, ") if w else (index, "")
    load = (lambda m, t: f"vector.load {m} : {t}, {it if t == TI else V}") if w else \
        (lambda m, t: f"memref.load {m} : {t}")
    dense = (lambda v: f"dense<{v}>") if w else (lambda v: v)
    lines = [f"%col{s} = arith.muli {j}, %c2 : index",
             f"%col1{s} = arith.addi %col{s}, %c1 : index",
             f"%gv{s} = " + load(f"%g[%i, %ch, %oh, {j}]", T),
             f"%kv{s} = " + load(f"%idx[%i, %ch, %oh, {j}]", TI),
             f"%z{s} = arith.constant {dense('0.0')} : {V}"]
    for pos in range(4):
        lines += [f"%p{pos}{s} = arith.constant {dense(pos)} : {it}",
                  f"%hit{pos}{s} = arith.cmpi eq, %kv{s}, %p{pos}{s} : {it}",
                  f"%d{pos}{s} = arith.select %hit{pos}{s}, %gv{s}, %z{s} : {mt}{V}"]
    if not w:
        return lines + [f"memref.store %d{pos}{s}, %dx[%i, %ch, %h{pos // 2}, %col"
                        f"{'1' if pos % 2 else ''}{s}] : {T}" for pos in range(4)]
    interleave = [i // 2 + (w if i % 2 else 0) for i in range(2 * w)]
    return lines + [
        f"%top{s} = " + _shuffle(f"%d0{s}", f"%d1{s}", interleave, w, elt),
        f"%bot{s} = " + _shuffle(f"%d2{s}", f"%d3{s}", interleave, w, elt),
        f"vector.store %top{s}, %dx[%i, %ch, %h0, %col{s}] : {T}, {V2}",
        f"vector.store %bot{s}, %dx[%i, %ch, %h1, %col{s}] : {T}, {V2}"]


def _backward3_head(name: str, T: str, TI: str) -> list[str]:
    """3x3 backward-from-positions kernels' ``(g, idx, dx)`` and dx's sizes."""
    return [f"  func.func @{name}(%g: {T}, %idx: {TI}, %dx: {T}) attributes "
            "{llvm.emit_c_interface} {",
            "    %c0 = arith.constant 0 : index",
            "    %c1 = arith.constant 1 : index",
            "    %c2 = arith.constant 2 : index",
            "    %c3 = arith.constant 3 : index",
            f"    %n = memref.dim %dx, %c0 : {T}",
            f"    %c = memref.dim %dx, %c1 : {T}",
            f"    %hx = memref.dim %dx, %c2 : {T}",
            f"    %wx = memref.dim %dx, %c3 : {T}",
            "    %ho = arith.divui %hx, %c2 : index",
            "    %wo = arith.divui %wx, %c2 : index"]


def _backward3_indices_kernel(name: str, elt: str, lanes: int) -> list[str]:
    """``(g, idx, dx)``: phase 2 of ``_backward3_kernel`` alone, reading the
    positions from ``idx`` (N, C, Ho + 1, Wo + 1; ``NO_WINDOW`` past the
    last window) and the gradients from ``g`` (zero-padded, as the
    lowering's): the same sums in the same order."""
    ind = "        "
    w = _backward3_head(name, pool_memref_type(elt), index_memref_type()) + [
         "    scf.for %i = %c0 to %n step %c1 {",
         "      scf.for %ch = %c0 to %c step %c1 {",
         f"{ind}scf.for %lo = %c0 to %ho step %c1 {{",
         f"{ind}  %hi = arith.addi %lo, %c1 : index",
         f"{ind}  %r0 = arith.muli %lo, %c2 : index",
         f"{ind}  %r1 = arith.addi %r0, %c1 : index"]
    for py in range(2):
        w += _columns(elt, lanes, "%wo", f"p{py}", _spread3_step(py, True),
                      _spread3_scalar(py, True), ind + "  ")
    return w + [f"{ind}}}", "      }", "    }", "    return", "  }"]


def indices_text(var: str, elt: str, lanes: int) -> list[str]:
    """The kernels of the forward that saves its arg-max indices and of the
    backward that reads them (``pool_text``)."""
    T, TI = pool_memref_type(elt), index_memref_type()
    return (_kernel(indices_name("max_pool2x2", elt, var), f"%x: {T}, %y: {T}, %idx: {TI}",
                    "%y", elt, lanes, _forward_indices_step, _forward_indices_scalar)
            + _kernel(indices_name("max_pool2x2_backward", elt, var),
                      f"%g: {T}, %idx: {TI}, %dx: {T}", "%g", elt, lanes, _backward_indices,
                      lambda e, j: _backward_indices(e, 0, j, ""))
            + _kernel(indices_name("max_pool3x3s2", elt, var), f"%x: {T}, %y: {T}, %idx: {TI}",
                      "%y", elt, lanes, _forward3_indices_step, _forward3_indices_scalar,
                      *_no_window())
            + _backward3_indices_kernel(indices_name("max_pool3x3s2_backward", elt, var), elt,
                                        lanes))
