"""How many kernels one call of a host function launches, counted statically.

On a module lowered to the ``kernels`` stage
(``lower_to_nvvm(module, stop_after="kernels")``: host functions whose
bodies allocate, copy and ``gpu.launch``)::

    launches_per_call(module_op, "main_adjoint")     # -> 42
    launch_breakdown(module_op, "main_adjoint")
    # -> {"launches": 42, "kinds": {"gemm": 9, "elementwise": 20, ...},
    #     "memcpy": 9, "memset": 0, "exact": True}

Counting rules (no run-time values are known):

* every ``gpu.launch`` counts once per execution of the block it is in;
  its body (the kernel) is not looked into;
* ``scf.for`` multiplies its body by its trip count when lower bound,
  upper bound and step are constants; otherwise the body counts once;
* ``scf.if``: both branches count (an upper bound: e.g. the first-call
  upload of ``keep_resident`` arguments, which later calls skip);
* ``scf.while``: its regions count once (one trip);
* ``func.call`` of another host function of the module counts that
  function's launches (recursion counts once);
* ``gpu.memcpy`` and ``gpu.memset`` are counted apart from the launches.

``exact`` is False when an ``scf.if``, an ``scf.while`` or a non-constant
``scf.for`` held something counted (the numbers are then an estimate: an
upper bound for ``scf.if``).  The kind of a kernel is the middle of its
name, ``@<function>_<kind>_<n>`` (``gemm``, ``reduce``, ``elementwise``,
...; ``gradir.conversion.gpu.kernels.common.Namer``), taken from the
launch's ``function`` attribute; a launch without one counts as
``"kernel"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir

from ...dialects.verify import constant_index

__all__ = ["launches_per_call", "launch_breakdown", "LaunchCount", "count_lowered"]


@dataclass
class LaunchCount:
    launches: int = 0
    kinds: dict = field(default_factory=dict)
    memcpy: int = 0
    memset: int = 0
    exact: bool = True

    def add(self, other: "LaunchCount", times: int = 1) -> None:
        self.launches += other.launches * times
        for k, v in other.kinds.items():
            self.kinds[k] = self.kinds.get(k, 0) + v * times
        self.memcpy += other.memcpy * times
        self.memset += other.memset * times
        self.exact &= other.exact

    def empty(self) -> bool:
        return not (self.launches or self.memcpy or self.memset)

    def as_dict(self) -> dict:
        return {"launches": self.launches, "kinds": dict(sorted(self.kinds.items())),
                "memcpy": self.memcpy, "memset": self.memset, "exact": self.exact}


def _op(x) -> ir.Operation:
    return x.operation if hasattr(x, "operation") else x


def _functions(module: ir.Operation) -> dict[str, ir.Operation]:
    out = {}
    for op in module.regions[0].blocks[0].operations:
        op = _op(op)
        if op.name == "func.func" and len(op.regions[0].blocks) > 0:
            out[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return out


def _kind(launch: ir.Operation, fn_name: str) -> str:
    if "function" not in launch.attributes:
        return "kernel"
    name = ir.FlatSymbolRefAttr(launch.attributes["function"]).value
    name = re.sub(r"_\d+$", "", name)
    if name.startswith(fn_name + "_"):
        return name[len(fn_name) + 1:] or "kernel"
    return name


class _Counter:
    def __init__(self, module: ir.Operation):
        self.functions = _functions(module)
        self.memo: dict[str, LaunchCount] = {}
        self.active: set[str] = set()

    def function(self, name: str) -> LaunchCount:
        if name in self.memo:
            return self.memo[name]
        if name in self.active:          # recursion: counted once
            return LaunchCount()
        self.active.add(name)
        count = self.region(self.functions[name].regions[0], name)
        self.active.discard(name)
        self.memo[name] = count
        return count

    def region(self, region, fn_name: str) -> LaunchCount:
        count = LaunchCount()
        for block in region.blocks:
            for op in block.operations:
                self.op(_op(op), fn_name, count)
        return count

    def op(self, op: ir.Operation, fn_name: str, count: LaunchCount) -> None:
        name = op.name
        if name == "gpu.launch":
            count.launches += 1
            kind = _kind(op, fn_name)
            count.kinds[kind] = count.kinds.get(kind, 0) + 1
            return
        if name == "gpu.memcpy":
            count.memcpy += 1
            return
        if name == "gpu.memset":
            count.memset += 1
            return
        if name in ("func.call", "func.call_indirect"):
            if name == "func.call":
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                if callee in self.functions:
                    count.add(self.function(callee))
            return
        if name == "gpu.func" or name == "gpu.module":
            return
        inner = [self.region(r, fn_name) for r in op.regions]
        if not inner:
            return
        if name == "scf.for":
            lb, ub, step = (constant_index(op.operands[i]) for i in range(3))
            body = inner[0]
            if None in (lb, ub, step) or step <= 0:
                count.add(body)
                count.exact &= body.empty()
            else:
                count.add(body, max(0, -(-(ub - lb) // step)))
            return
        if name in ("scf.if", "scf.while", "scf.index_switch", "scf.execute_region"):
            for r in inner:
                count.add(r)
                if name != "scf.execute_region":
                    count.exact &= r.empty()
            return
        for r in inner:                  # any other region: once
            count.add(r)


def launch_breakdown(module_op, fn_name: str) -> dict:
    """``{"launches", "kinds", "memcpy", "memset", "exact"}`` of one call
    of host function ``@fn_name`` (see the module docstring)."""
    module = _op(module_op)
    counter = _Counter(module)
    if fn_name not in counter.functions:
        raise KeyError(f"no host function @{fn_name} (functions: "
                       f"{', '.join(sorted(counter.functions))})")
    return counter.function(fn_name).as_dict()


def launches_per_call(module_op, fn_name: str) -> int:
    """The ``gpu.launch`` ops one call of ``@fn_name`` executes."""
    return launch_breakdown(module_op, fn_name)["launches"]


def count_lowered(module, fn_names=None, **options) -> dict[str, dict]:
    """``launch_breakdown`` of each function of ``fn_names`` (default:
    every host function) on a copy of rlx ``module`` lowered to the
    kernels stage with ``lower_to_nvvm`` ``options`` (keep_resident, ...);
    ``module`` is not changed."""
    from ...ir import as_operation, make_context, print_module
    from .nvvm import lower_to_nvvm

    src = as_operation(module)
    with make_context():
        copy = ir.Module.parse(print_module(src, debug_info=True, segments=True))
        lower_to_nvvm(copy.operation, stop_after="kernels", **options)
        names = fn_names or sorted(_functions(copy.operation))
        return {n: launch_breakdown(copy.operation, n) for n in names}
