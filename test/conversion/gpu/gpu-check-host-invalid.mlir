// RUN: gradir-opt %s --split-input-file --verify-diagnostics --gpu-check-host
// Host code may only allocate, copy and launch: anything else is refused.

func.func @load(%x: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %d = gpu.alloc () : memref<2xf32>
  gpu.memcpy %d, %x : memref<2xf32>, memref<2xf32>
  // expected-error @+1 {{'memref.load' touches a device buffer on the host; only gpu.alloc, gpu.dealloc, gpu.memcpy and kernel launches may}}
  %v = memref.load %d[%c0] : memref<2xf32>
  gpu.dealloc %d : memref<2xf32>
  return %v : f32
}

// -----

func.func @leftover_linalg(%x: memref<2xf32>) {
  %cst = arith.constant 1.0 : f32
  // expected-error @+1 {{'linalg.fill' computes on the host; every computation must be inside a GPU kernel}}
  linalg.fill ins(%cst : f32) outs(%x : memref<2xf32>)
  return
}

// -----

func.func @float_math(%a: f32) -> f32 {
  // expected-error @+1 {{'arith.mulf' computes on the host; every computation must be inside a GPU kernel}}
  %0 = arith.mulf %a, %a : f32
  return %0 : f32
}

// -----

memref.global "private" constant @cst : memref<2xf32> = dense<[1.0, 2.0]>
func.func @host_constant(%out: memref<2xf32>) {
  // expected-error @+1 {{a host constant is used by something other than a copy to the device}}
  %g = memref.get_global @cst : memref<2xf32>
  // expected-error @+1 {{'memref.copy' touches a device buffer on the host}}
  memref.copy %g, %out : memref<2xf32> to memref<2xf32>
  return
}

// -----

// Allocation, copies, views, index arithmetic and launches pass.
func.func @fine(%x: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = gpu.alloc () : memref<4xf32>
  gpu.memcpy %d, %x : memref<4xf32>, memref<4xf32>
  %v = memref.expand_shape %d [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %e = memref.load %d[%tx] : memref<4xf32>
    %f = arith.mulf %e, %e : f32
    memref.store %f, %d[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.memcpy %x, %d : memref<4xf32>, memref<4xf32>
  gpu.dealloc %d : memref<4xf32>
  return
}

// -----

// Host loads and stores are refused on device memory also for integers.
func.func @index_on_device(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %d = gpu.alloc () : memref<4xindex>
  // expected-error @+1 {{'memref.store' touches a device buffer on the host}}
  memref.store %n, %d[%c0] : memref<4xindex>
  // expected-error @+1 {{'memref.load' touches a device buffer on the host}}
  %v = memref.load %d[%c0] : memref<4xindex>
  gpu.dealloc %d : memref<4xindex>
  return %v : index
}

// -----

// Host memory (memref.alloc) is the host's integer bookkeeping only: not
// one a kernel reads, not one holding floats, not one copied to the device,
// not one a loop carries together with device memory.
func.func @host_memory_misused(%x: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'memref.alloc' on the host: host memory may only hold integers that host loads and stores alone use (no kernel, no copy to or from device data); device buffers are gpu.alloc}}
  %k = memref.alloc () : memref<4xindex>
  // expected-error @+1 {{'memref.store' touches a device buffer on the host}}
  memref.store %n, %k[%c0] : memref<4xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %i = memref.load %k[%tx] : memref<4xindex>
    gpu.terminator
  }
  // expected-error @+1 {{'memref.alloc' on the host}}
  %f = memref.alloc () : memref<4xf32>
  %cst = arith.constant 1 : index
  // expected-error @+1 {{'memref.load' touches a device buffer on the host}}
  %g = memref.load %f[%c0] : memref<4xf32>
  // expected-error @+1 {{'memref.alloc' on the host}}
  %h = memref.alloc () : memref<4xi32>
  %d = gpu.alloc () : memref<4xi32>
  gpu.memcpy %d, %h : memref<4xi32>, memref<4xi32>
  // expected-error @+1 {{'memref.alloc' on the host}}
  %l = memref.alloc () : memref<4xi32>
  %dev = gpu.alloc () : memref<4xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %l) -> (memref<4xi32>) {
    scf.yield %dev : memref<4xi32>
  }
  // expected-error @+1 {{'memref.dealloc' touches a device buffer on the host}}
  memref.dealloc %r : memref<4xi32>
  return
}
