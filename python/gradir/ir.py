"""Contexts with gradir's dialects loaded; parse and print helpers; the
IR-generic walks every package shares (functions by name, nested ops and
blocks, function types).  Nothing here knows a dialect, except the
natural form of rlx's variadic ops (concat, tuple, split), which the reader
and the printer handle."""

from __future__ import annotations

import re
from pathlib import Path

from mlir import ir
from mlir.dialects import builtin, irdl

from . import _compat

__all__ = ["DIALECT_FILES", "load_dialects", "make_context", "parse", "print_module",
           "as_operation", "VARIADIC_OPS", "MAX_RUNS", "segment_sizes", "strip_segments",
           "symbol_name", "functions", "find_function", "function_type",
           "set_function_type", "walk", "blocks_of", "has_uses", "MAX_NESTING",
           "nesting_problem", "input_problem"]

_DIALECT_DIR = Path(__file__).resolve().parent / "dialect"
DIALECT_FILES = (_DIALECT_DIR / "rlx.irdl.mlir", _DIALECT_DIR / "grad.irdl.mlir")


# --- variadic ops ------------------------------------------------------------
# IRDL binds one type per variadic group, so dialect/rlx.irdl.mlir declares
# concat/tuple (operands) and split (results) with MAX_RUNS variadic groups,
# one per run of consecutive values of equal type, sized by a segment
# attribute.  Users write the natural form without it; the readers add it and
# the printer leaves it out (``print_module(segments=True)`` keeps it: the
# form upstream ``mlir-opt --irdl-file=`` reads).

VARIADIC_OPS = {"rlx.concat": "operandSegmentSizes", "rlx.tuple": "operandSegmentSizes",
                "rlx.split": "resultSegmentSizes"}
MAX_RUNS = 256
_VARIADIC_TEXT = re.compile(r'"rlx\.(?:concat|tuple|split)"')
_SEGMENT_ATTR = re.compile(r"(, )?(?:operand|result)SegmentSizes = array<i32[: 0-9,]*>(, )?")
_VARIADIC_LINE = re.compile(r'"rlx\.(?:concat|tuple|split)"\(')


class TooManyRuns(ValueError):
    """More runs of differently-typed values than the dialect declares."""


def segment_sizes(types, name: str = "rlx.concat") -> ir.Attribute:
    """The segment attribute for variadic values of ``types``: the lengths of
    the runs of equal types, padded with zeros to MAX_RUNS entries."""
    runs: list[int] = []
    last = None
    for i, t in enumerate(types):
        if i and t == last:
            runs[-1] += 1
        else:
            runs.append(1)
        last = t
    if len(runs) > MAX_RUNS:
        raise TooManyRuns(f"'{name}' op has {len(runs)} runs of values of different types; "
                          f"the dialect holds at most {MAX_RUNS} (consecutive values of one "
                          "type count once)")
    return ir.DenseI32ArrayAttr.get(runs + [0] * (MAX_RUNS - len(runs)))


def _add_segments(text: str, source_name: str) -> str | None:
    """``text`` with the segment attributes of every variadic op set, in the
    generic form with locations; None when ``text`` does not parse without
    the rlx dialect (the caller's parse then reports why)."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        try:
            module = _compat.parse_module(text, source_name, ctx)
        except (ir.MLIRError, _compat.ParseError):
            return None
        errors = []

        def visit(op):
            key = VARIADIC_OPS.get(op.name)
            if key is not None:
                values = op.operands if key.startswith("operand") else op.results
                try:
                    op.attributes[key] = segment_sizes([v.type for v in values], op.name)
                except TooManyRuns as err:
                    errors.append((op.location, str(err)))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        if errors:
            loc, msg = errors[0]
            raise _compat.ParseError(_compat.format_location(loc), msg)
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True,
                                        assume_verified=True)


def load_dialects(context: ir.Context | None = None) -> ir.Context:
    """Loads the rlx and grad dialects (IRDL) into ``context`` (default: the
    current one).  Loading twice is a no-op."""
    ctx = context or ir.Context.current
    _compat.skip_dialect_module_lookup(("rlx", "grad"))
    if ctx.is_registered_operation("rlx.add"):
        return ctx
    for path in DIALECT_FILES:
        irdl.load_dialects(ir.Module.parseFile(str(path), context=ctx))
    return ctx


def make_context() -> ir.Context:
    """A new context that knows the upstream dialects plus rlx and grad."""
    ctx = ir.Context()
    load_dialects(ctx)
    return ctx


# Deepest nesting of brackets ({ ( [ <) the tools accept: MLIR's parser and
# gradir's passes recurse per level (5000 nested modules overflow the C++
# stack); real programs stay far below.
MAX_NESTING = 200


_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[{}()\[\]<>]')


def nesting_problem(text: str) -> tuple[int, int] | None:
    """(line, column) where ``text`` first nests brackets deeper than
    ``MAX_NESTING`` (strings and ``//`` comments skipped), or None."""
    depth = 0
    for m in _BRACKETS.finditer(text):
        tok = m.group()
        if tok in "{([<":
            depth += 1
            if depth > MAX_NESTING:
                start = m.start()
                line = text.count("\n", 0, start) + 1
                return line, start - (text.rfind("\n", 0, start) + 1) + 1
        elif tok in "})]>":
            depth = max(0, depth - 1)
    return None


# Text on which MLIR 22's parser aborts the process (an assertion, SIGABRT)
# instead of reporting an error: ``array<index: 1>`` (a dense array of
# ``index``, which has no bit width).  Found outside strings and comments.
_HAZARDS = re.compile(r'(?P<str>"(?:[^"\\\n]|\\.)*")|//[^\n]*|(?P<hit>\barray\s*<\s*index\b)')
_ESCAPE = re.compile(r'\\([0-9a-fA-F]{2}|.)')
_ESCAPED = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}


