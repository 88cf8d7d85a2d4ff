"""The numpy <-> compiled-code ABI, with numpy and ctypes only (no MLIR).

Every public function of a compiled gradir module has the C signature

    void _mlir_ciface_<name>(memref_desc *in0, ..., memref_desc *out0, ...)

(``buffer-results-to-out-params``: the caller allocates the results), where a
``memref_desc`` of rank r is MLIR's ranked memref descriptor

    struct { T *allocated; T *aligned; int64_t offset;
             int64_t sizes[r]; int64_t strides[r]; }

Tuple-typed arguments and results are flattened depth-first, left to right;
a ``Signature`` remembers the nesting so results come back as Python tuples.
Signatures serialise to JSON so an exported library carries its own.
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass

import numpy as np

from .check_hook import take as _failed_check
from .errors import ExecutionError
from .openmp import before_call

__all__ = ["ArgumentError", "Function", "FunctionTable", "Signature", "TensorSpec", "DTYPES",
           "BOUNDARY_DTYPES", "numpy_dtype", "signatures_from_json", "signatures_to_json"]

# MLIR element type -> numpy dtype name.
DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "i1": "bool",
          "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64"}
# ... and what a compiled function's arguments and results may be: bf16 too,
# as ml_dtypes' bfloat16 (``numpy_dtype``; a split function's parts pass
# only DTYPES between them: partition.py).
BOUNDARY_DTYPES = {**DTYPES, "bf16": "bfloat16"}


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype of ``BOUNDARY_DTYPES``' name ``name``.  bf16 tensors
    cross the boundary as ``ml_dtypes.bfloat16`` arrays (numpy has no bf16;
    ml_dtypes is imported only then)."""
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise ArgumentError("bf16 tensors are passed and returned as ml_dtypes.bfloat16 "
                                "arrays: install ml_dtypes (pip install ml_dtypes)") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


class ArgumentError(TypeError):
    """A compiled function was called with the wrong number, shape or dtype of
    arguments.  The message names the function and the argument."""


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: str          # numpy dtype name

    def describe(self) -> str:
        return f"{self.dtype} array of shape {self.shape}"


# A tree is an int (index into the flat list) or a list of trees (a tuple).
Tree = object


@dataclass(frozen=True)
class Signature:
    name: str
    inputs: tuple[TensorSpec, ...]      # flat
    input_tree: tuple                   # one tree per argument
    outputs: tuple[TensorSpec, ...]     # flat
    output_tree: tuple                  # one tree per result
    largest_buffer: int = 0             # bytes of the largest tensor a call makes

    def to_json(self) -> dict:
        return {"name": self.name,
                "inputs": [[list(s.shape), s.dtype] for s in self.inputs],
                "input_tree": _tree_to_json(self.input_tree),
                "outputs": [[list(s.shape), s.dtype] for s in self.outputs],
                "output_tree": _tree_to_json(self.output_tree),
                "largest_buffer": self.largest_buffer}

    @staticmethod
    def from_json(d: dict) -> "Signature":
        return Signature(d["name"],
                         tuple(TensorSpec(tuple(s), t) for s, t in d["inputs"]),
                         _tree_from_json(d["input_tree"]),
                         tuple(TensorSpec(tuple(s), t) for s, t in d["outputs"]),
                         _tree_from_json(d["output_tree"]),
                         int(d.get("largest_buffer", 0)))


def _tree_to_json(tree):
    return tree if isinstance(tree, int) else [_tree_to_json(t) for t in tree]


def _tree_from_json(tree):
    return tree if isinstance(tree, int) else tuple(_tree_from_json(t) for t in tree)


def signatures_to_json(sigs: dict) -> str:
    return json.dumps({"version": 1, "functions": [s.to_json() for s in sigs.values()]},
                      sort_keys=True)


def signatures_from_json(text: str) -> dict:
    d = json.loads(text)
    if d.get("version") != 1:
        raise ValueError(f"unsupported gradir signature version {d.get('version')!r}")
    return {f["name"]: Signature.from_json(f) for f in d["functions"]}


# --- memref descriptors ---------------------------------------------------

_DESCRIPTORS: dict[int, type] = {}


def descriptor_type(rank: int) -> type:
    """The ctypes struct of a rank-``rank`` ranked memref descriptor."""
    if rank not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


def descriptor_template(shape) -> ctypes.Structure:
    """A descriptor of a C-contiguous array of ``shape`` at address 0."""
    desc = descriptor_type(len(shape))()
    if shape:
        stride = 1
        strides = []
        for n in reversed(shape):
            strides.append(stride)
            stride *= n
        desc.sizes[:] = list(shape)
        desc.strides[:] = list(reversed(strides))
    return desc


