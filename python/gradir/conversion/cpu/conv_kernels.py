"""Implicit-GEMM convolution kernels in gradir's kernel library.

    void gradir_kernel_<variant>_conv_<elt>(W, X, Y, zero, kh, kw, sh, sw, dh, dw)
        Y[n, o, oy, ox] (+)= sum_k W[o, k] * X[n, c, oy*sh + ky*dh, ox*sw + kx*dw]
        with k = (c * kh + ky) * kw + kx
    void gradir_kernel_<variant>_wgrad_conv_<elt>(W, X, Y, zero, kh, kw, sh, sw, dh, dw,
                                                   col0, col1)
        Y[o, n, oy, ox] (+)= the same sum, for the columns (n, oy, ox) of
        [col0, col1) (row-major over N, OH, OW)

``W`` (O x C*KH*KW) is the packed weights (a strided 2-D memref), ``X`` the
padded images (N, C, Hp, Wp; any strides: the weight gradient's data is a
transposed view of NCHW images), ``Y`` the output (N, O, OH, OW, each
image's (OH, OW) contiguous: one image's product is the (O, OH*OW) matrix
C of the GEMM).  ``zero``: Y is written, not read.  It is the matmul
kernel's driver (``kernels._driver``: K blocks, M blocks, N tiles of
``2 * lanes`` columns, the same register tiles, the lhs block packed
K-major) with the rhs panel of an N tile (K block x tile width) packed
straight from the image: the im2col matrix B is never written.  The
panel's row k is the image's pixels of the tile's columns shifted by
(c, ky, kx); those columns are runs along output rows, each run
contiguous in the image at unit stride (``sw`` 1), copied as masked
vectors, a K step at a time; at column step 2 (``sw`` 2) as two masked
vectors of the 2L - 1 elements a run of L pixels spans (none past its
last) and one shuffle of their even lanes; else element by element.  A K
block's rows' offsets in an image (``%roff``) are stepped along K from
its first (no divisions per K step: 32768 K steps in the stem's weight
gradient).  Every element of Y is the same chain of FMAs in the same K
order as the matmul kernel's on the im2col matrix (the same bits; a K
block's bounds do not change it: each block's tiles go on from the sums
the last stored).

conv.py calls it for conv2d of stride 1 with at least 64 output pixels per
image (the forward convs and the stride-1 transposed convs' flipped
conv2d): bench/cnn.py's 3x3 convs, f32, one thread, AMD EPYC Zen 5 (load
3-9), min of 40 paired, 0.89-0.95x the im2col GEMM's time (conv.py's
docstring).  Stride 2, the ResNet's 32x32x16x16 -> 32x64x8x8 (pad 1; f32,
load 0.4-1.1, min of 200-400 paired): 1 thread 0.95-1.01x the im2col GEMM's
time (0.397-0.412 against 0.392-0.430 ms), 2 threads 1.00-1.14x (wall):
left to the im2col GEMM (conv.py's CONV_KERNEL_STRIDES); its runs are 8
pixels, half a vector.

The weight gradient's kernel (``convw_driver``) takes the conv2d the VJP
rule emits for the weight gradient (the batch and the channels swapped: a
few output "pixels" per image, 3x3, a kernel as large as the forward
output, 16x16): ``Y`` has the output channels first, (O, N, OH, OW), its
(N, OH, OW) contiguous, the product C (O x N*OH*OW) of one GEMM over the
columns (n, oy, ox) of every image.  Its rhs panels are packed the way the
matmul kernel packs a transposed rhs (``kernels._transposed_panel``): L
consecutive K steps of each of L columns as a vector, the L x L block
transposed in registers.  A column's L K steps are read at its base
offset in the images (``%coff``: n, oy, ox) plus theirs (``%roff``: c,
ky, kx); they lie in runs of KW contiguous elements (kx, where ``dw`` is
1), so a chunk of L K steps is a ``vector.maskedload`` per run it meets,
of the run's lanes [a, b), its base shifted back by a (inside the image:
the runs before it in the chunk lie lower), the chunk so far its
pass-through (one load for KW a multiple of L, two for KW 8 and L 16);
its K blocks are multiples of L.  Other ``dw`` pack element by element.
rlx-conv-kernels runs it on threads as ranges of the columns (a multiple
of 16 long where over 16: whole vectors), each thread packing its columns'
panels (blocks of images had run the stem's 27 columns as 18 and 9, two
and one vectors of columns to pack: 1.06x the im2col lowering's time at 2
threads).  AMD EPYC Zen 5 AVX-512, f32, load 0.4-1.4, min of 200-400
paired, ms, im2col lowering (conv.py's channel blocks or transposed
im2col) -> kernel, 1 thread / 2 threads (wall): the ResNet's
32x32x16x16 -> 32x32x3x3 (pad 1, KW 16) 0.898-0.950 -> 0.746-0.788 /
0.484 -> 0.442, 64x32x8x8 -> 64x64x3x3 (KW 8) 0.800-0.809 -> 0.704 /
0.443 -> 0.387, the stem's 3x32x32x32 -> 3x32x3x3 (KW 32, 27 columns)
0.429-0.436 -> 0.415-0.432 / 0.393 -> 0.307; LeNet's conv1 dw (KW 24,
one image) 0.207-0.220 -> 0.172-0.186 / 0.207 -> 0.168, conv2 dw (KW 8)
0.199 -> 0.150 / 0.108 -> 0.091; f64, 1 thread (min of 100): 1.824 ->
1.686, 1.450 -> 1.446, 0.949 -> 0.922, 0.472 -> 0.386, 0.315 -> 0.294.
A full N tile's columns are all read
(its masks not selected per column: 32x32x16x16 0.770 -> 0.746-0.753,
64x32x8x8 0.738 -> 0.704).  Where its time goes
(32x32x16x16, perf): the register tiles 66% (~285 GFLOP/s: the FMA ports'
peak), the packing 18%, the rest the padding and the read back as NCHW;
dividing (c, ky, kx) out of every K step had cost the stem 1.17x the
im2col lowering's time.  Tried and dropped: the GEMM the other way round,
C^T = B^T W^T (the columns as the rows of a lhs block copied from the
images without transposes, read in place by the tiles; the weights'
panels transposed, O x K once per N tile): 32x32x16x16 0.786, 64x32x8x8
0.727, the stem 0.460, LeNet's conv1 dw 0.325 ms (its 6 output channels
a masked third of one vector).  Column dilation 2 (the stride-2 conv's weight
gradient, element by element) ran 1.09x the im2col lowering's time: left
to it (conv.py's CONVW_KERNEL_DILATIONS).
"""

