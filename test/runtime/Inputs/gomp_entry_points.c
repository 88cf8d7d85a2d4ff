/* Drives gradir's OpenMP entry points on libgomp (runtime/native/gradir_gomp.c)
 * the way MLIR's OpenMP translation does: __kmpc_push_num_threads, then
 * __kmpc_fork_call / __kmpc_fork_call_if with outlined functions whose
 * worksharing loops call __kmpc_dispatch_init/next or __kmpc_for_static_init,
 * and __kmpc_barrier after them; with regions forked inside a loop's body
 * (a kernel driver called from a parallel loop), on libgomp (block time > 0)
 * and on the libomp behind it (block time 0).  Every iteration must run
 * exactly once, whichever thread runs it.
 *
 *   gomp_entry_points <entry-points.so> <libomp.so>
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*microtask_t)(int32_t *, int32_t *, ...);
static void (*fork_call)(void *, int32_t, microtask_t, ...);
static void (*fork_call_if)(void *, int32_t, microtask_t, int32_t, void *);
static void (*push_num_threads)(void *, int32_t, int32_t);
static int32_t (*global_thread_num)(void *);
static void (*barrier)(void *, int32_t);
static void (*dispatch_init)(void *, int32_t, int32_t, uint64_t, uint64_t, int64_t, int64_t);
static int32_t (*dispatch_next)(void *, int32_t, int32_t *, uint64_t *, uint64_t *, int64_t *);
static void (*dispatch_init4)(void *, int32_t, int32_t, uint32_t, uint32_t, int32_t, int32_t);
static int32_t (*dispatch_next4)(void *, int32_t, int32_t *, uint32_t *, uint32_t *, int32_t *);
static void (*static_init)(void *, int32_t, int32_t, int32_t *, uint64_t *, uint64_t *,
                           int64_t *, int64_t, int64_t);
static void (*static_fini)(void *, int32_t);
static void (*set_blocktime)(int);
static long (*regions)(void), (*kmp_regions)(void), (*widest)(void);

#define N 97        /* outer iterations */
#define M 13        /* inner iterations of each */
static int outer_count[N + 1], inner_count[N + 1][M + 1], static_count[N + 1];
static int last_seen;

struct inner_args { int i; int schedule; };

static void inner(int32_t *gtid, int32_t *btid, struct inner_args *a) {
    (void)btid;
    int32_t g = global_thread_num(NULL);
    (void)gtid;
    dispatch_init(NULL, g, a->schedule, 1, M, 1, 1);
    int32_t last;
    uint64_t lb, ub;
    int64_t st;
    while (dispatch_next(NULL, g, &last, &lb, &ub, &st))
        for (uint64_t j = lb; j <= ub; j += (uint64_t)st)
            __atomic_add_fetch(&inner_count[a->i][j], 1, __ATOMIC_RELAXED);
    barrier(NULL, g);
}

static void outer(int32_t *gtid, int32_t *btid, int *schedule, int *nested) {
    (void)btid;
    int32_t g = *gtid;
    dispatch_init(NULL, g, *schedule, 1, N, 1, 1);
    int32_t last = 0;
    uint64_t lb, ub;
    int64_t st;
    while (dispatch_next(NULL, g, &last, &lb, &ub, &st)) {
        for (uint64_t i = lb; i <= ub; i += (uint64_t)st) {
            __atomic_add_fetch(&outer_count[i], 1, __ATOMIC_RELAXED);
            if (*nested) {      /* a driver forked from the loop's body, parallel or not */
                struct inner_args a = {(int)i, *schedule};
                push_num_threads(NULL, g, 2);
                fork_call_if(NULL, 1, (microtask_t)inner, (int)(i % 2), &a);
            }
        }
        if (last)
            __atomic_add_fetch(&last_seen, 1, __ATOMIC_RELAXED);
    }
    barrier(NULL, g);
}

static void statics(int32_t *gtid, int32_t *btid) {
    (void)btid;
    int32_t last = 0;
    uint64_t lb = 1, ub = N;
    int64_t st = 1;
    static_init(NULL, *gtid, 34, &last, &lb, &ub, &st, 1, 0);
    for (uint64_t i = lb; i <= ub && ub <= N; i++)
        __atomic_add_fetch(&static_count[i], 1, __ATOMIC_RELAXED);
    static_fini(NULL, *gtid);
    barrier(NULL, *gtid);
}

