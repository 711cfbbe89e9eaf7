/* tests/standin/cuda_standin.c - a CPU stand-in for the subset of the CUDA
   runtime that the concerto backends call, compiled against the real
   <cuda_runtime_api.h> and linked in place of -lcudart.

   Streams are worker threads that run their queue in order; device memory
   is host memory; captured work becomes a graph that launches replay in
   capture order. Each call checks the rules a GPU enforces (and a few that
   CUDA lets pass silently) and records every violation for the test to
   read (standin.h). See README.md for the rules and what is not modelled.

   Sections: >>state >>calls >>registry >>allocations >>streams >>capture
   >>device >>stream_api >>events >>capture_api >>graphs >>memory >>errors
   >>control */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include "standin_internal.h"

#define STANDIN__MAX_DEVICES 64
#define STANDIN__DEFAULT_DEVICES 8
#define STANDIN__PRIO_LEAST 0
#define STANDIN__PRIO_GREATEST (-5)
#define STANDIN__DEFAULT_TIMEOUT_MS 10000

/* ------------------------------------------------------------------ */
/* >>state */

enum { STANDIN__OP_HOSTFN = 1, STANDIN__OP_MEMCPY, STANDIN__OP_MEMSET, STANDIN__OP_EXT };

/* One piece of work, on a stream or in a graph. */
typedef struct standin__op {
    int kind;
    union {
        struct { cudaHostFn_t fn; void* data; } host;
        struct { void* dst; const void* src; size_t n; unsigned long long dst_id, src_id; int memset_value;
                 size_t rows, dpitch, spitch; } mem;   /* rows > 0: a 2-D copy of rows rows of n bytes */
        struct { const standin__ext_fns* fns; void* payload; } ext;
    } u;
} standin__op;

enum { STANDIN__ITEM_OP = 1, STANDIN__ITEM_RECORD, STANDIN__ITEM_WAIT, STANDIN__ITEM_GRAPH };

typedef struct standin__item {
    struct standin__item* next;
    int kind;
    uint64_t pos;                    /* 1-based position on its stream */
    standin__op op;                  /* ITEM_OP */
    struct CUevent_st* ev;           /* ITEM_RECORD */
    struct CUstream_st* wait_s;      /* ITEM_WAIT: until wait_s has completed wait_pos items */
    uint64_t wait_pos;
    struct CUgraphExec_st* exec;     /* ITEM_GRAPH: launch number `launch` of exec, with its own copies */
    uint64_t launch;
    standin__op* ops;
    int n_ops;
} standin__item;

typedef struct standin__capture standin__capture;

/* Waiting: every waiter sleeps on its own semaphore, linked into a queue
   under the lock; waking posts them all, also under the lock. (Not
   pthread condition variables: glibc's can hang a broadcast after timed
   waits time out, glibc bug 25847.) */
typedef struct standin__waiter {
    sem_t sem;
    int linked;
    struct standin__waiter* next;
} standin__waiter;

typedef struct standin__waitq {
    standin__waiter* head;
} standin__waitq;

struct CUstream_st {
    standin__obj hdr;
    int device, priority, legacy;
    unsigned flags;
    standin__item *head, *tail;
    uint64_t n_enq, n_done;
    uint64_t cur_pos;                /* of the work the worker runs, 0 when idle */
    void* blocked;                   /* set by nccl_standin.c */
    standin__waitq q;                /* the worker waits here for work, or to stop */
    int exited;
    standin__capture* cap;           /* the capture this stream is part of */
    int* deps;                       /* its current capture dependencies (node indices) */
    int n_deps, cap_deps;
    struct CUstream_st* next_all;
};

struct CUevent_st {
    standin__obj hdr;
    unsigned flags;
    int device;
    int recorded;                    /* ever */
    struct CUstream_st* rs;          /* the latest record: position rpos on rs */
    uint64_t rpos;
    double t_ms;
    int t_valid;
    standin__capture* cap;           /* the latest record was into this capture */
    int* cap_deps;
    int n_cap_deps;
    struct CUevent_st* next_all;
};

typedef struct standin__node {
    standin__op op;
    int* deps;
    int n_deps;
} standin__node;

struct CUgraph_st {
    standin__obj hdr;
    standin__node* nodes;
    int n, cap, n_edges;
    struct CUgraph_st* next_all;
};

struct CUgraphExec_st {
    standin__obj hdr;
    standin__op* ops;
    int n;
    uint64_t n_launched, n_finished;
    struct CUgraphExec_st* next_all;
};

struct standin__capture {
    int active, invalid;
    enum cudaStreamCaptureMode mode;
    pthread_t thread;
    int device;
    struct CUstream_st* origin;
    struct CUgraph_st* graph;        /* registered only when the capture ends well */
    struct CUstream_st** members;
    int n_members, cap_members;
    standin__capture* next_all;
};

static pthread_mutex_t standin__mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t standin__vmu = PTHREAD_MUTEX_INITIALIZER;   /* violations, calls, injections */
static standin__waitq standin__progress;                          /* any state changed */

static struct {
    int resetting;
    int device_count;                /* 0: the default */
    int timeout_ms;                  /* 0: the default */
    unsigned serial;
    standin__obj** reg;              /* open addressing, keys are the object addresses */
    size_t reg_cap, reg_n;
    struct CUstream_st* streams;
    struct CUevent_st* events;
    struct CUgraph_st* graphs;
    struct CUgraphExec_st* execs;
    standin__capture* captures;
    struct CUstream_st* legacy[STANDIN__MAX_DEVICES];
    standin__alloc* allocs;          /* live, sorted by base */
    int n_allocs, cap_allocs;
    unsigned long long alloc_serial;
    int n_workers;
    int live_streams, live_events, live_graphs, live_execs;
    const standin__nccl_hooks* nccl;
} standin__g;

static _Thread_local int standin__tl_device;
static _Thread_local cudaError_t standin__tl_error;
static _Thread_local int standin__tl_in_hostfn;

void standin__lock(void) { pthread_mutex_lock(&standin__mu); }

void standin__unlock(void) { pthread_mutex_unlock(&standin__mu); }

/* lock held */
static void standin__wake(standin__waitq* q) {
    standin__waiter* w;
    while ((w = q->head) != NULL) {
        q->head = w->next;
        w->next = NULL;
        w->linked = 0;
        sem_post(&w->sem);
    }
}

void standin__broadcast(void) { standin__wake(&standin__progress); }

double standin__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int standin__timeout_ms(void) { return standin__g.timeout_ms > 0 ? standin__g.timeout_ms : STANDIN__DEFAULT_TIMEOUT_MS; }

double standin__deadline(void) { return standin__now_ms() + standin__timeout_ms(); }

/* lock held (released while asleep): until woken, or until deadline_ms
   (> 0, monotonic) passes; 0 if it has */
static int standin__wait_on(standin__waitq* q, double deadline_ms) {
    standin__waiter w, **link;
    int r;
    if (deadline_ms > 0 && standin__now_ms() >= deadline_ms) return 0;
    if (sem_init(&w.sem, 0, 0) != 0) return 0;
    w.linked = 1;
    w.next = q->head;
    q->head = &w;
    standin__unlock();
    if (deadline_ms <= 0) {
        while ((r = sem_wait(&w.sem)) != 0 && errno == EINTR) {}
    } else {
        struct timespec ts;
        double left = deadline_ms - standin__now_ms(), ns;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (left < 0) left = 0;
        ns = (double)ts.tv_nsec + left * 1e6;
        ts.tv_sec += (time_t)(ns / 1e9);
        ts.tv_nsec = (long)(ns - (double)(time_t)(ns / 1e9) * 1e9);
        if (ts.tv_nsec < 0) ts.tv_nsec = 0;
        if (ts.tv_nsec > 999999999L) ts.tv_nsec = 999999999L;
        while ((r = sem_timedwait(&w.sem, &ts)) != 0 && errno == EINTR) {}
    }
    standin__lock();
    if (w.linked)
        for (link = &q->head; *link; link = &(*link)->next)
            if (*link == &w) {
                *link = w.next;
                break;
            }
    sem_destroy(&w.sem);
    return deadline_ms <= 0 || standin__now_ms() < deadline_ms;
}

int standin__wait(double deadline_ms) { return standin__wait_on(&standin__progress, deadline_ms); }

int standin__resetting(void) { return standin__g.resetting; }

int standin__device_count(void) {
    return standin__g.device_count > 0 ? standin__g.device_count : STANDIN__DEFAULT_DEVICES;
}

int standin__current_device(void) { return standin__tl_device; }

void standin__set_nccl_hooks(const standin__nccl_hooks* hooks) { standin__g.nccl = hooks; }

/* ------------------------------------------------------------------ */
/* >>calls: counting, fault injection, violations */

#define STANDIN__FN_NAME(name, kind) #name,
#define STANDIN__FN_KIND(name, kind) kind,
static const char* const standin__fn_names[] = { STANDIN__FUNCTIONS(STANDIN__FN_NAME) };
static const int standin__fn_kinds[] = { STANDIN__FUNCTIONS(STANDIN__FN_KIND) };
#undef STANDIN__FN_NAME
#undef STANDIN__FN_KIND

typedef struct standin__inject {
    int fn;                          /* -1: every failable function */
    int left;
    int code;
} standin__inject;

static struct {
    int counts[standin__fn_count];
    int total;
    standin__inject* injects;
    int n_injects, cap_injects;
    char** violations;
    int n_violations, cap_violations;
    int verbose;                     /* STANDIN_VERBOSE=1: violations also go to stderr */
} standin__c;

static int standin__fn_lookup(const char* name) {
    int i;
    for (i = 0; i < standin__fn_count; i++)
        if (strcmp(standin__fn_names[i], name) == 0) return i;
    return -1;
}

void standin__violation(const char* fmt, ...) {
    char buf[1024];
    char* copy;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&standin__vmu);
    if (standin__c.verbose == 0) {
        const char* v = getenv("STANDIN_VERBOSE");
        standin__c.verbose = v && v[0] == '1' ? 1 : -1;
    }
    if (standin__c.verbose > 0) fprintf(stderr, "standin violation: %s\n", buf);
    if (standin__c.n_violations == standin__c.cap_violations) {
        int cap = standin__c.cap_violations ? standin__c.cap_violations * 2 : 16;
        char** v = (char**)realloc(standin__c.violations, sizeof(char*) * (size_t)cap);
        if (!v) { pthread_mutex_unlock(&standin__vmu); return; }
        standin__c.violations = v;
        standin__c.cap_violations = cap;
    }
    copy = (char*)malloc(strlen(buf) + 1);
    if (copy) {
        strcpy(copy, buf);
        standin__c.violations[standin__c.n_violations++] = copy;
    }
    pthread_mutex_unlock(&standin__vmu);
}

