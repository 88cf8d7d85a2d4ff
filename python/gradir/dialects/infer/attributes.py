"""Attributes as Python values, and the checks of their kinds (``ATTRS``)."""

from __future__ import annotations

from mlir import ir


def _py_value(attr: ir.Attribute):
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return [int(v) for v in attr]
    if isinstance(attr, ir.BoolAttr):
        return bool(attr.value)
    if isinstance(attr, ir.IntegerAttr):
        return int(attr.value)
    if isinstance(attr, ir.FloatAttr):
        return float(attr.value)
    if isinstance(attr, ir.StringAttr):
        return attr.value
    if isinstance(attr, ir.TypeAttr):
        return attr.value
    return attr


def attributes_of(op) -> dict:
    """The attributes of ``op`` (an Operation or OpView) as Python values;
    attributes of other kinds are returned as ``ir.Attribute``."""
    return {name: _py_value(attr) for name, attr in raw_attributes(op).items()}


def raw_attributes(op) -> dict:
    """The attributes of ``op`` as ``{name: ir.Attribute}``."""
    op = op.operation if hasattr(op, "operation") else op
    out = {}
    for item in op.attributes:
        if isinstance(item, str):
            out[item] = op.attributes[item]
        else:
            out[item.name] = item.attr
    return out


def attribute_kind_ok(kind: str, attr: ir.Attribute) -> bool:
    """Whether ``attr`` has the form that attribute ``kind`` requires."""
    if kind in ("axes", "ints"):
        return isinstance(attr, ir.DenseI64ArrayAttr)
    if kind == "bool":
        return isinstance(attr, ir.BoolAttr)
    if kind == "int":
        return (isinstance(attr, ir.IntegerAttr) and not isinstance(attr, ir.BoolAttr)
                and str(attr.type) == "i64")
    if kind == "float":
        return isinstance(attr, ir.FloatAttr) and str(attr.type) == "f64"
    if kind == "str":
        if not isinstance(attr, ir.StringAttr):
            return False
        try:                   # escapes can make bytes that are not UTF-8 ("\FF")
            attr.value
        except (RuntimeError, UnicodeDecodeError):
            return False
        return True
    raise AssertionError(kind)


KIND_SPELLING = {"axes": "array<i64>", "ints": "array<i64>", "int": "i64 integer",
                 "bool": "BoolAttr", "float": "f64 float", "str": "string"}
