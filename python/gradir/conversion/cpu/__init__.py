"""The CPU back end: linalg -> bufferized loops and vectors -> LLVM (``pipeline``),
its passes (``rlx-lower-to-llvm``, ``rlx-early-dealloc``, ``rlx-parallel-loops``:
the loops run on OpenMP threads when ``threads`` > 1, ``rlx-loop-hints``:
LLVM does not unroll the loops again) and the transform schedule
(``cpu_schedule.mlir``)."""
