// REQUIRES: ptxas
// The tensor-core kernels (TF32 and bf16 mma.sync) assemble with ptxas
// (format=bin) for sm_80 and sm_90.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=bin precision=tf32' | FileCheck %s --check-prefix=SM80
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=bin precision=tf32' | FileCheck %s --check-prefix=SM90
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=bin compute-dtype=bf16' | FileCheck %s --check-prefix=SM90

// SM80: gpu.binary @f32_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}bin = "\7FELF
// SM80: gpu.binary @f16_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}bin = "\7FELF
// SM90: gpu.binary @f32_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF
// SM90: gpu.binary @f16_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}bin = "\7FELF

func.func @f32_matmul(%x: tensor<40x24xf32>, %w: tensor<24x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @f16_matmul(%x: tensor<40x64xf16>, %w: tensor<64x48xf16>) -> tensor<40x48xf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x64xf16>, tensor<64x48xf16>) -> tensor<40x48xf16>
  return %y : tensor<40x48xf16>
}
