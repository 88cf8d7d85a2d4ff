"""Shared by the emulator tests of whole programs (not a test itself):
compile for the GPU, run in the SIMT emulator, compare with the reference
interpreter, and reuse the programs of other tests without running them."""

from __future__ import annotations

import ast
import types

import numpy as np

import gradir
from gradir.testing.gpu_emulator import Emulated


def definitions(path: str) -> types.SimpleNamespace:
    """The imports, classes, helper functions and constants (upper-case
    names, ``rng``, ``DT``) of a test file, none of its tests run (functions
    decorated with ``@run`` and top-level statements are left out)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef)):
            keep.append(node)
        elif isinstance(node, ast.FunctionDef):
            if not any(isinstance(d, ast.Name) and d.id == "run" for d in node.decorator_list):
                keep.append(node)
        elif isinstance(node, ast.Assign) and all(
                isinstance(t, ast.Name) and (t.id.isupper() or t.id in ("rng", "DT"))
                for t in node.targets):
            keep.append(node)
    ns = {"__name__": "definitions", "__file__": path}
    exec(compile(ast.Module(keep, []), path, "exec"), ns)  # noqa: S102
    return types.SimpleNamespace(**ns)


def constant(path: str, name: str):
    """The literal value of a top-level ``name = <literal>`` of a file (the
    IR text of another test), nothing of that file run."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError(f"{path} has no top-level {name} = <literal>")


def emulated(module, opt_level: int = 3) -> Emulated:
    """``module`` compiled with gradir.compile(target="cuda") (kernels to
    PTX/cubin: no GPU needed), and its emulated build."""
    gradir.compile(module, target="cuda", opt_level=opt_level)
    return Emulated(module, opt_level=opt_level)


def mismatch(got, want, rtol, atol, relative=False) -> str | None:
    """None when every result agrees (``relative``: atol times the largest
    magnitude of each result), else what differs first."""
    got = got if isinstance(got, tuple) else (got,)
    if len(got) != len(want):
        return f"{len(got)} results, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {i}: {g.dtype}{list(g.shape)}, want {w.dtype}{list(w.shape)}"
        if w.dtype.kind in "biu":
            if not np.array_equal(g, w):
                return f"result {i}: integers differ"
            continue
        scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)) if relative else 1.0
        if not np.allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True):
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True)
            err = float(np.max(np.abs(g.astype(np.float64) - w)[bad]))
            return f"result {i}: max abs error {err:.3g}"
    return None


def compare(exe: Emulated, module, fn: str, args, rtol=1e-12, atol=1e-14,
            relative=False) -> tuple[str | None, int]:
    """(mismatch or None, kernels launched) of ``exe[fn](*args)`` against
    gradir.interpret."""
    want = gradir.interpret(module, fn, *args)
    got = exe[fn](*args)
    return mismatch(got, want, rtol, atol, relative), exe.emulator.last_launches


def check(name: str, module, fn: str, args, rtol=1e-12, atol=1e-14, relative=False,
          opt_level: int = 3) -> None:
    """Compiles ``module`` for cuda, emulates ``fn`` and prints
    ``<name>: ok, <n> launches`` or what went wrong."""
    try:
        problem, launches = compare(emulated(module, opt_level), module, fn, args, rtol,
                                    atol, relative)
    except Exception as err:     # the next programs still run
        problem = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    print(f"{name}: " + (f"FAIL {problem}" if problem else f"ok, {launches} launches"),
          flush=True)


def assert_emulated(module, fn: str, args, what: str, *, rtol=1e-4, atol=1e-5, tol=None,
                    **options) -> Emulated:
    """Asserts that ``fn`` of ``module`` run in the emulator (Emulated with
    ``options``) gives gradir.interpret's results: as many, each within
    ``rtol``/``atol`` (np.testing.assert_allclose) or, with ``tol``, within
    ``tol`` times the interpreter's largest magnitude.  Returns the build."""
    want = gradir.interpret(module, fn, *args)
    exe = Emulated(module, **options)
    got = exe[fn](*args)
    got, want = (x if isinstance(x, tuple) else (x,) for x in (got, want))
    assert len(got) == len(want), (what, len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        if tol is None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{what} {i}")
        else:
            err = np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)
            assert err < tol, (what, i, err)
    return exe


