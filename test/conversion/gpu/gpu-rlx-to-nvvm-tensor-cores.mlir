// Tensor cores in the PTX (kernels/mma.py, kernels/mma_pipeline.py): a f32
// matmul under precision=tf32 (alias high, as PyTorch's
// set_float32_matmul_precision names it) is mma.sync m16n8k8 on TF32
// operands, copied as f32 with cp.async and rounded to nearest
// (cvt.rna.tf32.f32) as the fragments are read; a bf16 matmul (by default,
// from sm_80) copies its tiles with cp.async, reads its fragments with
// ldmatrix (x4 for A, x2.trans for B's [k][n] tile) and runs mma.sync
// m16n8k16; both accumulate in f32.  Under compute-dtype=bf16 the f32
// matmul rounds its operands to bf16 (cvt.rn.bf16.f32) as it stages them
// with cooperative loads (no cp.async) for m16n8k16.  By default the f32
// matmul stays fp32 FMAs (precision=fp32, alias highest); before sm_80
// nothing runs on tensor cores, and asking for TF32 or bf16 compute there
// is an error.  (sm_90 runs wgmma: kernels/wgmma.py; sm_86 stands for the
// chips with mma.sync only.)
// Convolutions are implicit GEMMs on the same tensor cores (their tiles
// staged by cooperative loads: no cp.async, no ldmatrix): a padded f32
// conv2d under precision=tf32, and by default a padded bf16 conv2d and a
// strided bf16 conv2d_transpose (the data gradient's form, split-K), whose
// operands are read as bf16 (padded and zero-inserted in bf16) and
// multiplied by m16n8k16; no SIMT GEMM kernel (`_gemm_`) is left for them.
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa precision=tf32' | FileCheck %s --check-prefix=TF32
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_86 format=isa precision=high' | FileCheck %s --check-prefix=TF32
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_86 format=isa' | FileCheck %s --check-prefix=DEFAULT
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_86 format=isa precision=highest' | FileCheck %s --check-prefix=DEFAULT
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_80 format=isa compute-dtype=bf16' | FileCheck %s --check-prefix=BF16
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_75 format=isa' | FileCheck %s --check-prefix=SM75
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='stage=nvvm chip=sm_75 precision=tf32' 2>&1 | FileCheck %s --check-prefix=NOTF32
// RUN: not gradir-opt %s --gpu-rlx-to-nvvm='chip=sm_86 precision=fp16' 2>&1 | FileCheck %s --check-prefix=BADPREC
// RUN: gradir-opt %s --gpu-rlx-to-nvvm='precision=tf32 chip=sm_80' | FileCheck %s --check-prefix=KERNELS

// TF32: gpu.binary @f32_matmul_kernels
// TF32-NOT: ldmatrix
// TF32-SAME: cp.async.cg.shared.global [%{{[a-z0-9]+}}], [%{{[a-z0-9]+}}], 16, %{{[a-z0-9]+}};
// TF32-SAME: cp.async.commit_group;
// TF32-SAME: cp.async.wait_group \091;
// TF32-SAME: cvt.rna.tf32.f32
// TF32-SAME: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32: gpu.binary @bf16_matmul_kernels
// TF32-SAME: cp.async.cg.shared.global
// TF32-SAME: cp.async.wait_group \091;
// TF32-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// TF32-SAME: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// TF32-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// TF32: gpu.binary @f32_conv_kernels
// TF32-SAME: .entry f32_conv_mma_0
// TF32-SAME: cvt.rna.tf32.f32
// TF32-SAME: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32: gpu.binary @bf16_conv_kernels
// TF32-SAME: .entry bf16_conv_mma_0
// TF32-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// TF32: gpu.binary @bf16_conv_transpose_kernels
// TF32-SAME: .entry bf16_conv_transpose_mma_splitk_1
// TF32-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// DEFAULT: gpu.binary @f32_matmul_kernels
// DEFAULT-NOT: mma.sync
// DEFAULT-NOT: cp.async
// DEFAULT-SAME: fma.rn.f32
// DEFAULT: gpu.binary @bf16_matmul_kernels
// DEFAULT-SAME: cp.async.cg.shared.global
// DEFAULT-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// DEFAULT-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// DEFAULT: gpu.binary @f32_conv_kernels
// DEFAULT-NOT: mma.sync
// DEFAULT-SAME: .entry f32_conv_gemm_0
// DEFAULT-NOT: mma.sync
// DEFAULT-SAME: fma.rn.f32
// DEFAULT-NOT: mma.sync
// DEFAULT: gpu.binary @bf16_conv_kernels
// DEFAULT-NOT: _gemm_
// DEFAULT-SAME: .entry bf16_conv_mma_0
// DEFAULT-NOT: _gemm_
// DEFAULT-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// DEFAULT-NOT: _gemm_
// DEFAULT: gpu.binary @bf16_conv_transpose_kernels
// DEFAULT-NOT: _gemm_
// DEFAULT-SAME: .entry bf16_conv_transpose_mma_splitk_1
// DEFAULT-NOT: _gemm_
// DEFAULT-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// BF16: gpu.binary @f32_matmul_kernels
// BF16-NOT: cp.async
// BF16-SAME: cvt.rn.bf16.f32
// BF16-NOT: cp.async
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16: gpu.binary @bf16_matmul_kernels
// BF16-SAME: cp.async.cg.shared.global
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16: gpu.binary @f32_conv_kernels
// BF16-SAME: cvt.rn.bf16.f32
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16: gpu.binary @bf16_conv_kernels
// BF16-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// SM75-NOT: mma.sync
// SM75-NOT: cp.async
// SM75-NOT: ldmatrix

