"""The CPU schedule for a target: register tiles, K blocks and vector widths
derived from a ``CpuTarget``, instantiated from ``cpu_schedule.mlir.in``.

    params = schedule_params(resolve("x86-64-v3"))   # f32 6x16 (AVX2: 16 ymm)
    text = schedule_text(params)                      # a transform-dialect module
    path = schedule_path(params)                      # that text as a file, for
                                                      # transform-preload-library

Register tiles (M x N, N a multiple of the vector lanes): the accumulator
tile is ``M * N / lanes`` vector registers, one row of the rhs ``N / lanes``
more, plus one broadcast lhs element, and must fit the register file.
32 registers (AVX-512, NEON): 8 rows of two vectors (f32 8x32 / f64 8x16
on AVX-512, 8x8 / 8x4 on NEON).  16 registers (AVX2): rows of two vectors,
``AVX2_ROWS`` of them (measured with bench/cpu.py's GEMM comparison: 8 rows
spill).  The K block keeps the rhs panel (K block x N elements) within 3/4
of the L1 data cache, at most 256 (measured on AVX-512).

Measurements behind the numbers (AMD EPYC Zen 5, 2 shared cores, one
thread; test/conversion/Inputs/gemm_bench.py and bench/cpu.py): AVX-512 f32
6x64 was faster on 512^3 alone but pads M=64/784 (copies); 8x32 divides the
usual sizes.  AVX2 (cpu=x86-64-v3 on that machine), median GFLOP/s of
4 rows / 6 rows, twice each, load average ~5: f32 256^3 98/115, 512^3
86/114, 1024^3 37/54; f64 256^3 50/58, 512^3 18/23, 1024^3 18/23.  6 rows
pads M to a multiple of 6 (a copy, whose cost varies from call to call)
and still wins at every size; 8 rows (spilling) was no better than 6.

Packing (issue 14, GEMM at BLAS speed): a matmul with at least
``PACK_ROWS`` rows and more columns than one register tile copies
the rhs panel of each (K block, N tile) into a contiguous buffer before its
M tiles read it (the panel's rows are N elements apart in place: a K block
of them falls into a few L1 sets and evicts itself), inside M blocks of
``_m_block`` rows (the lhs block, rows x K block, within 3/8 of L2).
Measured (test/conversion/Inputs/gemm_bench.py, one thread, f32 GFLOP/s,
min of 30, AMD EPYC Zen 5, load average 2-3): AVX2 512^3 / 1024^3 118 / 68
before, 124 / 120 packed, 125 / 125 packed in 384-row M blocks (48- and
96-row blocks: 105-115, the panels packed too often); AVX-512 232 / 122
before, 232 / 212 packed, 240 / 228 in 384-row blocks.  K blocks of 512
instead of 256 (AVX2) were no better.  Below ``PACK_ROWS`` the copy costs
more than it saves (x @ W, 784x512 W, AVX-512: 64 rows 269-282 us packed,
249-256 in place; 128-256 rows the same; lhs^T @ dy with K = 64 and 512
rows: 190 packed, 211 in place; 512^3: 1118-1134 / 1189-1237).

Every generated symbol ends in the parameters' ``tag`` ("" for the AVX-512
instance, which is ``cpu_schedule.mlir`` itself), so schedules for several
targets can be preloaded into one MLIR context.
"""

from __future__ import annotations

import os
import re
import string
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from .host import CpuTarget, resolve

__all__ = ["ScheduleParams", "AVX2_ROWS", "DEFAULT", "SCHEDULE_LIBRARY", "TEMPLATE",
           "schedule_params", "schedule_text", "schedule_path", "without_matmuls"]

_HERE = Path(__file__).resolve().parent
TEMPLATE = _HERE / "cpu_schedule.mlir.in"
SCHEDULE_LIBRARY = _HERE / "cpu_schedule.mlir"

# Rows of the register tile with 16 vector registers (two vectors per row:
# 2 * rows accumulators + 2 rhs vectors + 1 broadcast <= 16).
AVX2_ROWS = 6

# A matmul packs its rhs panels when it has at least this many rows (each
# panel read by that many rows pays for its copy; measured: 64 to 192 rows
# ran 5-10% slower packed, 256 the same, 512 and more faster).
PACK_ROWS = 256

