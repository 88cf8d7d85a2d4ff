"""Run-time checks of the compiled code: what verification cannot refuse
because it is known only when the code runs.

Two checks.  The step of an ``scf.for`` computed at run time (from an
input) must be positive, as ``rlx-verify`` requires of a constant step and
the interpreter of any.  ``add_step_checks`` runs on the module
``rlx-to-linalg`` made (``pipeline.lower_to_llvm``); before each such loop

    %r = scf.for %i = %lb to %ub step %s iter_args(...)
becomes
    %m = llvm.mlir.addressof @gradir_check_message_0 : !llvm.ptr
    %w = arith.index_cast %s : index to i64
    func.call @gradir_check_step(%w, %m) : (i64, !llvm.ptr) -> ()
    %ok = arith.cmpi sgt, %s, %c0 : index
    %s1 = arith.select %ok, %s, %c1 : index
    %ub1 = arith.select %ok, %ub, %lb : index
    %r = scf.for %i = %lb to %ub1 step %s1 iter_args(...)

so a bad step runs no trip (a step of 0 looped forever or divided by zero)
and reports the loop: ``@gradir_check_step`` (inlined) calls
``@gradir_check_fail(message, step)``, which calls the function whose
address is in the global ``@gradir_check_hook`` when one is there.  The
message is the loop's location and the words of the other two checks,
``"file:line:col: 'scf.for' op step must be positive, got "``.

The indices of ``rlx.take`` (mode "fast", the default: -n <= i < n on
the taken axis of size n) and the targets of ``rlx.nll_loss`` (0 <= t < C
where t is not ``ignore_index``) must be in range, as the interpreter
requires; the lowered gather clamps an index (it cannot raise), which
gave another answer than the interpreter's error.  ``rlx-to-linalg`` marks
those gathers (``linalg_utils.mark_index_check``); ``add_index_checks``,
next to ``add_step_checks``, puts before each

    %e:2 = linalg.generic (reduction) ins(%i) outs(...)  (min and max of the
           indices widened to i64; nll_loss: an ignored target counts as 0)
    %a = tensor.extract %e#0[] ; %b = tensor.extract %e#1[]
    func.call @gradir_check_index(%a, %b, %least, %bound, %m)

one reduction over the indices; the check
reports the smallest index when it is below ``least`` (-n, or 0), else the
largest when it is ``bound`` (n, or C) or more, with the message
``"file:line:col: 'rlx.take' op index out of range [-5, 5) on axis 0, got "``.
The op then runs with its clamped indices, and the call raises.

The hook is the runtime's (``runtime/check_hook.py``): it records the
failure for the calling thread and the call raises ``ExecutionError``.
The runtime sets it through ``@gradir_check_set_hook_<tag>(ptr)`` in an
ExecutionEngine (one per compiled module: ``<tag>`` keeps the setters of
the parts of a split function apart when their objects are linked into one
library), and directly in a loaded library, where the weak ``@gradir_check_hook``
of every part is one symbol.  Without a hook (another runtime) a bad step
runs no trip and nothing is reported.
"""

from __future__ import annotations

import hashlib

from mlir import ir

__all__ = ["HOOK", "SET_HOOK_PREFIX", "add_index_checks", "add_step_checks", "hook_setters",
           "STEP_MESSAGE"]

HOOK = "gradir_check_hook"
SET_HOOK_PREFIX = "gradir_check_set_hook_"
_FAIL = "gradir_check_fail"
_STEP = "gradir_check_step"
_INDEX = "gradir_check_index"
_MESSAGE = "gradir_check_message_"
STEP_MESSAGE = "'scf.for' op step must be positive, got "

_RUNTIME = """
llvm.mlir.global weak @{hook}() {{addr_space = 0 : i32}} : !llvm.ptr {{
  %0 = llvm.mlir.zero : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}}
llvm.func @{set_hook}(%arg0: !llvm.ptr) {{
  %0 = llvm.mlir.addressof @{hook} : !llvm.ptr
  llvm.store %arg0, %0 : !llvm.ptr, !llvm.ptr
  llvm.return
}}
llvm.func internal @{fail}(%arg0: !llvm.ptr, %arg1: i64) {{
  %0 = llvm.mlir.addressof @{hook} : !llvm.ptr
  %1 = llvm.load %0 : !llvm.ptr -> !llvm.ptr
  %2 = llvm.mlir.zero : !llvm.ptr
  %3 = llvm.icmp "ne" %1, %2 : !llvm.ptr
  llvm.cond_br %3, ^bb1, ^bb2
^bb1:
  llvm.call %1(%arg0, %arg1) : !llvm.ptr, (!llvm.ptr, i64) -> ()
  llvm.br ^bb2
^bb2:
  llvm.return
}}
"""