int standin__enter(enum standin__fn fn, int* code) {
    int i, fail = 0;
    pthread_mutex_lock(&standin__vmu);
    standin__c.counts[fn]++;
    standin__c.total++;
    if (standin__fn_kinds[fn] != 2) {
        for (i = 0; i < standin__c.n_injects;) {
            standin__inject* in = &standin__c.injects[i];
            if (in->fn < 0 || in->fn == (int)fn) {
                if (--in->left == 0) {
                    if (!fail) *code = in->code;
                    fail = 1;
                    standin__c.injects[i] = standin__c.injects[--standin__c.n_injects];
                    continue;
                }
            }
            i++;
        }
    }
    pthread_mutex_unlock(&standin__vmu);
    if (fail) return 1;
    if (standin__tl_in_hostfn && standin__fn_kinds[fn] != 2) {
        standin__violation("%s called from inside a host function (cudaLaunchHostFunc): CUDA forbids CUDA and NCCL "
                           "calls there", standin__fn_names[fn]);
        *code = standin__fn_kinds[fn] == 0 ? (int)cudaErrorNotPermitted : 5 /* ncclInvalidUsage */;
        return 1;
    }
    return 0;
}

static cudaError_t standin__seterr(cudaError_t e) {
    if (e != cudaSuccess && e != cudaErrorNotReady) standin__tl_error = e;
    return e;
}

