# RUN: %PYTHON %s | FileCheck %s
# Device memory of GPU code with loops: every program with scf.for /
# scf.while / scf.if (and their adjoints, checkpointed loops included) is
# called many times in the SIMT emulator; each call must give the
# interpreter's results and leave the device memory in use where the first
# call left it (the function's arena: gpu-persistent-buffers), i.e. every
# buffer a loop carries or a branch returns is freed (gpu-device-buffers'
# ownership through scf.yield / scf.condition).  The emulator refuses a use
# after gpu.dealloc, so a free that comes too early fails too.  Compiling
# must not warn that a buffer escapes.  Last, two exported libraries run on
# the fake CUDA driver through gradir's CUDA runtime, whose allocated bytes
# must not grow either.

import os
import sys

import numpy as np

import gradir
from gradir.testing import gradient_module
from gradir.testing.gpu_emulator import Emulated

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "autodiff", "scf",
                                "Inputs"))
from programs import ALL, args_for, rnn  # noqa: E402

CALLS = 20
warnings = []
gradir._compat.push_diagnostic_sink(lambda severity, loc, message: warnings.append(message))

# A trip count read from an input (zero trips on some calls: the results are
# then the loop's init buffers); the carried buffers swap places, one is
# replaced by a captured value and one is carried unchanged.
DYNAMIC = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %w: tensor<2x3xf32>,
                %k: tensor<i64>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n64 = tensor.extract %k[] : tensor<i64>
  %n = arith.index_cast %n64 : i64 to index
  %r:4 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %b = %y, %c = %x, %d = %w)
      -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %t = "rlx.tanh"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %s = "rlx.add"(%t, %d) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    scf.yield %b, %s, %w, %d : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  %p = "rlx.multiply"(%r#0, %r#1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = "rlx.add"(%p, %r#2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = "rlx.add"(%q, %r#3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %o = "rlx.sum"(%e) : (tensor<2x3xf32>) -> tensor<f32>
  return %o : tensor<f32>
}
"""

PROGRAMS = [("for", ALL["rnn"]), ("two_carried", ALL["two_carried"]),
            ("nested_for", ALL["nested_call"]), ("while", ALL["while"]),
            ("if_top", ALL["if_top"]), ("if_in_loop", ALL["if_in_loop"]),
            ("sqrt", rnn(9, '"sqrt"')), ("revolve", rnn(16, '"revolve"')),
            ("period", rnn(9, "3 : i64"))]


def check(name, fn, exe, module, calls):
    """Runs ``calls`` (argument lists, cycled) CALLS times; returns the
    device bytes in use after the first call."""
    base = None
    for n in range(CALLS):
        args = calls[n % len(calls)]
        want = gradir.interpret(module, fn, *args)
        got = exe[fn](*args)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
        used = (exe.device_bytes_in_use(), exe.live_device_allocations())
        if base is None:
            base = used
        assert used == base, f"{name} @{fn} call {n + 1}: {used} in use, first call {base}"
    return base


rng = np.random.default_rng(0)
for name, text in PROGRAMS:
    text = text.replace("f64", "f32")
    # two argument sets: branches and while trip counts differ between calls
    calls = [[a.astype(np.float32) for a in args_for(text, rng)] for _ in range(2)]
    calls[1] = [-2 * a for a in calls[1]]
    for fn, module in (("main", gradir.parse(text)), ("main_adjoint", gradient_module(text))):
        warnings.clear()
        exe = Emulated(module)
        assert not any("escapes" in w for w in warnings), warnings
        nbytes, live = check(name, fn, exe, module, calls)
        print(f"{name} @{fn}: {CALLS} calls, {nbytes} device bytes in {live} "
              "allocation(s) after each")

# CHECK: for @main: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s) after each
# CHECK: for @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s) after each
# CHECK: two_carried @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: nested_for @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: while @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: if_top @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: if_in_loop @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: sqrt @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: revolve @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)
# CHECK: period @main_adjoint: 20 calls, {{[0-9]+}} device bytes in 1 allocation(s)

# Resident arguments (a loop given one gets a copy: the loop frees what it
# carries) and the untiled kernels of opt_level=0.
for name, text, options in (("sqrt resident", rnn(6, '"sqrt"'), dict(keep_resident=(1, 2))),
                            ("while resident", ALL["while"], dict(keep_resident=(0, 1))),
                            ("revolve O0", rnn(6, '"revolve"'), dict(opt_level=0))):
    text = text.replace("f64", "f32")
    calls = [[a.astype(np.float32) for a in args_for(text, rng)]]
    module = gradient_module(text)
    exe = Emulated(module, **options)
    nbytes, live = check(name, "main_adjoint", exe, module, calls)
    print(f"{name} @main_adjoint: {live} allocation(s) after each call")
# CHECK: sqrt resident @main_adjoint: 3 allocation(s) after each call
# CHECK: while resident @main_adjoint: 3 allocation(s) after each call
# CHECK: revolve O0 @main_adjoint: 1 allocation(s) after each call

# The trip count from an input: 0, 3 and 2 trips in turn.
module = gradir.parse(DYNAMIC)
xs = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(3)]
calls = [xs + [np.array(k, np.int64)] for k in (0, 3, 2)]
warnings.clear()
exe = Emulated(module)
assert not any("escapes" in w for w in warnings), warnings
print("dynamic @main:", check("dynamic", "main", exe, module, calls))
# CHECK: dynamic @main: ({{[0-9]+}}, 1)

# Within a call the carried buffers are freed too: the peak of a forward
# loop does not grow with its trip count.
peaks = []
for T in (4, 32):
    text = rnn(T).replace("f64", "f32")
    module = gradir.parse(text)
    exe = Emulated(module)
    args = [a.astype(np.float32) for a in args_for(text, rng)]
    exe["main"](*args)
    exe.reset_peak_device_bytes()
    exe["main"](*args)
    peaks.append(exe.peak_device_bytes() - exe.device_bytes_in_use())
print("peak above the arena, T=4 and T=32:", peaks[0] == peaks[1], peaks[0] > 0)
# CHECK: peak above the arena, T=4 and T=32: True True

# The exported libraries on gradir's CUDA runtime (graph replay) and the fake
# driver (Inputs/fake_cuda.c, kernels run by the emulator): the driver's
# device bytes allocated now stay where the first call left them.
import tempfile  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from emulate_helpers import outlined_kernels  # noqa: E402
from fake_driver import FakeDriver, build  # noqa: E402

out = tempfile.mkdtemp()
build(out)
built = []
for name, text in (("sqrt", rnn(9, '"sqrt"')), ("if_in_loop", ALL["if_in_loop"])):
    text = text.replace("f64", "f32")
    module = gradient_module(text)
    path = gradir.compile(module, target="cuda").export_library(os.path.join(out, name + ".so"))
    kernels, _ = outlined_kernels(module)
    built.append((name, module, path, kernels, [a.astype(np.float32)
                                                for a in args_for(text, rng)]))
driver = FakeDriver(os.path.join(out, "libcuda.so.1"))
for name, module, path, kernels, args in built:
    first = driver.stat("module load")
    lib = gradir.runtime.load(path)
    driver.emulate(kernels.operation, first_image=first)
    want = gradir.interpret(module, "main_adjoint", *args)
    seen = set()
    for n in range(8):
        got = lib["main_adjoint"](*args)
        assert all(np.allclose(g, w, rtol=2e-5, atol=1e-6) for g, w in zip(got, want)), name
        seen.add((driver.stat("bytes"), driver.stat("alloc") - driver.stat("free")))
    print(f"fake driver {name}: 8 calls, device bytes after each: {len(seen)} value(s), "
          f"errors {driver.errors}")
# CHECK: fake driver sqrt: 8 calls, device bytes after each: 1 value(s), errors []
# CHECK: fake driver if_in_loop: 8 calls, device bytes after each: 1 value(s), errors []
