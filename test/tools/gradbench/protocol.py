# RUN: %PYTHON %s | FileCheck %s
# The GradBench protocol of gradir-gradbench (gradir.tools.gradbench.protocol):
# a session piped through `python -m gradir.tools.gradbench` (start, define,
# evaluate, analysis, unknown modules and functions, a line that is not
# JSON), replies checked field by field; a "warmup" call only after a
# prepare that compiled; min_runs / min_seconds with a fake clock; failures
# reported as "success": false with the error, never on stdout; a process
# whose eval code prints to stdout still answers cleanly.

import json
import subprocess
import sys

import numpy as np


def session(lines, code=None):
    """Runs the tool on `lines` (JSON texts); returns (responses, stderr)."""
    cmd = [sys.executable, "-m", "gradir.tools.gradbench"] if code is None else \
        [sys.executable, "-c", code]
    proc = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def test_round_trip():
    messages = [
        {"id": 0, "kind": "start", "eval": "hello"},
        {"id": 1, "kind": "define", "module": "hello"},
        {"id": 2, "kind": "evaluate", "module": "hello", "function": "square", "input": 3.0},
        {"id": 3, "kind": "analysis", "of": 2, "valid": True},
        {"id": 4, "kind": "evaluate", "module": "hello", "function": "double", "input": 9.0,
         "description": "x=9"},
        {"id": 5, "kind": "analysis", "of": 4, "valid": False, "error": "wrong"},
        {"id": 6, "kind": "define", "module": "nosuch"},
        {"id": 7, "kind": "evaluate", "module": "hello", "function": "cube", "input": 2.0},
        {"id": 8, "kind": "evaluate", "module": "lse", "function": "primal",
         "input": {"x": [0.0, 0.0], "min_runs": 5, "min_seconds": 0}},
        {"id": 9, "kind": "evaluate", "module": "lse", "function": "primal",
         "input": {"x": "not numbers", "min_runs": 1, "min_seconds": 0}},
        {"id": 10, "kind": "something-new"},
        {"id": 11, "kind": "evaluate", "module": "hello", "function": "square", "input": 4.0},
    ]
    lines = [json.dumps(m) for m in messages]
    lines.insert(3, "this is not JSON")
    replies, stderr = session(lines)
    assert [r["id"] for r in replies] == list(range(12)), replies
    r = {x["id"]: x for x in replies}
    assert r[0]["tool"] == "gradir" and "config" in r[0]
    print("start:", sorted(r[0]))
    assert r[1]["success"] is True
    print("define hello:", r[1]["success"])
    for i, want in ((2, 9.0), (4, 18.0)):
        assert r[i]["success"] is True and r[i]["output"] == want, r[i]
        names = [t["name"] for t in r[i]["timings"]]
        assert names == ["prepare", "warmup", "evaluate"], names
        assert all(isinstance(t["nanoseconds"], int) and t["nanoseconds"] >= 0
                   for t in r[i]["timings"])
        print("evaluate:", r[i]["output"], names)
    assert r[3] == {"id": 3} and r[5] == {"id": 5} and r[10] == {"id": 10}
    print("analysis and other kinds: id only")
    print("define nosuch:", r[6]["success"], r[6]["error"])
    print("unknown function:", r[7]["success"], r[7]["error"])
    runs = [t for t in r[8]["timings"] if t["name"] == "evaluate"]
    assert [t["name"] for t in r[8]["timings"][:2]] == ["prepare", "warmup"]
    assert r[8]["success"] and len(runs) == 5 and abs(r[8]["output"] - np.log(2)) < 1e-15
    print("min_runs 5:", len(runs), "evaluate timings")
    assert r[9]["success"] is False and "Traceback" not in r[9]["error"], r[9]
    print("bad input:", r[9]["success"], r[9]["error"].split(":")[0])
    assert r[11]["output"] == 16.0
    print("same shape again:", [t["name"] for t in r[11]["timings"]])
    assert "not a GradBench message" in stderr and "Traceback" in stderr
    print("stderr has the bad line and the traceback")


class Clock:
    """A fake perf_counter_ns: each reading advances by `step` ns."""

    def __init__(self, step):
        self.now, self.step = 0, step

    def __call__(self):
        self.now += self.step
        return self.now


