# RUN: %PYTHON %s | FileCheck %s
# RUN: env GRADIR_TEST_OPT_LEVEL=0 %PYTHON %s | FileCheck %s
# Batched matmuls through the kernel library (one kernel call per batch
# element), compiled against the reference interpreter: attention's head
# splits and transposes read in place (permute_dims and reshapes that only
# split or merge dims, the source reshaped, not copied), head merges
# written in place (the result in the order the merge reads), a lhs or rhs
# shared by the batch (a 2-D matrix for every element), a batch broadcast
# in part (materialized), ragged shapes, a batch of 1, f32 and f64; and the
# batched driver at 2 and 3 threads (batch x strips) bitwise the same as 1
# thread.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from numeric_helpers import FLOATS, Suite, op, rand, run, short  # noqa: E402

import gradir  # noqa: E402
from gradir.testing.oracle import export_differences  # noqa: E402


def tol(k, dt):
    return 1e-6 * k if dt is np.float32 else None


def reshape(x, shape, dt):
    return op("rlx.reshape", x, result=(shape, dt))


def heads(x, s, b, h, d, dt):
    """(S, B, H*D) -> (B, H, S, D), as torch's multi-head attention splits
    its projections: reshape (S, B*H, D), permute, reshape."""
    t = op("rlx.permute_dims", reshape(x, (s, b * h, d), dt), axes=[1, 0, 2])
    return reshape(t, (b, h, s, d), dt)


def swap(x):
    """The last two axes swapped."""
    rank = len(x.type.shape)
    return op("rlx.permute_dims", x, axes=list(range(rank - 2)) + [rank - 1, rank - 2])


def attention_cases(s, dt, tag, S, B, H, D):
    # q @ k^T: both head splits read in place, k transposed as well
    s.case(f"scores_{tag}_{short(dt)}",
           lambda q, k: op("rlx.matmul", heads(q, S, B, H, D, dt), swap(heads(k, S, B, H, D, dt))),
           rand((S, B, H * D), dt), rand((S, B, H * D), dt), atol=tol(D, dt))
    # probs @ v, and the backward's probs^T @ dout and dscores^T @ q
    s.case(f"values_{tag}_{short(dt)}",
           lambda p, v: op("rlx.matmul", p, heads(v, S, B, H, D, dt)),
           rand((B, H, S, S), dt), rand((S, B, H * D), dt), atol=tol(S, dt))
    s.case(f"probs_t_{tag}_{short(dt)}",
           lambda p, v: op("rlx.matmul", swap(p), heads(v, S, B, H, D, dt)),
           rand((B, H, S, S), dt), rand((S, B, H * D), dt), atol=tol(S, dt))
    # dout (S*B, H*D) of the output projection's backward, split into heads
    # head merges written in place: (B, H, S, D) -> (S*B, H*D) after p @ v,
    # and the backward's (B*H, S, D) -> (S, B*H, D) -> (1, S, B, H*D) into a concat
    s.case(f"merge_{tag}_{short(dt)}",
           lambda p, v: reshape(op("rlx.permute_dims", op("rlx.matmul", p, heads(v, S, B, H, D, dt)),
                                   axes=[2, 0, 1, 3]), (S * B, H * D), dt),
           rand((B, H, S, S), dt), rand((S, B, H * D), dt), atol=tol(S, dt))
    s.case(f"merge_concat_{tag}_{short(dt)}",
           lambda p, v, z: op("rlx.concat", z, reshape(op("rlx.permute_dims", reshape(
               op("rlx.matmul", swap(p), heads(v, S, B, H, D, dt)), (B * H, S, D), dt),
               axes=[1, 0, 2]), (1, S, B, H * D), dt), axis=[0]),
           rand((B, H, S, S), dt), rand((S, B, H * D), dt), rand((2, S, B, H * D), dt),
           atol=tol(S, dt))
    s.case(f"dout_{tag}_{short(dt)}",
           lambda g, v: op("rlx.matmul", op("rlx.permute_dims", reshape(g, (S, B, H, D), dt),
                                            axes=[1, 2, 0, 3]), swap(heads(v, S, B, H, D, dt))),
           rand((S * B, H * D), dt), rand((S, B, H * D), dt), atol=tol(D, dt))


