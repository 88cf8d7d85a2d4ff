// The multi-stage pipeline of the Hopper GEMMs (kernels/wgmma_pipeline.py)
// in the PTX: operands whose K is innermost in rows of 16-byte multiples are
// copied with 16-byte cp.async (zero-filled past the edges: src-size),
// S-1 slabs ahead into their swizzled stage (here 128x128 tiles, sm-count=1:
// TF32 three stages of BK = 16, bf16 three of BK = 32, in 48 KiB); in the
// loop each thread waits for its copies of the slab (wait_group S-2),
// rounds them to TF32 in place (TF32 only), fences them for the async
// proxy, the block synchronizes, the MMAs of the slab are issued and
// committed, wait_group 1 leaves them in flight while the previous slab's
// complete, the block synchronizes again and the next slab's copies are
// issued into the stage those MMAs read.  A GEMM without such an operand
// has two stages, each thread loading the next slab into registers during
// the MMAs (no cp.async); sm_80 keeps mma.sync.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa precision=tf32 sm-count=1' | FileCheck %s --check-prefix=TF32
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa sm-count=1' | FileCheck %s --check-prefix=BF16
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa precision=tf32' | FileCheck %s --check-prefix=SM80
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='precision=tf32 sm-count=1' | FileCheck %s --check-prefix=KERNELS

// TF32: gpu.binary @f32_nt_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// TF32-SAME: .shared .align 1024 .b8 __wg_f32_nt_wgmma_{{[0-9]+}}_0[24576]
// TF32-SAME: .shared .align 1024 .b8 __wg_f32_nt_wgmma_{{[0-9]+}}_1[24576]
// TF32-SAME: cp.async.cg.shared.global [{{[^]]*}}], [{{[^]]*}}], 16
// TF32-SAME: cp.async.commit_group
// TF32-SAME: cp.async.commit_group
// TF32-SAME: cp.async.wait_group {{[^;]*}}1;
// TF32-SAME: ld.shared.v4.b32
// TF32-SAME: cvt.rna.tf32.f32
// TF32-SAME: st.shared.v4.b32
// TF32-SAME: fence.proxy.async.shared::cta
// TF32-SAME: bar.sync
// TF32-SAME: wgmma.fence.sync.aligned
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// TF32-SAME: wgmma.commit_group.sync.aligned
// TF32-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}1;
// TF32-SAME: bar.sync
// TF32-SAME: cp.async.cg.shared.global
// TF32-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}0;
// The unaligned GEMM (rows of 45 f32): cooperative loads, two stages.
// TF32: gpu.binary @f32_unaligned_kernels_sm90a
// (128x128 tiles, BK = 16: two stages of 8 KiB per operand)
// TF32-SAME: .shared .align 1024 .b8 __wg_f32_unaligned_wgmma_{{[0-9]+}}_0[16384]
// TF32-NOT: cp.async
// TF32-SAME: ld.global
// TF32-SAME: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// TF32-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}1;
// TF32-NOT: cp.async
// TF32-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}0;
// TF32-NOT: cp.async
// TF32: gpu.binary @bf16_nn_kernels  [

// BF16: gpu.binary @bf16_nn_kernels_sm90a  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// BF16-SAME: cp.async.cg.shared.global
// BF16-SAME: cp.async.wait_group {{[^;]*}}1;
// BF16-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// BF16-SAME: wgmma.wait_group.sync.aligned {{[^;]*}}1;

// SM80-NOT: wgmma
// SM80: gpu.binary @f32_nt_kernels  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">
// SM80-SAME: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM80-NOT: wgmma

// The kernels stage: three stages of both tiles (BK = 16: rows of 64
// bytes), the copies' destinations (the stage's address plus the chunk's
// swizzled offset) as shared pointers.
// KERNELS-LABEL: func.func @f32_nt
// KERNELS: gpu.launch {{.*}} function(@f32_nt_wgmma_{{[0-9]+}}) workgroup({{.*}} : memref<3x16x8x16xi32, #gpu.address_space<workgroup>>, {{.*}} : memref<3x16x8x16xi32, #gpu.address_space<workgroup>>)
// KERNELS: llvm.inttoptr {{.*}} : i64 to !llvm.ptr<3>
// KERNELS: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// KERNELS: nvvm.cp.async.commit.group
// KERNELS: scf.for
// KERNELS: nvvm.cp.async.wait.group 1
// KERNELS: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// KERNELS-NEXT: gpu.barrier
// KERNELS: nvvm.wgmma.fence.aligned
// KERNELS-COUNT-2: nvvm.wgmma.mma_async
// KERNELS-NEXT: nvvm.wgmma.commit.group.sync.aligned
// KERNELS-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// KERNELS-NEXT: gpu.barrier
// KERNELS: nvvm.cp.async.shared.global
// KERNELS: nvvm.cp.async.commit.group
// KERNELS: scf.yield
// KERNELS-NEXT: }
// KERNELS-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

func.func @f32_nt(%x: tensor<40x256xf32>, %w: tensor<48x256xf32>) -> tensor<40x48xf32> {
  %wt = "rlx.permute_dims"(%w) {axes = array<i64: 1, 0>} : (tensor<48x256xf32>) -> tensor<256x48xf32>
  %y = "rlx.matmul"(%x, %wt) : (tensor<40x256xf32>, tensor<256x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @f32_unaligned(%x: tensor<40x45xf32>, %w: tensor<45x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x45xf32>, tensor<45x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @bf16_nn(%x: tensor<40x256xbf16>, %w: tensor<256x48xbf16>) -> tensor<40x48xbf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x256xbf16>, tensor<256x48xbf16>) -> tensor<40x48xbf16>
  return %y : tensor<40x48xbf16>
}
