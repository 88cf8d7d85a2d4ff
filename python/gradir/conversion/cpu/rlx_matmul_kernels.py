"""rlx-matmul-kernels: marked matmuls on buffers become calls of gradir's kernels."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ... import _compat
from ...passes.base import ModulePass
from ...passes.base import option
from .kernels import ELEMENT_TYPES, kernel_name, memref_type


@dataclass(frozen=True)
class RlxMatmulKernels(ModulePass):
    """Turns ``linalg.contract {gradir.kernel}`` ops on buffers (what
    ``rlx-to-linalg{matmul-kernels=true}`` emits for 2-D f32/f64 matmuls,
    once bufferized) into calls of gradir's shape-generic matmul kernels
    (``conversion/cpu/kernels.py``; the runtime links their library,
    ``runtime/kernels.py``).  A transposed operand (indexing map ``(k, m)``
    or ``(n, k)``) is passed as a ``memref.transpose`` view: the kernel reads
    it in place.  The kernel adds ``A @ B`` into ``C``, as the contraction
    does.  Run after bufferization (``one-shot-bufferize``), before
    ``convert-linalg-to-loops``.

        linalg.contract indexing_maps = [#mk, #nk, #mn] {gradir.kernel}
            ins(%a, %w : memref<64x512xf32>, memref<784x512xf32>)
            outs(%c : memref<64x784xf32>)
    becomes
        %wt = memref.transpose %w (d0, d1) -> (d1, d0) : ... to memref<512x784xf32, strided<[1, 512]>>
        %0 = memref.cast %a : memref<64x512xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
        ...
        call @gradir_kernel_<variant>_matmul_f32(%0, %1, %2) : (...) -> ()
    """

    name = "rlx-matmul-kernels"

    cpu: str = option("host", "the CPU whose kernel library the calls go to (host or a name "
                              "of gradir.conversion.cpu.host.NAMED_TARGETS): the kernels' "
                              "symbols name their variant")

    def apply(self, module: ir.Operation) -> None:
        from .host import NAMED_TARGETS, resolve
        from .kernels import variant
        if self.cpu != "host" and self.cpu not in NAMED_TARGETS:
            self.error(module, f"{self.name}: unknown cpu '{self.cpu}' (expected host or one "
                               f"of: {', '.join(sorted(NAMED_TARGETS))})")
            raise self.failure()
        var = variant(resolve(self.cpu))
        module = module.operation
        ops = _compat.collect_ops(module, lambda o: o.name == "linalg.contract"
                                  and "gradir.kernel" in o.attributes)
        needed = set()
        for op in ops:
            problem = _problem(op)
            if problem:
                self.error(op, problem)
                raise self.failure()
            elt = str(ir.MemRefType(op.operands[2].type).element_type)
            _replace(op, kernel_name(elt, var), elt)
            needed.add(elt)
        if needed:
            _declare(module, [(kernel_name(elt, var), elt) for elt in sorted(needed)])


def _maps(op) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _problem(op) -> str | None:
    if len(op.operands) != 3 or op.results:
        return "a gradir.kernel contraction must have two inputs and one output, on buffers"
    types = [t.type for t in op.operands]
    if not all(isinstance(t, ir.MemRefType) and t.rank == 2 for t in types):
        return "a gradir.kernel contraction must read and write 2-D memrefs"
    elts = {str(ir.MemRefType(t).element_type) for t in types}
    if len(elts) != 1 or next(iter(elts)) not in ELEMENT_TYPES:
        return ("a gradir.kernel contraction must have one element type, one of "
                + ", ".join(ELEMENT_TYPES))
    want = [{"(d0, d2)", "(d2, d0)"}, {"(d2, d1)", "(d1, d2)"}, {"(d0, d1)"}]
    for m, allowed in zip(_maps(op), want):
        if str(m).split("->")[-1].strip() not in allowed:
            return f"a gradir.kernel contraction must be a matmul (indexing map {m})"
    return None


def _transposed(value: ir.Value) -> ir.Value:
    t = ir.MemRefType(value.type)
    layout = ir.StridedLayoutAttr(t.layout) if isinstance(t.layout, ir.StridedLayoutAttr) \
        else None
    if layout is None:
        # identity layout: row-major strides
        strides, offset = [t.shape[1], 1], 0
    else:
        strides, offset = list(layout.strides), layout.offset
    out = ir.MemRefType.get([t.shape[1], t.shape[0]], t.element_type,
                            ir.StridedLayoutAttr.get(offset, [strides[1], strides[0]]),
                            t.memory_space)
    perm = ir.AffineMapAttr.get(ir.AffineMap.get_permutation([1, 0]))
    op = ir.Operation.create("memref.transpose", results=[out], operands=[value],
                             attributes={"permutation": perm})
    return op.results[0]


def _replace(op, name: str, elt: str) -> None:
    a, b, c = op.operands
    maps = [str(m).split("->")[-1].strip() for m in _maps(op)]
    generic = ir.Type.parse(memref_type(elt))
    with ir.InsertionPoint(op), op.location:
        if maps[0] == "(d2, d0)":
            a = _transposed(a)
        if maps[1] == "(d1, d2)":
            b = _transposed(b)
        args = [ir.Operation.create("memref.cast", results=[generic], operands=[v]).results[0]
                for v in (a, b, c)]
        ir.Operation.create("func.call", operands=args, attributes={
            "callee": ir.FlatSymbolRefAttr.get(name)})
    op.erase()


def _declare(module: ir.Operation, kernels: list[tuple[str, str]]) -> None:
    body = module.regions[0].blocks[0]
    existing = {str(ir.StringAttr(o.attributes["sym_name"]).value)
                for o in _compat.block_ops(body)
                if o.name == "func.func" and "sym_name" in o.attributes}
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        for name, elt in kernels:
            if name in existing:
                continue
            generic = ir.Type.parse(memref_type(elt))
            ftype = ir.FunctionType.get([generic] * 3, [])
            ir.Operation.create("func.func", regions=1, attributes={
                "sym_name": ir.StringAttr.get(name),
                "function_type": ir.TypeAttr.get(ftype),
                "sym_visibility": ir.StringAttr.get("private")})