from __future__ import annotations

import re

__all__ = ["conv_name", "conv_type", "conv_text", "conv_memref_type", "CONV_ELEMENT_TYPES",
           "convw_name", "convw_type"]

# (kernels.py's: this module imports nothing of it, which imports this one;
# ``conv_text`` gets its helpers from its caller)
KERNEL_PREFIX = "gradir_kernel_"
CONV_ELEMENT_TYPES = ("f32", "f64")


def _matrix_type(elt: str) -> str:
    """The matmul kernels' 2-D argument type (``kernels.memref_type``)."""
    return f"memref<?x?x{elt}, strided<[?, ?], offset: ?>>"


def conv_name(elt: str, var: str) -> str:
    """The symbol of the implicit-GEMM convolution kernel."""
    return f"{KERNEL_PREFIX}{var}_conv_{elt}"


def conv_memref_type(elt: str) -> str:
    """The images' and the output's argument type."""
    return f"memref<?x?x?x?x{elt}, strided<[?, ?, ?, ?], offset: ?>>"


def conv_type(elt: str) -> str:
    """The kernel's function type: W, X, Y, zero, then kh, kw, sh, sw, dh, dw."""
    t4 = conv_memref_type(elt)
    return f"({_matrix_type(elt)}, {t4}, {t4}, i1{', index' * 6}) -> ()"


def conv_text(var: str, params: dict, k) -> list[str]:
    """The kernels of variant ``var`` (lines of a module's body); ``params``
    per element type: (rows, lanes, nv, kb, mb) of the matmul kernels (whose
    tile functions they call); ``k``: the module ``kernels`` (its lhs packing,
    tile names and types)."""
    lines = []
    for elt in CONV_ELEMENT_TYPES:
        lines += _conv_driver(elt, *params[elt], var, k)
        lines += convw_driver(elt, *params[elt], var, k)
    return lines


