// Hopper tensor cores in the PTX (kernels/wgmma.py): on chip=sm_90 a bf16
// matmul, and a f32 one under precision=tf32 or compute-dtype=bf16, is
// wgmma.mma_async (m64nNk16 on bf16, m64nNk8 on TF32, f32 accumulation)
// after the stores' fence.proxy.async, between wgmma.fence and
// commit_group/wait_group, in a gpu.module of its own compiled for
// sm_90a (wgmma is an sm_90a feature), its tiles swizzled and aligned to
// 1024 bytes (the swizzle's repeat); the other kernels keep sm_90.  On
// sm_80 the same matmuls are mma.sync and nothing is wgmma.  x (K
// innermost, rows of 96 bytes) is copied with cp.async into four stages
// of tiles (gpu-rlx-to-nvvm-wgmma-pipeline.mlir checks the pipeline).
// Convolutions are implicit GEMMs on wgmma too: a padded f32 conv2d under
// precision=tf32 (m64nNk8), and by default a padded bf16 conv2d and a
// strided bf16 conv2d_transpose (the data gradient's form, split-K) on
// bf16 operands (m64nNk16), each in its function's sm_90a module, no SIMT
// GEMM kernel (`_gemm_`) left for them; none of it wgmma at sm_80.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa precision=tf32' | FileCheck %s --check-prefix=TF32
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa compute-dtype=bf16' | FileCheck %s --check-prefix=BF16
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa' | FileCheck %s --check-prefix=DEFAULT
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa precision=tf32' | FileCheck %s --check-prefix=SM80
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='precision=tf32' | FileCheck %s --check-prefix=KERNELS
// chip=sm_90a: wgmma too, and every module compiled for sm_90a.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90a format=isa precision=tf32' | FileCheck %s --check-prefix=SM90A

// TF32: gpu.binary @f32_matmul_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// TF32-SAME: .target sm_90a
// TF32-SAME: .shared .align 1024 .b8 __wg_f32_matmul_wgmma_0_0[32768]
// TF32-SAME: .shared .align 1024 .b8 __wg_f32_matmul_wgmma_0_1[16384]
// TF32-SAME: cp.async.cg.shared.global
// TF32-SAME: cvt.rna.tf32.f32
// TF32-SAME: fence.proxy.async.shared::cta
// TF32-SAME: bar.sync
// TF32-SAME: wgmma.fence.sync.aligned
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// TF32-SAME: wgmma.commit_group.sync.aligned
// TF32-SAME: wgmma.wait_group.sync.aligned{{[^;]*}}0;
// TF32: gpu.binary @bf16_matmul_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// TF32: gpu.binary @sum_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">
// TF32-SAME: .target sm_90
// TF32: gpu.binary @f32_conv_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// TF32-SAME: .entry f32_conv_wgmma_0
// TF32-SAME: cvt.rna.tf32.f32
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// TF32: gpu.binary @bf16_conv_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// TF32-SAME: .entry bf16_conv_wgmma_0
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// TF32: gpu.binary @bf16_conv_transpose_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// TF32-SAME: .entry bf16_conv_transpose_wgmma_splitk_1
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16

// BF16: gpu.binary @f32_matmul_kernels_sm90a
// BF16-SAME: cvt.rn.bf16.f32
// BF16-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// BF16: gpu.binary @f32_conv_kernels_sm90a
// BF16-SAME: cvt.rn.bf16.f32
// BF16-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16

// DEFAULT: gpu.binary @f32_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">
// DEFAULT-NOT: wgmma
// DEFAULT-SAME: fma.rn.f32
// DEFAULT: gpu.binary @bf16_matmul_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// DEFAULT-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// DEFAULT: gpu.binary @f32_conv_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">
// DEFAULT-NOT: wgmma
// DEFAULT-SAME: .entry f32_conv_gemm_0
// DEFAULT-NOT: wgmma
// DEFAULT-SAME: fma.rn.f32
// DEFAULT-NOT: _gemm_
// DEFAULT: gpu.binary @bf16_conv_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// DEFAULT-SAME: .entry bf16_conv_wgmma_0
// DEFAULT-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// DEFAULT-NOT: _gemm_
// DEFAULT: gpu.binary @bf16_conv_transpose_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// DEFAULT-SAME: .entry bf16_conv_transpose_wgmma_splitk_1
// DEFAULT-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// DEFAULT-NOT: _gemm_

