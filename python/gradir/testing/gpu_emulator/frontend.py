"""Front ends of the emulator: ``run`` (one call of a function after the
``kernels`` stage) and ``Emulated`` (``gradir.compile``'s interface, every call
emulated)."""

from __future__ import annotations

import numpy as np
from mlir import ir

from ...ir import find_function
from .emulator import Emulator
from .values import EmulationError, as_op, dtype_of, fresh

__all__ = ["run", "Emulated"]


def run(module, name: str, *inputs: np.ndarray, emulator: "Emulator | None" = None
        ) -> list[np.ndarray]:
    """Runs ``@name`` of a module after the ``kernels`` stage on ``inputs``
    (the first arguments); returns the remaining (output) arguments.  Pass
    the same ``emulator`` to keep device state (resident buffers, arenas)
    across calls."""
    module = as_op(module)
    fn = find_function(module, name)
    if fn is None:
        raise EmulationError(f"no function @{name}")
    args = list(fn.regions[0].blocks[0].arguments)
    if len(inputs) > len(args):
        raise EmulationError(f"@{name} takes {len(args)} buffers, got {len(inputs)} inputs")
    bufs = [np.array(x, dtype=dtype_of(a.type.element_type), order="C", copy=True)
            for x, a in zip(inputs, args)]
    outs = [fresh(a.type.shape, dtype_of(a.type.element_type)) for a in args[len(inputs):]]
    em = emulator if emulator is not None else Emulator(module)
    em.call(name, bufs + outs)
    return outs


# --- an Executable-like front end ----------------------------------------------------

def _arrays_from_descriptors(ptrs, specs):
    """numpy arrays viewing the memory of memref descriptors (runtime.abi)."""
    import ctypes
    from ...runtime.abi import descriptor_type
    out = []
    for p, spec in zip(ptrs, specs):
        desc = descriptor_type(len(spec.shape)).from_address(p)
        dtype = np.dtype(spec.dtype)
        n = int(np.prod(spec.shape)) if spec.shape else 1
        raw = (ctypes.c_byte * (n * dtype.itemsize)).from_address(desc.aligned)
        out.append(np.frombuffer(raw, dtype=dtype, count=n).reshape(spec.shape))
    return out


class Emulated:
    """``gradir.compile``'s interface on the emulator: ``exe["f"](x, w)``.

    The module is lowered like ``target="cuda"`` up to the ``kernels``
    stage (gpu.launch kernels on device buffers) and every call is
    emulated.  ``opt_level``, ``sm_count``, ``chip``, ``precision`` and
    ``compute_dtype`` as for lower_to_nvvm."""

    def __init__(self, module, opt_level: int = 3, sm_count: int = 132, keep_resident=(),
                 chip: str = "sm_90", precision: str = "fp32", compute_dtype=None):
        from ...ir import as_operation, make_context, print_module
        from ...runtime.abi import Function, Signature
        from ...runtime.signature import public_functions, signature_of
        from ...conversion.gpu.nvvm import lower_to_nvvm

        src = as_operation(module)
        self.context = make_context()
        with self.context:
            self.lowered = ir.Module.parse(print_module(src, debug_info=True, segments=True))
            self.signatures = {}
            for fn in public_functions(self.lowered.operation):
                sig = signature_of(fn)
                self.signatures[sig.name] = sig
                idx = [i for i in keep_resident if i < len(sig.input_tree)]
                if idx:
                    name = sig.name + "_upload_resident"
                    self.signatures[name] = Signature(
                        name, tuple(sig.inputs[sig.input_tree[i]] for i in idx),
                        tuple(range(len(idx))), (), ())
            lower_to_nvvm(self.lowered.operation, opt_level=opt_level, sm_count=sm_count,
                          keep_resident=tuple(keep_resident), stop_after="kernels",
                          chip=chip, precision=precision, compute_dtype=compute_dtype)
            self.emulator = Emulator(self.lowered.operation)
        self._functions = {name: Function(sig, self._caller(sig)) for name, sig in
                           self.signatures.items()}

    def _caller(self, sig):
        def call(ptrs):
            arrays = _arrays_from_descriptors(ptrs, list(sig.inputs) + list(sig.outputs))
            ins, outs = arrays[:len(sig.inputs)], arrays[len(sig.inputs):]
            with self.context:
                results = run(self.lowered.operation, sig.name, *ins, emulator=self.emulator)
            for dst, src in zip(outs, results):
                np.copyto(dst, src, casting="unsafe")
        return call

    def __getitem__(self, name: str):
        return self._functions[name]

    @property
    def functions(self) -> list[str]:
        return list(self._functions)

    def device_bytes_in_use(self) -> int:
        """Device bytes allocated by the calls so far and not freed (resident
        buffers and arenas stay; anything else left is a leak)."""
        return self.emulator.device_bytes_in_use()

    def live_host_allocations(self) -> int:
        """Host buffers (bookkeeping such as a loop adjoint's trip-count
        stack) made by the calls so far and not freed."""
        return self.emulator.live_host_allocations()

    def live_device_allocations(self) -> int:
        """Device allocations made by the calls so far and not freed."""
        return self.emulator.live_device_allocations()

    def peak_device_bytes(self) -> int:
        """The most device memory in use at once (since the last
        ``reset_peak_device_bytes``)."""
        return self.emulator.peak_device_bytes()

    def reset_peak_device_bytes(self) -> None:
        self.emulator.reset_peak_device_bytes()