def _head(elt: str, rows: int, lanes: int, nv: int, kb: int, mb: int, name: str, k,
          columns: list[str], extra: list[str] = (), round_k: bool = False) -> list[str]:
    """The kernels' start, up to an M block's register tiles (inside ``scf.for
    %kb`` over the K blocks, its rows' offsets ``%roff`` in an image, and
    ``scf.for %mb`` over the M blocks, the lhs block packed): ``columns``
    defines ``%N`` (the GEMM's columns, per call of the tiles' loop) and
    ``%manyw`` (the lhs is worth packing); ``extra`` runs before the K
    blocks; ``round_k``: K blocks a multiple of L long (at most kb)."""
    _lhs_block, _types = k._lhs_block, k._types
    PACK_A_TILES = k.PACK_A_TILES
    T, L = elt, lanes
    NR = nv * L
    AT, BT, VT, MT = _types(elt, lanes)
    XT = conv_memref_type(elt)
    APT = f"memref<?x{kb}x{rows}x{T}>"
    FT = f"memref<?x{T}>"
    meta = f"memref<{T}>, index, index, index, index, index, index, index, index, index"
    PS = (kb + L) * NR if round_k else kb * NR + L
    w = [f"  func.func @{name}(%A: {AT}, %X: {XT}, %Y: {XT}, %zc: i1, "
         "%kh: index, %kw: index, %sh: index, %sw: index, %dh: index, %dw: index"
         + ", %col0: index, %col1: index" * round_k + ") "
         "attributes {llvm.emit_c_interface} {",
         "    %c0 = arith.constant 0 : index",
         "    %c1 = arith.constant 1 : index",
         f"    %cMR = arith.constant {rows} : index",
         f"    %cNR = arith.constant {NR} : index",
         f"    %cKB = arith.constant {kb} : index",
         f"    %cMB = arith.constant {mb} : index",
         f"    %cL = arith.constant {L} : index",
         f"    %vz = arith.constant dense<0.0> : {VT}",
         f"    %M = memref.dim %A, %c0 : {AT}",
         f"    %K = memref.dim %A, %c1 : {AT}",
         f"    %xb, %xo, %xd:4, %xs:4 = memref.extract_strided_metadata %X : {XT} -> {meta}",
         f"    %yb, %yo, %yd:4, %ys:4 = memref.extract_strided_metadata %Y : {XT} -> {meta}",
         f"    %cPA = arith.constant {PACK_A_TILES * NR} : index"] + columns + [
         "    %kk2 = arith.muli %kh, %kw : index",
         # the image's rows apart by sh, columns by sw, flat from the base
         "    %rowstep = arith.muli %sh, %xs#2 : index",
         "    %colstep = arith.muli %sw, %xs#3 : index",
         "    %kystep = arith.muli %dh, %xs#2 : index",
         "    %kxstep = arith.muli %dw, %xs#3 : index",
         # a K step's offset from the last's across a kernel row / channel
         "    %kw1 = arith.subi %kw, %c1 : index",
         "    %kh1 = arith.subi %kh, %c1 : index",
         "    %rwx = arith.muli %kw1, %kxstep : index",
         "    %rwy = arith.muli %kh1, %kystep : index",
         "    %rdy = arith.subi %kystep, %rwx : index",
         "    %rdc0 = arith.subi %xs#1, %rwy : index",
         "    %rdc = arith.subi %rdc0, %rwx : index",
         "    %vecok = arith.cmpi eq, %colstep, %c1 : index",
         "    %c2 = arith.constant 2 : index",
         "    %vec2 = arith.cmpi eq, %colstep, %c2 : index",
         # the images' extent from the base: the last element's offset + 1
         # (any strides: the weight gradient's images are a transposed view)
         "    %xn0 = arith.subi %xd#0, %c1 : index",
         "    %xe0 = arith.muli %xn0, %xs#0 : index",
         "    %xn1 = arith.subi %xd#1, %c1 : index",
         "    %xe1 = arith.muli %xn1, %xs#1 : index",
         "    %xn2 = arith.subi %xd#2, %c1 : index",
         "    %xe2 = arith.muli %xn2, %xs#2 : index",
         "    %xn3 = arith.subi %xd#3, %c1 : index",
         "    %xe3 = arith.muli %xn3, %xs#3 : index",
         "    %xext0 = arith.addi %xe0, %xe1 : index",
         "    %xext1 = arith.addi %xext0, %xe2 : index",
         "    %xext2 = arith.addi %xext1, %xe3 : index",
         "    %xext3 = arith.addi %xext2, %xo : index",
         "    %xext = arith.addi %xext3, %c1 : index",
         f"    %Xf = memref.reinterpret_cast %xb to offset: [0], sizes: [%xext], strides: [1] "
         f": memref<{T}> to {FT}",
         "    %nkb0 = arith.ceildivsi %K, %cKB : index",
         "    %nkb = arith.maxsi %nkb0, %c1 : index",
         "    %kstep0 = arith.ceildivsi %K, %nkb : index",
         "    %kstep1 = arith.ceildivsi %kstep0, %cL : index",
         "    %kstep2 = arith.muli %kstep1, %cL : index",
         "    %kstep3 = arith.minsi %kstep2, %cKB : index",
         f"    %kstep = arith.maxsi {'%kstep3' if round_k else '%kstep0'}, %c1 : index",
         f"    %ab, %ao, %as:2, %at:2 = memref.extract_strided_metadata %A : {AT} -> "
         f"memref<{T}>, index, index, index, index, index",
         "    %aunit = arith.cmpi eq, %at#1, %c1 : index",
         "    %akunit = arith.cmpi eq, %at#0, %c1 : index",
         "    %aany = arith.ori %aunit, %akunit : i1",
         "    %packa = arith.andi %aany, %manyw : i1",
         f"    %At = memref.reinterpret_cast %ab to offset: [%ao], sizes: [%K, %M], "
         f"strides: [%at#1, 1] : memref<{T}> to {BT}",
         f"    %Au = memref.reinterpret_cast %ab to offset: [%ao], sizes: [%M, %K], "
         f"strides: [%at#0, 1] : memref<{T}> to {BT}",
         "    %mrows = arith.minsi %M, %cMB : index",
         "    %mtiles = arith.ceildivsi %mrows, %cMR : index",
         "    %atiles = arith.select %packa, %mtiles, %c0 : index",
         f"    %cAPS = arith.constant {kb * rows} : index",
         "    %apsz0 = arith.muli %atiles, %cAPS : index",
         "    %apsz = arith.addi %apsz0, %cL : index",
         f"    %apflat = memref.alloc(%apsz) {{alignment = 64 : i64}} : {FT}",
         f"    %apack = memref.reinterpret_cast %apflat to offset: [0], sizes: [%atiles, {kb}, "
         f"{rows}], strides: [{kb * rows}, {rows}, 1] : {FT} to {APT}",
         # the panel (K block x NR, flat: its runs are stored as masked vectors)
         f"    %pflat = memref.alloc() {{alignment = 64 : i64}} : memref<{PS}x{T}>",
         f"    %pf = memref.cast %pflat : memref<{PS}x{T}> to {FT}",
         f"    %packv = memref.reinterpret_cast %pflat to offset: [0], sizes: [{PS // NR}, {NR}], "
         f"strides: [{NR}, 1] : memref<{PS}x{T}> to {BT}",
         # a K block's rows' offsets in an image: (c, ky, kx) of k
         f"    %roff = memref.alloc() : memref<{kb}xindex>"] + list(extra) + [
         "    scf.for %kb = %c0 to %K step %kstep {",
         "      %krem = arith.subi %K, %kb : index",
         "      %kc = arith.minsi %krem, %kstep : index",
         "      %kfirst = arith.cmpi eq, %kb, %c0 : index",
         "      %first = arith.andi %zc, %kfirst : i1",
         # (c, ky, kx) of the block's first K step, then stepped along
         # (no divisions per K step: the stem's weight gradient has 32768)
         "      %rc = arith.divui %kb, %kk2 : index",
         "      %rr = arith.remui %kb, %kk2 : index",
         "      %ry0 = arith.divui %rr, %kw : index",
         "      %rx0 = arith.remui %rr, %kw : index",
         "      %ro0 = arith.muli %rc, %xs#1 : index",
         "      %ro1 = arith.muli %ry0, %kystep : index",
         "      %ro2 = arith.muli %rx0, %kxstep : index",
         "      %ro3 = arith.addi %ro0, %ro1 : index",
         "      %ro4 = arith.addi %ro3, %ro2 : index",
         "      %ros = arith.addi %ro4, %xo : index",
         "      %rf:3 = scf.for %rk = %c0 to %kc step %c1 iter_args(%ro = %ros, %ry = %ry0, "
         "%rx = %rx0) -> (index, index, index) {",
         "        %rx1 = arith.addi %rx, %c1 : index",
         "        %ry1 = arith.addi %ry, %c1 : index",
         "        %rxw = arith.cmpi eq, %rx1, %kw : index",
         "        %ryw = arith.cmpi eq, %ry1, %kh : index",
         "        %rox = arith.addi %ro, %kxstep : index",
         "        %roy = arith.addi %ro, %rdy : index",
         "        %roc = arith.addi %ro, %rdc : index",
         "        %roz = arith.select %ryw, %roc, %roy : index",
         "        %rnext = arith.select %rxw, %roz, %rox : index",
         "        %ryz = arith.select %ryw, %c0, %ry1 : index",
         "        %rynext = arith.select %rxw, %ryz, %ry : index",
         "        %rxnext = arith.select %rxw, %c0, %rx1 : index",
         f"        memref.store %ro, %roff[%rk] : memref<{kb}xindex>",
         "        scf.yield %rnext, %rynext, %rxnext : index, index, index",
         "      }",
         "      scf.for %mb = %c0 to %M step %cMB {",
         "        %mrem = arith.subi %M, %mb : index",
         "        %mc = arith.minsi %mrem, %cMB : index",
         "        %mend = arith.addi %mb, %mc : index",
         "        %packrows = arith.andi %packa, %aunit : i1",
         "        %packt = arith.andi %packa, %akunit : i1",
         "        scf.if %packt {"]
    w += _lhs_block(elt, lanes, rows, True)
    w += ["        }",
          "        scf.if %packrows {"]
    w += _lhs_block(elt, lanes, rows, False)
    w += ["        }",
          "        %mfull = arith.divui %mc, %cMR : index",
          "        %mrest = arith.remui %mc, %cMR : index",
          "        %mfrows = arith.muli %mfull, %cMR : index",
          "        %mtr = arith.addi %mb, %mfrows : index",
          "        %hasfull = arith.cmpi sgt, %mfull, %c0 : index"]
    return w


