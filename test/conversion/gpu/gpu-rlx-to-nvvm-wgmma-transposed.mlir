// MN-major operands of the Hopper GEMMs (kernels/wgmma_layout.py) in the
// PTX: a bf16/f16 operand with M (A) or N (B) innermost in 16-byte rows is
// copied with 16-byte cp.async along M (N) into MN-major tiles and read by
// wgmma.mma_async with imm-trans-a / imm-trans-b = 1 (the instruction's
// last two operands), so the kernel has no thread loads of the operands
// and no thread stores into the tiles (ld.global.b16 / st.shared.b16: the
// cooperative loads that transpose them, as @bf16_unaligned still does,
// its N = 36 not in 16-byte rows).  TF32 keeps K-major tiles (wgmma
// transposes only .f16/.bf16): its N-innermost B is loaded by the threads.
// The PTX assembles for sm_90a (gpu-rlx-to-nvvm-wgmma-cubin.mlir runs ptxas
// on the same GEMMs).
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa' | FileCheck %s
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa sm-count=1' | FileCheck %s --check-prefix=TILE128
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='precision=tf32' | FileCheck %s --check-prefix=KERNELS

// x @ w: B N-major (imm-trans-b 1)
// CHECK: gpu.binary @bf16_nn_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// CHECK-NOT: ld.global.b16
// CHECK-NOT: st.shared.b16
// CHECK-SAME: cp.async.cg.shared.global [{{[^]]*}}], [{{[^]]*}}], 16
// CHECK-NOT: ld.global.b16
// CHECK-NOT: st.shared.b16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[^;]*}}, p, 1, 1, 0, 1;
// CHECK-NOT: st.shared.b16
// CHECK-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}0;
// CHECK-NOT: ld.global.b16
// CHECK-SAME: ret;
// x^T @ w: A M-major and B N-major
// CHECK: gpu.binary @f16_tn_kernels_sm90a
// CHECK-NOT: st.shared.b16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {{[^;]*}}, p, 1, 1, 1, 1;
// CHECK-NOT: ld.global.b16
// CHECK-SAME: ret;
// x^T @ w^T: A M-major, B K-major
// CHECK: gpu.binary @bf16_tt_kernels_sm90a
// CHECK-NOT: st.shared.b16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[^;]*}}, p, 1, 1, 1, 0;
// CHECK-NOT: ld.global.b16
// CHECK-SAME: ret;
// N = 36: rows of 72 bytes, B loaded (transposed) by the threads, K-major
// CHECK: gpu.binary @bf16_unaligned_kernels_sm90a
// CHECK-SAME: ld.global.b16
// CHECK-SAME: st.shared.b16
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[^;]*}}, p, 1, 1, 0, 0;

// 128x128 tiles: two warpgroups (A's second 64 rows one atom on), B two
// atoms of 64 along N, three stages of BK = 32 in 48 KiB.
// TILE128: gpu.binary @bf16_nn_kernels_sm90a
// TILE128-SAME: .shared .align 1024 .b8 __wg_bf16_nn_wgmma_{{[0-9]+}}_0[24576]
// TILE128-SAME: .shared .align 1024 .b8 __wg_bf16_nn_wgmma_{{[0-9]+}}_1[24576]
// TILE128-NOT: st.shared.b16
// TILE128-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[^;]*}}, p, 1, 1, 0, 1;

// TF32: B (N innermost) stays K-major, loaded by the threads.
// KERNELS-LABEL: func.func @f32_nn
// KERNELS: nvvm.wgmma.mma_async {{.*}} A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]

func.func @bf16_nn(%x: tensor<40x256xbf16>, %w: tensor<256x48xbf16>) -> tensor<40x48xbf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x256xbf16>, tensor<256x48xbf16>) -> tensor<40x48xbf16>
  return %y : tensor<40x48xbf16>
}

func.func @f16_tn(%x: tensor<72x40xf16>, %w: tensor<72x48xf16>) -> tensor<40x48xf16> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<72x40xf16>) -> tensor<40x72xf16>
  %y = "rlx.matmul"(%xt, %w) : (tensor<40x72xf16>, tensor<72x48xf16>) -> tensor<40x48xf16>
  return %y : tensor<40x48xf16>
}

func.func @bf16_tt(%x: tensor<72x40xbf16>, %w: tensor<48x72xbf16>) -> tensor<40x48xbf16> {
  %xt = "rlx.permute_dims"(%x) {axes = array<i64: 1, 0>} : (tensor<72x40xbf16>) -> tensor<40x72xbf16>
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<48x72xbf16>) -> tensor<72x48xbf16>
  %y = "rlx.matmul"(%xt, %wt) : (tensor<40x72xbf16>, tensor<72x48xbf16>) -> tensor<40x48xbf16>
  return %y : tensor<40x48xbf16>
}

func.func @bf16_unaligned(%x: tensor<40x72xbf16>, %w: tensor<72x36xbf16>) -> tensor<40x36xbf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x72xbf16>, tensor<72x36xbf16>) -> tensor<40x36xbf16>
  return %y : tensor<40x36xbf16>
}

func.func @f32_nn(%x: tensor<40x72xf32>, %w: tensor<72x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x72xf32>, tensor<72x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}
