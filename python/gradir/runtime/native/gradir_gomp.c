/* gradir: the LLVM OpenMP entry points gradir's compiled code calls
 * (__kmpc_fork_call, __kmpc_dispatch_*, ...: what MLIR's OpenMP-to-LLVM-IR
 * translation emits, and kmp_*_blocktime), run on GNU libgomp's thread pool.
 *
 * A process that imported PyTorch has libgomp's workers already; two OpenMP
 * runtimes side by side make two pools of spinning workers that contest the
 * same cores (gradir's libomp workers spin after its regions while PyTorch's
 * optimizer step runs on libgomp's, and the other way round).  Built with the
 * soname libomp.so and loaded before gradir's code, this library is the
 * process's "libomp": every NEEDED libomp.so and every JIT lookup binds here,
 * and every parallel region becomes a GOMP_parallel of the pool PyTorch uses.
 *
 * libgomp is found in the process (dl_iterate_phdr: the first object named
 * libgomp*), never loaded by this library.  Without it, every region runs on
 * the calling thread (a team of one: the same results, one core);
 * gradir_gomp_bound() says which.
 *
 * Spinning workers are a disaster on a machine whose cores other processes
 * want (runtime/openmp.py: a spinning worker that is descheduled costs the
 * next region a time slice); libgomp's spin cannot be changed once it runs.
 * So the regions run on libgomp only while gradir's block time says the
 * workers may be hot (kmp_get_blocktime() > 0: the machine is otherwise
 * idle); otherwise on LLVM's libomp (gradir_gomp_fallback(path): loaded
 * privately, RTLD_LOCAL), whose workers sleep at a block time of 0, as
 * without this library.  A region's loops, barriers and nested regions go to
 * the runtime its region runs on (a thread-local mode).
 *
 * Loops: __kmpc_dispatch_init/next (the schedules gradir emits: guided,
 * dynamic; static ones too) become GOMP_loop_ull_<schedule>_start/next on
 * [lb, ub + 1) and GOMP_loop_end_nowait once a thread's share is done (the
 * barrier after the loop is the code's own __kmpc_barrier); the inclusive
 * bounds kmpc returns are computed from libgomp's half-open ones.  Which
 * thread runs which iterations changes, what each iteration computes does not
 * (gradir's parallel loops write disjoint elements): the results are the same
 * bits as on libomp.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef unsigned long long ull;
typedef void (*microtask_t)(int32_t *, int32_t *, ...);

static struct {
    void (*parallel)(void (*)(void *), void *, unsigned, unsigned);
    int (*thread_num)(void);
    int (*num_threads)(void);
    void (*barrier)(void);
    bool (*start[4])(bool, ull, ull, ull, ull, ull *, ull *);
    bool (*next[4])(ull *, ull *);
    bool (*runtime_start)(bool, ull, ull, ull, ull *, ull *);
    bool (*runtime_next)(ull *, ull *);
    void (*loop_end_nowait)(void);
} gomp;
static int bound;                       /* 1: every entry point above found */

static struct {                         /* LLVM's libomp, for regions while workers are cold */
    void (*fork_call)(void *, int32_t, microtask_t, ...);
    void (*push_num_threads)(void *, int32_t, int32_t);
    int32_t (*global_thread_num)(void *);
    void (*barrier)(void *, int32_t);
    void (*dispatch_init_8u)(void *, int32_t, int32_t, uint64_t, uint64_t, int64_t, int64_t);
    int32_t (*dispatch_next_8u)(void *, int32_t, int32_t *, uint64_t *, uint64_t *, int64_t *);
    void (*dispatch_init_4u)(void *, int32_t, int32_t, uint32_t, uint32_t, int32_t, int32_t);
    int32_t (*dispatch_next_4u)(void *, int32_t, int32_t *, uint32_t *, uint32_t *, int32_t *);
    void (*static_init_8u)(void *, int32_t, int32_t, int32_t *, uint64_t *, uint64_t *,
                           int64_t *, int64_t, int64_t);
    void (*static_init_4u)(void *, int32_t, int32_t, int32_t *, uint32_t *, uint32_t *,
                           int32_t *, int32_t, int32_t);
    void (*static_fini)(void *, int32_t);
    void (*set_blocktime)(int);
    void (*set_defaults)(const char *);
} kmp;
static int kmp_bound;                   /* 1: gradir_gomp_fallback bound libomp */
static long kmp_regions;
static long regions, widest;            /* counters: regions forked, widest team */
static char library[512];               /* the libgomp bound to */

