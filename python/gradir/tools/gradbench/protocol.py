"""The GradBench protocol: one JSON message per line on stdin, one JSON
response per line on stdout (CONTRIBUTING.md, "Protocol", of GradBench).

Every response echoes the message's ``"id"``. By kind:

``start``
    ``{"id", "tool": "gradir", "config": {...}}``.
``define``
    ``{"id", "success": true}`` when gradir implements the module (its
    Python module imports), else ``"success": false`` with an ``"error"``.
``evaluate``
    ``eval.prepare(function, input)`` builds, differentiates and compiles
    (cached per input shape; reported as one ``"prepare"`` timing); when that
    compiled new code, one untimed-by-GradBench call of the closure follows
    (a ``"warmup"`` timing, as GradBench's Julia tools report: the first call
    of new code loads and initializes it); then the closure runs at least ``input["min_runs"]`` times and until the
    runs add up to ``input["min_seconds"]`` (GradBench's ``Runs``; both
    default to one run), one ``"evaluate"`` timing per run, in nanoseconds.
    The last run's output is converted to JSON after the timed runs. Any
    failure is ``"success": false`` with an ``"error"`` string; the
    traceback goes to stderr.
anything else (``analysis``, ...)
    ``{"id"}``.

stdout carries responses only: ``main`` moves the process's file
descriptor 1 to stderr, so nothing else (compiler or runtime prints) can
corrupt the stream, and writes responses to a private copy of it.
"""

import json
import math
import os
import sys
import time
import traceback

from . import build
from . import evals as _evals

TOOL = "gradir"

# Timing names. "evaluate" is the one GradBench scores; others are reported
# beside it (GradBench's Julia tools report "warmup" the same way).
PREPARE = "prepare"
WARMUP = "warmup"
EVALUATE = "evaluate"


def timing(name, nanoseconds):
    return {"name": name, "nanoseconds": int(nanoseconds)}


def jsonable(value):
    """`value` with numpy arrays and scalars turned into lists and numbers;
    ValueError on NaN or infinity (JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"output has a non-finite number ({value})")
        return value
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if tolist is not None:
        return jsonable(tolist())
    raise TypeError(f"output has a value of type {type(value).__name__}, not JSON")


def runs_of(input):
    """(min_runs, min_seconds) of an evaluate message's input; (1, 0) when absent."""
    if isinstance(input, dict):
        return max(1, int(input.get("min_runs", 1))), float(input.get("min_seconds", 0))
    return 1, 0.0


def run_repeatedly(closure, min_runs, min_seconds, clock=time.perf_counter_ns):
    """Calls `closure` until it ran `min_runs` times and its runs took
    `min_seconds` in all (at least once); returns (last output, timings)."""
    timings = []
    elapsed = 0
    min_ns = min_seconds * 1e9
    output = None
    while len(timings) < max(1, min_runs) or elapsed < min_ns:
        start = clock()
        output = closure()
        ns = clock() - start
        timings.append(timing(EVALUATE, ns))
        elapsed += ns
    return output, timings


def error_text(exc):
    """One line or a few naming the failure, for a response's "error"."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Session:
    """Answers GradBench messages; `handle(message)` returns the response dict.

    `registry` provides ``load(name)`` and ``EVALS`` (default: the `evals`
    package); `clock` returns nanoseconds.
    """

    def __init__(self, registry=None, clock=time.perf_counter_ns, log=None):
        self.registry = registry if registry is not None else _evals
        self.clock = clock
        self.log = log if log is not None else sys.stderr

    def _report(self, what, exc):
        print(f"gradir-gradbench: {what} failed:", file=self.log)
        traceback.print_exception(exc, file=self.log)
        self.log.flush()

    def handle(self, message):
        kind = message.get("kind")
        response = {"id": message.get("id")}
        if kind == "start":
            response["tool"] = TOOL
            response["config"] = {"target": "cpu", "dtype": "float64",
                                  "multithreaded": build.THREADS != 1}
        elif kind == "define":
            response.update(self.define(message.get("module")))
        elif kind == "evaluate":
            response.update(self.evaluate(message))
        return response

    def define(self, module):
        start = self.clock()
        try:
            self.registry.load(module)
        except Exception as exc:  # an unknown eval or one that fails to import
            if not isinstance(exc, KeyError):
                self._report(f"define {module!r}", exc)
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else error_text(exc)
            return {"success": False, "error": str(msg)}
        return {"success": True, "timings": [timing("import", self.clock() - start)]}

    def evaluate(self, message):
        module, function = message.get("module"), message.get("function")
        input = message.get("input")
        try:
            mod = self.registry.load(module)
            if function not in mod.FUNCTIONS:
                return {"success": False,
                        "error": f"eval {module!r} has no function {function!r} "
                                 f"(it has {', '.join(mod.FUNCTIONS)})"}
            compiles = build.COMPILES
            start = self.clock()
            closure = mod.prepare(function, input)
            timings = [timing(PREPARE, self.clock() - start)]
            if build.COMPILES != compiles:   # new code: its first call loads and initializes
                start = self.clock()
                closure()
                timings.append(timing(WARMUP, self.clock() - start))
            min_runs, min_seconds = runs_of(input)
            output, runs = run_repeatedly(closure, min_runs, min_seconds, self.clock)
            timings += runs
            output = jsonable(output)
        except Exception as exc:
            self._report(f"evaluate {module}.{function}", exc)
            return {"success": False, "error": error_text(exc)}
        return {"success": True, "output": output, "timings": timings}


def serve(lines, write, session=None):
    """The message loop: for each line of `lines` (a JSON message), calls
    `write` with the response's JSON text (one line, no newline)."""
    session = session or Session()
    for line in lines:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("a message is a JSON object")
        except ValueError as exc:
            print(f"gradir-gradbench: not a GradBench message ({exc}): {line[:200]!r}",
                  file=session.log)
            continue
        try:
            response = session.handle(message)
            text = json.dumps(response, allow_nan=False)
        except Exception as exc:  # an unencodable response: still answer the id
            session._report("a response", exc)
            text = json.dumps({"id": message.get("id"), "success": False,
                               "error": error_text(exc)})
        write(text)


def main(argv=()):
    import argparse
    parser = argparse.ArgumentParser(
        prog="gradir-gradbench",
        description="A GradBench tool: reads GradBench's JSON messages on stdin, "
                    "answers on stdout, and evaluates each eval's functions with "
                    "gradir-compiled derivatives.")
    parser.add_argument("--list", action="store_true",
                        help="print the evals gradir implements and exit")
    parser.add_argument("--multithreaded", action="store_true",
                        help="compile parallel code (all cores); default one thread, "
                             "like GradBench's other tools")
    args = parser.parse_args(list(argv))
    if args.multithreaded:
        build.THREADS = None
    if args.list:
        print("\n".join(_evals.EVALS))
        return 0
    # Responses go to a private copy of stdout; fd 1 itself becomes stderr.
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def write(text):
        out.write(text + "\n")
        out.flush()

    try:
        serve(sys.stdin, write)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0
