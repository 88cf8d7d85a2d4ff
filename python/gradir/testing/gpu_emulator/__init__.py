"""A lockstep SIMT emulator of gradir's GPU code, for testing without a GPU.

It runs a module after the ``kernels`` stage of the NVVM pipeline (host
functions that ``gpu.alloc``/``gpu.memcpy``/``gpu.launch``, kernels as
``gpu.launch`` bodies on device buffers) with numpy: every kernel runs all
threads of all blocks in lockstep, each SSA value being an array over the
threads (uniform values stay scalars), control flow under masks.  It is
strict where a GPU is undefined, so tests catch what a real run would get
wrong only sometimes:

* data races: two threads touching the same element of device or
  workgroup memory in one barrier interval, one of them writing (threads
  of different blocks: anywhere in one launch) -- so a missing
  ``gpu.barrier`` is an error even though lockstep order would hide it;
* ``gpu.barrier`` reached by part of a block (divergent barrier);
* out-of-bounds loads and stores, use after ``gpu.dealloc``, host code
  reading or writing device memory (anything but ``gpu.memcpy``), device
  code touching host memory;
* workgroup memory past a block's limits: over 48 KiB of static
  workgroup buffers, or over 227 KiB of static and dynamic
  (``dynamic_shared_memory_size``, read with ``gpu.dynamic_shared_memory``)
  together;
* fresh device and workgroup buffers hold NaN (floats) or a junk pattern
  (integers), so reading uninitialised memory shows in the results.

``run(module, "f", *inputs)`` returns the output buffers of ``@f`` (the
bufferized ABI: inputs, then outputs).

Launches are counted: ``Emulator.last_launches`` is the number of
``gpu.launch``es the last call ran (``Emulator.launches``: all calls
together), e.g. ``exe = Emulated(module); exe["f"](x);
exe.emulator.last_launches``.

The package, by concern: ``values`` (types, allocations, buffers),
``scalar_ops`` (arith/math per lane), ``tensor_cores`` (warp-level
``mma.sync`` and TF32 conversion), ``memory`` (loads, stores, atomics and
the race detector), ``host`` (allocation, copies, views, LLVM glue),
``emulator`` (evaluation, control flow, launches) and ``frontend`` (``run``,
``Emulated``).
"""

from .emulator import Emulator
from .frontend import Emulated, run
from .values import Buf, EmulationError

__all__ = ["EmulationError", "run", "Emulator", "Emulated", "Buf"]
