"""The emulator's values: element types, allocations with their race
trackers, buffers (views of allocations), and the lane geometry of a launch."""

from __future__ import annotations

import numpy as np
from mlir import ir

__all__ = ["EmulationError", "NP", "UNSIGNED", "dtype_of", "as_op", "Alloc", "Buf", "fresh",
           "Kernel", "unsigned"]

try:                                      # bf16 buffers (optional: ml_dtypes)
    from ml_dtypes import bfloat16 as _BF16
except ImportError:                       # pragma: no cover
    _BF16 = None

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
       "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64}
if _BF16 is not None:
    NP["bf16"] = _BF16
UNSIGNED = {np.dtype(np.int8): np.uint8, np.dtype(np.int16): np.uint16,
             np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64,
             np.dtype(np.bool_): np.bool_}


class EmulationError(Exception):
    pass


def dtype_of(t: ir.Type):
    key = str(t)
    if key not in NP:
        raise EmulationError(f"type {t} is not supported by the emulator")
    return NP[key]


def as_op(x):
    return x.operation if hasattr(x, "operation") else x


class Alloc:
    """One allocation: data, flat element ids, race trackers."""

    def __init__(self, data: np.ndarray, device: bool, blocks: int = 0):
        self.data = data
        self.device = device
        self.workgroup = blocks > 0
        self.freed = False
        n = data.size
        self.ids = np.arange(n, dtype=np.int64).reshape(data.shape)
        self.w_launch = np.full(n, -1, np.int64)
        self.w_epoch = np.full(n, -1, np.int64)
        self.w_lane = np.full(n, -1, np.int64)
        self.r_launch = np.full(n, -1, np.int64)
        self.r_epoch = np.full(n, -1, np.int64)
        self.r_lane = np.full(n, -1, np.int64)    # -2: several lanes
        self.r_block = np.full(n, -1, np.int64)   # -2: several blocks


class Buf:
    """A memref value: a numpy view of an allocation and its element ids.
    ``shift``: the bytes from the allocation's start to the memref's aligned
    pointer, which ``memref.view`` moves (its byte shift) and subviews and
    reshapes keep (their offset is the descriptor's, not the pointer's)."""

    def __init__(self, alloc: Alloc, data: np.ndarray, ids: np.ndarray, shift: int = 0):
        self.alloc, self.data, self.ids, self.shift = alloc, data, ids, shift

    def view(self, fn) -> "Buf":
        return Buf(self.alloc, fn(self.data), fn(self.ids), self.shift)


def fresh(shape, dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.floating) or (_BF16 is not None and np.dtype(dtype) == _BF16):
        return np.full(shape, np.nan, dtype)
    if dtype == np.bool_:
        return np.ones(shape, dtype)
    return np.full(shape, 0x5A5A5A5A5A5A5A5A & np.iinfo(dtype).max, dtype)


class Kernel:
    """Lane geometry of one launch."""

    def __init__(self, grid, block, launch_id):
        self.grid, self.block = grid, block
        self.tpb = block[0] * block[1] * block[2]
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.n = self.tpb * self.nblocks
        lane = np.arange(self.n, dtype=np.int64)
        self.lane = lane
        self.block_of = lane // self.tpb
        self.launch = launch_id
        self.epoch = 0


def unsigned(a):
    """``a`` viewed as the unsigned integer type of its width (others unchanged)."""
    a = np.asarray(a)
    return a.view(UNSIGNED[a.dtype]) if a.dtype in UNSIGNED else a
