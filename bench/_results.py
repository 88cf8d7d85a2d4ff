"""The bench scripts' results as JSON with their provenance, for
``bench/render_performance.py`` (which renders docs/performance.md from
``bench/results/*.json``).

    import _results
    _results.add_json_option(parser)            # argparse: --json PATH
    _results.save_results(args.json, "remat", [
        {"title": "...", "columns": ["N", "peak MiB"], "rows": [[16, 23.3]]}],
        notes=["..."])

A table is ``{"title": str, "columns": [str], "rows": [[...]]}``: cells
are numbers, strings or None (rendered "-"); an optional ``"formats"``,
one format spec per column (``".3f"``; None: the renderer's default),
says how the page prints numbers.  The file records when (UTC), what
(``git rev-parse HEAD`` and whether the tree had uncommitted changes), how
(the command line), where (CPU model, vendor, family/model, vector ISA,
AMX, cores, the load average when this module was imported and when the
file was written, the process's nice value) and with what (Python, numpy, torch, jax, MLIR
bindings versions).  It needs only the standard library: the GPU half of
bench/gpu.py runs where neither MLIR nor git may be."""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile

__all__ = ["add_json_option", "json_option", "save_results", "machine", "versions",
           "git_state", "SCHEMA"]

SCHEMA = 1
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The load average when the bench began (this module is imported at its start).
LOAD_START = os.getloadavg() if hasattr(os, "getloadavg") else None


def add_json_option(parser) -> None:
    """Adds ``--json PATH`` (write the results there) to an argparse parser."""
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the results, with the machine, date, commit and "
                             "command, as JSON to PATH (bench/results/<bench>.json)")


def json_option(argv: list[str]) -> str | None:
    """``--json PATH`` of a command line read by bench/_cli.py (which
    checks it is given a value: list ``"--json"`` among its valued options)."""
    return argv[argv.index("--json") + 1] if "--json" in argv else None


def save_results(path: str, bench: str, tables: list[dict], notes=(), command=None,
                 extra: dict | None = None) -> dict:
    """Writes ``bench``'s ``tables`` and ``notes`` with their provenance to
    ``path`` (atomically: a temporary file in the same folder, renamed) and
    returns what it wrote.  ``command``: the command line to record (a
    string or an argv list; default ``sys.argv``).  ``extra``: entries
    merged into the provenance (a GPU run records its device there, and the
    commit its libraries were built from where the run has no git)."""
    for t in tables:
        missing = {"title", "columns", "rows"} - set(t)
        if missing:
            raise ValueError(f"table {t.get('title')!r} lacks {sorted(missing)}")
        for row in t["rows"]:
            if len(row) != len(t["columns"]):
                raise ValueError(f"table {t['title']!r}: row {row!r} has {len(row)} cells "
                                 f"for {len(t['columns'])} columns")
    provenance = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **git_state(),
        "command": _command(command),
        "machine": machine(),
        "versions": versions(),
    }
    provenance.update(extra or {})
    data = {"schema": SCHEMA, "bench": bench, "provenance": provenance,
            "notes": list(notes), "tables": [_clean_table(t) for t in tables]}
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(dumps(data))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return data


def dumps(data) -> str:
    """JSON indented by one space, with every list of scalars (a table's
    row, its columns) on one line."""
    flat: list[str] = []

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            if all(not isinstance(x, (dict, list)) for x in v):
                flat.append(json.dumps(v))
                return f"\0{len(flat) - 1}\0"
            return [walk(x) for x in v]
        return v
    text = json.dumps(walk(data), indent=1)
    for i, compact in enumerate(flat):
        text = text.replace(f'"\\u0000{i}\\u0000"', compact, 1)
    return text + "\n"


def _clean_table(t: dict) -> dict:
    out = {"title": t["title"], "columns": list(t["columns"]),
           "rows": [[_cell(v) for v in row] for row in t["rows"]]}
    if t.get("formats"):
        out["formats"] = list(t["formats"])
    return out


def _cell(v):
    """JSON-able cell: floats to 6 significant digits (the timers' noise
    is far above that; it keeps the files' diffs readable)."""
    if hasattr(v, "item"):              # numpy scalars
        v = v.item()
    if isinstance(v, float):
        return float(f"{v:.6g}") if v == v and abs(v) != float("inf") else None
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return str(v)


