/* A stand-in for the CUDA driver (libcuda.so.1) for tests without a GPU.
 *
 * It implements the driver calls libmlir_cuda_runtime.so makes: device
 * memory is host memory (malloc), copies are memcpy, modules and functions
 * are recorded (a module is its image pointer), and cuLaunchKernel hands the
 * module, the kernel name, the grid and the packed parameters to a callback (the tests run the kernel in
 * gradir's SIMT emulator there).  Counters tell the tests how many
 * allocations, frees, copies, module loads and launches happened.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;
typedef void (*fake_launch_fn)(const void *module, const char *name, unsigned gx,
                               unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, void **params);
struct function { const void *module; char *name; };

struct alloc { char *p; size_t n; struct alloc *next; };
static struct alloc *allocs;
static fake_launch_fn launch_cb;
/* 0 alloc, 1 free, 2 memcpy, 3 module load, 4 launch, 5 module unload,
   6 bytes allocated now, 7 stream create */
static long stats[8];
static const void *images[4096];

void fake_cuda_set_launch_callback(fake_launch_fn f) { launch_cb = f; }
long fake_cuda_stat(int which) { return which >= 0 && which < 8 ? stats[which] : -1; }

int fake_cuda_lookup(const void *ptr, void **base, size_t *size) {
  for (struct alloc *a = allocs; a; a = a->next)
    if ((const char *)ptr >= a->p && (const char *)ptr < a->p + (a->n ? a->n : 1)) {
      *base = a->p;
      *size = a->n;
      return 1;
    }
  return 0;
}

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  (void)attr; (void)d; *v = 227 * 1024; return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d; *c = (CUcontext)0x1; return 0;
}
CUresult cuCtxPushCurrent_v2(CUcontext c) { (void)c; return 0; }
CUresult cuCtxPopCurrent_v2(CUcontext *c) { if (c) *c = (CUcontext)0x1; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { (void)r; *s = "FAKE_CUDA_ERROR"; return 0; }

CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  if (stats[3] < 4096) images[stats[3]] = image;
  stats[3]++;
  *m = (CUmodule)image;
  return 0;
}
/* The image of the i-th module loaded. */
const void *fake_cuda_image(long i) { return i >= 0 && i < stats[3] && i < 4096 ? images[i] : 0; }
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, void *opts, void **vals) {
  (void)n; (void)opts; (void)vals; return cuModuleLoadData(m, image);
}
CUresult cuModuleUnload(CUmodule m) { (void)m; stats[5]++; return 0; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  struct function *fn = malloc(sizeof *fn);
  fn->module = m;
  fn->name = strdup(name);
  *f = (CUfunction)fn;
  return 0;
}
CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) { (void)f; (void)attr; (void)v; return 0; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                        void **extra) {
  (void)s; (void)extra;
  stats[4]++;
  struct function *fn = (struct function *)f;
  if (launch_cb) launch_cb(fn->module, fn->name, gx, gy, gz, bx, by, bz, smem, params);
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, CUfunction f, void **params, void **extra) {
  (void)config; (void)f; (void)params; (void)extra; return 1; /* not used by gradir */
}

CUresult cuStreamCreate(CUstream *s, unsigned flags) { (void)flags; stats[7]++; *s = (CUstream)0x2; return 0; }
CUresult cuStreamDestroy_v2(CUstream s) { (void)s; return 0; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return 0; }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) { (void)s; (void)e; (void)f; return 0; }
CUresult cuEventCreate(CUevent *e, unsigned f) { (void)f; *e = (CUevent)0x3; return 0; }
CUresult cuEventDestroy_v2(CUevent e) { (void)e; return 0; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; (void)s; return 0; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  struct alloc *a = malloc(sizeof *a);
  a->p = malloc(n ? n : 1);
  memset(a->p, 0x7f, n); /* junk, as fresh device memory */
  a->n = n;
  a->next = allocs;
  allocs = a;
  stats[0]++;
  stats[6] += (long)n;
  *p = (CUdeviceptr)(uintptr_t)a->p;
  return 0;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  (void)flags; return cuMemAlloc_v2(p, n);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  for (struct alloc **a = &allocs; *a; a = &(*a)->next)
    if ((*a)->p == (char *)(uintptr_t)p) {
      struct alloc *dead = *a;
      *a = dead->next;
      stats[6] -= (long)dead->n;
      free(dead->p);
      free(dead);
      stats[1]++;
      return 0;
    }
  return 1;
}
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  stats[2]++; memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n); return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  (void)s; return cuMemcpy(dst, src, n);
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, CUstream s) {
  (void)s; for (size_t i = 0; i < n; i++) ((unsigned *)(uintptr_t)p)[i] = v; return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr p, unsigned short v, size_t n, CUstream s) {
  (void)s; for (size_t i = 0; i < n; i++) ((unsigned short *)(uintptr_t)p)[i] = v; return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { (void)p; (void)n; (void)f; return 0; }
CUresult cuMemHostUnregister(void *p) { (void)p; return 0; }
CUresult cuTensorMapEncodeTiled(void) { return 1; /* not used by gradir */ }
