"""The rlx/grad dialect reference (docs/dialect.md), generated from
``dialect/*.irdl.mlir`` (ops, operands, results, required attributes and each
op's comment) and ``gradir.dialects.infer`` (the kinds of every attribute and
the defaults of the optional ones), so that it cannot drift from them.

    python -m gradir.dialects.reference            # print it
    python -m gradir.dialects.reference --check docs/dialect.md
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

from ..ir import DIALECT_FILES
from .infer import ATTRS, DEFAULTS

__all__ = ["Op", "read_ops", "generate", "main"]

_KIND = {"axes": "array<i64: ...>", "ints": "array<i64: ...>", "int": "i64 (`3 : i64`)",
         "bool": "BoolAttr (`true`)", "float": "f64 (`1.0e-05 : f64`)",
         "str": 'string (`"mean"`)'}


@dataclass
class Op:
    dialect: str
    name: str
    doc: str
    section: str
    operands: list[tuple[str, str]] = field(default_factory=list)   # (name, single|optional|variadic)
    results: list[tuple[str, str]] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)               # declared (required)

    @property
    def full(self) -> str:
        return f"{self.dialect}.{self.name}"


def _values(text: str) -> list[tuple[str, str]]:
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, _, rest = item.partition(":")
        words = rest.split()
        out.append((name.strip(), words[0] if len(words) == 2 else "single"))
    return out


def _collapse(values: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The run groups of the variadic ops (x0 ... x255) as one variadic."""
    if len(values) > 2 and all(v[1] == "variadic" for v in values):
        return [(re.sub(r"\d+$", "", values[0][0]) + "...", "variadic")]
    return values


def read_ops(path) -> list[Op]:
    text = open(path, encoding="utf-8").read()
    dialect = re.search(r"irdl\.dialect @(\w+)", text)[1]
    ops, comment, section = [], [], ""
    current = None
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"// ===== (.*) =====", s)
        if m:
            section, comment = m[1], []
            continue
        if s.startswith("//") and line.startswith("  //"):
            comment.append(s[2:].strip())
            continue
        m = re.match(r"irdl\.operation @(\w+)", s)
        if m:
            doc = " ".join(comment)
            doc = re.sub(rf"^{dialect}\.{m[1]}:\s*", "", doc)
            current = Op(dialect, m[1], doc, section)
            ops.append(current)
            comment = []
            continue
        if current is None:
            continue
        m = re.match(r"irdl\.operands\((.*)\)$", s)
        if m:
            current.operands = _collapse(_values(m[1]))
        m = re.match(r"irdl\.results\((.*)\)$", s)
        if m:
            current.results = _collapse(_values(m[1]))
        m = re.match(r"irdl\.attributes \{(.*)\}$", s)
        if m:
            current.attributes = [a.split("=")[0].strip().strip('"') for a in m[1].split(",")]
        if not s:
            comment = []
    return ops


def _generic_form(op: Op) -> str:
    operands = []
    for name, kind in op.operands:
        if kind == "variadic":
            operands.append(f"%{name.rstrip('.')}0, %{name.rstrip('.')}1, ...")
        elif kind == "optional":
            operands.append(f"[%{name}]")
        else:
            operands.append(f"%{name}")
    attrs = ATTRS.get(op.full, {})
    attr_text = ", ".join(f"{a} = ..." for a, (_, req) in attrs.items() if req)
    opt = [a for a, (_, req) in attrs.items() if not req]
    if opt:
        attr_text += (", " if attr_text else "") + "[" + ", ".join(opt) + "]"
    attr_text = f" {{{attr_text}}}" if attr_text else ""
    if len(op.results) == 1 and op.results[0][1] == "variadic":
        lhs = "%r:N = "
        res = "(type, ...)"
    elif op.results:
        lhs, res = "%r = ", "type"
    else:
        lhs, res = "", "()"
    ins = ", ".join("type, ..." if k == "variadic" else "type" for _, k in op.operands)
    return f'{lhs}"{op.full}"({", ".join(operands)}){attr_text} : ({ins}) -> {res}'


def _section(op: Op) -> list[str]:
    lines = [f"### `{op.full}`", "", op.doc or "(no description)", "",
             "```mlir", _generic_form(op), "```", ""]
    if op.operands:
        lines.append("Operands, in order: " + ", ".join(
            f"`{n}`" + ("" if k == "single" else f" ({k})") for n, k in op.operands) + ".")
    if op.results and not (len(op.results) == 1 and op.results[0][0] == "result"):
        lines.append("Results: " + ", ".join(
            f"`{n}`" + ("" if k == "single" else f" ({k})") for n, k in op.results) + ".")
    attrs = ATTRS.get(op.full, {})
    if attrs:
        lines += ["", "| attribute | kind | required | absent means |", "|---|---|---|---|"]
        for a, (kind, req) in attrs.items():
            default = "" if req else DEFAULTS.get(op.full, {}).get(a, "")
            lines.append(f"| `{a}` | {_KIND[kind]} | {'yes' if req else 'no'} | {default} |")
    lines.append("")
    return lines


def generate() -> str:
    out = ["# The rlx and grad dialects: reference", "",
           "Generated by `python -m gradir.dialects.reference` from "
           "`dialect/rlx.irdl.mlir`, `dialect/grad.irdl.mlir` and "
           "`python/gradir/dialects/infer/` (attribute kinds and defaults); "
           "`test/dialects/reference.mlir` fails when this file is stale.", "",
           "Every op is written in MLIR's generic form, `\"rlx.op\"(operands) {attributes} : "
           "(operand types) -> result types`; IRDL dialects have no custom assembly. "
           "Attributes in `[...]` are optional. Shapes are static; result types must "
           "match what the op infers (`rlx-verify`). Variadic operands (`concat`, `tuple`) "
           "and results (`split`) take any number of values of any types and need no "
           "segment attribute in gradir (upstream `mlir-opt --irdl-file=` needs "
           "`operandSegmentSizes`/`resultSegmentSizes`: see the README).", ""]
    for path in DIALECT_FILES:
        ops = read_ops(path)
        section = None
        out += [f"## `{ops[0].dialect}`", ""]
        for op in ops:
            if op.section != section:
                section = op.section
                out += [f"#### {section}", ""] if section else []
            out += _section(op)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    if argv[:1] == ["--check"] and len(argv) == 2:
        with open(argv[1], encoding="utf-8") as f:
            if f.read() != text:
                print(f"{argv[1]}: error: stale; regenerate with "
                      f"`python -m gradir.dialects.reference > {argv[1]}`", file=sys.stderr)
                return 1
        print("up to date")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
