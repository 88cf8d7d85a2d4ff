// REQUIRES: ptxas
// The tensor-core kernels (TF32 and f16 mma.sync, cp.async of 16 and 8
// bytes, ldmatrix x4, x2 and .trans) assemble with ptxas (format=bin) for
// sm_80 and sm_86, and their sm_80 PTX for sm_90 too (sm_90 itself compiles
// wgmma kernels: kernels/wgmma.py).
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=bin precision=tf32' | FileCheck %s --check-prefix=SM80
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_86 format=bin compute-dtype=bf16' | FileCheck %s --check-prefix=SM86
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa precision=tf32' > %t.mlir
// RUN: %PYTHON %S/Inputs/ptx_of.py f32_matmul_kernels < %t.mlir > %t.f32.ptx
// RUN: %PYTHON %S/Inputs/ptx_of.py f16_matmul_kernels < %t.mlir > %t.f16.ptx
// RUN: %PYTHON %S/Inputs/ptx_of.py f16_ragged_kernels < %t.mlir > %t.ragged.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ragged.ptx
// RUN: ptxas -arch=sm_90 %t.f32.ptx -o %t.f32.cubin
// RUN: ptxas -arch=sm_90 %t.f16.ptx -o %t.f16.cubin
// RUN: ptxas -arch=sm_90 %t.ragged.ptx -o %t.ragged.cubin
// RUN: ptxas -arch=sm_80 %t.ragged.ptx -o %t.ragged80.cubin

// SM80: gpu.binary @f32_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}bin = "\7FELF
// SM80: gpu.binary @f16_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}bin = "\7FELF
// SM80: gpu.binary @f16_ragged_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}bin = "\7FELF
// SM86: gpu.binary @f32_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_86">, {{.*}}bin = "\7FELF
// SM86: gpu.binary @f16_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_86">, {{.*}}bin = "\7FELF

// A ragged f16 GEMM: A's rows of 36 halves copied in 8-byte chunks (.ca),
// B's in 16-byte chunks (.cg), both short past the edges (src-size).
// PTX: .target sm_80
// Both tiles 16-byte aligned (cp.async's chunks, ldmatrix's rows).
// PTX: .shared .align 16 .b8 __wg_f16_ragged_mma_0_0
// PTX: .shared .align 16 .b8 __wg_f16_ragged_mma_0_1
// PTX: cp.async.ca.shared.global [%{{[a-z0-9+]+}}], [%{{[a-z0-9+]+}}], 8, %r{{[0-9]+}};
// PTX: cp.async.cg.shared.global [%{{[a-z0-9+]+}}], [%{{[a-z0-9+]+}}], 16, %r{{[0-9]+}};
// PTX: cp.async.commit_group;
// PTX: cp.async.wait_group 1;
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

func.func @f32_matmul(%x: tensor<40x24xf32>, %w: tensor<24x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @f16_matmul(%x: tensor<40x64xf16>, %w: tensor<64x48xf16>) -> tensor<40x48xf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x64xf16>, tensor<64x48xf16>) -> tensor<40x48xf16>
  return %y : tensor<40x48xf16>
}

func.func @f16_ragged(%x: tensor<37x36xf16>, %w: tensor<36x40xf16>) -> tensor<37x40xf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<37x36xf16>, tensor<36x40xf16>) -> tensor<37x40xf16>
  return %y : tensor<37x40xf16>
}
