"""AOT export: a compiled module as a self-describing shared library."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from .. import _compat
from ..ir import make_context
from .abi import signatures_to_json
from .signature import CompileError
from .toolchain import c_string, compiler, runtime_libraries, uses_openmp

__all__ = ["export_library", "SIGNATURE_SYMBOL", "DIGEST_SYMBOL"]

# The library exports this NUL-terminated JSON string (see abi.Signature).
SIGNATURE_SYMBOL = "gradir_signatures"
DIGEST_SYMBOL = "gradir_signatures_sha256"   # hex SHA-256 of the signatures' JSON


# The one MLIR runtime function lowered code calls (memref.copy between
# non-contiguous buffers), re-implemented so an exported library needs only
# libc and libm: MLIR's libmlir_c_runner_utils.so pulls in libMLIR.so and
# libLLVM.so (hundreds of MB).  Same semantics as CRunnerUtils' memrefCopy.
_SHIM_C = r"""
#include <stdint.h>
#include <string.h>
typedef struct { int64_t rank; void *descriptor; } unranked_t;
typedef struct { char *allocated; char *aligned; int64_t offset; int64_t rest[]; } desc_t;

__attribute__((visibility("default")))
void memrefCopy(int64_t elem, unranked_t *src, unranked_t *dst) {
  int64_t rank = src->rank;
  desc_t *s = (desc_t *)src->descriptor, *d = (desc_t *)dst->descriptor;
  const int64_t *sizes = s->rest, *ss = s->rest + rank, *ds = d->rest + rank;
  char *sp = s->aligned + s->offset * elem, *dp = d->aligned + d->offset * elem;
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i) total *= sizes[i];
  if (total == 0) return;
  if (rank == 0) { memcpy(dp, sp, elem); return; }
  int64_t index[64] = {0};
  if (rank > 64) return;
  int64_t so = 0, dof = 0;
  for (;;) {
    memcpy(dp + dof * elem, sp + so * elem, elem);
    int64_t axis = rank - 1;
    for (; axis >= 0; --axis) {
      if (++index[axis] < sizes[axis]) { so += ss[axis]; dof += ds[axis]; break; }
      so -= ss[axis] * (sizes[axis] - 1); dof -= ds[axis] * (sizes[axis] - 1);
      index[axis] = 0;
    }
    if (axis < 0) return;
  }
}
"""


def _target_symbol(exe) -> str:
    """issue 14: the CPU the code was compiled for (``target_check``)."""
    if exe.options.target != "cpu":
        return ""
    from .target_check import TARGET_SYMBOL, target_record
    return (f"__attribute__((visibility(\"default\"))) const char {TARGET_SYMBOL}[] =\n"
            f"{c_string(target_record(exe.options.cpu))};\n")


def _compile_object(exe, libs, tmp: Path) -> Path:
    from mlir import ir
    from .toolchain import llvm_opt_level
    with make_context():
        module = ir.Module.parse(exe.llvm_ir)
        engine = _compat.execution_engine(module, llvm_opt_level(exe.options.opt_level),
                                          [str(p) for p in libs], pic=True)
        # Compilation is lazy; a lookup forces it before dumping.
        for name in exe.signatures:
            engine.raw_lookup("_mlir_ciface_" + name)
        obj = tmp / "module.o"
        engine.dump_to_object_file(str(obj))
    return obj


def export_library(exe, path: Path, object_file: Path | None = None) -> Path:
    """Writes ``path`` (a .so) holding exe's functions and signatures, plus
    the MLIR runtime libraries it links against, next to it.  ``object_file``:
    exe's code already compiled (PIC), e.g. by the JIT, or a list of objects;
    else compiled here."""
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    threads = getattr(exe.options, "threads", 1) if uses_openmp(exe.llvm_ir) else 1
    libs = runtime_libraries(exe.options.target, threads)
    with tempfile.TemporaryDirectory(prefix="gradir-export-") as tmp:
        tmp = Path(tmp)
        if isinstance(object_file, (list, tuple)):      # issue 14: llvm_tools' partitions
            objs = [Path(o) for o in object_file]
        else:
            objs = [Path(object_file) if object_file is not None
                    else _compile_object(exe, libs, tmp)]
        if not objs or any(not o.exists() or o.stat().st_size == 0 for o in objs):
            raise CompileError("ExecutionEngine produced no object file to export")
        meta = tmp / "signatures.c"
        sig_json = signatures_to_json(exe.signatures)
        digest = hashlib.sha256(sig_json.encode()).hexdigest()
        meta.write_text(f"__attribute__((visibility(\"default\"))) const char "
                        f"{SIGNATURE_SYMBOL}[] =\n{c_string(sig_json)};\n"
                        f"__attribute__((visibility(\"default\"))) const char "
                        f"{DIGEST_SYMBOL}[] = \"{digest}\";\n" + _SHIM_C
                        + _target_symbol(exe))
        # Linked next to its destination (same filesystem: the rename is atomic
        # and never crosses devices, e.g. /tmp on tmpfs).
        tmp_out = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        # Only the target's device runtime (cuda) or, for parallel CPU code,
        # LLVM's OpenMP runtime (libomp.so) is linked and copied beside the
        # library; -z defs makes any other unresolved symbol a link error here
        # rather than a load error there.
        device_libs = [lib for lib in libs if lib.name != "libmlir_c_runner_utils.so"]
        cmd = [compiler(), "-shared", "-fPIC", "-O2", "-o", str(tmp_out), *map(str, objs), "-x", "c",
               str(meta), "-x", "none", *[f"-L{d}" for d in dict.fromkeys(
                   str(lib.parent) for lib in [libs[0], *device_libs])],
               *[f"-l:{lib.name}" for lib in device_libs],
               "-Wl,-rpath,$ORIGIN", "-Wl,-z,defs", "-lm", "-lc"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tmp_out.unlink(missing_ok=True)
            raise CompileError("linking the exported library failed:\n" + " ".join(cmd) +
                               "\n" + proc.stderr)
        for lib in device_libs:
            dest = path.parent / lib.name
            if not dest.exists() or dest.stat().st_size != lib.stat().st_size:
                shutil.copy2(lib, dest)
        try:
            os.replace(tmp_out, path)   # atomic: no half-written library
        finally:
            tmp_out.unlink(missing_ok=True)
    return path
