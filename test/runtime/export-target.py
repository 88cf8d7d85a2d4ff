# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# An exported library records the CPU it was compiled for (symbol
# gradir_cpu_target); gradir.runtime.load refuses it, with an error naming the
# missing features, on a CPU that lacks them (a library recording a feature
# no CPU has; a library for AVX-512 checked against an AVX2-only CPU).

import ctypes
import dataclasses
import json
import os
import sys

import numpy as np

import gradir
import gradir.runtime as rt
from gradir.conversion.cpu.host import parse_cpuinfo, resolve
from gradir.runtime.elf import read_elf
from gradir.runtime.target_check import (TargetMismatchError, check_library_target,
                                         read_image_target, read_library_target)

out = sys.argv[1]
module = gradir.parse("""
func.func @main(%x: tensor<16x24xf32>, %w: tensor<24x8xf32>) -> tensor<16x8xf32> {
  %m = "rlx.matmul"(%x, %w) : (tensor<16x24xf32>, tensor<24x8xf32>) -> tensor<16x8xf32>
  return %m : tensor<16x8xf32>
}""")
rng = np.random.default_rng(0)
x = rng.standard_normal((16, 24)).astype(np.float32)
w = rng.standard_normal((24, 8)).astype(np.float32)
want = gradir.interpret(module, "main", x, w)[0]

# A library for x86-64-v3 records exactly that CPU's features and runs here.
exe = gradir.compile(module, cpu="x86-64-v3")
v3 = rt.load(exe.export_library(os.path.join(out, "v3.so")))
record = read_library_target(v3._dll)
print(record["cpu"], record["arch"], "avx2" in record["features"],
      "avx512f" in record["features"], record["features"] == list(resolve("x86-64-v3").features))
print("v3 matches the interpreter:", np.allclose(v3["main"](x, w), want, rtol=1e-5, atol=1e-5))
# CHECK: x86-64-v3 x86_64 True False True
# CHECK-NEXT: v3 matches the interpreter: True

# A library claiming a feature no CPU has is refused by load.
fake = dataclasses.replace(resolve("x86-64-v3"), name="x86-64-v3",
                           features=resolve("x86-64-v3").features + ("avx1024_fake",))
exe_fake = gradir.compile(module, cpu="x86-64-v3")
object.__setattr__(exe_fake, "options", dataclasses.replace(exe_fake.options, cpu=fake))
path = exe_fake.export_library(os.path.join(out, "fake.so"))
# The refusal comes before dlopen (no code of the library runs): a CDLL that
# fails the test if it is called.
real_cdll = ctypes.CDLL
def no_dlopen(*args, **kwargs):
    raise AssertionError("dlopen ran before the CPU check")
ctypes.CDLL = no_dlopen
try:
    rt.load(path)
    print("loaded (wrong)")
except TargetMismatchError as err:
    print("refused:", str(err).replace(str(path), "fake.so"))
    print("a LibraryError:", isinstance(err, rt.LibraryError))
finally:
    ctypes.CDLL = real_cdll
# CHECK-NEXT: refused: fake.so was compiled for cpu x86-64-v3 and needs CPU features this machine ({{.*}}) lacks: avx1024_fake; re-export it with gradir.compile(..., cpu='x86-64-v3') or another cpu this machine has
# CHECK-NEXT: a LibraryError: True

# The record read from the file (before loading) is the one the loaded library holds.
print("file record == loaded record:", read_image_target(read_elf(path)) == read_library_target(ctypes.CDLL(str(path))))
# CHECK-NEXT: file record == loaded record: True

# A damaged record (not JSON) is a LibraryError, not a crash.
data = bytearray(open(path, "rb").read())
at = data.find(b'{"arch"')
data[at] = ord("#")
with open(os.path.join(out, "badrecord.so"), "wb") as f:
    f.write(data)
try:
    rt.load(os.path.join(out, "badrecord.so"))
    print("loaded (wrong)")
except rt.LibraryError as err:
    print("damaged:", type(err).__name__, str(err).split(" has ", 1)[1])
# CHECK-NEXT: damaged: LibraryError a corrupt CPU target record (gradir_cpu_target)

# An AVX-512 library on an AVX2-only EPYC (its /proc/cpuinfo), and on aarch64.
exe4 = gradir.compile(module, cpu="x86-64-v4")
path4 = exe4.export_library(os.path.join(out, "v4.so"))
dll = ctypes.CDLL(str(path4))
with open(os.path.join(os.path.dirname(__file__), "..", "conversion", "cpu", "Inputs",
                       "cpuinfo_avx2.txt")) as f:
    epyc = parse_cpuinfo(f.read(), "x86_64")
for host in (epyc, parse_cpuinfo("Features: fp asimd\n", "aarch64")):
    try:
        check_library_target(dll, "v4.so", host)
    except TargetMismatchError as err:
        print("refused:", err)
check_library_target(dll, "v4.so", resolve("x86-64-v4"))
print("accepted on x86-64-v4")
# CHECK-NEXT: refused: v4.so was compiled for cpu x86-64-v4 and needs CPU features this machine (AMD EPYC 7B12) lacks: avx512bw, avx512cd, avx512dq, avx512f, avx512vl;
# CHECK-NEXT: refused: v4.so was compiled for x86_64 (cpu x86-64-v4), this machine is aarch64
# CHECK-NEXT: accepted on x86-64-v4

# The host build records the host's model and features.
host_rec = json.loads(rt.target_check.target_record("host"))
print(host_rec["cpu"].startswith("host:"), host_rec["arch"])
# CHECK-NEXT: True x86_64

# gradir.compile for a CPU of another architecture is refused (LLVM's JIT
# ended the process); for an x86 CPU with features this machine lacks, the
# code is compiled and exported, but its functions refuse to run (SIGILL).
try:
    gradir.compile(module, cpu="neoverse-n1", cache=False)
    print("compiled (wrong)")
except gradir.runtime.signature.CompileError as err:
    print("refused:", str(err).split(":")[0])
# CHECK-NEXT: refused: cpu 'neoverse-n1' is an aarch64 CPU and this machine is x86_64
from gradir.conversion.cpu import host as _host  # noqa: E402
real_detect = _host.detect_host
_host.detect_host = lambda: epyc
try:
    exe_v4 = gradir.compile(module, cpu="x86-64-v4", cache=False)
    try:
        exe_v4[sorted(exe_v4.functions)[0]]
        print("ran (wrong)")
    except TargetMismatchError as err:
        print("call refused:", str(err).split(";")[0])
    print("exported:", os.path.basename(exe_v4.export_library(os.path.join(out, "v4b.so"))))
finally:
    _host.detect_host = real_detect
# CHECK-NEXT: call refused: the code was compiled for cpu x86-64-v4 and needs CPU features this machine (AMD EPYC 7B12) lacks: avx512bw, avx512cd, avx512dq, avx512f, avx512vl
# CHECK-NEXT: exported: v4b.so
