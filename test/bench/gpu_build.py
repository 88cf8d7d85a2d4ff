# RUN: rm -rf %t && mkdir -p %t/fake
# RUN: %PYTHON %gradir_src/bench/gpu.py --build %t/bench --quick | FileCheck %s --check-prefix=BUILD
# RUN: %PYTHON %s %t/bench | FileCheck %s
# RUN: cc -shared -fPIC -O1 -o %t/fake/libcuda.so.1 -Wl,-soname,libcuda.so.1 %gradir_src/test/conversion/gpu/Inputs/fake_cuda.c
# RUN: env LD_LIBRARY_PATH=%t/fake %PYTHON %gradir_src/bench/gpu.py --run %t/bench --torch-device cpu --no-compile --repeat 1 --out %t/raw.json --json %t/gpu.json | FileCheck %s --check-prefix=GPU
# RUN: %PYTHON %s %t/bench %t/gpu.json | FileCheck %s --check-prefix=TABLES
# bench/gpu.py cannot rot: its build half (--quick: small shapes, a few
# cases of each numeric suite) compiles and exports every workload, the
# MLP, the GEMM, the ops suites, the CIFAR ResNet step of bench/cnn.py and
# the Transformer encoder step, with their launch counts, inputs and
# weights, the GEMM and both steps also with precision="tf32" and
# compute_dtype="bf16" (bench/gpu_precision.py); its run half then goes through every part on a fake CUDA driver
# (test/conversion/gpu/Inputs/fake_cuda.c: kernels launched but not run,
# so the numbers are junk) with PyTorch on the CPU, and its --json tables
# render into docs/performance.md's GPU section.
# BUILD: ops
# BUILD: mlp
# BUILD: mlp64_resident.so: {{.*}}; @main_adjoint {{[0-9]+}} launches
# BUILD: gemm
# BUILD: gemm512_tf32.so: {{.*}}, precision=tf32, {{.*}}; @gemm_sum {{[0-9]+}} launches
# BUILD: gemm512_bf16.so: {{.*}}, compute_dtype=bf16, {{.*}}; @gemm_sum {{[0-9]+}} launches
# BUILD: gemm512_bf16_program.so: {{.*}}; @gemm_sum {{[0-9]+}} launches
# BUILD: resnet
# BUILD: resnet.so: {{.*}}; @main_adjoint {{[0-9]+}} launches
# BUILD: resnet_tf32.so: {{.*}}, precision=tf32, {{.*}}; @main_adjoint {{[0-9]+}} launches
# BUILD: resnet_bf16.so: {{.*}}, compute_dtype=bf16, {{.*}}; @main_adjoint {{[0-9]+}} launches
# BUILD: transformer
# BUILD: transformer.so: {{.*}}; @main_adjoint {{[0-9]+}} launches
# BUILD: transformer_bf16.so: {{.*}}, compute_dtype=bf16, {{.*}}; @main_adjoint {{[0-9]+}} launches
# BUILD: failed parts: none
# GPU: info
# GPU: ops
# GPU: elementwise: 4 cases
# GPU: mlp
# GPU: mlp64: gradir (numpy in/out)
# GPU: gemm512: gradir sum(a@b)
# GPU: gemm512 fp32: gradir sum(a@b) {{.*}} (target >= 0.9); errors vs float64 gradir
# GPU: gemm512 tf32: gradir sum(a@b) {{.*}} (target >= 0.8); errors vs float64 gradir {{.*}} (bound 0.01)
# GPU: gemm512 bf16: gradir sum(a@b) {{.*}}, autocast (a@b).sum() {{.*}} (target >= 0.7); errors vs float64 gradir {{.*}}, autocast {{.*}} (bound 0.03)
# GPU: gemm512 bf16 program: gradir sum(a@b)
# GPU: resnet: loss gradir
# GPU: resnet: gradir {{.*}} ms ({{[0-9]+}} launches per call; inputs resident too: {{.*}} ms), torch eager fp32 {{.*}} ms, tf32
# GPU: resnet fp32: gradir {{.*}} ms, torch eager fp32 {{.*}} ms
# GPU: resnet tf32: gradir {{.*}} ms, torch eager tf32 {{.*}} ms {{.*}} (bound 0.01); {{[0-9]+}} launches per call
# GPU: resnet bf16: gradir {{.*}} ms, torch eager bf16 autocast {{.*}} ms {{.*}} as one vector gradir {{.*}} (bound 0.03); {{[0-9]+}} launches per call
# GPU: transformer: loss gradir
# GPU: transformer: gradir {{.*}} ms ({{[0-9]+}} launches per call; inputs resident too: {{.*}} ms), torch eager fp32
# GPU: transformer bf16: gradir {{.*}} ms, torch eager bf16 autocast {{.*}} ms
# GPU: | resnet step vs torch eager fp32 |
# GPU: | resnet step, inputs resident too, vs torch eager fp32 |
# GPU: | transformer step vs torch eager tf32 |
# GPU: | gemm512 bf16 vs torch.matmul on bf16 operands |
# GPU: | resnet step bf16 vs torch eager bf16 autocast |
# GPU: | transformer step tf32 vs torch eager tf32 |

