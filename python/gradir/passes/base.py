"""The pass base class shared by every gradir pass.

A gradir pass is a small frozen dataclass (xDSL style): a kebab-case ``name``
equal to its snake_case module name, typed option fields that become
``pass{opt=value}`` (``target_index`` is spelled ``target-index``), and one
``apply`` method.  Errors are MLIR diagnostics at the offending op's location.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from .. import _compat

__all__ = ["ModulePass", "PassOptionError", "PassFailure"]

PassFailure = _compat.PassFailure


class PassOptionError(ValueError):
    """A pass option that does not exist or does not parse."""


def _location_of(where) -> ir.Location:
    if isinstance(where, ir.Location):
        return where
    if hasattr(where, "location"):
        return where.location
    return where.operation.location


@dataclass(frozen=True)
class ModulePass:
    """Base of gradir passes; subclasses set ``name`` and implement ``apply``."""

    name: ClassVar[str] = ""
    #: The op the pass must run on ("builtin.module": it needs the whole
    #: module, e.g. to find or add functions), or None: any op, nested
    #: anywhere (``func.func(rlx-dce)``).
    anchor: ClassVar[str | None] = "builtin.module"

    # -- to implement -------------------------------------------------------
    def apply(self, module: ir.Operation) -> None:  # pragma: no cover
        raise NotImplementedError

    def expand(self) -> str | None:
        """The pipeline text this pass stands for, when it must not run as one
        Python pass (e.g. it loads dialects, which a running pass manager
        forbids); None (the default): it runs as itself.  Called when the
        pipeline is built; raise ``PassOptionError`` for bad options."""
        return None

    def check_options(self) -> None:
        """Checks option values beyond their types (ranges, combinations);
        raises ``PassOptionError``.  Called when the pass is built."""

    def bad_option(self, option: str, requirement: str, got) -> PassOptionError:
        """The error for ``check_options`` to raise: "option 'O' of pass 'P'
        must <requirement>, got <got>"."""
        return PassOptionError(f"option '{option}' of pass '{self.name}' must {requirement}, "
                               f"got {got}")

    def prepare(self, context: ir.Context) -> None:
        """Readies ``context`` for the pass managers the pass runs itself
        (e.g. registers the dialect extensions of their passes, which MLIR
        forbids while a pass manager runs).  Called when the pipeline is
        built in ``context``, before it runs; the default does nothing."""

    # -- diagnostics --------------------------------------------------------
    def error(self, where, message: str) -> None:
        """Emits an error at ``where`` (op, value's owner, or location)."""
        _compat.emit(_location_of(where), "error", message)

    def warning(self, where, message: str) -> None:
        _compat.emit(_location_of(where), "warning", message)

    def remark(self, where, message: str) -> None:
        _compat.emit(_location_of(where), "remark", message)

    def failure(self) -> PassFailure:
        """``raise self.failure()`` after emitting errors fails the pass."""
        return PassFailure(self.name)

    # -- options ------------------------------------------------------------
    @classmethod
    def options(cls) -> list[tuple[str, str, object, str]]:
        """``(option-name, type name, default, help)`` for every option."""
        hints = _type_hints(cls)
        out = []
        for f in dataclasses.fields(cls):
            out.append((f.name.replace("_", "-"), _type_name(hints[f.name]), f.default,
                        f.metadata.get("help", "")))
        return out

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "ModulePass":
        """Builds the pass from ``{"target-index": "0", ...}`` string options."""
        hints = _type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {}
        for key, text in options.items():
            attr = key.replace("-", "_")
            if attr not in fields:
                known = ", ".join(o[0] for o in cls.options()) or "none"
                raise PassOptionError(
                    f"no such option '{key}' for pass '{cls.name}' (options: {known})")
            if attr in kwargs:
                raise PassOptionError(f"option '{key}' of pass '{cls.name}' is given twice")
            kwargs[attr] = _convert(hints[attr], text, key, cls.name)
        instance = cls(**kwargs)
        instance.check_options()
        return instance

    @classmethod
    def description(cls) -> str:
        """The first sentence of the class docstring (it may wrap lines)."""
        doc = (cls.__doc__ or "").strip()
        para = " ".join(line.strip() for line in doc.split("\n\n")[0].splitlines())
        m = re.match(r"(.+?\.)(\s|$)", para)
        return m.group(1) if m else para

    def pipeline_text(self) -> str:
        """The pass as a pipeline element, options included."""
        parts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            if isinstance(value, tuple):
                value = ",".join(str(v) for v in value)
            elif isinstance(value, bool):
                value = "true" if value else "false"
            parts.append(f"{f.name.replace('_', '-')}={value}")
        return self.name + ("{" + " ".join(parts) + "}" if parts else "")


_HINTS: dict = {}


def _type_hints(cls) -> dict:
    """``typing.get_type_hints(cls)``, evaluated once per class (it compiles
    every string annotation: a fixed cost of each pipeline built)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def option(default, help: str = ""):  # noqa: A002
    """A pass option field with a help string."""
    if isinstance(default, (list, tuple)):
        return dataclasses.field(default=tuple(default), metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


def _type_name(tp) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return "|".join(str(c) for c in typing.get_args(tp))
    if origin is tuple:
        return f"list<{_type_name(typing.get_args(tp)[0])}>"
    if origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _type_name(args[0])
    return {int: "int", float: "float", str: "string", bool: "bool"}.get(tp, str(tp))


def _convert(tp, text: str, key: str, pass_name: str):
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if text in ("", "none", "None"):
            return None
        return _convert(args[0], text, key, pass_name)
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if text not in allowed:
            raise PassOptionError(f"option '{key}' of pass '{pass_name}' must be one of "
                                  f"{', '.join(allowed)}, got '{text}'")
        return text
    try:
        if origin is tuple:
            elem = typing.get_args(tp)[0]
            items = [t.strip() for t in text.split(",")] if text.strip() else []
            if any(not t for t in items):
                raise ValueError(text)       # an empty element: '0,,1'
            return tuple(_convert(elem, t, key, pass_name) for t in items)
        if tp is bool:
            low = text.lower()
            if low in ("true", "1", "on", ""):
                return True
            if low in ("false", "0", "off"):
                return False
            raise ValueError(text)
        if tp is int:
            return int(text, 0)
        if tp is float:
            return float(text)
        return text
    except ValueError:
        raise PassOptionError(
            f"option '{key}' of pass '{pass_name}' expects {_type_name(tp)}, got '{text}'"
        ) from None
