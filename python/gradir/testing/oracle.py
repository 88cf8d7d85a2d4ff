"""The compiled-code oracle: programs run compiled and interpreted, compared.

    from gradir.testing import oracle
    oracle.record(module, "main_adjoint", args)   # kept for the end of the process
    failures = oracle.check_compiled(programs)     # or now, on a list

Every program is compiled (``gradir.compile``, target cpu) and run in a
*child process*, so a crash of compiled code (a signal) fails the test with
the name of the program instead of killing the test runner.  The child puts
a whole batch in one module (symbols renamed apart: one compilation per
batch); when the batch crashes or does not compile, each program is retried
alone to name the ones that fail.

Every call must leave its arguments as they were (compiled code never
writes into its caller's arrays).  Every compiled batch is also exported (``export_library``), loaded
(``gradir.runtime.load``) and run again: the library must give the JIT's
results (``export_differences``, which the numeric suites of
test/conversion/cpu use too; a loop's adjoint compiled in parts once
defined the deallocation helper in each part, and its library did not link).

``record`` is what ``check_gradient`` calls for every gradient program it
checks: at exit the process compiles them all, prints ``compiled oracle: N
programs match the interpreter`` and exits 1 (after naming each failing
program) if any differs, crashes or does not compile.  ``GRADIR_ORACLE=0``
turns the recording off.  Recorded programs compile at ``RECORD_OPT_LEVEL``
(0) unless ``GRADIR_TEST_OPT_LEVEL`` says otherwise; identical programs once.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

__all__ = ["Program", "record", "check_compiled", "compare", "export_differences"]


@dataclass
class Program:
    name: str          # what a failure is reported as
    text: str          # the module, printed
    fn: str            # the function to run
    args: list         # numpy arrays (tuples flattened are not supported: pass the arrays)


_RECORDED: list[Program] = []
_HOOKED = False

# dtype kind/size -> (rtol, atol)
_TOL = {2: (2e-3, 2e-3), 4: (2e-4, 1e-5), 8: (1e-9, 1e-11)}


def record(module, fn: str, args, name: str | None = None) -> None:
    """Keeps ``@fn`` of ``module`` on ``args`` for the oracle run at exit."""
    global _HOOKED
    if os.environ.get("GRADIR_ORACLE", "1") == "0":
        return
    from ..ir import print_module
    text = print_module(module, generic=True)
    _RECORDED.append(Program(name or f"{fn}#{len(_RECORDED)}", text, fn,
                             [np.array(a, copy=True) for a in args]))
    if not _HOOKED:
        _HOOKED = True
        atexit.register(_at_exit)


# The opt level of the programs ``record`` keeps: 0 (no fusion, no schedule)
# compiles 5x faster; every op's optimized lowering is checked at opt levels
# 3 and 0 by test/conversion/cpu/numeric_*.py.  GRADIR_TEST_OPT_LEVEL overrides.
RECORD_OPT_LEVEL = 0


def _unique(programs: list[Program]) -> list[Program]:
    """Programs with distinct (text, function, inputs): remat plans at
    several budgets often produce the same adjoint."""
    seen, out = set(), []
    for p in programs:
        key = (p.text, p.fn, tuple((a.dtype.str, a.shape, a.tobytes()) for a in p.args))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _at_exit() -> None:
    programs = _unique(_RECORDED)
    _RECORDED.clear()
    if not programs:
        return
    level = os.environ.get("GRADIR_TEST_OPT_LEVEL")
    failures = check_compiled(programs, int(level) if level else RECORD_OPT_LEVEL)
    sys.stdout.flush()
    if failures:
        for f in failures:
            print(f"compiled oracle: FAIL {f}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)
    print(f"compiled oracle: {len(programs)} programs match the interpreter")
    sys.stdout.flush()


def _narrowest(text: str) -> int:
    """Bytes of the narrowest float type the program computes in."""
    for width, names in ((2, ("f16", "bf16")), (4, ("f32",))):
        if any(n + ">" in text or n + "," in text or n + ")" in text for n in names):
            return width
    return 8


def compare(got, want, what: str, width: int = 8) -> list[str]:
    """Differences between compiled results ``got`` and interpreted ``want``;
    ``width``: bytes of the narrowest float type the program computes in."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return [f"{what}: expected a tuple of {len(want)}, got {type(got).__name__}"]
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += compare(g, w, f"{what}[{i}]", width)
        return out
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return [f"{what}: expected {want.dtype}{list(want.shape)}, "
                f"got {got.dtype}{list(got.shape)}"]
    if want.dtype.kind != "f":
        return [] if np.array_equal(got, want) else [f"{what}: values differ"]
    rtol, atol = _TOL[min(want.dtype.itemsize, width)]
    ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return []
    idx = tuple(np.argwhere(~ok)[0])
    return [f"{what}: first difference at {idx}: got {got[idx]!r}, want {want[idx]!r}"]


