"""numpy reference interpreter of the rlx and grad dialects.

``interpret(module, "fn", *arrays) -> tuple`` evaluates ``@fn``.  This is
the oracle every other test trusts: it shares no code with the passes it
checks, and each op's semantics (TVM Relax's, see DESIGN.md) is written here
independently in numpy, one small rule per op name (see ``supported_ops()``).
"""

from .core import InterpreterError, interpret, supported_ops
from . import elementwise, shape, reduce, nn, misc, scf  # noqa: F401  (register rules)

__all__ = ["interpret", "InterpreterError", "supported_ops"]