static __thread int pushed;             /* __kmpc_push_num_threads, for the next fork */
static __thread int serial;             /* >0: inside a region run on this thread alone */
static __thread int on_kmp;             /* 1: inside a region libomp runs */
static __thread int depth;              /* regions this thread is inside */
static __thread int blocktime = -1;     /* kmp_set_blocktime's value (-1: the default) */
static int default_blocktime = 200;     /* KMP_BLOCKTIME, kmp_set_defaults; libomp's 200 */

enum { STATIC, DYNAMIC, GUIDED, RUNTIME };
static __thread struct {                /* the thread's current dispatch loop */
    ull lb, ub, st, chunk;
    int kind, started, done;
} loop;

static int find_gomp(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (base && strncmp(base, "libgomp", 7) == 0 && strlen(name) < sizeof library) {
        strcpy(library, name);
        return 1;
    }
    return 0;
}

__attribute__((constructor)) static void bind_gomp(void) {
    const char *env = getenv("KMP_BLOCKTIME");
    if (env && *env)
        default_blocktime = strcmp(env, "infinite") == 0 ? 0x7fffffff : atoi(env);
    if (!dl_iterate_phdr(find_gomp, NULL))
        return;
    void *h = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return;
#define GET(field, name) *(void **)(&gomp.field) = dlsym(h, name)
    GET(parallel, "GOMP_parallel");
    GET(thread_num, "omp_get_thread_num");
    GET(num_threads, "omp_get_num_threads");
    GET(barrier, "GOMP_barrier");
    GET(start[STATIC], "GOMP_loop_ull_static_start");
    GET(next[STATIC], "GOMP_loop_ull_static_next");
    GET(start[DYNAMIC], "GOMP_loop_ull_dynamic_start");
    GET(next[DYNAMIC], "GOMP_loop_ull_dynamic_next");
    GET(start[GUIDED], "GOMP_loop_ull_guided_start");
    GET(next[GUIDED], "GOMP_loop_ull_guided_next");
    GET(runtime_start, "GOMP_loop_ull_runtime_start");
    GET(runtime_next, "GOMP_loop_ull_runtime_next");
    GET(loop_end_nowait, "GOMP_loop_end_nowait");
#undef GET
    bound = gomp.parallel && gomp.thread_num && gomp.num_threads && gomp.barrier
            && gomp.start[STATIC] && gomp.next[STATIC] && gomp.start[DYNAMIC]
            && gomp.next[DYNAMIC] && gomp.start[GUIDED] && gomp.next[GUIDED]
            && gomp.runtime_start && gomp.runtime_next && gomp.loop_end_nowait;
}

/* --- parallel regions ---------------------------------------------------- */

#define MAX_ARGS 16
struct region {
    microtask_t fn;
    int argc;
    void *args[MAX_ARGS];
};

static void invoke(struct region *r, int32_t gtid) {
    int32_t btid = 0;
    void **a = r->args;
    switch (r->argc) {
    case 0: r->fn(&gtid, &btid); break;
    case 1: r->fn(&gtid, &btid, a[0]); break;
    case 2: r->fn(&gtid, &btid, a[0], a[1]); break;
    case 3: r->fn(&gtid, &btid, a[0], a[1], a[2]); break;
    case 4: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3]); break;
    case 5: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4]); break;
    case 6: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5]); break;
    case 7: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6]); break;
    case 8: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); break;
    case 9: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]); break;
    case 10: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
        break;
    case 11: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                   a[10]); break;
    case 12: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                   a[10], a[11]); break;
    case 13: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                   a[10], a[11], a[12]); break;
    case 14: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                   a[10], a[11], a[12], a[13]); break;
    case 15: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                   a[10], a[11], a[12], a[13], a[14]); break;
    default: r->fn(&gtid, &btid, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                   a[10], a[11], a[12], a[13], a[14], a[15]); break;
    }
}

static void member(void *data) {       /* each team member (GOMP_parallel's fn) */
    int32_t tid = gomp.thread_num();
    if (tid != 0)
        depth = 1;                      /* (the master counts its own) */
    if (tid == 0) {
        int n = gomp.num_threads();
        if (n > __atomic_load_n(&widest, __ATOMIC_RELAXED))
            __atomic_store_n(&widest, n, __ATOMIC_RELAXED);
    }
    on_kmp = 0;
    invoke((struct region *)data, tid);
}

static void kmp_member(int32_t *gtid, int32_t *btid, struct region *r) {
    (void)btid;
    int was = on_kmp;
    on_kmp = 1;
    depth++;
    invoke(r, *gtid);
    depth--;
    on_kmp = was;
}