// NOTF32: error: option 'precision' of pass 'gpu-rlx-to-nvvm': precision 'tf32' runs f32 contractions on TF32 tensor cores, which need chip sm_80 or later, not sm_75
// BADPREC: error: option 'precision' of pass 'gpu-rlx-to-nvvm' must be one of fp32, highest, tf32, high, got 'fp16'

// The kernels stage: three stages of each tile in a 1-D workgroup buffer
// (16 bytes of slack to align it): A [m][k] rows of 32 + 4 f32, B [k][n]
// rows of 32 + 8 (f32) or 32 + 8 (bf16), copied with cp.async through the
// LLVM descriptors of the buffers; TF32 conversions after the workgroup
// loads, bf16 fragments by ldmatrix.
// KERNELS-LABEL: func.func @f32_matmul(
// KERNELS: gpu.launch {{.*}} function(@f32_matmul_mma_0) workgroup(%{{.*}} : memref<3460xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<3844xf32, #gpu.address_space<workgroup>>)
// KERNELS: builtin.unrealized_conversion_cast %{{.*}} : memref<3460xf32, #gpu.address_space<workgroup>> to !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)>
// KERNELS: llvm.ptrtoint
// KERNELS: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// KERNELS: nvvm.cp.async.commit.group
// KERNELS: nvvm.cp.async.wait.group 1
// KERNELS-NEXT: gpu.barrier
// KERNELS: memref.load %{{.*}} : memref<3460xf32, #gpu.address_space<workgroup>>
// KERNELS-NEXT: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// KERNELS-LABEL: func.func @bf16_matmul(
// KERNELS: gpu.launch {{.*}} function(@bf16_matmul_mma_0) workgroup(%{{.*}} : memref<3848xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<3848xbf16, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.cp.async.shared.global
// KERNELS: scf.for
// KERNELS: nvvm.cp.async.wait.group 1
// KERNELS-NEXT: gpu.barrier
// KERNELS: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// KERNELS: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 2 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// The convolutions: one tile each of the weights and of the (padded)
// input, staged as TF32 bit patterns (f32) or as bf16 as read (bf16).
// KERNELS-LABEL: func.func @f32_conv(
// KERNELS-NOT: gpu.launch
// KERNELS: gpu.launch {{.*}} function(@f32_conv_mma_0) workgroup(%{{.*}} : memref<32x40xi32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x40xi32, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// KERNELS-NOT: gpu.launch
// KERNELS-LABEL: func.func @bf16_conv(
// KERNELS-NOT: gpu.launch
// KERNELS: gpu.launch {{.*}} function(@bf16_conv_mma_0) workgroup(%{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// KERNELS-NOT: gpu.launch
// KERNELS-LABEL: func.func @bf16_conv_transpose(
// KERNELS: gpu.launch {{.*}} function(@bf16_conv_transpose_mma_splitk_1) workgroup(%{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x40xbf16, #gpu.address_space<workgroup>>)
// KERNELS: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>

func.func @f32_matmul(%x: tensor<40x24xf32>, %w: tensor<24x48xf32>) -> tensor<40x48xf32> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>
  return %y : tensor<40x48xf32>
}

func.func @bf16_matmul(%x: tensor<40x64xbf16>, %w: tensor<64x48xbf16>) -> tensor<40x48xbf16> {
  %y = "rlx.matmul"(%x, %w) : (tensor<40x64xbf16>, tensor<64x48xbf16>) -> tensor<40x48xbf16>
  return %y : tensor<40x48xbf16>
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