#define STANDIN__ENTER(name) do { \
        int standin__code_; \
        if (standin__enter(standin__fn_##name, &standin__code_)) return standin__seterr((cudaError_t)standin__code_); \
    } while (0)

/* ------------------------------------------------------------------ */
/* >>registry */

static size_t standin__hash(const void* p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static void standin__reg_put(standin__obj** tab, size_t cap, standin__obj* o) {
    size_t i = standin__hash(o) & (cap - 1);
    while (tab[i]) i = (i + 1) & (cap - 1);
    tab[i] = o;
}

int standin__register(standin__obj* o, int type) {
    if ((standin__g.reg_n + 1) * 2 > standin__g.reg_cap) {
        size_t cap = standin__g.reg_cap ? standin__g.reg_cap * 2 : 256, i;
        standin__obj** tab = (standin__obj**)calloc(cap, sizeof(standin__obj*));
        if (!tab) return 0;
        for (i = 0; i < standin__g.reg_cap; i++)
            if (standin__g.reg[i]) standin__reg_put(tab, cap, standin__g.reg[i]);
        free(standin__g.reg);
        standin__g.reg = tab;
        standin__g.reg_cap = cap;
    }
    o->type = type;
    o->dead = 0;
    o->serial = ++standin__g.serial;
    o->killed_by = NULL;
    standin__reg_put(standin__g.reg, standin__g.reg_cap, o);
    standin__g.reg_n++;
    return 1;
}

static standin__obj* standin__reg_find(const void* p) {
    size_t i;
    if (!standin__g.reg_cap) return NULL;
    i = standin__hash(p) & (standin__g.reg_cap - 1);
    while (standin__g.reg[i]) {
        if ((const void*)standin__g.reg[i] == p) return standin__g.reg[i];
        i = (i + 1) & (standin__g.reg_cap - 1);
    }
    return NULL;
}

static const char* standin__type_name(int type) {
    switch (type) {
    case STANDIN__STREAM: return "stream";
    case STANDIN__EVENT: return "event";
    case STANDIN__GRAPH: return "graph";
    case STANDIN__EXEC: return "graph exec";
    case STANDIN__COMM: return "communicator";
    default: return "handle";
    }
}

standin__obj* standin__check_handle(const void* h, int type, const char* fn) {
    standin__obj* o = standin__reg_find(h);
    if (!h) {
        standin__violation("%s: the %s is NULL", fn, standin__type_name(type));
        return NULL;
    }
    if (!o) {
        standin__violation("%s: %p is not a %s the stand-in created (uninitialised handle?)", fn, h,
                           standin__type_name(type));
        return NULL;
    }
    if (o->type != type) {
        standin__violation("%s: %s #%u passed where a %s belongs", fn, standin__type_name(o->type), o->serial,
                           standin__type_name(type));
        return NULL;
    }
    if (o->dead) {
        standin__violation("%s: %s #%u used after %s destroyed it", fn, standin__type_name(type), o->serial,
                           o->killed_by ? o->killed_by : "its destroy call");
        return NULL;
    }
    return o;
}

/* ------------------------------------------------------------------ */
/* >>allocations */

/* index of the live allocation containing p, or -1 */
static int standin__alloc_find(const void* p) {
    int lo = 0, hi = standin__g.n_allocs - 1, at = -1;
    uintptr_t x = (uintptr_t)p;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if ((uintptr_t)standin__g.allocs[mid].base <= x) { at = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    if (at >= 0 && x - (uintptr_t)standin__g.allocs[at].base < standin__g.allocs[at].size) return at;
    return -1;
}

static int standin__alloc_add(void* p, size_t size, int device, int host) {
    int i;
    standin__alloc a;
    if (standin__g.n_allocs == standin__g.cap_allocs) {
        int cap = standin__g.cap_allocs ? standin__g.cap_allocs * 2 : 64;
        standin__alloc* v = (standin__alloc*)realloc(standin__g.allocs, sizeof(standin__alloc) * (size_t)cap);
        if (!v) return 0;
        standin__g.allocs = v;
        standin__g.cap_allocs = cap;
    }
    a.base = (const char*)p;
    a.size = size;
    a.device = device;
    a.host = host;
    a.id = ++standin__g.alloc_serial;
    i = standin__g.n_allocs;
    while (i > 0 && (uintptr_t)standin__g.allocs[i - 1].base > (uintptr_t)p) {
        standin__g.allocs[i] = standin__g.allocs[i - 1];
        i--;
    }
    standin__g.allocs[i] = a;
    standin__g.n_allocs++;
    return 1;
}

static void standin__alloc_remove(int i) {
    memmove(&standin__g.allocs[i], &standin__g.allocs[i + 1],
            sizeof(standin__alloc) * (size_t)(standin__g.n_allocs - i - 1));
    standin__g.n_allocs--;
}

int standin__alloc_live(unsigned long long id) {
    int i;
    for (i = 0; i < standin__g.n_allocs; i++)
        if (standin__g.allocs[i].id == id) return 1;
    return 0;
}

int standin__check_extent(const char* fn, const char* what, const void* p, size_t n_bytes, const char* how,
                          standin__alloc* out) {
    int i = standin__alloc_find(p);
    size_t off, room;
    const standin__alloc* a;
    if (i < 0) return 0;
    a = &standin__g.allocs[i];
    *out = *a;
    off = (size_t)((const char*)p - a->base);
    room = a->size - off;
    if (n_bytes <= room) return 1;
    standin__violation("%s: %s %p + %zu bytes%s%s%s runs %zu bytes past the end of its %s allocation of %zu bytes "
                       "at %p (offset %zu): bytes passed where elements belong?",
                       fn, what, p, n_bytes, how ? " (" : "", how ? how : "", how ? ")" : "", n_bytes - room,
                       a->host ? "cudaMallocHost" : "cudaMalloc", a->size, (const void*)a->base, off);
    return -1;
}

/* ------------------------------------------------------------------ */
/* >>streams: the workers and their queues */

static void standin__free_op(standin__op* op) {
    if (op->kind == STANDIN__OP_EXT && op->u.ext.payload) op->u.ext.fns->destroy(op->u.ext.payload);
    op->kind = 0;
}

static void standin__free_item(standin__item* it) {
    int i;
    if (it->kind == STANDIN__ITEM_OP) standin__free_op(&it->op);
    if (it->kind == STANDIN__ITEM_GRAPH) {
        for (i = 0; i < it->n_ops; i++) standin__free_op(&it->ops[i]);
        free(it->ops);
    }
    free(it);
}

/* lock held on entry and exit */
static void standin__run_op(struct CUstream_st* s, standin__op* op) {
    switch (op->kind) {
    case STANDIN__OP_HOSTFN:
        standin__unlock();
        standin__tl_in_hostfn = 1;
        op->u.host.fn(op->u.host.data);
        standin__tl_in_hostfn = 0;
        standin__lock();
        break;
    case STANDIN__OP_MEMCPY:
    case STANDIN__OP_MEMSET: {
        int is_set = op->kind == STANDIN__OP_MEMSET;
        const char* name = is_set ? "cudaMemsetAsync" : "cudaMemcpyAsync";
        if ((op->u.mem.dst_id && !standin__alloc_live(op->u.mem.dst_id)) ||
            (op->u.mem.src_id && !standin__alloc_live(op->u.mem.src_id))) {
            standin__violation("%s on stream #%u: a buffer was freed before the operation ran (it was skipped)",
                               name, s->hdr.serial);
            break;
        }
        standin__unlock();
        if (is_set) memset(op->u.mem.dst, op->u.mem.memset_value, op->u.mem.n);
        else if (op->u.mem.rows) {
            size_t r;
            for (r = 0; r < op->u.mem.rows; r++)
                memmove((char*)op->u.mem.dst + r * op->u.mem.dpitch, (const char*)op->u.mem.src + r * op->u.mem.spitch,
                        op->u.mem.n);
        } else memmove(op->u.mem.dst, op->u.mem.src, op->u.mem.n);
        standin__lock();
        break;
    }
    case STANDIN__OP_EXT:
        standin__unlock();
        op->u.ext.fns->run(op->u.ext.payload, s);
        standin__lock();
        break;
    default:
        break;
    }
}

/* lock held on entry and exit */
static void standin__run_item(struct CUstream_st* s, standin__item* it) {
    int i;
    switch (it->kind) {
    case STANDIN__ITEM_OP:
        standin__run_op(s, &it->op);
        break;
    case STANDIN__ITEM_RECORD:
        if (it->ev->rs == s && it->ev->rpos == it->pos) {
            it->ev->t_ms = standin__now_ms();
            it->ev->t_valid = 1;
        }
        break;
    case STANDIN__ITEM_WAIT:
        while (it->wait_s->n_done < it->wait_pos && !standin__g.resetting) standin__wait(0);
        break;
    case STANDIN__ITEM_GRAPH:
        /* launches of one exec run one after another, in launch order */
        while (it->exec->n_finished != it->launch && !standin__g.resetting) standin__wait(0);
        for (i = 0; i < it->n_ops && !standin__g.resetting; i++) {
            s->cur_pos = (it->pos << STANDIN__POS_SHIFT) | (uint64_t)(i + 1);
            standin__run_op(s, &it->ops[i]);
        }
        it->exec->n_finished++;
        break;
    default:
        break;
    }
}

static void* standin__worker(void* arg) {
    struct CUstream_st* s = (struct CUstream_st*)arg;
    standin__lock();
    for (;;) {
        standin__item* it;
        while (!s->head && !s->hdr.dead && !standin__g.resetting) standin__wait_on(&s->q, 0);
        it = s->head;
        if (!it) break;
        s->cur_pos = it->pos << STANDIN__POS_SHIFT;
        if (!standin__g.resetting) standin__run_item(s, it);
        s->head = it->next;
        if (!s->head) s->tail = NULL;
        standin__free_item(it);
        s->n_done++;
        s->cur_pos = 0;
        standin__broadcast();
    }
    s->exited = 1;
    standin__g.n_workers--;
    standin__broadcast();
    standin__unlock();
    return NULL;
}

/* lock held */
static struct CUstream_st* standin__stream_new(int device, unsigned flags, int priority, int legacy) {
    pthread_attr_t attr;
    pthread_t th;
    struct CUstream_st* s = (struct CUstream_st*)calloc(1, sizeof *s);
    if (!s) return NULL;
    s->device = device;
    s->flags = flags;
    s->priority = priority;
    s->legacy = legacy;
    if (!standin__register(&s->hdr, STANDIN__STREAM)) {
        free(s);
        return NULL;
    }
    s->next_all = standin__g.streams;
    standin__g.streams = s;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &attr, standin__worker, s) != 0) {
        s->hdr.dead = 1;
        s->hdr.killed_by = "a failed cudaStreamCreate";
        s->exited = 1;
        pthread_attr_destroy(&attr);
        return NULL;
    }
    pthread_attr_destroy(&attr);
    standin__g.n_workers++;
    return s;
}

static struct CUstream_st* standin__legacy(int device) {
    if (!standin__g.legacy[device]) standin__g.legacy[device] = standin__stream_new(device, 0, 0, 1);
    return standin__g.legacy[device];
}

/* lock held: 0 and cudaStreamLegacy are the legacy stream of the calling
   thread's device */
static cudaError_t standin__get_stream(cudaStream_t h, const char* fn, struct CUstream_st** out) {
    standin__obj* o;
    *out = NULL;
    if (h == NULL || h == cudaStreamLegacy) {
        *out = standin__legacy(standin__tl_device);
        return *out ? cudaSuccess : cudaErrorMemoryAllocation;
    }
    if (h == cudaStreamPerThread) {
        standin__violation("%s: cudaStreamPerThread is not modelled by the stand-in", fn);
        return cudaErrorInvalidResourceHandle;
    }
    o = standin__check_handle(h, STANDIN__STREAM, fn);
    if (!o) return cudaErrorInvalidResourceHandle;
    *out = (struct CUstream_st*)o;
    return cudaSuccess;
}

cudaError_t standin__stream_check(cudaStream_t h, const char* fn, int* device) {
    struct CUstream_st* s;
    cudaError_t e = standin__get_stream(h, fn, &s);
    if (e == cudaSuccess && device) *device = s->device;
    return e;
}

void standin__stream_set_blocked(void* stream, void* what) { ((struct CUstream_st*)stream)->blocked = what; }
void* standin__stream_blocked(void* stream) { return ((struct CUstream_st*)stream)->blocked; }
uint64_t standin__stream_pos(void* stream) { return ((struct CUstream_st*)stream)->cur_pos; }
unsigned standin__stream_serial(void* stream) { return ((struct CUstream_st*)stream)->hdr.serial; }

static standin__item* standin__item_new(int kind) {
    standin__item* it = (standin__item*)calloc(1, sizeof *it);
    if (it) it->kind = kind;
    return it;
}

static void standin__append(struct CUstream_st* s, standin__item* it) {
    it->pos = ++s->n_enq;
    if (s->tail) s->tail->next = it;
    else s->head = it;
    s->tail = it;
    standin__wake(&s->q);
}

/* lock held: appends it to s, after the waits that the legacy stream's
   implicit synchronisation adds; it->pos is set on success */
static cudaError_t standin__push(struct CUstream_st* s, standin__item* it) {
    struct CUstream_st* t;
    standin__item* waits = NULL;
    if (s->legacy) {
        for (t = standin__g.streams; t; t = t->next_all) {
            standin__item* w;
            if (t == s || t->legacy || t->device != s->device || (t->flags & cudaStreamNonBlocking)) continue;
            if (t->n_done >= t->n_enq) continue;
            w = standin__item_new(STANDIN__ITEM_WAIT);
            if (!w) goto oom;
            w->wait_s = t;
            w->wait_pos = t->n_enq;
            w->next = waits;
            waits = w;
        }
    } else if (!(s->flags & cudaStreamNonBlocking)) {
        t = standin__g.legacy[s->device];
        if (t && t->n_done < t->n_enq) {
            waits = standin__item_new(STANDIN__ITEM_WAIT);
            if (!waits) goto oom;
            waits->wait_s = t;
            waits->wait_pos = t->n_enq;
        }
    }
    while (waits) {
        standin__item* w = waits;
        waits = w->next;
        w->next = NULL;
        standin__append(s, w);
    }
    standin__append(s, it);
    return cudaSuccess;
oom:
    while (waits) {
        standin__item* w = waits;
        waits = w->next;
        free(w);
    }
    return cudaErrorMemoryAllocation;
}

/* lock held: waits until s has completed pos items */
static cudaError_t standin__wait_pos(struct CUstream_st* s, uint64_t pos, double deadline, const char* fn) {
    while (s->n_done < pos) {
        if (standin__g.resetting) return cudaErrorUnknown;
        if (!standin__wait(deadline)) {
            standin__violation("%s: %s%u did not finish its work within %d ms (a collective that never matched, an "
                               "injected NCCL error, or a wait that is never satisfied?)",
                               fn, s->legacy ? "the default stream of device " : "stream #",
                               s->legacy ? (unsigned)s->device : s->hdr.serial, standin__timeout_ms());
            return cudaErrorTimeout;
        }
    }
    return cudaSuccess;
}

/* ------------------------------------------------------------------ */
/* >>capture */

static void standin__invalidate(standin__capture* c) { c->invalid = 1; }

static const char* standin__mode_name(enum cudaStreamCaptureMode m) {
    switch (m) {
    case cudaStreamCaptureModeGlobal: return "cudaStreamCaptureModeGlobal";
    case cudaStreamCaptureModeThreadLocal: return "cudaStreamCaptureModeThreadLocal";
    case cudaStreamCaptureModeRelaxed: return "cudaStreamCaptureModeRelaxed";
    default: return "?";
    }
}

/* Rule 3, lock held: a host synchronisation on `device` (with the whole
   device when device_wide, with stream `target` when not NULL, with work
   recorded into `target_cap` when not NULL) while a stream of that device
   captures. Global mode forbids any such synchronisation, thread-local mode
   any from the capturing thread, relaxed mode those that wait for the
   capture itself. Returns the error to give, after invalidating the
   captures concerned. */
static cudaError_t standin__sync_check(const char* fn, int device, int device_wide, struct CUstream_st* target,
                                       standin__capture* target_cap) {
    standin__capture* c;
    cudaError_t e = cudaSuccess;
    if (target && target->cap && target->cap->invalid) return cudaErrorStreamCaptureInvalidated;
    for (c = standin__g.captures; c; c = c->next_all) {
        int applies;
        if (!c->active || c->invalid || c->device != device) continue;
        applies = device_wide || c->mode == cudaStreamCaptureModeGlobal ||
                  (c->mode == cudaStreamCaptureModeThreadLocal && pthread_equal(c->thread, pthread_self())) ||
                  (target && target->cap == c) || target_cap == c;
        if (!applies) continue;
        standin__violation("%s: host synchronisation while stream #%u on device %d is capturing (%s): CUDA refuses "
                           "it with cudaErrorStreamCaptureUnsupported and invalidates the capture",
                           fn, c->origin->hdr.serial, device, standin__mode_name(c->mode));
        standin__invalidate(c);
        e = cudaErrorStreamCaptureUnsupported;
    }
    return e;
}

/* lock held: work on the legacy stream while a stream of its device
   captures in a mode other than relaxed */
static cudaError_t standin__legacy_check(struct CUstream_st* s, const char* fn) {
    standin__capture* c;
    cudaError_t e = cudaSuccess;
    if (!s->legacy) return cudaSuccess;
    for (c = standin__g.captures; c; c = c->next_all) {
        if (!c->active || c->invalid || c->device != s->device || c->mode == cudaStreamCaptureModeRelaxed) continue;
        standin__violation("%s: work on the legacy default stream of device %d while stream #%u captures: its implicit "
                           "synchronisation would join the capture (cudaErrorStreamCaptureImplicit)",
                           fn, s->device, c->origin->hdr.serial);
        standin__invalidate(c);
        e = cudaErrorStreamCaptureImplicit;
    }
    return e;
}

static int standin__add_dep(int** deps, int* n, int* cap, int d) {
    int i;
    for (i = 0; i < *n; i++)
        if ((*deps)[i] == d) return 1;
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 4;
        int* v = (int*)realloc(*deps, sizeof(int) * (size_t)c);
        if (!v) return 0;
        *deps = v;
        *cap = c;
    }
    (*deps)[(*n)++] = d;
    return 1;
}