_STEP_FUNC = """
func.func private @{step}(%arg0: i64, %arg1: !llvm.ptr) {{
  %c0 = arith.constant 0 : i64
  %0 = arith.cmpi sle, %arg0, %c0 : i64
  scf.if %0 {{
    llvm.call @{fail}(%arg1, %arg0) : (!llvm.ptr, i64) -> ()
  }}
  return
}}
"""

_INDEX_FUNC = """
func.func private @{index}(%lo: i64, %hi: i64, %least: i64, %bound: i64, %m: !llvm.ptr) {{
  %0 = arith.cmpi slt, %lo, %least : i64
  %1 = arith.cmpi sge, %hi, %bound : i64
  %2 = arith.ori %0, %1 : i1
  scf.if %2 {{
    %v = arith.select %0, %lo, %hi : i64
    llvm.call @{fail}(%m, %v) : (!llvm.ptr, i64) -> ()
  }}
  return
}}
"""


def _constant_step(loop: ir.Operation) -> bool:
    from ...dialects.verify import constant_index
    return constant_index(loop.operands[2]) is not None


def _location_text(loc: ir.Location) -> str:
    from ... import _compat
    return _compat.format_location(loc)


def _c_bytes(text: str) -> str:
    """``text`` NUL-terminated as an MLIR string literal's body."""
    raw = text.encode() + b"\0"
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                   for b in raw)


def _tag(module: ir.Operation) -> str:
    """A name part telling this module's setter from another module's: the
    digest of its public functions' names (the parts of a split function
    are public functions of different names)."""
    names = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "func.func" or "sym_name" not in op.attributes:
            continue
        vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
        if vis is None or ir.StringAttr(vis).value != "private":
            names.append(ir.StringAttr(op.attributes["sym_name"]).value)
    return hashlib.sha256(",".join(sorted(names)).encode()).hexdigest()[:16]


def add_step_checks(module: ir.Operation) -> int:
    """Adds the run-time check of its step before every ``scf.for`` of
    ``module`` whose step is no constant (see the module's docstring);
    returns how many."""
    from ... import _compat
    module = module.operation if hasattr(module, "operation") else module
    loops = _compat.collect_ops(module, lambda o: o.name == "scf.for")
    loops = [loop for loop in loops if not _constant_step(loop)]
    if not loops:
        return 0
    _add_runtime(module, _STEP, _STEP_FUNC)
    ptr = ir.Type.parse("!llvm.ptr")
    for loop in loops:
        name = _add_message(module, f"{_location_text(loop.location)}: {STEP_MESSAGE}")
        _check_before(loop, name, ptr)
    return len(loops)


def _add_runtime(module: ir.Operation, function: str, text: str) -> None:
    """The hook, its setter, the failure call (once per module) and the
    checking ``function`` (``text``, a template) at the end of ``module``."""
    table = ir.SymbolTable(module)
    if function in table:
        return
    end = ir.InsertionPoint(module.regions[0].blocks[0])
    text = (_RUNTIME.format(hook=HOOK, set_hook=SET_HOOK_PREFIX + _tag(module), fail=_FAIL)
            + text.format(step=_STEP, index=_INDEX, fail=_FAIL))
    with ir.Location.unknown(module.context):
        parsed = ir.Module.parse(text)
        for op in [o.operation for o in parsed.body.operations]:
            if ir.StringAttr(op.attributes["sym_name"]).value in table:
                continue    # (the hook of the other check)
            op.detach_from_parent()
            end.insert(op)


def _add_message(module: ir.Operation, message: str) -> str:
    """A new constant global holding ``message`` (NUL-terminated); its name."""
    table = ir.SymbolTable(module)
    first = 0
    while f"{_MESSAGE}{first}" in table:
        first += 1
    name = f"{_MESSAGE}{first}"
    size = len(message.encode()) + 1
    with ir.Location.unknown(module.context):
        glob = ir.Operation.parse(
            f'llvm.mlir.global internal constant @{name}("{_c_bytes(message)}") '
            f'{{addr_space = 0 : i32}} : !llvm.array<{size} x i8>')
    ir.InsertionPoint(module.regions[0].blocks[0]).insert(glob)
    return name