def descriptor(array: np.ndarray, template: ctypes.Structure | None = None):
    """A descriptor viewing ``array`` (C-contiguous) without copying;
    ``template``: ``descriptor_template(array.shape)``, made once (a call
    copies it: 1.2 us against 1.7 us, issue 14)."""
    if template is None:
        template = descriptor_template(array.shape)
    desc = type(template).from_buffer_copy(template)
    ptr = array.ctypes.data
    desc.allocated = ptr
    desc.aligned = ptr
    return desc


_byte = ctypes.c_byte


def _data_pointer(array: np.ndarray) -> int:
    """The address of ``array``'s first element: through the buffer
    protocol (0.25 us) where the array is writable and not empty, else
    ``array.ctypes.data`` (0.8 us)."""
    try:
        return ctypes.addressof(_byte.from_buffer(array))
    except (TypeError, ValueError, BufferError):
        return array.ctypes.data


# --- calling ---------------------------------------------------------------

def _flatten(value, tree, where: str, out: list) -> None:
    if isinstance(tree, int):
        out.append((tree, value, where))
        return
    if not isinstance(value, (tuple, list)) or len(value) != len(tree):
        got = f"a {type(value).__name__} of {len(value)}" if isinstance(value, (tuple, list)) \
            else type(value).__name__
        raise ArgumentError(f"{where} must be a tuple of {len(tree)} values, got {got}")
    for i, (v, t) in enumerate(zip(value, tree)):
        _flatten(v, t, f"{where}[{i}]", out)


def _unflatten(flat: list, tree):
    if isinstance(tree, int):
        return flat[tree]
    return tuple(_unflatten(flat, t) for t in tree)


