# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# gradir's CUDA host runtime (gradir.runtime.cuda_runtime) called through
# its mgpu* functions on the fake driver (Inputs/fake_cuda.c), with kernels
# that are Python callbacks: launches are deferred per stream and copied
# (parameter bytes), every other operation on the stream (and a free, a
# module unload) issues them first, in order; a run seen twice becomes a
# graph; the cache keeps 64 graphs (least recently used destroyed); a kernel
# without parameter info is launched at once; GRADIR_CUDA_GRAPHS=0 launches
# everything at once.  A module unloaded after the driver shut down (as at
# process exit) prints nothing, where MLIR's library prints
# "'cuModuleUnload(module)' failed with '<unknown>'".

import ctypes
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))

from fake_driver import LAUNCH, PARAM_INFO, STATS, build  # noqa: E402

from gradir.runtime.cuda_runtime import build_runtime, counters  # noqa: E402

out = sys.argv[1]
child = sys.argv[2] if len(sys.argv) > 2 else None
if not child:
    build(out)
    build_runtime(out)
fake = ctypes.CDLL(os.path.join(out, "libcuda.so.1"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
fake.fake_cuda_stat.restype = ctypes.c_long
P = ctypes.c_void_p
if child == "unload":   # load a module, shut the driver down, unload it
    rt = ctypes.CDLL(sys.argv[3])
    rt.mgpuModuleLoad.restype = P
    rt.mgpuModuleLoad.argtypes = [P, ctypes.c_size_t]
    rt.mgpuModuleUnload.argtypes = [P]
    module = rt.mgpuModuleLoad(ctypes.create_string_buffer(b"fake image"), 10)
    fake.fake_cuda_shut_down()
    rt.mgpuModuleUnload(module)
    sys.exit(0)
rt = ctypes.CDLL(os.path.join(out, "libmlir_cuda_runtime.so"))
rt.mgpuModuleLoad.restype = P
rt.mgpuModuleLoad.argtypes = [P, ctypes.c_size_t]
rt.mgpuModuleGetFunction.restype = P
rt.mgpuModuleGetFunction.argtypes = [P, ctypes.c_char_p]
rt.mgpuModuleUnload.argtypes = [P]
rt.mgpuLaunchKernel.argtypes = [P] + [ctypes.c_ssize_t] * 6 + [ctypes.c_int32, P, P, P,
                                                                 ctypes.c_size_t]
rt.mgpuStreamCreate.restype = P
for name in ("mgpuStreamSynchronize", "mgpuStreamDestroy", "mgpuEventDestroy"):
    getattr(rt, name).argtypes = [P]
rt.mgpuEventCreate.restype = P
rt.mgpuEventRecord.argtypes = [P, P]
rt.mgpuStreamWaitEvent.argtypes = [P, P]
rt.mgpuMemAlloc.restype = P
rt.mgpuMemAlloc.argtypes = [ctypes.c_uint64, P, ctypes.c_bool]
rt.mgpuMemFree.argtypes = [P, P]
rt.mgpuMemcpy.argtypes = [P, P, ctypes.c_size_t, P]
rt.mgpuMemset32.argtypes = [P, ctypes.c_uint, ctypes.c_size_t, P]

# Kernels: store(address: u64, value: i64) writes value at address;
# note(value: i32) appends value to a log; nameless has no parameter info.
LAYOUTS = {b"store": [(0, 8), (8, 8)], b"note": [(0, 4)]}
log = []


def on_param_info(module, name, index, offset, size):
    layout = LAYOUTS.get(name, [])
    if index >= len(layout):
        return 1
    offset[0], size[0] = layout[index]
    return 0


def on_launch(module, name, gx, gy, gz, bx, by, bz, smem, params):
    if name == b"store":
        address = ctypes.c_uint64.from_address(params[0]).value
        ctypes.c_int64.from_address(address).value = ctypes.c_int64.from_address(params[1]).value
        log.append(("store", ctypes.c_int64.from_address(params[1]).value))
    elif name == b"note":
        log.append(("note", ctypes.c_int32.from_address(params[0]).value))
    else:
        log.append((name.decode(), gx))


launch_cb, param_cb = LAUNCH(on_launch), PARAM_INFO(on_param_info)
fake.fake_cuda_set_launch_callback(launch_cb)
fake.fake_cuda_set_param_callback(param_cb)
image = ctypes.create_string_buffer(b"fake image")
module = rt.mgpuModuleLoad(image, 10)
store = rt.mgpuModuleGetFunction(module, b"store")
note = rt.mgpuModuleGetFunction(module, b"note")
nameless = rt.mgpuModuleGetFunction(module, b"nameless")


def stat(name):
    return fake.fake_cuda_stat(STATS[name])


def launch(stream, fn, *args):
    """args: ctypes values; their addresses are the parameters."""
    ptrs = (P * max(len(args), 1))(*[ctypes.cast(ctypes.byref(a), P) for a in args])
    rt.mgpuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, ptrs, None, len(args))


def notes(stream, *values):
    for v in values:
        launch(stream, note, ctypes.c_int32(v))


stream = rt.mgpuStreamCreate()
dev = rt.mgpuMemAlloc(16, stream, False)
host = (ctypes.c_int64 * 2)()


def step(a, b):
    """Two stores and a copy back: one run of two launches."""
    launch(stream, store, ctypes.c_uint64(dev), ctypes.c_int64(a))
    launch(stream, store, ctypes.c_uint64(dev + 8), ctypes.c_int64(b))
    rt.mgpuMemcpy(ctypes.addressof(host), dev, 16, stream)
    rt.mgpuStreamSynchronize(stream)
    return list(host)


if child:   # GRADIR_CUDA_GRAPHS=0
    results = [step(1, 2), step(1, 2), step(1, 2)]
    notes(stream, 7)
    print("graphs off:", results, "launched at once:", log[-1] == ("note", 7),
          counters(rt), "graph launches:", stat("graph launch"))
    sys.exit(0)

# Deferred, and the parameter bytes are copied at the call.
value = ctypes.c_int32(11)
launch(stream, note, value)
value.value = 99
print("deferred:", log == [], end="; ")
rt.mgpuStreamSynchronize(stream)
print("after synchronize:", log)
# CHECK: deferred: True; after synchronize: [('note', 11)]

# Same run three times: direct, captured + graph, graph; other values: direct.
before = counters(rt)
results = [step(1, 2), step(1, 2), step(1, 2), step(3, 4)]
after = counters(rt)
print("results:", results, {k: after[k] - before[k] for k in after})
print("fake driver: graph launches", stat("graph launch"), "kernels run by graphs",
      stat("graph kernel"), "captured", stat("captured launch"))
# CHECK-NEXT: results: {{\[}}[1, 2], [1, 2], [1, 2], [3, 4]] {'launches': 4, 'graph_launches': 2, 'graph_captures': 1}
# CHECK-NEXT: fake driver: graph launches 2 kernels run by graphs 4 captured 2

# Each operation on the stream issues its pending launches first, in order.
event = rt.mgpuEventCreate()
other = rt.mgpuStreamCreate()
checks = {
    "memcpy": lambda: rt.mgpuMemcpy(ctypes.addressof(host), dev, 8, stream),
    "memset32": lambda: rt.mgpuMemset32(dev, 0, 2, stream),
    "event record": lambda: rt.mgpuEventRecord(event, stream),
    "stream wait event": lambda: rt.mgpuStreamWaitEvent(stream, event),
    "synchronize": lambda: rt.mgpuStreamSynchronize(stream),
    "another stream's synchronize": lambda: rt.mgpuStreamSynchronize(other),
}
for i, (what, op) in enumerate(checks.items()):
    log.clear()
    notes(stream, 100 + i, 200 + i)
    op()
    print(f"{what}: {len(log)}", end="; ")
rt.mgpuStreamSynchronize(stream)
print()
# CHECK-NEXT: memcpy: 2; memset32: 2; event record: 2; stream wait event: 2; synchronize: 2; another stream's synchronize: 0;

log.clear()
notes(stream, 1)
notes(other, 2)
rt.mgpuMemFree(rt.mgpuMemAlloc(8, other, False), other)
print("free issues every stream's launches:", sorted(log), end="; ")
log.clear()
notes(other, 3)
rt.mgpuStreamDestroy(other)
print("destroy:", log)
# CHECK-NEXT: free issues every stream's launches: [('note', 1), ('note', 2)]; destroy: [('note', 3)]

# A kernel without parameter info: launched at once, after the pending run.
log.clear()
notes(stream, 5, 6)
launch(stream, nameless, ctypes.c_int32(0))
print("no parameter info:", log, end="; ")
notes(stream, 7)
rt.mgpuStreamSynchronize(stream)
print("then:", log[-1])
# CHECK-NEXT: no parameter info: [('note', 5), ('note', 6), ('nameless', 1)]; then: ('note', 7)

# The cache holds 64 graphs: with step's graph, 71 captured, the 7 least
# recently used destroyed.
before = counters(rt)
destroyed = stat("graph exec destroy")
for _ in range(2):
    for i in range(70):
        notes(stream, 1000 + i, 2000 + i)
        rt.mgpuStreamSynchronize(stream)
after = counters(rt)
print("70 runs twice:", {k: after[k] - before[k] for k in after},
      "graphs destroyed:", stat("graph exec destroy") - destroyed, end="; ")
log.clear()
before = counters(rt)
for i in (69, 0):   # cached; evicted (seen twice already: captured again)
    notes(stream, 1000 + i, 2000 + i)
    rt.mgpuStreamSynchronize(stream)
after = counters(rt)
print("again:", {k: after[k] - before[k] for k in after}, log[-2:])
# CHECK-NEXT: 70 runs twice: {'launches': 140, 'graph_launches': 70, 'graph_captures': 70} graphs destroyed: 7; again: {'launches': 0, 'graph_launches': 2, 'graph_captures': 1} [('note', 1000), ('note', 2000)]

# A module unload destroys the cached graphs (the driver may reuse function
# handles for another module's kernels).
rt.mgpuStreamDestroy(stream)
destroyed = stat("graph exec destroy")
rt.mgpuModuleUnload(module)
print("modules unloaded:", stat("module unload"), "streams destroyed:", stat("stream destroy"),
      "graphs destroyed:", stat("graph exec destroy") - destroyed)
# CHECK-NEXT: modules unloaded: 1 streams destroyed: 2 graphs destroyed: 64

proc = subprocess.run([sys.executable, __file__, out, "child"], capture_output=True, text=True,
                      env=dict(os.environ, GRADIR_CUDA_GRAPHS="0"))
print(proc.stdout.strip() or proc.stderr)
# CHECK-NEXT: graphs off: {{\[}}[1, 2], [1, 2], [1, 2]] launched at once: True {'launches': 7, 'graph_launches': 0, 'graph_captures': 0} graph launches: 0

# A module unloaded after the driver shut down.
from gradir.runtime.toolchain import runtime_library_dir  # noqa: E402

for name, lib in (("gradir's", os.path.join(out, "libmlir_cuda_runtime.so")),
                  ("MLIR's", str(runtime_library_dir() / "libmlir_cuda_runtime.so"))):
    proc = subprocess.run([sys.executable, __file__, out, "unload", lib], capture_output=True,
                          text=True)
    print(f"unload after shutdown, {name} runtime: rc", proc.returncode, "stderr:",
          repr(proc.stderr.strip()))
# CHECK-NEXT: unload after shutdown, gradir's runtime: rc 0 stderr: ''
# CHECK-NEXT: unload after shutdown, MLIR's runtime: rc 0 stderr: "'cuModuleUnload(module)' failed with '<unknown>'"