def _tile_calls(elt: str, rows: int, lanes: int, nv: int, kb: int, var: str, k,
                panel: tuple[str, str] = ("%packv", "%c0")) -> list[str]:
    """The register tiles of the N tile ``%nt`` (``%nr`` columns of ``%Cv``,
    its panel ``panel``: the view and its first K step) for the M block's
    rows: full width, more than one vector (the last masked), one vector,
    less than one (also the matmul kernel's: ``kernels._driver``)."""
    _tile_name, _types = k._tile_name, k._types
    T = elt
    AT, BT, _, _ = _types(elt, lanes)
    APT = f"memref<?x{kb}x{rows}x{T}>"
    targs = f"{AT}, index, index, {BT}, index, {BT}, index, index, index, index, i1, index"
    w = ["            %wide = arith.cmpi sgt, %nr, %cL : index",
          "            %onev = arith.cmpi eq, %nr, %cL : index",
          "            %kind = arith.select %full, %c0, %c1 : index",
          "            %c2i = arith.constant 2 : index",
          "            %c3i = arith.constant 3 : index",
          "            %kind1 = arith.select %onev, %c2i, %c3i : index",
          "            %kind2 = arith.select %wide, %kind, %kind1 : index",
          "            scf.index_switch %kind2"]
    ptargs = targs.replace(AT, APT, 1)
    for case, (tnv, masked) in enumerate(((nv, False), (nv, True), (1, False), (1, True))):
        w += [f"            case {case} {{", "              scf.if %packa {"]
        for packed in (True, False):
            def call(r: int, first: tuple, cnt: str) -> str:
                args = (f"%apack, {first[0]}, %c0, {panel[0]}, {panel[1]}, %Cv, {first[1]}, %nt, "
                        f"%kc, %nr, %first, {cnt}) : ({ptargs})" if packed else
                        f"%A, {first[1]}, %kb, {panel[0]}, {panel[1]}, %Cv, {first[1]}, %nt, "
                        f"%kc, %nr, %first, {cnt}) : ({targs})")
                return f"func.call @{_tile_name(T, r, tnv, masked, packed, var)}({args} -> ()"
            w += ["              scf.if %hasfull {",
                  "                " + call(rows, ("%c0", "%mb"), "%mfull"),
                  "              }"]
            if rows > 1:
                w += ["              scf.index_switch %mrest"]
                for r in range(rows - 1, 0, -1):
                    w += [f"              case {r} {{",
                          "                " + call(r, ("%mfull", "%mtr"), "%c1"),
                          "                scf.yield", "              }"]
                w += ["              default {", "              }"]
            if packed:
                w.append("              } else {")
        w += ["              }", "              scf.yield", "            }"]
    return w + ["            default {", "            }"]


