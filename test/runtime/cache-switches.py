# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# The compile cache's key holds the lowering switches a program changed
# (runtime/cache.py, _switches): a build made with the implicit-GEMM
# convolution kernels is not served once conv.CONV_KERNEL is turned off (it
# was: tests comparing the two lowerings compared one build with itself),
# the switch set back finds the first entry again, and a module constant
# left as its source assigns it adds nothing to the key.

import sys

import numpy as np

import gradir
from gradir.conversion.cpu import rlx_parallel_loops
from gradir.conversion.linalg import conv
from gradir.runtime import cache
from gradir.runtime.toolchain import CompileOptions

directory = sys.argv[1]
PROGRAM = """func.func @main(%x: tensor<2x4x10x10xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32> {
  %y = "rlx.conv2d"(%x, %w) : (tensor<2x4x10x10xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x8x8xf32>
  return %y : tensor<2x8x8x8xf32>
}"""
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 4, 10, 10)).astype(np.float32)
w = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
(want,) = gradir.interpret(gradir.parse(PROGRAM), "main", x, w)


def build(label):
    exe = gradir.compile(gradir.parse(PROGRAM), cache=directory, threads=1)
    got = exe["main"](x, w)
    cache.wait()
    close = np.allclose(got, want, rtol=1e-4, atol=1e-4)
    print(f"{label}: hit={exe.cache_hit} close={close} switches={cache._switches()}")
    return exe


build("first")
# CHECK: first: hit=False close=True switches=[]
build("again")
# CHECK-NEXT: again: hit=True close=True switches=[]
conv.CONV_KERNEL = False
build("im2col")
# CHECK-NEXT: im2col: hit=False close=True switches=[('gradir.conversion.linalg.conv', 'CONV_KERNEL', 'False')]
build("im2col again")
# CHECK-NEXT: im2col again: hit=True close=True
conv.CONV_KERNEL = True
build("back")
# CHECK-NEXT: back: hit=True close=True switches=[]

# A switch set to its source's value again, and one of a tuple, count as
# unchanged; another module's switch changes the key.
options = CompileOptions(target="cpu")
key = cache.cache_key(PROGRAM, options)
conv.CONV_KERNEL_STRIDES = [(1, 1)]
print("list equal to the tuple:", cache.cache_key(PROGRAM, options) == key)
# CHECK-NEXT: list equal to the tuple: True
conv.CONV_KERNEL_STRIDES = ((1, 1), (2, 2))
print("strides widened:", cache.cache_key(PROGRAM, options) == key)
# CHECK-NEXT: strides widened: False
conv.CONV_KERNEL_STRIDES = ((1, 1),)
saved = rlx_parallel_loops.SCHEDULE
rlx_parallel_loops.SCHEDULE = "static"
print("schedule static:", cache.cache_key(PROGRAM, options) == key)
# CHECK-NEXT: schedule static: False
rlx_parallel_loops.SCHEDULE = saved
print("restored:", cache.cache_key(PROGRAM, options) == key)
# CHECK-NEXT: restored: True
