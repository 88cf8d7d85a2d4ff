"""The importer's exceptions (no PyTorch import here)."""

from __future__ import annotations

__all__ = ["TorchImportError", "UnsupportedOpError"]


class TorchImportError(Exception):
    """A model the PyTorch importer cannot turn into rlx."""


class UnsupportedOpError(TorchImportError):
    """An aten op with no rlx mapping, or used in a way rlx cannot express.

    ``op``: the aten op (``"aten.cumprod.default"``); ``source``: the model's
    source line (``"model.py:12"``, or ``None`` when torch.export recorded
    none); ``code``: that line's text; ``reason``: what is missing."""

    def __init__(self, op: str, reason: str, source: str | None = None,
                 code: str | None = None, module_path: str | None = None):
        self.op, self.reason, self.source, self.code = op, reason, source, code
        self.module_path = module_path
        text = f"{op}: {reason}"
        if source:
            text += f"\n  at {source}" + (f": {code}" if code else "")
        if module_path:
            text += f"\n  in module {module_path}"
        super().__init__(text)
