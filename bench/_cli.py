"""The bench scripts' command lines: ``-h``/``--help`` prints the script's
docstring (its usage) and exits 0; an option the script does not take, or
a missing or malformed value, is refused with the usage line and exit 2,
before anything is measured."""

from __future__ import annotations

import sys


def check(argv: list[str], doc: str, flags: tuple[str, ...] = (),
          valued: dict[str, int] | tuple[str, ...] = (), positional: int | None = 0,
          choices: dict[str, tuple[str, ...]] | None = None) -> None:
    """Checks ``argv`` (without the program name) against the options a
    script takes: ``flags`` take no value, ``valued`` one (or, as a dict,
    that many), ``positional`` is how many other arguments it takes (None:
    any); ``choices`` the values an option may have."""
    if "-h" in argv or "--help" in argv:
        print((doc or "").strip())
        sys.exit(0)
    counts = dict(valued) if isinstance(valued, dict) else {v: 1 for v in valued}
    usage = next((ln.strip() for ln in (doc or "").splitlines() if "python" in ln), "")
    loose = 0
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in flags:
            i += 1
            continue
        if arg in counts:
            n = counts[arg]
            values = argv[i + 1:i + 1 + n]
            if len(values) < n or any(v.startswith("--") for v in values):
                _refuse(f"{arg} takes {n} value{'s' if n > 1 else ''}", usage)
            allowed = (choices or {}).get(arg)
            if allowed and values[0] not in allowed:
                _refuse(f"{arg}: one of {', '.join(allowed)}, not {values[0]!r}", usage)
            i += 1 + n
            continue
        if arg.startswith("-"):
            _refuse(f"unknown option {arg}", usage)
        loose += 1
        if positional is not None and loose > positional:
            _refuse(f"unexpected argument {arg!r}", usage)
        i += 1


def _refuse(message: str, usage: str) -> None:
    print(f"error: {message}" + (f"\nusage: {usage}" if usage else "")
          + "\n(--help: the whole usage)", file=sys.stderr)
    sys.exit(2)


def fresh_bytecode() -> int:
    """Byte-compiles gradir's modules whose ``.pyc`` is missing or older
    than the source, as ``cmake`` does at set-up (an installed package is
    compiled by pip), and returns how many it wrote.  For benchmarks that
    time a first call: with PYTHONDONTWRITEBYTECODE set, Python compiles
    a stale module in memory in every process, and after an edit since the
    last ``cmake`` that compile (~25 ms for the lowering's modules) was
    measured as part of gradir's first call."""
    import compileall
    import io
    import contextlib
    from pathlib import Path
    package = Path(__file__).resolve().parent.parent / "python" / "gradir"
    stale = [p for p in package.rglob("*.py")
             if not _pyc_fresh(p)]
    if stale:
        with contextlib.redirect_stdout(io.StringIO()):
            compileall.compile_dir(str(package), quiet=1)
    return len(stale)


def _pyc_fresh(source) -> bool:
    import importlib.util
    from pathlib import Path
    pyc = Path(importlib.util.cache_from_source(str(source)))
    return pyc.is_file() and pyc.stat().st_mtime >= source.stat().st_mtime