def add_index_checks(module: ir.Operation) -> int:
    """Adds the run-time range check of the indices of every generic that
    ``rlx-to-linalg`` marked (``linalg_utils.mark_index_check``: the
    gathers of ``rlx.take`` in mode "fast" and of ``rlx.nll_loss``) in
    ``module``, and removes the marks; see the module's docstring.  Returns
    how many."""
    from ... import _compat
    from ..linalg.linalg_utils import INDEX_CHECK
    module = module.operation if hasattr(module, "operation") else module
    found = _compat.collect_ops(module, lambda o: INDEX_CHECK in o.attributes)
    if not found:
        return 0
    _add_runtime(module, _INDEX, _INDEX_FUNC)
    for op in found:
        name, least, bound, ignore, what = list(ir.ArrayAttr(op.attributes[INDEX_CHECK]))
        del op.attributes[INDEX_CHECK]
        ignore = ir.IntegerAttr(ignore).value if isinstance(ignore, ir.IntegerAttr) else None
        message = _add_message(module, f"{_location_text(op.location)}: "
                                       f"'{ir.StringAttr(name).value}' op "
                                       f"{ir.StringAttr(what).value}, got ")
        _check_indices(op, op.operands[0], ir.IntegerAttr(least).value,
                       ir.IntegerAttr(bound).value, ignore, message)
    return len(found)


def _check_indices(op, indices, least: int, bound: int, ignore, message: str) -> None:
    from mlir.dialects import arith
    from ..linalg.linalg_utils import REDUCTION, affine_map, filled, generic, identity_map
    i64 = ir.IntegerType.get_signless(64)
    t = ir.RankedTensorType(indices.type)
    wide = ir.IntegerType(t.element_type).width < 64
    with op.location, ir.InsertionPoint(op):
        def const(value):
            return arith.ConstantOp(i64, ir.IntegerAttr.get(i64, value)).result

        def body(i, lo, hi):
            if wide:
                i = arith.extsi(i64, i)
            if ignore is not None:      # ignored targets count as 0
                i = arith.select(arith.cmpi(arith.CmpIPredicate.eq, i, const(ignore)),
                                 const(0), i)
            return [arith.minsi(lo, i), arith.maxsi(hi, i)]

        scalar = affine_map(t.rank, [])
        ends = generic([indices], [filled([], i64, 2 ** 63 - 1), filled([], i64, -2 ** 63)],
                       [identity_map(t.rank), scalar, scalar], [REDUCTION] * t.rank, body)
        values = [ir.Operation.create("tensor.extract", results=[i64], operands=[v]).results[0]
                  for v in ends]
        address = ir.Operation.create(
            "llvm.mlir.addressof", results=[ir.Type.parse("!llvm.ptr")],
            attributes={"global_name": ir.FlatSymbolRefAttr.get(message)}).results[0]
        ir.Operation.create("func.call", operands=[*values, const(least), const(bound), address],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(_INDEX)})


def _check_before(loop: ir.Operation, message: str, ptr: ir.Type) -> None:
    lb, ub, step = list(loop.operands)[:3]
    t = step.type       # index, or the integer type of an scf.for ... : iN
    i64 = ir.IntegerType.get_signless(64)
    at = ir.InsertionPoint(loop)
    with loop.location:
        def create(name, operands, result=None, **attributes):
            return ir.Operation.create(name, results=[] if result is None else [result],
                                       operands=operands, attributes=attributes, ip=at)

        def constant(n):
            return create("arith.constant", [], t, value=ir.IntegerAttr.get(t, n)).results[0]

        address = create("llvm.mlir.addressof", [], ptr,
                         global_name=ir.FlatSymbolRefAttr.get(message)).results[0]
        wide = step
        if isinstance(t, ir.IndexType):
            wide = create("arith.index_cast", [step], i64).results[0]
        elif ir.IntegerType(t).width < 64:
            wide = create("arith.extsi", [step], i64).results[0]
        create("func.call", [wide, address], callee=ir.FlatSymbolRefAttr.get(_STEP))
        sgt = ir.IntegerAttr.get(i64, 4)
        ok = create("arith.cmpi", [step, constant(0)], ir.IntegerType.get_signless(1),
                    predicate=sgt).results[0]
        safe_step = create("arith.select", [ok, step, constant(1)], t).results[0]
        safe_ub = create("arith.select", [ok, ub, lb], t).results[0]
    loop.operands[1] = safe_ub
    loop.operands[2] = safe_step


def hook_setters(module: ir.Operation) -> list[str]:
    """The names of the hook setters of a lowered module (LLVM dialect):
    what the runtime calls once an ExecutionEngine compiled it."""
    module = module.operation if hasattr(module, "operation") else module
    out = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "llvm.func" and "sym_name" in op.attributes:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if name.startswith(SET_HOOK_PREFIX):
                out.append(name)
    return out