static void alone(struct region *r) {  /* a team of one: the calling thread */
    serial++;
    invoke(r, 0);
    serial--;
}

/* A region forked inside a loop's body (a kernel driver called from a
 * parallel loop's iteration) has loops of its own on this thread: the outer
 * loop's state is put back after it, as libomp keeps one per team. */
int kmp_get_blocktime(void);

static void fork_region(void *loc, struct region *r, int parallel) {
    int n = pushed;
    pushed = 0;
    __typeof__(loop) outer = loop;
    /* libgomp while workers may be hot, else libomp; a region inside another
     * runs on its thread alone, as both runtimes run nested regions by
     * default */
    int use_kmp = kmp_bound && (kmp_get_blocktime() <= 0 || !bound);
    if (!parallel || serial || depth > 0 || n == 1 || (!use_kmp && !bound)) {
        alone(r);
    } else if (use_kmp) {
        __atomic_add_fetch(&kmp_regions, 1, __ATOMIC_RELAXED);
        if (n > 0)
            kmp.push_num_threads(loc, kmp.global_thread_num(loc), n);
        kmp.fork_call(loc, 1, (microtask_t)kmp_member, r);
    } else {
        __atomic_add_fetch(&regions, 1, __ATOMIC_RELAXED);
        depth++;
        gomp.parallel(member, r, n > 0 ? (unsigned)n : 0u, 0u);
        depth--;
    }
    loop = outer;
}

EXPORT void __kmpc_fork_call(void *loc, int32_t argc, microtask_t fn, ...) {
    struct region r = {fn, argc, {0}};
    if (argc < 0 || argc > MAX_ARGS) {
        fprintf(stderr, "gradir: an OpenMP region with %d arguments (at most %d on libgomp)\n",
                argc, MAX_ARGS);
        abort();
    }
    va_list ap;
    va_start(ap, fn);
    for (int i = 0; i < argc; i++)
        r.args[i] = va_arg(ap, void *);
    va_end(ap);
    fork_region(loc, &r, 1);
}

EXPORT void __kmpc_fork_call_if(void *loc, int32_t argc, microtask_t fn, int32_t cond,
                                void *args) {
    struct region r = {fn, args ? 1 : 0, {args}};
    (void)argc;
    fork_region(loc, &r, cond != 0);
}

EXPORT void __kmpc_push_num_threads(void *loc, int32_t gtid, int32_t n) {
    (void)loc; (void)gtid;
    pushed = n;
}

EXPORT int32_t __kmpc_global_thread_num(void *loc) {
    if (on_kmp && !serial)
        return kmp.global_thread_num(loc);
    return (bound && !serial) ? gomp.thread_num() : 0;
}

EXPORT void __kmpc_barrier(void *loc, int32_t gtid) {
    if (serial)
        return;
    if (on_kmp)
        kmp.barrier(loc, gtid);
    else if (bound)
        gomp.barrier();
}

EXPORT void __kmpc_serialized_parallel(void *loc, int32_t gtid) {
    (void)loc; (void)gtid;
    serial++;
}

EXPORT void __kmpc_end_serialized_parallel(void *loc, int32_t gtid) {
    (void)loc; (void)gtid;
    serial--;
}

/* --- worksharing loops --------------------------------------------------- */

/* kmp's sched_type, modifiers (monotonic 1<<29, nonmonotonic 1<<30) off */
static int kind_of(int32_t schedule) {
    switch (schedule & ~((1 << 29) | (1 << 30))) {
    case 33: case 34: return STATIC;    /* static chunked, static */
    case 35: return DYNAMIC;
    case 36: return GUIDED;
    default: return RUNTIME;            /* runtime, auto, trapezoidal, ... */
    }
}

static void dispatch_init(int32_t schedule, ull lb, ull ub, ull st, ull chunk) {
    loop.lb = lb;
    loop.ub = ub;
    loop.st = st ? st : 1;
    loop.kind = kind_of(schedule);
    loop.chunk = (loop.kind == STATIC && (schedule & 0xff) == 34) ? 0 : (chunk ? chunk : 1);
    loop.started = 0;
    loop.done = 0;
}

