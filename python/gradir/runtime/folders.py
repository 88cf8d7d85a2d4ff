"""Where gradir keeps the native libraries it builds for the host (the
matmul kernel library, the OpenMP entry points on libgomp), and the C
compiler it builds with.

A leaf module: imports nothing of gradir.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["library_folders", "c_compiler"]


def library_folders() -> list[Path]:
    """Where a library is looked for, in order, and built (the first
    writable one): ``$GRADIR_CACHE_DIR/kernels`` when set, the Python
    environment's ``share/gradir/kernels`` (where ``cmake`` builds the
    host's), ``~/.cache/gradir/kernels``, a temporary directory."""
    folders = []
    if os.environ.get("GRADIR_CACHE_DIR"):
        folders.append(Path(os.environ["GRADIR_CACHE_DIR"]) / "kernels")
    folders.append(Path(sys.prefix) / "share" / "gradir" / "kernels")
    folders.append(Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))
                   / "gradir" / "kernels")
    folders.append(Path(tempfile.gettempdir()) / f"gradir-{os.getuid()}" / "kernels")
    return list(dict.fromkeys(folders))


def c_compiler() -> str | None:
    """The C compiler and linker: ``$CC``, else cc, gcc or clang on PATH."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None