/* lock held: adds op as a node of s's capture; the graph then owns it */
static cudaError_t standin__capture_op(struct CUstream_st* s, const standin__op* op) {
    struct CUgraph_st* gr = s->cap->graph;
    standin__node* nd;
    if (s->cap->invalid) return cudaErrorStreamCaptureInvalidated;
    if (s->cap_deps < 1) {
        int* v = (int*)realloc(s->deps, sizeof(int) * 4);
        if (!v) return cudaErrorMemoryAllocation;
        s->deps = v;
        s->cap_deps = 4;
    }
    if (gr->n == gr->cap) {
        int c = gr->cap ? gr->cap * 2 : 16;
        standin__node* v = (standin__node*)realloc(gr->nodes, sizeof(standin__node) * (size_t)c);
        if (!v) return cudaErrorMemoryAllocation;
        gr->nodes = v;
        gr->cap = c;
    }
    nd = &gr->nodes[gr->n];
    nd->op = *op;
    nd->n_deps = s->n_deps;
    nd->deps = NULL;
    if (s->n_deps) {
        nd->deps = (int*)malloc(sizeof(int) * (size_t)s->n_deps);
        if (!nd->deps) return cudaErrorMemoryAllocation;
        memcpy(nd->deps, s->deps, sizeof(int) * (size_t)s->n_deps);
    }
    gr->n_edges += s->n_deps;
    s->deps[0] = gr->n;   /* the stream's work now follows this node alone */
    s->n_deps = 1;
    gr->n++;
    return cudaSuccess;
}

static int standin__capture_join(standin__capture* c, struct CUstream_st* s) {
    int i;
    for (i = 0; i < c->n_members; i++)
        if (c->members[i] == s) return 1;
    if (c->n_members == c->cap_members) {
        int n = c->cap_members ? c->cap_members * 2 : 4;
        struct CUstream_st** v = (struct CUstream_st**)realloc(c->members, sizeof(*v) * (size_t)n);
        if (!v) return 0;
        c->members = v;
        c->cap_members = n;
    }
    c->members[c->n_members++] = s;
    s->cap = c;
    s->n_deps = 0;
    return 1;
}

static void standin__graph_free_nodes(struct CUgraph_st* gr) {
    int i;
    for (i = 0; i < gr->n; i++) {
        standin__free_op(&gr->nodes[i].op);
        free(gr->nodes[i].deps);
    }
    free(gr->nodes);
    gr->nodes = NULL;
    gr->n = gr->cap = gr->n_edges = 0;
}

/* lock held: ends the capture for every member */
static void standin__capture_end(standin__capture* c) {
    int i;
    c->active = 0;
    for (i = 0; i < c->n_members; i++) {
        c->members[i]->cap = NULL;
        c->members[i]->n_deps = 0;
    }
}

/* lock held: submits op to s: into its capture, or onto its queue. On
   success the stand-in owns op (its payload). */
static cudaError_t standin__submit(struct CUstream_st* s, const standin__op* op, const char* fn) {
    standin__item* it;
    cudaError_t e;
    if (s->cap) return standin__capture_op(s, op);
    e = standin__legacy_check(s, fn);
    if (e != cudaSuccess) return e;
    it = standin__item_new(STANDIN__ITEM_OP);
    if (!it) return cudaErrorMemoryAllocation;
    it->op = *op;
    e = standin__push(s, it);
    if (e != cudaSuccess) {
        free(it);
        return e;
    }
    if (op->kind == STANDIN__OP_EXT) op->u.ext.fns->issue(op->u.ext.payload, s, it->pos << STANDIN__POS_SHIFT);
    return cudaSuccess;
}

cudaError_t standin__enqueue_ext(cudaStream_t h, const standin__ext_fns* fns, void* payload, const char* fn) {
    struct CUstream_st* s;
    standin__op op;
    cudaError_t e = standin__get_stream(h, fn, &s);
    if (e != cudaSuccess) return e;
    memset(&op, 0, sizeof op);
    op.kind = STANDIN__OP_EXT;
    op.u.ext.fns = fns;
    op.u.ext.payload = payload;
    return standin__submit(s, &op, fn);
}

/* ------------------------------------------------------------------ */
/* >>device */

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
    STANDIN__ENTER(cudaGetDeviceCount);
    if (!count) return standin__seterr(cudaErrorInvalidValue);
    standin__lock();
    *count = standin__device_count();
    standin__unlock();
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaSetDevice(int device) {
    int n;
    STANDIN__ENTER(cudaSetDevice);
    standin__lock();
    n = standin__device_count();
    standin__unlock();
    if (device < 0 || device >= n) {
        standin__violation("cudaSetDevice: device %d does not exist (%d devices)", device, n);
        return standin__seterr(cudaErrorInvalidDevice);
    }
    standin__tl_device = device;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
    STANDIN__ENTER(cudaGetDevice);
    if (!device) return standin__seterr(cudaErrorInvalidValue);
    *device = standin__tl_device;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void) {
    struct CUstream_st* s;
    int dev = standin__tl_device, n = 0, i;
    struct CUstream_st** list;
    uint64_t* pos;
    cudaError_t e;
    double deadline;
    STANDIN__ENTER(cudaDeviceSynchronize);
    standin__lock();
    e = standin__sync_check("cudaDeviceSynchronize", dev, 1, NULL, NULL);
    if (e != cudaSuccess) {
        standin__unlock();
        return standin__seterr(e);
    }
    for (s = standin__g.streams; s; s = s->next_all)
        if (s->device == dev) n++;
    list = (struct CUstream_st**)malloc(sizeof(*list) * (size_t)(n ? n : 1));
    pos = (uint64_t*)malloc(sizeof(*pos) * (size_t)(n ? n : 1));
    if (!list || !pos) {
        free(list);
        free(pos);
        standin__unlock();
        return standin__seterr(cudaErrorMemoryAllocation);
    }
    n = 0;
    for (s = standin__g.streams; s; s = s->next_all)
        if (s->device == dev) {
            list[n] = s;
            pos[n++] = s->n_enq;
        }
    deadline = standin__deadline();
    for (i = 0; i < n && e == cudaSuccess; i++) e = standin__wait_pos(list[i], pos[i], deadline, "cudaDeviceSynchronize");
    standin__unlock();
    free(list);
    free(pos);
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
    STANDIN__ENTER(cudaDeviceGetStreamPriorityRange);
    if (leastPriority) *leastPriority = STANDIN__PRIO_LEAST;
    if (greatestPriority) *greatestPriority = STANDIN__PRIO_GREATEST;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ */
/* >>stream_api */

static cudaError_t standin__stream_create(cudaStream_t* p, unsigned flags, int priority, const char* fn) {
    struct CUstream_st* s;
    if (!p || (flags & ~(unsigned)cudaStreamNonBlocking)) {
        standin__violation("%s: %s", fn, p ? "unknown flags" : "pStream is NULL");
        return standin__seterr(cudaErrorInvalidValue);
    }
    if (priority < STANDIN__PRIO_GREATEST) priority = STANDIN__PRIO_GREATEST;
    if (priority > STANDIN__PRIO_LEAST) priority = STANDIN__PRIO_LEAST;
    standin__lock();
    s = standin__stream_new(standin__tl_device, flags, priority, 0);
    if (s) standin__g.live_streams++;
    standin__unlock();
    if (!s) return standin__seterr(cudaErrorMemoryAllocation);
    *p = s;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* pStream) {
    STANDIN__ENTER(cudaStreamCreate);
    return standin__stream_create(pStream, 0, 0, "cudaStreamCreate");
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
    STANDIN__ENTER(cudaStreamCreateWithFlags);
    return standin__stream_create(pStream, flags, 0, "cudaStreamCreateWithFlags");
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
    STANDIN__ENTER(cudaStreamCreateWithPriority);
    return standin__stream_create(pStream, flags, priority, "cudaStreamCreateWithPriority");
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
    struct CUstream_st* s;
    cudaError_t e = cudaSuccess;
    STANDIN__ENTER(cudaStreamDestroy);
    standin__lock();
    if (stream == NULL || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
        standin__violation("cudaStreamDestroy: the default stream cannot be destroyed");
        e = cudaErrorInvalidResourceHandle;
    } else if ((e = standin__get_stream(stream, "cudaStreamDestroy", &s)) == cudaSuccess) {
        if (s->cap) {
            standin__violation("cudaStreamDestroy: stream #%u is capturing (end the capture first)", s->hdr.serial);
            standin__invalidate(s->cap);
            e = cudaErrorIllegalState;
        } else {
            s->hdr.dead = 1;
            s->hdr.killed_by = "cudaStreamDestroy";
            standin__g.live_streams--;
            standin__wake(&s->q);    /* the worker finishes the queue, then exits */
        }
    }
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) {
    struct CUstream_st* s;
    cudaError_t e;
    STANDIN__ENTER(cudaStreamSynchronize);
    standin__lock();
    e = standin__get_stream(stream, "cudaStreamSynchronize", &s);
    if (e == cudaSuccess) e = standin__sync_check("cudaStreamSynchronize", s->device, 0, s, NULL);
    if (e == cudaSuccess) e = standin__wait_pos(s, s->n_enq, standin__deadline(), "cudaStreamSynchronize");
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) {
    struct CUstream_st* s;
    cudaError_t e;
    STANDIN__ENTER(cudaStreamQuery);
    standin__lock();
    e = standin__get_stream(stream, "cudaStreamQuery", &s);
    if (e == cudaSuccess && s->cap) {
        if (s->cap->invalid) e = cudaErrorStreamCaptureInvalidated;
        else {
            standin__violation("cudaStreamQuery: stream #%u is capturing: CUDA refuses the query "
                               "(cudaErrorStreamCaptureUnsupported) and invalidates the capture", s->hdr.serial);
            standin__invalidate(s->cap);
            e = cudaErrorStreamCaptureUnsupported;
        }
    } else if (e == cudaSuccess && s->n_done < s->n_enq) {
        e = cudaErrorNotReady;
    }
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
    struct CUstream_st* s;
    cudaError_t e;
    standin__op op;
    STANDIN__ENTER(cudaLaunchHostFunc);
    if (!fn) {
        standin__violation("cudaLaunchHostFunc: fn is NULL");
        return standin__seterr(cudaErrorInvalidValue);
    }
    standin__lock();
    e = standin__get_stream(stream, "cudaLaunchHostFunc", &s);
    if (e == cudaSuccess) {
        memset(&op, 0, sizeof op);
        op.kind = STANDIN__OP_HOSTFN;
        op.u.host.fn = fn;
        op.u.host.data = userData;
        e = standin__submit(s, &op, "cudaLaunchHostFunc");
    }
    standin__unlock();
    return standin__seterr(e);
}

/* ------------------------------------------------------------------ */
/* >>events */

static cudaError_t standin__event_create(cudaEvent_t* p, unsigned flags, const char* fn) {
    struct CUevent_st* ev;
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!p || (flags & ~known) || ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming))) {
        standin__violation("%s: %s", fn, !p ? "event is NULL" : "invalid flags");
        return standin__seterr(cudaErrorInvalidValue);
    }
    ev = (struct CUevent_st*)calloc(1, sizeof *ev);
    if (!ev) return standin__seterr(cudaErrorMemoryAllocation);
    ev->flags = flags;
    ev->device = standin__tl_device;
    standin__lock();
    if (!standin__register(&ev->hdr, STANDIN__EVENT)) {
        standin__unlock();
        free(ev);
        return standin__seterr(cudaErrorMemoryAllocation);
    }
    ev->next_all = standin__g.events;
    standin__g.events = ev;
    standin__g.live_events++;
    standin__unlock();
    *p = ev;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
    STANDIN__ENTER(cudaEventCreate);
    return standin__event_create(event, 0, "cudaEventCreate");
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    STANDIN__ENTER(cudaEventCreateWithFlags);
    return standin__event_create(event, flags, "cudaEventCreateWithFlags");
}

