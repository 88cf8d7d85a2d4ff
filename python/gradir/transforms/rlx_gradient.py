"""rlx-gradient: reverse-mode AD (TVM Relax's Gradient pass, in MLIR), forward
mode and their compositions (JVP, Jacobian, Hessian-vector product, Hessian)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Literal

from mlir import ir
from mlir.dialects import func

from ..autodiff import checkpoint
from ..autodiff.gradient import (GradientError, body_of, clone_function, differentiate,
                                 find_function, function_type, scan_straight,
                                 set_function_type)
from ..autodiff.rules import is_float_type
from ..autodiff.rules._helpers import shared_scalars
from ..autodiff.simplify import paused_gc, simplify_function
from ..autodiff.split import split_forward_backward
from ..dialects import rlx
from ..dialects.verify import verify_module
from ..passes.base import ModulePass, PassOptionError, option
from ..autodiff.cleanup import (drop_dead_carries, drop_dead_records, erase_dead_ops,
                                hoist_invariants)
from ..ir import walk


_LOOPS = ("scf.for", "scf.while")
_FORWARD_MODES = ("jvp", "jacobian", "hvp", "hessian")


def _warn_ignored_attributes(module: ir.Operation, name: str) -> None:
    """A warning for each gradient attribute on an op that does not take it
    (they were silently ignored: hostile-input review): ``grad.checkpoint``
    on anything but a loop, ``grad.save`` / ``grad.recompute`` on an op with
    regions (a loop's states follow its ``grad.checkpoint``)."""
    from .. import _compat
    fn = find_function(module, name)
    if fn is None:
        return
    wanted = ("grad.checkpoint", "grad.save", "grad.recompute")
    for op in _compat.collect_ops(fn, lambda o: any(a in o.attributes for a in wanted)):
        if "grad.checkpoint" in op.attributes and op.name not in _LOOPS:
            _compat.emit(op.location, "warning",
                         f"'grad.checkpoint' on '{op.name}' is ignored: it is the policy of "
                         f"an scf.for or scf.while loop")
        for pin in ("grad.save", "grad.recompute"):
            if pin in op.attributes and len(op.regions):
                _compat.emit(op.location, "warning",
                             f"'{pin}' on '{op.name}' is ignored: pins go on ops without "
                             f"regions (a loop's states follow its 'grad.checkpoint')")


@dataclass(frozen=True)
class RlxGradient(ModulePass):
    """Adds @<func>_adjoint: @<func>'s results followed by the gradients of a scalar target.

    ``mode=adjoint`` (default): ``@main_adjoint(args) -> (results..., grads...)``
    with one gradient per ``wrt`` argument (default: every floating-point
    argument) of result ``target-index`` (a float 0-d tensor).
    ``mode=vjp``: ``@main_vjp(args..., cotangents...) -> (results..., grads...)``
    with one cotangent per result (any shape, several targets).
    ``split=true``: PyTorch-style ``@main_fwd(args) -> (results..., saved...)``
    and ``@main_bwd(saved..., cotangents...) -> grads``.
    ``mode=jvp`` (forward mode): ``@main_jvp(args..., tangent per wrt argument)
    -> (results..., tangent per result)``.
    ``mode=jacobian``: ``@main_jacobian(args) -> (results..., d result / d arg
    per (float result, wrt argument), shaped result.shape + arg.shape)``, one
    batched sweep: forward columns or reverse rows (``jacobian-mode``).
    ``mode=hvp``: ``@main_hvp(args..., v per wrt argument) -> (results..., H v
    per wrt argument)`` (forward over reverse, target ``target-index``).
    ``mode=hessian``: ``@main_hessian(args) -> (results..., d2 target / d arg_i
    d arg_j per (wrt i, wrt j), shaped arg_i.shape + arg_j.shape)``.

    Checkpointing: forward values the backward uses are kept, or recomputed
    in the backward (clones marked ``grad.recomputed``) as chosen by the
    ``grad.start_checkpoint``/``grad.end_checkpoint`` markers (TVM Relax's
    rules), or with ``remat=auto budget=...`` by a planner that keeps the
    adjoint's peak (rlx-memory-report's model) within the budget while
    recomputing the fewest FLOPs.  ``grad.save``/``grad.recompute`` unit
    attributes on forward ops pin the choice; ``remarks=true`` explains it.

        func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
          %0 = "rlx.exp"(%x) ...
          %1 = "rlx.sum"(%0) ...
          return %1
        }
    gains
        func.func @main_adjoint(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
          ... forward ...
          %g = "rlx.ones"() : () -> tensor<f32>
          %b = "rlx.broadcast_to"(%g) ...       // sum's VJP
          %d = "rlx.multiply"(%b, %0) ...       // exp's VJP
          return %1, %d
        }
    """

    name = "rlx-gradient"
    func: str = option("main", "the function to differentiate")
    target_index: int = option(0, "which result is the scalar target (mode=adjoint)")
    wrt: tuple[int, ...] = option((), "argument indices to differentiate with respect to "
                                      "(default: every floating-point argument)")
    mode: Literal["adjoint", "vjp", "jvp", "jacobian", "hvp", "hessian"] = option(
        "adjoint", "adjoint (scalar target), vjp (cotangent per result), jvp (forward mode: "
                   "tangent per wrt argument), jacobian, hvp (Hessian-vector product of the "
                   "target) or hessian")
    jacobian_mode: Literal["auto", "forward", "reverse"] = option(
        "auto", "mode=jacobian: forward columns, reverse rows, or auto (fewer basis "
                "vectors: wrt elements vs float result elements)")
    split: bool = option(False, "emit @<func>_fwd (results + saved values) and "
                                "@<func>_bwd (saved values + cotangents -> gradients)")
    simplify: bool = option(True, "run rlx-simplify-gradient's patterns on the generated "
                                  "function (as TVM's gradient simplifier does)")
    remat: Literal["none", "auto"] = option("none", "none: keep what the grad checkpoint markers keep (everything "
                                "without markers); auto: choose what to recompute to fit "
                                "'budget' with the fewest recomputed FLOPs")
    budget: str = option("", "remat=auto's limit on the adjoint's peak: bytes (1048576, "
                             "64MiB) or a fraction of the store-everything peak (0.25, 25%)")
    remarks: bool = option(False, "explain each keep/recompute decision with a remark")

    def check_options(self):
        if self.mode in _FORWARD_MODES:
            for opt, on in (("split", self.split), ("remat", self.remat != "none")):
                if on:
                    raise PassOptionError(f"option '{opt}' of pass 'rlx-gradient' is only "
                                          f"used with mode=adjoint or mode=vjp")
        if self.jacobian_mode != "auto" and self.mode != "jacobian":
            raise PassOptionError("option 'jacobian-mode' of pass 'rlx-gradient' is only "
                                  "used with mode=jacobian")
        if self.remat == "auto" and not self.budget:
            raise PassOptionError("remat=auto needs a budget (bytes, or a fraction of the "
                                  "store-everything peak), e.g. budget=0.5")
        if self.budget and self.remat != "auto":
            raise PassOptionError("option 'budget' of pass 'rlx-gradient' is only used with "
                                  "remat=auto")
        if self.budget:
            from ..autodiff.remat import parse_budget
            try:
                parse_budget(self.budget)
            except ValueError:
                raise PassOptionError(f"option 'budget' of pass 'rlx-gradient' expects bytes "
                                      f"(1048576, 64MiB) or a fraction (0.25, 25%), got "
                                      f"'{self.budget}'") from None

    def apply(self, module: ir.Operation) -> None:
        # The rules assume valid ops (gradir.parse and the builders do not
        # run rlx-verify): a strided_slice with a repeated axis gave a
        # "gradient" of another shape than its argument (hostile-input review).
        errors = verify_module(module)
        for loc, message in errors:
            self.error(loc, message)
        if errors:
            raise self.failure()
        _warn_ignored_attributes(module, self.func)
        try:
            with paused_gc(), rlx.inference_memo():
                self._apply(module)
        except GradientError as err:
            self.error(err.where, err.message)
            raise self.failure() from None

    def _apply(self, module: ir.Operation) -> None:
        fn = find_function(module, self.func)
        if fn is None:
            raise GradientError(module, f"rlx-gradient: no function named '@{self.func}' "
                                        "in the module")
        if len(fn.regions[0].blocks) == 0:
            raise GradientError(fn, f"rlx-gradient: '@{self.func}' is a declaration "
                                    "without a body")
        ftype = function_type(fn)
        inputs, outputs = list(ftype.inputs), list(ftype.results)
        wrt = self._check_wrt(fn, inputs)
        if self.mode in _FORWARD_MODES:
            self._apply_forward(module, fn, wrt, outputs)
            return
        vjp_like = self.mode == "vjp" or self.split
        if not vjp_like:
            self._check_target(fn, outputs)
        suffix = "vjp" if vjp_like else "adjoint"
        new_name = f"{self.func}_{suffix}" if not self.split else f"{self.func}__split_tmp"
        for taken in ([new_name] if not self.split else
                      [f"{self.func}_fwd", f"{self.func}_bwd"]):
            if find_function(module, taken) is not None:
                raise GradientError(fn, f"rlx-gradient: '@{taken}' already exists")

        object.__setattr__(self, "_loop_budget", None)
        loop_marks = self._loop_policies(module, fn) if self.remat == "auto" else []
        new = clone_function(fn, new_name)
        for op in loop_marks:   # @main stays untouched; its clone keeps the choice
            del op.attributes["grad.checkpoint"]
        block = body_of(new)
        scan = scan_straight(block)     # (one read of a body of rlx ops)
        marked = checkpoint.may_be_marked(block) if scan is None else scan[2]
        cot_args = []
        if vjp_like:
            for t in outputs:
                cot_args.append(block.add_argument(t, new.location))

        def seeds_for(results):
            if vjp_like:
                return {r: c for r, c in zip(results, cot_args)}
            target = results[self.target_index]
            rt = ir.RankedTensorType(target.type)
            with new.location:
                return {target: rlx.ones([], rt.element_type)}

        # A straight-line body (no region ops, no calls to inline) is
        # differentiated at the end of its one block: there the rules may
        # share their scalar constants, which rlx-cse would merge anyway.
        share = self.simplify and (scan is not None or not any(
            len(op.regions) or op.name == "func.call" for op in block.operations))
        if scan is None or scan[1]:
            # the control-flow adjoints (scf.for/if/while, and the hooks that
            # drop grad.* marks) register on import: a straight-line body of
            # unmarked rlx ops does without them (issue 14, compile time:
            # ~6 ms of the MLP step's first call, mlir.dialects.scf with them)
            from ..autodiff import scf  # noqa: F401
        with rlx.recording() as records, \
                (shared_scalars() if share else contextlib.nullcontext()):
            # (the simplifier reads the new ops from ``records``)
            results, grads = differentiate(module, new, seeds_for, wrt, scan)
        if marked and checkpoint.has_markers(block):
            checkpoint.validate_markers(block)
        with ir.InsertionPoint(block), new.location:
            func.ReturnOp(results + grads)
        set_function_type(new, [a.type for a in block.arguments],
                          [v.type for v in results + grads])
        # Rules build adjoints for every operand; those of operands outside
        # `wrt` (and forward values nothing uses) are dead.
        if self.simplify:
            simplify_function(new, dce_first=True, records=records)
        else:
            erase_dead_ops(block)
        if scan is None and any(op.name in _LOOPS for op in walk(new)):
            self._tidy_loops(new)
        self._checkpoint(module, new, len(outputs), unmarked=not marked)
        if self.split:
            split_forward_backward(module, new, self.func, n_inputs=len(inputs),
                                   n_results=len(outputs))

    def _tidy_loops(self, fn: ir.Operation) -> None:
        """The forward loops record no state that the backward does not read
        (a result filled by ``tensor.insert_slice`` is pushed whole per
        iteration otherwise), and the loops' invariant rlx ops move out."""
        changed = drop_dead_records(fn)
        changed += hoist_invariants(fn)
        if not changed:
            return
        if self.simplify:
            simplify_function(fn)
        else:
            erase_dead_ops(body_of(fn))

    # -- forward mode and compositions -----------------------------------------
    def _apply_forward(self, module: ir.Operation, fn: ir.Operation, wrt: list[int],
                       outputs: list) -> None:
        from ..autodiff import compose
        name = f"{self.func}_{self.mode}"
        if find_function(module, name) is not None:
            raise GradientError(fn, f"rlx-gradient: '@{name}' already exists")
        if self.mode in ("hvp", "hessian"):
            self._check_target(fn, outputs)

        def reverse(src: ir.Operation, mode: str, wrt_: list[int]) -> ir.Operation:
            """``@src``'s adjoint or VJP under a private name (erased by the caller)."""
            from ..ir import symbol_name
            tmp = compose.unique_name(module, f"{symbol_name(src)}__rev", ("", f"_{mode}"))
            clone = clone_function(src, tmp)
            try:
                RlxGradient(func=tmp, target_index=self.target_index, wrt=tuple(wrt_),
                            mode=mode, simplify=self.simplify)._apply(module)
            finally:
                clone.erase()
            return find_function(module, f"{tmp}_{mode}")

        from ..ir import functions, symbol_name
        before = {symbol_name(f) for f in functions(module)}
        try:
            if self.mode == "jvp":
                new = compose.jvp(module, fn, name, wrt)
            elif self.mode == "jacobian":
                new = compose.jacobian(module, fn, name, wrt, self.jacobian_mode, reverse)
            elif self.mode == "hvp":
                new = compose.hvp(module, fn, name, wrt, reverse)
            else:
                new = compose.hessian(module, fn, name, wrt, reverse)
        except BaseException:
            for f in functions(module):     # no scratch function stays behind
                if symbol_name(f) not in before:
                    f.erase()
            raise
        new.attributes["sym_name"] = ir.StringAttr.get(name)
        erase_dead_ops(body_of(new))
        drop_dead_carries(new)
        if self.simplify:
            simplify_function(new, dce_first=True)
        else:
            erase_dead_ops(body_of(new))

    # -- loops under remat=auto -------------------------------------------------
    def _loop_policies(self, module: ir.Operation, fn: ir.Operation) -> list:
        """Chooses the checkpointing policy of @func's loops for the budget
        (autodiff/scf/auto.py) by building trial adjoints; marks the loops
        of ``fn`` and returns the marked ops."""
        from ..autodiff.memory import memory_report
        from ..autodiff.scf.auto import choose_loop_policies, _loops

        free = _loops(fn)
        if not free:
            return []
        trial_pass = RlxGradient(func=self.func, target_index=self.target_index, wrt=self.wrt,
                                 mode=self.mode, simplify=self.simplify)
        suffix = "vjp" if self.mode == "vjp" else "adjoint"    # trials never split

        def peak_of() -> int:
            scratch = module.clone()
            trial_pass._apply(scratch)
            peak = memory_report(find_function(scratch, f"{self.func}_{suffix}"),
                                 module=scratch).peak
            scratch.erase()
            return peak

        from ..autodiff.remat import parse_budget
        budget = parse_budget(self.budget)
        chosen, peak, base = choose_loop_policies(fn, peak_of, budget)
        if budget[0] == "fraction":   # the straight-line planner: same bytes
            object.__setattr__(self, "_loop_budget", ("bytes", budget[1] * base))
        if self.remarks:
            for i, op in enumerate(free):
                self.remark(op, f"rlx-gradient: remat=auto checkpoints this loop with policy "
                                f"\"{chosen[i]}\" (adjoint peak {peak} bytes; every state "
                                f"stored: {base} bytes)")
        return [op for i, op in enumerate(free) if chosen[i] != "all"]

    # -- checkpointing ---------------------------------------------------------
    def _checkpoint(self, module: ir.Operation, fn: ir.Operation, n_results: int,
                    unmarked: bool = False) -> None:
        """Keeps or recomputes the forward values the backward uses
        (``checkpoint.plan_checkpoints``) and reports why."""
        budget = None
        if self.remat == "auto":
            from ..autodiff.remat import parse_budget
            budget = getattr(self, "_loop_budget", None) or parse_budget(self.budget)
        plan = checkpoint.plan_checkpoints(module, fn, n_results, self.remat, budget,
                                           self.remarks, unmarked=unmarked)
        if plan is None:
            return
        plan.apply()
        for d in plan.diagnostics:
            (self.warning if d.severity == "warning" else self.remark)(d.where, d.message)

    def _check_wrt(self, fn: ir.Operation, inputs: list) -> list[int]:
        if not self.wrt:
            return [i for i, t in enumerate(inputs) if is_float_type(t)]
        seen = set()
        for i in self.wrt:
            if not 0 <= i < len(inputs):
                raise GradientError(fn, f"rlx-gradient: wrt index {i} is out of range: "
                                        f"'@{self.func}' has {len(inputs)} arguments")
            if i in seen:
                raise GradientError(fn, f"rlx-gradient: wrt index {i} is given twice")
            if not is_float_type(inputs[i]):
                raise GradientError(fn, f"rlx-gradient: wrt argument {i} has type "
                                        f"{inputs[i]}, which is not floating point")
            seen.add(i)
        return list(self.wrt)

    def _check_target(self, fn: ir.Operation, outputs: list) -> None:
        ret = body_of(fn).operations[-1].operation
        if not 0 <= self.target_index < len(outputs):
            raise GradientError(ret, f"rlx-gradient: target-index {self.target_index} is out "
                                     f"of range: '@{self.func}' has {len(outputs)} results")
        t = outputs[self.target_index]
        if not isinstance(t, ir.RankedTensorType) or not is_float_type(t):
            raise GradientError(ret, f"rlx-gradient: the target (result {self.target_index}) "
                                     f"must be a floating-point 0-d tensor, not {t} "
                                     "(use mode=vjp for other results)")
        if ir.RankedTensorType(t).rank != 0:
            raise GradientError(ret, f"rlx-gradient: the target (result {self.target_index}) "
                                     f"must be a 0-d tensor, not {t} "
                                     "(reduce it with rlx.sum, or use mode=vjp)")
