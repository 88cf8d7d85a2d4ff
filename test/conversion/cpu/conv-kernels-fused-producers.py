# RUN: %PYTHON %s | FileCheck %s
# Convolutions whose images an elementwise generic produces (a relu before an
# unpadded conv; the weight gradient's permute_dims of its data, LeNet-5's
# conv2) still call the kernels: the marked generics read the images through
# a linalg.copy that elementwise fusion leaves alone (conversion/linalg/
# conv.py) and rlx-conv-kernels drops.  Fused into the generic, the producer
# took the mark away and the convolution ran as scalar loops (LeNet-5's step
# 1.21 -> 5.73 ms).  Results against the interpreter, at 1 and 2 threads.

import os
import re

import numpy as np

import gradir

os.environ["GRADIR_PARALLEL_COMPILE"] = "0"     # one function: its IR is the whole step

T = {"x": "tensor<64x6x12x12xf32>", "w": "tensor<16x6x5x5xf32>", "y": "tensor<64x16x8x8xf32>",
     "xt": "tensor<6x64x12x12xf32>", "gt": "tensor<16x64x8x8xf32>", "dw": "tensor<6x16x5x5xf32>"}
PROGRAM = f"""func.func @main(%x: {T['x']}, %w: {T['w']}, %g: {T['y']}) -> ({T['y']}, {T['dw']}) {{
  %r = "rlx.relu"(%x) : ({T['x']}) -> {T['x']}
  %y = "rlx.conv2d"(%r, %w) : ({T['x']}, {T['w']}) -> {T['y']}
  %xt = "rlx.permute_dims"(%r) {{axes = array<i64: 1, 0, 2, 3>}} : ({T['x']}) -> {T['xt']}
  %gt = "rlx.permute_dims"(%g) {{axes = array<i64: 1, 0, 2, 3>}} : ({T['y']}) -> {T['gt']}
  %dw = "rlx.conv2d"(%xt, %gt) : ({T['xt']}, {T['gt']}) -> {T['dw']}
  return %y, %dw : {T['y']}, {T['dw']}
}}"""

rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype(np.float32) for s in ((64, 6, 12, 12), (16, 6, 5, 5),
                                                            (64, 16, 8, 8))]
want = gradir.interpret(gradir.parse(PROGRAM), "main", *args)
for threads in (1, 2):
    exe = gradir.compile(gradir.parse(PROGRAM), threads=threads, cache=False)
    got = exe["main"](*args)
    close = all(np.allclose(a, b, rtol=1e-4, atol=1e-3) for a, b in zip(got, want))
    text = exe.llvm_ir
    calls = {k: len(re.findall(rf"call [^\n]*@gradir_kernel_[0-9a-f]+_{k}_f32\(", text))
             for k in ("conv", "wgrad_conv")}
    print(f"threads {threads}: close={close} calls={calls}")
# CHECK: threads 1: close=True calls={'conv': 1, 'wgrad_conv': 1}
# CHECK: threads 2: close=True calls={'conv': 1, 'wgrad_conv': 1}