def _string_bytes(literal: str) -> bytes:
    """The bytes MLIR makes of a string literal (``"a\\C3\\A9"``: its
    ``\\XX`` hex escapes are bytes)."""
    body, out, pos = literal[1:-1], bytearray(), 0
    for m in _ESCAPE.finditer(body):
        out += body[pos:m.start()].encode()
        e = m.group(1)
        out += bytes([int(e, 16)]) if len(e) == 2 else _ESCAPED.get(e, e.encode())
        pos = m.end()
    out += body[pos:].encode()
    return bytes(out)


def _where(text: str, start: int) -> tuple[int, int]:
    line = text.count("\n", 0, start) + 1
    return line, start - (text.rfind("\n", 0, start) + 1) + 1


def input_problem(text: str) -> tuple[int, int, str] | None:
    """(line, column, message) of the first construct in ``text`` that MLIR's
    parser or its Python bindings cannot take without crashing or
    overflowing a stack: nesting deeper than ``MAX_NESTING``, a dense array
    of ``index``, a name whose escapes make bytes that are not UTF-8 (an
    attribute, symbol or op name, a location's file: the bindings cannot
    read it back, an internal error in every pass); or None."""
    where = nesting_problem(text)
    if where is not None:
        return (*where, f"nesting deeper than {MAX_NESTING} levels is not supported")
    for m in _HAZARDS.finditer(text):
        if m.group("hit"):
            return (*_where(text, m.start("hit")),
                    "dense arrays of 'index' are not supported (MLIR's parser aborts on them): "
                    "use array<i64: ...>")
        literal = m.group("str")
        if literal and "\\" in literal and _names_something(text, m.start(), m.end()):
            try:
                _string_bytes(literal).decode("utf-8")
            except UnicodeDecodeError:
                return (*_where(text, m.start("str")),
                        "this name's escapes make bytes that are not UTF-8 text, which gradir "
                        "cannot read")
    return None


# What follows a string that is a name: an attribute name (``"k" = ...``),
# an op name or a name location (``"x"(``), a file location (``"f":1:2``),
# a call site (``"f" at``).  (A string attribute's value may hold any bytes:
# a GPU binary's ``bin = "\\7FELF..."``.)
_NAME_FOLLOWS = re.compile(r'\s*(?:=(?!=)|\()|:\d|\s+at\b')


def _names_something(text: str, start: int, end: int) -> bool:
    """Whether the string literal at ``text[start:end]`` is a name (a symbol,
    an attribute, an op, a location's file) rather than a value."""
    return (start > 0 and text[start - 1] == "@") or \
        _NAME_FOLLOWS.match(text, end) is not None


