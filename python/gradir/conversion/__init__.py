"""Lowering of rlx programs: ``rlx-to-linalg`` and the CPU pipeline to LLVM."""
