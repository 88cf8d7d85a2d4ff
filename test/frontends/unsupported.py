# RUN: %PYTHON %s | FileCheck %s
# Refusals: an aten op without a mapping, or one used in a way rlx cannot
# express, is an UnsupportedOpError naming the aten op and the model's source
# line (nothing is skipped silently).

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from torch_helpers import run  # noqa: E402

from gradir.frontends.torch import (TorchImportError, UnsupportedOpError,  # noqa: E402
                                    import_module, supported_ops)


def refuse(model, *args):
    try:
        import_module(model, args)
    except UnsupportedOpError as err:
        assert isinstance(err, TorchImportError)
        print(f"op={err.op} source={os.path.basename(err.source.split(':')[0])}:"
              f"{err.source.split(':')[1].split()[0]}")
        print(err)
        return
    raise AssertionError("not refused")


class Cumprod(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.cumprod(y, 1)


@run
def test_unmapped_op():
    refuse(Cumprod(), torch.randn(2, 3))
# CHECK-LABEL: TEST: test_unmapped_op
# CHECK: op=aten.cumprod.default source=unsupported.py:{{[0-9]+}}
# CHECK-NEXT: aten.cumprod.default: no rlx mapping for this aten op (gradir.frontends.torch.supported_ops() lists the mapped ones)
# CHECK-NEXT: at {{.*}}unsupported.py:{{[0-9]+}} in forward: return torch.cumprod(y, 1)


class Sorted(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 3), Sorter())

    def forward(self, x):
        return self.body(x)


class Sorter(nn.Module):
    def forward(self, x):
        return torch.sort(x, 1).values


@run
def test_module_path():
    refuse(Sorted(), torch.randn(2, 3))
# CHECK-LABEL: TEST: test_module_path
# CHECK: op=aten.sort.default source=unsupported.py:{{[0-9]+}}
# CHECK: at {{.*}}unsupported.py:{{[0-9]+}} in forward: return torch.sort(x, 1).values
# CHECK-NEXT: in module body.1 (Sorter)


@run
def test_dropout_in_training():
    refuse(nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).train(), torch.randn(2, 3))
# CHECK-LABEL: TEST: test_dropout_in_training
# CHECK: op=aten.native_dropout.default source=dropout.py
# CHECK-NEXT: aten.native_dropout.default: dropout with p=0.5 in training mode is random: import the model in eval mode (model.eval()) or with p=0
# CHECK-NEXT: at {{.*}}dropout.py:{{[0-9]+}} in forward: return F.dropout(
# CHECK-NEXT: in module 1 (Dropout)


class IdsPlusOne(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 2)

    def forward(self, ids):
        return self.emb(ids + 1)


class IdsHalved(IdsPlusOne):
    def forward(self, ids):
        return self.emb(torch.div(ids, 2, rounding_mode="floor"))


@run
def test_integer_arithmetic():
    # integer add/sub/mul/sum go through f64 (exact below 2**53); a floor
    # division has no rlx op
    module = import_module(IdsPlusOne(), (torch.tensor([1, 2]),))
    print(str(module).count("rlx.astype"))
    refuse(IdsHalved(), torch.tensor([1, 2]))
# CHECK-LABEL: TEST: test_integer_arithmetic
# CHECK-NEXT: 2
# CHECK: op=aten.div.Tensor_mode source=unsupported.py:{{[0-9]+}}
# CHECK-NEXT: aten.div.Tensor_mode: division with rounding_mode='floor' has no rlx mapping


class PoolIndices(nn.Module):
    def forward(self, x):
        values, indices = F.max_pool2d(x, 2, return_indices=True)
        return values * indices


@run
def test_unavailable_result():
    # (x.max(1)'s indices are imported: argmax)
    refuse(PoolIndices(), torch.randn(1, 2, 4, 4))
# CHECK-LABEL: TEST: test_unavailable_result
# CHECK: op=aten.mul.Tensor source=unsupported.py:{{[0-9]+}}
# CHECK-NEXT: aten.mul.Tensor: uses a result of aten.max_pool2d_with_indices.default that is not imported: pooling indices have no rlx mapping


@run
def test_attention_dropout():
    refuse(nn.MultiheadAttention(4, 2, dropout=0.5, batch_first=True).train(),
           torch.randn(1, 3, 4), torch.randn(1, 3, 4), torch.randn(1, 3, 4))
# CHECK-LABEL: TEST: test_attention_dropout
# CHECK: aten.native_dropout.default: dropout with p=0.5 in training mode is random


@run
def test_supported_ops():
    ops = supported_ops()
    for name in ("aten.linear.default", "aten.conv2d.default", "aten.batch_norm.default",
                 "aten.scaled_dot_product_attention.default", "aten.gru_cell.default",
                 "aten.lstm_cell.default", "aten.cross_entropy_loss.default"):
        assert name in ops, name
    print(len(ops) > 150)
# CHECK-LABEL: TEST: test_supported_ops
# CHECK: True


@run
def test_not_a_module():
    try:
        import_module(lambda x: x, (torch.randn(2),))
    except TorchImportError as err:
        print(err)
# CHECK-LABEL: TEST: test_not_a_module
# CHECK: expected a torch.nn.Module, got function



class WithGenerator(nn.Module):
    def forward(self, x):
        g = torch.Generator().manual_seed(1)
        return (x * torch.randn(x.shape, generator=g)).sum()


@run
def test_custom_object():
    # was "unsupported input obj_lifted_custom_0 of kind CUSTOM_OBJ"
    try:
        import_module(WithGenerator(), (torch.randn(3),))
    except TorchImportError as err:
        print(err)
    else:
        raise AssertionError("not refused")
# CHECK-LABEL: TEST: test_custom_object
# CHECK-NEXT: the exported graph takes an object (obj_lifted_custom_0, such as a torch.Generator made in forward) that is not a tensor: not imported; create it outside the model or pass its tensors as inputs
