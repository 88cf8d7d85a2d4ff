"""The glue of a function split in parts (``partition.py``): Python for the
JIT, C beside the parts' objects in a library, both calling the parts in
order with the values between them in buffers of their own."""

from __future__ import annotations

__all__ = ["python_glue", "glue_c", "GLUE_PRELUDE"]


def python_glue(plan, n_in: int, callers):
    """``call(descriptor pointers)`` of the split function: the parts in
    order, the values between them in buffers of the calling thread, kept
    from one call to the next (a fresh set per call cost the MLP step ~4%:
    new addresses, cold in the cache; a thread runs one call at a time, so
    its set is never in use twice)."""
    import ctypes
    import threading

    from .abi import descriptor, descriptor_template
    templates = [descriptor_template(s.shape) for s in plan.temps]
    local = threading.local()

    def buffers() -> list[int]:
        held = getattr(local, "held", None)
        if held is None:
            temps = [_aligned_empty(s.shape, s.dtype) for s in plan.temps]
            descs = [descriptor(a, t) for a, t in zip(temps, templates)]
            held = local.held = (temps, descs, [ctypes.addressof(d) for d in descs])
        return held[2]

    def call(ptrs: list[int]) -> None:
        where = {"in": ptrs[:n_in], "out": ptrs[n_in:], "tmp": buffers()}
        for caller, (ins, outs) in zip(callers, plan.slots):
            caller([where[kind][i] for kind, i in ins + outs])
    return call


def _aligned_empty(shape, dtype, alignment: int = 64):
    """An uninitialized C-contiguous array whose data starts on a cache line,
    as the C glue's buffers (``posix_memalign``) and the compiled code's own
    allocations do, so a part sees the same alignment whichever glue runs
    it (measured: no run-time difference against numpy's 16-byte start on
    the LeNet step)."""
    import numpy as np
    dtype = np.dtype(dtype)
    count = 1
    for n in shape:
        count *= n
    raw = np.empty(count * dtype.itemsize + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + count * dtype.itemsize].view(dtype).reshape(shape)


def glue_c(plan, n_in: int, n_out: int) -> str:
    """C source of ``_mlir_ciface_<name>`` calling the parts' C interfaces
    (what a library exports for the split function)."""
    import numpy as np
    lines = []
    for part, (ins, outs) in zip(plan.parts, plan.slots):
        params = ", ".join(["void *"] * (len(ins) + len(outs))) or "void"
        lines.append(f"extern void _mlir_ciface_{part}({params});")
    params = ", ".join([f"void *i{i}" for i in range(n_in)] + [f"void *o{j}" for j in range(n_out)])
    lines.append(f'__attribute__((visibility("default"))) void _mlir_ciface_{plan.name}({params}) {{')
    for k, spec in enumerate(plan.temps):
        size = int(np.prod(spec.shape, dtype=np.int64)) * np.dtype(spec.dtype).itemsize
        rank = len(spec.shape)
        lines.append(f"  void *b{k} = 0;")
        lines.append(f"  if (posix_memalign(&b{k}, 64, {max(64, size)})) gradir_glue_oom();")
        if rank:
            strides, s = [], 1
            for n in reversed(spec.shape):
                strides.append(s)
                s *= n
            sizes = ", ".join(str(n) for n in spec.shape)
            stride_text = ", ".join(str(x) for x in reversed(strides))
            lines.append(f"  struct {{ void *a, *b; int64_t off, sz[{rank}], st[{rank}]; }} "
                         f"t{k} = {{b{k}, b{k}, 0, {{{sizes}}}, {{{stride_text}}}}};")
        else:
            lines.append(f"  struct {{ void *a, *b; int64_t off; }} t{k} = {{b{k}, b{k}, 0}};")
    for part, (ins, outs) in zip(plan.parts, plan.slots):
        names = [{"in": f"i{i}", "out": f"o{i}", "tmp": f"&t{i}"}[kind] for kind, i in ins + outs]
        lines.append(f"  _mlir_ciface_{part}({', '.join(names)});")
    for k in range(len(plan.temps)):
        lines.append(f"  free(b{k});")
    lines.append("}")
    return "\n".join(lines) + "\n"


# The glue runs once a call and does nothing worth optimizing, and the C
# compiler's optimizer is slow on it: GCC -O2 took 1.1 s (CPU) on the glue of
# torchvision's shufflenet_v2_x0_5 step (266 buffers, calls of ~340
# arguments), at O0 0.07 s.  The pragma comes last in export_library's
# source: the signatures' strings and the memrefCopy shim keep -O2.
GLUE_PRELUDE = """
#if defined(__clang__)
#pragma clang optimize off
#elif defined(__GNUC__)
#pragma GCC optimize ("O0")
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static void gradir_glue_oom(void) {
  fputs("gradir: out of memory for a buffer between the parts of a function\\n", stderr);
  abort();
}
"""