class Function:
    """A compiled function taking and returning numpy arrays.

    ``call(ptrs)`` runs the machine code given a list of descriptor pointers
    (inputs then outputs); the JIT and the exported library supply it.
    """

    def __init__(self, sig: Signature, call, keepalive=None):
        self.signature = sig
        self._call = call
        self._keepalive = keepalive
        self._templates = [descriptor_template(s.shape) for s in sig.inputs + sig.outputs]
        # --- issue 14: the call path (seed 3x3: 14 us a call, JAX's 11) ---
        # The descriptors of one call live in one int64 array, a "frame",
        # whose descriptor addresses never change: a call copies the
        # templates in, writes the data pointers and passes the same
        # addresses (the callers may then reuse what they built for them,
        # ``toolchain.packed_caller``).  Frames are taken from a pool and
        # put back, so calls from several threads (ctypes releases the GIL)
        # or re-entrant ones each have their own.
        words = [ctypes.sizeof(t) // 8 for t in self._templates]
        self._offsets = [sum(words[:i]) for i in range(len(words))]
        self._image = np.concatenate(
            [np.frombuffer(bytes(t), dtype=np.int64) for t in self._templates]) \
            if words else np.zeros(0, np.int64)
        self._allocated = np.array(self._offsets, dtype=np.intp)
        self._aligned = self._allocated + 1
        # a few descriptors: their pointers written one by one (0.25 us for
        # two, where the two index-array writes took 0.8 us of hello's ~3 us)
        self._few = len(self._offsets) <= 8
        self._frames: list = []
        # inputs passed as they are (flat, C-contiguous numpy arrays of the
        # exact dtype and shape) skip the general checks
        flat_in = sig.input_tree == tuple(range(len(sig.inputs)))
        self._plain = tuple((numpy_dtype(s.dtype), tuple(s.shape)) for s in sig.inputs) \
            if flat_in else None
        self._out_specs = tuple((tuple(s.shape), numpy_dtype(s.dtype)) for s in sig.outputs)
        self._flat_out = sig.output_tree == tuple(range(len(sig.outputs)))

    def _frame(self):
        """A frame of descriptors (see ``__init__``): the array and the
        descriptors' addresses."""
        buf = np.empty(len(self._image) + 8, dtype=np.int64)
        # 64-byte aligned, as ctypes structures are at least 8-byte aligned
        skip = (-buf.ctypes.data % 64) // 8
        buf = buf[skip:skip + len(self._image)]
        # shapes and strides once: a call writes only the data pointers
        # (compiled code reads the descriptors, never writes them)
        buf[:] = self._image
        base = buf.ctypes.data
        return buf, [base + 8 * o for o in self._offsets]

    @property
    def name(self) -> str:
        return self.signature.name

    def __repr__(self) -> str:
        sig = self.signature
        ins = ", ".join(s.describe() for s in sig.inputs)
        return f"<gradir function @{sig.name}({ins})>"

    def _check(self, args) -> list[np.ndarray]:
        sig = self.signature
        if len(args) != len(sig.input_tree):
            raise ArgumentError(f"@{sig.name} takes {len(sig.input_tree)} argument"
                                f"{'s' if len(sig.input_tree) != 1 else ''}, "
                                f"got {len(args)}")
        flat: list = []
        for i, (a, t) in enumerate(zip(args, sig.input_tree)):
            _flatten(a, t, f"@{sig.name}: argument {i}", flat)
        arrays = []
        for index, value, where in flat:
            spec = sig.inputs[index]
            arrays.append(_as_array(value, spec, where))
        return arrays

    def __call__(self, *args):
        # (issue 45, the call path: GradBench's hello is a call of a 0-d
        # function, the whole call timed)
        plain = self._plain
        arrays = args
        if plain is None or len(args) != len(plain):
            arrays = None
        else:
            for a, (dtype, shape) in zip(args, plain):
                if type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape \
                        or not a.flags.c_contiguous:
                    arrays = None
                    break
        sig = self.signature
        if arrays is None:
            arrays = self._check(args)
        if sig.largest_buffer:
            check_memory(sig)
        outs = [np.empty(shape, dtype) for shape, dtype in self._out_specs]
        frames = self._frames
        buf, addrs = frames.pop() if frames else self._frame()
        try:
            if self._few:
                for offset, a in zip(self._offsets, (*arrays, *outs)):
                    ptr = _data_pointer(a)
                    buf[offset] = ptr
                    buf[offset + 1] = ptr
            else:
                ptrs = [_data_pointer(a) for a in arrays]
                ptrs += [_data_pointer(a) for a in outs]
                buf[self._allocated] = ptrs
                buf[self._aligned] = ptrs
            before_call()       # issue 14: libomp's block time follows the machine's load
            self._call(addrs)
        finally:
            frames.append((buf, addrs))
        failed = _failed_check()
        if failed is not None:      # a run-time check of the code (check_hook.py)
            raise ExecutionError(sig.name, failed)
        if self._flat_out:
            return outs[0] if len(outs) == 1 else tuple(outs)
        results = _unflatten(outs, tuple(sig.output_tree))
        return results[0] if len(results) == 1 else results

    def call_pointers(self, pointers) -> None:
        """Runs the function on raw data addresses: ``pointers`` holds one
        per flat input, then one per flat output, each the address of
        C-contiguous data of that argument's shape and dtype, the outputs
        written in place.  Nothing is checked but the count: the caller
        vouches for the memory (the PyTorch drop-in module passes its
        tensors' ``data_ptr()``, checked once per compiled variant, where
        ``__call__`` would take numpy views of them and allocate the
        results).  A failed run-time check raises ``ExecutionError`` as
        ``__call__`` does."""
        sig = self.signature
        if len(pointers) != len(self._offsets):
            raise ArgumentError(f"@{sig.name} takes {len(self._offsets)} data pointers "
                                f"({len(sig.inputs)} inputs, {len(sig.outputs)} outputs), "
                                f"got {len(pointers)}")
        if sig.largest_buffer:
            check_memory(sig)
        frames = self._frames
        buf, addrs = frames.pop() if frames else self._frame()
        try:
            buf[self._allocated] = pointers
            buf[self._aligned] = pointers
            before_call()
            self._call(addrs)
        finally:
            frames.append((buf, addrs))
        failed = _failed_check()
        if failed is not None:
            raise ExecutionError(sig.name, failed)

    def _plain_arrays(self, args) -> list | None:
        """``args`` when every one is a C-contiguous numpy array of its
        input's exact dtype and shape (nothing to check or convert), else
        None (``_check`` then converts them or says what is wrong)."""
        plain = self._plain
        if plain is None or len(args) != len(plain):
            return None
        for a, (dtype, shape) in zip(args, plain):
            if type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape \
                    or not a.flags.c_contiguous:
                return None
        return list(args)


def _machine_memory() -> int | None:
    """RAM + swap in bytes (Linux), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return sum(int(fields[k].split()[0]) * 1024 for k in ("MemTotal", "SwapTotal"))
    except (OSError, KeyError, ValueError):
        return None


# RAM + swap as last read (issue 14: reading /proc/meminfo was 22 of the
# 32 us a call of a small compiled function took); re-read before refusing.
_MEMORY_SEEN: list = []


def check_memory(sig: Signature) -> None:
    """Raises MemoryError before a call whose largest buffer is more than
    the machine's RAM + swap: compiled code has no way to report a failed
    allocation (malloc's NULL would crash it), so it must not start."""
    if not sig.largest_buffer:
        return
    if not _MEMORY_SEEN:
        _MEMORY_SEEN.append(_machine_memory())
    total = _MEMORY_SEEN[0]
    if total is not None and sig.largest_buffer <= total:
        return
    total = _MEMORY_SEEN[0] = _machine_memory()     # swap may have been added since
    if total is not None and sig.largest_buffer > total:
        raise MemoryError(f"@{sig.name} needs a buffer of {sig.largest_buffer / 2**30:.1f} "
                          f"GiB; this machine has {total / 2**30:.1f} GiB of memory and swap")


def _is_masked(value) -> bool:
    """Whether ``value`` is a numpy masked array, without importing
    ``numpy.ma`` (23 ms of the first call, issue 14): no masked array exists
    before something imported it."""
    import sys
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(value, ma.MaskedArray)


def _as_array(value, spec: TensorSpec, where: str) -> np.ndarray:
    """``value`` as a C-contiguous array of ``spec``, or ArgumentError.

    numpy arrays must have the exact dtype; Python scalars and lists are
    converted only when nothing is lost: no floats into integer or bool
    arguments, no integers outside the dtype's range, no masked arrays (the
    mask would be dropped)."""
    want = numpy_dtype(spec.dtype)
    if _is_masked(value):
        raise ArgumentError(f"{where} must be a {spec.describe()}, got a masked array (its "
                            "mask would be lost; pass value.filled(...) or value.data)")
    if isinstance(value, np.ndarray):
        if value.dtype != want:
            raise ArgumentError(f"{where} must be a {spec.describe()}, got a {value.dtype} "
                                f"array (convert it with .astype("
                                f"{'ml_dtypes.bfloat16' if want.name == 'bfloat16' else 'np.' + want.name}))")
        array = value
    elif isinstance(value, (bool, int, float, np.generic, list, tuple)):
        array = _convert(value, want, spec, where)
    else:
        raise ArgumentError(f"{where} must be a {spec.describe()}, got "
                            f"{type(value).__name__}")
    if array.shape != spec.shape:
        raise ArgumentError(f"{where} must be a {spec.describe()}, got shape {array.shape}")
    return np.ascontiguousarray(array)


def _convert(value, want: np.dtype, spec: TensorSpec, where: str) -> np.ndarray:
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise ArgumentError(f"{where} must be a {spec.describe()}: {err}") from None
    if raw.dtype.kind not in "biuf":
        if raw.dtype.kind == "O" and want.kind in "iu":
            raise ArgumentError(f"{where} must be a {spec.describe()}: a value is out of "
                                f"range for {want.name}")
        raise ArgumentError(f"{where} must be a {spec.describe()}, got values of type "
                            f"{raw.dtype}")
    if not np.can_cast(raw.dtype, want, casting="same_kind") or \
            (want.kind == "b" and raw.dtype.kind != "b"):
        raise ArgumentError(f"{where} must be a {spec.describe()}, got {raw.dtype.name} "
                            "values (nothing is converted silently)")
    if want.kind in "iu" and raw.size:
        info = np.iinfo(want)
        if raw.min() < info.min or raw.max() > info.max:
            raise ArgumentError(f"{where} must be a {spec.describe()}: a value is out of "
                                f"range for {want.name}")
    if want.kind == "f" and raw.dtype.kind == "f" and raw.size:
        with np.errstate(over="ignore"):
            conv = raw.astype(want)
        if np.isinf(conv).any() and not np.isinf(raw).any():
            raise ArgumentError(f"{where} must be a {spec.describe()}: a value is out of "
                                f"range for {want.name}")
        return conv
    return raw.astype(want)


class FunctionTable:
    """Lookup of compiled functions by name (``table["main_adjoint"]``),
    shared by the JIT, the CUDA executable and loaded libraries; subclasses
    fill ``_functions``."""

    _functions: dict

    def _where(self) -> str:
        return "compiled functions"

    def __getitem__(self, name: str) -> Function:
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(f"no public function @{name}; {self._where()}: "
                           f"{', '.join(sorted(self._functions)) or '(none)'}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._functions

    @property
    def functions(self) -> list[str]:
        return list(self._functions)
