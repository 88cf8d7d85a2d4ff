# RUN: %PYTHON %s %S/Inputs | FileCheck %s
# Host detection from /proc/cpuinfo text (an AVX2-only AMD EPYC, an AVX-512
# Xeon, an aarch64 Neoverse N1), sysfs cache sizes, named targets, the
# schedule parameters each gets, and the packaged cpu_schedule.mlir being the
# template's AVX-512 instance.

import dataclasses
import os
import sys
import tempfile

from gradir.conversion.cpu import schedule
from gradir.conversion.cpu.host import (missing_features, parse_cpuinfo, read_cache_sizes,
                                        resolve)

INPUTS = sys.argv[1]


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def fixture(name, machine):
    with open(os.path.join(INPUTS, f"cpuinfo_{name}.txt")) as f:
        return parse_cpuinfo(f.read(), machine, caches=(32 * 1024, 512 * 1024))


def show(t):
    p = schedule.schedule_params(t)
    print(f"{t.model}: {t.arch} {t.isa} {t.vector_bits}x{t.vector_registers} "
          f"f32 {p.f32_m}x{p.f32_n}/k{p.f32_k} f64 {p.f64_m}x{p.f64_n}/k{p.f64_k} "
          f"tag '{p.tag}'")


@run
def test_cpuinfo():
    avx2 = fixture("avx2", "x86_64")
    show(avx2)
    # only the first processor's flags count; pni/abm are sse3/lzcnt
    print("avx512f" in avx2.features, "sse3" in avx2.features, "lzcnt" in avx2.features)
    avx512 = fixture("avx512", "x86_64")
    show(avx512)
    arm = fixture("aarch64", "aarch64")
    show(arm)
    print("missing on the EPYC:", missing_features(avx512.features, avx2))
    print("missing on the Xeon:", missing_features(resolve("x86-64-v3").features, avx512))
    # the maker and the L2: the matmul kernels pack rhs panels from the
    # schedule's PACK_ROWS on AMD cores with 1 MiB of L2 or more (Zen 5),
    # from 32 rows elsewhere (Intel, the EPYC 7B12's 512 KiB, named
    # targets); the kernel variant (part of every kernel symbol) follows
    from gradir.conversion.cpu.kernels import kernel_text, pack_rows, variant
    zen5 = avx2.__class__(**{**avx2.__dict__, "l2": 1 << 20})
    print("vendors:", repr(avx2.vendor), repr(avx512.vendor), repr(arm.vendor),
          repr(resolve("x86-64-v3").vendor))
    print("pack rows:", pack_rows(avx2), pack_rows(zen5), pack_rows(avx512),
          pack_rows(resolve("x86-64-v3")), pack_rows(arm),
          variant(zen5) != variant(zen5.__class__(**{**zen5.__dict__, "vendor": ""})))
    print("in the kernels:", "%cPR = arith.constant 32 : index" in kernel_text(avx512),
          "%cPR = arith.constant 32 : index" in kernel_text(avx2),
          "%cPR = arith.constant 256 : index" in kernel_text(zen5))
# CHECK-LABEL: TEST: test_cpuinfo
# CHECK-NEXT: AMD EPYC 7B12: x86_64 avx2 256x16 f32 6x16/k256 f64 6x8/k256 tag '_f32_6x16k256_f64_6x8k256_t8_mb192x96'
# CHECK-NEXT: False True True
# CHECK-NEXT: Intel(R) Xeon(R) Platinum 8175M CPU @ 2.50GHz: x86_64 avx512 512x32 f32 8x32/k128 f64 8x16/k128 tag '_f32_8x32k128_f64_8x16k128_t16_mb384x192'
# CHECK-NEXT: aarch64 neon 128x32 f32 8x8/k256 f64 8x4/k256 tag '_f32_8x8k256_f64_8x4k256_t4_mb192x96'
# CHECK-NEXT: missing on the EPYC: ['avx512bw', 'avx512cd', 'avx512dq', 'avx512f', 'avx512vl']
# CHECK-NEXT: missing on the Xeon: []
# CHECK-NEXT: vendors: 'AuthenticAMD' 'GenuineIntel' '' ''
# CHECK-NEXT: pack rows: 32 256 32 32 32 True
# CHECK-NEXT: in the kernels: True True True


@run
def test_llvm_features():
    v3 = resolve("x86-64-v3")
    feats = v3.llvm_features
    print(v3.llvm_cpu, "+avx2" in feats, "+fma" in feats, "-avx512f" in feats,
          "+sse4.2" in feats, "+bmi" in feats)
    print(resolve("host").llvm_cpu, resolve("host").llvm_features)
    try:
        resolve("pentium-mmx")
    except ValueError as e:
        print("error:", str(e).split(" (")[0])
# CHECK-LABEL: TEST: test_llvm_features
# CHECK-NEXT: x86-64-v3 True True True True True
# CHECK-NEXT: None ()
# CHECK-NEXT: error: unknown cpu 'pentium-mmx'