def parse(text: str, *, source_name: str = "<string>",
          context: ir.Context | None = None) -> builtin.ModuleOp:
    """Parses gradir IR (a module, or several top-level ops) into a module.

    Raises ``mlir.ir.MLIRError`` with located diagnostics on bad input,
    ``TypeError`` when ``text`` is not text (UTF-8 bytes are accepted) and
    ``ValueError`` (located) for what MLIR's parser cannot take safely
    (``input_problem``: nesting deeper than ``MAX_NESTING`` levels, a dense
    array of ``index``)."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise TypeError(f"gradir.parse: the bytes are not UTF-8 text ({err})") from None
    if not isinstance(text, str):
        raise TypeError(f"gradir.parse expects IR text (str), not {type(text).__name__}")
    problem = input_problem(text)
    if problem is not None:
        raise ValueError(f"{source_name}:{problem[0]}:{problem[1]}: {problem[2]}")
    ctx = context
    if ctx is None:
        try:
            ctx = ir.Context.current
        except ValueError:
            ctx = None
        ctx = ctx or make_context()
    load_dialects(ctx)
    if not _VARIADIC_TEXT.search(text):
        return _compat.parse_module(text, source_name, ctx)
    try:
        return _compat.parse_module(text, source_name, ctx)
    except (ir.MLIRError, _compat.ParseError) as err:
        first = err
    segmented = _add_segments(text, source_name)
    if segmented is None:
        raise first
    return _compat.parse_module(segmented, source_name, ctx)


def as_operation(module) -> ir.Operation:
    """The ``ir.Operation`` behind a Module, ModuleOp or any OpView."""
    if isinstance(module, ir.Module):
        return module.operation
    return module.operation if hasattr(module, "operation") else module


def print_module(module, *, generic: bool = False, debug_info: bool = False,
                 segments: bool = False, elide_elements: int | None = None) -> str:
    """The textual IR of ``module`` (byte-identical for identical IR).

    Variadic rlx ops print in the natural form, without their segment
    attribute, unless ``segments`` (the form upstream ``mlir-opt
    --irdl-file=`` reads).  ``elide_elements``: dense constants with more
    elements print as ``dense_resource<__elided__>`` (mlir-opt's
    ``--mlir-elide-elementsattrs-if-larger``)."""
    text = as_operation(module).get_asm(print_generic_op_form=generic,
                                        enable_debug_info=debug_info,
                                        large_elements_limit=elide_elements,
                                        assume_verified=True)
    return text if segments else strip_segments(text)


def strip_segments(text: str) -> str:
    """``text`` with the segment attributes of rlx.concat/tuple/split removed."""
    if not _VARIADIC_LINE.search(text):
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _VARIADIC_LINE.search(line):
            line = _SEGMENT_ATTR.sub(lambda m: ", " if m[1] and m[2] else "", line, count=1)
            lines[i] = line.replace(" {}", "", 1)
    return "\n".join(lines)


# --- walking the IR -----------------------------------------------------------------

def symbol_name(op) -> str:
    """The ``sym_name`` of a symbol op (``func.func``, ``gpu.module``, ...)."""
    return ir.StringAttr(op.attributes["sym_name"]).value


def functions(module, op_name: str = "func.func", nested: bool = False) -> list:
    """The ``op_name`` ops (``func.func`` by default; ``llvm.func``, ...)
    directly in ``module`` (an Operation or OpView), in order; ``nested``:
    also those of the ``builtin.module`` ops nested in it.  Plain
    ``ir.Operation``s, found without wrapping the module's other ops
    (``_compat.child_ops``)."""
    return _compat.child_ops(module, lambda op: op.name == op_name,
                             lambda op: nested and op.name == "builtin.module")


def find_function(module, name: str):
    """The ``func.func`` named ``name`` directly in ``module``, or None."""
    for fn in functions(module):
        if symbol_name(fn) == name:
            return fn
    return None


def function_type(fn) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)


def set_function_type(fn, inputs, results) -> None:
    """Sets ``fn``'s type; ``arg_attrs``/``res_attrs``, when present, are cut or
    padded (with empty dictionaries) to the new counts."""
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(inputs),
                                                                         list(results)))
    for key, n in (("arg_attrs", len(inputs)), ("res_attrs", len(results))):
        if key in fn.attributes:
            old = list(ir.ArrayAttr(fn.attributes[key]))
            old = old[:n] + [ir.DictAttr.get({})] * (n - len(old))
            fn.attributes[key] = ir.ArrayAttr.get(old)


def walk(op, *, descend=None):
    """Every op nested in ``op`` (pre-order, ``op`` excluded).  With
    ``descend``, the ops nested in ``inner`` are visited only when
    ``descend(inner)`` is true."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                yield inner
                # (most ops have no regions: no nested generator for them)
                if len(inner.regions) and (descend is None or descend(inner)):
                    yield from walk(inner, descend=descend)


def blocks_of(op):
    """Every block nested under ``op``, outer blocks before inner ones."""
    for region in op.regions:
        for block in region.blocks:
            yield block
            for inner in block.operations:
                yield from blocks_of(inner.operation)


def has_uses(op) -> bool:
    """Whether any result of ``op`` is used."""
    return any(True for r in op.results for _ in r.uses)
