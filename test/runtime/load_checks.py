# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# gradir.runtime.load checks a library before running any of its code: a
# doctored signature (dtype object, a too-small output shape), a symbol at a
# bogus address, a truncated or foreign file are LibraryError (an OSError),
# and a constructor of such a file never runs.  A library re-exported to the
# same path is loaded anew.  export_library works across filesystems (TMPDIR
# on another device than the destination).  Arguments that would be
# converted with a loss are ArgumentError.

import os
import struct
import subprocess
import sys

import numpy as np

import gradir
import gradir.runtime as rt
from gradir.runtime.elf import read_elf
from gradir.runtime.toolchain import compiler

out = sys.argv[1]


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def export(body, name="model.so", directory=out):
    module = gradir.parse(body)
    return str(gradir.compile(module, opt_level=0).export_library(
        os.path.join(directory, name)))


SCALE = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %c = arith.constant dense<{c}> : tensor<3xf32>
  %0 = "rlx.multiply"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}}"""


@run
def reexport_is_seen():
    path = export(SCALE.format(c="2.0"))
    a = rt.load(path)
    path = export(SCALE.format(c="3.0"))
    b = rt.load(path)
    x = np.ones(3, np.float32)
    print("first:", a["main"](x), "after re-export:", b["main"](x))
    print("no copies left:", sorted(f for f in os.listdir(out) if f.startswith(".")))
# CHECK-LABEL: TEST: reexport_is_seen
# CHECK: first: [2. 2. 2.] after re-export: [3. 3. 3.]
# CHECK: no copies left: []


def doctored(name, edit):
    path = export(SCALE.format(c="2.0"), name=name)
    data = bytearray(open(path, "rb").read())
    edit(data, read_elf(path))
    with open(path, "wb") as f:
        f.write(data)
    try:
        rt.load(path)
        print(name, "loaded")
    except rt.LibraryError as err:
        print(name, "LibraryError:", str(err).split(": ", 1)[1])


def replace(old, new):
    def edit(data, image):
        i = data.find(old)
        assert i >= 0 and len(old) == len(new)
        data[i:i + len(old)] = new
    return edit


def bogus_address(data, image):
    # Point the signature symbol far past the end of the file.
    for sh in range(struct.unpack_from("<H", data, 60)[0]):
        off = struct.unpack_from("<Q", data, 40)[0] + sh * 64
        if struct.unpack_from("<I", data, off + 4)[0] != 11:     # SHT_DYNSYM
            continue
        sym_off, sym_size, link = struct.unpack_from("<QQI", data, off + 24)
        str_off = struct.unpack_from("<Q", data, struct.unpack_from("<Q", data, 40)[0]
                                     + link * 64 + 24)[0]
        for k in range(sym_size // 24):
            st_name = struct.unpack_from("<I", data, sym_off + k * 24)[0]
            if data[str_off + st_name:].startswith(b"gradir_signatures\0"):
                struct.pack_into("<Q", data, sym_off + k * 24 + 8, 0x7FFFFFFF0000)


@run
def doctored_libraries():
    doctored("dtype.so", replace(b'"float32"', b'"object" '))
    doctored("shape.so", replace(b'[[3], "float32"]', b'[[1], "float32"]'))
    doctored("address.so", bogus_address)
    doctored("truncated.so", lambda data, image: data.__delitem__(slice(len(data) // 2, None)))
    doctored("garbage.so", lambda data, image: data.__setitem__(slice(0, 4), b"\x7fELG"))
# CHECK-LABEL: TEST: doctored_libraries
# CHECK: dtype.so LibraryError: signature metadata does not match its digest (the file was modified or is corrupt)
# CHECK: shape.so LibraryError: signature metadata does not match its digest (the file was modified or is corrupt)
# CHECK: address.so LibraryError: symbol 'gradir_signatures' lies outside the file
# CHECK: truncated.so LibraryError: truncated or corrupt
# CHECK: garbage.so LibraryError: not a 64-bit little-endian ELF shared library


@run
def constructors_run_after_checks():
    # A library whose constructor leaves a mark, with metadata naming a
    # function it does not have: load refuses it before dlopen.
    marker = os.path.join(out, "constructor-ran")
    src = os.path.join(out, "evil.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n'
                f'const char gradir_signatures[] = "{{\\"version\\": 1, \\"functions\\": '
                '[{\\"name\\": \\"f\\", \\"inputs\\": [], \\"input_tree\\": [], '
                '\\"outputs\\": [], \\"output_tree\\": []}]}";\n'
                'const char gradir_signatures_sha256[] = "x";\n'
                '__attribute__((constructor)) static void mark(void) {'
                f' FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n')
    lib = os.path.join(out, "evil.so")
    subprocess.run([compiler(), "-shared", "-fPIC", "-o", lib, src], check=True)
    try:
        rt.load(lib)
    except rt.LibraryError as err:
        print("refused:", str(err).split(": ", 1)[1])
    print("constructor ran:", os.path.exists(marker))
# CHECK-LABEL: TEST: constructors_run_after_checks
# CHECK: refused: signature metadata does not match its digest
# CHECK: constructor ran: False


@run
def export_across_filesystems():
    # TMPDIR on another filesystem than the destination (tmpfs /dev/shm when
    # there is one): the library is linked next to its destination.
    other = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else out
    code = ("import sys, gradir; m = gradir.parse(sys.argv[1]); "
            "print(gradir.compile(m, opt_level=0).export_library(sys.argv[2]).name)")
    env = dict(os.environ, TMPDIR=other)
    r = subprocess.run([sys.executable, "-c", code, SCALE.format(c="4.0"),
                        os.path.join(out, "cross.so")], env=env, capture_output=True,
                       text=True)
    print("exported:", r.stdout.strip(), r.stderr.strip()[-300:])
    print("result:", rt.load(os.path.join(out, "cross.so"))["main"](np.ones(3, np.float32)))
# CHECK-LABEL: TEST: export_across_filesystems
# CHECK: exported: cross.so
# CHECK: result: [4. 4. 4.]


@run
def lossy_arguments():
    lib = rt.load(export("""func.func @main(%i: tensor<2xi32>, %x: tensor<2xf64>) -> tensor<2xi32> {
  return %i : tensor<2xi32>
}""", name="ints.so"))
    x = np.zeros(2)
    for args in (([1.5, 2.0], x), ([1, 2**40], x), ([1, 2**70], x),
                 ([1, 2], np.ma.array([1.0, 2.0], mask=[0, 1])), ([1, 2], x)):
        try:
            print("ok", lib["main"](*args))
        except rt.ArgumentError as err:
            print("ArgumentError:", err)
# CHECK-LABEL: TEST: lossy_arguments
# CHECK: ArgumentError: @main: argument 0 must be a int32 array of shape (2,), got float64 values (nothing is converted silently)
# CHECK: ArgumentError: @main: argument 0 must be a int32 array of shape (2,): a value is out of range for int32
# CHECK: ArgumentError: @main: argument 0 must be a int32 array of shape (2,): a value is out of range for int32
# CHECK: ArgumentError: @main: argument 1 must be a float64 array of shape (2,), got a masked array
# CHECK: ok [1 2]


def _section(data: bytes, wanted: str) -> tuple[int, int]:
    """(file offset, size) of ELF64 section ``wanted``."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    names_off = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        base = shoff + i * shentsize
        name_at, = struct.unpack_from("<I", data, base)
        end = data.index(b"\0", names_off + name_at)
        if data[names_off + name_at:end].decode() == wanted:
            return struct.unpack_from("<Q", data, base + 0x18)[0], \
                struct.unpack_from("<Q", data, base + 0x20)[0]
    raise KeyError(wanted)