@run
def test_cache_sizes():
    with tempfile.TemporaryDirectory() as root:
        for i, (level, kind, size) in enumerate([("1", "Data", "48K"), ("1", "Instruction",
                                                  "32K"), ("2", "Unified", "1024K")]):
            d = os.path.join(root, f"index{i}")
            os.mkdir(d)
            for name, value in (("level", level), ("type", kind), ("size", size)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(value + "\n")
        print(read_cache_sizes(root), read_cache_sizes(os.path.join(root, "none")))
# CHECK-LABEL: TEST: test_cache_sizes
# CHECK-NEXT: (49152, 1048576) (32768, 1048576)


@run
def test_packaged_schedule():
    # cpu_schedule.mlir (for mlir-opt users) is the template's AVX-512 instance
    text = schedule.schedule_text(schedule.DEFAULT)
    print(text == schedule.SCHEDULE_LIBRARY.read_text(),
          schedule.schedule_path(schedule.schedule_params(
              dataclasses.replace(resolve("x86-64-v4"), l1d=48 * 1024))) ==
          schedule.SCHEDULE_LIBRARY)
    v3 = schedule.schedule_params("x86-64-v3")
    path = schedule.schedule_path(v3)
    body = path.read_text()
    print(path.name, f"@{v3.entry_point}(" in body, "tile_sizes [6, 0, 1]" in body and "tile_sizes [0, 16, 0]" in body,
          "shuffle_1d" in body, "$" in body)
# CHECK-LABEL: TEST: test_packaged_schedule
# CHECK-NEXT: True True
# CHECK-NEXT: cpu_schedule_f32_6x16k256_f64_6x8k256_t8_mb384x192.mlir True True True False


@run
def test_thread_schedules():
    # the thread count is a parameter: one instance (tag, file) per count,
    # whose parallel entry point splits packed matmuls into that many strips
    for cpu in ("x86-64-v4", "x86-64-v3"):
        for threads in (1, 2, 3):
            p = schedule.schedule_params(cpu, threads)
            body = schedule.schedule_path(p).read_text()
            print(cpu, threads, repr(p.tag), schedule.schedule_path(p).name,
                  f"@{p.parallel_entry_point}(" in body,
                  f"target_size = {threads * p.f32_n}}}" in body,
                  f"num_threads [0, {threads}]" in body,
                  f"-> @schedule_matmul_f32_thread_strips{p.tag}," in body)
    print(schedule.DEFAULT.for_threads(2).tag, schedule.DEFAULT.for_threads(2).threads)
# CHECK-LABEL: TEST: test_thread_schedules
# CHECK-NEXT: x86-64-v4 1 '' cpu_schedule.mlir True True True False
# CHECK-NEXT: x86-64-v4 2 '_p2' cpu_schedule_avx512_p2.mlir True True True True
# CHECK-NEXT: x86-64-v4 3 '_p3' cpu_schedule_avx512_p3.mlir True True True True
# CHECK-NEXT: x86-64-v3 1 '_f32_6x16k256_f64_6x8k256_t8_mb384x192' cpu_schedule_f32_6x16k256_f64_6x8k256_t8_mb384x192.mlir True True True False
# CHECK-NEXT: x86-64-v3 2 '_f32_6x16k256_f64_6x8k256_t8_mb384x192_p2' cpu_schedule_f32_6x16k256_f64_6x8k256_t8_mb384x192_p2.mlir True True True True
# CHECK-NEXT: x86-64-v3 3 '_f32_6x16k256_f64_6x8k256_t8_mb384x192_p3' cpu_schedule_f32_6x16k256_f64_6x8k256_t8_mb384x192_p3.mlir True True True True
# CHECK-NEXT: _p2 2


@run
def test_schedule_without_matmuls():
    # Programs with no matmul left for the schedule (their 2-D ones call the
    # kernels) preload its instance without the matmul sequences: about
    # half the text, every entry point kept, valid (each symbol it names
    # defined), its own tag (both instances can be in one context), and
    # the same code for what it schedules (test/conversion/cpu/numeric_*
    # run through it).
    import re
    import gradir
    from mlir import ir
    from mlir.passmanager import PassManager
    for cpu, threads in (("x86-64-v4", 1), ("x86-64-v4", 2), ("x86-64-v3", 3)):
        p = schedule.schedule_params(cpu, threads)
        q = p.without_matmuls()
        full, small = schedule.schedule_text(p), schedule.schedule_text(q)
        names = set(re.findall(r"named_sequence @(\w+)", small))
        with gradir.make_context() as ctx:
            valid = ir.Module.parse(small).operation.verify()
            both = ir.Module.parse("module {}")
            PassManager.parse("builtin.module(transform-preload-library{transform-library-paths="
                              f"{schedule.schedule_path(p)},{schedule.schedule_path(q)}}})"
                              ).run(both.operation)
        print(cpu, threads, repr(q.tag), schedule.schedule_path(q).name,
              len(small) < 0.55 * len(full), valid,
              all(e in names for e in (q.entry_point, q.parallel_entry_point,
                                       q.elementwise_entry_point, q.generalize_entry_point)),
              any("matmul" in n for n in names), all(n.endswith(q.tag) for n in names),
              schedule.schedule_path(q).read_text() == small)
    try:
        schedule.without_matmuls("module {")
    except ValueError as err:
        print("refused:", err)
# CHECK-LABEL: TEST: test_schedule_without_matmuls
# CHECK-NEXT: x86-64-v4 1 '_nm' cpu_schedule_avx512_nm.mlir True True True False True True
# CHECK-NEXT: x86-64-v4 2 '_p2_nm' cpu_schedule_avx512_p2_nm.mlir True True True False True True
# CHECK-NEXT: x86-64-v3 3 '_f32_6x16k256_f64_6x8k256_t8_mb384x192_p3_nm' cpu_schedule_f32_6x16k256_f64_6x8k256_t8_mb384x192_p3_nm.mlir True True True False True True
# CHECK-NEXT: refused: a CPU schedule ends with its module's closing brace
