# RUN: %PYTHON %s | FileCheck %s
# The SIMT emulator refuses what a GPU would get wrong only sometimes, so the
# emulated tests can fail: a missing barrier in the tiled GEMM (read-after-
# write and write-after-read races), an out-of-bounds index, a barrier in
# divergent code, and host code reading device memory.

import numpy as np
from mlir import ir

import gradir
from gradir.testing import gpu_emulator
from gradir.conversion.gpu.common import walk
from gradir.conversion.gpu.nvvm import lower_to_nvvm

GEMM = """
func.func @main(%a: tensor<40x50xf32>, %b: tensor<50x30xf32>) -> tensor<40x30xf32> {
  %m = "rlx.matmul"(%a, %b) : (tensor<40x50xf32>, tensor<50x30xf32>) -> tensor<40x30xf32>
  return %m : tensor<40x30xf32>
}"""
rng = np.random.default_rng(0)
A = rng.standard_normal((40, 50)).astype(np.float32)
B = rng.standard_normal((50, 30)).astype(np.float32)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def kernels(text):
    module = gradir.parse(text)
    with module.context:
        lower_to_nvvm(module.operation, stop_after="kernels")
    return module


def attempt(module, *args):
    with module.context:
        try:
            out = gpu_emulator.run(module.operation, "main", *args)
            print("ran, max error", float(np.abs(out[0] - A @ B).max()) < 1e-4)
        except gpu_emulator.EmulationError as err:
            print("refused:", str(err).split(": ", 1)[1])


@run
def test_correct_gemm():
    attempt(kernels(GEMM), A, B)
# CHECK-LABEL: TEST: test_correct_gemm
# CHECK-NEXT: ran, max error True


@run
def test_missing_barriers():
    for which in (0, 1):
        module = kernels(GEMM)
        with module.context:
            [op for op in walk(module.operation) if op.name == "gpu.barrier"][which].erase()
        attempt(module, A, B)
# CHECK-LABEL: TEST: test_missing_barriers
# CHECK-NEXT: refused: data race: a thread reads an element another thread wrote without a barrier in between
# CHECK-NEXT: refused: data race: a thread overwrites an element another thread read without a barrier in between


@run
def test_out_of_bounds():
    module = kernels(GEMM)
    with module.context:
        # drop the clamp of the last K tile (50 is not a multiple of 16)
        for op in walk(module.operation):
            if op.name == "arith.minui":
                op.results[0].replace_all_uses_with(op.operands[0])
    attempt(module, A, B)
# CHECK-LABEL: TEST: test_out_of_bounds
# CHECK-NEXT: refused: 'memref.load' index {{[0-9]+}} out of bounds for dimension {{[01]}} of size {{40|50|30}}


@run
def test_divergent_barrier():
    module = gradir.parse("""
func.func @main(%x: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  %d = gpu.alloc () : memref<64xf32>
  gpu.memcpy %d, %x : memref<64xf32>, memref<64xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %low = arith.cmpi ult, %tx, %c32 : index
    scf.if %low {
      gpu.barrier
    }
    gpu.terminator
  }
  gpu.dealloc %d : memref<64xf32>
  return
}""")
    attempt(module, np.zeros(64, np.float32))
# CHECK-LABEL: TEST: test_divergent_barrier
# CHECK-NEXT: refused: gpu.barrier reached by only part of a block


@run
def test_host_reads_device():
    module = gradir.parse("""
func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %d = gpu.alloc () : memref<4xf32>
  gpu.memcpy %d, %x : memref<4xf32>, memref<4xf32>
  %v = memref.load %d[%c0] : memref<4xf32>
  gpu.dealloc %d : memref<4xf32>
  return
}""")
    attempt(module, np.zeros(4, np.float32))
# CHECK-LABEL: TEST: test_host_reads_device
# CHECK-NEXT: refused: 'memref.load' on the host


@run
def test_view_addresses():
    # The aligned pointer of a memref.view is its source's moved by the byte
    # shift (a subview keeps its source's: its offset is the descriptor's),
    # and a descriptor built on the host from such an address (resident
    # buffers and arenas keep addresses in globals) is that view again.
    module = gradir.parse("""
func.func @main(%x: memref<2xf32>, %shifts: memref<2xindex>, %y: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %arena = gpu.alloc () : memref<256xi8>
  %v = memref.view %arena[%c64][] : memref<256xi8> to memref<4xf32>
  %s = memref.subview %v[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  gpu.memcpy %s, %x : memref<2xf32, strided<[1], offset: 2>>, memref<2xf32>
  %pa = memref.extract_aligned_pointer_as_index %arena : memref<256xi8> -> index
  %pv = memref.extract_aligned_pointer_as_index %v : memref<4xf32> -> index
  %ps = memref.extract_aligned_pointer_as_index %s : memref<2xf32, strided<[1], offset: 2>> -> index
  %dv = arith.subi %pv, %pa : index
  %ds = arith.subi %ps, %pa : index
  memref.store %dv, %shifts[%c0] : memref<2xindex>
  memref.store %ds, %shifts[%c1] : memref<2xindex>
  %c8 = arith.constant 8 : index
  %pw = arith.addi %pv, %c8 : index
  %a = arith.index_cast %pw : index to i64
  %p = llvm.inttoptr %a : i64 to !llvm.ptr
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %d0 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %d1 = llvm.insertvalue %p, %d0[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %d2 = llvm.insertvalue %p, %d1[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %d3 = llvm.insertvalue %zero, %d2[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %d4 = llvm.insertvalue %two, %d3[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %d5 = llvm.insertvalue %one, %d4[4, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %w = builtin.unrealized_conversion_cast %d5 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<2xf32>
  gpu.memcpy %y, %w : memref<2xf32>, memref<2xf32>
  gpu.dealloc %arena : memref<256xi8>
  return
}""")
    with module.context:
        try:
            shifts, y = gpu_emulator.run(module.operation, "main",
                                         np.array([1.5, -2.0], np.float32))
            print("byte shifts:", shifts.tolist(), "read back:", y.tolist())
        except gpu_emulator.EmulationError as err:
            print("refused:", str(err).split(": ", 1)[1])
# CHECK-LABEL: TEST: test_view_addresses
# CHECK-NEXT: byte shifts: [64, 64] read back: [1.5, -2.0]
