"""gradir-run: mlir-runner for gradir.  Compiles an rlx function and runs it.

    gradir-run model.mlir [--entry main] [--input x.npy ...] [--random-inputs SEED]
               [--pass-pipeline='builtin.module(rlx-gradient)' | --rlx-gradient=...]
               [--target cpu] [--interpret] [-o results.npz] [--print-precision N]

Inputs come from .npy files (one per argument, flattened tuples in order) or
are generated from a seed (floats uniform in [-1, 1), integers in [0, 3),
booleans).  Passes given as flags run before compilation, as in gradir-opt.
Results are printed (or saved to an .npz with -o, written only on success).
``--split-input-file`` runs each chunk of the input on its own, printing
the chunks' results separated by the marker.
``--interpret`` runs the reference interpreter instead of compiled code.
Every failure is a diagnostic (``file:line:col: error: ...``) and exit code 1.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from . import driver
from .driver import Diag, UsageError

__all__ = ["main", "entry"]

USAGE = __doc__.split("\n\n")[1]
MAX_PRECISION = 1000       # an f64 prints exactly in fewer than 800 digits


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
            if inline is not None and inline.lower() not in ("true", "1", "false", "0"):
                raise UsageError(f"--interpret takes no value or true/false, not '{inline}'")
            ro.interpret = inline is None or inline.lower() in ("true", "1")
        elif name == "print-precision":
            v, i = _take_value(argv, i, name, inline)
            try:
                ro.precision = int(v)
            except ValueError:
                raise UsageError(f"--print-precision expects an integer, not '{v}'") from None
            if not 0 <= ro.precision <= MAX_PRECISION:
                # (numpy takes a C int; no float has more digits than that)
                raise UsageError(f"--print-precision expects a number of digits from 0 to "
                                 f"{MAX_PRECISION}, not {v}")
        else:
            rest.append(arg)
    if ro.inputs and ro.seed is not None:
        raise UsageError("give either --input files or --random-inputs, not both")
    return ro, driver.parse_args(rest)


class _Refused(Exception):
    """A step of ``run`` cannot go on; carries the diagnostic to print."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.diag = Diag("error", where, message)


@dataclass
class Entry:
    """The function to run: its IR op, signature and location text."""
    fn: object
    sig: object
    where: str


@dataclass
class Results:
    """One run's results in flat order (tuples flattened depth first)."""
    arrays: list

    def text(self, precision: int) -> str:
        import numpy as np
        out = []
        with np.printoptions(precision=precision, threshold=64, edgeitems=3):
            for i, a in enumerate(self.arrays):
                a = np.asarray(a)
                out.append(f"result {i}: {a.dtype} {tuple(a.shape)}\n{a}\n")
        return "".join(out)


def find_entry(module, name: str) -> Entry:
    """Step 1: the public function ``@name`` and its signature."""
    from mlir import ir

    from .. import _compat
    from ..runtime.signature import CompileError, public_functions, signature_of

    op = module.operation
    fns = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in public_functions(op)}
    fn = fns.get(name)
    if fn is None:
        raise _Refused(_compat.format_location(op.location),
                       f"no public function @{name} to run (public functions: "
                       f"{', '.join(sorted(fns)) or 'none'})")
    where = _compat.format_location(fn.location)
    try:
        sig = signature_of(fn)
    except CompileError as err:
        raise _Refused(where, str(err)) from None
    return Entry(fn, sig, where)


