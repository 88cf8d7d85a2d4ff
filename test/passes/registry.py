# RUN: %PYTHON %s | FileCheck %s
# Every registry key is the pass's own name, every pass is a frozen
# dataclass with a description, and its module is the snake_case name.

import dataclasses

from gradir.passes.registry import PASSES, get_pass_class


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


@run
def test_names_match():
    for key in sorted(PASSES):
        cls = get_pass_class(key)
        assert cls.name == key, (key, cls.name)
        assert cls.__module__.rsplit(".", 1)[-1] == key.replace("-", "_"), cls.__module__
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, key
        assert cls.description(), key
        print(key, "ok")
# CHECK-LABEL: TEST: test_names_match
# CHECK: gpu-check-host ok
# CHECK: gpu-device-buffers ok
# CHECK: gpu-fold-transposes ok
# CHECK: gpu-fold-zero-init ok
# CHECK: gpu-kernel-attributes ok
# CHECK: gpu-linalg-to-kernels ok
# CHECK: gpu-persistent-buffers ok
# CHECK: gpu-rlx-to-nvvm ok
# CHECK: rlx-cse ok
# CHECK: rlx-dce ok
# CHECK: rlx-early-dealloc ok
# CHECK: rlx-lower-to-llvm ok
# CHECK: rlx-math-approx ok
# CHECK: rlx-memory-report ok
# CHECK: rlx-simplify-gradient ok
# CHECK: rlx-to-linalg ok
# CHECK: rlx-verify ok
