"""LLVM code generation for a CpuTarget: ``target_cpu`` / ``target_features``
on every ``llvm.func`` with a body, which MLIR's LLVM translation turns into
the functions' "target-cpu" / "target-features" attributes; LLVM's code
generator honours them per function, whatever CPU the JIT's target machine
was made for.  The "host" target sets nothing (the JIT and the export
compile for the host already).  The functions are also ``no_inline``:
ExecutionEngine wraps each in a packed function compiled for the host,
which must not absorb their bodies.

    llvm.func @f(...) attributes {target_cpu = "x86-64-v3",
        target_features = #llvm.target_features<["+avx", "+avx2", ..., "-avx512f", ...]>}

``internalize_private_functions``: a private ``func.func`` with a body (the
deallocation pipeline's ``@dealloc_helper``, a callee kept out of line)
becomes an ``llvm.func`` of internal linkage, its C interface too, so that
objects lowered apart (the parts of a split function,
``runtime/partition.py``) link into one library without clashing symbols.
"""

from __future__ import annotations

from mlir import ir

from .host import CpuTarget

__all__ = ["internalize_private_functions", "set_llvm_target"]


def set_llvm_target(module: ir.Operation, target: CpuTarget) -> None:
    """Marks every defined ``llvm.func`` of ``module`` (LLVM dialect) for ``target``."""
    if target.llvm_cpu is None:
        return
    cpu = ir.StringAttr.get(target.llvm_cpu)
    features = ir.Attribute.parse("#llvm.target_features<[" + ", ".join(
        f'"{f}"' for f in target.llvm_features) + "]>")
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name != "llvm.func" or not op.operation.regions[0].blocks:
            continue
        op.operation.attributes["target_cpu"] = cpu
        op.operation.attributes["target_features"] = features
        # ExecutionEngine wraps each function in a packed function of its own
        # (host CPU); inlined there, the body would be compiled for the host.
        op.operation.attributes["no_inline"] = ir.UnitAttr.get()


def internalize_private_functions(module: ir.Operation) -> None:
    """Gives internal linkage to every defined ``llvm.func`` of ``module``
    (LLVM dialect) that was a private ``func.func``: the conversion keeps the
    symbol's ``sym_visibility = "private"`` but gives the function, and its
    ``_mlir_ciface_`` wrapper, external linkage (each object lowered from a
    part of a split function defined ``dealloc_helper``: "multiple definition"
    when they were linked into one library).  ExecutionEngine makes no
    packed wrapper for a function of local linkage either."""
    internal = None
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "llvm.func" or not op.regions[0].blocks:
            continue
        vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
        if vis is None or ir.StringAttr(vis).value != "private":
            continue
        if internal is None:
            external = ir.Attribute.parse("#llvm.linkage<external>")
            internal = ir.Attribute.parse("#llvm.linkage<internal>")
        if "linkage" not in op.attributes or op.attributes["linkage"] == external:
            op.attributes["linkage"] = internal    # (a private one stays private)
