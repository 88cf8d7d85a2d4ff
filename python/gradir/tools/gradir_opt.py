"""gradir-opt: mlir-opt for gradir IR.

    gradir-opt [input.mlir|-] [-o out.mlir] [--pass-pipeline='builtin.module(...)']
               [--rlx-dce] [--rlx-gradient='func=main wrt=0'] [--canonicalize]
               [--split-input-file] [--verify-diagnostics]
               [--mlir-print-ir-after-all] [--mlir-print-ir-before-all]
               [--mlir-print-op-generic] [--mlir-print-debuginfo]
               [--list-passes] [--help] [--version]

Passes named on the command line (``--rlx-dce``, ``--canonicalize``) run in
the order given; ``--pass-pipeline`` takes a full pipeline that may mix gradir
and upstream passes.  Every failure is an MLIR diagnostic
(``file:line:col: error: ...``) and exit code 1; ``-o`` is written only when
everything succeeded.
"""

from __future__ import annotations

import sys

from .driver import (Options, UsageError, flags_to_pipeline, guarded, parse_args,
                     process_chunk, read_input, render, report_write_error, split_buffer,
                     write_output)

__all__ = ["main", "entry"]

USAGE = __doc__.split("\n\n")[1]


def run(opts: Options) -> int:
    from .. import passes as gradir_passes
    from ..ir import make_context
    from . import verify_diagnostics

    if opts.show_version:
        from .. import _compat
        print(f"gradir-opt (gradir 0.1.0, MLIR {_compat.MLIR_VERSION})")
        return 0
    if opts.list_passes:
        print("USAGE: " + USAGE.strip())
        print("\ngradir passes (any upstream MLIR pass is accepted too, e.g. --canonicalize):")
        print(gradir_passes.describe())
        return 0

    source = read_input("gradir-opt", opts.input)
    if source is None:
        return 1
    source_name, text = source

    context = make_context()
    context.allow_unregistered_dialects = opts.allow_unregistered
    # gradir's passes are Python: a nested pipeline run from one of them
    # while MLIR's thread pool loads dialects lazily can deadlock or abort.
    context.enable_multithreading(False)
    try:
        pipeline = flags_to_pipeline(opts, context)
    except UsageError as err:
        print(f"gradir-opt: error: {err}", file=sys.stderr)
        return 1

    chunks = split_buffer(text, opts.split_marker) if opts.split_input_file else [(text, 0)]
    lines = text.split("\n")
    outputs: list[str] = []
    ok = True
    for chunk_text, _ in chunks:
        result = process_chunk(chunk_text, source_name, opts, context, pipeline)
        if opts.verify_diagnostics:
            problems = verify_diagnostics.check(chunk_text, source_name, result.diags)
            for p in problems:
                print(render(p, source_name, lines), file=sys.stderr)
            ok = ok and not problems
        else:
            for d in result.diags:
                print(render(d, source_name, lines), file=sys.stderr)
            ok = ok and not result.failed
        if result.output is not None:
            outputs.append(result.output)
    if not ok:
        return 1
    sep = "\n" + opts.split_marker + "\n"
    try:
        write_output(opts.output, sep.join(o.rstrip("\n") + "\n" for o in outputs)
                      if outputs else "")
    except OSError as err:
        if isinstance(err, BrokenPipeError):
            raise
        report_write_error("gradir-opt", opts.output, err)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv)
    except UsageError as err:
        print(f"gradir-opt: error: {err}", file=sys.stderr)
        return 1
    return guarded("gradir-opt", opts.input, lambda: run(opts))


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