static cudaError_t standin__get_event(cudaEvent_t h, const char* fn, struct CUevent_st** out) {
    standin__obj* o = standin__check_handle(h, STANDIN__EVENT, fn);
    *out = (struct CUevent_st*)o;
    return o ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
    struct CUevent_st* ev;
    cudaError_t e;
    STANDIN__ENTER(cudaEventDestroy);
    standin__lock();
    e = standin__get_event(event, "cudaEventDestroy", &ev);
    if (e == cudaSuccess) {
        ev->hdr.dead = 1;
        ev->hdr.killed_by = "cudaEventDestroy";
        standin__g.live_events--;
    }
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    struct CUevent_st* ev;
    struct CUstream_st* s;
    cudaError_t e;
    STANDIN__ENTER(cudaEventRecord);
    standin__lock();
    e = standin__get_event(event, "cudaEventRecord", &ev);
    if (e == cudaSuccess) e = standin__get_stream(stream, "cudaEventRecord", &s);
    if (e == cudaSuccess && ev->device != s->device) {
        standin__violation("cudaEventRecord: event #%u of device %d recorded on a stream of device %d (cudaSetDevice "
                           "missing?)", ev->hdr.serial, ev->device, s->device);
        e = cudaErrorInvalidResourceHandle;
    }
    if (e == cudaSuccess && s->cap) {
        if (s->cap->invalid) e = cudaErrorStreamCaptureInvalidated;
        else {
            int* d = NULL;
            if (s->n_deps) {
                d = (int*)malloc(sizeof(int) * (size_t)s->n_deps);
                if (!d) e = cudaErrorMemoryAllocation;
                else memcpy(d, s->deps, sizeof(int) * (size_t)s->n_deps);
            }
            if (e == cudaSuccess) {
                free(ev->cap_deps);
                ev->cap_deps = d;
                ev->n_cap_deps = s->n_deps;
                ev->cap = s->cap;
                ev->recorded = 1;
                ev->rs = NULL;
                ev->t_valid = 0;
            }
        }
    } else if (e == cudaSuccess) {
        standin__item* it;
        e = standin__legacy_check(s, "cudaEventRecord");
        if (e == cudaSuccess) {
            it = standin__item_new(STANDIN__ITEM_RECORD);
            if (!it) e = cudaErrorMemoryAllocation;
            else {
                it->ev = ev;
                e = standin__push(s, it);
                if (e != cudaSuccess) free(it);
                else {
                    ev->recorded = 1;
                    ev->rs = s;
                    ev->rpos = it->pos;
                    ev->t_valid = 0;
                    ev->cap = NULL;
                }
            }
        }
    }
    standin__unlock();
    return standin__seterr(e);
}

/* lock held: an event whose latest record went into a capture, used
   outside it */
static cudaError_t standin__captured_event(struct CUevent_st* ev, const char* fn) {
    standin__violation("%s: event #%u was last recorded into a stream capture%s: records in a capture make no graph "
                       "node, so nothing outside the capture can wait for it (cudaErrorCapturedEvent)",
                       fn, ev->hdr.serial, ev->cap->active ? "" : " that has ended");
    return cudaErrorCapturedEvent;
}

static int standin__event_done(const struct CUevent_st* ev) { return !ev->rs || ev->rs->n_done >= ev->rpos; }

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
    struct CUevent_st* ev;
    cudaError_t e;
    STANDIN__ENTER(cudaEventQuery);
    standin__lock();
    e = standin__get_event(event, "cudaEventQuery", &ev);
    if (e == cudaSuccess && ev->cap) e = standin__captured_event(ev, "cudaEventQuery");
    else if (e == cudaSuccess && !standin__event_done(ev)) e = cudaErrorNotReady;
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
    struct CUevent_st* ev;
    cudaError_t e;
    STANDIN__ENTER(cudaEventSynchronize);
    standin__lock();
    e = standin__get_event(event, "cudaEventSynchronize", &ev);
    if (e == cudaSuccess && !ev->recorded) {
        standin__violation("cudaEventSynchronize: event #%u was never recorded: CUDA returns at once as if it had "
                           "completed, so this synchronises with nothing", ev->hdr.serial);
        e = cudaErrorIllegalState;
    }
    if (e == cudaSuccess) e = standin__sync_check("cudaEventSynchronize", ev->device, 0, NULL, ev->cap);
    if (e == cudaSuccess && ev->cap) e = standin__captured_event(ev, "cudaEventSynchronize");
    if (e == cudaSuccess && ev->rs) e = standin__wait_pos(ev->rs, ev->rpos, standin__deadline(), "cudaEventSynchronize");
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    struct CUevent_st *a, *b;
    cudaError_t e;
    STANDIN__ENTER(cudaEventElapsedTime);
    if (!ms) return standin__seterr(cudaErrorInvalidValue);
    standin__lock();
    e = standin__get_event(start, "cudaEventElapsedTime", &a);
    if (e == cudaSuccess) e = standin__get_event(end, "cudaEventElapsedTime", &b);
    if (e == cudaSuccess && ((a->flags | b->flags) & cudaEventDisableTiming)) {
        standin__violation("cudaEventElapsedTime: event #%u was created with cudaEventDisableTiming",
                           (a->flags & cudaEventDisableTiming) ? a->hdr.serial : b->hdr.serial);
        e = cudaErrorInvalidResourceHandle;
    }
    if (e == cudaSuccess && (!a->recorded || !b->recorded)) {
        standin__violation("cudaEventElapsedTime: event #%u was never recorded",
                           !a->recorded ? a->hdr.serial : b->hdr.serial);
        e = cudaErrorInvalidResourceHandle;
    }
    if (e == cudaSuccess && (a->cap || b->cap)) e = standin__captured_event(a->cap ? a : b, "cudaEventElapsedTime");
    if (e == cudaSuccess && (!standin__event_done(a) || !standin__event_done(b))) e = cudaErrorNotReady;
    if (e == cudaSuccess) *ms = (float)(b->t_ms - a->t_ms);
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    struct CUstream_st* s;
    struct CUevent_st* ev;
    cudaError_t e;
    int i;
    STANDIN__ENTER(cudaStreamWaitEvent);
    if (flags & ~(unsigned)cudaEventWaitExternal) {
        standin__violation("cudaStreamWaitEvent: unknown flags 0x%x", flags);
        return standin__seterr(cudaErrorInvalidValue);
    }
    standin__lock();
    e = standin__get_stream(stream, "cudaStreamWaitEvent", &s);
    if (e == cudaSuccess) e = standin__get_event(event, "cudaStreamWaitEvent", &ev);
    if (e != cudaSuccess) goto done;
    if (!ev->recorded) {
        standin__violation("cudaStreamWaitEvent: stream #%u waits on event #%u, which was never recorded: CUDA "
                           "treats it as complete, so this orders nothing", s->hdr.serial, ev->hdr.serial);
        e = cudaErrorIllegalState;
        goto done;
    }
    if (ev->cap) {
        standin__capture* c = ev->cap;
        if (!c->active) {
            e = standin__captured_event(ev, "cudaStreamWaitEvent");
        } else if (c->invalid) {
            e = cudaErrorStreamCaptureInvalidated;
        } else if (s->cap && s->cap != c) {
            standin__violation("cudaStreamWaitEvent: stream #%u (capturing from stream #%u) waits on event #%u "
                               "recorded in the capture of stream #%u: two captures cannot merge",
                               s->hdr.serial, s->cap->origin->hdr.serial, ev->hdr.serial, c->origin->hdr.serial);
            standin__invalidate(c);
            standin__invalidate(s->cap);
            e = cudaErrorStreamCaptureMerge;
        } else {
            if (!s->cap) {
                if (s->legacy) {
                    standin__violation("cudaStreamWaitEvent: the legacy default stream cannot join a capture");
                    standin__invalidate(c);
                    e = cudaErrorStreamCaptureImplicit;
                    goto done;
                }
                if (!standin__capture_join(c, s)) { e = cudaErrorMemoryAllocation; goto done; }
            }
            for (i = 0; i < ev->n_cap_deps; i++)
                if (!standin__add_dep(&s->deps, &s->n_deps, &s->cap_deps, ev->cap_deps[i])) e = cudaErrorMemoryAllocation;
        }
    } else if (s->cap) {
        if (s->cap->invalid) e = cudaErrorStreamCaptureInvalidated;
        else {
            standin__violation("cudaStreamWaitEvent: capturing stream #%u waits on event #%u recorded outside the "
                               "capture: the dependency would cross the capture boundary "
                               "(cudaErrorStreamCaptureIsolation)", s->hdr.serial, ev->hdr.serial);
            standin__invalidate(s->cap);
            e = cudaErrorStreamCaptureIsolation;
        }
    } else {
        standin__item* it;
        e = standin__legacy_check(s, "cudaStreamWaitEvent");
        if (e != cudaSuccess) goto done;
        it = standin__item_new(STANDIN__ITEM_WAIT);
        if (!it) { e = cudaErrorMemoryAllocation; goto done; }
        it->wait_s = ev->rs;
        it->wait_pos = ev->rpos;
        e = standin__push(s, it);
        if (e != cudaSuccess) free(it);
    }
done:
    standin__unlock();
    return standin__seterr(e);
}

/* ------------------------------------------------------------------ */
/* >>capture_api */

cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
    struct CUstream_st* s;
    standin__capture* c;
    struct CUgraph_st* gr;
    cudaError_t e;
    STANDIN__ENTER(cudaStreamBeginCapture);
    if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
        mode != cudaStreamCaptureModeRelaxed) {
        standin__violation("cudaStreamBeginCapture: unknown mode %d", (int)mode);
        return standin__seterr(cudaErrorInvalidValue);
    }
    standin__lock();
    e = standin__get_stream(stream, "cudaStreamBeginCapture", &s);
    if (e == cudaSuccess && s->legacy) {
        standin__violation("cudaStreamBeginCapture: the legacy default stream cannot be captured");
        e = cudaErrorStreamCaptureUnsupported;
    } else if (e == cudaSuccess && s->cap) {
        standin__violation("cudaStreamBeginCapture: stream #%u is already capturing", s->hdr.serial);
        e = cudaErrorIllegalState;
    }
    if (e == cudaSuccess) {
        c = (standin__capture*)calloc(1, sizeof *c);
        gr = (struct CUgraph_st*)calloc(1, sizeof *gr);
        if (!c || !gr || !standin__capture_join(c, s)) {
            free(c);
            free(gr);
            e = cudaErrorMemoryAllocation;
        } else {
            c->active = 1;
            c->mode = mode;
            c->thread = pthread_self();
            c->device = s->device;
            c->origin = s;
            c->graph = gr;
            c->next_all = standin__g.captures;
            standin__g.captures = c;
        }
    }
    standin__unlock();
    return standin__seterr(e);
}

/* lock held: is every dependency of m's current work an ancestor of (or
   one of) the origin's current dependencies */
static int standin__joined(const char* anc, const struct CUstream_st* m) {
    int i;
    for (i = 0; i < m->n_deps; i++)
        if (!anc[m->deps[i]]) return 0;
    return 1;
}

cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
    struct CUstream_st* s;
    standin__capture* c;
    struct CUgraph_st* gr;
    cudaError_t e;
    char* anc = NULL;
    int* stack = NULL;
    int i, top = 0;
    STANDIN__ENTER(cudaStreamEndCapture);
    if (!pGraph) return standin__seterr(cudaErrorInvalidValue);
    standin__lock();
    e = standin__get_stream(stream, "cudaStreamEndCapture", &s);
    if (e != cudaSuccess) goto done;
    c = s->cap;
    if (!c) {
        standin__violation("cudaStreamEndCapture: stream #%u is not capturing", s->hdr.serial);
        e = cudaErrorIllegalState;
        goto done;
    }
    if (c->origin != s) {
        standin__violation("cudaStreamEndCapture: stream #%u joined the capture of stream #%u; only the stream that "
                           "began it can end it", s->hdr.serial, c->origin->hdr.serial);
        standin__invalidate(c);
        e = cudaErrorStreamCaptureUnmatched;
        goto done;
    }
    if (c->mode != cudaStreamCaptureModeRelaxed && !pthread_equal(c->thread, pthread_self())) {
        standin__violation("cudaStreamEndCapture: the capture of stream #%u (%s) is ended by another thread than "
                           "the one that began it", s->hdr.serial, standin__mode_name(c->mode));
        e = cudaErrorStreamCaptureWrongThread;
        goto done;
    }
    gr = c->graph;
    *pGraph = NULL;
    if (c->invalid) {
        standin__capture_end(c);
        e = cudaErrorStreamCaptureInvalidated;
        goto discard;
    }
    /* ancestors of the origin's current work */
    anc = (char*)calloc((size_t)gr->n + 1, 1);
    stack = (int*)malloc(sizeof(int) * ((size_t)gr->n + (size_t)s->n_deps + 1));
    if (!anc || !stack) {
        standin__capture_end(c);
        e = cudaErrorMemoryAllocation;
        goto discard;
    }
    for (i = 0; i < s->n_deps; i++) stack[top++] = s->deps[i];
    while (top) {
        int v = stack[--top], j;
        if (anc[v]) continue;
        anc[v] = 1;
        for (j = 0; j < gr->nodes[v].n_deps; j++)
            if (!anc[gr->nodes[v].deps[j]]) stack[top++] = gr->nodes[v].deps[j];
    }
    for (i = 0; i < c->n_members; i++) {
        struct CUstream_st* m = c->members[i];
        if (m == s || standin__joined(anc, m)) continue;
        standin__violation("cudaStreamEndCapture: stream #%u joined the capture of stream #%u (it waited on an event "
                           "recorded there) and its later work was never joined back: record an event on stream #%u "
                           "and make stream #%u wait on it before ending the capture",
                           m->hdr.serial, s->hdr.serial, m->hdr.serial, s->hdr.serial);
        e = cudaErrorStreamCaptureUnjoined;
    }
    standin__capture_end(c);
    if (e != cudaSuccess) goto discard;
    if (!standin__register(&gr->hdr, STANDIN__GRAPH)) {
        e = cudaErrorMemoryAllocation;
        goto discard;
    }
    gr->next_all = standin__g.graphs;
    standin__g.graphs = gr;
    standin__g.live_graphs++;
    c->graph = NULL;
    *pGraph = gr;
    goto done;
discard:
    standin__graph_free_nodes(gr);
    free(gr);
    c->graph = NULL;
done:
    standin__unlock();
    free(anc);
    free(stack);
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus) {
    struct CUstream_st* s;
    cudaError_t e;
    STANDIN__ENTER(cudaStreamIsCapturing);
    if (!pCaptureStatus) return standin__seterr(cudaErrorInvalidValue);
    standin__lock();
    e = standin__get_stream(stream, "cudaStreamIsCapturing", &s);
    if (e == cudaSuccess)
        *pCaptureStatus = !s->cap ? cudaStreamCaptureStatusNone
                          : s->cap->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    standin__unlock();
    return standin__seterr(e);
}

/* ------------------------------------------------------------------ */
/* >>graphs */

/* lock held: a copy of op (ext payloads cloned); 0 when out of memory */
static int standin__clone_op(standin__op* to, const standin__op* from) {
    *to = *from;
    if (from->kind == STANDIN__OP_EXT) {
        to->u.ext.payload = from->u.ext.fns->clone(from->u.ext.payload);
        if (!to->u.ext.payload) {
            to->kind = 0;
            return 0;
        }
    }
    return 1;
}

cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
    struct CUgraph_st* gr;
    struct CUgraphExec_st* ex = NULL;
    cudaError_t e = cudaSuccess;
    int i;
    STANDIN__ENTER(cudaGraphInstantiate);
    if (!pGraphExec || (flags & ~15ULL)) {
        standin__violation("cudaGraphInstantiate: %s", pGraphExec ? "unknown flags" : "pGraphExec is NULL");
        return standin__seterr(cudaErrorInvalidValue);
    }
    standin__lock();
    gr = (struct CUgraph_st*)standin__check_handle(graph, STANDIN__GRAPH, "cudaGraphInstantiate");
    if (!gr) {
        e = cudaErrorInvalidResourceHandle;
        goto done;
    }
    ex = (struct CUgraphExec_st*)calloc(1, sizeof *ex);
    if (ex && gr->n) ex->ops = (standin__op*)calloc((size_t)gr->n, sizeof(standin__op));
    if (!ex || (gr->n && !ex->ops)) goto oom;
    for (i = 0; i < gr->n; i++) {
        if (!standin__clone_op(&ex->ops[i], &gr->nodes[i].op)) goto oom;
        ex->n = i + 1;
    }
    if (!standin__register(&ex->hdr, STANDIN__EXEC)) goto oom;
    ex->next_all = standin__g.execs;
    standin__g.execs = ex;
    standin__g.live_execs++;
    *pGraphExec = ex;
    goto done;
oom:
    if (ex) {
        for (i = 0; i < ex->n; i++) standin__free_op(&ex->ops[i]);
        free(ex->ops);
        free(ex);
    }
    e = cudaErrorMemoryAllocation;
done:
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
    struct CUgraphExec_st* ex;
    struct CUstream_st* s;
    standin__item* it = NULL;
    cudaError_t e;
    int i;
    STANDIN__ENTER(cudaGraphLaunch);
    standin__lock();
    ex = (struct CUgraphExec_st*)standin__check_handle(graphExec, STANDIN__EXEC, "cudaGraphLaunch");
    e = ex ? standin__get_stream(stream, "cudaGraphLaunch", &s) : cudaErrorInvalidResourceHandle;
    if (e != cudaSuccess) goto done;
    if (s->cap) {
        standin__violation("cudaGraphLaunch into capturing stream #%u: graphs as nodes of other graphs are not "
                           "modelled by the stand-in", s->hdr.serial);
        standin__invalidate(s->cap);
        e = cudaErrorStreamCaptureUnsupported;
        goto done;
    }
    e = standin__legacy_check(s, "cudaGraphLaunch");
    if (e != cudaSuccess) goto done;
    it = standin__item_new(STANDIN__ITEM_GRAPH);
    if (it && ex->n) it->ops = (standin__op*)calloc((size_t)ex->n, sizeof(standin__op));
    if (!it || (ex->n && !it->ops)) goto oom;
    for (i = 0; i < ex->n; i++) {
        if (!standin__clone_op(&it->ops[i], &ex->ops[i])) goto oom;
        it->n_ops = i + 1;
    }
    it->exec = ex;
    e = standin__push(s, it);
    if (e != cudaSuccess) goto fail;
    it->launch = ex->n_launched++;
    for (i = 0; i < it->n_ops; i++)
        if (it->ops[i].kind == STANDIN__OP_EXT)
            it->ops[i].u.ext.fns->issue(it->ops[i].u.ext.payload, s,
                                        (it->pos << STANDIN__POS_SHIFT) | (uint64_t)(i + 1));
    goto done;
oom:
    e = cudaErrorMemoryAllocation;
fail:
    if (it) {
        it->kind = STANDIN__ITEM_GRAPH;
        standin__free_item(it);
    }
done:
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
    struct CUgraphExec_st* ex;
    STANDIN__ENTER(cudaGraphExecDestroy);
    standin__lock();
    ex = (struct CUgraphExec_st*)standin__check_handle(graphExec, STANDIN__EXEC, "cudaGraphExecDestroy");
    if (ex) {
        ex->hdr.dead = 1;
        ex->hdr.killed_by = "cudaGraphExecDestroy";
        standin__g.live_execs--;
    }
    standin__unlock();
    return ex ? cudaSuccess : standin__seterr(cudaErrorInvalidResourceHandle);
}

cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph) {
    struct CUgraph_st* gr;
    STANDIN__ENTER(cudaGraphDestroy);
    standin__lock();
    gr = (struct CUgraph_st*)standin__check_handle(graph, STANDIN__GRAPH, "cudaGraphDestroy");
    if (gr) {
        gr->hdr.dead = 1;
        gr->hdr.killed_by = "cudaGraphDestroy";
        standin__g.live_graphs--;
    }
    standin__unlock();
    return gr ? cudaSuccess : standin__seterr(cudaErrorInvalidResourceHandle);
}

