"""Deep layer chains in rlx text, for the gradient pass's scaling tests and
``bench/gradient_pass.py``: each is ``@main`` returning ``sum`` of the last
layer, so the default ``rlx-gradient`` differentiates it as it stands.

  ``dense_tanh(n)``        ``h = tanh(h @ w_i + b_i)``, weights per layer
  ``residual(n)``          ``h = tanh(h) * c + x``: x and the constant c read by every layer
  ``shared(n)``            ``h = tanh(h @ w)``: one weight read by every layer
  ``shared_transposed(n)`` ``h = tanh(transpose(h @ w))`` on square tensors
"""

from __future__ import annotations

__all__ = ["dense_tanh", "residual", "shared", "shared_transposed", "CHAINS"]


def _chain(args: list[str], prelude: list[str], layer, n: int, t: str, elt: str) -> str:
    """``@main(args)``: the prelude, then ``layer(i, cur) -> (lines, result)``
    n times, then the sum of the last result."""
    lines = [f"func.func @main({', '.join(args)}) -> tensor<{elt}> {{", *prelude]
    cur = "%x"
    for i in range(n):
        body, cur = layer(i, cur)
        lines += body
    lines.append(f'  %s = "rlx.sum"({cur}) : ({t}) -> tensor<{elt}>')
    lines.append(f"  return %s : tensor<{elt}>\n}}")
    return "\n".join(lines)


def dense_tanh(n: int, batch: int = 4, width: int = 16, elt: str = "f32") -> str:
    t, w, b = (f"tensor<{batch}x{width}x{elt}>", f"tensor<{width}x{width}x{elt}>",
               f"tensor<{width}x{elt}>")
    args = [f"%x: {t}"] + [f"%w{i}: {w}, %b{i}: {b}" for i in range(n)]
    return _chain(args, [], lambda i, cur: ([
        f'  %m{i} = "rlx.matmul"({cur}, %w{i}) : ({t}, {w}) -> {t}',
        f'  %a{i} = "rlx.add"(%m{i}, %b{i}) : ({t}, {b}) -> {t}',
        f'  %h{i} = "rlx.tanh"(%a{i}) : ({t}) -> {t}'], f"%h{i}"), n, t, elt)


def residual(n: int, batch: int = 4, width: int = 16) -> str:
    t = f"tensor<{batch}x{width}xf32>"
    return _chain([f"%x: {t}"], [f"  %c = arith.constant dense<5.000000e-01> : {t}"],
                  lambda i, cur: ([
                      f'  %t{i} = "rlx.tanh"({cur}) : ({t}) -> {t}',
                      f'  %m{i} = "rlx.multiply"(%t{i}, %c) : ({t}, {t}) -> {t}',
                      f'  %h{i} = "rlx.add"(%m{i}, %x) : ({t}, {t}) -> {t}'], f"%h{i}"),
                  n, t, "f32")


def shared(n: int, batch: int = 4, width: int = 16) -> str:
    t, w = f"tensor<{batch}x{width}xf32>", f"tensor<{width}x{width}xf32>"
    return _chain([f"%x: {t}", f"%w: {w}"], [], lambda i, cur: ([
        f'  %m{i} = "rlx.matmul"({cur}, %w) : ({t}, {w}) -> {t}',
        f'  %h{i} = "rlx.tanh"(%m{i}) : ({t}) -> {t}'], f"%h{i}"), n, t, "f32")


def shared_transposed(n: int, width: int = 16) -> str:
    s = f"tensor<{width}x{width}xf32>"
    return _chain([f"%x: {s}", f"%w: {s}"], [], lambda i, cur: ([
        f'  %m{i} = "rlx.matmul"({cur}, %w) : ({s}, {s}) -> {s}',
        f'  %p{i} = "rlx.permute_dims"(%m{i}) : ({s}) -> {s}',
        f'  %h{i} = "rlx.tanh"(%p{i}) : ({s}) -> {s}'], f"%h{i}"), n, s, "f32")


CHAINS = {"dense": dense_tanh, "residual": residual, "shared": shared,
          "shared_transposed": shared_transposed}
