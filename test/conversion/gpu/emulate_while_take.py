# RUN: %PYTHON %s | FileCheck %s
# The adjoint of an scf.while checkpointed with an integer period
# (grad.checkpoint = 3 : i64; docs/control-flow.md) whose trip counter
# selects data (rlx.take of row i of %x) on the GPU.  The forward keeps a
# stack of the carried counter (tensor<?xindex>) and each replayed segment a
# stack of its counters (tensor<3xindex>); the backward reads them back to
# take the rows again.  Those stacks are host memory (gpu-device-buffers
# leaves them in memref.alloc buffers and marks their loads
# gradir.host_memory): the host stores and loads the counters, the kernels
# that take the rows get a loaded counter as an argument (before: the loads'
# scalars reached kernels, the stacks went to the device and compiling
# failed with "'memref.store' touches a device buffer on the host").  It
# compiles for target="cuda" (kernels to PTX, no GPU needed) and runs in the
# SIMT emulator against the reference interpreter for 0, 1, some and the
# most (7) trips, called again and again with the device memory in use flat
# and every host buffer freed.

import numpy as np

import gradir
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated

# h <- tanh(h @ w + x[i]) while sum(h^2) < 1 and fewer than 7 trips.
TEXT = """
func.func @main(%x: tensor<7x3xf64>, %h0: tensor<3xf64>, %w: tensor<3x3xf64>) -> tensor<f64> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %lim = arith.constant dense<1.0> : tensor<f64>
  %r:2 = scf.while (%h = %h0, %i = %c0) : (tensor<3xf64>, index) -> (tensor<3xf64>, index) {
    %sq = "rlx.square"(%h) : (tensor<3xf64>) -> tensor<3xf64>
    %n = "rlx.sum"(%sq) : (tensor<3xf64>) -> tensor<f64>
    %lt = "rlx.less"(%n, %lim) : (tensor<f64>, tensor<f64>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    %ci = arith.cmpi slt, %i, %c7 : index
    %both = arith.andi %c, %ci : i1
    scf.condition(%both) %h, %i : tensor<3xf64>, index
  } do {
  ^bb0(%h: tensor<3xf64>, %i: index):
    %c1 = arith.constant 1 : index
    %ii = arith.index_cast %i : index to i64
    %t = tensor.from_elements %ii : tensor<i64>
    %xi = "rlx.take"(%x, %t) {axis = array<i64: 0>} : (tensor<7x3xf64>, tensor<i64>) -> tensor<3xf64>
    %m = "rlx.matmul"(%h, %w) : (tensor<3xf64>, tensor<3x3xf64>) -> tensor<3xf64>
    %a = "rlx.add"(%m, %xi) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %hn = "rlx.tanh"(%a) : (tensor<3xf64>) -> tensor<3xf64>
    %in = arith.addi %i, %c1 : index
    scf.yield %hn, %in : tensor<3xf64>, index
  } attributes {grad.checkpoint = 3 : i64}
  %o = "rlx.sum"(%r#0) : (tensor<3xf64>) -> tensor<f64>
  %o2 = "rlx.multiply"(%o, %o) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %o2 : tensor<f64>
}
"""


def trips(x, h0, w) -> int:
    """The forward loop's trip count, in float64."""
    h, n = h0.astype(np.float64), 0
    while np.sum(h * h) < 1.0 and n < 7:
        h, n = np.tanh(h @ w.astype(np.float64) + x[n].astype(np.float64)), n + 1
    return n


for dtype in ("f64", "f32"):
    module = gradient_module(TEXT.replace("f64", dtype))
    text = gradir.print_module(module)
    assert "tensor<?xindex>" in text and "tensor<3xindex>" in text, "no counter stacks"
    gradir.compile(module, target="cuda")      # kernels to PTX
    print(f"{dtype}: compiled for cuda")

    kernels = Emulated(module)
    lowered = gradir.print_module(kernels.lowered)
    host_loads = lowered.count("{gradir.host_memory}")
    assert host_loads >= 2, "the counter stacks' loads are not host loads"
    assert lowered.count("memref.alloc(") <= lowered.count("memref.dealloc"), \
        "a host buffer is never freed"

    np_dtype = np.float64 if dtype == "f64" else np.float32
    rtol, atol = (1e-12, 1e-14) if dtype == "f64" else (2e-5, 1e-6)
    rng = np.random.default_rng(0)
    x = (0.1 * rng.normal(size=(7, 3))).astype(np_dtype)
    w = (1.5 * np.eye(3) + 0.1 * rng.normal(size=(3, 3))).astype(np_dtype)
    # h0's scale -> trip count: sum(h0^2) >= 1 gives 0 trips; h grows by
    # about 1.5 a trip, so a smaller h0 takes more trips (at most 7); with a
    # period of 3, 1 and 2 trips fill one segment partly, 4 one and a bit
    scales = (2.0, 0.5, 0.3, 0.15, 0.01)
    seen, base = [], None
    for rep in range(3):
        for scale in scales:
            h0 = (np.ones(3) * scale).astype(np_dtype)
            n = trips(x, h0, w)
            if rep == 0:
                seen.append(n)
            want = gradir.interpret(module, "main_adjoint", x, h0, w)
            got = kernels["main_adjoint"](x, h0, w)
            for a, b in zip(want, got):
                np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
            used = (kernels.device_bytes_in_use(), kernels.live_device_allocations())
            if base is None:
                base = used
            assert used == base, f"{dtype} {n} trips, round {rep}: {used} in use, first {base}"
            assert kernels.live_host_allocations() == 0, "host buffers not freed"
    print(f"{dtype}: {' '.join(map(str, seen))} trips, {3 * len(scales)} calls: ok; "
          f"{host_loads} host loads of the counter stacks")

# CHECK: f64: compiled for cuda
# CHECK-NEXT: f64: 0 1 2 4 7 trips, 15 calls: ok; {{[2-9]}} host loads of the counter stacks
# CHECK-NEXT: f32: compiled for cuda
# CHECK-NEXT: f32: 0 1 2 4 7 trips, 15 calls: ok; {{[2-9]}} host loads of the counter stacks