const char* standin__graph_holder(const standin__ext_fns* fns, int (*holds)(const void* payload, const void* arg),
                                  const void* arg, char* buf, size_t size) {
    struct CUgraph_st* gr;
    struct CUgraphExec_st* ex;
    standin__capture* c;
    int i;
#define STANDIN__HOLDS(op) ((op).kind == STANDIN__OP_EXT && (op).u.ext.fns == fns && (op).u.ext.payload && \
                            holds((op).u.ext.payload, arg))
    for (c = standin__g.captures; c; c = c->next_all)
        if (c->active && c->graph)
            for (i = 0; i < c->graph->n; i++)
                if (STANDIN__HOLDS(c->graph->nodes[i].op)) {
                    snprintf(buf, size, "an open capture (origin stream #%u)", c->origin ? c->origin->hdr.serial : 0u);
                    return buf;
                }
    for (gr = standin__g.graphs; gr; gr = gr->next_all)
        if (!gr->hdr.dead)
            for (i = 0; i < gr->n; i++)
                if (STANDIN__HOLDS(gr->nodes[i].op)) {
                    snprintf(buf, size, "CUDA graph #%u", gr->hdr.serial);
                    return buf;
                }
    for (ex = standin__g.execs; ex; ex = ex->next_all)
        if (!ex->hdr.dead)
            for (i = 0; i < ex->n; i++)
                if (STANDIN__HOLDS(ex->ops[i])) {
                    snprintf(buf, size, "CUDA graph exec #%u", ex->hdr.serial);
                    return buf;
                }
#undef STANDIN__HOLDS
    return NULL;
}

/* ------------------------------------------------------------------ */
/* >>memory */

static cudaError_t standin__malloc(void** p, size_t size, int host, const char* fn) {
    void* mem = NULL;
    int ok;
    if (!p) {
        standin__violation("%s: the pointer to the result is NULL", fn);
        return standin__seterr(cudaErrorInvalidValue);
    }
    if (size == 0) {
        *p = NULL;
        return cudaSuccess;
    }
    if (posix_memalign(&mem, 256, size) != 0) return standin__seterr(cudaErrorMemoryAllocation);
    memset(mem, 0xff, size);     /* fresh device memory is not zero: NaN as float, -1 as int */
    standin__lock();
    ok = standin__alloc_add(mem, size, standin__tl_device, host);
    standin__unlock();
    if (!ok) {
        free(mem);
        return standin__seterr(cudaErrorMemoryAllocation);
    }
    *p = mem;
    return cudaSuccess;
}

/* lock held: waits for the work enqueued so far on the streams of device */
static cudaError_t standin__drain_device(int device, const char* fn) {
    struct CUstream_st* s;
    double deadline = standin__deadline();
    cudaError_t e = cudaSuccess;
    int again = 1;
    while (again && e == cudaSuccess) {
        again = 0;
        for (s = standin__g.streams; s && e == cudaSuccess; s = s->next_all) {
            if (s->device != device || s->n_done >= s->n_enq) continue;
            e = standin__wait_pos(s, s->n_enq, deadline, fn);
            again = 1;   /* the list may have changed while waiting */
            break;
        }
    }
    return e;
}

static cudaError_t standin__free(void* p, int host, const char* fn) {
    int i;
    cudaError_t e = cudaSuccess;
    standin__alloc a;
    if (!p) return cudaSuccess;
    standin__lock();
    i = standin__alloc_find(p);
    if (i < 0 || standin__g.allocs[i].base != (const char*)p || standin__g.allocs[i].host != host) {
        if (i < 0)
            standin__violation("%s: %p is not a live allocation (freed twice, or never allocated by %s?)", fn, p,
                               host ? "cudaMallocHost" : "cudaMalloc");
        else if (standin__g.allocs[i].base != (const char*)p)
            standin__violation("%s: %p is %zu bytes inside an allocation, not its start", fn, p,
                               (size_t)((const char*)p - standin__g.allocs[i].base));
        else
            standin__violation("%s: %p was allocated with %s", fn, p, host ? "cudaMalloc" : "cudaMallocHost");
        standin__unlock();
        return standin__seterr(cudaErrorInvalidValue);
    }
    a = standin__g.allocs[i];
    if (!host) e = standin__sync_check(fn, a.device, 1, NULL, NULL);
    if (e == cudaSuccess) e = standin__drain_device(host ? standin__tl_device : a.device, fn);
    if (e == cudaSuccess) {
        i = standin__alloc_find(p);
        if (i >= 0 && standin__g.allocs[i].id == a.id) standin__alloc_remove(i);
        else e = cudaErrorInvalidValue;    /* freed by another thread meanwhile */
    }
    standin__unlock();
    if (e == cudaSuccess) free(p);
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaMalloc(void** devPtr, size_t size) {
    STANDIN__ENTER(cudaMalloc);
    return standin__malloc(devPtr, size, 0, "cudaMalloc");
}

cudaError_t CUDARTAPI cudaFree(void* devPtr) {
    STANDIN__ENTER(cudaFree);
    return standin__free(devPtr, 0, "cudaFree");
}

cudaError_t CUDARTAPI cudaMallocHost(void** ptr, size_t size) {
    STANDIN__ENTER(cudaMallocHost);
    return standin__malloc(ptr, size, 1, "cudaMallocHost");
}

cudaError_t CUDARTAPI cudaFreeHost(void* ptr) {
    STANDIN__ENTER(cudaFreeHost);
    return standin__free(ptr, 1, "cudaFreeHost");
}

static const char* standin__kind_name(enum cudaMemcpyKind k) {
    switch (k) {
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault: return "cudaMemcpyDefault";
    default: return "?";
    }
}

/* lock held: checks a copy (src != NULL) or a memset of n bytes at dst
   (n_src at src: a 2-D copy's extents differ) and fills op */
static cudaError_t standin__mem_op2(const char* fn, int is_copy, void* dst, const void* src, size_t n, size_t n_src,
                                    int value, enum cudaMemcpyKind kind, standin__op* op) {
    standin__alloc ad, as;
    int rd, rs = 0;
    memset(op, 0, sizeof *op);
    op->kind = is_copy ? STANDIN__OP_MEMCPY : STANDIN__OP_MEMSET;
    op->u.mem.dst = dst;
    op->u.mem.src = src;
    op->u.mem.n = n;
    op->u.mem.memset_value = value;
    if (is_copy && ((int)kind < (int)cudaMemcpyHostToHost || (int)kind > (int)cudaMemcpyDefault)) {
        standin__violation("%s: unknown cudaMemcpyKind %d", fn, (int)kind);
        return cudaErrorInvalidMemcpyDirection;
    }
    if (n == 0) return cudaSuccess;
    if (!dst || (is_copy && !src)) {
        standin__violation("%s: NULL pointer for %zu bytes", fn, n);
        return cudaErrorInvalidValue;
    }
    rd = standin__check_extent(fn, "dst", dst, n, NULL, &ad);
    if (is_copy) rs = standin__check_extent(fn, "src", src, n_src, NULL, &as);
    if (rd < 0 || rs < 0) return cudaErrorInvalidValue;
    if (!is_copy) {
        if (rd == 0 || ad.host) {
            standin__violation("%s: dst %p is not device memory (not inside any cudaMalloc allocation)", fn, dst);
            return cudaErrorInvalidValue;
        }
    } else {
        int dst_dev = rd > 0 && !ad.host, src_dev = rs > 0 && !as.host;
        int want_dst = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
        int want_src = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
        if (kind != cudaMemcpyDefault && ((want_dst && !dst_dev) || (want_src && !src_dev) ||
                                          (!want_dst && dst_dev) || (!want_src && src_dev))) {
            standin__violation("%s: %s, but dst is %s memory and src is %s memory", fn, standin__kind_name(kind),
                               dst_dev ? "device" : "host", src_dev ? "device" : "host");
            return cudaErrorInvalidValue;
        }
        if (rs > 0) op->u.mem.src_id = as.id;
    }
    if (rd > 0) op->u.mem.dst_id = ad.id;
    return cudaSuccess;
}

static cudaError_t standin__mem_op(const char* fn, int is_copy, void* dst, const void* src, size_t n, int value,
                                   enum cudaMemcpyKind kind, standin__op* op) {
    return standin__mem_op2(fn, is_copy, dst, src, n, n, value, kind, op);
}

cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    struct CUstream_st* s;
    standin__op op;
    cudaError_t e;
    STANDIN__ENTER(cudaMemcpy);
    standin__lock();
    e = standin__sync_check("cudaMemcpy", standin__tl_device, 1, NULL, NULL);
    if (e == cudaSuccess) e = standin__mem_op("cudaMemcpy", 1, dst, src, count, 0, kind, &op);
    if (e == cudaSuccess) e = standin__get_stream(NULL, "cudaMemcpy", &s);
    if (e == cudaSuccess) e = standin__submit(s, &op, "cudaMemcpy");
    if (e == cudaSuccess) e = standin__wait_pos(s, s->n_enq, standin__deadline(), "cudaMemcpy");
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                      cudaStream_t stream) {
    struct CUstream_st* s;
    standin__op op;
    cudaError_t e;
    STANDIN__ENTER(cudaMemcpyAsync);
    standin__lock();
    e = standin__get_stream(stream, "cudaMemcpyAsync", &s);
    if (e == cudaSuccess) e = standin__mem_op("cudaMemcpyAsync", 1, dst, src, count, 0, kind, &op);
    if (e == cudaSuccess) e = standin__submit(s, &op, "cudaMemcpyAsync");
    standin__unlock();
    return standin__seterr(e);
}

/* height rows of width bytes; each side's extent, (height - 1) * pitch +
   width, checked as a 1-D copy's is. */