def random_inputs(sig, seed: int, where: str) -> list:
    """Step 2a: inputs from a seed (floats uniform in [-1, 1), integers in
    [0, 3), booleans)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    out = []
    try:
        for spec in sig.inputs:
            dt = np.dtype(spec.dtype)
            if dt.kind == "f":
                gen = dt if dt in (np.float32, np.float64) else np.float32
                out.append((rng.random(spec.shape, dtype=gen) * 2 - 1).astype(dt, copy=False))
            elif dt.kind == "b":
                out.append(rng.integers(0, 2, spec.shape).astype(bool))
            else:
                out.append(rng.integers(0, 3, spec.shape).astype(dt))
    except (MemoryError, ValueError) as err:    # ValueError: array is too big
        raise _Refused(where, f"not enough memory for @{sig.name}'s random inputs "
                              f"({err or 'MemoryError'})") from None
    return out


def file_inputs(paths: list[str], sig, where: str) -> list:
    """Step 2b: inputs from .npy files, one per flattened tensor."""
    import numpy as np
    flat = []
    for path in paths:
        try:
            flat.append(np.load(path, allow_pickle=False))
        except (OSError, ValueError, EOFError) as err:
            raise _Refused(where, f"could not read input '{path}': {err}") from None
    if len(flat) != len(sig.inputs):
        n = len(sig.inputs)
        raise _Refused(where, f"@{sig.name} takes {n} input tensor{'s' if n != 1 else ''}, "
                              f"got {len(flat)} (--input FILE.npy once per tensor, or "
                              "--random-inputs SEED)")
    return flat


def execute(module, entry: Entry, flat: list, ro: RunOptions) -> Results:
    """Step 3: runs the entry (compiled, or interpreted with --interpret) on
    the flat inputs."""
    from ..runtime.abi import ArgumentError, Function
    from ..runtime.errors import ExecutionError
    from ..runtime.signature import CompileError

    sig, where = entry.sig, entry.where
    args = [_nest(flat, t) for t in sig.input_tree]
    try:
        if ro.interpret:
            from ..interp import InterpreterError, interpret
            Function(sig, lambda ptrs: None)._check(args)
            try:
                results = tuple(interpret(module, ro.entry, *args))
            except InterpreterError as err:
                raise _Refused(where, f"interpreter: {err}") from None
        else:
            from ..runtime.jit import compile as compile_module
            exe = compile_module(module, ro.target, functions=[ro.entry])   # only what runs
            results = exe[ro.entry](*args)
            if len(sig.output_tree) == 1:
                results = (results,)
    except ArgumentError as err:
        raise _Refused(where, str(err)) from None
    except CompileError as err:
        raise _Refused(where, f"compilation failed:\n{err}") from None
    except MemoryError as err:
        raise _Refused(where, f"not enough memory to run @{ro.entry}: {err}") from None
    except ExecutionError as err:   # a run-time check of the compiled code, at its op
        raise _Refused(err.location or where,
                       f"{err.message} (running @{err.function})") from None
    except RuntimeError as err:     # e.g. target=cuda on a machine without a GPU
        raise _Refused(where, f"cannot run @{ro.entry} on target '{ro.target}': {err}") from None
    return Results(_flat_results(results, sig.output_tree))


def run_module(module, ro: RunOptions) -> Results:
    """Steps 1-3 on one parsed (and transformed) module."""
    entry = find_entry(module, ro.entry)
    if ro.seed is not None:
        flat = random_inputs(entry.sig, ro.seed, entry.where)
    else:
        flat = file_inputs(ro.inputs, entry.sig, entry.where)
    return execute(module, entry, flat, ro)


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


def npz_bytes(runs: list[Results]) -> bytes:
    """Step 4 (-o): the results as an .npz (``result_<i>``; with
    --split-input-file ``chunk_<c>_result_<i>``)."""
    import io

    import numpy as np
    named = {}
    for c, res in enumerate(runs):
        prefix = f"chunk_{c}_" if len(runs) > 1 else ""
        for i, a in enumerate(res.arrays):
            named[f"{prefix}result_{i}"] = a
    buf = io.BytesIO()
    np.savez(buf, **named)
    return buf.getvalue()


def run(ro: RunOptions, opts: driver.Options) -> int:
    from ..ir import make_context

    source = driver.read_input("gradir-run", opts.input)
    if source is None:
        return 1
    source_name, text = source
    context = make_context()
    context.enable_multithreading(False)   # Python passes; see gradir-opt
    pipeline = driver.flags_to_pipeline(opts, context)
    chunks = (driver.split_buffer(text, opts.split_marker) if opts.split_input_file
              else [(text, 0)])
    lines = text.split("\n")
    runs: list[Results] = []
    failed = False
    for chunk_text, _ in chunks:
        done: list[Results] = []

        def on_module(module, report):
            try:
                done.append(run_module(module, ro))
            except _Refused as refusal:
                report(refusal.diag)
                return True
            return False

        result = driver.process_chunk(chunk_text, source_name, opts, context, pipeline,
                                      on_module=on_module)
        for d in result.diags:
            print(driver.render(d, source_name, lines), file=sys.stderr)
        failed = failed or result.failed
        runs.extend(done)
    if failed:
        return 1
    if ro.output:
        data = npz_bytes(runs)
    else:
        sep = "\n" + opts.split_marker + "\n"
        data = sep.join(r.text(ro.precision) for r in runs)
    try:
        driver.write_output(ro.output, data)
    except OSError as err:
        if isinstance(err, BrokenPipeError):
            raise
        driver.report_write_error("gradir-run", ro.output, err)
        return 1
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
