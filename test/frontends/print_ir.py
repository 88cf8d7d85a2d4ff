# RUN: %PYTHON %s | FileCheck %s
# The imported module of a small classifier: @main(inputs..., parameters...)
# with the parameter names as argument attributes (and name locations), the
# labels an integer tensor, BatchNorm's running statistics as constants, one
# rlx op per layer, locations at the model's source lines.

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

import gradir  # noqa: E402
from gradir.frontends.torch import import_module  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(2 * 2 * 2, 3)

    def forward(self, x, labels):
        h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        logits = self.fc(h.flatten(1))
        return F.cross_entropy(logits, labels), logits


@run
def test_print():
    module = import_module(Net().eval(), (torch.randn(4, 1, 4, 4), torch.tensor([0, 2, 1, 1])))
    print(gradir.print_module(module))
    fn = module.body.operations[0]
    conv = next(op for op in fn.regions[0].blocks[0].operations if op.name == "rlx.conv2d")
    print("conv2d location:", conv.location)
    print("argument locations:", [str(a.location) for a in fn.regions[0].blocks[0].arguments][:3])
# CHECK-LABEL: TEST: test_print
# CHECK-LABEL: func.func @main(
# CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x1x4x4xf32> {gradir.name = "x"}
# CHECK-SAME: %[[Y:[a-z0-9]+]]: tensor<4xi64> {gradir.name = "labels"}
# CHECK-SAME: %[[CW:[a-z0-9]+]]: tensor<2x1x3x3xf32> {gradir.name = "conv.weight"}
# CHECK-SAME: %[[CB:[a-z0-9]+]]: tensor<2xf32> {gradir.name = "conv.bias"}
# CHECK-SAME: %[[BW:[a-z0-9]+]]: tensor<2xf32> {gradir.name = "bn.weight"}
# CHECK-SAME: %[[BB:[a-z0-9]+]]: tensor<2xf32> {gradir.name = "bn.bias"}
# CHECK-SAME: %[[FW:[a-z0-9]+]]: tensor<3x8xf32> {gradir.name = "fc.weight"}
# CHECK-SAME: %[[FB:[a-z0-9]+]]: tensor<3xf32> {gradir.name = "fc.bias"})
# CHECK-SAME: -> (tensor<f32>, tensor<4x3xf32>)
# CHECK: %[[CONV:.*]] = "rlx.conv2d"(%[[X]], %[[CW]]) {{{.*}}padding = array<i64: 1, 1, 1, 1>
# CHECK: "rlx.add"(%[[CONV]],
# CHECK: arith.constant dense<0.000000e+00> : tensor<2xf32>
# CHECK: arith.constant dense<1.000000e+00> : tensor<2xf32>
# CHECK: "rlx.rsqrt"
# CHECK: "rlx.relu"
# CHECK: "rlx.max_pool2d"
# CHECK: "rlx.reshape"
# CHECK: "rlx.permute_dims"(%[[FW]])
# CHECK: %[[LOGITS:.*]] = "rlx.add"({{.*}}, %[[FB]])
# CHECK: %[[LOGP:.*]] = "rlx.log_softmax"(%[[LOGITS]]) {axis = array<i64: 1>}
# CHECK: %[[LOSS:.*]] = "rlx.nll_loss"(%[[LOGP]], %[[Y]]) {reduction = "mean"}
# CHECK: return %[[LOSS]], %[[LOGITS]]
# CHECK: conv2d location: loc("conv2d"("{{.*}}print_ir.py":{{[0-9]+}}:0))
# CHECK: argument locations: ['loc("x")', 'loc("labels")', 'loc("conv.weight")']
