"""Runs exported CUDA libraries on a fake CUDA driver (fake_cuda.c) whose
kernel launches are executed by gradir's SIMT emulator (not a test itself).

    driver = FakeDriver.build(tmpdir)               # cc fake_cuda.c -> libcuda.so.1
    driver.emulate(kernel_module)                   # outlined gpu.func kernels
    lib = gradir.runtime.load("model.so")           # libcuda.so.1 is the fake
    (or, for several libraries: n = driver.stat("module load"); load; then
     driver.emulate(kernels_of_that_library, first_image=n))

The fake answers cuFuncGetParamInfo from the same kernels (their parameter
sizes, memrefs expanded as in ``_arguments``), so a runtime that captures
CUDA graphs (gradir.runtime.cuda_runtime) runs on it too; the counters
"graph launch", "graph kernel" (kernels run by graph launches) and
"captured launch" tell how the launches went.
"""

from __future__ import annotations

import ctypes
import os
import subprocess

import numpy as np
from mlir import ir

from gradir.testing.gpu_emulator import Emulator

HERE = os.path.dirname(os.path.abspath(__file__))
STATS = {"alloc": 0, "free": 1, "memcpy": 2, "module load": 3, "launch": 4,
         "module unload": 5, "bytes": 6, "stream": 7, "graph launch": 8, "graph kernel": 9,
         "captured launch": 10, "graph instantiate": 11, "graph destroy": 12,
         "graph exec destroy": 13, "param info": 14, "stream destroy": 15, "tensor map": 16,
         "refused launch": 17}
_SCALARS = {"index": ctypes.c_int64, "i64": ctypes.c_int64, "i32": ctypes.c_int32,
            "i16": ctypes.c_int16, "i8": ctypes.c_int8, "i1": ctypes.c_bool,
            "f32": ctypes.c_float, "f64": ctypes.c_double, "f16": ctypes.c_uint16}
_SIZES = {"index": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "i1": 1, "f32": 4, "f64": 8,
          "f16": 2, "!llvm.ptr": 8}
_MAP_ESIZE = {7: 4, 6: 2, 9: 2}             # CUtensorMapDataType: f32, f16, bf16
_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
       "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64}

LAUNCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint,
                          ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                          ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p))
PARAM_INFO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                              ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))


def build(directory: str) -> str:
    """Compiles fake_cuda.c into ``directory``/libcuda.so.1."""
    out = os.path.join(directory, "libcuda.so.1")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", out, "-Wl,-soname,libcuda.so.1",
                    os.path.join(HERE, "fake_cuda.c")], check=True)
    return out


