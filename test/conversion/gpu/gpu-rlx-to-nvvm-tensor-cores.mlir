// Tensor cores in the PTX (kernels/mma.py): a f32 matmul under
// precision=tf32 (alias high) is mma.sync m16n8k8 on TF32 operands rounded
// to nearest (cvt.rna.tf32.f32), a bf16 matmul mma.sync m16n8k16 on bf16
// operands (by default, from sm_80), both accumulating in f32; under
// compute-dtype=bf16 the f32 matmul rounds its operands to bf16
// (cvt.rn.bf16.f32) for m16n8k16.  By default the f32 matmul stays fp32
// FMAs; before sm_80 nothing runs on tensor cores, and asking for TF32 or
// bf16 compute there is an error.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa precision=tf32' | FileCheck %s --check-prefix=TF32
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa precision=high' | FileCheck %s --check-prefix=TF32
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_90 format=isa' | FileCheck %s --check-prefix=DEFAULT
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa compute-dtype=bf16' | FileCheck %s --check-prefix=BF16
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_75 format=isa' | FileCheck %s --check-prefix=SM75
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_75 precision=tf32' 2>&1 | FileCheck %s --check-prefix=NOTF32
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='chip=sm_86 precision=fp16' 2>&1 | FileCheck %s --check-prefix=BADPREC
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='precision=tf32' | FileCheck %s --check-prefix=KERNELS

// TF32: gpu.binary @f32_matmul_kernels
// TF32-SAME: cvt.rna.tf32.f32
// TF32-SAME: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32: gpu.binary @bf16_matmul_kernels
// TF32-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// DEFAULT: gpu.binary @f32_matmul_kernels
// DEFAULT-NOT: mma.sync
// DEFAULT-SAME: fma.rn.f32
// DEFAULT: gpu.binary @bf16_matmul_kernels
// DEFAULT-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// BF16: gpu.binary @f32_matmul_kernels
// BF16-SAME: cvt.rn.bf16.f32
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16: gpu.binary @bf16_matmul_kernels
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// SM75-NOT: mma.sync

// NOTF32: error: option 'precision' of pass 'gpu-rlx-to-nvvm': precision 'tf32' runs f32 contractions on TF32 tensor cores, which need chip sm_80 or later, not sm_75
// BADPREC: error: option 'precision' of pass 'gpu-rlx-to-nvvm' must be one of fp32, tf32, high, got 'fp16'

// The kernels stage: the tile loads round to TF32 into workgroup memory
// (i32 bit patterns), each warp's fragments feed nvvm.mma.sync.
// KERNELS-LABEL: func.func @f32_matmul(
// KERNELS: gpu.launch {{.*}} function(@f32_matmul_mma_0) workgroup(%{{.*}} : memref<32x40xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x40xi32, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// KERNELS-LABEL: func.func @bf16_matmul(
// KERNELS: gpu.launch {{.*}} function(@bf16_matmul_mma_0) workgroup(%{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>

func.func @f32_matmul(%x: tensor<40x24xf32>, %w: tensor<24x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @bf16_matmul(%x: tensor<40x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<40x48xbf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x64xbf16>, tensor<64x48xbf16>) -> tensor<40x48xbf16>
  return %y : tensor<40x48xbf16>
}