def test_runs():
    from gradir.tools.gradbench.protocol import run_repeatedly, runs_of
    calls = []

    def closure():
        calls.append(1)
        return len(calls)
    # each run reads the clock twice: 10 ms per run with step 10 ms
    out, timings = run_repeatedly(closure, 2, 0.095, Clock(10_000_000))
    print("min_seconds 0.095 at 10 ms a run:", len(timings), "runs, output", out)
    calls.clear()
    out, timings = run_repeatedly(closure, 7, 0.0, Clock(10_000_000))
    print("min_runs 7:", len(timings), "runs;", {t["name"] for t in timings},
          {t["nanoseconds"] for t in timings})
    calls.clear()
    out, timings = run_repeatedly(closure, 0, 0.0)
    print("min_runs 0 still runs:", len(timings))
    print("runs_of:", runs_of({"min_runs": 3, "min_seconds": 0.5}), runs_of(2.0), runs_of({}))


def test_errors():
    from gradir.tools.gradbench.protocol import Session

    class Registry:
        EVALS = ("fake",)

        @staticmethod
        def load(name):
            if name != "fake":
                raise KeyError(f"no gradir implementation of eval {name!r}")
            return Fake

    class Fake:
        FUNCTIONS = ("boom", "nan", "array")

        @staticmethod
        def prepare(function, input):
            if function == "boom":
                raise ValueError("bad shape (2, 3)")
            if function == "nan":
                return lambda: float("nan")
            return lambda: {"a": np.arange(3.0), "b": np.float64(1.5), "c": np.int64(2)}

    class Log:
        text = ""

        def write(self, s):
            Log.text += s

        def flush(self):
            pass
    s = Session(Registry, log=Log())
    for fn in Fake.FUNCTIONS:
        r = s.handle({"id": 1, "kind": "evaluate", "module": "fake", "function": fn, "input": {}})
        print(fn, json.dumps({k: v for k, v in r.items() if k != "timings"}))
    print("define fake:", s.handle({"id": 2, "kind": "define", "module": "fake"})["success"])
    assert "ValueError: bad shape" in Log.text


def test_stdout_is_protocol_only():
    code = ("import sys\n"
            "from gradir.tools.gradbench import evals, protocol\n"
            "class Loud:\n"
            "    FUNCTIONS = ('f',)\n"
            "    @staticmethod\n"
            "    def prepare(function, input):\n"
            "        print('noise from prepare')\n"
            "        return lambda: print('noise from a run') or 42\n"
            "evals.load = lambda name: Loud\n"
            "sys.exit(protocol.main([]))\n")
    replies, stderr = session([json.dumps({"id": 0, "kind": "evaluate", "module": "loud",
                                           "function": "f", "input": {"min_runs": 2}})], code)
    print("loud eval:", replies[0]["output"], len(replies), "reply;",
          "noise on stderr:", stderr.count("noise"))


for test in (test_round_trip, test_runs, test_errors, test_stdout_is_protocol_only):
    print(f"TEST: {test.__name__}")
    test()

# CHECK-LABEL: TEST: test_round_trip
# CHECK-NEXT: start: ['config', 'id', 'tool']
# CHECK-NEXT: define hello: True
# CHECK-NEXT: evaluate: 9.0 ['prepare', 'warmup', 'evaluate']
# CHECK-NEXT: evaluate: 18.0 ['prepare', 'warmup', 'evaluate']
# CHECK-NEXT: analysis and other kinds: id only
# CHECK-NEXT: define nosuch: False no gradir implementation of eval 'nosuch'
# CHECK-NEXT: unknown function: False eval 'hello' has no function 'cube' (it has square, double)
# CHECK-NEXT: min_runs 5: 5 evaluate timings
# CHECK-NEXT: bad input: False ValueError
# CHECK-NEXT: same shape again: ['prepare', 'evaluate']
# CHECK-NEXT: stderr has the bad line and the traceback
# CHECK-LABEL: TEST: test_runs
# CHECK-NEXT: min_seconds 0.095 at 10 ms a run: 10 runs, output 10
# CHECK-NEXT: min_runs 7: 7 runs; {'evaluate'} {10000000}
# CHECK-NEXT: min_runs 0 still runs: 1
# CHECK-NEXT: runs_of: (3, 0.5) (1, 0.0) (1, 0.0)
# CHECK-LABEL: TEST: test_errors
# CHECK-NEXT: boom {"id": 1, "success": false, "error": "ValueError: bad shape (2, 3)"}
# CHECK-NEXT: nan {"id": 1, "success": false, "error": "ValueError: output has a non-finite number (nan)"}
# CHECK-NEXT: array {"id": 1, "success": true, "output": {"a": [0.0, 1.0, 2.0], "b": 1.5, "c": 2}}
# CHECK-NEXT: define fake: True
# CHECK-LABEL: TEST: test_stdout_is_protocol_only
# CHECK-NEXT: loud eval: 42 1 reply; noise on stderr: 3