/* the next share [*plb, *pub] (inclusive); 0 when the thread has no more */
static int dispatch_next(int32_t *plast, ull *plb, ull *pub, ull *pst) {
    if (loop.ub < loop.lb)
        return 0;
    ull s, e;
    bool more;
    if (!bound || serial) {             /* a team of one: the whole range once */
        if (loop.done)
            return 0;
        loop.done = 1;
        s = loop.lb;
        e = loop.ub + 1;
        more = true;
    } else if (!loop.started) {
        loop.started = 1;
        more = loop.kind == RUNTIME
            ? gomp.runtime_start(true, loop.lb, loop.ub + 1, loop.st, &s, &e)
            : gomp.start[loop.kind](true, loop.lb, loop.ub + 1, loop.st, loop.chunk, &s, &e);
    } else {
        more = loop.kind == RUNTIME ? gomp.runtime_next(&s, &e) : gomp.next[loop.kind](&s, &e);
    }
    if (!more) {
        if (bound && !serial)
            gomp.loop_end_nowait();
        return 0;
    }
    ull last = s + ((e - 1 - s) / loop.st) * loop.st;
    *plb = s;
    *pub = last;
    if (pst)
        *pst = loop.st;
    if (plast)
        *plast = last + loop.st > loop.ub;
    return 1;
}

EXPORT void __kmpc_dispatch_init_8u(void *loc, int32_t gtid, int32_t schedule, uint64_t lb,
                                    uint64_t ub, int64_t st, int64_t chunk) {
    if (on_kmp && !serial) {
        kmp.dispatch_init_8u(loc, gtid, schedule, lb, ub, st, chunk);
        return;
    }
    dispatch_init(schedule, lb, ub, (ull)st, (ull)chunk);
}

EXPORT int32_t __kmpc_dispatch_next_8u(void *loc, int32_t gtid, int32_t *plast, uint64_t *plb,
                                       uint64_t *pub, int64_t *pst) {
    if (on_kmp && !serial)
        return kmp.dispatch_next_8u(loc, gtid, plast, plb, pub, pst);
    ull lb, ub, st;
    if (!dispatch_next(plast, &lb, &ub, &st))
        return 0;
    *plb = lb;
    *pub = ub;
    if (pst)
        *pst = (int64_t)st;
    return 1;
}

EXPORT void __kmpc_dispatch_init_4u(void *loc, int32_t gtid, int32_t schedule, uint32_t lb,
                                    uint32_t ub, int32_t st, int32_t chunk) {
    if (on_kmp && !serial) {
        kmp.dispatch_init_4u(loc, gtid, schedule, lb, ub, st, chunk);
        return;
    }
    dispatch_init(schedule, lb, ub, (ull)(uint32_t)st, (ull)(uint32_t)chunk);
}

EXPORT int32_t __kmpc_dispatch_next_4u(void *loc, int32_t gtid, int32_t *plast, uint32_t *plb,
                                       uint32_t *pub, int32_t *pst) {
    if (on_kmp && !serial)
        return kmp.dispatch_next_4u(loc, gtid, plast, plb, pub, pst);
    ull lb, ub, st;
    if (!dispatch_next(plast, &lb, &ub, &st))
        return 0;
    *plb = (uint32_t)lb;
    *pub = (uint32_t)ub;
    if (pst)
        *pst = (int32_t)st;
    return 1;
}

EXPORT void __kmpc_dispatch_fini_8u(void *loc, int32_t gtid) { (void)loc; (void)gtid; }
EXPORT void __kmpc_dispatch_fini_4u(void *loc, int32_t gtid) { (void)loc; (void)gtid; }

/* static loops: libomp's default split (greedy: ceil(trip / threads) each) */
static void static_init(int32_t schedule, int32_t *plast, ull *plb, ull *pub, int64_t *pst,
                        int64_t incr, int64_t chunk) {
    ull lb = *plb, ub = *pub, st = incr > 0 ? (ull)incr : 1;
    ull nth = (bound && !serial) ? (ull)gomp.num_threads() : 1;
    ull tid = (bound && !serial) ? (ull)gomp.thread_num() : 0;
    if (ub < lb) {
        if (plast) *plast = 0;
        return;
    }
    ull trip = (ub - lb) / st + 1;
    if ((schedule & 0xff) == 33 && chunk > 0) {     /* static chunked: round robin */
        ull c = (ull)chunk;
        *plb = lb + tid * c * st;
        *pub = *plb + (c - 1) * st;
        *pst = (int64_t)(c * nth * st);
        if (plast) *plast = ((trip - 1) / c) % nth == tid;
        return;
    }
    ull big = (trip + nth - 1) / nth;
    ull first = tid * big;
    if (first >= trip) {                /* nothing left for this thread */
        *plb = ub + st;
        *pub = ub;
        if (plast) *plast = 0;
    } else {
        ull count = trip - first < big ? trip - first : big;
        *plb = lb + first * st;
        *pub = *plb + (count - 1) * st;
        if (plast) *plast = first + count == trip;
    }
    *pst = (int64_t)(trip * st);
}

