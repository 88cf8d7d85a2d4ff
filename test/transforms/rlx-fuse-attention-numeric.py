# RUN: %PYTHON %s | FileCheck %s
# rlx-fuse-attention against the program it rewrites: the reference
# interpreter gives the same attention to rounding (every row's softmax is
# whole in its block; numpy's matmul of a block may round differently from
# the whole one's); compiled (gradir.compile, target cpu) the fused and
# the unfused programs agree with each other and with the interpreter;
# rlx-gradient of the fused program (its scf.for) matches float64 central
# finite differences and the unfused program's gradient (also split into
# forward and backward functions); the attention torch.export gives for
# F.scaled_dot_product_attention, nn.MultiheadAttention and attention
# written by hand is fused; the pass's output is deterministic.

import numpy as np

import gradir
from gradir import interpret, parse, run_pipeline
from gradir.ir import print_module
from gradir.testing import check_gradient, gradient_module

rng = np.random.default_rng(0)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def fused(text: str, cache_bytes: int):
    module = parse(text)
    run_pipeline(module, f"builtin.module(rlx-fuse-attention{{cache-bytes={cache_bytes}}})")
    return module


def attention(b, h, s, d, elt, chain="scale_mask", loss=False, sk=None):
    """@main(q, k, v, mask[, g]): softmax(f(q k^T)) v over (b, h) heads of
    s query rows, sk keys, width d; ``chain`` picks f; ``loss``: the sum of
    the result's square times g (a scalar target for rlx-gradient; the
    square keeps the loop's cotangent from being the argument g itself)."""
    sk = sk or s
    lead = f"{b}x{h}x" if b else ""
    perm = "0, 1, 3, 2" if b else "1, 0"
    Q, K = f"tensor<{lead}{s}x{d}x{elt}>", f"tensor<{lead}{sk}x{d}x{elt}>"
    KT, S = f"tensor<{lead}{d}x{sk}x{elt}>", f"tensor<{lead}{s}x{sk}x{elt}>"
    M, C = f"tensor<{s}x{sk}x{elt}>", f"tensor<{elt}>"
    body = {
        "scale_mask": f'''%a = "rlx.multiply"(%s, %c) : ({S}, {C}) -> {S}
  %f = "rlx.add"(%a, %m) : ({S}, {M}) -> {S}''',
        "causal": f'''%a = "rlx.divide"(%s, %c) : ({S}, {C}) -> {S}
  %z = arith.constant dense<0.0> : {M}
  %lt = "rlx.greater_equal"(%m, %z) : ({M}, {M}) -> tensor<{s}x{sk}xi1>
  %ninf = arith.constant dense<-1.0e30> : {C}
  %f = "rlx.where"(%lt, %a, %ninf) : (tensor<{s}x{sk}xi1>, {S}, {C}) -> {S}''',
        "softcap": f'''%a = "rlx.tanh"(%s) : ({S}) -> {S}
  %b2 = "rlx.multiply"(%c, %a) : ({C}, {S}) -> {S}
  %f = "rlx.subtract"(%b2, %m) : ({S}, {M}) -> {S}''',
    }[chain]
    out = f"tensor<{elt}>" if loss else Q
    tail = f'''%o2 = "rlx.square"(%o) : ({Q}) -> {Q}
  %w = "rlx.multiply"(%o2, %g) : ({Q}, {Q}) -> {Q}
  %l = "rlx.sum"(%w) : ({Q}) -> {out}
  return %l : {out}''' if loss else f"return %o : {Q}"
    g = f", %g: {Q}" if loss else ""
    return f'''func.func @main(%q: {Q}, %k: {K}, %v: {K}, %m: {M}{g}) -> {out} {{
  %kt = "rlx.permute_dims"(%k) {{axes = array<i64: {perm}>}} : ({K}) -> {KT}
  %s = "rlx.matmul"(%q, %kt) : ({Q}, {KT}) -> {S}
  %c = arith.constant dense<0.5> : {C}
  {body}
  %p = "rlx.softmax"(%f) {{axis = array<i64: -1>}} : ({S}) -> {S}
  %o = "rlx.matmul"(%p, %v) : ({S}, {K}) -> {Q}
  {tail}
}}'''


def inputs(b, h, s, d, dtype, loss=False, sk=None):
    sk = sk or s
    lead = (b, h) if b else ()
    arrays = [rng.standard_normal(lead + (n, d)) for n in (s, sk, sk)]
    arrays.append(rng.standard_normal((s, sk)))
    if loss:
        arrays.append(rng.standard_normal(lead + (s, d)))
    return [a.astype(dtype) for a in arrays]


# (name, b, h, s, d, chain, cache-bytes, keys): one f64 score row is 8 * keys
# bytes; 96 bytes = 1.5 rows of 8 keys (blocks of 1), 192 = 3 rows (8 rows
# in blocks of 2), 160 of 10 keys = 2 rows (7 rows: 3 blocks of 2 and a
# tail of 1).
CASES = [("scale_mask", 1, 2, 8, 4, "scale_mask", 192, None),
         ("causal", 2, 1, 8, 4, "causal", 96, None),
         ("softcap", 1, 2, 8, 4, "softcap", 192, None),
         ("ragged_2d", 0, 0, 7, 3, "scale_mask", 160, 10)]


