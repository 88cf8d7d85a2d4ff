/* A stand-in for the CUDA driver (libcuda.so.1) for tests without a GPU.
 *
 * It implements the driver calls libmlir_cuda_runtime.so makes: device
 * memory is host memory (malloc), copies are memcpy, modules and functions
 * are recorded (a module is its image pointer), and cuLaunchKernel hands the
 * module, the kernel name, the grid and the packed parameters to a callback (the tests run the kernel in
 * gradir's SIMT emulator there).  Counters tell the tests how many
 * allocations, frees, copies, module loads and launches happened.
 *
 * CUDA graphs: cuFuncGetParamInfo asks a second callback for a kernel's
 * parameter sizes (the tests compute them from the kernel's type); stream
 * capture records launches into a graph object instead of running them,
 * cuGraphInstantiateWithFlags copies a graph into an executable one and
 * cuGraphLaunch runs its launches through the launch callback.  Copies,
 * memsets, synchronization and event records on a capturing stream fail
 * (gradir's runtime captures launches only).  With FAKE_CUDA_EXIT_DEINIT=1
 * in the environment the driver "shuts down" at process exit (an atexit
 * handler registered by cuInit), as the real one does before the
 * libraries' destructors run (fake_cuda_shut_down() does it at once):
 * cuModuleUnload then fails with
 * CUDA_ERROR_DEINITIALIZED, whose name cuGetErrorName no longer gives
 * (FAKE_CUDA_EXIT_REPORT=1: the shutdown also prints the module counts).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent;
typedef unsigned long long CUdeviceptr;
typedef void (*fake_launch_fn)(const void *module, const char *name, unsigned gx,
                               unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, void **params);
typedef int (*fake_param_fn)(const void *module, const char *name, size_t index,
                             size_t *offset, size_t *size);
/* A function and its CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. */
struct function { const void *module; char *name; int max_dynamic; };

/* A recorded launch: the parameters copied (one buffer, `params` into it). */
struct recorded {
  struct function *fn;
  unsigned g[3], b[3], smem;
  size_t nparams;
  char *bytes;
  void **params;
};
struct graph { size_t n, cap; struct recorded *launches; };
struct stream { int capturing; struct graph *graph; };
typedef struct stream *CUstream;
typedef struct graph *CUgraph, *CUgraphExec;

struct alloc { char *p; size_t n; struct alloc *next; };
static struct alloc *allocs;
static fake_launch_fn launch_cb;
static fake_param_fn param_cb;
/* 0 alloc, 1 free, 2 memcpy, 3 module load, 4 launch, 5 module unload,
   6 bytes allocated now, 7 stream create, 8 graph launch, 9 kernels run by
   graph launches, 10 launches captured, 11 graph instantiate, 12 graph
   destroy, 13 graph exec destroy, 14 param info queries, 15 stream destroy,
   16 tensor maps encoded, 17 launches refused (dynamic shared memory over
   48 KiB without the function's attribute, or over 227 KiB) */
#define NSTATS 18
/* Dynamic shared memory per block: what a launch may ask for without
   cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), and
   the most that attribute may allow (sm_90's 227 KiB opt-in; gradir's
   kernels that use dynamic shared memory have no static shared memory). */
#define DEFAULT_SMEM (48 * 1024)
#define OPTIN_SMEM (227 * 1024)
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
static long stats[NSTATS];
static const void *images[4096];
static int deinitialized;

void fake_cuda_set_launch_callback(fake_launch_fn f) { launch_cb = f; }
void fake_cuda_set_param_callback(fake_param_fn f) { param_cb = f; }
long fake_cuda_stat(int which) { return which >= 0 && which < NSTATS ? stats[which] : -1; }

int fake_cuda_lookup(const void *ptr, void **base, size_t *size) {
  for (struct alloc *a = allocs; a; a = a->next)
    if ((const char *)ptr >= a->p && (const char *)ptr < a->p + (a->n ? a->n : 1)) {
      *base = a->p;
      *size = a->n;
      return 1;
    }
  return 0;
}

/* FAKE_CUDA_EXIT_REPORT=1 as well: the shutdown prints how many modules
   were loaded and unloaded by then (those unloaded later fail). */
