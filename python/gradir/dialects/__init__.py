"""gradir's dialects: Python builders (``rlx``, ``grad``) and the shared
type/shape inference table (``infer.INFER``) that the builders and the
``rlx-verify`` pass both use."""

from . import grad, infer, rlx
from .infer import ATTRS, INFER, ShapeError, attributes_of

__all__ = ["rlx", "grad", "infer", "INFER", "ATTRS", "ShapeError", "attributes_of"]