// SM90A: gpu.binary @f32_matmul_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// SM90A-SAME: wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32
// SM90A: gpu.binary @sum_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">

// SM80-NOT: wgmma
// SM80: gpu.binary @f32_matmul_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">
// SM80-SAME: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM80-NOT: wgmma
// SM80: gpu.binary @bf16_conv_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">
// SM80-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM80-NOT: wgmma

// The kernels stage: the tiles staged as four stages of 8-row groups of
// 128-byte rows (TF32, the 128-byte swizzle), the descriptors (mode 1 in bits 62-63:
// 4611686018427387904 = 1 << 62; SBO 1024 bytes = 64 << 32; LBO 16 = 1 << 16),
// the MMAs on the accumulator struct.
// KERNELS-LABEL: func.func @f32_matmul
// KERNELS: arith.constant 4611686293305360384 : i64
// KERNELS: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}}) module(@f32_matmul_kernels_sm90a) function(@f32_matmul_wgmma_0) workgroup({{.*}} : memref<4x8x8x32xi32, #gpu.address_space<workgroup>>, {{.*}} : memref<4x4x8x32xi32, #gpu.address_space<workgroup>>)
// KERNELS: memref.extract_aligned_pointer_as_index
// KERNELS: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// KERNELS-NEXT: gpu.barrier
// KERNELS: nvvm.wgmma.fence.aligned
// KERNELS-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// KERNELS-NEXT: nvvm.wgmma.commit.group.sync.aligned
// KERNELS-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// The bf16 convolution: its weights and padded input staged as bf16
// (K-major 8-row groups of 32 elements, the 64-byte swizzle's rows).
// KERNELS-LABEL: func.func @bf16_conv(
// KERNELS-NOT: gpu.launch
// KERNELS: gpu.launch {{.*}} module(@bf16_conv_kernels_sm90a) function(@bf16_conv_wgmma_0) workgroup({{.*}} : memref<2x8x8x32xbf16, #gpu.address_space<workgroup>>, {{.*}} : memref<2x4x8x32xbf16, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// KERNELS-NOT: gpu.launch
// KERNELS-LABEL: func.func @bf16_conv_transpose(

func.func @f32_matmul(%x: tensor<40x24xf32>, %w: tensor<24x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @bf16_matmul(%x: tensor<40x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<40x48xbf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x64xbf16>, tensor<64x48xbf16>) -> tensor<40x48xbf16>
  return %y : tensor<40x48xbf16>
}

func.func @sum(%x: tensor<1000xf32>) -> tensor<f32> {
  %s = "rlx.sum"(%x) : (tensor<1000xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

func.func @f32_conv(%x: tensor<2x16x6x6xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x16x6x6xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x6x6xf32>
  return %y : tensor<2x32x6x6xf32>
}

func.func @bf16_conv(%x: tensor<2x16x6x6xbf16>, %w: tensor<32x16x3x3xbf16>) -> tensor<2x32x6x6xbf16> {
  %y = "rlx.conv2d"(%x, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x16x6x6xbf16>, tensor<32x16x3x3xbf16>) -> tensor<2x32x6x6xbf16>
  return %y : tensor<2x32x6x6xbf16>
}

func.func @bf16_conv_transpose(%dy: tensor<2x32x4x4xbf16>, %w: tensor<32x16x3x3xbf16>) -> tensor<2x16x7x7xbf16> {
  %dx = "rlx.conv2d_transpose"(%dy, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x32x4x4xbf16>, tensor<32x16x3x3xbf16>) -> tensor<2x16x7x7xbf16>
  return %dx : tensor<2x16x7x7xbf16>
}
