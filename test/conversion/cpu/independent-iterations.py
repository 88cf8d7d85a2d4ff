# RUN: %PYTHON %s | FileCheck %s
# The loops rlx-to-linalg marks gradir.independent_iterations (blocks of
# images of a convolution) run their iterations on the threads: each
# iteration must write only buffers of its own.  A 64x288 accumulator inside
# such a loop (a weight gradient's blocks of channels) was once merged by CSE
# with another convolution's 64x288 packed weights before the loop, so both
# threads accumulated into one buffer (wrong gradients at threads=2, a
# different error each run).  Checked here on the bufferized IR (every fill
# in such a loop writes a buffer allocated in the loop) and on the numbers.

import numpy as np
from mlir import ir

import gradir
from gradir.conversion.cpu.pipeline import lower_to_llvm
from gradir.runtime.jit import make_context


def T(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


CONV = ("{dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, "
        "strides = array<i64: %d, %d>}")
PERM = "{axes = array<i64: 1, 0, 2, 3>}"
SRC = f"""
func.func @f(%x: {T([32, 32, 16, 16])}, %w: {T([64, 32, 3, 3])}, %g: {T([32, 64, 8, 8])})
    -> ({T([64, 64, 3, 3])}, {T([32, 64, 8, 8])}) {{
  %h = "rlx.conv2d"(%x, %w) {CONV % (2, 2)} : ({T([32, 32, 16, 16])}, {T([64, 32, 3, 3])}) -> {T([32, 64, 8, 8])}
  %a = "rlx.permute_dims"(%h) {PERM} : ({T([32, 64, 8, 8])}) -> {T([64, 32, 8, 8])}
  %b = "rlx.permute_dims"(%g) {PERM} : ({T([32, 64, 8, 8])}) -> {T([64, 32, 8, 8])}
  %c = "rlx.conv2d"(%a, %b) {CONV % (1, 1)} : ({T([64, 32, 8, 8])}, {T([64, 32, 8, 8])}) -> {T([64, 64, 3, 3])}
  return %c, %h : {T([64, 64, 3, 3])}, {T([32, 64, 8, 8])}
}}
"""

module = gradir.parse(SRC)

with make_context():
    lowered = ir.Module.parse(str(module))
    lower_to_llvm(lowered.operation, stage="bufferized", kernels=True, threads=2)
    loops, outside = 0, []

    def walk(op, loop):
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    inner = loop
                    if child.name == "scf.for" and "gradir.independent_iterations" in child.attributes:
                        inner = child
                    if loop is not None and child.name == "linalg.fill":
                        target = child.operands[1]
                        owner = target.owner
                        inside = False
                        parent = owner if not isinstance(owner, ir.Block) else None
                        while parent is not None:
                            if parent == loop:
                                inside = True
                                break
                            parent = parent.parent
                        if not inside:
                            outside.append(str(child)[:120])
                    walk(child, inner)
                    if inner is not loop:
                        global loops
                        loops += 1

    walk(lowered.operation, None)
    print(f"independent loops: {loops}; fills into buffers from outside: {len(outside)}")
    for line in outside:
        print("  ", line)
# CHECK: independent loops: {{[1-9][0-9]*}}; fills into buffers from outside: 0

rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype(np.float32)
        for s in ([32, 32, 16, 16], [64, 32, 3, 3], [32, 64, 8, 8])]
want = gradir.interpret(module, "f", *args)
for threads in (1, 2):
    f = gradir.compile(module, threads=threads, cache=False)["f"]
    worst = 0.0
    for _ in range(20):
        for got, ref in zip(f(*args), want):
            worst = max(worst, float(np.max(np.abs(got - ref)) / np.max(np.abs(ref))))
    print(f"threads={threads}: {'ok' if worst < 1e-4 else f'WRONG (rel. error {worst:.2g})'}")
# CHECK: threads=1: ok
# CHECK: threads=2: ok