def matmul(a, b, c, ta=False, tb=False, t="f32"):
    """The rlx program of ``A @ B`` for A (a x b) and B (b x c), read transposed when asked;
    leading batch dims in ``a`` (a tuple) are a batched matmul."""
    *batch, m = a if isinstance(a, tuple) else (a,)
    pre = "".join(f"{d}x" for d in batch)
    xa = f"tensor<{pre}{b}x{m}x{t}>" if ta else f"tensor<{pre}{m}x{b}x{t}>"
    xb = f"tensor<{pre}{c}x{b}x{t}>" if tb else f"tensor<{pre}{b}x{c}x{t}>"
    perm = ", ".join(str(i) for i in range(len(batch))) + (", " if batch else "")
    perm += f"{len(batch) + 1}, {len(batch)}"
    lines, x, w = [], "%x", "%w"
    if ta:
        lines.append(f'%xt = "rlx.permute_dims"(%x) {{axes = array<i64: {perm}>}} : ({xa}) -> '
                     f"tensor<{pre}{m}x{b}x{t}>")
        x = "%xt"
    if tb:
        lines.append(f'%wt = "rlx.permute_dims"(%w) {{axes = array<i64: {perm}>}} : ({xb}) -> '
                     f"tensor<{pre}{b}x{c}x{t}>")
        w = "%wt"
    out = f"tensor<{pre}{m}x{c}x{t}>"
    lines.append(f'%y = "rlx.matmul"({x}, {w}) : (tensor<{pre}{m}x{b}x{t}>, '
                 f"tensor<{pre}{b}x{c}x{t}>) -> {out}")
    body = "\n  ".join(lines)
    return (f"func.func @main(%x: {xa}, %w: {xb}) -> {out} {{\n  {body}\n"
            f"  return %y : {out}\n}}")


# --- the tensor-core (wgmma, mma.sync) tests' shared pieces ---------------------------

_DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64}


def inputs(module, rng, dtype=None):
    """Standard normal arguments of ``module``'s first function, of ``dtype``
    (by default each argument's element type; bf16 as ml_dtypes')."""
    fn_type = module.body.operations[0].type
    out = []
    for t in fn_type.inputs:
        want = dtype
        if want is None:
            elt = str(t.element_type)
            if elt == "bf16":
                import ml_dtypes
                want = ml_dtypes.bfloat16
            else:
                want = _DTYPES[elt]
        out.append(rng.standard_normal(t.shape).astype(want))
    return out


def rel(got, want) -> float:
    """The largest error relative to the largest magnitude of ``want``."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / np.abs(want).max())


def first(x):
    return x[0] if isinstance(x, tuple) else x


def ulp(x, bits: int, emin: int):
    """One unit in the last place of ``x`` with ``bits`` fraction bits and
    smallest normal exponent ``emin`` (bf16: 7, -126; f16: 10, -14)."""
    e = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** emin)))
    return 2.0 ** (np.maximum(e, emin) - bits)


def find(module, name: str) -> list:
    """Every op named ``name`` nested in ``module``, in order."""
    found = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.operation.name == name:
                        found.append(inner.operation)
                    walk(inner.operation)
    walk(module.operation)
    return found


def emulate_main(text: str, args, exact: bool = False, **options):
    """(the first result of ``@main`` run in the emulator for chip sm_90,
    the lowered module's text); ``exact``: TF32 operands read whole."""
    exe = Emulated(gradir.parse(text), chip="sm_90", **options)
    exe.emulator.exact_tf32 = exact
    return first(exe["main"](*args)), str(exe.lowered)


def mutation_error(text: str, mutate, options: dict | None = None, seed: int = 1) -> str:
    """The emulator's error for ``text`` lowered to kernels for sm_90
    (``options``), then changed by ``mutate(module)``; "no error" if it
    runs."""
    from gradir.conversion.gpu.nvvm import lower_to_nvvm
    from gradir.testing.gpu_emulator import run
    from gradir.testing.gpu_emulator.values import EmulationError
    module = gradir.parse(text)
    lower_to_nvvm(module.operation, stop_after="kernels", chip="sm_90", **(options or {}))
    mutate(module)
    args = inputs(gradir.parse(text), np.random.default_rng(seed))
    try:
        run(module.operation, "main", *args)
    except EmulationError as err:
        return str(err).split(": ", 1)[1]
    return "no error"


def outlined_kernels(module, **options):
    """(``module``'s kernels as a CUDA library's pipeline outlines them, for
    the fake driver to emulate; the kernels stage's text)."""
    from gradir.conversion.gpu.nvvm import lower_to_nvvm, run_pipeline
    from gradir.ir import print_module
    kernels = gradir.parse(print_module(module))
    with kernels.context:
        lower_to_nvvm(kernels.operation, stop_after="kernels", **options)
        text = print_module(kernels)
        run_pipeline("builtin.module(gpu-launch-sink-index-computations,gpu-kernel-outlining,"
                     "gpu-kernel-attributes)", kernels.operation)
    return kernels, text


def mlp_step(batch: int = 24, sizes=(40, 32, 16)) -> types.SimpleNamespace:
    """The MLP training step of examples/mlp.py (its adjoint ``module``) and
    one step's inputs (``x``, ``labels``, ``params``) and numpy's float64
    results (``want``): the fake-driver tests' program."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "..", "..", "examples"))
    from mlp import build_mlp, differentiate, init_params, numpy_step
    sizes = list(sizes)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    params = init_params(sizes, seed=1)
    want = numpy_step(x.astype(np.float64), labels, *[p.astype(np.float64) for p in params])
    return types.SimpleNamespace(module=differentiate(build_mlp(batch, sizes)), x=x,
                                 labels=labels, params=params, want=want)