cudaError_t CUDARTAPI cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                        size_t height, enum cudaMemcpyKind kind, cudaStream_t stream) {
    struct CUstream_st* s;
    standin__op op;
    cudaError_t e;
    int empty = width == 0 || height == 0;
    STANDIN__ENTER(cudaMemcpy2DAsync);
    standin__lock();
    e = standin__get_stream(stream, "cudaMemcpy2DAsync", &s);
    if (e == cudaSuccess && !empty && (dpitch < width || spitch < width)) {
        standin__violation("cudaMemcpy2DAsync: width %zu above dpitch %zu or spitch %zu", width, dpitch, spitch);
        e = cudaErrorInvalidPitchValue;
    }
    if (e == cudaSuccess)
        e = standin__mem_op2("cudaMemcpy2DAsync", 1, dst, src, empty ? 0 : (height - 1) * dpitch + width,
                             empty ? 0 : (height - 1) * spitch + width, 0, kind, &op);
    if (e == cudaSuccess && !empty) {
        op.u.mem.n = width;
        op.u.mem.rows = height;
        op.u.mem.dpitch = dpitch;
        op.u.mem.spitch = spitch;
    }
    if (e == cudaSuccess) e = standin__submit(s, &op, "cudaMemcpy2DAsync");
    standin__unlock();
    return standin__seterr(e);
}

cudaError_t CUDARTAPI cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
    struct CUstream_st* s;
    standin__op op;
    cudaError_t e;
    STANDIN__ENTER(cudaMemsetAsync);
    standin__lock();
    e = standin__get_stream(stream, "cudaMemsetAsync", &s);
    if (e == cudaSuccess) e = standin__mem_op("cudaMemsetAsync", 0, devPtr, NULL, count, value, cudaMemcpyDefault, &op);
    if (e == cudaSuccess) e = standin__submit(s, &op, "cudaMemsetAsync");
    standin__unlock();
    return standin__seterr(e);
}

/* ------------------------------------------------------------------ */
/* >>errors */

cudaError_t CUDARTAPI cudaGetLastError(void) {
    cudaError_t e;
    STANDIN__ENTER(cudaGetLastError);
    e = standin__tl_error;
    standin__tl_error = cudaSuccess;
    return e;
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void) {
    STANDIN__ENTER(cudaPeekAtLastError);
    return standin__tl_error;
}

#define STANDIN__ERRORS(X) \
    X(cudaSuccess, "no error") \
    X(cudaErrorInvalidValue, "invalid argument") \
    X(cudaErrorMemoryAllocation, "out of memory") \
    X(cudaErrorInitializationError, "initialization error") \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy") \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected") \
    X(cudaErrorInvalidDevice, "invalid device ordinal") \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle") \
    X(cudaErrorIllegalState, "the operation cannot be performed in the present state") \
    X(cudaErrorNotReady, "device not ready") \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered") \
    X(cudaErrorLaunchTimeout, "the launch timed out and was terminated") \
    X(cudaErrorLaunchFailure, "unspecified launch failure") \
    X(cudaErrorNotPermitted, "operation not permitted") \
    X(cudaErrorNotSupported, "operation not supported") \
    X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
    X(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
    X(cudaErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
    X(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began") \
    X(cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work") \
    X(cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
    X(cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
    X(cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
    X(cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
    X(cudaErrorTimeout, "wait operation timed out") \
    X(cudaErrorUnknown, "unknown error")

const char* CUDARTAPI cudaGetErrorName(cudaError_t error) {
    int dummy;
    (void)standin__enter(standin__fn_cudaGetErrorName, &dummy);
    switch (error) {
#define STANDIN__ERR_NAME(code, text) case code: return #code;
    STANDIN__ERRORS(STANDIN__ERR_NAME)
#undef STANDIN__ERR_NAME
    default: return "cudaErrorUnknown";
    }
}

const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
    int dummy;
    (void)standin__enter(standin__fn_cudaGetErrorString, &dummy);
    switch (error) {
#define STANDIN__ERR_TEXT(code, text) case code: return text;
    STANDIN__ERRORS(STANDIN__ERR_TEXT)
#undef STANDIN__ERR_TEXT
    default: return "unrecognized error code";
    }
}

/* ------------------------------------------------------------------ */
/* >>control: standin.h */

void standin_reset(void) {
    struct CUstream_st* s;
    struct CUevent_st* ev;
    struct CUgraph_st* gr;
    struct CUgraphExec_st* ex;
    standin__capture* c;
    uint64_t pending = 0;
    int i;
    standin__lock();
    for (s = standin__g.streams; s; s = s->next_all) pending += s->n_enq - s->n_done;
    standin__g.resetting = 1;
    if (standin__g.nccl) standin__g.nccl->abort_all();
    for (s = standin__g.streams; s; s = s->next_all) {
        s->hdr.dead = 1;
        standin__wake(&s->q);
    }
    standin__broadcast();
    while (standin__g.n_workers > 0) standin__wait(0);
    if (standin__g.nccl) {
        standin__g.nccl->reset();
        standin__g.nccl->settings();
    }
    while ((s = standin__g.streams)) {
        standin__g.streams = s->next_all;
        free(s->deps);
        free(s);
    }
    while ((ev = standin__g.events)) {
        standin__g.events = ev->next_all;
        free(ev->cap_deps);
        free(ev);
    }
    while ((gr = standin__g.graphs)) {
        standin__g.graphs = gr->next_all;
        standin__graph_free_nodes(gr);
        free(gr);
    }
    while ((ex = standin__g.execs)) {
        standin__g.execs = ex->next_all;
        for (i = 0; i < ex->n; i++) standin__free_op(&ex->ops[i]);
        free(ex->ops);
        free(ex);
    }
    while ((c = standin__g.captures)) {
        standin__g.captures = c->next_all;
        if (c->graph) {
            standin__graph_free_nodes(c->graph);
            free(c->graph);
        }
        free(c->members);
        free(c);
    }
    for (i = 0; i < standin__g.n_allocs; i++) free((void*)standin__g.allocs[i].base);
    free(standin__g.allocs);
    free(standin__g.reg);
    {
        const standin__nccl_hooks* hooks = standin__g.nccl;
        memset(&standin__g, 0, sizeof standin__g);
        standin__g.nccl = hooks;
    }
    standin__unlock();

    pthread_mutex_lock(&standin__vmu);
    for (i = 0; i < standin__c.n_violations; i++) free(standin__c.violations[i]);
    free(standin__c.violations);
    free(standin__c.injects);
    {
        int verbose = standin__c.verbose;
        memset(&standin__c, 0, sizeof standin__c);
        standin__c.verbose = verbose;
    }
    pthread_mutex_unlock(&standin__vmu);
    standin__tl_error = cudaSuccess;
    standin__tl_device = 0;
    if (pending)
        standin__violation("standin_reset: %llu stream operations were still pending or running; they were "
                           "discarded (synchronise before the end of a test)", (unsigned long long)pending);
}

void standin_fail_call(const char* name, int k, int error_code) {
    int fn = -1;
    if (name && (fn = standin__fn_lookup(name)) < 0) {
        standin__violation("standin_fail_call: no stand-in function is named \"%s\"", name);
        return;
    }
    if (fn >= 0 && standin__fn_kinds[fn] == 2) {
        standin__violation("standin_fail_call: %s returns a string and cannot fail", name);
        return;
    }
    if (k < 1) {
        standin__violation("standin_fail_call: k must be >= 1, got %d", k);
        return;
    }
    pthread_mutex_lock(&standin__vmu);
    if (standin__c.n_injects == standin__c.cap_injects) {
        int cap = standin__c.cap_injects ? standin__c.cap_injects * 2 : 8;
        standin__inject* v = (standin__inject*)realloc(standin__c.injects, sizeof(standin__inject) * (size_t)cap);
        if (!v) {
            pthread_mutex_unlock(&standin__vmu);
            return;
        }
        standin__c.injects = v;
        standin__c.cap_injects = cap;
    }
    standin__c.injects[standin__c.n_injects].fn = fn;
    standin__c.injects[standin__c.n_injects].left = k;
    standin__c.injects[standin__c.n_injects].code = error_code;
    standin__c.n_injects++;
    pthread_mutex_unlock(&standin__vmu);
}

int standin_call_count(const char* name) {
    int fn = -1, n;
    if (name && (fn = standin__fn_lookup(name)) < 0) return 0;
    pthread_mutex_lock(&standin__vmu);
    n = fn < 0 ? standin__c.total : standin__c.counts[fn];
    pthread_mutex_unlock(&standin__vmu);
    return n;
}

int standin_violation_count(void) {
    int n;
    pthread_mutex_lock(&standin__vmu);
    n = standin__c.n_violations;
    pthread_mutex_unlock(&standin__vmu);
    return n;
}

const char* standin_violation(int i) {
    const char* v = NULL;
    pthread_mutex_lock(&standin__vmu);
    if (i >= 0 && i < standin__c.n_violations) v = standin__c.violations[i];
    pthread_mutex_unlock(&standin__vmu);
    return v;
}

void standin_clear_violations(void) {
    int i;
    pthread_mutex_lock(&standin__vmu);
    for (i = 0; i < standin__c.n_violations; i++) free(standin__c.violations[i]);
    standin__c.n_violations = 0;
    pthread_mutex_unlock(&standin__vmu);
}

void standin_set_device_count(int n) {
    if (n < 1) n = 1;
    if (n > STANDIN__MAX_DEVICES) n = STANDIN__MAX_DEVICES;
    standin__lock();
    standin__g.device_count = n;
    standin__unlock();
}

void standin_set_timeout_ms(int ms) {
    standin__lock();
    standin__g.timeout_ms = ms > 0 ? ms : 0;
    standin__unlock();
}

int standin_stream_priority(cudaStream_t h) {
    standin__obj* o;
    int p = INT_MIN;
    if (h == NULL || h == cudaStreamLegacy) return 0;
    standin__lock();
    o = standin__reg_find(h);
    if (o && o->type == STANDIN__STREAM) p = ((struct CUstream_st*)o)->priority;
    standin__unlock();
    return p;
}

int standin_live_handles(void) {
    int n;
    standin__lock();
    n = standin__g.live_streams + standin__g.live_events + standin__g.live_graphs + standin__g.live_execs +
        standin__g.n_allocs + (standin__g.nccl ? standin__g.nccl->live() : 0);
    standin__unlock();
    return n;
}

static int standin__graph_count(cudaGraph_t h, int edges) {
    standin__obj* o;
    int n = -1;
    standin__lock();
    o = standin__reg_find(h);
    if (o && o->type == STANDIN__GRAPH && !o->dead)
        n = edges ? ((struct CUgraph_st*)o)->n_edges : ((struct CUgraph_st*)o)->n;
    standin__unlock();
    return n;
}

int standin_graph_node_count(cudaGraph_t g) { return standin__graph_count(g, 0); }
int standin_graph_edge_count(cudaGraph_t g) { return standin__graph_count(g, 1); }
