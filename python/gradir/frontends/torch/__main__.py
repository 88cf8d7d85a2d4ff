"""gradir-import: a PyTorch model to rlx (``python -m gradir.frontends.torch``).

    gradir-import FILE.py:FACTORY [--input 64x1x8x8xf32 --input 64xi64 ...]
                  [--eval] [--f64] [--gradient] [-o model.mlir]

``FACTORY`` (a callable in FILE.py, or in an importable module ``pkg.mod``)
returns a ``torch.nn.Module``, or ``(module, example_args)``; without
example arguments, ``--input`` gives one shape and element type per forward
input (``f32``/``f64`` random normal, ``i64``/``i32`` zeros).  ``--eval``
puts the model in eval mode, ``--f64`` converts it to float64, and
``--gradient`` adds ``@main_adjoint`` (rlx-gradient w.r.t. the parameters).
Prints the module (or writes it to ``-o``).  An unsupported op is an error
naming the aten op and the model's source line, and exit code 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

__all__ = ["main", "entry"]

_DTYPES = {"f32": "float32", "f64": "float64", "i64": "int64", "i32": "int32", "i1": "bool"}


def _load_factory(spec: str):
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ValueError(f"expected FILE.py:FACTORY or module:FACTORY, got {spec!r}")
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        sys.path.insert(0, os.path.dirname(path))
        mod_spec = importlib.util.spec_from_file_location("_gradir_import_model", path)
        module = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, name)


def _example(text: str, torch):
    *dims, elt = text.split("x") if "x" in text else ["", text]
    dims = [int(d) for d in dims if d]
    if elt not in _DTYPES:
        raise ValueError(f"bad --input {text!r}: element type must be one of {', '.join(_DTYPES)}")
    dtype = getattr(torch, _DTYPES[elt])
    count = 1
    for d in dims:
        if d < 0:
            raise ValueError(f"bad --input {text!r}: a size must not be negative")
        count *= d
    size = count * torch.empty((), dtype=dtype).element_size()
    if size >= 1 << 62:
        raise ValueError(f"bad --input {text!r}: {count} elements do not fit in memory")
    try:
        if dtype.is_floating_point:
            return torch.randn(dims, dtype=dtype)
        return torch.zeros(dims, dtype=dtype)
    except RuntimeError as err:       # torch could not allocate it
        raise ValueError(f"bad --input {text!r}: {str(err).splitlines()[0]}") from None


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
        import torch

        import gradir
        from gradir.frontends.torch import TorchImportError, import_module

        made = _load_factory(args.factory)()
        model, example = made if isinstance(made, tuple) else (made, None)
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
    except (TorchImportError, ValueError, OSError, AttributeError, ImportError) as err:
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