@run
def damaged_symbols_and_needed():
    # hostile-input review: dlsym missing a symbol the ELF symbol table lists
    # (a .gnu.hash whose Bloom filter says no) was an AttributeError, and a
    # DT_NEEDED name that is not UTF-8 a UnicodeDecodeError (from dlerror's
    # message): both LibraryError now, which the compile cache also catches.
    path = export(SCALE.format(c=2.0), "sym.so")
    data = bytearray(open(path, "rb").read())
    off, _ = _section(data, ".gnu.hash")
    nbuckets, symoffset, bloom_size, shift = struct.unpack_from("<IIII", data, off)
    data[off + 16:off + 16 + 8 * bloom_size] = bytes(8 * bloom_size)
    bad = os.path.join(out, "nosym.so")
    open(bad, "wb").write(data)
    data = bytearray(open(path, "rb").read())
    needed = data.find(b"libomp.so\0")
    if needed < 0:                       # single-threaded code: no libomp; use libc's name
        needed = data.find(b"libc.so.6\0")
    data[needed + 3] = 0xBA
    odd = os.path.join(out, "needed.so")
    open(odd, "wb").write(data)
    for name in (bad, odd):
        try:
            rt.load(name)
            print(os.path.basename(name), "loaded (wrong)")
        except rt.LibraryError as err:
            print(os.path.basename(name), "LibraryError:", str(err)[:80])
# CHECK-LABEL: TEST: damaged_symbols_and_needed
# CHECK: nosym.so LibraryError:
# CHECK: needed.so LibraryError:


@run
def names_of_the_process():
    # hostile-input review: in a loaded library, _mlir_ciface_<name> called
    # <name> through the GOT, which the dynamic linker bound to a same-named
    # symbol of the process (libpython's PyList_New: SIGSEGV; libc's:
    # garbage); the library is linked -Bsymbolic now.  A name that is no C
    # identifier runs in the JIT and is refused by export_library (the
    # loader refused it after the export had succeeded).
    body = """func.func @PyList_New(%x: tensor<3xf32>) -> tensor<f32> {
  %e = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %s = "rlx.sum"(%e) : (tensor<3xf32>) -> tensor<f32>
  return %s : tensor<f32>
}"""
    lib = rt.load(export(body, "pylist.so"))
    y = np.array([3.0, 4.0, 5.0], np.float32)
    print("PyList_New:", np.allclose(lib["PyList_New"](y), np.exp(y).sum()))
    exe = gradir.compile(gradir.parse(body.replace("@PyList_New", '@"a-b"')), cache=False)
    print("JIT a-b:", np.allclose(exe["a-b"](y), np.exp(y).sum()))
    try:
        exe.export_library(os.path.join(out, "ab.so"))
        print("exported (wrong)")
    except gradir.runtime.signature.CompileError as err:
        print("refused:", str(err).split(":")[0])
# CHECK-LABEL: TEST: names_of_the_process
# CHECK-NEXT: PyList_New: True
# CHECK-NEXT: JIT a-b: True
# CHECK-NEXT: refused: @a-b cannot be exported
