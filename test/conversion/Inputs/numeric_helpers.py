"""Shared helpers of the numeric conversion tests (not a test itself).

A ``Suite`` collects cases, each a small function built with the rlx Python
builders on given numpy inputs, puts them all in ONE module (one compilation
for the whole suite), runs every function compiled (``gradir.compile``,
target cpu) and in the reference interpreter (``gradir.interpret``), and
compares the results; the compiled module is also exported, loaded and run
again (``gradir.testing.oracle.export_differences``: the library gives the
same results).  It prints ``ok <case>`` per case and raises after printing
every failing case.  ``GRADIR_TEST_OPT_LEVEL`` overrides the
compiler's opt_level (0: no fusion, no schedule).
"""

from __future__ import annotations

import os
import sys

import numpy as np
from mlir import ir
from mlir.dialects import func

import gradir
from gradir.dialects import rlx
from gradir.testing.oracle import export_differences

rng = np.random.default_rng(0)

_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
          np.dtype(np.float64): "f64", np.dtype(np.int32): "i32",
          np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}

# dtype -> (rtol, atol) for compiled vs interpreted results
TOLERANCES = {np.dtype(np.float16): (2e-3, 2e-3), np.dtype(np.float32): (2e-5, 2e-6),
              np.dtype(np.float64): (1e-12, 1e-13)}

FLOATS = (np.float32, np.float64)


def short(dt) -> str:
    """A float dtype's MLIR name: f32, f64."""
    return np.dtype(dt).name.replace("float", "f")


def sum_atol(dt, terms):
    """Absolute tolerance of a sum of ``terms`` products of values in
    [-2, 2] computed in another order than the interpreter's: f32 rounding
    grows with the number of terms (the suite's default, 2e-6, is for a few
    dozen); f64 keeps the default (None)."""
    return None if dt != np.float32 else 2e-6 * max(1.0, terms / 32)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


def rand(shape, dtype=np.float64, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def ints(shape, high, dtype=np.int64, low=0):
    return rng.integers(low, high, size=shape).astype(dtype)


def bools(shape):
    return rng.random(shape) < 0.5


def tensor_type(shape, dtype) -> ir.Type:
    return ir.RankedTensorType.get(list(shape), ir.Type.parse(_TYPES[np.dtype(dtype)]))


def op(name, *operands, result=None, **attrs):
    """Builds ``name`` with inferred result types; returns its value (a list
    for several results).  ``result`` is a (shape, dtype) or an ir.Type for
    the ops whose result type carries the shape."""
    if isinstance(result, tuple):
        result = tensor_type(*result)
    o = rlx.build_op(name, list(operands), attrs, result)
    return o.results[0] if len(o.results) == 1 else list(o.results)


def _close(got, want, what, rtol=None, atol=None):
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return [f"{what}: expected a tuple of {len(want)}, got {type(got).__name__}"]
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += _close(g, w, f"{what}[{i}]", rtol, atol)
        return out
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return [f"{what}: expected {want.dtype}{list(want.shape)}, got {got.dtype}{list(got.shape)}"]
    if want.dtype.kind in "biu":
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)[:3].tolist()
            return [f"{what}: integer/bool results differ at {bad}"]
        return []
    rt, at = TOLERANCES[want.dtype]
    rt = rt if rtol is None else rtol
    at = at if atol is None else atol
    ok = np.isclose(got, want, rtol=rt, atol=at, equal_nan=True)
    if not ok.all():
        idx = tuple(np.argwhere(~ok)[0])
        err = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))[~ok])
        return [f"{what}: max abs error {err:.3g} (rtol {rt}, atol {at}); first at {idx}: "
                f"got {got[idx]!r}, want {want[idx]!r}"]
    return []


class Suite:
    """Cases compiled together in one module."""

    def __init__(self, title: str, opt_level: int | None = None, gradient: bool = False,
                 cpu: str | None = None, threads: int | None = None):
        """``gradient``: each case must return a 0-d float (the target);
        rlx-gradient adds ``@case<i>_adjoint`` for every case, and the suite
        compares the adjoints (value and gradients) instead."""
        self.title = title
        self.opt_level = opt_level
        self.gradient = gradient
        self.cpu = cpu          # gradir.compile's cpu= (None: its default, the host)
        self.threads = threads  # gradir.compile's threads= (None: its default)
        self.cases = []

    def case(self, name, build, *inputs, rtol=None, atol=None):
        """``build(*values)`` returns a value or a tuple of values (the
        function's results) built with ``op``; ``inputs`` are numpy arrays."""
        self.cases.append((name, build, [np.asarray(x) for x in inputs], rtol, atol))

    def module(self):
        ctx = gradir.make_context()
        with ctx, ir.Location.unknown():
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                for i, (name, build, inputs, _, _) in enumerate(self.cases):
                    types = [tensor_type(x.shape, x.dtype) for x in inputs]

                    def body(*args, _build=build):
                        out = _build(*args)
                        return tuple(out) if isinstance(out, (list, tuple)) else out

                    body.__name__ = f"case{i}"
                    func.FuncOp.from_py_func(*types, name=f"case{i}")(body)
        return module

    def run(self):
        module = self.module()
        suffix = ""
        if self.gradient:
            passes = ",".join(f"rlx-gradient{{func=case{i}}}" for i in range(len(self.cases)))
            gradir.run_pipeline(module, f"builtin.module({passes})")
            suffix = "_adjoint"
        level = self.opt_level
        if level is None and os.environ.get("GRADIR_TEST_OPT_LEVEL"):
            level = int(os.environ["GRADIR_TEST_OPT_LEVEL"])
        options = {} if level is None else {"opt_level": level}
        if self.cpu is not None:
            options["cpu"] = self.cpu
        if self.threads is not None:
            options["threads"] = self.threads
        exe = gradir.compile(module, **options)
        if os.environ.get("GRADIR_PARALLEL_COMPILE") == "1":
            # issue 14: every function that can be cut is (runtime/partition.py);
            # a part that failed would fall back to the whole module unseen.
            from gradir.runtime import partition
            assert partition.last_error is None, f"compiling in parts failed: {partition.last_error}"
            print(f"split {len(getattr(exe, '_plans', {}))} of {len(exe.signatures)} functions",
                  file=sys.stderr)
        failures, calls = [], []
        for i, (name, _, inputs, rtol, atol) in enumerate(self.cases):
            want = gradir.interpret(module, f"case{i}{suffix}", *inputs)
            got = exe[f"case{i}{suffix}"](*inputs)
            calls.append((name, f"case{i}{suffix}", inputs, got))
            if len(want) == 1:  # one result (maybe a tuple) comes back bare
                got = (got,)
            problems = _close(got, want, name, rtol, atol)
            if problems:
                failures += problems
                print(f"FAIL {name}")
            else:
                print(f"ok {name}")
        # (the GPU emulator's build, test/conversion/gpu/emulate_numeric.py, has no library)
        exported = export_differences(exe, calls) if hasattr(exe, "export_library") else []
        if exported:
            print("FAIL exported library")
        failures += exported
        for f in failures:
            print("  " + f, file=sys.stderr)
        if failures:
            raise AssertionError(f"{self.title}: {len(failures)} mismatching result(s)")
        print(f"{self.title}: all {len(self.cases)} cases match the interpreter")
