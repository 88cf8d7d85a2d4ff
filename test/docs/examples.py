# RUN: %PYTHON %s %gradir_src | FileCheck %s
"""Every code example of README.md and docs/*.md runs, so that a renamed option
breaks this test and not a reader.  Also a script:

    build/venv/bin/python test/docs/examples.py .                 # every page
    build/venv/bin/python test/docs/examples.py . docs/gpu.md     # one page

A page runs in a fresh temporary directory holding the files of
test/docs/Inputs (``model.mlir``: @main(x: 4x3, w: 3x2, y: 4x2) -> mean squared
error of tanh(x @ w); ``model.py``: a PyTorch MLP whose factory is ``make``),
with build/venv/bin first on PATH.  Its fenced blocks run in order, by the
block's info string:

``python``
    Run; all python blocks of a page share one process and namespace, as a
    reader pasting them into one interpreter would.
``sh``
    Each line (a trailing backslash continues it) runs in bash and must exit 0.
``console``
    ``$ command`` lines run in bash (exit status free: errors are what such
    blocks show); each following line up to the next ``$`` must appear in
    the command's output, in order (``...`` stands for any lines).
``<lang> file=NAME``
    Writes the block to NAME in the page's directory (``mlir file=bad.mlir``).
``mlir``
    A block holding a ``func.func`` must parse and verify; other mlir blocks
    are fragments (one op's form) and are only shown.
``<lang> requires=gpu``
    Runs only on a machine with an NVIDIA GPU (``nvidia-smi -L`` lists one);
    elsewhere it is counted as unsupported, like a lit test that requires a GPU.
``text``, and blocks without a language, are output or diagrams: not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
INPUTS = os.path.join(ROOT, "test", "docs", "Inputs")
BIN = os.path.dirname(sys.executable)
RUN_LANGS = {"python", "sh", "console", "mlir"}
SHOWN_LANGS = {"", "text", "mlir", "json", "cmake", "diff", "c", "cpp", "toml", "ini"}


@dataclass
class Block:
    page: str
    line: int                     # 1-based line of the opening fence
    lang: str
    opts: dict = field(default_factory=dict)
    body: str = ""


def blocks(page: str) -> list[Block]:
    out, cur, fence = [], None, None
    with open(page, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            stripped = line.strip()
            if cur is None:
                m = re.match(r"^(```+|~~~+)\s*(.*)$", stripped)
                if m and line.startswith(m.group(1)):
                    fence = m.group(1)
                    info = m.group(2).split()
                    lang = info[0] if info else ""
                    opts = dict(o.split("=", 1) if "=" in o else (o, "") for o in info[1:])
                    cur = Block(os.path.relpath(page, ROOT), i, lang, opts)
                continue
            if stripped == fence:
                out.append(cur)
                cur = None
                continue
            cur.body += line
    if cur is not None:
        raise SystemExit(f"{page}:{cur.line}: unclosed code block")
    return out


def has_gpu() -> bool:
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_page(page: str, gpu: bool) -> tuple[int, int, list[str]]:
    """(examples run, unsupported, failures) of one page."""
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ran, unsupported, failures = 0, 0, []
    python_parts = []                 # (block, code) of the page, run together at the end
    with tempfile.TemporaryDirectory(prefix="gradir-docs-") as tmp:
        for name in os.listdir(INPUTS):
            shutil.copy(os.path.join(INPUTS, name), tmp)
        for b in blocks(page):
            where = f"{b.page}:{b.line}"
            if b.opts.get("requires") == "gpu" and not gpu:
                unsupported += 1
                continue
            if "file" in b.opts:
                with open(os.path.join(tmp, b.opts["file"]), "w", encoding="utf-8") as f:
                    f.write(b.body)
                ran += 1
                continue
            if b.lang not in RUN_LANGS:
                if b.lang not in SHOWN_LANGS:
                    failures.append(f"{where}: unknown code block language '{b.lang}' "
                                    f"(run: {sorted(RUN_LANGS)}; shown: text)")
                continue
            if b.lang == "mlir":
                if "func.func" not in b.body:
                    continue
                err = check_mlir(b.body, env, tmp)
                if err:
                    failures.append(f"{where}: the mlir block does not verify:\n{err}")
                ran += 1
            elif b.lang == "python":
                python_parts.append((b, b.body))
            elif b.lang == "sh":
                ran += 1
                for cmd in shell_lines(b.body):
                    p = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, text=True,
                                       capture_output=True, timeout=900)
                    if p.returncode:
                        failures.append(f"{where}: `{cmd}` exited {p.returncode}:\n"
                                        f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
                        break
            elif b.lang == "console":
                ran += 1
                err = run_console(b, tmp, env)
                if err:
                    failures.append(f"{where}: {err}")
        if python_parts:
            ran += len(python_parts)
            err = run_python(python_parts, tmp, env)
            if err:
                failures.append(err)
    return ran, unsupported, failures


def shell_lines(body: str) -> list[str]:
    cmds, cur = [], ""
    for line in body.splitlines():
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip() and not cur.strip().startswith("#"):
            cmds.append(cur.strip())
        cur = ""
    return cmds


def run_console(b: Block, tmp: str, env: dict) -> str | None:
    steps = []                                      # (command, expected lines)
    for line in b.body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            if line.strip():
                steps[-1][1].append(line.rstrip())
        elif line.strip():
            return "a console block must start with a `$ ` command line"
    for cmd, expected in steps:
        p = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, text=True,
                           capture_output=True, timeout=900)
        out = (p.stdout + p.stderr).replace(tmp + os.sep, "").replace(tmp, ".")
        lines = [l.rstrip() for l in out.splitlines()]
        pos = 0
        for want in expected:
            if want.strip() == "...":
                continue
            for j in range(pos, len(lines)):
                if want.strip() in lines[j]:
                    pos = j + 1
                    break
            else:
                return (f"`{cmd}`: expected output line not found (in order): {want!r}\n"
                        f"output was:\n{out[-3000:]}")
    return None


def check_mlir(text: str, env: dict, tmp: str) -> str | None:
    path = os.path.join(tmp, "_block.mlir")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    p = subprocess.run([os.path.join(BIN, "gradir-opt"), path, "-o", os.devnull],
                       env=env, text=True, capture_output=True, timeout=300)
    return None if p.returncode == 0 else p.stderr[-3000:]


_PRELUDE = '''
import sys, traceback
def _run(code, where):
    try:
        exec(compile(code, where, "exec"), globals())
    except BaseException:
        traceback.print_exc()
        print("EXAMPLE FAILED: " + where, file=sys.stderr)
        sys.exit(1)
'''


def run_python(parts, tmp: str, env: dict) -> str | None:
    script = [_PRELUDE]
    for b, code in parts:
        # Line numbers in tracebacks point into the page: pad the code down to its lines.
        padded = "\n" * b.line + code
        script.append(f"_run({padded!r}, {b.page!r})")
    path = os.path.join(tmp, "_examples.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(script))
    p = subprocess.run([sys.executable, path], cwd=tmp, env=env, text=True,
                       capture_output=True, timeout=1800)
    if p.returncode:
        return f"python examples failed:\n{p.stdout[-2000:]}{p.stderr[-4000:]}"
    return None


def pages() -> list[str]:
    docs = os.path.join(ROOT, "docs")
    return [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))


def quick_start_problems() -> list[str]:
    """The README's quick start must hold the command CI runs (.ci/run) and
    the demo's; their blocks are not run here (the test command is the suite
    that runs this test), so they are compared instead."""
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = [l.strip() for l in f if l.strip().startswith("cmake ")]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    wanted = ci + [c.replace("--target check", "--target demo") for c in ci]
    return [f"README.md: the quick start lacks `{c}` (.ci/run)" for c in wanted
            if c not in readme]


def main() -> int:
    chosen = [os.path.join(ROOT, p) for p in sys.argv[2:]] or pages()
    gpu = has_gpu()
    total, unsupported, failed = 0, 0, 0
    if not sys.argv[2:]:
        for problem in quick_start_problems():
            print("FAIL:", problem)
            failed += 1
    for page in chosen:
        ran, unsup, failures = run_page(page, gpu)
        total += ran
        unsupported += unsup
        failed += len(failures)
        for f in failures:
            print("FAIL:", f)
        print(f"{os.path.relpath(page, ROOT)}: {ran} examples, {len(failures)} failed"
              + (f", {unsup} need a GPU" if unsup else ""))
    print(f"docs examples: {total} run, {failed} failed, {unsupported} unsupported (no GPU)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

# CHECK-NOT: FAIL:
# CHECK: README.md: {{[0-9]+}} examples, 0 failed
# CHECK: docs examples: {{[1-9][0-9]*}} run, 0 failed
