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
from gradir.testing.chains import residual, shared, shared_transposed


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
