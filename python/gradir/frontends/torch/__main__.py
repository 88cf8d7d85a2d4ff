"""gradir-import: a PyTorch model to rlx (``python -m gradir.frontends.torch``).

    gradir-import FILE.py:FACTORY [--input 64x1x8x8xf32 --input 64xi64 ...]
                  [--eval] [--f64] [--gradient] [-o model.mlir]

``FACTORY`` (a callable in FILE.py, or in an importable module ``pkg.mod``)
returns a ``torch.nn.Module``, or ``(module, example_args)``; without
example arguments, ``--input`` gives one shape and element type per forward
input (``f16``/``bf16``/``f32``/``f64`` random normal, ``i64``/``i32``/``i1``
zeros; ``f32`` alone is a 0-d input).  ``--eval``
puts the model in eval mode, ``--f64`` converts it to float64, and
``--gradient`` adds ``@main_adjoint`` (rlx-gradient w.r.t. the parameters).
Prints the module (or writes it to ``-o``).  An unsupported op is an error
naming the aten op and the model's source line, an exception of the model's
own code (its file, the factory) one naming its file and line
(``model.py:12: RuntimeError: ...``), a malformed ``--input`` one naming
it; each exits with code 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
import traceback

from gradir.frontends.torch.errors import TorchImportError

__all__ = ["main", "entry"]

_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
           "i64": "int64", "i32": "int32", "i1": "bool"}


class _ModelError(Exception):
    """An exception of the model's own code (its file, the factory), as a
    located message."""


def _located(err: BaseException, model_file: str | None, shown: str | None) -> str:
    """``model.py:12: RuntimeError: ...``: where in the model's file ``err``
    was raised (its innermost frame there; a SyntaxError's own position),
    that file spelled ``shown``; without such a frame, the innermost frame
    outside gradir and the import machinery, else no position."""
    def name(path):
        if model_file and shown and os.path.realpath(path) == os.path.realpath(model_file):
            return shown
        return path

    what = type(err).__name__
    if isinstance(err, SyntaxError) and err.filename:
        text = err.msg
        where = f"{name(err.filename)}:{err.lineno}" if err.lineno else name(err.filename)
    else:
        text = str(err)
        frames = [f for f in traceback.extract_tb(err.__traceback__)
                  if not f.filename.startswith("<")
                  and os.path.realpath(f.filename) != os.path.realpath(__file__)]
        ours = [f for f in frames if model_file and
                os.path.realpath(f.filename) == os.path.realpath(model_file)]
        frame = (ours or frames or [None])[-1]
        where = f"{name(frame.filename)}:{frame.lineno}" if frame else (shown or "")
    head = f"{where}: {what}" if where else what
    return f"{head}: {text}" if text else head


def _load_factory(spec: str):
    """(the factory, its file, the file as the user wrote it) of
    ``FILE.py:FACTORY`` or ``package.module:FACTORY``; an error in the
    model's file is a ``_ModelError``, a wrong spec a ``ValueError``."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ValueError(f"expected FILE.py:FACTORY or module:FACTORY, got {spec!r}")
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise ValueError(f"{where}: no such file")
        sys.path.insert(0, os.path.dirname(path))
        mod_spec = importlib.util.spec_from_file_location("_gradir_import_model", path)
        module = importlib.util.module_from_spec(mod_spec)
        try:
            mod_spec.loader.exec_module(module)
        except Exception as err:
            raise _ModelError(_located(err, path, where)) from None
        shown = where
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as err:
            if err.name and (where == err.name or where.startswith(err.name + ".")):
                raise ValueError(f"no module named {err.name!r}") from None
            raise _ModelError(_located(err, None, None)) from None
        except Exception as err:
            raise _ModelError(_located(err, None, None)) from None
        path = shown = getattr(module, "__file__", None) or where
    if not hasattr(module, name):
        raise ValueError(f"{shown}: defines no {name!r}")
    factory = getattr(module, name)
    if not callable(factory):
        raise ValueError(f"{shown}: {name!r} is not callable (it is of type "
                         f"{type(factory).__name__}): FACTORY names a function or class that "
                         "returns the model")
    return factory, path, shown


def _parse_input(text: str):
    """(sizes, element type name) of an ``--input``: ``DIMx...xDIMxTYPE``
    with sizes in ASCII digits, or ``TYPE`` for a 0-d input."""
    def bad(why):
        return ValueError(f"--input {text!r}: {why}")

    if not text:
        raise bad("empty: expected SIZExSIZEx...xTYPE (64x1x8x8xf32), or TYPE (f32) for a "
                  "0-d input")
    *dims, elt = text.split("x")
    if elt not in _DTYPES:
        if not elt or re.fullmatch(r"[0-9]+", elt):
            last = "nothing after the last 'x'" if not elt else f"it ends with a size, {elt}"
            raise bad(f"{last}: the element type ({', '.join(_DTYPES)}) comes last")
        raise bad(f"unknown element type {elt!r} (one of {', '.join(_DTYPES)})")
    for i, d in enumerate(dims, 1):
        if not d:
            raise bad(f"size {i} is empty (an 'x' too many)")
        if not re.fullmatch(r"[0-9]+", d):
            raise bad(f"size {i} {d!r} is not a number (ASCII digits 0-9 only)")
    return [int(d) for d in dims], elt


def _example(text: str, torch):
    dims, elt = _parse_input(text)
    dtype = getattr(torch, _DTYPES[elt])
    count = 1
    for d in dims:
        count *= d
    size = count * torch.empty((), dtype=dtype).element_size()
    if size >= 1 << 62:
        raise ValueError(f"--input {text!r}: {count} elements do not fit in memory")
    try:
        if dtype.is_floating_point:
            return torch.randn(dims, dtype=dtype)
        return torch.zeros(dims, dtype=dtype)
    except RuntimeError as err:       # torch could not allocate it
        raise ValueError(f"--input {text!r}: {str(err).splitlines()[0]}") from None


def _write_output(path: str | None, text: str) -> None:
    """``text`` to ``path`` (None or ``-``: stdout) through a temporary file
    in the destination's directory, renamed over it: never a half-written
    output (the tools' ``driver.write_output`` does more; frontends may not
    import the tools, test/layout/imports.py)."""
    import os
    import tempfile
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    target = os.path.realpath(path)            # a link's target is replaced, not the link
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "w") as f:           # /dev/null, a FIFO: written directly
            f.write(text)
        return
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                               dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask() -> int:
    import os
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gradir-import", description=__doc__.split("\n\n")[0])
    parser.add_argument("factory", help="FILE.py:FACTORY or package.module:FACTORY")
    parser.add_argument("--input", action="append", default=[],
                        help="a forward input as SHAPExTYPE (64x1x8x8xf32, 64xi64)")
    parser.add_argument("--eval", action="store_true", help="model.eval() before exporting")
    parser.add_argument("--f64", action="store_true", help="convert the model to float64")
    parser.add_argument("--gradient", action="store_true",
                        help="add @main_adjoint (gradients of result 0 w.r.t. the parameters)")
    parser.add_argument("-o", "--output", help="write the module here (default: stdout)")
    args = parser.parse_args(argv)
    try:
        for text in args.input:                # before running the model's code
            _parse_input(text)
        import torch

        import gradir
        from gradir.frontends.torch import import_module

        factory, model_file, shown = _load_factory(args.factory)
        try:
            made = factory()
        except Exception as err:
            raise _ModelError(_located(err, model_file, shown)) from None
        model, example = made, None
        if isinstance(made, tuple):
            if len(made) != 2:
                raise ValueError(f"the factory returned a tuple of {len(made)}: expected a "
                                 "torch.nn.Module or (module, example_args)")
            model, example = made
        if not isinstance(model, torch.nn.Module):
            raise ValueError(f"the factory returned a {type(model).__name__}: expected a "
                             "torch.nn.Module or (module, example_args)")
        if args.f64:
            model = model.double()
        if args.eval:
            model = model.eval()
        if args.input:
            example = tuple(_example(t, torch) for t in args.input)
        if example is None:
            raise ValueError("the factory returned no example arguments: give --input")
        if args.f64:
            example = torch.utils._pytree.tree_map(
                lambda e: e.double() if isinstance(e, torch.Tensor) and e.is_floating_point()
                else e, example)
        module = import_module(model, example)
        if args.gradient:
            # @main takes the tensor inputs, then the parameters (a Python
            # scalar input is specialized away by torch.export: no argument)
            n_args = len(module.body.operations[0].type.inputs)
            n_params = len(list(model.named_parameters()))
            wrt = ",".join(str(i) for i in range(n_args - n_params, n_args))
            gradir.run_pipeline(module, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
        text = gradir.print_module(module)
    except (_ModelError, TorchImportError, ValueError, OSError, AttributeError,
            ImportError) as err:
        print(f"gradir-import: error: {err}", file=sys.stderr)
        return 1
    except Exception as err:  # a failing pass: MLIRError with its diagnostics
        if type(err).__name__ != "MLIRError":
            raise
        print(f"gradir-import: error: {err}", file=sys.stderr)
        return 1
    try:
        _write_output(args.output, text)
    except OSError as err:
        print(f"gradir-import: error: cannot write {args.output or 'the output'}: "
              f"{err.strerror or err}", file=sys.stderr)
        return 1
    return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