EXPORT void __kmpc_for_static_init_8u(void *loc, int32_t gtid, int32_t schedule, int32_t *plast,
                                      uint64_t *plb, uint64_t *pub, int64_t *pst, int64_t incr,
                                      int64_t chunk) {
    if (on_kmp && !serial) {
        kmp.static_init_8u(loc, gtid, schedule, plast, plb, pub, pst, incr, chunk);
        return;
    }
    ull lb = *plb, ub = *pub;
    static_init(schedule, plast, &lb, &ub, pst, incr, chunk);
    *plb = lb;
    *pub = ub;
}

EXPORT void __kmpc_for_static_init_4u(void *loc, int32_t gtid, int32_t schedule, int32_t *plast,
                                      uint32_t *plb, uint32_t *pub, int32_t *pst, int32_t incr,
                                      int32_t chunk) {
    if (on_kmp && !serial) {
        kmp.static_init_4u(loc, gtid, schedule, plast, plb, pub, pst, incr, chunk);
        return;
    }
    ull lb = *plb, ub = *pub;
    int64_t st;
    static_init(schedule, plast, &lb, &ub, &st, incr, chunk);
    *plb = (uint32_t)lb;
    *pub = (uint32_t)ub;
    *pst = (int32_t)st;
}

EXPORT void __kmpc_for_static_fini(void *loc, int32_t gtid) {
    if (on_kmp && !serial)
        kmp.static_fini(loc, gtid);
}

/* --- gradir's block-time protocol (runtime/openmp.py) ------------------- */
/* libgomp's workers spin as GOMP_SPINCOUNT says whatever this is; the value
 * only tells gradir's code (kmp_get_blocktime) whether workers are hot. */

EXPORT void kmp_set_blocktime(int ms) {
    blocktime = ms;
    if (kmp_bound)
        kmp.set_blocktime(ms);
}

EXPORT int kmp_get_blocktime(void) { return blocktime >= 0 ? blocktime : default_blocktime; }

EXPORT void kmp_set_defaults(const char *settings) {
    const char *p = settings ? strstr(settings, "KMP_BLOCKTIME=") : NULL;
    if (p)
        default_blocktime = atoi(p + strlen("KMP_BLOCKTIME="));
    if (kmp_bound)
        kmp.set_defaults(settings);
}

/* Binds LLVM's libomp at ``path`` (loaded RTLD_LOCAL) for regions while the
 * workers are cold; returns 1 when every entry point was found.  The
 * defaults already given (kmp_set_defaults) are passed on. */
EXPORT int gradir_gomp_fallback(const char *path) {
    if (kmp_bound)
        return 1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
#define GET(field, name) *(void **)(&kmp.field) = dlsym(h, name)
    GET(fork_call, "__kmpc_fork_call");
    GET(push_num_threads, "__kmpc_push_num_threads");
    GET(global_thread_num, "__kmpc_global_thread_num");
    GET(barrier, "__kmpc_barrier");
    GET(dispatch_init_8u, "__kmpc_dispatch_init_8u");
    GET(dispatch_next_8u, "__kmpc_dispatch_next_8u");
    GET(dispatch_init_4u, "__kmpc_dispatch_init_4u");
    GET(dispatch_next_4u, "__kmpc_dispatch_next_4u");
    GET(static_init_8u, "__kmpc_for_static_init_8u");
    GET(static_init_4u, "__kmpc_for_static_init_4u");
    GET(static_fini, "__kmpc_for_static_fini");
    GET(set_blocktime, "kmp_set_blocktime");
    GET(set_defaults, "kmp_set_defaults");
#undef GET
    void **f = (void **)&kmp;
    for (size_t i = 0; i < sizeof kmp / sizeof(void *); i++)
        if (!f[i])
            return 0;
    char defaults[64];
    snprintf(defaults, sizeof defaults, "KMP_BLOCKTIME=%d", default_blocktime);
    if (!getenv("KMP_BLOCKTIME"))
        kmp.set_defaults(defaults);
    kmp_bound = 1;
    return 1;
}

/* --- what tests and tools ask ------------------------------------------- */

EXPORT int gradir_gomp_bound(void) { return bound; }
EXPORT long gradir_gomp_regions(void) { return regions; }
EXPORT long gradir_gomp_libomp_regions(void) { return kmp_regions; }
EXPORT long gradir_gomp_widest_team(void) { return widest; }
EXPORT const char *gradir_gomp_library(void) { return library; }
EXPORT const char *gradir_gomp_digest(void) { return GRADIR_GOMP_DIGEST; }
