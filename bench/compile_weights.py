"""Compile cost of single ops: what the parallel compile's weights are set from.

    build/venv/bin/python bench/compile_weights.py            # 5 rounds
    build/venv/bin/python bench/compile_weights.py --rounds 9

``runtime/partition.py`` cuts a large function where the estimated compile
work (``_weight``: a table of op kinds, a plain matmul 8) is about halved.
This script compiles, for each op kind, a function holding that op alone
(LeNet and MLP shapes, f32), whole (``GRADIR_PARALLEL_COMPILE=0``, cache
off), and prints the time above an elementwise op's function, in ms and
in units of an eighth of the plain 64x512x512 matmul's, beside the weight
the table gives.  A function alone is not the function in context (the
parts of the MLP step cost 2.1 and 3.0 ms of CPU per unit of the table),
so the table follows these numbers, not more closely.  The header names
the CPU and its vector ISA.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ["GRADIR_PARALLEL_COMPILE"] = "0"
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _t(shape: str) -> str:
    return f"tensor<{shape}xf32>"


def _fn(ops: list[tuple], args: list[str]) -> str:
    """``ops``: (result, op name, operands, attributes, operand types, result type)."""
    lines = []
    for res, name, operands, attrs, in_types, out_type in ops:
        lines.append(f'  %{res} = "{name}"({", ".join("%" + o for o in operands)}) {attrs} : '
                     f'({", ".join(in_types)}) -> {out_type}')
    res, out_type = ops[-1][0], ops[-1][5]
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(args))
    return (f"func.func @main({params}) -> {out_type} {{\n" + "\n".join(lines)
            + f"\n  return %{res} : {out_type}\n}}")


CONV = ("{dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, "
        "strides = array<i64: 1, 1>}")
POOL = "{padding = array<i64: 0, 0, 0, 0>, pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}"
T2 = "{axes = array<i64: 1, 0>}"
T4 = "{axes = array<i64: 1, 0, 2, 3>}"


def _matmul(kind: str, m: int, k: int, n: int) -> tuple[str, str]:
    a, b, c = _t(f"{m}x{k}"), _t(f"{k}x{n}"), _t(f"{m}x{n}")
    if kind == "plain":
        return _fn([("0", "rlx.matmul", ["a0", "a1"], "", [a, b], c)], [a, b]), "rlx.matmul"
    if kind == "lhsT":
        at = _t(f"{k}x{m}")
        return _fn([("t", "rlx.permute_dims", ["a0"], T2, [at], a),
                    ("0", "rlx.matmul", ["t", "a1"], "", [a, b], c)], [at, b]), "lhsT"
    bt = _t(f"{n}x{k}")
    return _fn([("t", "rlx.permute_dims", ["a1"], T2, [bt], b),
                ("0", "rlx.matmul", ["a0", "t"], "", [a, b], c)], [a, bt]), "rhsT"


def cases() -> dict[str, tuple[str, str]]:
    """name -> (function text, key of the weight it checks)."""
    x, v = _t("64x512"), _t("512")
    out = {
        "baseline (relu)": (_fn([("0", "rlx.relu", ["a0"], "", [x], x)], [x]), ""),
        "add": (_fn([("0", "rlx.add", ["a0", "a1"], "", [x, x], x)], [x, x]), "rlx.add"),
        "exp": (_fn([("0", "rlx.exp", ["a0"], "", [x], x)], [x]), "rlx.exp"),
        "collapse_sum_to": (_fn([("0", "rlx.collapse_sum_to", ["a0"], "", [x], v)], [x]),
                            "rlx.collapse_sum_to"),
        "log_softmax 64x10": (_fn([("0", "rlx.log_softmax", ["a0"], "{axis = array<i64: -1>}",
                                    [_t("64x10")], _t("64x10"))], [_t("64x10")]),
                              "rlx.log_softmax"),
        "matmul 64x512x512": _matmul("plain", 64, 512, 512),
        "matmul 64x784x512": _matmul("plain", 64, 784, 512),
        "matmul 64x512x10": _matmul("plain", 64, 512, 10),
        "matmul lhsT 512x64x512": _matmul("lhsT", 512, 64, 512),
        "matmul lhsT 512x64x10": _matmul("lhsT", 512, 64, 10),
        "matmul rhsT 64x512x512": _matmul("rhsT", 64, 512, 512),
        "matmul rhsT 64x10x512": _matmul("rhsT", 64, 10, 512),
        "transpose 2-d 64x512": (_fn([("0", "rlx.permute_dims", ["a0"], T2, [x],
                                       _t("512x64"))], [x]), "transpose2d"),
        "transpose 4-d": (_fn([("0", "rlx.permute_dims", ["a0"], T4, [_t("64x6x12x12")],
                                _t("6x64x12x12"))], [_t("64x6x12x12")]), "rlx.permute_dims"),
    }
    i1, w1, o1 = _t("64x1x28x28"), _t("6x1x5x5"), _t("64x6x24x24")
    i2, w2, o2 = _t("64x6x12x12"), _t("16x6x5x5"), _t("64x16x8x8")
    out["conv2d 1->6"] = (_fn([("0", "rlx.conv2d", ["a0", "a1"], CONV, [i1, w1], o1)],
                              [i1, w1]), "rlx.conv2d")
    out["conv2d 6->16"] = (_fn([("0", "rlx.conv2d", ["a0", "a1"], CONV, [i2, w2], o2)],
                               [i2, w2]), "rlx.conv2d")
    out["conv2d_transpose"] = (_fn([("0", "rlx.conv2d_transpose", ["a0", "a1"], CONV,
                                     [o2, w2], i2)], [o2, w2]), "rlx.conv2d_transpose")
    out["max_pool2d"] = (_fn([("0", "rlx.max_pool2d", ["a0"], POOL, [o1], i2)], [o1]),
                         "rlx.max_pool2d")
    out["max_pool2d_backward"] = (_fn([("0", "rlx.max_pool2d_backward", ["a0", "a1"], POOL,
                                        [i2, o1], o1)], [i2, o1]), "rlx.max_pool2d_backward")
    return out


def table_weight(key: str) -> str:
    from gradir.runtime import partition as p
    if not key:
        return "-"
    if key == "lhsT":
        return str(p._WEIGHTS["rlx.matmul"] + p._MATMUL_LHS_T)
    if key == "rhsT":
        return str(p._WEIGHTS["rlx.matmul"] + p._MATMUL_RHS_T)
    if key == "transpose2d":
        return str(p._TRANSPOSE_2D)
    return str(p._WEIGHTS.get(key, 1))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compile_time import header
    import gradir
    print(header())
    todo = cases()
    gradir.compile(gradir.parse(todo["matmul 64x512x512"][0]), cache=False)   # imports, LLVM
    times: dict[str, list[float]] = {name: [] for name in todo}
    for _ in range(args.rounds):
        for name, (text, _key) in todo.items():
            module = gradir.parse(text)
            t0 = time.perf_counter()
            gradir.compile(module, cache=False)
            times[name].append(time.perf_counter() - t0)
    base = min(times["baseline (relu)"])
    unit = (min(times["matmul 64x512x512"]) - base) / 8
    print(f"compile time of one op alone, min of {args.rounds}; above the baseline "
          f"({base * 1e3:.1f} ms); unit = 1/8 of the plain 64x512x512 matmul's "
          f"({unit * 1e3:.2f} ms)")
    print(f"{'op':<26}{'ms':>8}{'above':>8}{'units':>8}{'table':>7}")
    for name, (_text, key) in todo.items():
        t = min(times[name])
        print(f"{name:<26}{t * 1e3:8.1f}{(t - base) * 1e3:8.1f}{(t - base) / unit:8.1f}"
              f"{table_weight(key):>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
