# RUN: %PYTHON %s %S/../dialects/rlx/ops.mlir %S/gradir-opt/Inputs/add.mlir | FileCheck %s
# A few seconds of the mutation fuzzing that found the hostile-input bugs of
# docs/errors.md: test inputs cut at every byte, and with one number, element
# type, attribute, operand list or byte changed, run through gradir-opt's
# main in this process (a crash kills the test).  Each run must exit 0, or 1
# with a located error; never a traceback, an internal error, another exit
# code.  It found: array<index: ...> (SIGABRT in MLIR's parser), names whose
# escapes are not UTF-8 (internal errors), damaged bytecode (SIGABRT in
# MLIR's reader).

import contextlib
import io
import os
import random
import re
import sys
import tempfile

from gradir.tools import gradir_opt

random.seed(20261129)
tmp = tempfile.mkdtemp(prefix="gradir-mutants-")
NUMS = ["0", "-1", "1000000000", "?", "9223372036854775807", "3"]
TYPES = ["f16", "bf16", "i1", "i64", "index", "complex<f32>", "f8E4M3FN", "none"]
ATTRS = ["array<index: 1>", "array<i64>", "array<i64: 99>", "1.5", '"\\FF"', "unit",
         "-1", "dense<1> : tensor<1xi64>", "true"]


def mutate(text: str) -> str:
    while True:
        out = _mutate(text, random.randrange(6))
        if out is not None:
            return out


def _mutate(text: str, k: int) -> str | None:
    if k == 0:                                     # a number
        spots = list(re.finditer(r"(?<![%@#\w])\d+", text))
        if not spots:
            return None
        m = random.choice(spots)
        return text[:m.start()] + random.choice(NUMS) + text[m.end():]
    if k == 1:                                     # an element type
        spots = list(re.finditer(r"\b(f32|f64|i1|i64)\b", text))
        if not spots:
            return None
        m = random.choice(spots)
        return text[:m.start()] + random.choice(TYPES) + text[m.end():]
    if k == 2:                                     # an attribute value
        spots = list(re.finditer(r"(\w+) = (array<i64[^>]*>|-?\d+ : i64|true|false)", text))
        if not spots:
            return None
        m = random.choice(spots)
        return text[:m.start(2)] + random.choice(ATTRS) + text[m.end(2):]
    if k == 3:                                     # an operand list
        spots = list(re.finditer(r'"rlx\.\w+"\(([^)]*)\)', text))
        if not spots:
            return None
        m = random.choice(spots)
        ops = [o.strip() for o in m.group(1).split(",") if o.strip()]
        ops = ops[1:] if ops and random.random() < 0.5 else ops + ops[:1]
        return text[:m.start(1)] + ", ".join(ops) + text[m.end(1):]
    if k == 4:                                     # a line dropped
        lines = text.split("\n")
        del lines[random.randrange(len(lines))]
        return "\n".join(lines)
    data = bytearray(text.encode())                # a byte
    data[random.randrange(len(data))] = random.randrange(256)
    return data.decode("utf-8", "replace")


def run(path: str, argv: list[str]) -> str | None:
    """What is wrong with running gradir-opt on ``path`` (None: nothing)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        # (write_output writes to fd 1 itself)
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            rc = gradir_opt.main([path, *argv])
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
    text = err.getvalue()
    if rc not in (0, 1):
        return f"exit code {rc}"
    if "Traceback" in text or "error: internal error" in text:
        return text.strip().splitlines()[0]
    if rc == 1 and "error:" not in text:
        return "exit code 1 without an error"
    return None


def check(name: str, texts, argv) -> None:
    bad = []
    for i, text in enumerate(texts):
        path = os.path.join(tmp, f"m{i}.mlir")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        problem = run(path, argv)
        if problem:
            bad.append((text, problem))
    for text, problem in bad[:3]:
        print(f"PROBLEM: {problem}\n{text}")
    print(f"{name}: {len(texts) - len(bad)} of {len(texts)} clean")


ops_text = open(sys.argv[1], encoding="utf-8").read()
ops_text = "\n".join(line for line in ops_text.split("\n") if not line.startswith("//"))
add_text = open(sys.argv[2], encoding="utf-8").read()

check("cut", [add_text[:n] for n in range(len(add_text) + 1)], ["--rlx-gradient=mode=vjp"])
# CHECK: cut: [[N:[0-9]+]] of [[N]] clean
check("mutated", [mutate(ops_text) for _ in range(120)], [])
# CHECK: mutated: 120 of 120 clean
check("mutated-gradient", [mutate(add_text) for _ in range(80)], ["--rlx-gradient=mode=vjp"])
# CHECK: mutated-gradient: 80 of 80 clean
# The parser hazards themselves, whatever the random choices above were.
check("hazards", [ops_text.replace("array<i64: 1, 0>", "array<index: 1, 0>", 1),
                  'module attributes {"\\FF" = 1 : i64} {}\n'], [])
# CHECK: hazards: 2 of 2 clean
# CHECK-NOT: PROBLEM
