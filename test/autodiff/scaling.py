# RUN: %PYTHON %s | FileCheck %s
# rlx-gradient (with simplification) takes time linear in the function's
# size on chains where values have one user per layer: a residual chain
# (every layer reads the input and one shared constant again), a chain
# sharing one weight, and one sharing it through a transposed product.
# The time per forward op at 4,000 layers must stay within twice that at
# 500 (CPU time of this process, the best of three runs, so other work on
# the machine disturbs it little; fewer once the verdict is clear): a
# rewrite that scans every user of a shared value, or every transpose of
# it, makes it grow with the depth.

import time

import gradir

T = "tensor<4x16xf32>"
W = "tensor<16x16xf32>"
S = "tensor<16x16xf32>"


def residual(n: int) -> str:
    """``h = tanh(h) * 0.5 + x``: x and the constant have n users each."""
    lines = [f"func.func @main(%x: {T}) -> tensor<f32> {{",
             f"  %c = arith.constant dense<5.000000e-01> : {T}"]
    cur = "%x"
    for i in range(n):
        lines.append(f'  %t{i} = "rlx.tanh"({cur}) : ({T}) -> {T}')
        lines.append(f'  %m{i} = "rlx.multiply"(%t{i}, %c) : ({T}, {T}) -> {T}')
        lines.append(f'  %h{i} = "rlx.add"(%m{i}, %x) : ({T}, {T}) -> {T}')
        cur = f"%h{i}"
    lines.append(f'  %s = "rlx.sum"({cur}) : ({T}) -> tensor<f32>')
    lines.append("  return %s : tensor<f32>\n}")
    return "\n".join(lines)


def shared(n: int) -> str:
    """``h = tanh(h @ w)`` with one ``w``: its n transposes merge into one."""
    lines = [f"func.func @main(%x: {T}, %w: {W}) -> tensor<f32> {{"]
    cur = "%x"
    for i in range(n):
        lines.append(f'  %m{i} = "rlx.matmul"({cur}, %w) : ({T}, {W}) -> {T}')
        lines.append(f'  %h{i} = "rlx.tanh"(%m{i}) : ({T}) -> {T}')
        cur = f"%h{i}"
    lines.append(f'  %s = "rlx.sum"({cur}) : ({T}) -> tensor<f32>')
    lines.append("  return %s : tensor<f32>\n}")
    return "\n".join(lines)


def shared_transposed(n: int) -> str:
    """``h = tanh(transpose(h @ w))``: each transpose of a product asks
    whether a transpose of ``w`` is already computed before it."""
    lines = [f"func.func @main(%x: {S}, %w: {S}) -> tensor<f32> {{"]
    cur = "%x"
    for i in range(n):
        lines.append(f'  %m{i} = "rlx.matmul"({cur}, %w) : ({S}, {S}) -> {S}')
        lines.append(f'  %p{i} = "rlx.permute_dims"(%m{i}) : ({S}) -> {S}')
        lines.append(f'  %h{i} = "rlx.tanh"(%p{i}) : ({S}) -> {S}')
        cur = f"%h{i}"
    lines.append(f'  %s = "rlx.sum"({cur}) : ({S}) -> tensor<f32>')
    lines.append("  return %s : tensor<f32>\n}")
    return "\n".join(lines)


def seconds(text: str) -> float:
    """CPU seconds of the default rlx-gradient on ``text``."""
    m = gradir.parse(text)
    t0 = time.process_time()
    gradir.run_pipeline(m, "builtin.module(rlx-gradient)")
    return time.process_time() - t0


for name, build in (("residual", residual), ("shared", shared),
                    ("shared_transposed", shared_transposed)):
    small_text, large_text = build(500), build(4000)
    small = min(seconds(small_text) for _ in range(3)) / small_text.count('"rlx.')
    large = float("inf")
    for _ in range(3):      # the best of three; no more once the verdict is clear
        large = min(large, seconds(large_text) / large_text.count('"rlx.'))
        if not 2.0 < large / small <= 5.0:
            break
    ratio = large / small
    verdict = "linear" if ratio <= 2.0 else "SUPERLINEAR"
    print(f"{name}: {verdict} ({small * 1e6:.1f} us per forward op at 500 layers, "
          f"{large * 1e6:.1f} at 4000: {ratio:.2f}x)", flush=True)
# CHECK: residual: linear
# CHECK-NEXT: shared: linear
# CHECK-NEXT: shared_transposed: linear
