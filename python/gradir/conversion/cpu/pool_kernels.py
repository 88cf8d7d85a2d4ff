"""issue 14: 2x2 pooling kernels in gradir's kernel library.

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
           "max_pool_backward_name", "avg_pool_backward_name",
           "pool_type", "pool_text"]

KERNEL_PREFIX = "gradir_kernel_"
POOL_ELEMENT_TYPES = ("f32", "f64")
_BITS = {"f32": 32, "f64": 64}


def pool_memref_type(elt: str) -> str:
    """The pooling kernels' argument type: NCHW, unit innermost stride."""
    return f"memref<?x?x?x?x{elt}, strided<[?, ?, ?, 1], offset: ?>>"


def max_pool_name(elt: str, var: str) -> str:
    return f"{KERNEL_PREFIX}{var}_max_pool2x2_{elt}"


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


def _kernel(name: str, args: str, out: str, elt: str, lanes: int, step, scalar) -> list[str]:
    """A kernel's function: loops over images, channels and output rows
    (``out``'s dims), the columns of a row in vector steps (``step``, widths
    ``_widths``), the rest one at a time (``scalar``)."""
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
    w += [ind + "}", "        }", "      }", "    }", "    return", "  }"]
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
        lines += _kernel(max_pool_backward_name(elt, var), f"%g: {T}, %x: {T}, %dx: {T}", "%g",
                         elt, lanes[elt], _backward_step, _backward_scalar)
        lines += _kernel(avg_pool_backward_name(elt, var), f"%g: {T}, %dx: {T}", "%g",
                         elt, lanes[elt], _avg_backward_step, _avg_backward_scalar)
    return lines