@run
def interpreter():
    for name, b, h, s, d, chain, budget, sk in CASES:
        for dtype, elt in ((np.float64, "f64"), (np.float32, "f32")):
            text = attention(b, h, s, d, elt, chain, sk=sk)
            module = fused(text, budget // (2 if elt == "f32" else 1))
            assert "scf.for" in str(module), name
            args = inputs(b, h, s, d, dtype, sk=sk)
            want = interpret(parse(text), "main", *args)[0]
            got = interpret(module, "main", *args)[0]
            assert got.dtype == want.dtype, (name, elt)
            tol = 1e-14 if elt == "f64" else 1e-6
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
        print(name, "ok")
# CHECK-LABEL: TEST: interpreter
# CHECK: scale_mask ok
# CHECK: causal ok
# CHECK: softcap ok
# CHECK: ragged_2d ok


@run
def compiled():
    # f32, 2 x 4 heads of 64 x 128 (32 KiB of scores each): blocks of 16
    # rows at 8192 bytes, a ragged 100-row case at 12288 bytes (24 rows).
    for name, s, budget in (("divisor", 64, 8192), ("ragged", 100, 12288)):
        text = attention(2, 4, s, 16, "f32", "scale_mask", sk=128)
        module = fused(text, budget)
        assert "scf.for" in str(module)
        args = inputs(2, 4, s, 16, np.float32, sk=128)
        want = interpret(parse(text), "main", *args)[0]
        got_fused = gradir.compile(module, target="cpu")["main"](*args)
        got_plain = gradir.compile(parse(text), target="cpu")["main"](*args)
        again = gradir.compile(module, target="cpu")["main"](*args)
        np.testing.assert_allclose(got_fused, want, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(got_fused, got_plain, rtol=2e-5, atol=2e-6)
        assert np.array_equal(got_fused, again)
        print(name, "ok")
# CHECK-LABEL: TEST: compiled
# CHECK: divisor ok
# CHECK: ragged ok


@run
def gradient():
    # float64 central differences of the fused program's scalar target
    # through the interpreter (the adjoint is also compiled at exit by the
    # oracle), and the unfused program's gradient, for q, k, v and the mask.
    for name, b, h, s, d, chain, budget, sk in CASES:
        loss = attention(b, h, s, d, "f64", chain, loss=True, sk=sk)
        args = inputs(b, h, s, d, np.float64, loss=True, sk=sk)
        wrt = [0, 1, 2] if chain == "causal" else [0, 1, 2, 3]
        text = print_module(fused(loss, budget))
        assert "scf.for" in text
        got = check_gradient(text, args, wrt=wrt, rtol=1e-6, atol=1e-8)
        plain = interpret(gradient_module(loss, wrt=wrt), "main_adjoint", *args)[1:]
        for g, p in zip(got, plain):
            np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-13)
        # split=true (the PyTorch drop-in's form): @main_fwd's saved values
        # into @main_bwd give the same gradients
        split = gradient_module(text, wrt=wrt, mode="vjp", split=True)
        saved = interpret(split, "main_fwd", *args)[1:]
        back = interpret(split, "main_bwd", *saved, np.float64(1.0))
        for g, p in zip(back, plain):
            np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-13)
        print(name, "ok")
# CHECK-LABEL: TEST: gradient
# CHECK: scale_mask ok
# CHECK: causal ok
# CHECK: softcap ok
# CHECK: ragged_2d ok


@run
def imported():
    # What torch.export gives: SDPA with is_causal (a constant mask and
    # where), nn.MultiheadAttention (reshapes around SDPA's ops), and
    # attention written with @, a division and torch.softmax(dim=-1).
    import torch

    class Sdpa(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    class HandWritten(torch.nn.Module):
        def forward(self, q, k, v):
            s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
            return torch.softmax(s, dim=-1) @ v

    class Mha(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    from gradir.frontends.torch import import_module
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 32, 8) for _ in range(3))
    x = torch.randn(1, 32, 16)
    mha = Mha().eval()
    for name, model, example in (("sdpa_causal", Sdpa(), (q, k, v)), ("mha", mha, (x,)),
                                 ("hand_written", HandWritten(), (q, k, v))):
        module = import_module(model, example)
        text = print_module(module)
        run_pipeline(module, "builtin.module(rlx-fuse-attention{cache-bytes=512})")
        assert "scf.for" in print_module(module), name
        args = [t.numpy() for t in example] + [p.detach().numpy()
                                               for p in model.parameters()]
        want = model(*example).detach().numpy()
        got = interpret(module, "main", *args)[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, interpret(parse(text), "main", *args)[0],
                                   rtol=1e-6, atol=1e-7)
        print(name, "ok")
# CHECK-LABEL: TEST: imported
# CHECK: sdpa_causal ok
# CHECK: mha ok
# CHECK: hand_written ok


@run
def deterministic():
    text = attention(1, 2, 8, 4, "f32", "causal")
    outs = {print_module(fused(text, 96)) for _ in range(3)}
    assert len(outs) == 1
    print("same IR")
# CHECK-LABEL: TEST: deterministic
# CHECK: same IR
