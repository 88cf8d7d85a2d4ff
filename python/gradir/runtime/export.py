"""AOT export: a compiled module as a self-describing shared library."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import _compat
from ..ir import make_context
from .abi import signatures_to_json
from .signature import CompileError

__all__ = ["export_library", "SIGNATURE_SYMBOL"]

# The library exports this NUL-terminated JSON string (see abi.Signature).
SIGNATURE_SYMBOL = "gradir_signatures"


def _c_string(text: str) -> str:
    out = []
    for ch in text.encode():
        out.append(f"\\x{ch:02x}")
    # Split into chunks so compilers do not choke on one huge literal line.
    chunks = ["".join(out[i:i + 64]) for i in range(0, len(out), 64)]
    return "\n".join(f'  "{c}"' for c in chunks) or '  ""'


def _compiler() -> str:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise CompileError("export_library needs a C compiler/linker (cc, gcc or clang) on PATH")


def export_library(exe, path: Path) -> Path:
    """Writes ``path`` (a .so) holding exe's functions and signatures, plus
    the MLIR runtime libraries it links against, next to it."""
    from mlir import ir
    from .jit import _runtime_libraries

    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    libs = _runtime_libraries(exe.options.target)
    with tempfile.TemporaryDirectory(prefix="gradir-export-") as tmp:
        tmp = Path(tmp)
        with make_context():
            module = ir.Module.parse(exe.llvm_ir)
            engine = _compat.execution_engine(module, exe.options.opt_level,
                                              [str(p) for p in libs], pic=True)
            # Compilation is lazy; a lookup forces it before dumping.
            for name in exe.signatures:
                engine.raw_lookup("_mlir_ciface_" + name)
            obj = tmp / "module.o"
            engine.dump_to_object_file(str(obj))
        if not obj.exists() or obj.stat().st_size == 0:
            raise CompileError("ExecutionEngine produced no object file to export")
        meta = tmp / "signatures.c"
        meta.write_text(f"const char {SIGNATURE_SYMBOL}[] =\n"
                        f"{_c_string(signatures_to_json(exe.signatures))};\n")
        tmp_out = tmp / path.name
        cmd = [_compiler(), "-shared", "-fPIC", "-o", str(tmp_out), str(obj), str(meta),
               f"-L{libs[0].parent}", *[f"-l:{lib.name}" for lib in libs],
               "-Wl,-rpath,$ORIGIN", "-lm"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError("linking the exported library failed:\n" + " ".join(cmd) +
                               "\n" + proc.stderr)
        for lib in libs:
            dest = path.parent / lib.name
            if not dest.exists() or dest.stat().st_size != lib.stat().st_size:
                shutil.copy2(lib, dest)
        os.replace(tmp_out, path)   # atomic: no half-written library
    return path
