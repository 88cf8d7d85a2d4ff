"""Op builders whose Python API differs from what gradir builds:
``gpu.launch`` with workgroup attributions, and ``linalg`` ops without
``mlir.dialects.linalg``'s opdsl."""

from __future__ import annotations

from mlir import ir

from .ops import set_attribute_from


def gpu_launch(grid, block, workgroup_types=(), dynamic_shared_memory_size=None):
    """A ``gpu.launch`` at the current insertion point with its body block
    (12 index arguments, then one per workgroup attribution).  ``grid`` and
    ``block`` are 3 index Values or ints.  ``dynamic_shared_memory_size``
    (bytes per block, an int or an i32 Value; None or 0: none) becomes the
    launch's ``dynamic_shared_memory_size`` operand, an int as an
    ``arith.constant`` of i32 built just before the launch.  Returns
    ``(op, body)``; the caller fills the body and ends it with
    ``gpu.terminator``.  (MLIR 22's Python ``LaunchOp`` takes the sizes as
    tuples and creates the body itself.)"""
    from mlir.dialects import gpu
    size = dynamic_shared_memory_size
    if isinstance(size, int):
        if size:
            from mlir.dialects import arith
            size = arith.constant(ir.IntegerType.get_signless(32), size)
        else:
            size = None
    op = gpu.LaunchOp(tuple(grid), tuple(block), dynamic_shared_memory_size=size)
    body = op.regions[0].blocks[0]
    for t in workgroup_types:
        body.add_argument(t, ir.Location.unknown())
    if workgroup_types:
        op.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), len(workgroup_types))
    return op, body


def _linalg_namespace():
    """Builds ``linalg`` (see the class) on first use: importing the op
    classes takes ~4 ms, which only a lowering needs."""

    class linalg:  # noqa: N801  (a namespace standing in for mlir.dialects.linalg)
        """The linalg ops rlx-to-linalg builds, from the generated op classes and
        ``fill_builtin_region``, giving the IR that ``mlir.dialects.linalg``'s
        helpers give.  Importing ``mlir.dialects.linalg`` runs its opdsl module
        ``core_named_ops`` (~28 ms, a third of the MLP step's rlx-to-linalg);
        these builders import only ``mlir.dialects._linalg_ops_gen`` (~4 ms).
        Named structured ops get their region as upstream's builders make it;
        ``copy`` gets the ``cast`` attribute opdsl sets, the pooling ops the
        ``strides``/``dilations`` given (as ``DenseElementsAttr`` of i64)."""

        from mlir.dialects._linalg_ops_gen import (  # noqa: F401
            BatchMatmulOp, BroadcastOp, ContractOp, CopyOp, FillOp, GenericOp, IndexOp, MatmulOp,
            PoolingNchwMaxOp, PoolingNchwSumOp, ReduceOp, TransposeOp, YieldOp)
        from mlir._mlir_libs._mlirDialectsLinalg import fill_builtin_region

        @staticmethod
        def _result_types(outs) -> list:
            return [v.type for v in outs if isinstance(v.type, ir.RankedTensorType)]

        @classmethod
        def _named(cls, op):
            cls.fill_builtin_region(op.operation)
            return op

        @classmethod
        def fill(cls, value, *, outs):
            """``linalg.fill``: the result Value (one tensor out) or the op."""
            op = cls._named(cls.FillOp(cls._result_types(outs), [value], list(outs)))
            return op.result if len(op.results) == 1 else op

        @classmethod
        def copy(cls, value, *, outs):
            op = cls.CopyOp(cls._result_types(outs), [value], list(outs))
            set_attribute_from([op], "cast", ir.Attribute.parse("[#linalg.type_fn<cast_signed>]"))
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def _matmul_like(cls, op_class, ins, outs, indexing_maps, cast):
            op = op_class(result_tensors=cls._result_types(outs), inputs=list(ins),
                          outputs=list(outs), indexing_maps=indexing_maps, cast=cast)
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def matmul(cls, *ins, outs, indexing_maps=None, cast=None):
            return cls._matmul_like(cls.MatmulOp, ins, outs, indexing_maps, cast)

        @classmethod
        def contract(cls, *ins, outs, indexing_maps):
            """``linalg.contract`` (``indexing_maps``: AffineMaps)."""
            maps = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in indexing_maps])
            op = cls.ContractOp(result_tensors=cls._result_types(outs), inputs=list(ins),
                                outputs=list(outs), indexing_maps=maps)
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def batch_matmul(cls, *ins, outs, indexing_maps=None, cast=None):
            return cls._matmul_like(cls.BatchMatmulOp, ins, outs, indexing_maps, cast)

        @classmethod
        def transpose(cls, value, *, outs, permutation):
            """``linalg.transpose``: the op."""
            return cls._named(cls.TransposeOp(result=cls._result_types(outs[:1]), input=value,
                                              init=outs[0], permutation=permutation))

        @classmethod
        def broadcast(cls, value, *, outs, dimensions):
            """``linalg.broadcast``: the op."""
            return cls._named(cls.BroadcastOp(result=cls._result_types(outs[:1]), input=value,
                                              init=outs[0], dimensions=dimensions))

        @classmethod
        def _pooling(cls, op_class, ins, outs, strides, dilations):
            import numpy as np
            op = op_class(cls._result_types(outs), list(ins), list(outs))
            for name, values in (("strides", strides), ("dilations", dilations)):
                if values:
                    op.operation.attributes[name] = ir.DenseElementsAttr.get(
                        np.array(values, dtype=np.int64))
            cls._named(op)
            return op.result if len(op.results) == 1 else op

        @classmethod
        def pooling_nchw_max(cls, *ins, outs, strides=None, dilations=None):
            return cls._pooling(cls.PoolingNchwMaxOp, ins, outs, strides, dilations)

        @classmethod
        def pooling_nchw_sum(cls, *ins, outs, strides=None, dilations=None):
            return cls._pooling(cls.PoolingNchwSumOp, ins, outs, strides, dilations)

    return linalg