import json
import os
import sys

d = sys.argv[1]
meta = json.load(open(os.path.join(d, "meta.json")))
if len(sys.argv) == 2:
    files = sorted(os.listdir(d))
    print("parts:", meta["parts"], "errors:", meta["build_errors"])
    runtime = ("libmlir_cuda_runtime.so", "libLLVM.so")   # the runtime (and its stand-in)
    print("libraries:", [f for f in files if f.endswith(".so") and f not in runtime],
          "runtime:", "libmlir_cuda_runtime.so" in files, meta["cuda_runtime"] in ("gradir", "mlir"))
    print("data:", [f for f in files if f.endswith(".npz")])
    print("gemm precisions:", meta["gemm_precisions"])
    for name in ("resnet", "transformer"):
        m = meta["models"][name]
        count = meta["launches"][name]["main_adjoint"]
        print(name, m["config"], len(m["parameters"]), "parameters; launches",
              count["launches"] == sum(count["kinds"].values()) > 0,
              "copies", count["memcpy"] > 0)
        import numpy as np
        data = np.load(os.path.join(d, name + ".npz"))
        print(" ", sorted(k for k in data.files if not k.startswith("state."))[:2],
              all("state." + p in data.files for p in m["parameters"]))
        print("  precisions:", m["precisions"], m["precision_errors"])
    total = sum(os.path.getsize(os.path.join(d, f)) for f in files)
    print("size under 8 MiB:", total < 8 * 2 ** 20)
# CHECK: parts: ['info', 'ops', 'mlp', 'gemm', 'resnet', 'transformer'] errors: {}
# CHECK-NEXT: libraries: ['gemm512.so', 'gemm512_bf16.so', 'gemm512_bf16_program.so', 'gemm512_tf32.so', 'mlp64.so', 'mlp64_resident.so', 'ops_numeric_elementwise_0.so', 'ops_numeric_gradient_0.so', 'ops_numeric_nn_0.so', 'ops_numeric_shape_reduce_0.so', 'resnet.so', 'resnet_bf16.so', 'resnet_inputs_resident.so', 'resnet_tf32.so', 'transformer.so', 'transformer_bf16.so', 'transformer_inputs_resident.so', 'transformer_tf32.so'] runtime: True True
# CHECK-NEXT: data: ['ops_numeric_elementwise_0.npz', 'ops_numeric_gradient_0.npz', 'ops_numeric_nn_0.npz', 'ops_numeric_shape_reduce_0.npz', 'resnet.npz', 'transformer.npz']
# CHECK-NEXT: gemm precisions: {'libraries': {'fp32': 'gemm512', 'tf32': 'gemm512_tf32', 'bf16': 'gemm512_bf16', 'bf16 program': 'gemm512_bf16_program'}, 'errors': {}}
# CHECK-NEXT: resnet {'batch': 4, 'image': 8} 19 parameters; launches True copies True
# CHECK-NEXT:   ['x', 'y'] True
# CHECK-NEXT:   precisions: {'fp32': 'resnet.so', 'tf32': 'resnet_tf32.so', 'bf16': 'resnet_bf16.so'} {}
# CHECK-NEXT: transformer {'batch': 2, 'seq': 8, 'd_model': 32, 'heads': 2, 'ff': 64} 14 parameters; launches True copies True
# CHECK-NEXT:   ['x', 'y'] True
# CHECK-NEXT:   precisions: {'fp32': 'transformer.so', 'tf32': 'transformer_tf32.so', 'bf16': 'transformer_bf16.so'} {}
# CHECK-NEXT: size under 8 MiB: True
else:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    import render_performance
    data = json.load(open(sys.argv[2]))
    print("tables:", [t["title"].split(":")[0][:40] for t in data["tables"]])
    page = render_performance.render({"gpu": data})
    print("rendered:", "### training steps" in page, "| resnet step |" in page)
    print("readme:", "GPU transformer step" in render_performance.readme_table({"gpu": data}))
# TABLES: tables: ['every case of the numeric conversion sui', 'gradir against PyTorch CUDA eager, float', 'training steps (loss and every parameter', 'GEMM 512^3 by precision', 'training steps by precision']
# TABLES-NEXT: rendered: True True
# TABLES-NEXT: readme: True