# threads > 1: a matmul whose rhs is a transpose and that has fewer rows
# than this runs in strips of one register tile, each transposing its
# columns of W^T from W, before the per-thread strips (which materialize
# W^T) are considered.  Measured (2 threads, AMD EPYC Zen 5, AVX-512, us,
# per-thread strips -> fused strips): 256x512 @ (512x512)^T 420 -> 345,
# 384 rows 560 -> 480, 512 rows 700 -> 650, 768 rows 1010 -> 935; 1024^3
# 5.4-5.6 -> 4.8-5.5 ms.
RHS_T_STRIP_ROWS = 2048

# A transposed rhs W (N x K) is transposed panel by panel inside the matmul
# only when N and K are both at least this (below, the fused transposes'
# code costs more compile time than it saves: LeNet-5's dense layers
# 120/84/10 wide, +28 ms in the transform interpreter, run time the same).
RHS_T_MIN = 128

# threads > 1 (issue 14, GEMM at BLAS speed on every core): a packed matmul
# with at least one register tile per thread runs in one column strip per
# thread: N, padded to a multiple of the register tile's width (as with one
# thread), is split after its largest multiple of ``threads`` tiles, which
# the threads share in ``threads`` equal strips; the rest (fewer than
# ``threads`` tiles) runs in strips of one tile.  Each strip runs the
# single-threaded packed schedule (K blocks, M blocks, the strip's N tiles),
# so a thread streams the lhs block of a K block once for its whole strip.
# Measured (GEMM 1024^3 f32 at 2 threads, AMD EPYC Zen 5, AVX2 / x86-64-v3,
# OpenBLAS Haswell): strips of one tile 8.85 ms (numpy 0.87x), one strip per
# thread 0.98-1.02x (see README).  Schedules for several thread counts
# differ, so the thread count is one of the parameters (and of the tag).
# The parallel entry point of a ``threads=1`` instance (the thread count
# unknown, e.g. ``cpu_schedule.mlir`` for mlir-opt) uses strips of one tile.


@dataclass(frozen=True)
class ScheduleParams:
    f32_m: int = 8
    f32_n: int = 32
    f32_k: int = 256
    f64_m: int = 8
    f64_n: int = 16
    f64_k: int = 256
    transpose: int = 16
    f32_mb: int = 384
    f64_mb: int = 192
    registers: int = 32
    bits: int = 512
    target: str = "AVX-512 (x86-64-v4 and later)"
    threads: int = 1
    # False: the instance without the matmul sequences (``without_matmuls``),
    # for programs with no matmul left for the schedule
    matmuls: bool = True

    @property
    def tag(self) -> str:
        """Suffix of every symbol of the schedule ("" for the AVX-512
        instance at one thread; ``_p<threads>`` ends the tag of a
        multi-threaded instance, then ``_nm`` that of an instance without
        matmuls: both instances can be preloaded into one context)."""
        threads = f"_p{self.threads}" if self.threads > 1 else ""
        threads += "" if self.matmuls else "_nm"
        if self.tiles == DEFAULT.tiles:
            return threads
        return (f"_f32_{self.f32_m}x{self.f32_n}k{self.f32_k}"
                f"_f64_{self.f64_m}x{self.f64_n}k{self.f64_k}_t{self.transpose}"
                f"_mb{self.f32_mb}x{self.f64_mb}{threads}")

    def without_matmuls(self) -> "ScheduleParams":
        """These parameters for a program with no matmul for the schedule."""
        return replace(self, matmuls=False)

    def for_threads(self, threads: int) -> "ScheduleParams":
        """These parameters for code running on ``threads`` threads."""
        return replace(self, threads=max(int(threads), 1))

    @property
    def tiles(self) -> tuple:
        return (self.f32_m, self.f32_n, self.f32_k, self.f64_m, self.f64_n, self.f64_k,
                self.transpose, self.f32_mb, self.f64_mb)

    @property
    def entry_point(self) -> str:
        return "gradir_cpu_tensor" + self.tag

    @property
    def parallel_entry_point(self) -> str:
        """The entry point of the multi-threaded pipeline (threads > 1)."""
        return "gradir_cpu_tensor_parallel" + self.tag

    @property
    def elementwise_entry_point(self) -> str:
        return "gradir_cpu_elementwise" + self.tag

    @property
    def generalize_entry_point(self) -> str:
        return "gradir_cpu_generalize" + self.tag


DEFAULT = ScheduleParams()


def _k_block(l1d: int, n: int, elt_bytes: int) -> int:
    k = 256
    while k > 32 and k * n * elt_bytes > 3 * l1d // 4:
        k //= 2
    return k


