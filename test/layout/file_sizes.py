# RUN: %PYTHON %s %gradir_src/python/gradir | FileCheck %s
"""No source file of the product is over LIMIT lines.

A module that long holds several things that change apart; split it by what
changes together (a package with one module per op group or binding surface,
its ``__init__`` re-exporting the names callers use).  Every ``.py`` file
under python/gradir counts.  Also a script:

    python test/layout/file_sizes.py python/gradir      # exits 1 naming each file over
"""

import os
import sys

LIMIT = 800

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", "..", "python", "gradir"))


def sizes() -> dict[str, int]:
    """Lines of every ``.py`` file under ROOT, by path relative to ROOT's parent."""
    out = {}
    for dirpath, dirnames, files in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as src:
                    out[os.path.relpath(path, os.path.dirname(ROOT))] = len(src.read().splitlines())
    return out


def main() -> int:
    lines = sizes()
    over = {path: n for path, n in lines.items() if n > LIMIT}
    for path, n in sorted(over.items(), key=lambda item: -item[1]):
        print(f"TOO LONG: {path}: {n} lines (limit {LIMIT})")
    largest = max(lines.values(), default=0)
    print(f"checked {len(lines)} files, the longest {largest} lines (limit {LIMIT}): "
          f"{'ok' if not over else f'{len(over)} over'}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

# CHECK-NOT: TOO LONG
# CHECK: checked {{[0-9]+}} files, the longest {{[0-9]+}} lines (limit 800): ok