static void narrow(int32_t *gtid, int32_t *btid) {   /* 32-bit loop bounds */
    (void)btid;
    dispatch_init4(NULL, *gtid, 35, 1, N, 1, 2);
    int32_t last, st;
    uint32_t lb, ub;
    while (dispatch_next4(NULL, *gtid, &last, &lb, &ub, &st))
        for (uint32_t i = lb; i <= ub; i += (uint32_t)st)
            __atomic_add_fetch(&static_count[i], 1, __ATOMIC_RELAXED);
    barrier(NULL, *gtid);
}

static int check(const char *what, int want_inner) {
    int bad = 0;
    for (int i = 1; i <= N; i++) {
        bad += outer_count[i] != 1;
        for (int j = 1; j <= M && want_inner; j++)
            bad += inner_count[i][j] != 1;
    }
    printf("%s: %s\n", what, bad || last_seen != 1 ? "WRONG" : "ok");
    memset(outer_count, 0, sizeof outer_count);
    memset(inner_count, 0, sizeof inner_count);
    last_seen = 0;
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 3)
        return 2;
    if (!dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL))     /* as importing torch does */
        return 3;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        printf("cannot load %s: %s\n", argv[1], dlerror());
        return 4;
    }
#define GET(v, name) *(void **)(&v) = dlsym(h, name)
    GET(fork_call, "__kmpc_fork_call");
    GET(fork_call_if, "__kmpc_fork_call_if");
    GET(push_num_threads, "__kmpc_push_num_threads");
    GET(global_thread_num, "__kmpc_global_thread_num");
    GET(barrier, "__kmpc_barrier");
    GET(dispatch_init, "__kmpc_dispatch_init_8u");
    GET(dispatch_next, "__kmpc_dispatch_next_8u");
    GET(dispatch_init4, "__kmpc_dispatch_init_4u");
    GET(dispatch_next4, "__kmpc_dispatch_next_4u");
    GET(static_init, "__kmpc_for_static_init_8u");
    GET(static_fini, "__kmpc_for_static_fini");
    GET(set_blocktime, "kmp_set_blocktime");
    GET(regions, "gradir_gomp_regions");
    GET(kmp_regions, "gradir_gomp_libomp_regions");
    GET(widest, "gradir_gomp_widest_team");
    int (*bound)(void), (*fallback)(const char *);
    GET(bound, "gradir_gomp_bound");
    GET(fallback, "gradir_gomp_fallback");
#undef GET
    printf("libgomp bound: %d, libomp bound: %d\n", bound(), fallback(argv[2]));
    int bad = 0;
    /* guided (nonmonotonic, as MLIR emits), dynamic, static chunked, static */
    const int schedules[] = {(1 << 30) | 36, 35, 33, 34};
    for (int hot = 1; hot >= 0; hot--) {
        set_blocktime(hot);
        long g0 = regions(), k0 = kmp_regions();
        for (int s = 0; s < 4; s++) {
            for (int nested = 0; nested < 2; nested++) {
                int schedule = schedules[s], nest = nested;
                char what[96];
                snprintf(what, sizeof what, "%s schedule %d%s", hot ? "hot" : "cold",
                         schedule & 0xff, nested ? " nested" : "");
                push_num_threads(NULL, global_thread_num(NULL), 2);
                fork_call(NULL, 2, (microtask_t)outer, &schedule, &nest);
                bad += check(what, nested);
            }
        }
        push_num_threads(NULL, global_thread_num(NULL), 2);
        fork_call(NULL, 0, (microtask_t)statics);
        push_num_threads(NULL, global_thread_num(NULL), 2);
        fork_call(NULL, 0, (microtask_t)narrow);
        int sbad = 0;
        for (int i = 1; i <= N; i++)
            sbad += static_count[i] != 2;
        memset(static_count, 0, sizeof static_count);
        printf("%s static and 32-bit loops: %s\n", hot ? "hot" : "cold", sbad ? "WRONG" : "ok");
        bad += sbad;
        printf("%s: regions on libgomp %s, on libomp %s\n", hot ? "hot" : "cold",
               regions() > g0 ? "yes" : "no", kmp_regions() > k0 ? "yes" : "no");
    }
    printf("widest team on libgomp: %ld\n", widest());
    return bad != 0;
}
