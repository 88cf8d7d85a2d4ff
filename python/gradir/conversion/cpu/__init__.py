"""The CPU back end: linalg -> bufferized loops and vectors -> LLVM (``pipeline``),
its passes (``rlx-lower-to-llvm``, ``rlx-early-dealloc``) and the transform
schedule (``cpu_schedule.mlir``)."""