def _conv_driver(elt: str, rows: int, lanes: int, nv: int, kb: int, mb: int,
                 var: str, k) -> list[str]:
    T, L = elt, lanes
    NR = nv * L
    AT, BT, VT, MT = k._types(elt, lanes)
    FT = f"memref<?x{T}>"
    columns = ["    %OW = arith.addi %yd#3, %c0 : index",
               "    %N = arith.muli %yd#2, %yd#3 : index",
               "    %manyn = arith.cmpi sgt, %N, %cPA : index",
               "    %nimg = arith.cmpi sgt, %xd#0, %c1 : index",
               "    %manyw = arith.ori %manyn, %nimg : i1"]
    w = _head(elt, rows, lanes, nv, kb, mb, conv_name(elt, var), k, columns)
    w += ["        scf.for %img = %c0 to %xd#0 step %c1 {",
          "          %xi = arith.muli %img, %xs#0 : index",
          "          %yi0 = arith.muli %img, %ys#0 : index",
          "          %yi = arith.addi %yi0, %yo : index",
          f"          %Cv = memref.reinterpret_cast %yb to offset: [%yi], sizes: [%M, %N], "
          f"strides: [%ys#1, 1] : memref<{T}> to {BT}",
          "          scf.for %nt = %c0 to %N step %cNR {",
          "            %nrem = arith.subi %N, %nt : index",
          "            %nr = arith.minsi %nrem, %cNR : index",
          "            %full = arith.cmpi eq, %nr, %cNR : index",
          "            %nend = arith.addi %nt, %nr : index",
          "            %nlast = arith.subi %nend, %c1 : index",
          "            %g0 = arith.divui %nt, %OW : index",
          "            %g1 = arith.divui %nlast, %OW : index",
          "            %g2 = arith.addi %g1, %c1 : index",
          # the tile's columns, output row by output row: a run of pixels
          "            scf.for %g = %g0 to %g2 step %c1 {",
          "              %gs = arith.muli %g, %OW : index",
          "              %ge = arith.addi %gs, %OW : index",
          "              %p0 = arith.maxsi %nt, %gs : index",
          "              %p1 = arith.minsi %nend, %ge : index",
          "              %plen = arith.subi %p1, %p0 : index",
          "              %pcol = arith.subi %p0, %nt : index",
          "              %pox = arith.subi %p0, %gs : index",
          "              %poy = arith.muli %g, %rowstep : index",
          "              %pox1 = arith.muli %pox, %colstep : index",
          "              %poff0 = arith.addi %poy, %pox1 : index",
          "              %poff = arith.addi %poff0, %xi : index",
          "              scf.if %vecok {",
          "                scf.for %q = %c0 to %plen step %cL {",
          "                  %qrem = arith.subi %plen, %q : index",
          "                  %ql = arith.minsi %qrem, %cL : index",
          f"                  %qm = vector.create_mask %ql : {MT}",
          "                  %qs = arith.addi %poff, %q : index",
          "                  %qd = arith.addi %pcol, %q : index",
          "                  scf.for %pk = %c0 to %kc step %c1 {",
          f"                    %pr = memref.load %roff[%pk] : memref<{kb}xindex>",
          "                    %pa = arith.addi %pr, %qs : index",
          f"                    %pv = vector.maskedload %Xf[%pa], %qm, %vz : {FT}, {MT}, {VT} "
          f"into {VT}",
          "                    %pd0 = arith.muli %pk, %cNR : index",
          "                    %pd = arith.addi %pd0, %qd : index",
          f"                    vector.maskedstore %pf[%pd], %qm, %pv : {FT}, {MT}, {VT}",
          "                  }",
          "                }",
          "              } else {",
          "              scf.if %vec2 {"]
    # column step 2: 2L contiguous elements (two masked vectors, up to the
    # run's last element) and their even lanes (one shuffle)
    even = ", ".join(str(2 * i) for i in range(L))
    w += ["                scf.for %q = %c0 to %plen step %cL {",
          "                  %qrem = arith.subi %plen, %q : index",
          "                  %ql = arith.minsi %qrem, %cL : index",
          f"                  %qm = vector.create_mask %ql : {MT}",
          "                  %qn0 = arith.addi %ql, %ql : index",
          "                  %qn = arith.subi %qn0, %c1 : index",
          "                  %qnl = arith.minsi %qn, %cL : index",
          "                  %qnh0 = arith.subi %qn, %qnl : index",
          f"                  %qml = vector.create_mask %qnl : {MT}",
          f"                  %qmh = vector.create_mask %qnh0 : {MT}",
          "                  %qs1 = arith.addi %q, %q : index",
          "                  %qs = arith.addi %poff, %qs1 : index",
          "                  %qd = arith.addi %pcol, %q : index",
          "                  scf.for %pk = %c0 to %kc step %c1 {",
          f"                    %pr = memref.load %roff[%pk] : memref<{kb}xindex>",
          "                    %pa = arith.addi %pr, %qs : index",
          "                    %pah = arith.addi %pa, %cL : index",
          f"                    %pvl = vector.maskedload %Xf[%pa], %qml, %vz : {FT}, {MT}, {VT} "
          f"into {VT}",
          f"                    %pvh = vector.maskedload %Xf[%pah], %qmh, %vz : {FT}, {MT}, {VT} "
          f"into {VT}",
          f"                    %pv = vector.shuffle %pvl, %pvh [{even}] : {VT}, {VT}",
          "                    %pd0 = arith.muli %pk, %cNR : index",
          "                    %pd = arith.addi %pd0, %qd : index",
          f"                    vector.maskedstore %pf[%pd], %qm, %pv : {FT}, {MT}, {VT}",
          "                  }",
          "                }",
          "              } else {",
          "                scf.for %q = %c0 to %plen step %c1 {",
          "                  %qs0 = arith.muli %q, %colstep : index",
          "                  %qs = arith.addi %poff, %qs0 : index",
          "                  %qd = arith.addi %pcol, %q : index",
          "                  scf.for %pk = %c0 to %kc step %c1 {",
          f"                    %pr = memref.load %roff[%pk] : memref<{kb}xindex>",
          "                    %pa = arith.addi %pr, %qs : index",
          f"                    %pv = memref.load %Xf[%pa] : {FT}",
          "                    %pd0 = arith.muli %pk, %cNR : index",
          "                    %pd = arith.addi %pd0, %qd : index",
          f"                    memref.store %pv, %pf[%pd] : {FT}",
          "                  }",
          "                }",
          "              }",
          "              }",
          "            }",]
    w += _tile_calls(elt, rows, lanes, nv, kb, var, k)
    return w + ["          }", "        }", "      }", "    }",
                f"    memref.dealloc %roff : memref<{kb}xindex>",
                f"    memref.dealloc %pflat : memref<{kb * NR + L}x{T}>",
                f"    memref.dealloc %apflat : {FT}",
                "    return", "  }"]


