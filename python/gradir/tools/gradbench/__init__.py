"""``gradir-gradbench``: a GradBench tool backed by gradir.

GradBench (https://github.com/gradbench/gradbench) benchmarks automatic
differentiation tools: an eval program writes JSON messages, one per line, to
the tool's stdin and reads one JSON response per message from its stdout.
The message loop is in ``protocol.py``; each eval's objective, written in the
``rlx`` dialect, differentiated by ``rlx-gradient`` and compiled for the CPU
by ``gradir.compile`` (float64, cached per input shape), is in
``evals/<name>.py``.

GradBench's ``run`` subcommand takes the tool as a shell command:

    gradbench run --eval "gradbench eval lse" --tool "gradir-gradbench" -o lse.jsonl

Each evaluate response carries a ``"prepare"`` timing (building and
compiling, or a cache hit), a ``"warmup"`` timing after a compile, and one
``"evaluate"`` timing per run (the ones GradBench scores). Code is
single-threaded unless ``--multithreaded`` is given, as with GradBench's
other tools. ``gradir-gradbench --list`` prints the evals.
"""

import sys


def entry(argv=None):
    """Console script ``gradir-gradbench``: serve GradBench messages on stdin/stdout."""
    from . import protocol
    return protocol.main(sys.argv[1:] if argv is None else argv)
