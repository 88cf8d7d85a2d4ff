"""AOT export: a compiled module as a self-describing shared library."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from .. import _compat
from ..ir import make_context
from .abi import signatures_to_json
from .signature import CompileError
from .toolchain import c_string, compiler, uses_openmp

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


def _library_data(exe) -> list[tuple[str, str]]:
    """(symbol, NUL-terminated string) the library exports: the signatures'
    JSON, its digest and (CPU) the target record."""
    sig_json = signatures_to_json(exe.signatures)
    data = [(SIGNATURE_SYMBOL, sig_json),
            (DIGEST_SYMBOL, hashlib.sha256(sig_json.encode()).hexdigest())]
    if exe.options.target == "cpu":
        from .target_check import TARGET_SYMBOL, target_record
        data.append((TARGET_SYMBOL, target_record(exe.options.cpu)))
    return data


def data_llvm_ir(exe) -> str:
    """issue 14 (compile time): ``_library_data`` as LLVM IR globals, for
    the tools path to append to the module it compiles, so linking needs no
    C compiler run for them (``export_library(..., data_in_objects=True)``)."""
    lines = []
    for name, text in _library_data(exe):
        raw = text.encode() + b"\0"
        body = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                       for b in raw)
        lines.append(f'@{name} = constant [{len(raw)} x i8] c"{body}", align 1')
    return "\n".join(lines) + "\n"


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


def unexportable_names(signatures) -> list[str]:
    """The function names of ``signatures`` that are no C identifiers: a
    library cannot export them (the loader refused them after the export
    had succeeded)."""
    import re
    return [n for n in signatures if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]


def export_library(exe, path: Path, object_file: Path | None = None,
                   data_in_objects: bool = False, needs_shim: bool = True) -> Path:
    """Writes ``path`` (a .so) holding exe's functions and signatures, plus
    the MLIR runtime libraries it links against, next to it.  ``object_file``:
    exe's code already compiled (PIC), e.g. by the JIT, or a list of objects;
    else compiled here.  ``data_in_objects``: the objects define the
    signature, digest and target symbols already (``data_llvm_ir``);
    ``needs_shim`` False: they do not call ``memrefCopy`` (with both, no C
    file is compiled: the link alone)."""
    bad = unexportable_names(exe.signatures)
    if bad:
        raise CompileError(f"@{bad[0]} cannot be exported: a library's functions are C "
                           f"symbols (_mlir_ciface_<name>), and '{bad[0]}' is no C identifier "
                           f"([A-Za-z_][A-Za-z0-9_]*); the JIT runs it")
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    # issue 14 (parallel compile): a split executable says so itself (its
    # llvm_ir would lower the whole module again)
    parallel = getattr(exe, "uses_openmp", None)
    if parallel is None:
        parallel = uses_openmp(exe.llvm_ir)
    threads = getattr(exe.options, "threads", 1) if parallel else 1
    # issue 14 (compile time): gradir's matmul kernel library, linked by
    # name and copied beside the library like libomp
    kernels = getattr(exe, "uses_kernels", None)
    if kernels is None:
        from .kernels import uses_kernels
        kernels = uses_kernels(exe.llvm_ir)
    from .kernels import runtime_libraries as kernel_runtime_libraries
    libs = kernel_runtime_libraries(exe.options.target, threads,
                                    getattr(exe.options, "cpu", "host") if kernels else None)
    with tempfile.TemporaryDirectory(prefix="gradir-export-") as tmp:
        tmp = Path(tmp)
        if isinstance(object_file, (list, tuple)):      # issue 14: llvm_tools' partitions
            objs = [Path(o) for o in object_file]
        else:
            objs = [Path(object_file) if object_file is not None
                    else _compile_object(exe, kernel_runtime_libraries(
                        exe.options.target, threads,
                        getattr(exe.options, "cpu", "host") if kernels else None,
                        process=True), tmp)]
        if not objs or any(not o.exists() or o.stat().st_size == 0 for o in objs):
            raise CompileError("ExecutionEngine produced no object file to export")
        source = "" if data_in_objects else "".join(
            f"__attribute__((visibility(\"default\"))) const char {name}[] =\n"
            f"{c_string(text)};\n" for name, text in _library_data(exe))
        if needs_shim:
            source += _SHIM_C
        source += getattr(exe, "glue_c", "")     # issue 14: a split function's parts in order
        c_files = []
        if source:
            meta = tmp / "signatures.c"
            meta.write_text(source)
            c_files = ["-x", "c", str(meta), "-x", "none"]
        # Linked next to its destination (same filesystem: the rename is atomic
        # and never crosses devices, e.g. /tmp on tmpfs).
        tmp_out = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        # Only the target's device runtime (cuda) or, for parallel CPU code,
        # LLVM's OpenMP runtime (libomp.so) is linked and copied beside the
        # library; -z defs makes any other unresolved symbol a link error here
        # rather than a load error there.
        device_libs = [lib for lib in libs if lib.name != "libmlir_c_runner_utils.so"]
        cmd = [compiler(), "-shared", "-fPIC", "-O2", "-o", str(tmp_out), *map(str, objs),
               *c_files, *[f"-L{d}" for d in dict.fromkeys(
                   str(lib.parent) for lib in [libs[0], *device_libs])],
               *[f"-l:{lib.name}" for lib in device_libs],
               "-Wl,-rpath,$ORIGIN", "-Wl,-z,defs",
               # the library's calls of its own functions bind to them, not to
               # a same-named symbol of the process (a function @printf or
               # @PyList_New called libc's / libpython's: wrong results, SIGSEGV)
               "-Wl,-Bsymbolic", "-lm", "-lc"]
        import subprocess   # (only here: ~4 ms of every first compile's imports)
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
