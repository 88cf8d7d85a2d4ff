# RUN: %PYTHON %s | FileCheck %s
# Every differentiable op of the rlx contract (DESIGN.md) has a VJP rule.
# Not listed: compare and create ops (NON_DIFFERENTIABLE), tuple /
# tuple_get_item (the sweep handles them) and the gradient-helper ops
# conv2d_transpose / *_pool2d_backward (no second-order rules yet).

from gradir.autodiff.rules import NON_DIFFERENTIABLE, VJP_RULES, differentiable_ops

CONTRACT = """
negative exp log sqrt rsqrt sin cos tanh sigmoid abs relu silu gelu erf square
add subtract multiply divide power maximum minimum
where matmul
permute_dims reshape broadcast_to expand_dims squeeze flatten concat split strided_slice take triu
sum mean max min prod variance cumsum
softmax log_softmax cross_entropy_with_logits nll_loss conv2d max_pool2d avg_pool2d
layer_norm rms_norm
full astype collapse_sum_to
""".split()

NO_GRADIENT = """
equal not_equal less less_equal greater greater_equal zeros ones zeros_like ones_like
""".split()

registered = set(differentiable_ops())
missing = [op for op in CONTRACT if f"rlx.{op}" not in registered]
for op in missing:
    print(f"missing VJP rule: rlx.{op}")
print(f"differentiable ops: {len(CONTRACT) - len(missing)}/{len(CONTRACT)}")
assert not missing, missing
print("registry complete")
# CHECK: differentiable ops: [[N:[0-9]+]]/[[N]]
# CHECK: registry complete

bad = [op for op in NO_GRADIENT if f"rlx.{op}" not in NON_DIFFERENTIABLE or f"rlx.{op}" in VJP_RULES]
assert not bad, bad
print("non-differentiable ok")
# CHECK: non-differentiable ok

# Forward mode: every op with a VJP rule has a JVP rule beside it, and so
# does max_pool2d_backward (linear in its output gradient: forward over
# reverse differentiates max-pool networks twice).
from gradir.autodiff.rules import JVP_RULES, forward_differentiable_ops  # noqa: E402

forward = set(forward_differentiable_ops())
missing = sorted((registered | {"rlx.max_pool2d_backward"}) - forward)
for op in missing:
    print(f"missing JVP rule: {op}")
assert not missing, missing
print(f"JVP rules: {len(forward)}")
bad = [op for op in NO_GRADIENT if f"rlx.{op}" in JVP_RULES]
assert not bad, bad
print("forward registry complete")
# CHECK: JVP rules: [[M:[0-9]+]]
# CHECK: forward registry complete