@run
def test_heads():
    s = Suite("heads")
    for dt in FLOATS:
        attention_cases(s, dt, "2x3", 7, 2, 3, 5)
        attention_cases(s, dt, "1x1", 9, 1, 1, 4)      # a batch of 1
        # the head split's other uses keep its copy; the matmul reads either
        # the merge's permute read twice: not written in place
        s.case(f"merge_shared_{short(dt)}",
               lambda p, v, dt=dt: (lambda t: (reshape(t, (12, 4), dt), t))(op(
                   "rlx.permute_dims", op("rlx.matmul", p, v), axes=[2, 0, 1, 3])),
               rand((2, 2, 6, 5), dt), rand((2, 2, 5, 2), dt), atol=tol(5, dt))
        s.case(f"shared_split_{short(dt)}",
               lambda q, dt=dt: (lambda t: (op("rlx.matmul", t, swap(t)), t))(
                   heads(q, 6, 2, 2, 3, dt)),
               rand((6, 2, 6), dt), atol=tol(3, dt))
    s.run()


@run
def test_layouts():
    s = Suite("layouts")
    for dt in FLOATS:
        for b, m, k, n in [(3, 7, 13, 29), (2, 1, 5, 10), (4, 17, 1, 5), (1, 20, 33, 9)]:
            s.case(f"plain_{b}x{m}x{k}x{n}_{short(dt)}", lambda x, y: op("rlx.matmul", x, y),
                   rand((b, m, k), dt), rand((b, k, n), dt), atol=tol(k, dt))
            s.case(f"both_t_{b}x{m}x{k}x{n}_{short(dt)}",
                   lambda x, y: op("rlx.matmul", swap(x), swap(y)),
                   rand((b, k, m), dt), rand((b, n, k), dt), atol=tol(k, dt))
        # a lhs shared by the batch: one 2-D matrix (transposed too), not broadcast
        s.case(f"shared_lhs_{short(dt)}", lambda x, y: op("rlx.matmul", x, y),
               rand((1, 6, 11), dt), rand((4, 11, 9), dt), atol=tol(11, dt))
        s.case(f"shared_lhs_2d_t_{short(dt)}",
               lambda x, y: op("rlx.matmul", op("rlx.permute_dims", x), y),
               rand((11, 6), dt), rand((2, 3, 11, 9), dt), atol=tol(11, dt))
        # a vector against a batch (numpy: its unit dim dropped again)
        s.case(f"vector_lhs_{short(dt)}", lambda x, y: op("rlx.matmul", x, y),
               rand((7,), dt), rand((2, 3, 7, 4), dt), atol=tol(7, dt))
        s.case(f"vector_rhs_{short(dt)}", lambda x, y: op("rlx.matmul", x, y),
               rand((2, 3, 5, 7), dt), rand((7,), dt), atol=tol(7, dt))
        # batch dims broadcast in part: (2, 1) against (1, 3)
        s.case(f"partial_{short(dt)}", lambda x, y: op("rlx.matmul", x, y),
               rand((2, 1, 5, 7), dt), rand((1, 3, 7, 4), dt), atol=tol(7, dt))
        # batch dims that do not merge in the source: the copy stays
        s.case(f"unmerged_{short(dt)}",
               lambda x, y: op("rlx.matmul", op("rlx.permute_dims", x, axes=[1, 0, 2, 3]), y),
               rand((3, 2, 5, 7), dt), rand((2, 3, 7, 4), dt), atol=tol(7, dt))
        # the batch innermost in the source: read from a copy
        s.case(f"batch_inner_{short(dt)}",
               lambda x, y: op("rlx.matmul", op("rlx.permute_dims", x, axes=[2, 0, 1]), y),
               rand((5, 7, 3), dt), rand((3, 7, 4), dt), atol=tol(7, dt))
    s.run()


