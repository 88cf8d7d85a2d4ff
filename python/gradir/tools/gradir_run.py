"""gradir-run: mlir-runner for gradir.  Compiles an rlx function and runs it.

    gradir-run model.mlir [--entry main] [--input x.npy ...] [--random-inputs SEED]
               [--pass-pipeline='builtin.module(rlx-gradient)' | --rlx-gradient=...]
               [--target cpu] [--interpret] [-o results.npz] [--print-precision N]

Inputs come from .npy files (one per argument, flattened tuples in order) or
are generated from a seed (floats uniform in [-1, 1), integers in [0, 3),
booleans).  Passes given as flags run before compilation, as in gradir-opt.
Results are printed (or saved to an .npz with -o, written only on success).
``--interpret`` runs the reference interpreter instead of compiled code.
Every failure is a diagnostic (``file:line:col: error: ...``) and exit code 1.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field

from . import driver
from .driver import Diag, UsageError

__all__ = ["main", "entry"]

USAGE = __doc__.split("\n\n")[1]


@dataclass
class RunOptions:
    entry: str = "main"
    inputs: list[str] = field(default_factory=list)
    seed: int | None = None
    target: str = "cpu"
    interpret: bool = False
    output: str | None = None
    precision: int = 6
    opt_argv: list[str] = field(default_factory=list)


def _take_value(argv, i, name, inline):
    if inline is not None:
        return inline, i
    if i >= len(argv):
        raise UsageError(f"option '--{name}' requires a value")
    return argv[i], i + 1


def parse_args(argv: list[str]) -> tuple[RunOptions, driver.Options]:
    ro = RunOptions()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("-h", "--help"):
            raise UsageError(None)
        if arg in ("-o", "--o") or (arg.startswith("-o") and not arg.startswith("--")):
            value = arg[2:].lstrip("=") if len(arg) > 2 and arg != "--o" else None
            ro.output, i = _take_value(argv, i, "o", value or None)
            continue
        if not arg.startswith("--"):
            rest.append(arg)
            continue
        name, eq, value = arg[2:].partition("=")
        inline = value if eq else None
        if name == "entry":
            ro.entry, i = _take_value(argv, i, name, inline)
        elif name == "input":
            v, i = _take_value(argv, i, name, inline)
            ro.inputs.append(v)
        elif name == "random-inputs":
            v, i = _take_value(argv, i, name, inline)
            try:
                ro.seed = int(v)
            except ValueError:
                ro.seed = -1
            if ro.seed < 0:
                raise UsageError(f"--random-inputs expects a non-negative integer seed, "
                                 f"not '{v}'")
        elif name == "target":
            ro.target, i = _take_value(argv, i, name, inline)
        elif name == "interpret":
            ro.interpret = True
        elif name == "print-precision":
            v, i = _take_value(argv, i, name, inline)
            try:
                ro.precision = int(v)
            except ValueError:
                raise UsageError(f"--print-precision expects an integer, not '{v}'") from None
        else:
            rest.append(arg)
    if ro.inputs and ro.seed is not None:
        raise UsageError("give either --input files or --random-inputs, not both")
    return ro, driver.parse_args(rest)


def _random_inputs(sig, seed: int):
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    for spec in sig.inputs:
        dt = np.dtype(spec.dtype)
        if dt.kind == "f":
            gen = dt if dt in (np.float32, np.float64) else np.float32
            out.append((rng.random(spec.shape, dtype=gen) * 2 - 1).astype(dt, copy=False))
        elif dt.kind == "b":
            out.append(rng.integers(0, 2, spec.shape).astype(bool))
        else:
            out.append(rng.integers(0, 3, spec.shape).astype(dt))
    return out


def _nest(flat, tree):
    if isinstance(tree, int):
        return flat[tree]
    return tuple(_nest(flat, t) for t in tree)


def _flat_results(results: tuple, tree) -> list:
    """Results (one entry per result, tuples nested) in flat order."""
    flat: list = []

    def walk(v, t):
        if isinstance(t, int):
            flat.append(v)
        else:
            for vi, ti in zip(v, t):
                walk(vi, ti)
    for v, t in zip(results, tree):
        walk(v, t)
    return flat


def _save_npz(path: str, arrays: list) -> None:
    import numpy as np
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".gradir-run-", suffix=".npz", dir=directory)
    os.close(fd)
    try:
        np.savez(tmp, **{f"result_{i}": a for i, a in enumerate(arrays)})
        os.chmod(tmp, 0o666 & ~driver.umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def run(ro: RunOptions, opts: driver.Options) -> int:
    import numpy as np

    from .. import _compat
    from ..ir import make_context
    from ..runtime.abi import ArgumentError, Function
    from ..runtime.signature import CompileError, public_functions, signature_of

    source = driver.read_input("gradir-run", opts.input)
    if source is None:
        return 1
    source_name, text = source
    context = make_context()
    context.enable_multithreading(False)   # Python passes; see gradir-opt
    pipeline = driver.flags_to_pipeline(opts, context)
    printed: list[str] = []
    saved: list = []

    def execute(module, report) -> bool:
        op = module.operation
        loc_of = _compat.format_location
        fns = {ir_name(f): f for f in public_functions(op)}
        fn = fns.get(ro.entry)
        if fn is None:
            report(Diag("error", loc_of(op.location),
                        f"no public function @{ro.entry} to run (public functions: "
                        f"{', '.join(sorted(fns)) or 'none'})"))
            return True
        try:
            sig = signature_of(fn)
        except CompileError as err:
            report(Diag("error", loc_of(fn.location), str(err)))
            return True
        where = loc_of(fn.location)
        if ro.seed is not None:
            try:
                flat = _random_inputs(sig, ro.seed)
            except MemoryError:
                report(Diag("error", where, f"not enough memory for @{ro.entry}'s random "
                                            "inputs"))
                return True
        else:
            flat = []
            for path in ro.inputs:
                try:
                    flat.append(np.load(path, allow_pickle=False))
                except (OSError, ValueError) as err:
                    report(Diag("error", where, f"could not read input '{path}': {err}"))
                    return True
            if len(flat) != len(sig.inputs):
                report(Diag("error", where,
                            f"@{ro.entry} takes {len(sig.inputs)} input tensor"
                            f"{'s' if len(sig.inputs) != 1 else ''}, got {len(flat)} "
                            "(--input FILE.npy once per tensor, or --random-inputs SEED)"))
                return True
        args = [_nest(flat, t) for t in sig.input_tree]
        try:
            if ro.interpret:
                from ..interp import InterpreterError, interpret
                checker = Function(sig, lambda ptrs: None)
                checker._check(args)
                try:
                    results = tuple(interpret(module, ro.entry, *args))
                except InterpreterError as err:
                    report(Diag("error", where, f"interpreter: {err}"))
                    return True
                flat_out = _flat_results(results, sig.output_tree)
            else:
                from ..runtime.jit import compile as compile_module
                exe = compile_module(module, ro.target)
                results = exe[ro.entry](*args)
                if len(sig.output_tree) == 1:
                    results = (results,)
                flat_out = _flat_results(results, sig.output_tree)
        except ArgumentError as err:
            report(Diag("error", where, str(err)))
            return True
        except CompileError as err:
            report(Diag("error", where, f"compilation failed:\n{err}"))
            return True
        except RuntimeError as err:     # e.g. target=cuda on a machine without a GPU
            report(Diag("error", where, f"cannot run @{ro.entry} on target "
                                        f"'{ro.target}': {err}"))
            return True
        saved.extend(flat_out)
        with np.printoptions(precision=ro.precision, threshold=64, edgeitems=3):
            for i, a in enumerate(flat_out):
                a = np.asarray(a)
                printed.append(f"result {i}: {a.dtype} {tuple(a.shape)}\n{a}\n")
        return False

    def ir_name(f):
        from mlir import ir
        return ir.StringAttr(f.attributes["sym_name"]).value

    result = driver.process_chunk(text, source_name, opts, context, pipeline,
                                      on_module=execute)
    lines = text.split("\n")
    for d in result.diags:
        print(driver.render(d, source_name, lines), file=sys.stderr)
    if result.failed:
        return 1
    if ro.output:
        try:
            _save_npz(ro.output, saved)
        except OSError as err:
            print(f"gradir-run: error: could not write output file '{ro.output}': "
                  f"{err.strerror or err}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write("".join(printed))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        ro, opts = parse_args(argv)
    except UsageError as err:
        if err.args and err.args[0] is None:
            print("USAGE: " + USAGE.strip())
            return 0
        print(f"gradir-run: error: {err}", file=sys.stderr)
        return 1
    return driver.guarded("gradir-run", opts.input, lambda: run(ro, opts))


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