def convw_type(elt: str) -> str:
    """The weight gradient kernel's function type: ``conv_type``'s, then the
    columns it computes, [col0, col1) of the N*OH*OW (the threads' shares)."""
    return conv_type(elt).replace(") -> ()", ", index, index) -> ()")


def convw_name(elt: str, var: str) -> str:
    """The symbol of the weight gradient's implicit-GEMM kernel (its type
    is ``conv_kernels.conv_type``'s)."""
    return f"{KERNEL_PREFIX}{var}_wgrad_conv_{elt}"


def convw_driver(elt: str, rows: int, lanes: int, nv: int, kb: int, mb: int,
                 var: str, k) -> list[str]:
    """The weight gradient's kernel (the module's docstring): ``_head``'s
    K and M blocks, then per N tile of the columns of every image its panel
    (L x L blocks transposed in registers, a masked load per kernel row run
    a chunk of L K steps meets) and ``_tile_calls``."""
    T, L = elt, lanes
    NR = nv * L
    _, BT, VT, MT = k._types(elt, lanes)
    FT = f"memref<?x{T}>"
    XT = f"vector<{L}x{L}x{T}>"
    BM = f"vector<{L}xi1>"
    PS = (kb + L) * NR
    columns = ["    %P = arith.muli %yd#2, %yd#3 : index",
               "    %N = arith.muli %yd#1, %P : index",
               "    %ncols = arith.subi %col1, %col0 : index",
               "    %manyw = arith.cmpi sgt, %ncols, %cPA : index"]
    # the columns' base offsets in the images: (n, oy, ox)
    extra = ["    %coff = memref.alloc(%N) : memref<?xindex>",
             "    scf.for %cc = %col0 to %col1 step %c1 {",
             "      %cn = arith.divui %cc, %P : index",
             "      %cp = arith.remui %cc, %P : index",
             "      %cy = arith.divui %cp, %yd#3 : index",
             "      %cx = arith.remui %cp, %yd#3 : index",
             "      %co0 = arith.muli %cn, %xs#0 : index",
             "      %co1 = arith.muli %cy, %rowstep : index",
             "      %co2 = arith.muli %cx, %colstep : index",
             "      %co3 = arith.addi %co0, %co1 : index",
             "      %co = arith.addi %co3, %co2 : index",
             "      memref.store %co, %coff[%cc] : memref<?xindex>",
             "    }",
             "    %kvec = arith.cmpi eq, %kxstep, %c1 : index",
             f"    %Cv = memref.reinterpret_cast %yb to offset: [%yo], sizes: [%M, %N], "
             f"strides: [%ys#0, 1] : memref<{T}> to {BT}"]
    w = _head(elt, rows, lanes, nv, kb, mb, convw_name(elt, var), k, columns, extra,
              round_k=True)
    ind = "              "
    w += ["        scf.for %nt = %col0 to %col1 step %cNR {",
          "            %nrem = arith.subi %col1, %nt : index",
          "            %nr = arith.minsi %nrem, %cNR : index",
          "            %full = arith.cmpi eq, %nr, %cNR : index",
          "            scf.if %kvec {"]
    start = len(w)
    w += [f"{ind}%xz = arith.constant dense<0.0> : {XT}",
          f"{ind}%mnone = arith.constant dense<false> : {BM}",
          f"{ind}%mall = arith.constant dense<true> : {BM}",
          f"{ind}scf.for %k0 = %c0 to %kc step %cL {{",
          f"{ind}  %kr0 = arith.subi %kc, %k0 : index",
          f"{ind}  %klen = arith.minsi %kr0, %cL : index",
          f"{ind}  %kk0 = arith.addi %kb, %k0 : index",
          # the runs the chunk meets: s = 0 .. ceil((j0 + klen) / kw)
          f"{ind}  %j0 = arith.remui %kk0, %kw : index",
          f"{ind}  %jn0 = arith.addi %j0, %klen : index",
          f"{ind}  %nseg = arith.ceildivui %jn0, %kw : index"]
    for jb in range(nv):
        for j in range(L):
            t = f"{jb}_{j}"
            w += [f"{ind}  %tj{t} = arith.constant {jb * L + j} : index",
                  f"{ind}  %tv{t} = TV",
                  f"{ind}  %tc{t} = arith.addi %nt, %tj{t} : index",
                  # (a column past N is never read: its masks are empty; its
                  # offset is the tile's first column's all the same)
                  f"{ind}  %ts{t} = arith.select %tv{t}, %tc{t}, %nt : index",
                  f"{ind}  %tb{t} = memref.load %coff[%ts{t}] : memref<?xindex>"]
        types = ", ".join([VT] * L)

        def seg(sidx: str, ins: list[str], x: str, pad: str) -> tuple[list[str], list[str]]:
            """Run ``sidx`` of the chunk into the vectors ``ins`` (lanes
            [a, b) of the chunk are the run's); names suffixed ``x``."""
            i2 = ind + pad
            lines = [f"{i2}%sa0{x} = arith.muli {sidx}, %kw : index",
                     f"{i2}%sa1{x} = arith.subi %sa0{x}, %j0 : index",
                     f"{i2}%sa{x} = arith.maxsi %sa1{x}, %c0 : index",
                     f"{i2}%sb0{x} = arith.addi %sa1{x}, %kw : index",
                     f"{i2}%sb{x} = arith.minsi %sb0{x}, %klen : index",
                     f"{i2}%smb{x} = vector.create_mask %sb{x} : {MT}",
                     f"{i2}%sma{x} = vector.create_mask %sa{x} : {MT}",
                     f"{i2}%smn{x} = arith.xori %sma{x}, %mall : {BM}",
                     f"{i2}%sm{x} = arith.andi %smb{x}, %smn{x} : {BM}",
                     f"{i2}%sk{x} = arith.addi %k0, %sa{x} : index",
                     f"{i2}%sr{x} = memref.load %roff[%sk{x}] : memref<{kb}xindex>",
                     f"{i2}%so{x} = arith.subi %sr{x}, %sa{x} : index"]
            outs = []
            for j in range(L):
                t = f"{jb}_{j}{x}"
                c = f"{jb}_{j}"
                lines += [f"{i2}%sm{t} = arith.select %tv{c}, %sm{x}, %mnone : {BM}",
                          f"{i2}%sp{t} = arith.addi %tb{c}, %so{x} : index",
                          f"{i2}%sv{t} = vector.maskedload %Xf[%sp{t}], %sm{t}, {ins[j]} : "
                          f"{FT}, {MT}, {VT} into {VT}"]
                outs.append(f"%sv{t}")
            return lines, outs
        # the first run, the second (KW under L, or a chunk across two
        # runs), then any others
        body, v0 = seg("%c0", ["%vz"] * L, f"f{jb}", "  ")
        w += body
        body, v1 = seg("%c1", v0, f"g{jb}", "    ")
        w += [f"{ind}  %two{jb} = arith.cmpi sgt, %nseg, %c1 : index",
              f"{ind}  %tw{jb}:{L} = scf.if %two{jb} -> ({types}) {{"] + body
        w += [f"{ind}    scf.yield {', '.join(v1)} : {types}",
              f"{ind}  }} else {{",
              f"{ind}    scf.yield {', '.join(v0)} : {types}",
              f"{ind}  }}"]
        iters = ", ".join(f"%tr{jb}_{j} = %tw{jb}#{j}" for j in range(L))
        body, v2 = seg("%s", [f"%tr{jb}_{j}" for j in range(L)], f"h{jb}", "    ")
        w += [f"{ind}  %tl{jb}:{L} = scf.for %s = %c2 to %nseg step %c1 iter_args({iters}) "
              f"-> ({types}) {{"] + body + [
              f"{ind}    scf.yield {', '.join(v2)} : {types}", f"{ind}  }}"]
        prev = "%xz"
        for j in range(L):
            w.append(f"{ind}  %tx{jb}_{j} = vector.insert %tl{jb}#{j}, {prev} [{j}] : "
                     f"{VT} into {XT}")
            prev = f"%tx{jb}_{j}"
        w.append(f"{ind}  %tt{jb} = vector.transpose {prev}, [1, 0] : {XT} to {XT}")
        for i in range(L):
            w += [f"{ind}  %te{jb}_{i} = vector.extract %tt{jb}[{i}] : {VT} from {XT}",
                  f"{ind}  %tk{jb}_{i} = arith.addi %k0, %tj0_{i} : index",
                  f"{ind}  %tq{jb}_{i} = arith.constant {jb * L} : index",
                  f"{ind}  vector.store %te{jb}_{i}, %packv[%tk{jb}_{i}, %tq{jb}_{i}] : "
                  f"{BT}, {VT}"]
    w.append(f"{ind}}}")
    # a full tile's columns all read (its masks not selected per column),
    # the others' up to %nr
    panel = w[start:]
    del w[start:]
    w += ["              scf.if %full {"]
    w += ["  " + ln.replace("TV", "arith.constant true") for ln in panel]
    w += ["              } else {"]
    w += ["  " + re.sub(r"%tv(\w+) = TV", r"%tv\1 = arith.cmpi slt, %tj\1, %nr : index", ln)
          for ln in panel]
    w += ["              }",
          "            } else {",
          f"{ind}%fz = arith.constant 0.0 : {T}",
          f"{ind}scf.for %k = %c0 to %kc step %c1 {{",
          f"{ind}  %er = memref.load %roff[%k] : memref<{kb}xindex>",
          f"{ind}  scf.for %j = %c0 to %cNR step %c1 {{",
          f"{ind}    %inb = arith.cmpi slt, %j, %nr : index",
          f"{ind}    %val = scf.if %inb -> ({T}) {{",
          f"{ind}      %nj = arith.addi %nt, %j : index",
          f"{ind}      %eb = memref.load %coff[%nj] : memref<?xindex>",
          f"{ind}      %ea = arith.addi %eb, %er : index",
          f"{ind}      %x = memref.load %Xf[%ea] : {FT}",
          f"{ind}      scf.yield %x : {T}",
          f"{ind}    }} else {{",
          f"{ind}      scf.yield %fz : {T}",
          f"{ind}    }}",
          f"{ind}    memref.store %val, %packv[%k, %j] : {BT}",
          f"{ind}  }}",
          f"{ind}}}",
          "            }"]
    w += _tile_calls(elt, rows, lanes, nv, kb, var, k)
    return w + ["        }", "      }", "    }",
                "    memref.dealloc %coff : memref<?xindex>",
                f"    memref.dealloc %roff : memref<{kb}xindex>",
                f"    memref.dealloc %pflat : memref<{PS}x{T}>",
                f"    memref.dealloc %apflat : {FT}",
                "    return", "  }"]