def _command(command) -> str:
    """The command line as one would type it in the repository root: the
    interpreter as ``build/venv/bin/python`` when it is the project's
    virtual environment (else its name), paths inside the repository
    relative to it."""
    if command is None:
        argv = [sys.executable] + list(sys.argv)
    else:
        argv = shlex.split(command) if isinstance(command, str) else list(command)

    def rel(a: str) -> str:
        if os.path.isabs(a) and (a == ROOT or a.startswith(ROOT + os.sep)):
            return os.path.relpath(a, ROOT)
        return a
    exe = argv[0]
    venv = os.path.join(ROOT, "build", "venv") + os.sep
    if exe.startswith(venv):
        exe = "build/venv/bin/python"
    elif os.path.isabs(exe):
        exe = os.path.basename(exe)
    rest = []
    for a in argv[1:]:
        if os.path.exists(a) and not os.path.isabs(a):
            a = os.path.abspath(a)
        rest.append(rel(a))
    return " ".join(shlex.quote(a) for a in [exe] + rest)


# Results and what is rendered from them: a change there is no change to
# what was measured (one bench after another rewrites bench/results/).
NOT_CODE = ("bench/results/", "docs/performance.md", "README.md")


def git_state() -> dict:
    """``commit`` (HEAD) and ``dirty`` (tracked files other than the
    results and the pages rendered from them differ from it), or None for
    both where there is no git checkout."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=30)
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        status = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                 "--untracked-files=no"], capture_output=True, text=True,
                                timeout=30)
        changed = [ln[3:] for ln in status.stdout.splitlines()
                   if ln.strip() and not ln[3:].startswith(NOT_CODE)]
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    state = {"commit": head.stdout.strip(), "dirty": bool(changed)}
    if changed:
        state["changed_files"] = sorted(changed)[:40]
    return state


def _cpuinfo() -> dict:
    info: dict = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    if info:
                        break           # the first processor is enough
                    continue
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return info


def vector_isa(flags: set[str], arch: str = "") -> str:
    """The widest vector ISA the CPU flags name."""
    if "avx512f" in flags:
        return "AVX-512"
    if "avx2" in flags:
        return "AVX2" + (" + FMA" if "fma" in flags else "")
    if "avx" in flags:
        return "AVX"
    if "sse4_2" in flags:
        return "SSE4.2"
    if "sve2" in flags:
        return "SVE2"
    if "sve" in flags:
        return "SVE"
    if "asimd" in flags or arch in ("aarch64", "arm64"):
        return "NEON"
    return arch or "unknown"


def _amd_core(family: int | None, flags: set[str]) -> str | None:
    """AMD's core generation from the CPU family (cpuinfo's model names on
    cloud machines are often bare, "AMD EPYC")."""
    if family == 0x17:
        return "Zen/Zen 2"
    if family == 0x19:
        return "Zen 4" if "avx512f" in flags else "Zen 3"
    if family == 0x1A:
        return "Zen 5"
    return None


def machine() -> dict:
    """What the numbers were measured on."""
    info = _cpuinfo()
    flags = set((info.get("flags") or info.get("Features") or "").split())
    arch = platform.machine()
    vendor = info.get("vendor_id") or info.get("CPU implementer")
    try:
        family = int(info.get("cpu family", ""))
    except ValueError:
        family = None
    try:
        model = int(info.get("model", ""))
    except ValueError:
        model = None
    name = info.get("model name") or info.get("Model name") or platform.processor() or arch
    core = _amd_core(family, flags) if vendor == "AuthenticAMD" else None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    out = {"cpu": name, "core": core, "vendor": vendor, "family": family, "model": model,
           "arch": arch, "isa": vector_isa(flags, arch),
           "vector_features": sorted(f for f in flags if f.startswith(("avx", "fma", "amx"))
                                     or f in ("sve", "sve2", "asimd")),
           "amx": any(f.startswith("amx") for f in flags),
           "cores": os.cpu_count(), "usable_cores": usable,
           "os": f"{platform.system()} {platform.release()}"}
    try:
        out["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, OSError):
        pass
    if LOAD_START is not None:
        out["load_start"] = [round(x, 2) for x in LOAD_START]
        out["load_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def versions() -> dict:
    """Python's and the peers' versions, from the installed packages'
    metadata (nothing is imported)."""
    from importlib import metadata
    out = {"python": platform.python_version()}
    for key, dist in (("numpy", "numpy"), ("torch", "torch"), ("jax", "jax"),
                      ("jaxlib", "jaxlib"), ("mlir", "xtc-mlir-python-bindings"),
                      ("tvm", "apache-tvm")):
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = None
    return out