def export_differences(exe, calls) -> list[str]:
    """Exports ``exe`` (a ``gradir.compile`` result) to a temporary folder,
    loads the library and runs ``calls`` again, each ``(name, fn, args,
    got)`` with ``got`` what ``exe[fn](*args)`` returned; returns one line
    per difference (the library's results must be the same numbers) or per
    call that fails, and one for an export or load that fails."""
    from pathlib import Path

    from ..runtime import load
    out = []
    with tempfile.TemporaryDirectory(prefix="gradir-export-check-") as tmp:
        try:
            lib = load(exe.export_library(Path(tmp) / "module.so"))
        except Exception as err:  # noqa: BLE001 - reported as the test's failure
            names = ", ".join(name for name, _, _, _ in calls)
            return [f"{names}: export_library + load: {type(err).__name__}: {err}"]
        for name, fn, args, got in calls:
            before = [np.array(a, copy=True) for a in args]
            try:
                again = lib[fn](*args)
            except Exception as err:  # noqa: BLE001
                out.append(f"{name}: the exported library raised {type(err).__name__}: {err}")
                continue
            out += [f"{line} (exported library)" for line in _written(args, before, name)]
            out += [f"{line} (exported library against the JIT)"
                    for line in _differences(again, got, name)]
    return out


def _written(args, before, what: str) -> list[str]:
    """One line per argument that a call changed (compiled code must never
    write into its caller's arrays; rlx-readonly-arguments)."""
    return [f"{what}: the compiled code wrote into its argument #{i}"
            for i, (a, b) in enumerate(zip(args, before))
            if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")]


def _differences(got, want, what: str) -> list[str]:
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return [f"{what}: expected a tuple of {len(want)}, got {type(got).__name__}"]
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += _differences(g, w, f"{what}[{i}]")
        return out
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return [f"{what}: expected {want.dtype}{list(want.shape)}, "
                f"got {got.dtype}{list(got.shape)}"]
    same = got == want
    if got.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    if same.all():
        return []
    idx = tuple(np.argwhere(~same)[0])
    return [f"{what}: first difference at {idx}: got {got[idx]!r}, want {want[idx]!r}"]


# Programs compiled together in one module (compile time grows faster than
# linearly with the module's size, so batches stay small).
GROUP = 16


def check_compiled(programs: list[Program], opt_level: int | None = None,
                   timeout: float = 600) -> list[str]:
    """Compiles and runs ``programs`` in a child process; returns one line
    per failing program (empty: all match the interpreter).

    The child compiles groups of ``GROUP`` programs (one module each) and
    reports each group as it finishes; when it dies (a crash of compiled
    code) or a group does not compile, that group's programs run one per
    child, which names the failing ones, and the rest go on in a new child."""
    if opt_level is None and os.environ.get("GRADIR_TEST_OPT_LEVEL"):
        opt_level = int(os.environ["GRADIR_TEST_OPT_LEVEL"])
    with tempfile.TemporaryDirectory(prefix="gradir-oracle-") as tmp:
        for k, p in enumerate(programs):
            np.savez(os.path.join(tmp, f"{k}.npz"), *p.args)
        spec = [{"name": p.name, "text": p.text, "fn": p.fn} for p in programs]
        with open(os.path.join(tmp, "batch.json"), "w") as f:
            json.dump({"programs": spec, "opt_level": opt_level}, f)
        failures: list[str] = []
        todo = list(range(len(programs)))
        while todo:
            status, lines, done = _child(tmp, todo, timeout)
            failures += lines
            todo = [k for k in todo if k not in done]
            if status == "done" or not todo:
                break
            group, todo = todo[:GROUP], todo[GROUP:]
            for k in group:               # the group that failed: one by one
                status, lines, done = _child(tmp, [k], timeout)
                failures += lines
                if k not in done:
                    failures.append(f"{programs[k].name}: {status}")
        return failures


def _child(tmp: str, indices: list[int], timeout: float):
    """Runs the child on ``indices``: (status, failure lines, indices done)."""
    cmd = [sys.executable, "-m", "gradir.testing.oracle", tmp, ",".join(map(str, indices))]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, code, err = proc.stdout.splitlines(), proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace").splitlines()
        code, err = None, ""
    lines = [line[len("FAIL "):] for line in out if line.startswith("FAIL ")]
    done = {int(k) for line in out if line.startswith("DONE ")
            for k in line[len("DONE "):].split(",")}
    if code == 0 and out and out[-1] == "oracle: done":
        return "done", lines, done
    if code is None:
        return f"timed out after {timeout:.0f} s", lines, done
    if code < 0:
        return f"compiled code died with signal {-code}", lines, done
    tail = (err.strip().splitlines() or ["no output"])[-1]
    return f"exit status {code}: {tail}", lines, done


def _child_main(tmp: str, which: str) -> int:
    import gradir
    with open(os.path.join(tmp, "batch.json")) as f:
        batch = json.load(f)
    indices = [int(k) for k in which.split(",")]
    options = {} if batch["opt_level"] is None else {"opt_level": batch["opt_level"]}
    for start in range(0, len(indices), GROUP):
        group = indices[start:start + GROUP]
        merged, entries = _merge(batch["programs"], group)
        exe = gradir.compile(merged, **options)
        calls = []
        for k in group:
            p = batch["programs"][k]
            data = np.load(os.path.join(tmp, f"{k}.npz"))
            args = [data[f"arr_{i}"] for i in range(len(data.files))]
            want = gradir.interpret(merged, entries[k], *args)
            before = [a.copy() for a in args]
            got = exe[entries[k]](*args)
            for line in _written(args, before, p["name"]):
                print("FAIL " + line)
            calls.append((p["name"], entries[k], args, got))
            if len(want) == 1:
                got = (got,)
            for line in compare(tuple(got), tuple(want), p["name"], _narrowest(p["text"])):
                print("FAIL " + line)
        for line in export_differences(exe, calls):
            print("FAIL " + line)
        print("DONE " + ",".join(map(str, group)))
        sys.stdout.flush()
    print("oracle: done")
    return 0


def _merge(programs: list, group: list[int]):
    """One module holding the programs of ``group``, symbols renamed apart
    (``o<k>_<name>``); returns it and each program's entry name."""
    from mlir import ir

    import gradir
    ctx = gradir.make_context()
    bodies, entries = [], {}
    for k in group:
        p = programs[k]
        module = gradir.parse(p["text"], context=ctx)
        with ctx:
            for op in list(module.body.operations):
                op = op.operation
                if "sym_name" not in op.attributes:
                    continue
                old = ir.StringAttr(op.attributes["sym_name"]).value
                new = f"o{k}_{old}"
                ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
                op.attributes["sym_name"] = ir.StringAttr.get(new)
        inner = gradir.print_module(module, generic=True).strip()
        bodies.append(inner[inner.index("{") + 1:inner.rindex("}")])
        entries[k] = f"o{k}_{p['fn']}"
    return gradir.parse("module {\n" + "\n".join(bodies) + "\n}", context=ctx), entries


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1], sys.argv[2]))