# The L2 size the M block follows, at most (see ``_m_block``).
M_BLOCK_L2_CAP = 1 << 20


def _m_block(l2: int, m: int, k: int, elt_bytes: int) -> int:
    """Rows of the lhs block that the rhs panels of a K block are packed for:
    a multiple of the register tile's rows whose block (rows x K block)
    fills at most 3/8 of the L2 cache, counted as at most 1 MiB.

    The cap (measured, test/conversion/Inputs/gemm_bench.py, one thread,
    f32, min of 20): on an Intel Xeon with 2 MiB of L2 per core (AVX-512,
    AMX), the uncapped 768-row blocks ran GEMM 1024^3 at 156 GFLOP/s
    (AVX-512) and 92-96 (x86-64-v3), 384-row blocks at 183 and 107-111
    (numpy 199 / 120), 1000^3 and 512^3 the same either way; on the AMD
    EPYC Zen 5 of the measurements above (1 MiB of L2) the formula gives
    384 rows, its best."""
    return m * max(1, (3 * min(l2, M_BLOCK_L2_CAP) // 8) // (k * elt_bytes * m))


def _tile(target: CpuTarget, bits: int) -> tuple[int, int]:
    lanes = max(target.lanes(bits), 1)
    vectors = 2
    rows = 8 if target.vector_registers >= 32 else AVX2_ROWS
    while rows > 1 and rows * vectors + vectors + 1 > target.vector_registers:
        rows -= 1
    return rows, vectors * lanes


def schedule_params(target: CpuTarget | str = "host", threads: int = 1) -> ScheduleParams:
    """The schedule's parameters for ``target`` (a CpuTarget or a cpu name)
    and code running on ``threads`` threads."""
    target = resolve(target)
    m32, n32 = _tile(target, 32)
    m64, n64 = _tile(target, 64)
    transpose = 16 if target.lanes(32) >= 16 else max(target.lanes(32), 4)
    k32, k64 = _k_block(target.l1d, n32, 4), _k_block(target.l1d, n64, 8)
    return ScheduleParams(m32, n32, k32, m64, n64, k64, transpose,
                          _m_block(target.l2, m32, k32, 4), _m_block(target.l2, m64, k64, 8),
                          target.vector_registers, target.vector_bits,
                          f"{target.name} ({target.isa})", max(int(threads), 1))


_ELEMENTWISE_RANKS = (1, 2, 3, 4)
# threads > 1: vector steps per chunk of a rank-1 elementwise loop's
# scf.forall (64 steps of two vectors: 4096 f32 elements on AVX-512)
ELEMENTWISE_CHUNK = 64
_ELEMENTWISE_BITS = (32, 64)


def _elementwise_sequences(params: ScheduleParams) -> tuple[str, str]:
    """Matchers and actions for elementwise generics, one pair per rank and
    element bitwidth (transform tile sizes have one entry per loop), and the
    lines that enter them into the entry point's foreach_match."""
    tag = params.tag
    seqs, matches = [], []
    for bw in _ELEMENTWISE_BITS:
        # two vector registers per step: ~10% faster than one on exp/log/tanh
        # over 2^20 f32 (bench/cpu_math.py, AVX-512), the same elsewhere
        lanes = 2 * max(params.bits // bw, 1)
        for rank in _ELEMENTWISE_RANKS:
            name = f"elementwise_r{rank}_{bw}{tag}"
            sizes = ", ".join(["1"] * (rank - 1) + [str(lanes)])
            loops = ", ".join(["!transform.any_op"] * rank)
            strips, tiled = "", "%g"
            if params.threads > 1:
                # issue 14, every core: an scf.forall over the rows (every
                # dim but the innermost, one each) or, rank 1, chunks of
                # ELEMENTWISE_CHUNK vector steps; rlx-parallel-loops runs it
                # on the threads when it has the work (else a plain loop)
                outer = (", ".join(["1"] * (rank - 1) + ["0"]) if rank > 1
                         else str(ELEMENTWISE_CHUNK * lanes))
                strips = (f"\n      %strip, %forall = transform.structured.tile_using_forall %g "
                          f"tile_sizes [{outer}] : (!transform.any_op) -> "
                          f"(!transform.any_op, !transform.any_op)")
                tiled = "%strip"
            vectorize = (f"\n      transform.structured.vectorize %t vector_sizes [{sizes}] : "
                         f"!transform.any_op")
            if params.threads > 1 and rank == 1:
                # the last chunk has a dynamic size: its steps peeled (full
                # vectors, then one masked step) as every other chunk's
                vectorize = (f"\n      %lp = transform.cast %l#0 : !transform.any_op to "
                             f"!transform.op<\"scf.for\">"
                             f"\n      transform.include @peel{tag} failures(suppress) (%lp) : "
                             f"(!transform.op<\"scf.for\">) -> ()"
                             f"\n      %ts = transform.structured.match ops{{[\"linalg.generic\"]}} "
                             f"in %forall : (!transform.any_op) -> !transform.any_op"
                             f"\n      transform.structured.vectorize %ts vector_sizes [{sizes}] : "
                             f"!transform.any_op")
            nonzero = "".join(
                f"      %d{i} = transform.match.structured.dim %s[{i}] : (!transform.any_op) -> "
                f"!transform.param<i64>\n"
                f"      transform.match.param.cmpi gt %d{i}, %z : !transform.param<i64>\n"
                for i in range(rank))
            seqs.append(f"""
  transform.named_sequence @match_{name}(%op: !transform.any_op {{transform.readonly}}) -> !transform.any_op {{
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    %0 = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {{
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %r = transform.param.constant {rank} : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %r : !transform.param<i64>
      // (after the rank check: dim[all] asserts on a rank-0 op)
      transform.match.structured.dim %s[all] {{parallel}} : !transform.any_op
      // no zero-size loop (vectorizing one asserts upstream)
      %z = transform.param.constant 0 : i64 -> !transform.param<i64>
{nonzero}      // the innermost loop spans at least one step of the tile: shorter rows
      // (LeNet's 24-, 12- and 8-wide images, often strided views) vectorize
      // into masked partial vectors that run slower than the scalar loop
      %lanes = transform.param.constant {lanes} : i64 -> !transform.param<i64>
      %inner = transform.match.structured.dim %s[{rank - 1}] : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %inner, %lanes : !transform.param<i64>
      // at least one input (input[all] asserts on none), indexed by projected
      // permutations only (tiling asserts on (d0) -> (-d0 + c))
      %ins = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi gt %ins, %z : !transform.param<i64>
      transform.match.structured.input %s[all] {{projected_permutation}} : !transform.any_op
      transform.match.structured.init %s[all] {{permutation}} : !transform.any_op
      %init = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init : (!transform.any_value) -> !transform.param<i64>
      %b = transform.param.constant {bw} : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %b : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }}
    transform.yield %op : !transform.any_op
  }}

  transform.named_sequence @schedule_{name}(%op: !transform.any_op {{transform.consumed}}) {{
    transform.sequence %op : !transform.any_op failures(suppress) {{
    ^bb0(%g: !transform.any_op):{strips}
      %t, %l:{rank} = transform.structured.tile_using_for {tiled} tile_sizes [{sizes}] : (!transform.any_op) -> (!transform.any_op, {loops}){vectorize}
    }}
    transform.yield
  }}
""")
            matches.append(f"@match_{name} -> @schedule_{name}")
    if params.threads == 1:
        seqs_r, matches_r = _lane_reduction_matchers(params)
        seqs += seqs_r
        matches += matches_r
    return "".join(seqs), ",\n        ".join(matches)


# Reductions whose innermost loop is parallel (rlx-to-linalg's lanes: sums
# as [blocks, rows, 16 lanes], max/min as [rows, 32 lanes], with what fusion
# put in them, e.g. log-sum-exp's exp) get the elementwise schedule: tiled
# to one step of two vectors along the lanes, every other loop by one, and
# vectorized (the tiled reduction axes have size one, so the body stays
# elementwise on vectors; the accumulator row is then hoisted out of the
# reduction loop, LANE_HOIST, in these loops only: hoisting in every loop
# moved matmul tiles into buffers).  LLVM had vectorized them alone with the
# accumulators loaded and stored each row and the fused math scalar-cost:
# GradBench lse n=1280000 f64 1.08 -> 0.90 ms, n=80000 0.068 -> 0.062 ms
# (one thread, AMD EPYC Zen 5, paired runs; the same bits).  One thread only
# (the parallel schedule's strips are elementwise).
_LANE_RANKS = (2, 3)

LANE_HOIST = """    // reductions scheduled as lanes (schedule.py, _lane_reduction_matchers):
    // their accumulator rows leave the reduction loops
    %lane_nests = transform.structured.match ops{["scf.for"]} attributes {gradir.lanes} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %lane_nests : !transform.any_op {
    ^bb0(%nest: !transform.any_op):
      %loops = transform.structured.match ops{["scf.for"]} in %nest : (!transform.any_op) -> !transform.any_op
      transform.foreach %loops : !transform.any_op {
      ^bb0(%loop: !transform.any_op):
        transform.loop.hoist_loop_invariant_subsets %loop : !transform.any_op
      }
    }
"""


def _lane_reduction_matchers(params: ScheduleParams) -> tuple[list[str], list[str]]:
    """Matchers of reduction generics with a parallel innermost loop, entered
    after the elementwise ones (an all-parallel generic is theirs), and their
    schedules: the elementwise one's tiles and vectors, the outermost tile
    loop marked ``gradir.lanes`` for LANE_HOIST."""
    tag = params.tag
    seqs, matches = [], []
    for bw in _ELEMENTWISE_BITS:
        lanes = 2 * max(params.bits // bw, 1)
        for rank in _LANE_RANKS:
            name = f"lane_reduction_r{rank}_{bw}{tag}"
            nonzero = "".join(
                f"      %d{i} = transform.match.structured.dim %s[{i}] : (!transform.any_op) -> "
                f"!transform.param<i64>\n"
                f"      transform.match.param.cmpi gt %d{i}, %z : !transform.param<i64>\n"
                for i in range(rank))
            seqs.append(f"""
  transform.named_sequence @match_{name}(%op: !transform.any_op {{transform.readonly}}) -> !transform.any_op {{
    transform.match.operation_name %op ["linalg.generic"] : !transform.any_op
    %0 = transform.match.structured failures(propagate) %op : (!transform.any_op) -> !transform.any_op {{
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %r = transform.param.constant {rank} : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %r : !transform.param<i64>
      transform.match.structured.dim %s[{rank - 1}] {{parallel}} : !transform.any_op
      %z = transform.param.constant 0 : i64 -> !transform.param<i64>
{nonzero}      %lanes = transform.param.constant {lanes} : i64 -> !transform.param<i64>
      %inner = transform.match.structured.dim %s[{rank - 1}] : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %inner, %lanes : !transform.param<i64>
      %ins = transform.match.structured.num_inputs %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi gt %ins, %z : !transform.param<i64>
      %one = transform.param.constant 1 : i64 -> !transform.param<i64>
      %inits = transform.match.structured.num_inits %s : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %inits, %one : !transform.param<i64>
      transform.match.structured.input %s[all] {{projected_permutation}} : !transform.any_op
      transform.match.structured.init %s[all] {{projected_permutation}} : !transform.any_op
      %init = transform.match.structured.init %s[0] : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init : (!transform.any_value) -> !transform.param<i64>
      %b = transform.param.constant {bw} : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %b : !transform.param<i64>
      transform.match.structured.yield %s : !transform.any_op
    }}
    transform.yield %op : !transform.any_op
  }}
""")
            sizes = ", ".join(["1"] * (rank - 1) + [str(lanes)])
            loops = ", ".join(["!transform.any_op"] * rank)
            seqs.append(f"""
  transform.named_sequence @schedule_{name}(%op: !transform.any_op {{transform.consumed}}) {{
    transform.sequence %op : !transform.any_op failures(suppress) {{
    ^bb0(%g: !transform.any_op):
      %t, %l:{rank} = transform.structured.tile_using_for %g tile_sizes [{sizes}] : (!transform.any_op) -> (!transform.any_op, {loops})
      transform.structured.vectorize %t vector_sizes [{sizes}] : !transform.any_op
      transform.annotate %l#0 "gradir.lanes" : !transform.any_op
    }}
    transform.yield
  }}
""")
            matches.append(f"@match_{name} -> @schedule_{name}")
    return seqs, matches


def schedule_text(params: ScheduleParams) -> str:
    """The transform-dialect schedule for ``params``, as MLIR text (without
    the matmul and batch-matmul sequences when ``params.matmuls`` is False:
    ``without_matmuls``)."""
    strategy = "shuffle_16x16" if params.transpose == 16 else "shuffle_1d"
    values = dict(tag=params.tag, f32_m=params.f32_m, f32_n=params.f32_n, f32_k=params.f32_k,
                  f64_m=params.f64_m, f64_n=params.f64_n, f64_k=params.f64_k,
                  tr=params.transpose, tr_strategy=strategy, regs=params.registers,
                  bits=params.bits, target=params.target, pack_rows=PACK_ROWS,
                  rhs_t_strip_rows=RHS_T_STRIP_ROWS, rhs_t_min=RHS_T_MIN,
                  f32_mb=params.f32_mb, f64_mb=params.f64_mb,
                  f32_lanes=params.f32_n // 2, f64_lanes=params.f64_n // 2,
                  threads=params.threads,
                  f32_thread_cols=params.threads * params.f32_n,
                  f64_thread_cols=params.threads * params.f64_n,
                  f32_thread_min=(params.threads - 1) * params.f32_n,
                  f64_thread_min=(params.threads - 1) * params.f64_n)
    # the chunks of a split for per-thread strips: the multiple of the
    # thread count, then the rest in powers of two (fewer than `threads`
    # tiles: one chunk per bit of threads - 1)
    rest = max((params.threads - 1).bit_length(), 1)
    values.update(split_parts=rest + 1, split_rest_count=rest,
                  split_types=", ".join(["!transform.any_op"] * (rest + 1)),
                  split_rest=", ".join(f"%p#{i}" for i in range(1, rest + 1)))
    # the per-thread strips only where the thread count is known
    values["thread_strip_matches"] = "" if params.threads == 1 else (
        f"\n        @match_matmul_f32_thread_strips{params.tag} -> "
        f"@schedule_matmul_f32_thread_strips{params.tag},"
        f"\n        @match_matmul_f64_thread_strips{params.tag} -> "
        f"@schedule_matmul_f64_thread_strips{params.tag},")
    values["thread_strip_matches_indented"] = values["thread_strip_matches"].replace(
        "\n        ", "\n          ")
    values["elementwise_sequences"], values["elementwise_matches"] = _elementwise_sequences(params)
    values["lane_hoist"] = LANE_HOIST if params.threads == 1 else ""
    text = string.Template(TEMPLATE.read_text()).substitute(values)
    return text if params.matmuls else without_matmuls(text)


_SEQUENCE = re.compile(r"(?m)^(?=  transform\.named_sequence @)")
_SEQUENCE_NAME = re.compile(r"  transform\.named_sequence @([^(]+)\(")
# an entry point's loop over the matmuls it matches: from the match to the
# loop's closing brace (the first line that is the brace alone at its depth)
_MATMUL_LOOP = re.compile(r'(?ms)^    %\w+ = transform\.structured\.match '
                          r'ops\{\["linalg\.(?:batch_)?matmul".*?^    \}\n')


def without_matmuls(text: str) -> str:
    """A schedule's text without its matmul and batch-matmul sequences and
    the entry points' loops over matmuls (issue 14, compile time: with the
    2-D matmuls in gradir's kernels, most programs hold none; preloading
    the whole schedule, 107 KB, was ~11 ms of each compiled part, this half
    ~4 ms).  The entry points keep their names and everything else."""
    if not text.endswith("\n}\n"):
        raise ValueError("a CPU schedule ends with its module's closing brace")
    head, *sequences = _SEQUENCE.split(text[:-2])
    kept = [_MATMUL_LOOP.sub("", seq) for seq in sequences
            if "matmul" not in _SEQUENCE_NAME.match(seq).group(1)]
    return head + "".join(kept) + "}\n"


def _cache_dir() -> Path:
    root = os.environ.get("GRADIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gradir")
    return Path(root) / "schedules"


def schedule_path(params: ScheduleParams) -> Path:
    """A file holding ``schedule_text(params)`` (the package's
    ``cpu_schedule.mlir`` for the AVX-512 instance; otherwise written once
    under $GRADIR_CACHE_DIR or ~/.cache/gradir, a temporary directory when
    neither is writable)."""
    if params.tag == "":
        return SCHEDULE_LIBRARY
    text = schedule_text(params)
    name = f"cpu_schedule{'_avx512' if params.tiles == DEFAULT.tiles else ''}{params.tag}.mlir"
    for folder in (_cache_dir(), Path(tempfile.gettempdir()) / f"gradir-{os.getuid()}"):
        path = folder / name
        try:
            if path.exists() and path.read_text() == text:
                return path
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
            return path
        except OSError:
            continue
    raise OSError(f"cannot write the CPU schedule {name} to any cache directory")


if __name__ == "__main__":     # python -m gradir.conversion.cpu.schedule x86-64-v3
    sys.stdout.write(schedule_text(schedule_params(sys.argv[1] if len(sys.argv) > 1
                                                   else "host")))