def _threads_module(dt):
    """Batched matmuls worth the threads: a batch of 3 (2 strips each at 2
    threads), one of 32 with head splits (and one with its head merge), one
    of 1, a shared rhs (one 2-D matmul), a shared transposed lhs."""
    s = Suite("threads")
    s.case("odd_batch", lambda x, y: op("rlx.matmul", x, y),
           rand((3, 100, 70), dt), rand((3, 70, 130), dt))
    s.case("heads", lambda q, k: op("rlx.matmul", heads(q, 128, 8, 4, 64, dt),
                                    swap(heads(k, 128, 8, 4, 64, dt))),
           rand((128, 8, 256), dt), rand((128, 8, 256), dt))
    s.case("merge", lambda p, v: reshape(op("rlx.permute_dims", op(
        "rlx.matmul", p, heads(v, 128, 8, 4, 64, dt)), axes=[2, 0, 1, 3]), (1024, 256), dt),
           rand((8, 4, 128, 128), dt), rand((128, 8, 256), dt))
    s.case("one", lambda x, y: op("rlx.matmul", swap(x), y),
           rand((1, 256, 200), dt), rand((1, 256, 300), dt))
    s.case("shared_rhs", lambda x, y: op("rlx.matmul", x, y),
           rand((2, 3, 40, 50), dt), rand((1, 1, 50, 120), dt))
    # a lhs shared by the batch: a view of batch stride 0 in the driver
    s.case("shared_lhs", lambda x, y: op("rlx.matmul", swap(x), y),
           rand((1, 70, 100), dt), rand((3, 70, 130), dt))
    return s


@run
def test_threads():
    for dt in FLOATS:
        s = _threads_module(dt)
        module = s.module()
        exes = {t: gradir.compile(gradir.parse(str(module)), threads=t) for t in (1, 2, 3)}
        calls = []
        for i, (name, _, inputs, _, _) in enumerate(s.cases):
            want = gradir.interpret(module, f"case{i}", *inputs)[0]
            got = {t: exe[f"case{i}"](*inputs) for t, exe in exes.items()}
            calls.append((name, f"case{i}", inputs, got[2]))
            k = max(max(x.shape[-2:]) for x in inputs)
            close = np.allclose(got[1], want, rtol=2e-5 if dt is np.float32 else 1e-12,
                                atol=1e-6 * k if dt is np.float32 else 1e-13)
            same = all(np.array_equal(got[1], got[t]) for t in (2, 3))
            print(f"{name} {short(dt)}: matches the interpreter: {close}, "
                  f"bitwise the same at 1, 2 and 3 threads: {same}")
        # the batched driver from the exported library (its _omp library beside it)
        problems = export_differences(exes[2], calls)
        print(f"{short(dt)} exported at 2 threads, the same results: {not problems}", *problems)


# CHECK-LABEL: TEST: test_heads
# CHECK: ok scores_2x3_f32
# CHECK: ok merge_2x3_f32
# CHECK: ok merge_concat_2x3_f32
# CHECK: ok dout_1x1_f32
# CHECK: ok merge_shared_f32
# CHECK: ok shared_split_f64
# CHECK: heads: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_layouts
# CHECK: ok plain_3x7x13x29_f32
# CHECK: ok both_t_1x20x33x9_f64
# CHECK: ok partial_f64
# CHECK: ok batch_inner_f64
# CHECK: layouts: all {{[0-9]+}} cases match the interpreter
# CHECK-LABEL: TEST: test_threads
# CHECK-NEXT: odd_batch f32: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: heads f32: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: merge f32: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: one f32: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: shared_rhs f32: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: shared_lhs f32: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: f32 exported at 2 threads, the same results: True
# CHECK-NEXT: odd_batch f64: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: heads f64: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: merge f64: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: one f64: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: shared_rhs f64: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: shared_lhs f64: matches the interpreter: True, bitwise the same at 1, 2 and 3 threads: True
# CHECK-NEXT: f64 exported at 2 threads, the same results: True