class FakeDriver:
    def __init__(self, path: str):
        # Loaded globally first, it satisfies libmlir_cuda_runtime.so's libcuda.so.1.
        self.lib = ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
        self.lib.fake_cuda_stat.restype = ctypes.c_long
        self.lib.fake_cuda_lookup.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                              ctypes.POINTER(ctypes.c_size_t)]
        self.errors: list[str] = []
        self._callback = None
        self._param_callback = None
        self._layouts = {}
        self._default = None
        self._by_image = {}

    def stat(self, name: str) -> int:
        return self.lib.fake_cuda_stat(STATS[name])

    def emulate(self, kernel_module: ir.Operation, first_image: int | None = None) -> None:
        """Runs launches in the emulator, looking kernels up by name in
        ``kernel_module`` (the pipeline's output after outlining).  With
        ``first_image`` (the count of modules loaded before the library
        whose kernels these are), launches from that library's modules use
        these kernels and other libraries keep theirs."""
        modules = []
        for op in kernel_module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name != "gpu.module":
                continue
            kernels = {}
            for fn in op.regions[0].blocks[0].operations:
                fn = fn.operation
                if fn.name == "gpu.func":
                    kernels[ir.StringAttr(fn.attributes["sym_name"]).value] = fn
            modules.append(kernels)
        emulator = Emulator(kernel_module)
        entry = (emulator, kernel_module.context, modules)
        if first_image is None:
            self._default = entry
        else:
            self.lib.fake_cuda_image.restype = ctypes.c_void_p
            for i in range(len(modules)):   # (the constructor's load order is its own)
                image = self.lib.fake_cuda_image(first_image + i)
                self._by_image[image] = entry
        if self._callback is None:
            self._callback = LAUNCH(self._on_launch)
            self.lib.fake_cuda_set_launch_callback(self._callback)
            self._param_callback = PARAM_INFO(self._on_param_info)
            self.lib.fake_cuda_set_param_callback(self._param_callback)

    def _kernel(self, module, name: str):
        emulator, context, modules = self._by_image.get(module) or self._default
        return emulator, context, next(m[name] for m in modules if name in m)

    def _on_param_info(self, module, name, index, offset, size) -> int:
        """cuFuncGetParamInfo: 0 and the index-th parameter's offset and
        size, or 1 past the last one (or for an unknown kernel)."""
        try:
            key = (module, name)
            if key not in self._layouts:
                _, context, fn = self._kernel(module, name.decode())
                with context:
                    self._layouts[key] = _layout(fn)
            layout = self._layouts[key]
            if index >= len(layout):
                return 1
            offset[0], size[0] = layout[index]
            return 0
        except Exception as err:  # noqa: BLE001 - reported by the test
            self.errors.append(f"param info of {name!r}: {type(err).__name__}: {err}")
            return 1

    def _on_launch(self, module, name, gx, gy, gz, bx, by, bz, smem, params):
        name = name.decode()
        try:
            emulator, context, fn = self._kernel(module, name)
            with context:
                args = self._arguments(emulator, fn, params)
                emulator.run_kernel(fn, (gx, gy, gz), (bx, by, bz), args, dynamic_smem=smem)
        except Exception as err:  # noqa: BLE001 - reported by the test
            self.errors.append(f"{name}: {type(err).__name__}: {err}")

    def _arguments(self, emulator, fn, params) -> list:
        """Decodes the packed kernel parameters (memrefs as expanded
        descriptors: allocated, aligned, offset, sizes, strides)."""
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        args, k = [], 0

        def scalar(ctype):
            nonlocal k
            v = ctype.from_address(params[k]).value
            k += 1
            return v

        for t in ftype.inputs:
            if isinstance(t, ir.MemRefType):
                scalar(ctypes.c_void_p)                      # allocated
                aligned = scalar(ctypes.c_void_p) or 0
                offset = scalar(ctypes.c_int64)
                sizes = [scalar(ctypes.c_int64) for _ in t.shape]
                strides = [scalar(ctypes.c_int64) for _ in t.shape]
                base, size = ctypes.c_void_p(), ctypes.c_size_t()
                if not self.lib.fake_cuda_lookup(aligned, ctypes.byref(base), ctypes.byref(size)):
                    raise RuntimeError(f"kernel argument at {aligned:#x} is not device memory")
                dtype = _NP[str(t.element_type)]
                start = aligned - base.value + offset * np.dtype(dtype).itemsize
                args.append(emulator.foreign_buffer(base.value, size.value, dtype, sizes,
                                                    start, strides))
            elif str(t) == "!llvm.ptr":                 # a tensor map's device address
                args.append(self._tensor_map(emulator, scalar(ctypes.c_void_p) or 0))
            else:
                key = str(t)
                v = scalar(_SCALARS[key])
                args.append(np.array(v, dtype=np.uint16).view(np.float16)[()] if key == "f16"
                            else np.array(v).astype(_NP[key])[()])
        return args

    def _tensor_map(self, emulator, address: int):
        """The emulator's TensorMap of the fake's encoding at ``address``
        (fake_cuda.c's cuTensorMapEncodeTiled)."""
        from gradir.testing.gpu_emulator.tma import TensorMap
        m = (ctypes.c_uint64 * 16).from_address(address)
        if bytes(ctypes.string_at(address, 8)) != b"GRDRTMAP":
            raise RuntimeError(f"kernel argument at {address:#x} is not a tensor map")
        base, size = ctypes.c_void_p(), ctypes.c_size_t()
        if not self.lib.fake_cuda_lookup(m[3], ctypes.byref(base), ctypes.byref(size)):
            raise RuntimeError(f"tensor map of {m[3]:#x}, not device memory")
        alloc = emulator.foreign_buffer(base.value, size.value, np.uint8, [size.value], 0,
                                        [1]).alloc
        return TensorMap(alloc, m[3] - base.value, _MAP_ESIZE[m[1]], (m[4], m[5], m[6]),
                         (m[7], m[8]), (m[9], m[10], m[11]), 16 << m[12] if m[12] else 0)


def _layout(fn) -> list[tuple[int, int]]:
    """(offset, size) of each kernel parameter, memrefs expanded into
    allocated, aligned, offset, sizes and strides (as ``_arguments`` reads
    them), each at an offset aligned to its size."""
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    sizes = []
    for t in ftype.inputs:
        if isinstance(t, ir.MemRefType):
            sizes += [8] * (3 + 2 * len(t.shape))
        else:
            sizes.append(_SIZES[str(t)])
    out, at = [], 0
    for size in sizes:
        at = (at + size - 1) // size * size
        out.append((at, size))
        at += size
    return out
