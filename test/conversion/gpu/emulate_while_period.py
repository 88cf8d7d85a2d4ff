# RUN: %PYTHON %s | FileCheck %s
# The adjoint of an scf.while checkpointed with an integer period
# (grad.checkpoint = 3 : i64; docs/control-flow.md) on the GPU: its forward
# keeps a stack of the carried trip counter (tensor<?xindex>), which the host
# alone would write and read (gpu-device-buffers leaves such a buffer in host
# memory, freed with the call's other host buffers; gpu-check-host accepts
# those host accesses); the backward no longer reads it, so the lowered
# program may drop it altogether.  It compiles for
# target="cuda" (kernels to PTX, no GPU needed) and runs in the SIMT
# emulator against the reference interpreter for 0, 1, some and the most
# (7) trips, called again and again with the device memory in use flat.

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "autodiff", "scf", "Inputs"))
from programs import ALL  # noqa: E402

import gradir  # noqa: E402
from gradir.testing import gradient_module  # noqa: E402
from gradir.testing.gpu_emulator import Emulated  # noqa: E402

warnings = []
gradir._compat.push_diagnostic_sink(lambda severity, loc, message: warnings.append(message))

# WHILE: h <- h @ w + h while sum(h^2) < 4 and fewer than 7 trips.
TEXT = ALL["while"].replace("\n  }\n  %o =",
                            "\n  } attributes {grad.checkpoint = 3 : i64}\n  %o =")
assert "grad.checkpoint = 3" in TEXT

for dtype in ("f64", "f32"):
    module = gradient_module(TEXT.replace("f64", dtype))
    text = gradir.print_module(module)
    assert "tensor<?xindex>" in text, "no trip-count stack"
    gradir.compile(module, target="cuda")      # kernels to PTX
    print(f"{dtype}: compiled for cuda")

    kernels = Emulated(module)
    lowered = gradir.print_module(kernels.lowered)
    assert lowered.count("memref.alloc(") <= lowered.count("memref.dealloc"), \
        "a host buffer is never freed"
    assert not any("escapes" in w for w in warnings), warnings

    np_dtype = np.float64 if dtype == "f64" else np.float32
    rtol, atol = (1e-12, 1e-14) if dtype == "f64" else (2e-5, 1e-6)
    rng = np.random.default_rng(0)
    w = (0.3 * rng.normal(size=(3, 3))).astype(np_dtype)
    # trip counts -> h0's scale: sum(h0^2) >= 4 gives 0 trips, h grows by
    # about (1 + w) per trip; with a period of 3, 2 trips fill one segment
    # partly, 4 one and a bit, 7 (the most) two and a bit
    scales = {0: 3.0, 1: 1.05, 2: 0.9, 4: 0.6, 7: 0.001}
    base = None
    for rep in range(4):
        for trips, scale in scales.items():
            h0 = (np.ones(3) * scale).astype(np_dtype)
            # the trip count of the forward loop, from the forward program
            h, n = h0.astype(np.float64), 0
            while np.sum(h * h) < 4.0 and n < 7:
                h, n = h @ w.astype(np.float64) + h, n + 1
            assert n == trips, (scale, n)
            want = gradir.interpret(module, "main_adjoint", h0, w)
            got = kernels["main_adjoint"](h0, w)
            for a, b in zip(want, got):
                np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
            used = (kernels.device_bytes_in_use(), kernels.live_device_allocations(),
                    kernels.live_host_allocations())
            if base is None:
                base = used
            assert used == base, f"{dtype} {trips} trips, round {rep}: {used} in use, first {base}"
            assert kernels.live_host_allocations() == 0, "host buffers not freed"
    print(f"{dtype}: {' '.join(map(str, scales))} trips, {4 * len(scales)} calls: ok; "
          f"device bytes in use after each: {base[0]} in {base[1]} allocation(s)")

# CHECK: f64: compiled for cuda
# CHECK-NEXT: f64: 0 1 2 4 7 trips, 20 calls: ok; device bytes in use after each: {{[1-9][0-9]*}} in 1 allocation(s)
# CHECK-NEXT: f32: compiled for cuda
# CHECK-NEXT: f32: 0 1 2 4 7 trips, 20 calls: ok; device bytes in use after each: {{[1-9][0-9]*}} in 1 allocation(s)
