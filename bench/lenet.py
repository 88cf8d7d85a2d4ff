"""LeNet-5 in rlx for bench/cpu.py: conv 5x5 (1->6) relu max-pool 2, conv 5x5
(6->16) relu max-pool 2, dense 256-120-84-10 (relu between), log_softmax +
nll_loss (mean); ``lenet_module(batch)`` has ``@main_adjoint`` (rlx-gradient)
returning the loss and the ten parameter gradients.  Also the same step in
PyTorch eager and JAX for the comparison (float32, 28x28 inputs)."""

from __future__ import annotations

import numpy as np

SHAPES = [(6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,), (256, 120), (120,), (120, 84), (84,),
          (84, 10), (10,)]


def _t(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def lenet_text(batch: int) -> str:
    b = batch
    args = ", ".join(f"%p{i}: {_t(s)}" for i, s in enumerate(SHAPES))
    pool = "pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>"
    return f"""
func.func @main(%x: {_t((b, 1, 28, 28))}, %y: tensor<{b}xi64>, {args}) -> tensor<f32> {{
  %c1 = "rlx.conv2d"(%x, %p0) {{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : ({_t((b, 1, 28, 28))}, {_t((6, 1, 5, 5))}) -> {_t((b, 6, 24, 24))}
  %b1 = "rlx.reshape"(%p1) : ({_t((6,))}) -> {_t((1, 6, 1, 1))}
  %a1 = "rlx.add"(%c1, %b1) : ({_t((b, 6, 24, 24))}, {_t((1, 6, 1, 1))}) -> {_t((b, 6, 24, 24))}
  %r1 = "rlx.relu"(%a1) : ({_t((b, 6, 24, 24))}) -> {_t((b, 6, 24, 24))}
  %m1 = "rlx.max_pool2d"(%r1) {{{pool}}} : ({_t((b, 6, 24, 24))}) -> {_t((b, 6, 12, 12))}
  %c2 = "rlx.conv2d"(%m1, %p2) {{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : ({_t((b, 6, 12, 12))}, {_t((16, 6, 5, 5))}) -> {_t((b, 16, 8, 8))}
  %b2 = "rlx.reshape"(%p3) : ({_t((16,))}) -> {_t((1, 16, 1, 1))}
  %a2 = "rlx.add"(%c2, %b2) : ({_t((b, 16, 8, 8))}, {_t((1, 16, 1, 1))}) -> {_t((b, 16, 8, 8))}
  %r2 = "rlx.relu"(%a2) : ({_t((b, 16, 8, 8))}) -> {_t((b, 16, 8, 8))}
  %m2 = "rlx.max_pool2d"(%r2) {{{pool}}} : ({_t((b, 16, 8, 8))}) -> {_t((b, 16, 4, 4))}
  %f = "rlx.reshape"(%m2) : ({_t((b, 16, 4, 4))}) -> {_t((b, 256))}
  %d1 = "rlx.matmul"(%f, %p4) : ({_t((b, 256))}, {_t((256, 120))}) -> {_t((b, 120))}
  %e1 = "rlx.add"(%d1, %p5) : ({_t((b, 120))}, {_t((120,))}) -> {_t((b, 120))}
  %h1 = "rlx.relu"(%e1) : ({_t((b, 120))}) -> {_t((b, 120))}
  %d2 = "rlx.matmul"(%h1, %p6) : ({_t((b, 120))}, {_t((120, 84))}) -> {_t((b, 84))}
  %e2 = "rlx.add"(%d2, %p7) : ({_t((b, 84))}, {_t((84,))}) -> {_t((b, 84))}
  %h2 = "rlx.relu"(%e2) : ({_t((b, 84))}) -> {_t((b, 84))}
  %d3 = "rlx.matmul"(%h2, %p8) : ({_t((b, 84))}, {_t((84, 10))}) -> {_t((b, 10))}
  %e3 = "rlx.add"(%d3, %p9) : ({_t((b, 10))}, {_t((10,))}) -> {_t((b, 10))}
  %lp = "rlx.log_softmax"(%e3) {{axis = array<i64: -1>}} : ({_t((b, 10))}) -> {_t((b, 10))}
  %loss = "rlx.nll_loss"(%lp, %y) {{reduction = "mean"}} : ({_t((b, 10))}, tensor<{b}xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}}"""


def lenet_module(batch: int):
    import gradir
    m = gradir.parse(lenet_text(batch))
    wrt = ",".join(str(i) for i in range(2, 2 + len(SHAPES)))
    gradir.run_pipeline(m, f"builtin.module(rlx-gradient{{func=main wrt={wrt}}})")
    return m


def lenet_inputs(batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    params = []
    for s in SHAPES:
        fan_in = int(np.prod(s[1:])) if len(s) == 4 else s[0]
        params.append((rng.standard_normal(s) / np.sqrt(fan_in if len(s) > 1 else 10))
                      .astype(np.float32))
    return x, y, params


def torch_step(torch):
    F = torch.nn.functional

    def step(tx, ty, tp):
        h = F.max_pool2d(torch.relu(F.conv2d(tx, tp[0], tp[1])), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, tp[2], tp[3])), 2).reshape(tx.shape[0], 256)
        h = torch.relu(h @ tp[4] + tp[5])
        h = torch.relu(h @ tp[6] + tp[7])
        loss = F.nll_loss(torch.log_softmax(h @ tp[8] + tp[9], -1), ty)
        return (loss,) + torch.autograd.grad(loss, tp)
    return step


def jax_step(jax):
    jnp, lax = jax.numpy, jax.lax

    def conv(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y + b[None, :, None, None]

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss_fn(ps, x, y):
        h = pool(jax.nn.relu(conv(x, ps[0], ps[1])))
        h = pool(jax.nn.relu(conv(h, ps[2], ps[3]))).reshape(x.shape[0], 256)
        h = jax.nn.relu(h @ ps[4] + ps[5])
        h = jax.nn.relu(h @ ps[6] + ps[7])
        logp = jax.nn.log_softmax(h @ ps[8] + ps[9], -1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], 1))
    return jax.jit(jax.value_and_grad(loss_fn))