static void fake_deinit(void) {
  const char *report = getenv("FAKE_CUDA_EXIT_REPORT");
  if (report && !strcmp(report, "1"))
    fprintf(stderr, "fake_cuda: shut down with %ld modules loaded, %ld unloaded\n",
            stats[3], stats[5]);
  deinitialized = 1;
}
/* Shuts the driver down now, as at process exit. */
void fake_cuda_shut_down(void) { fake_deinit(); }
CUresult cuInit(unsigned flags) {
  (void)flags;
  static int once;
  const char *env = getenv("FAKE_CUDA_EXIT_DEINIT");
  if (!once && env && !strcmp(env, "1"))
    atexit(fake_deinit);
  once = 1;
  return 0;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  (void)attr; (void)d; *v = OPTIN_SMEM; return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  (void)d; *c = (CUcontext)0x1; return 0;
}
CUresult cuCtxPushCurrent_v2(CUcontext c) { (void)c; return 0; }
CUresult cuCtxPopCurrent_v2(CUcontext *c) { if (c) *c = (CUcontext)0x1; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
  if (deinitialized) return 4; /* CUDA_ERROR_DEINITIALIZED: *s left alone */
  (void)r; *s = "FAKE_CUDA_ERROR"; return 0;
}

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
CUresult cuModuleUnload(CUmodule m) {
  (void)m;
  if (deinitialized) return 4; /* CUDA_ERROR_DEINITIALIZED */
  stats[5]++;
  return 0;
}
/* One handle per module and name, as the driver gives (the host code asks
   before every launch). */
static struct function *functions[4096];
static size_t nfunctions;
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  for (size_t i = 0; i < nfunctions; i++)
    if (functions[i]->module == m && !strcmp(functions[i]->name, name)) {
      *f = (CUfunction)functions[i];
      return 0;
    }
  struct function *fn = malloc(sizeof *fn);
  if (nfunctions < 4096) functions[nfunctions++] = fn;
  fn->module = m;
  fn->name = strdup(name);
  fn->max_dynamic = DEFAULT_SMEM;
  *f = (CUfunction)fn;
  return 0;
}
CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
  struct function *fn = (struct function *)f;
  if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return 0;
  if (v < 0 || v > OPTIN_SMEM) return 1; /* CUDA_ERROR_INVALID_VALUE */
  fn->max_dynamic = v;
  return 0;
}
/* Whether a launch of fn may have smem bytes of dynamic shared memory. */
static int smem_ok(struct function *fn, unsigned smem) {
  if (smem <= (unsigned)fn->max_dynamic && smem <= OPTIN_SMEM) return 1;
  stats[17]++;
  return 0;
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size) {
  struct function *fn = (struct function *)f;
  stats[14]++;
  if (!param_cb) return 801; /* CUDA_ERROR_NOT_SUPPORTED */
  return param_cb(fn->module, fn->name, index, offset, size) ? 1 /* INVALID_VALUE */ : 0;
}

static int record(struct graph *g, struct function *fn, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned smem, void **params) {
  size_t n = 0, total = 0, off, size;
  while (param_cb && !param_cb(fn->module, fn->name, n, &off, &size)) {
    total += (size + 7) & ~(size_t)7;
    n++;
  }
  if (n == 0 && !param_cb) return 801;
  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 16;
    g->launches = realloc(g->launches, g->cap * sizeof *g->launches);
  }
  struct recorded *r = &g->launches[g->n++];
  *r = (struct recorded){fn, {gx, gy, gz}, {bx, by, bz}, smem, n, malloc(total + 1),
                         malloc((n + 1) * sizeof(void *))};
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    param_cb(fn->module, fn->name, i, &off, &size);
    memcpy(r->bytes + at, params[i], size);
    r->params[i] = r->bytes + at;
    at += (size + 7) & ~(size_t)7;
  }
  return 0;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                        void **extra) {
  (void)extra;
  struct function *fn = (struct function *)f;
  if (!smem_ok(fn, smem)) return 1; /* CUDA_ERROR_INVALID_VALUE */
  if (s && s->capturing) {
    stats[10]++;
    return record(s->graph, fn, gx, gy, gz, bx, by, bz, smem, params);
  }
  stats[4]++;
  if (launch_cb) launch_cb(fn->module, fn->name, gx, gy, gz, bx, by, bz, smem, params);
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, CUfunction f, void **params, void **extra) {
  (void)config; (void)f; (void)params; (void)extra; return 1; /* not used by gradir */
}

#define CAPTURING(s) ((s) && (s)->capturing)
#define CAPTURE_UNSUPPORTED 900 /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  (void)flags; stats[7]++; *s = calloc(1, sizeof **s); return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) {
  if (CAPTURING(s)) return CAPTURE_UNSUPPORTED;
  stats[15]++; free(s); return 0;
}
CUresult cuStreamSynchronize(CUstream s) { return CAPTURING(s) ? CAPTURE_UNSUPPORTED : 0; }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) {
  (void)e; (void)f; return CAPTURING(s) ? CAPTURE_UNSUPPORTED : 0;
}
CUresult cuEventCreate(CUevent *e, unsigned f) { (void)f; *e = (CUevent)0x3; return 0; }
CUresult cuEventDestroy_v2(CUevent e) { (void)e; return 0; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; return CAPTURING(s) ? CAPTURE_UNSUPPORTED : 0; }

CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
  (void)mode;
  if (!s) return CAPTURE_UNSUPPORTED;      /* the legacy stream cannot capture */
  if (s->capturing) return 401;            /* CUDA_ERROR_ILLEGAL_STATE */
  s->capturing = 1;
  s->graph = calloc(1, sizeof *s->graph);
  return 0;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph *g) {
  if (!CAPTURING(s)) return 401;
  s->capturing = 0;
  *g = s->graph;
  s->graph = NULL;
  return 0;
}
static void free_graph(struct graph *g) {
  for (size_t i = 0; i < g->n; i++) {
    free(g->launches[i].bytes);
    free(g->launches[i].params);
  }
  free(g->launches);
  free(g);
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) {
  (void)flags;
  struct graph *x = calloc(1, sizeof *x);
  for (size_t i = 0; i < g->n; i++) {
    struct recorded *r = &g->launches[i];
    record(x, r->fn, r->g[0], r->g[1], r->g[2], r->b[0], r->b[1], r->b[2], r->smem, r->params);
  }
  stats[11]++;
  *e = x;
  return 0;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
  if (CAPTURING(s)) return CAPTURE_UNSUPPORTED;
  stats[8]++;
  for (size_t i = 0; i < e->n; i++) {
    struct recorded *r = &e->launches[i];
    stats[9]++;
    if (launch_cb)
      launch_cb(r->fn->module, r->fn->name, r->g[0], r->g[1], r->g[2], r->b[0], r->b[1],
                r->b[2], r->smem, r->params);
  }
  return 0;
}
CUresult cuGraphExecDestroy(CUgraphExec e) { stats[13]++; free_graph(e); return 0; }
CUresult cuGraphDestroy(CUgraph g) { stats[12]++; free_graph(g); return 0; }
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
  if (CAPTURING(s)) return CAPTURE_UNSUPPORTED;
  return cuMemcpy(dst, src, n);
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, CUstream s) {
  if (CAPTURING(s)) return CAPTURE_UNSUPPORTED;
  for (size_t i = 0; i < n; i++) ((unsigned *)(uintptr_t)p)[i] = v; return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr p, unsigned short v, size_t n, CUstream s) {
  if (CAPTURING(s)) return CAPTURE_UNSUPPORTED;
  for (size_t i = 0; i < n; i++) ((unsigned short *)(uintptr_t)p)[i] = v; return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned f) { (void)p; (void)n; (void)f; return 0; }
CUresult cuMemHostUnregister(void *p) { (void)p; return 0; }
/* Tensor maps (mgpuGradirTensorMap in gradir's runtime, for TMA loads): the
   driver's checks of cuTensorMapEncodeTiled (CUDA_ERROR_INVALID_VALUE), and
   an encoding of the fake's own that fake_driver.py decodes for the
   emulator: 16 u64, "GRDRTMAP", data type, rank, address, dims[3],
   strides[2] (bytes), box[3], swizzle.  Counted in stat 16. */
CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *address,
                                const uint64_t *dims, const uint64_t *strides,
                                const unsigned *box, const unsigned *elementStrides,
                                int interleave, int swizzle, int l2, int oob) {
  (void)l2;
  uint64_t *m = map;
  static const int sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  if (!map || ((uintptr_t)map % 64) || rank < 2 || rank > 3 || dtype < 0 || dtype > 12 ||
      ((uintptr_t)address % 16) || interleave || oob || swizzle < 0 || swizzle > 3)
    return 1;
  int span = swizzle ? 16 << swizzle : 0, esize = sizes[dtype];
  for (unsigned i = 0; i < rank; i++) {
    if (!dims[i] || !box[i] || box[i] > 256 || elementStrides[i] != 1)
      return 1;
    if (i && (strides[i - 1] % 16 || strides[i - 1] >= (1ull << 40)))
      return 1;
  }
  if ((box[0] * esize) % 16 || (span && box[0] * esize > (unsigned)span))
    return 1;
  memset(m, 0, 128);
  memcpy(m, "GRDRTMAP", 8);
  m[1] = (uint64_t)dtype;
  m[2] = rank;
  m[3] = (uint64_t)(uintptr_t)address;
  for (unsigned i = 0; i < 3; i++) {
    m[4 + i] = i < rank ? dims[i] : 1;
    m[9 + i] = i < rank ? box[i] : 1;
  }
  for (unsigned i = 0; i < 2; i++)
    m[7 + i] = i + 1 < rank ? strides[i] : 0;
  m[12] = (uint64_t)swizzle;
  stats[16]++;
  return 0;
}
