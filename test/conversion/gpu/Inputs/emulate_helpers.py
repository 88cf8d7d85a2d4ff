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
