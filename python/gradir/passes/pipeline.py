"""Textual pass pipelines that mix gradir passes and upstream MLIR passes.

``builtin.module(rlx-dce,canonicalize,func.func(cse),rlx-gradient{func=main})``
is split into elements; gradir passes become Python passes with their typed
options, everything else goes to upstream MLIR's pipeline parser unchanged.
A gradir pass nested under ``func.func(...)`` runs on each ``func.func``.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass

from mlir import ir
from mlir.passmanager import PassManager

from .. import _compat
from .base import PassFailure, PassOptionError
from .registry import PASSES, get_pass_class

__all__ = ["PipelineError", "Element", "IrPrinting", "parse_pipeline", "parse_options",
           "build_pass_manager", "add_to_pass_manager"]


class PipelineError(ValueError):
    """A pipeline string that does not parse, names an unknown pass, or has a
    bad option.  ``column`` is 1-based within the pipeline text."""

    def __init__(self, message: str, column: int = 1):
        super().__init__(message)
        self.message = message
        self.column = column

    def diagnostic(self) -> str:
        return f"<pass-pipeline>:1:{self.column}: error: {self.message}"


@dataclass
class Element:
    name: str
    options: str | None = None          # text between { }, without braces
    children: list["Element"] | None = None
    column: int = 1
    text: str = ""                      # the element's own text

    def has_gradir_pass(self) -> bool:
        if self.children is None:
            return self.name in PASSES
        return any(c.has_gradir_pass() for c in self.children)

    def pass_names(self) -> set[str]:
        if self.children is None:
            return {self.name}
        return set().union(*(c.pass_names() for c in self.children))


@dataclass
class IrPrinting:
    """``--mlir-print-ir-before=<pass>`` / ``--mlir-print-ir-after=<pass>``:
    the module is printed to stderr around every pipeline element that runs a
    pass of these names (around the whole ``func.func(...)`` group for a
    nested upstream pass)."""
    before: frozenset = frozenset()
    after: frozenset = frozenset()
    print_ir = None          # fn(op) -> str


def parse_pipeline(text: str) -> list[Element]:
    """Parses ``a,b{x=1},op(c,d)`` into elements (no semantic checks)."""
    elements, pos = _parse_list(text, 0, top=True)
    if pos != len(text):
        raise PipelineError(f"unexpected '{text[pos]}' in pass pipeline", pos + 1)
    return elements


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _parse_list(text: str, pos: int, top: bool) -> tuple[list[Element], int]:
    out: list[Element] = []
    pos = _skip_ws(text, pos)
    if pos < len(text) and text[pos] == ")" and not top:
        return out, pos
    while True:
        elem, pos = _parse_element(text, pos)
        out.append(elem)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        return out, pos


def _parse_element(text: str, pos: int) -> tuple[Element, int]:
    pos = _skip_ws(text, pos)
    start = pos
    while pos < len(text) and (text[pos].isalnum() or text[pos] in "-_."):
        pos += 1
    name = text[start:pos]
    if not name:
        what = f"'{text[pos]}'" if pos < len(text) else "end of string"
        raise PipelineError(f"expected a pass name, found {what}", pos + 1)
    elem = Element(name=name, column=start + 1)
    pos = _skip_ws(text, pos)
    if pos < len(text) and text[pos] == "{":
        end = _matching(text, pos, "{", "}")
        elem.options = text[pos + 1:end]
        pos = end + 1
    elif pos < len(text) and text[pos] == "(":
        elem.children, pos = _parse_list(text, pos + 1, top=False)
        pos = _skip_ws(text, pos)
        if pos >= len(text) or text[pos] != ")":
            raise PipelineError(f"expected ')' to close '{name}('", pos + 1)
        pos += 1
    elem.text = text[start:pos]
    return elem, pos


def _matching(text: str, pos: int, open_: str, close: str) -> int:
    depth = 0
    quote = None
    for i in range(pos, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i
    raise PipelineError(f"missing '{close}' for '{open_}'", pos + 1)


def parse_options(text: str | None, pass_name: str = "") -> dict[str, str]:
    """``"func=main target-index=0 wrt=0,2"`` -> ``{"func": "main", ...}``;
    an option given twice is a ``PassOptionError``."""
    out: dict[str, str] = {}
    if not text:
        return out
    pos = 0
    while True:
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            return out
        start = pos
        depth, quote = 0, None
        while pos < len(text):
            ch = text[pos]
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch in "{[(":
                depth += 1
            elif ch in "}])":
                depth -= 1
            elif ch.isspace() and depth == 0:
                break
            pos += 1
        token = text[start:pos]
        key, eq, value = token.partition("=")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key in out:
            raise PassOptionError(f"option '{key}' of pass '{pass_name}' is given twice")
        out[key] = value if eq else "true"


def _instantiate(elem: Element):
    cls = get_pass_class(elem.name)
    try:
        return cls.from_options(parse_options(elem.options, elem.name))
    except PassOptionError as err:
        raise PipelineError(str(err), elem.column) from None


def _check_anchor(elem: Element, context: ir.Context | None) -> None:
    """A nested pipeline's anchor must name a registered op (mlir-opt runs
    nothing, silently, under a misspelt one)."""
    if context is not None and not context.is_registered_operation(elem.name):
        raise PipelineError(f"'{elem.name}' does not name a registered operation, so the "
                            f"pipeline nested under it would never run", elem.column)


def _check_level(instance, elem: Element, scope: tuple[str, ...]) -> None:
    anchor = type(instance).anchor
    where = scope[-1] if scope else "builtin.module"
    if anchor is not None and where != anchor:
        raise PipelineError(f"'{elem.name}' runs on '{anchor}' (it needs the whole module), "
                            f"not on each '{where}': put it at the top level of the pipeline, "
                            f"outside '{where}(...)'", elem.column)


def _check_upstream_options(elem: Element) -> None:
    """Upstream MLIR takes the last of repeated options; gradir refuses them."""
    if elem.children is not None:
        for child in elem.children:
            _check_upstream_options(child)
        return
    try:
        options = parse_options(elem.options, elem.name)
    except PassOptionError as err:
        raise PipelineError(str(err), elem.column) from None
    for key, wrap in _NESTED_PIPELINE_OPTIONS.get(elem.name, ()):
        if options.get(key):
            _check_nested_pipeline(elem, key, wrap.format(options[key]))


# Upstream pass options that are pipelines themselves, and how to check one
# as a whole pipeline: the inliner ignores a nested pipeline it cannot parse
# (it printed an error and ran on, exit 0).
_NESTED_PIPELINE_OPTIONS = {
    "inline": (("default-pipeline", "builtin.module(func.func({}))"),
               ("op-pipelines", "builtin.module({})")),
}


def _check_nested_pipeline(elem: Element, key: str, text: str) -> None:
    with ir.Context():
        try:
            PassManager.parse(text)
        except (ValueError, ir.MLIRError) as err:
            lines = [ln for ln in str(err).strip().splitlines() if "error:" in ln] \
                or str(err).strip().splitlines() or ["cannot be parsed"]
            detail = lines[-1].split("error:", 1)[-1].strip()
            raise PipelineError(f"option '{key}' of pass '{elem.name}': {detail}",
                                elem.column) from None


def _expansion(instance, elem: Element) -> str | None:
    """A pass may stand for a whole pipeline (``expand()``): one that loads
    dialects, which a pass must not do while the pass manager runs."""
    try:
        return instance.expand()
    except PassOptionError as err:
        raise PipelineError(str(err), elem.column) from None


def _make_runner(instance, scope: tuple[str, ...]):
    def run(op: ir.Operation) -> None:
        targets = [op] if not scope else list(_nested(op, scope))
        try:
            with op.context, op.location:
                for target in targets:
                    instance.apply(target)
        except PassFailure:
            raise
        except Exception as exc:  # an internal error must not escape as a traceback
            if os.environ.get("GRADIR_DEBUG"):
                traceback.print_exc(file=sys.stderr)
            _compat.emit(op.location, "error",
                         f"internal error in pass '{instance.name}': "
                         f"{type(exc).__name__}: {exc} (set GRADIR_DEBUG=1 for a traceback)")
            raise PassFailure(instance.name) from None
    return run


def _nested(op: ir.Operation, scope: tuple[str, ...]):
    first, rest = scope[0], scope[1:]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                if inner.name != first:
                    continue
                if rest:
                    yield from _nested(inner, rest)
                else:
                    yield inner


def _wrap(scope: tuple[str, ...], text: str) -> str:
    for name in reversed(scope):
        text = f"{name}({text})"
    return text


def _printer(pm: PassManager, printing: IrPrinting | None, elem: Element, when: str) -> None:
    if printing is None:
        return
    names = sorted(elem.pass_names() & (printing.before if when == "Before" else printing.after))
    for name in names:
        header = f"// -----// IR Dump {when} {name} ({name}) //----- //"

        def run(op, header=header):
            print(header, file=sys.stderr)
            print(printing.print_ir(op), file=sys.stderr)
        _compat.add_python_pass(pm, run, f"print-ir-{when.lower()}-{name}",
                                "prints the IR (--mlir-print-ir-before/after)")


def add_to_pass_manager(pm: PassManager, elements: list[Element],
                        scope: tuple[str, ...] = (), context: ir.Context | None = None,
                        printing: IrPrinting | None = None) -> None:
    """Adds parsed pipeline elements to ``pm`` (anchored on builtin.module)."""
    if context is None:
        try:
            context = ir.Context.current
        except ValueError:
            context = None
    for elem in elements:
        if elem.children is not None:
            _check_anchor(elem, context)
            if elem.name == "builtin.module" and not scope:
                # The pass manager is anchored on the module itself: its
                # passes go in directly, not in a nested builtin.module.
                add_to_pass_manager(pm, elem.children, scope, context, printing)
            elif not elem.has_gradir_pass():
                _check_nested_anchors(elem.children, context)
                _check_upstream_options(elem)
                _printer(pm, printing, elem, "Before")
                _add_upstream(pm, _wrap(scope, elem.text), elem)
                _printer(pm, printing, elem, "After")
            else:
                add_to_pass_manager(pm, elem.children, scope + (elem.name,), context,
                                    printing)
            continue
        if elem.name in PASSES:
            instance = _instantiate(elem)
            expanded = _expansion(instance, elem)
            if expanded is not None:
                if scope:
                    raise PipelineError(f"'{elem.name}' with these options expands into a "
                                        "module-level pipeline; put it at the top level",
                                        elem.column)
                _printer(pm, printing, elem, "Before")
                add_to_pass_manager(pm, parse_pipeline(expanded), scope, context, printing)
                _printer(pm, printing, elem, "After")
                continue
            _check_level(instance, elem, scope)
            if context is not None:
                instance.prepare(context)
            _printer(pm, printing, elem, "Before")
            _compat.add_python_pass(pm, _make_runner(instance, scope), instance.name,
                                    instance.description())
            _printer(pm, printing, elem, "After")
            continue
        _check_upstream_options(elem)
        _printer(pm, printing, elem, "Before")
        _add_upstream(pm, _wrap(scope, elem.text), elem)
        _printer(pm, printing, elem, "After")


def _check_nested_anchors(elements: list[Element], context: ir.Context) -> None:
    for elem in elements:
        if elem.children is not None:
            _check_anchor(elem, context)
            _check_nested_anchors(elem.children, context)


def _add_upstream(pm: PassManager, text: str, elem: Element) -> None:
    try:
        _compat.add_textual_pass(pm, text)
    except (ValueError, ir.MLIRError) as err:
        msg = str(err).strip().splitlines()[-1] if str(err).strip() else ""
        if "does not refer to a registered pass" in str(err) or not msg:
            msg = (f"'{elem.name}' does not refer to a registered pass or pass pipeline "
                   f"(see gradir-opt --list-passes)")
        raise PipelineError(msg, elem.column) from None


def build_pass_manager(pipeline: str, context: ir.Context,
                       printing: IrPrinting | None = None) -> PassManager:
    """A PassManager on ``builtin.module`` running ``pipeline``."""
    text = pipeline.strip()
    pm = PassManager("builtin.module", context=context)
    if not text:
        return pm
    elements = parse_pipeline(text)
    for elem in elements:
        if elem.children is None:
            continue                # a bare list of passes runs on the module
        if elem.name not in ("builtin.module", "any"):
            raise PipelineError(f"can't run '{elem.name}' pass manager on 'builtin.module' "
                                "op", elem.column)
        if len(elements) != 1:
            raise PipelineError(f"'{elem.name}(...)' must be the whole pipeline",
                                elem.column)
    if len(elements) == 1 and elements[0].name == "any" and elements[0].children is not None:
        top = elements[0]
        elements = [Element("builtin.module", top.options, top.children, top.column, top.text)]
    add_to_pass_manager(pm, elements, context=context, printing=printing)
    return pm
