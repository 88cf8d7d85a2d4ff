"""``gradir-gradbench``: a GradBench tool backed by gradir.

GradBench (https://github.com/gradbench/gradbench) benchmarks automatic
differentiation tools: an eval program writes JSON messages, one per line, to
the tool's stdin and reads one JSON response per message from its stdout.
The message loop is in ``protocol.py``; each eval's objective, written in the
``rlx`` dialect, differentiated by ``rlx-gradient`` and compiled for the CPU
by ``gradir.compile``, is in ``evals/<name>.py``.
"""

import sys


def entry(argv=None):
    """Console script ``gradir-gradbench``: serve GradBench messages on stdin/stdout."""
    from . import protocol
    return protocol.main(sys.argv[1:] if argv is None else argv)
