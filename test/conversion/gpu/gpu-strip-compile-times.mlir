// RUN: gradir-opt %s --gpu-strip-compile-times | FileCheck %s
// RUN: gradir-opt %s --gpu-strip-compile-times --gpu-strip-compile-times | FileCheck %s
// The compile timings upstream's serializer records in each object go; the
// target, the format, the other properties, the kernels' metadata and the
// binary stay, so the same input prints the same module.

// CHECK-LABEL: gpu.binary @timed
// CHECK-SAME: [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, bin = "\7FELF">]
gpu.binary @timed [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, properties = {ISAToBinaryTimeInMs = 41 : i64, LLVMIRToISATimeInMs = 7 : i64}, bin = "\7FELF">]

// CHECK-LABEL: gpu.binary @mixed
// CHECK-SAME: [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {keep = 1 : i32}, assembly = "ptx">,
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_90">, "ptx">]
gpu.binary @mixed [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {LLVMIRToISATimeInMs = 3 : i64, keep = 1 : i32}, assembly = "ptx">, #gpu.object<#nvvm.target<chip = "sm_90">, "ptx">]

// CHECK-LABEL: gpu.binary @untouched
// CHECK-SAME: properties = {keep = 2 : i32}
gpu.binary @untouched [#gpu.object<#nvvm.target<chip = "sm_90">, properties = {keep = 2 : i32}, "x">]
