// REQUIRES: ptxas
// The wgmma kernels assemble with ptxas (format=bin) for sm_90a, the
// target chip=sm_90 gives their gpu.module; the other kernels stay sm_90.
// x and f32_nt's w have K innermost in 16-byte rows: copied with cp.async
// into a multi-stage pipeline (f32_nt: both operands).
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=bin precision=tf32' | FileCheck %s
// No compile timings in the objects (gpu-strip-compile-times): the same input prints the same module.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=bin precision=tf32' | FileCheck %s --check-prefix=DET
// DET-NOT: TimeInMs
// DET: gpu.binary @f32_matmul_kernels_sm90a
// DET-NOT: TimeInMs
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=bin compute-dtype=bf16' | FileCheck %s
// The 128x128 tiles (two warpgroups, m64n128):
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=bin precision=tf32 sm-count=1' | FileCheck %s

// CHECK: gpu.binary @f32_matmul_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">, {{.*}}bin = "\7FELF
// CHECK: gpu.binary @f32_nt_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">, {{.*}}bin = "\7FELF
// CHECK: gpu.binary @f16_matmul_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">, {{.*}}bin = "\7FELF
// CHECK: gpu.binary @bf16_tn_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">, {{.*}}bin = "\7FELF
// CHECK: gpu.binary @sum_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF

func.func @f32_matmul(%x: tensor<136x72xf32>, %w: tensor<72x140xf32>) -> tensor<136x140xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<136x72xf32>, tensor<72x140xf32>) -> tensor<136x140xf32>
  return %y : tensor<136x140xf32>
}

func.func @f32_nt(%x: tensor<40x256xf32>, %w: tensor<48x256xf32>) -> tensor<40x48xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<48x256xf32>) -> tensor<256x48xf32>
  %y = "rlx.matmul"(%x, %wt) : (tensor<40x256xf32>, tensor<256x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @f16_matmul(%x: tensor<40x64xf16>, %w: tensor<64x48xf16>) -> tensor<40x48xf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x64xf16>, tensor<64x48xf16>) -> tensor<40x48xf16>
  return %y : tensor<40x48xf16>
}

// f16_matmul's w (N innermost) and both operands of bf16_tn (x stored K x
// M): MN-major tiles read with imm-trans-a / imm-trans-b (wgmma_layout.py)
func.func @bf16_tn(%x: tensor<200x136xbf16>, %w: tensor<200x144xbf16>) -> tensor<136x144xbf16> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<200x136xbf16>) -> tensor<136x200xbf16>
  %y = "rlx.matmul"(%xt, %w) : (tensor<136x200xbf16>, tensor<200x144xbf16>) -> tensor<136x144xbf16>
  return %y : tensor<136x144xbf16>
}

func.func @sum(%x: tensor<1000xf32>) -> tensor<f32> {
  %s = "rlx.sum"(%x) : (tensor<1000xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
