/* tests/standin/nccl_standin.c - a CPU stand-in for the subset of NCCL that
   the concerto backends call, compiled against the real <nccl.h> and linked
   in place of -lnccl, with cuda_standin.c.

   Ranks are threads of one process. A unique id names a rendezvous in
   process memory; collectives run on the stand-in's streams (or are
   captured into graphs) and meet the same-numbered collective of the other
   ranks; the last rank to arrive computes every rank's result in rank
   order. See README.md for the rules and what is not modelled.

   Sections: >>state >>arith >>checks >>matching >>run >>issue >>init
   >>comm_api >>collectives >>groups >>errors >>control */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>
#include "standin_internal.h"

/* ------------------------------------------------------------------ */
/* >>state */

enum { STANDIN__ALLREDUCE, STANDIN__REDUCESCATTER, STANDIN__ALLGATHER, STANDIN__BROADCAST, STANDIN__REDUCE,
       STANDIN__SEND, STANDIN__RECV };
static const char* const standin__kind_names[] = { "ncclAllReduce", "ncclReduceScatter", "ncclAllGather",
                                                   "ncclBroadcast", "ncclReduce", "ncclSend", "ncclRecv" };

typedef struct standin__commset standin__commset;

/* One NCCL operation of one rank. */
typedef struct standin__part {
    int kind;
    const void* send;
    void* recv;
    size_t count;
    ncclDataType_t dt;
    ncclRedOp_t op;
    int root;                        /* the root, or the peer of a send/recv */
    struct ncclComm* comm;
    int grouped;
    unsigned long long send_id, recv_id;   /* their allocations, 0 when not used */
    /* set when issued */
    int issued, inject;
    uint64_t seq;                    /* k-th collective on comm, or k-th send/recv between the pair */
    uint64_t opidx;                  /* k-th operation on comm */
    void* stream;
    uint64_t pos;
    /* run state */
    int posted, matched, busy, done, failed, hung, accounted, reported;
    struct standin__part* next_p2p;  /* in the commset's list of issued, unfinished sends and receives */
} standin__part;

/* The payload of a stream item: the operations of one group on one
   stream, or one operation outside a group. */
typedef struct standin__batch {
    int n;
    standin__part* parts;
} standin__batch;

/* The k-th collective of a communicator, as the ranks reach it. */
typedef struct standin__slot {
    uint64_t seq;
    int n_posted, mismatch;
    standin__part** posts;           /* by rank */
    struct standin__slot* next;
} standin__slot;

/* A send that completed into a buffer (rule 5's way out of a deadlock). */
typedef struct standin__buffered {
    int src, dst;
    uint64_t seq;
    size_t count;
    ncclDataType_t dt;
    void* data;
    struct standin__buffered* next;
} standin__buffered;

typedef struct standin__split {
    uint64_t index;
    int n_arrived, complete;
    int* colors;
    int* keys;
    int* arrived;
    struct ncclComm** results;
    struct standin__split* next;
} standin__split;

struct standin__commset {
    int nranks;
    struct ncclComm** ranks;
    int aborted;
    unsigned serial;
    standin__slot* slots;
    standin__part* p2p;
    standin__buffered* buffered;
    standin__split* splits;
    standin__commset* next_all;
};

typedef struct standin__rdv {
    ncclUniqueId id;
    int nranks, n_arrived, complete, failed;
    ncclResult_t fail_code;
    struct ncclComm** comms;
    struct standin__rdv* next;
} standin__rdv;

struct ncclComm {
    standin__obj hdr;
    standin__commset* set;           /* NULL until the init completes */
    standin__rdv* rdv;               /* while it waits for its peers */
    int rank, nranks, device;
    uint64_t n_coll, n_ops, n_pending, n_splits;
    uint64_t* send_seq;
    uint64_t* recv_seq;
    ncclResult_t async_err;
    int finalized;
    int blocking;                    /* the config's blocking (-2: made without a config) */
    int inj_set;
    uint64_t inj_at;
    ncclResult_t inj_code;
    char last_error[512];
    char async_why[128];             /* why async_err was set (a peer's abort names the peer) */
    struct ncclComm* next_all;
};

static struct {
    int hooked;
    struct ncclComm* comms;
    standin__commset* sets;
    standin__rdv* rdvs;
    int live;
    int require_groups;
    unsigned set_serial;
    uint64_t id_serial;
    int inj_pending, inj_rank, inj_after;
    ncclResult_t inj_code;
} standin__n;

/* ncclGroupStart/End of the calling thread */
typedef struct standin__deferred {
    cudaStream_t stream;
    standin__part part;
} standin__deferred;

typedef struct standin__gwait {
    standin__rdv* rdv;               /* an init, or */
    struct ncclComm* comm;
    standin__split* split;           /* a split of comm, into *out */
    ncclComm_t* out;
} standin__gwait;

static _Thread_local struct {
    int depth;
    standin__deferred* ops;
    int n_ops, cap_ops;
    standin__gwait* waits;
    int n_waits, cap_waits;
    ncclResult_t err;                /* the first error inside the group */
} standin__tl_group;

static _Thread_local char standin__tl_msg[512];
static _Thread_local char standin__tl_last[512];

static void standin__nccl_abort_all(void);
static void standin__nccl_reset(void);
static int standin__nccl_live(void);
static void standin__nccl_settings(void);
static const standin__nccl_hooks standin__hooks = { standin__nccl_abort_all, standin__nccl_reset,
                                                    standin__nccl_live, standin__nccl_settings };

static void standin__hook(void) {
    if (!standin__n.hooked) {
        standin__set_nccl_hooks(&standin__hooks);
        standin__n.hooked = 1;
    }
}

/* records msg as the thread's (and comm's) last error; returns r */
static ncclResult_t standin__nerr(struct ncclComm* c, ncclResult_t r, const char* fmt, ...) STANDIN__PRINTF(3, 4);
static ncclResult_t standin__nerr(struct ncclComm* c, ncclResult_t r, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(standin__tl_msg, sizeof standin__tl_msg, fmt, ap);
    va_end(ap);
    if (c) {
        standin__lock();
        memcpy(c->last_error, standin__tl_msg, sizeof c->last_error);
        standin__unlock();
    }
    return r;
}

#define STANDIN__NENTER(name) do { \
        int standin__code_; \
        if (standin__enter(standin__fn_##name, &standin__code_)) \
            return standin__nerr(NULL, (ncclResult_t)standin__code_, "%s failed (injected by standin_fail_call)", #name); \
    } while (0)

/* ------------------------------------------------------------------ */
/* >>arith: element types, conversions, reductions */

static size_t standin__dt_size(ncclDataType_t dt) {
    switch (dt) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;   /* fp8 and unknown: not modelled */
    }
}

static const char* standin__dt_name(ncclDataType_t dt) {
    switch (dt) {
    case ncclInt8: return "int8";
    case ncclUint8: return "uint8";
    case ncclInt32: return "int32";
    case ncclUint32: return "uint32";
    case ncclInt64: return "int64";
    case ncclUint64: return "uint64";
    case ncclFloat16: return "float16";
    case ncclFloat32: return "float32";
    case ncclFloat64: return "float64";
    case ncclBfloat16: return "bfloat16";
    default: return "unsupported type";
    }
}

static const char* standin__op_name(ncclRedOp_t op) {
    switch (op) {
    case ncclSum: return "sum";
    case ncclProd: return "prod";
    case ncclMax: return "max";
    case ncclMin: return "min";
    case ncclAvg: return "avg";
    default: return "unsupported op";
    }
}

static float standin__bits_float(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t standin__float_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float standin__half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0) {
        float f = (float)man * 5.9604644775390625e-8f;    /* man * 2^-24, exact */
        return sign ? -f : f;
    }
    if (exp == 31) return standin__bits_float(sign | 0x7f800000u | (man << 13));
    return standin__bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

/* round to nearest, ties to even */
static uint16_t standin__float_to_half(float f) {
    uint32_t x = standin__float_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu, q, rem;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);        /* NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);       /* >= 65520: infinity */
    if (ax < 0x38800000u) {                                         /* below 2^-14: subnormal or zero */
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift, half;
        if (ax < 0x33000000u) return (uint16_t)sign;                /* below 2^-25 */
        shift = 126u - e;                                           /* 14..24: units of 2^-24 */
        q = m >> shift;
        rem = m & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    q = (((ax >> 23) - 112u) << 10) | ((ax & 0x7fffffu) >> 13);
    rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;          /* a carry may reach infinity: right */
    return (uint16_t)(sign | q);
}

static float standin__bf16_to_float(uint16_t b) { return standin__bits_float((uint32_t)b << 16); }

static uint16_t standin__float_to_bf16(float f) {
    uint32_t x = standin__float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);   /* NaN stays NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#define STANDIN__INT_LOOP(T, U) do { \
        T* a = (T*)acc; const T* b = (const T*)x; \
        for (i = 0; i < n; i++) { \
            switch (op) { \
            case ncclProd: a[i] = (T)(U)((U)a[i] * (U)b[i]); break; \
            case ncclMax: if (b[i] > a[i]) a[i] = b[i]; break; \
            case ncclMin: if (b[i] < a[i]) a[i] = b[i]; break; \
            default: a[i] = (T)(U)((U)a[i] + (U)b[i]); break; \
            } \
        } \
    } while (0)

#define STANDIN__FLOAT_LOOP(T) do { \
        T* a = (T*)acc; const T* b = (const T*)x; \
        for (i = 0; i < n; i++) { \
            switch (op) { \
            case ncclProd: a[i] = a[i] * b[i]; break; \
            case ncclMax: if (b[i] > a[i] || b[i] != b[i]) a[i] = b[i]; break; \
            case ncclMin: if (b[i] < a[i] || b[i] != b[i]) a[i] = b[i]; break; \
            default: a[i] = a[i] + b[i]; break; \
            } \
        } \
    } while (0)

#define STANDIN__HALF_LOOP(TO_F, FROM_F) do { \
        uint16_t* a = (uint16_t*)acc; const uint16_t* b = (const uint16_t*)x; \
        for (i = 0; i < n; i++) { \
            float fa = TO_F(a[i]), fb = TO_F(b[i]); \
            switch (op) { \
            case ncclProd: a[i] = FROM_F(fa * fb); break; \
            case ncclMax: if (fb > fa || fb != fb) a[i] = b[i]; break; \
            case ncclMin: if (fb < fa || fb != fb) a[i] = b[i]; break; \
            default: a[i] = FROM_F(fa + fb); break; \
            } \
        } \
    } while (0)

/* acc[i] = acc[i] op x[i], rounded to the element type after each step
   (avg accumulates as sum) */
static void standin__combine(void* acc, const void* x, size_t n, ncclDataType_t dt, ncclRedOp_t op) {
    size_t i;
    switch (dt) {
    case ncclInt8: STANDIN__INT_LOOP(int8_t, uint8_t); break;
    case ncclUint8: STANDIN__INT_LOOP(uint8_t, uint8_t); break;
    case ncclInt32: STANDIN__INT_LOOP(int32_t, uint32_t); break;
    case ncclUint32: STANDIN__INT_LOOP(uint32_t, uint32_t); break;
    case ncclInt64: STANDIN__INT_LOOP(int64_t, uint64_t); break;
    case ncclUint64: STANDIN__INT_LOOP(uint64_t, uint64_t); break;
    case ncclFloat32: STANDIN__FLOAT_LOOP(float); break;
    case ncclFloat64: STANDIN__FLOAT_LOOP(double); break;
    case ncclFloat16: STANDIN__HALF_LOOP(standin__half_to_float, standin__float_to_half); break;
    case ncclBfloat16: STANDIN__HALF_LOOP(standin__bf16_to_float, standin__float_to_bf16); break;
    default: break;
    }
}

/* avg: the rounded sum divided by nranks, rounded */
static void standin__divide(void* acc, size_t n, ncclDataType_t dt, int nranks) {
    size_t i;
    switch (dt) {
#define STANDIN__DIV(T, D) { T* a = (T*)acc; for (i = 0; i < n; i++) a[i] = (T)(a[i] / (D)nranks); } break;
    case ncclInt8: STANDIN__DIV(int8_t, int)
    case ncclUint8: STANDIN__DIV(uint8_t, int)
    case ncclInt32: STANDIN__DIV(int32_t, int32_t)
    case ncclUint32: STANDIN__DIV(uint32_t, uint32_t)
    case ncclInt64: STANDIN__DIV(int64_t, int64_t)
    case ncclUint64: STANDIN__DIV(uint64_t, uint64_t)
    case ncclFloat32: STANDIN__DIV(float, float)
    case ncclFloat64: STANDIN__DIV(double, double)
#undef STANDIN__DIV
    case ncclFloat16: {
        uint16_t* a = (uint16_t*)acc;
        for (i = 0; i < n; i++) a[i] = standin__float_to_half(standin__half_to_float(a[i]) / (float)nranks);
        break;
    }
    case ncclBfloat16: {
        uint16_t* a = (uint16_t*)acc;
        for (i = 0; i < n; i++) a[i] = standin__float_to_bf16(standin__bf16_to_float(a[i]) / (float)nranks);
        break;
    }
    default: break;
    }
}

/* ------------------------------------------------------------------ */
/* >>checks */

/* lock held: the live communicator, or NULL after a violation */
static struct ncclComm* standin__comm(ncclComm_t h, const char* fn) {
    return (struct ncclComm*)standin__check_handle(h, STANDIN__COMM, fn);
}

static void standin__kill(struct ncclComm* c, const char* by) {
    if (c->hdr.dead) return;
    c->hdr.dead = 1;
    c->hdr.killed_by = by;
    standin__n.live--;
}

/* lock held: the buffer `what` of p for n_elems elements; 0 or a violation
   and ncclInvalidArgument */
static ncclResult_t standin__check_buf(const standin__part* p, const char* what, const void* ptr, size_t n_elems,
                                       const char* times, unsigned long long* id) {
    const char* fn = standin__kind_names[p->kind];
    size_t esz = standin__dt_size(p->dt);
    char how[160];
    standin__alloc a;
    int r;
    snprintf(how, sizeof how, "%scount %zu x %zu-byte %s", times, p->count, esz, standin__dt_name(p->dt));
    r = standin__check_extent(fn, what, ptr, n_elems * esz, how, &a);
    if (r < 0) return ncclInvalidArgument;
    if (r == 0) {
        standin__violation("%s: %s %p is not device memory (not inside any cudaMalloc allocation)", fn, what, ptr);
        return ncclInvalidArgument;
    }
    if (a.host) {
        standin__violation("%s: %s %p is cudaMallocHost memory, not device memory", fn, what, ptr);
        return ncclInvalidArgument;
    }
    if (a.device != p->comm->device) {
        standin__violation("%s: %s %p is memory of device %d but the communicator (rank %d) is on device %d", fn,
                           what, ptr, a.device, p->comm->rank, p->comm->device);
        return ncclInvalidArgument;
    }
    *id = a.id;
    return ncclSuccess;
}

static int standin__overlap(const void* a, size_t na, const void* b, size_t nb) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na && nb && x < y + nb && y < x + na;
}

/* lock held: checks p (comm already checked live) and its stream */
static ncclResult_t standin__check_part(standin__part* p, cudaStream_t stream) {
    const char* fn = standin__kind_names[p->kind];
    struct ncclComm* c = p->comm;
    size_t esz = standin__dt_size(p->dt), ns = p->count, nr = p->count;
    int n = c->nranks, reducing = p->kind == STANDIN__ALLREDUCE || p->kind == STANDIN__REDUCESCATTER ||
                                  p->kind == STANDIN__REDUCE;
    int use_send = 1, use_recv = 1, dev;
    ncclResult_t r;
    char send_times[32] = "", recv_times[32] = "";
    if (!c->set) {
        standin__violation("%s: communicator #%u is still being initialised (call ncclGroupEnd first)", fn,
                           c->hdr.serial);
        return ncclInvalidUsage;
    }
    if (c->finalized) {
        standin__violation("%s: communicator #%u was finalized (ncclCommFinalize)", fn, c->hdr.serial);
        return ncclInvalidUsage;
    }
    if (c->async_err != ncclSuccess) return c->async_err;
    if (c->set->aborted) return ncclRemoteError;
    if (esz == 0) {
        standin__violation("%s: data type %d is not modelled by the stand-in", fn, (int)p->dt);
        return ncclInvalidArgument;
    }
    if (reducing && ((int)p->op < 0 || (int)p->op >= (int)ncclNumOps)) {
        standin__violation("%s: reduction op %d is not one of sum, prod, max, min, avg", fn, (int)p->op);
        return ncclInvalidArgument;
    }
    if (p->root < 0 || p->root >= n) {
        standin__violation("%s: %s %d is out of range (communicator of %d ranks)", fn,
                           p->kind >= STANDIN__SEND ? "peer" : "root", p->root, n);
        return ncclInvalidArgument;
    }
    if (standin__stream_check(stream, fn, &dev) != cudaSuccess) return ncclInvalidArgument;
    if (dev != c->device) {
        standin__violation("%s: the stream is on device %d but the communicator (rank %d) is on device %d", fn, dev,
                           c->rank, c->device);
        return ncclInvalidArgument;
    }
    switch (p->kind) {
    case STANDIN__REDUCESCATTER:
        ns = p->count * (size_t)n;
        snprintf(send_times, sizeof send_times, "%d ranks x ", n);
        break;
    case STANDIN__ALLGATHER:
        nr = p->count * (size_t)n;
        snprintf(recv_times, sizeof recv_times, "%d ranks x ", n);
        break;
    case STANDIN__BROADCAST: use_send = c->rank == p->root; break;
    case STANDIN__REDUCE: use_recv = c->rank == p->root; break;
    case STANDIN__SEND: use_recv = 0; break;
    case STANDIN__RECV: use_send = 0; break;
    default: break;
    }
    if (p->count == 0) return ncclSuccess;
    if (use_send && (r = standin__check_buf(p, "sendbuff", p->send, ns, send_times, &p->send_id)) != ncclSuccess)
        return r;
    if (use_recv && (r = standin__check_buf(p, "recvbuff", p->recv, nr, recv_times, &p->recv_id)) != ncclSuccess)
        return r;
    if (use_send && use_recv && p->send != p->recv) {
        int in_place = 0;
        if (p->kind == STANDIN__REDUCESCATTER)
            in_place = (const char*)p->send + (size_t)c->rank * p->count * esz == (const char*)p->recv;
        if (p->kind == STANDIN__ALLGATHER)
            in_place = (const char*)p->recv + (size_t)c->rank * p->count * esz == (const char*)p->send;
        if (!in_place && standin__overlap(p->send, ns * esz, p->recv, nr * esz)) {
            standin__violation("%s: sendbuff %p and recvbuff %p overlap without being NCCL's in-place layout", fn,
                               p->send, p->recv);
            return ncclInvalidArgument;
        }
    }
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* >>matching: collectives by sequence number, sends and receives by pair */

static void standin__describe(const standin__part* p, char* buf, size_t n) {
    switch (p->kind) {
    case STANDIN__ALLREDUCE: case STANDIN__REDUCESCATTER:
        snprintf(buf, n, "%s(count %zu, %s, %s)", standin__kind_names[p->kind], p->count, standin__dt_name(p->dt),
                 standin__op_name(p->op));
        break;
    case STANDIN__REDUCE:
        snprintf(buf, n, "%s(count %zu, %s, %s, root %d)", standin__kind_names[p->kind], p->count,
                 standin__dt_name(p->dt), standin__op_name(p->op), p->root);
        break;
    case STANDIN__BROADCAST:
        snprintf(buf, n, "%s(count %zu, %s, root %d)", standin__kind_names[p->kind], p->count,
                 standin__dt_name(p->dt), p->root);
        break;
    case STANDIN__SEND: case STANDIN__RECV:
        snprintf(buf, n, "%s(count %zu, %s, peer %d)", standin__kind_names[p->kind], p->count,
                 standin__dt_name(p->dt), p->root);
        break;
    default:
        snprintf(buf, n, "%s(count %zu, %s)", standin__kind_names[p->kind], p->count, standin__dt_name(p->dt));
        break;
    }
}

static int standin__same_call(const standin__part* a, const standin__part* b) {
    int reducing = a->kind == STANDIN__ALLREDUCE || a->kind == STANDIN__REDUCESCATTER || a->kind == STANDIN__REDUCE;
    int rooted = a->kind == STANDIN__BROADCAST || a->kind == STANDIN__REDUCE;
    return a->kind == b->kind && a->count == b->count && a->dt == b->dt && (!reducing || a->op == b->op) &&
           (!rooted || a->root == b->root);
}

/* lock not held; the slot is out of every list and its parts are busy */
static int standin__compute(standin__slot* sl, int nranks) {
    const standin__part* p0 = sl->posts[0];
    size_t esz = standin__dt_size(p0->dt), n = p0->count, bytes;
    char* tmp;
    int r, root = p0->root;
    switch (p0->kind) {
    case STANDIN__REDUCESCATTER:
    case STANDIN__ALLGATHER: n *= (size_t)nranks; break;
    default: break;
    }
    bytes = n * esz;
    if (bytes == 0) return 1;
    tmp = (char*)malloc(bytes);
    if (!tmp) return 0;
    switch (p0->kind) {
    case STANDIN__ALLREDUCE:
    case STANDIN__REDUCE:
    case STANDIN__REDUCESCATTER:
        memcpy(tmp, sl->posts[0]->send, bytes);
        for (r = 1; r < nranks; r++) standin__combine(tmp, sl->posts[r]->send, n, p0->dt, p0->op);
        if (p0->op == ncclAvg) standin__divide(tmp, n, p0->dt, nranks);
        for (r = 0; r < nranks; r++) {
            if (p0->kind == STANDIN__ALLREDUCE) memcpy(sl->posts[r]->recv, tmp, bytes);
            else if (p0->kind == STANDIN__REDUCE && r == root) memcpy(sl->posts[r]->recv, tmp, bytes);
            else if (p0->kind == STANDIN__REDUCESCATTER)
                memcpy(sl->posts[r]->recv, tmp + (size_t)r * (bytes / (size_t)nranks), bytes / (size_t)nranks);
        }
        break;
    case STANDIN__ALLGATHER:
        for (r = 0; r < nranks; r++)
            memcpy(tmp + (size_t)r * (bytes / (size_t)nranks), sl->posts[r]->send, bytes / (size_t)nranks);
        for (r = 0; r < nranks; r++) memcpy(sl->posts[r]->recv, tmp, bytes);
        break;
    case STANDIN__BROADCAST:
        memcpy(tmp, sl->posts[root]->send, bytes);
        for (r = 0; r < nranks; r++) memcpy(sl->posts[r]->recv, tmp, bytes);
        break;
    default:
        break;
    }
    free(tmp);
    return 1;
}

/* lock held: comm's operations cannot go on; their async error becomes e */
static void standin__comm_error(struct ncclComm* c, ncclResult_t e, const char* why) {
    if (c->async_err == ncclSuccess) {
        c->async_err = e;
        snprintf(c->last_error, sizeof c->last_error, "%s", why);
        snprintf(c->async_why, sizeof c->async_why, "%s", why);
    }
}

/* lock held */
static void standin__post_coll(standin__part* p) {
    standin__commset* set = p->comm->set;
    standin__slot *sl, **link;
    int r, n = set->nranks;
    for (link = &set->slots; (sl = *link) && sl->seq != p->seq; link = &sl->next) {}
    if (!sl) {
        sl = (standin__slot*)calloc(1, sizeof *sl);
        if (sl) sl->posts = (standin__part**)calloc((size_t)n, sizeof(standin__part*));
        if (!sl || !sl->posts) {
            free(sl);
            standin__comm_error(p->comm, ncclSystemError, "out of memory");
            p->hung = 1;
            return;
        }
        sl->seq = p->seq;
        sl->next = set->slots;
        set->slots = sl;
        link = &set->slots;
    }
    sl->posts[p->comm->rank] = p;
    sl->n_posted++;
    p->posted = 1;
    for (r = 0; r < n && !sl->mismatch; r++) {
        char a[160], b[160];
        const standin__part* q = sl->posts[r];
        if (!q || q == p || standin__same_call(q, p)) continue;
        standin__describe(q, a, sizeof a);
        standin__describe(p, b, sizeof b);
        standin__violation("collective mismatch on communicator set #%u, collective #%llu (counting from 0): rank %d "
                           "called %s but rank %d called %s; like NCCL, it hangs until the communicator is aborted",
                           set->serial, (unsigned long long)p->seq, r, a, p->comm->rank, b);
        sl->mismatch = 1;
    }
    if (sl->n_posted < n || sl->mismatch) return;
    *link = sl->next;
    for (r = 0; r < n; r++) sl->posts[r]->busy = 1;
    standin__unlock();
    r = standin__compute(sl, n);
    standin__lock();
    for (r = 0; r < n; r++) {
        sl->posts[r]->busy = 0;
        sl->posts[r]->done = 1;
    }
    if (!r) {
        for (r = 0; r < n; r++) {
            sl->posts[r]->failed = 1;
            standin__comm_error(sl->posts[r]->comm, ncclSystemError, "out of memory");
        }
    }
    free(sl->posts);
    free(sl);
    standin__broadcast();
}

/* lock held: a send and its receive are both posted */
static void standin__pair(standin__part* s, standin__part* r) {
    size_t bytes = s->count * standin__dt_size(s->dt);
    s->matched = r->matched = 1;
    if (s->count != r->count || s->dt != r->dt) {
        char a[160], b[160];
        standin__describe(s, a, sizeof a);
        standin__describe(r, b, sizeof b);
        standin__violation("send/recv mismatch on communicator set #%u (pair %d -> %d, #%llu): rank %d called %s but "
                           "rank %d called %s; it hangs until the communicator is aborted", s->comm->set->serial,
                           s->comm->rank, r->comm->rank, (unsigned long long)s->seq, s->comm->rank, a, r->comm->rank,
                           b);
        s->hung = r->hung = 1;
        return;
    }
    s->busy = r->busy = 1;
    standin__unlock();
    if (bytes) memmove(r->recv, s->send, bytes);
    standin__lock();
    s->busy = r->busy = 0;
    s->done = r->done = 1;
    standin__broadcast();
}

/* lock held: the issued send/recv matching p (same pair and number) */
static standin__part* standin__counterpart(const standin__part* p) {
    standin__part* q;
    int want = p->kind == STANDIN__SEND ? STANDIN__RECV : STANDIN__SEND;
    for (q = p->comm->set->p2p; q; q = q->next_p2p)
        if (q->kind == want && q->comm->rank == p->root && q->root == p->comm->rank && q->seq == p->seq) return q;
    return NULL;
}

/* lock held */
static void standin__post_p2p(standin__part* p) {
    standin__commset* set = p->comm->set;
    standin__part* q;
    if (p->kind == STANDIN__RECV) {
        standin__buffered *b, **link;
        for (link = &set->buffered; (b = *link); link = &b->next) {
            if (b->src != p->root || b->dst != p->comm->rank || b->seq != p->seq) continue;
            *link = b->next;
            p->matched = 1;
            if (b->count != p->count || b->dt != p->dt) {
                standin__violation("send/recv mismatch on communicator set #%u (pair %d -> %d, #%llu): the send had "
                                   "count %zu of %s, the receive count %zu of %s", set->serial, b->src, b->dst,
                                   (unsigned long long)b->seq, b->count, standin__dt_name(b->dt), p->count,
                                   standin__dt_name(p->dt));
                p->hung = 1;
            } else {
                if (b->count) memcpy(p->recv, b->data, b->count * standin__dt_size(b->dt));
                p->done = 1;
            }
            free(b->data);
            free(b);
            return;
        }
    }
    p->posted = 1;
    q = standin__counterpart(p);
    if (q && q->posted && !q->matched) {
        if (p->kind == STANDIN__SEND) standin__pair(p, q);
        else standin__pair(q, p);
    }
}

/* ------------------------------------------------------------------ */
/* >>run: on a stream's worker */

/* lock held: p is an ungrouped send or receive that waits for its peer. If
   the peer's matching operation is queued behind another such waiting
   operation on its stream, and so on back to p, no rank can progress: a
   cycle of sends alone completes by buffering p (NCCL may get through with
   small messages, but needs a group); a cycle with a receive hangs. */
static void standin__deadlock_check(standin__part* p) {
    standin__part* chain[64];
    standin__part* cur = p;
    int n = 0, all_sends = 1, i;
    char path[256];
    size_t len;
    while (n < 64) {
        standin__part* y;
        standin__part* z;
        chain[n++] = cur;
        if (cur->kind == STANDIN__RECV) all_sends = 0;
        y = standin__counterpart(cur);
        if (!y || y->posted || !y->stream) return;
        z = (standin__part*)standin__stream_blocked(y->stream);
        if (!z || z == y || standin__stream_pos(y->stream) >= y->pos) return;
        if (z == p) break;
        cur = z;
    }
    if (n == 64 || p->reported) return;
    len = (size_t)snprintf(path, sizeof path, "rank %d", p->comm->rank);
    for (i = 0; i < n && len < sizeof path; i++)
        len += (size_t)snprintf(path + len, sizeof path - len, " %s rank %d",
                                chain[i]->kind == STANDIN__SEND ? "sends to" : "receives from", chain[i]->root);
    for (i = 0; i < n; i++) chain[i]->reported = 1;
    if (all_sends) {
        standin__buffered* b = (standin__buffered*)calloc(1, sizeof *b);
        size_t bytes = p->count * standin__dt_size(p->dt);
        standin__violation("%s outside a group on communicator set #%u: %s, each before the receive queued behind it "
                           "on its stream; NCCL needs such send/recv pairs inside one ncclGroupStart/ncclGroupEnd "
                           "or it deadlocks once messages outgrow its buffers",
                           standin__kind_names[p->kind], p->comm->set->serial, path);
        if (b && (bytes == 0 || (b->data = malloc(bytes)) != NULL)) {
            if (bytes) memcpy(b->data, p->send, bytes);
            b->src = p->comm->rank;
            b->dst = p->root;
            b->seq = p->seq;
            b->count = p->count;
            b->dt = p->dt;
            b->next = p->comm->set->buffered;
            p->comm->set->buffered = b;
            p->matched = 1;
            p->done = 1;
            standin__broadcast();
        } else {
            free(b);
        }
    } else {
        standin__violation("deadlock on communicator set #%u: %s, each queued behind the other on its stream; put "
                           "each rank's send and receive inside one ncclGroupStart/ncclGroupEnd. It hangs until the "
                           "communicator is aborted", p->comm->set->serial, path);
    }
}

/* lock held: ends p's accounting (once) */
static void standin__account(standin__part* p) {
    if (!p->issued || p->accounted) return;
    p->accounted = 1;
    p->comm->n_pending--;
    if (p->kind >= STANDIN__SEND && p->comm->set) {
        standin__part** link;
        for (link = &p->comm->set->p2p; *link; link = &(*link)->next_p2p)
            if (*link == p) {
                *link = p->next_p2p;
                break;
            }
    }
}

static void standin__batch_run(void* payload, void* stream) {
    standin__batch* b = (standin__batch*)payload;
    int i, left;
    standin__lock();
    for (i = 0; i < b->n; i++) {
        standin__part* p = &b->parts[i];
        struct ncclComm* c = p->comm;
        if (p->done) continue;
        if (!c->set || c->set->aborted || standin__resetting()) {
            p->done = p->failed = 1;
            continue;
        }
        if (p->inject) {
            standin__comm_error(c, c->inj_code, "asynchronous error injected by standin_nccl_inject_async_error");
            p->hung = 1;
            continue;
        }
        if ((p->send_id && !standin__alloc_live(p->send_id)) || (p->recv_id && !standin__alloc_live(p->recv_id))) {
            standin__violation("%s on communicator #%u: a buffer was freed before the operation ran",
                               standin__kind_names[p->kind], c->hdr.serial);
            standin__comm_error(c, ncclUnhandledCudaError, "a buffer was freed before the operation ran");
            p->hung = 1;
            continue;
        }
        if (p->kind >= STANDIN__SEND) standin__post_p2p(p);
        else standin__post_coll(p);
    }
    for (;;) {
        standin__part* lone = NULL;
        for (i = 0, left = 0; i < b->n; i++) {
            standin__part* p = &b->parts[i];
            if (p->done) continue;
            if (!p->busy && (standin__resetting() || (p->comm->set && p->comm->set->aborted))) {
                p->done = p->failed = 1;
                continue;
            }
            left++;
            if (!p->grouped && p->kind >= STANDIN__SEND && p->posted && !p->matched) lone = p;
        }
        if (!left) break;
        if (lone) {
            standin__stream_set_blocked(stream, lone);
            standin__deadlock_check(lone);
            if (lone->done) continue;
        }
        standin__wait(0);
    }
    standin__stream_set_blocked(stream, NULL);
    for (i = 0; i < b->n; i++) standin__account(&b->parts[i]);
    standin__broadcast();
    standin__unlock();
}

/* lock held */
static void standin__batch_issue(void* payload, void* stream, uint64_t pos) {
    standin__batch* b = (standin__batch*)payload;
    int i;
    for (i = 0; i < b->n; i++) {
        standin__part* p = &b->parts[i];
        struct ncclComm* c = p->comm;
        p->issued = 1;
        p->stream = stream;
        p->pos = pos;
        if (c->hdr.dead || !c->set) {
            standin__violation("%s issued (by a graph launch?) on communicator #%u after %s", standin__kind_names[p->kind],
                               c->hdr.serial, c->hdr.killed_by ? c->hdr.killed_by : "its failed init");
            p->done = p->failed = 1;
        }
        if (p->kind == STANDIN__SEND) p->seq = c->send_seq ? c->send_seq[p->root]++ : 0;
        else if (p->kind == STANDIN__RECV) p->seq = c->recv_seq ? c->recv_seq[p->root]++ : 0;
        else p->seq = c->n_coll++;
        p->opidx = c->n_ops++;
        c->n_pending++;
        if (c->inj_set && p->opidx == c->inj_at) p->inject = 1;
        if (p->kind >= STANDIN__SEND && c->set && !p->done) {
            p->next_p2p = c->set->p2p;
            c->set->p2p = p;
        }
    }
    standin__broadcast();
}

static standin__batch* standin__batch_new(int n) {
    standin__batch* b = (standin__batch*)calloc(1, sizeof *b);
    if (!b) return NULL;
    b->parts = (standin__part*)calloc((size_t)(n ? n : 1), sizeof(standin__part));
    if (!b->parts) {
        free(b);
        return NULL;
    }
    b->n = n;
    return b;
}

/* lock held */
static void* standin__batch_clone(const void* payload) {
    const standin__batch* from = (const standin__batch*)payload;
    standin__batch* b = standin__batch_new(from->n);
    int i;
    if (!b) return NULL;
    for (i = 0; i < from->n; i++) {
        const standin__part* f = &from->parts[i];
        standin__part* t = &b->parts[i];
        t->kind = f->kind;
        t->send = f->send;
        t->recv = f->recv;
        t->count = f->count;
        t->dt = f->dt;
        t->op = f->op;
        t->root = f->root;
        t->comm = f->comm;
        t->grouped = f->grouped;
        t->send_id = f->send_id;
        t->recv_id = f->recv_id;
    }
    return b;
}

/* lock held */
static void standin__batch_destroy(void* payload) {
    standin__batch* b = (standin__batch*)payload;
    int i;
    for (i = 0; i < b->n; i++) standin__account(&b->parts[i]);
    free(b->parts);
    free(b);
}

static const standin__ext_fns standin__batch_fns = { standin__batch_issue, standin__batch_run, standin__batch_clone,
                                                     standin__batch_destroy };

/* ------------------------------------------------------------------ */
/* >>issue */

/* lock held: enqueues a batch of n parts on stream */
static ncclResult_t standin__enqueue(cudaStream_t stream, const standin__part* parts, int n, const char* fn) {
    standin__batch* b = standin__batch_new(n);
    cudaError_t e;
    if (!b) return ncclSystemError;
    memcpy(b->parts, parts, sizeof(standin__part) * (size_t)n);
    e = standin__enqueue_ext(stream, &standin__batch_fns, b, fn);
    if (e != cudaSuccess) {
        free(b->parts);
        free(b);
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}

static ncclResult_t standin__defer(cudaStream_t stream, const standin__part* p) {
    if (standin__tl_group.n_ops == standin__tl_group.cap_ops) {
        int cap = standin__tl_group.cap_ops ? standin__tl_group.cap_ops * 2 : 16;
        standin__deferred* v = (standin__deferred*)realloc(standin__tl_group.ops, sizeof(standin__deferred) * (size_t)cap);
        if (!v) return ncclSystemError;
        standin__tl_group.ops = v;
        standin__tl_group.cap_ops = cap;
    }
    standin__tl_group.ops[standin__tl_group.n_ops].stream = stream;
    standin__tl_group.ops[standin__tl_group.n_ops].part = *p;
    standin__tl_group.n_ops++;
    return ncclSuccess;
}

/* one collective or send/recv call */
static ncclResult_t standin__issue(int kind, const void* send, void* recv, size_t count, ncclDataType_t dt,
                                   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
    standin__part p;
    ncclResult_t r;
    const char* fn = standin__kind_names[kind];
    char why[160] = "";
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.send = send;
    p.recv = recv;
    p.count = count;
    p.dt = dt;
    p.op = op;
    p.root = root;
    p.grouped = standin__tl_group.depth > 0;
    standin__lock();
    standin__hook();
    p.comm = standin__comm(comm, fn);
    if (!p.comm) r = ncclInvalidArgument;
    else r = standin__check_part(&p, stream);
    if (r != ncclSuccess && p.comm && p.comm->async_err != ncclSuccess) snprintf(why, sizeof why, ": %s", p.comm->async_why);
    if (r == ncclSuccess) {
        if (standin__n.require_groups && !p.grouped)
            standin__violation("%s on communicator #%u (rank %d) issued outside ncclGroupStart/ncclGroupEnd "
                               "(standin_require_groups is on)", fn, p.comm->hdr.serial, p.comm->rank);
        r = p.grouped ? standin__defer(stream, &p) : standin__enqueue(stream, &p, 1, fn);
    }
    standin__unlock();
    if (r != ncclSuccess) {
        if (p.grouped && standin__tl_group.err == ncclSuccess) standin__tl_group.err = r;
        return standin__nerr(p.comm, r, "%s failed (%d)%s", fn, (int)r, why);
    }
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* >>init */

static const char standin__id_magic[16] = "standin-nccl-id";

/* lock held */
static struct ncclComm* standin__comm_new(int rank, int nranks, int device) {
    struct ncclComm* c = (struct ncclComm*)calloc(1, sizeof *c);
    if (!c) return NULL;
    c->send_seq = (uint64_t*)calloc((size_t)nranks, sizeof(uint64_t));
    c->recv_seq = (uint64_t*)calloc((size_t)nranks, sizeof(uint64_t));
    if (!c->send_seq || !c->recv_seq || !standin__register(&c->hdr, STANDIN__COMM)) {
        free(c->send_seq);
        free(c->recv_seq);
        free(c);
        return NULL;
    }
    c->rank = rank;
    c->nranks = nranks;
    c->device = device;
    if (standin__n.inj_pending && (standin__n.inj_rank < 0 || standin__n.inj_rank == rank)) {
        c->inj_set = 1;
        c->inj_at = (uint64_t)standin__n.inj_after;
        c->inj_code = standin__n.inj_code;
    }
    c->next_all = standin__n.comms;
    standin__n.comms = c;
    standin__n.live++;
    return c;
}

/* lock held: a communicator of the given ranks (all created, in rank order) */
static standin__commset* standin__set_new(struct ncclComm** comms, int n) {
    standin__commset* set = (standin__commset*)calloc(1, sizeof *set);
    int i;
    if (!set) return NULL;
    set->ranks = (struct ncclComm**)malloc(sizeof(struct ncclComm*) * (size_t)n);
    if (!set->ranks) {
        free(set);
        return NULL;
    }
    memcpy(set->ranks, comms, sizeof(struct ncclComm*) * (size_t)n);
    set->nranks = n;
    set->serial = ++standin__n.set_serial;
    set->next_all = standin__n.sets;
    standin__n.sets = set;
    for (i = 0; i < n; i++) {
        comms[i]->set = set;
        comms[i]->rdv = NULL;
    }
    return set;
}

/* lock held: 0 when two ranks share a device (a violation naming them) */
static int standin__distinct_devices(struct ncclComm** comms, int n, const char* fn) {
    int i, j;
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (comms[i]->device == comms[j]->device) {
                standin__violation("%s: ranks %d and %d are both on device %d (NCCL refuses two ranks of one "
                                   "communicator on one GPU: call cudaSetDevice in each rank first)", fn, i, j,
                                   comms[i]->device);
                return 0;
            }
    return 1;
}

/* lock held: every rank has arrived */
static void standin__rdv_complete(standin__rdv* v) {
    int i;
    if (!standin__distinct_devices(v->comms, v->nranks, "ncclCommInitRank") || !standin__set_new(v->comms, v->nranks)) {
        v->failed = 1;
        v->fail_code = ncclInvalidUsage;
        for (i = 0; i < v->nranks; i++) standin__kill(v->comms[i], "a failed ncclCommInitRank");
    } else {
        v->complete = 1;
    }
    standin__broadcast();
}

/* lock held: waits until c's rendezvous completes */
static ncclResult_t standin__rdv_wait(standin__rdv* v, struct ncclComm* c, double deadline) {
    while (!v->complete && !v->failed) {
        if (standin__resetting() || c->hdr.dead || !standin__wait(deadline)) {
            if (v->complete || v->failed) break;
            if (!c->hdr.dead)
                standin__violation("ncclCommInitRank: only %d of %d ranks called ncclCommInitRank within %d ms (rank "
                                   "%d gives up)", v->n_arrived, v->nranks, standin__timeout_ms(), c->rank);
            if (v->comms[c->rank] == c) {
                v->comms[c->rank] = NULL;
                v->n_arrived--;
            }
            standin__kill(c, "a timed-out ncclCommInitRank");
            return ncclSystemError;
        }
    }
    return v->complete ? ncclSuccess : v->fail_code;
}

static ncclResult_t standin__add_gwait(standin__rdv* v, struct ncclComm* c, standin__split* sp, ncclComm_t* out) {
    if (standin__tl_group.n_waits == standin__tl_group.cap_waits) {
        int cap = standin__tl_group.cap_waits ? standin__tl_group.cap_waits * 2 : 8;
        standin__gwait* w = (standin__gwait*)realloc(standin__tl_group.waits, sizeof(standin__gwait) * (size_t)cap);
        if (!w) return ncclSystemError;
        standin__tl_group.waits = w;
        standin__tl_group.cap_waits = cap;
    }
    standin__tl_group.waits[standin__tl_group.n_waits].rdv = v;
    standin__tl_group.waits[standin__tl_group.n_waits].comm = c;
    standin__tl_group.waits[standin__tl_group.n_waits].split = sp;
    standin__tl_group.waits[standin__tl_group.n_waits].out = out;
    standin__tl_group.n_waits++;
    return ncclSuccess;
}

ncclResult_t ncclGetVersion(int* version) {
    STANDIN__NENTER(ncclGetVersion);
    if (!version) return standin__nerr(NULL, ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
    uint64_t serial;
    STANDIN__NENTER(ncclGetUniqueId);
    if (!uniqueId) return standin__nerr(NULL, ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
    standin__lock();
    standin__hook();
    serial = ++standin__n.id_serial;
    standin__unlock();
    memset(uniqueId, 0, sizeof *uniqueId);
    memcpy(uniqueId->internal, standin__id_magic, sizeof standin__id_magic);
    memcpy(uniqueId->internal + sizeof standin__id_magic, &serial, sizeof serial);
    return ncclSuccess;
}

static ncclResult_t standin__init_rank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, int blocking);

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
    STANDIN__NENTER(ncclCommInitRank);
    return standin__init_rank(comm, nranks, commId, rank, -2);
}

/* The config is checked (set from NCCL_CONFIG_INITIALIZER) and its blocking
   recorded (standin_nccl_comm_blocking); every communicator of the stand-in
   blocks whatever it says. */
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
    STANDIN__NENTER(ncclCommInitRankConfig);
    if (config && config->magic != 0xcafebeef) {
        standin__violation("ncclCommInitRankConfig: config was not set from NCCL_CONFIG_INITIALIZER");
        return standin__nerr(NULL, ncclInvalidArgument, "ncclCommInitRankConfig: invalid config");
    }
    return standin__init_rank(comm, nranks, commId, rank, config ? config->blocking : -2);
}

static ncclResult_t standin__init_rank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, int blocking) {
    standin__rdv* v;
    struct ncclComm* c;
    ncclResult_t r = ncclSuccess;
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks) {
        standin__violation("ncclCommInitRank: %s", !comm ? "comm is NULL" : "rank out of range or nranks < 1");
        return standin__nerr(NULL, ncclInvalidArgument, "ncclCommInitRank: invalid argument");
    }
    *comm = NULL;
    if (memcmp(commId.internal, standin__id_magic, sizeof standin__id_magic) != 0) {
        standin__violation("ncclCommInitRank: the unique id was not made by ncclGetUniqueId (rank %d)", rank);
        return standin__nerr(NULL, ncclInvalidArgument, "ncclCommInitRank: invalid unique id");
    }
    standin__lock();
    standin__hook();
    for (v = standin__n.rdvs; v; v = v->next)
        if (!v->complete && !v->failed && memcmp(&v->id, &commId, sizeof commId) == 0) break;
    if (!v) {
        v = (standin__rdv*)calloc(1, sizeof *v);
        if (v) v->comms = (struct ncclComm**)calloc((size_t)nranks, sizeof(struct ncclComm*));
        if (!v || !v->comms) {
            free(v);
            standin__unlock();
            return standin__nerr(NULL, ncclSystemError, "ncclCommInitRank: out of memory");
        }
        v->id = commId;
        v->nranks = nranks;
        v->next = standin__n.rdvs;
        standin__n.rdvs = v;
    }
    if (v->nranks != nranks) {
        standin__violation("ncclCommInitRank: rank %d says %d ranks, an earlier rank said %d", rank, nranks, v->nranks);
        r = ncclInvalidUsage;
    } else if (v->comms[rank]) {
        standin__violation("ncclCommInitRank: rank %d joined twice", rank);
        r = ncclInvalidUsage;
    } else if (!(c = standin__comm_new(rank, nranks, standin__current_device()))) {
        r = ncclSystemError;
    } else {
        c->blocking = blocking;
        c->rdv = v;
        v->comms[rank] = c;
        v->n_arrived++;
        if (v->n_arrived == nranks) standin__rdv_complete(v);
        if (standin__tl_group.depth > 0) {
            r = standin__add_gwait(v, c, NULL, NULL);
            if (r == ncclSuccess) *comm = c;
        } else {
            r = standin__rdv_wait(v, c, standin__deadline());
            if (r == ncclSuccess) *comm = c;
        }
    }
    standin__unlock();
    if (r != ncclSuccess) return standin__nerr(NULL, r, "ncclCommInitRank failed (rank %d of %d)", rank, nranks);
    return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
    struct ncclComm** made;
    int i, n_dev;
    ncclResult_t r = ncclSuccess;
    STANDIN__NENTER(ncclCommInitAll);
    if (!comms || ndev < 1) {
        standin__violation("ncclCommInitAll: %s", !comms ? "comms is NULL" : "ndev < 1");
        return standin__nerr(NULL, ncclInvalidArgument, "ncclCommInitAll: invalid argument");
    }
    made = (struct ncclComm**)calloc((size_t)ndev, sizeof(struct ncclComm*));
    if (!made) return standin__nerr(NULL, ncclSystemError, "ncclCommInitAll: out of memory");
    standin__lock();
    standin__hook();
    n_dev = standin__device_count();
    for (i = 0; i < ndev && r == ncclSuccess; i++) {
        int d = devlist ? devlist[i] : i;
        if (d < 0 || d >= n_dev) {
            standin__violation("ncclCommInitAll: device %d does not exist (%d devices)", d, n_dev);
            r = ncclInvalidArgument;
        } else if (!(made[i] = standin__comm_new(i, ndev, d))) {
            r = ncclSystemError;
        }
    }
    if (r == ncclSuccess && !standin__distinct_devices(made, ndev, "ncclCommInitAll")) r = ncclInvalidUsage;
    if (r == ncclSuccess && !standin__set_new(made, ndev)) r = ncclSystemError;
    if (r != ncclSuccess) {
        for (i = 0; i < ndev; i++)
            if (made[i]) standin__kill(made[i], "a failed ncclCommInitAll");
    } else {
        for (i = 0; i < ndev; i++) comms[i] = made[i];
    }
    standin__unlock();
    free(made);
    if (r != ncclSuccess) return standin__nerr(NULL, r, "ncclCommInitAll failed");
    return ncclSuccess;
}

/* lock held: every rank has called ncclCommSplit number sp->index */
static void standin__split_complete(standin__commset* set, standin__split* sp) {
    int n = set->nranks, i, j, m;
    int* order = (int*)malloc(sizeof(int) * (size_t)n);
    struct ncclComm** made = (struct ncclComm**)calloc((size_t)n, sizeof(struct ncclComm*));
    for (i = 0; order && made && i < n; i++) {
        int color = sp->colors[i];
        if (color == NCCL_SPLIT_NOCOLOR || sp->results[i]) continue;
        /* the ranks of this color, by key then old rank */
        for (j = 0, m = 0; j < n; j++)
            if (sp->colors[j] == color) {
                int k = m++;
                while (k > 0 && (sp->keys[order[k - 1]] > sp->keys[j] ||
                                 (sp->keys[order[k - 1]] == sp->keys[j] && order[k - 1] > j))) {
                    order[k] = order[k - 1];
                    k--;
                }
                order[k] = j;
            }
        for (j = 0; j < m; j++) made[j] = standin__comm_new(j, m, set->ranks[order[j]]->device);
        for (j = 0; j < m && made[j]; j++) {}
        if (j < m || !standin__set_new(made, m)) {
            for (j = 0; j < m; j++)
                if (made[j]) standin__kill(made[j], "a failed ncclCommSplit");
            continue;
        }
        for (j = 0; j < m; j++) sp->results[order[j]] = made[j];
    }
    free(order);
    free(made);
    sp->complete = 1;
    standin__broadcast();
}

/* lock held */
static ncclResult_t standin__split_wait(struct ncclComm* c, standin__split* sp, ncclComm_t* out, double deadline) {
    while (!sp->complete) {
        if (standin__resetting() || !standin__wait(deadline)) {
            if (sp->complete) break;
            standin__violation("ncclCommSplit: only %d of %d ranks of communicator set #%u called ncclCommSplit "
                               "within %d ms (rank %d gives up)", sp->n_arrived, c->nranks,
                               c->set ? c->set->serial : 0, standin__timeout_ms(), c->rank);
            if (sp->arrived[c->rank]) {
                sp->arrived[c->rank] = 0;
                sp->n_arrived--;
            }
            return ncclSystemError;
        }
    }
    if (sp->colors[c->rank] != NCCL_SPLIT_NOCOLOR && !sp->results[c->rank]) return ncclSystemError;
    *out = sp->results[c->rank];
    return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
    struct ncclComm* c;
    standin__split* sp;
    ncclResult_t r = ncclSuccess;
    STANDIN__NENTER(ncclCommSplit);
    if (!newcomm || (color < 0 && color != NCCL_SPLIT_NOCOLOR) ||
        (config && config->magic != 0xcafebeef)) {
        standin__violation("ncclCommSplit: %s", !newcomm ? "newcomm is NULL"
                                                : config && config->magic != 0xcafebeef
                                                    ? "config was not set from NCCL_CONFIG_INITIALIZER"
                                                    : "color must be >= 0 or NCCL_SPLIT_NOCOLOR");
        return standin__nerr(NULL, ncclInvalidArgument, "ncclCommSplit: invalid argument");
    }
    *newcomm = NULL;
    standin__lock();
    standin__hook();
    c = standin__comm(comm, "ncclCommSplit");
    if (!c) r = ncclInvalidArgument;
    else if (!c->set) {
        standin__violation("ncclCommSplit: communicator #%u is still being initialised", c->hdr.serial);
        r = ncclInvalidUsage;
    } else if (c->set->aborted || c->async_err != ncclSuccess) {
        r = c->async_err != ncclSuccess ? c->async_err : ncclRemoteError;
    }
    if (r == ncclSuccess) {
        uint64_t idx = c->n_splits++;
        for (sp = c->set->splits; sp && sp->index != idx; sp = sp->next) {}
        if (!sp) {
            int n = c->nranks;
            sp = (standin__split*)calloc(1, sizeof *sp);
            if (sp) {
                sp->colors = (int*)calloc((size_t)n, sizeof(int));
                sp->keys = (int*)calloc((size_t)n, sizeof(int));
                sp->arrived = (int*)calloc((size_t)n, sizeof(int));
                sp->results = (struct ncclComm**)calloc((size_t)n, sizeof(struct ncclComm*));
            }
            if (!sp || !sp->colors || !sp->keys || !sp->arrived || !sp->results) {
                if (sp) {
                    free(sp->colors);
                    free(sp->keys);
                    free(sp->arrived);
                    free(sp->results);
                    free(sp);
                }
                r = ncclSystemError;
                goto done;
            }
            sp->index = idx;
            sp->next = c->set->splits;
            c->set->splits = sp;
        }
        sp->colors[c->rank] = color;
        sp->keys[c->rank] = key;
        sp->arrived[c->rank] = 1;
        if (++sp->n_arrived == c->nranks) standin__split_complete(c->set, sp);
        if (standin__tl_group.depth > 0) r = standin__add_gwait(NULL, c, sp, newcomm);
        else r = standin__split_wait(c, sp, newcomm, standin__deadline());
    }
done:
    if (r == ncclSuccess && *newcomm) (*newcomm)->blocking = config ? config->blocking : c->blocking;
    standin__unlock();
    if (r != ncclSuccess) return standin__nerr(NULL, r, "ncclCommSplit failed");
    return ncclSuccess;
}

int standin_nccl_comm_blocking(void* comm) {
    struct ncclComm* c;
    int b;
    standin__lock();
    c = (struct ncclComm*)standin__check_handle(comm, STANDIN__COMM, "standin_nccl_comm_blocking");
    b = c ? c->blocking : -3;
    standin__unlock();
    return b;
}

/* ------------------------------------------------------------------ */
/* >>comm_api */

/* lock held: a batch with an operation on communicator arg */
static int standin__batch_uses(const void* payload, const void* arg) {
    const standin__batch* b = (const standin__batch*)payload;
    int i;
    for (i = 0; i < b->n; i++) if ((const void*)b->parts[i].comm == arg) return 1;
    return 0;
}

/* lock held: NCCL 2.26 and later wait in ncclCommAbort and ncclCommDestroy
   until every CUDA graph that captured an operation of the communicator is
   destroyed (an open capture, a graph, a graph exec): with one alive they
   hang. That is a violation here, and the call fails with
   ncclInvalidUsage after doing its work (so that the test goes on). */
static int standin__held_by_graph(struct ncclComm* c, const char* fn) {
    char buf[96];
    const char* who = standin__graph_holder(&standin__batch_fns, standin__batch_uses, c, buf, sizeof buf);
    if (!who) return 0;
    standin__violation("%s: %s still holds operations of communicator #%u (rank %d): NCCL 2.26 and later wait "
                       "for it to be destroyed, so this call would hang (end the capture and destroy the graph "
                       "and its exec first)", fn, who, c->hdr.serial, c->rank);
    return 1;
}

/* lock held: waits until c's issued operations finished; 0 on timeout */
static int standin__drain_comm(struct ncclComm* c, const char* fn) {
    double deadline = standin__deadline();
    while (c->n_pending > 0 && !(c->set && c->set->aborted)) {
        if (standin__resetting() || !standin__wait(deadline)) {
            if (c->n_pending == 0) break;
            standin__violation("%s: %llu operations on communicator #%u (rank %d) still pending after %d ms: a hang "
                               "(mismatch, missing peer, injected error) needs ncclCommAbort", fn,
                               (unsigned long long)c->n_pending, c->hdr.serial, c->rank, standin__timeout_ms());
            return 0;
        }
    }
    return 1;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    struct ncclComm* c;
    ncclResult_t r = ncclSuccess;
    STANDIN__NENTER(ncclCommFinalize);
    standin__lock();
    standin__hook();
    c = standin__comm(comm, "ncclCommFinalize");
    if (!c) r = ncclInvalidArgument;
    else if (!standin__drain_comm(c, "ncclCommFinalize")) r = ncclInvalidUsage;
    else c->finalized = 1;
    standin__unlock();
    if (r != ncclSuccess) return standin__nerr(NULL, r, "ncclCommFinalize failed");
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    struct ncclComm* c;
    ncclResult_t r = ncclSuccess;
    STANDIN__NENTER(ncclCommDestroy);
    if (!comm) return ncclSuccess;
    standin__lock();
    standin__hook();
    c = standin__comm(comm, "ncclCommDestroy");
    if (!c) r = ncclInvalidArgument;
    else if (standin__held_by_graph(c, "ncclCommDestroy")) r = ncclInvalidUsage;
    else if (!standin__drain_comm(c, "ncclCommDestroy")) r = ncclInvalidUsage;
    else standin__kill(c, "ncclCommDestroy");
    standin__unlock();
    if (r != ncclSuccess) return standin__nerr(NULL, r, "ncclCommDestroy failed");
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
    struct ncclComm* c;
    int i, held;
    STANDIN__NENTER(ncclCommAbort);
    if (!comm) return ncclSuccess;
    standin__lock();
    standin__hook();
    c = standin__comm(comm, "ncclCommAbort");
    if (!c) {
        standin__unlock();
        return standin__nerr(NULL, ncclInvalidArgument, "ncclCommAbort: invalid communicator");
    }
    held = standin__held_by_graph(c, "ncclCommAbort");
    if (c->set && !c->set->aborted) {
        char why[64];
        snprintf(why, sizeof why, "rank %d aborted the communicator", c->rank);
        c->set->aborted = 1;
        for (i = 0; i < c->set->nranks; i++)
            if (c->set->ranks[i] != c)
                standin__comm_error(c->set->ranks[i], ncclRemoteError, why);
    } else if (!c->set && c->rdv && c->rdv->comms[c->rank] == c) {
        c->rdv->comms[c->rank] = NULL;
        c->rdv->n_arrived--;
    }
    standin__kill(c, "ncclCommAbort");
    standin__broadcast();
    standin__unlock();
    if (held) return standin__nerr(NULL, ncclInvalidUsage, "ncclCommAbort: a CUDA graph still holds the communicator's operations");
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
    struct ncclComm* c;
    STANDIN__NENTER(ncclCommGetAsyncError);
    if (!asyncError) return standin__nerr(NULL, ncclInvalidArgument, "ncclCommGetAsyncError: asyncError is NULL");
    standin__lock();
    standin__hook();
    c = standin__comm(comm, "ncclCommGetAsyncError");
    if (c) *asyncError = c->async_err;
    standin__unlock();
    return c ? ncclSuccess : standin__nerr(NULL, ncclInvalidArgument, "ncclCommGetAsyncError: invalid communicator");
}

static ncclResult_t standin__comm_query(ncclComm_t comm, int* out, int what, const char* fn) {
    struct ncclComm* c;
    if (!out) return standin__nerr(NULL, ncclInvalidArgument, "%s: the result pointer is NULL", fn);
    standin__lock();
    standin__hook();
    c = standin__comm(comm, fn);
    if (c) *out = what == 0 ? c->nranks : what == 1 ? c->rank : c->device;
    standin__unlock();
    return c ? ncclSuccess : standin__nerr(NULL, ncclInvalidArgument, "%s: invalid communicator", fn);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
    STANDIN__NENTER(ncclCommCount);
    return standin__comm_query(comm, count, 0, "ncclCommCount");
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
    STANDIN__NENTER(ncclCommUserRank);
    return standin__comm_query(comm, rank, 1, "ncclCommUserRank");
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
    STANDIN__NENTER(ncclCommCuDevice);
    return standin__comm_query(comm, device, 2, "ncclCommCuDevice");
}

/* ------------------------------------------------------------------ */
/* >>collectives */

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    STANDIN__NENTER(ncclAllReduce);
    return standin__issue(STANDIN__ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    STANDIN__NENTER(ncclReduceScatter);
    return standin__issue(STANDIN__REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
    STANDIN__NENTER(ncclAllGather);
    return standin__issue(STANDIN__ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
    STANDIN__NENTER(ncclBroadcast);
    return standin__issue(STANDIN__BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
    STANDIN__NENTER(ncclReduce);
    return standin__issue(STANDIN__REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    STANDIN__NENTER(ncclSend);
    return standin__issue(STANDIN__SEND, sendbuff, NULL, count, datatype, ncclSum, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
    STANDIN__NENTER(ncclRecv);
    return standin__issue(STANDIN__RECV, NULL, recvbuff, count, datatype, ncclSum, peer, comm, stream);
}

/* ------------------------------------------------------------------ */
/* >>groups */

ncclResult_t ncclGroupStart(void) {
    STANDIN__NENTER(ncclGroupStart);
    if (standin__tl_group.depth == 0) standin__tl_group.err = ncclSuccess;
    standin__tl_group.depth++;
    return ncclSuccess;
}

static void standin__group_clear(void) {
    free(standin__tl_group.ops);
    free(standin__tl_group.waits);
    memset(&standin__tl_group, 0, sizeof standin__tl_group);
}

ncclResult_t ncclGroupEnd(void) {
    ncclResult_t r = ncclSuccess, r2;
    double deadline;
    int i, j, injected;
    if (standin__enter(standin__fn_ncclGroupEnd, &injected)) {
        /* an injected failure ends the group all the same: its operations are
           dropped (never issued), as after a real failed ncclGroupEnd */
        if (standin__tl_group.depth > 0 && --standin__tl_group.depth == 0) standin__group_clear();
        return standin__nerr(NULL, (ncclResult_t)injected, "ncclGroupEnd failed (injected by standin_fail_call)");
    }
    if (standin__tl_group.depth == 0) {
        standin__violation("ncclGroupEnd without a matching ncclGroupStart");
        return standin__nerr(NULL, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    }
    if (--standin__tl_group.depth > 0) return ncclSuccess;
    standin__lock();
    standin__hook();
    deadline = standin__deadline();
    /* the inits and splits of the group, then its operations */
    for (i = 0; i < standin__tl_group.n_waits; i++) {
        standin__gwait* w = &standin__tl_group.waits[i];
        if (w->rdv) r2 = standin__rdv_wait(w->rdv, w->comm, deadline);
        else r2 = standin__split_wait(w->comm, w->split, w->out, deadline);
        if (r == ncclSuccess) r = r2;
    }
    for (i = 0; i < standin__tl_group.n_ops && r == ncclSuccess; i++) {
        cudaStream_t s = standin__tl_group.ops[i].stream;
        standin__part* parts;
        int n = 0;
        if (standin__tl_group.ops[i].part.kind < 0) continue;   /* issued with an earlier stream */
        parts = (standin__part*)malloc(sizeof(standin__part) * (size_t)(standin__tl_group.n_ops - i));
        if (!parts) {
            r = ncclSystemError;
            break;
        }
        for (j = i; j < standin__tl_group.n_ops; j++)
            if (standin__tl_group.ops[j].part.kind >= 0 && standin__tl_group.ops[j].stream == s) {
                parts[n++] = standin__tl_group.ops[j].part;
                standin__tl_group.ops[j].part.kind = -1;
            }
        r = standin__enqueue(s, parts, n, "ncclGroupEnd");
        free(parts);
    }
    standin__unlock();
    if (r == ncclSuccess) r = standin__tl_group.err;
    standin__group_clear();
    if (r != ncclSuccess) return standin__nerr(NULL, r, "ncclGroupEnd failed (%d)", (int)r);
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* >>errors */

const char* ncclGetErrorString(ncclResult_t result) {
    int dummy;
    (void)standin__enter(standin__fn_ncclGetErrorString, &dummy);
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char* ncclGetLastError(ncclComm_t comm) {
    int dummy;
    standin__obj* o;
    (void)standin__enter(standin__fn_ncclGetLastError, &dummy);
    memcpy(standin__tl_last, standin__tl_msg, sizeof standin__tl_last);
    if (comm) {
        standin__lock();
        o = standin__check_handle(comm, STANDIN__COMM, "ncclGetLastError");
        if (o && ((struct ncclComm*)o)->last_error[0])
            memcpy(standin__tl_last, ((struct ncclComm*)o)->last_error, sizeof standin__tl_last);
        standin__unlock();
    }
    return standin__tl_last;
}

/* ------------------------------------------------------------------ */
/* >>control */

static void standin__nccl_abort_all(void) {
    standin__commset* set;
    standin__rdv* v;
    for (set = standin__n.sets; set; set = set->next_all) set->aborted = 1;
    for (v = standin__n.rdvs; v; v = v->next)
        if (!v->complete) v->failed = 1;
    standin__broadcast();
}

static void standin__nccl_reset(void) {
    struct ncclComm* c;
    standin__commset* set;
    standin__rdv* v;
    int hooked = standin__n.hooked;
    while ((c = standin__n.comms)) {
        standin__n.comms = c->next_all;
        free(c->send_seq);
        free(c->recv_seq);
        free(c);
    }
    while ((set = standin__n.sets)) {
        standin__n.sets = set->next_all;
        while (set->slots) {
            standin__slot* sl = set->slots;
            set->slots = sl->next;
            free(sl->posts);
            free(sl);
        }
        while (set->buffered) {
            standin__buffered* b = set->buffered;
            set->buffered = b->next;
            free(b->data);
            free(b);
        }
        while (set->splits) {
            standin__split* sp = set->splits;
            set->splits = sp->next;
            free(sp->colors);
            free(sp->keys);
            free(sp->arrived);
            free(sp->results);
            free(sp);
        }
        free(set->ranks);
        free(set);
    }
    while ((v = standin__n.rdvs)) {
        standin__n.rdvs = v->next;
        free(v->comms);
        free(v);
    }
    memset(&standin__n, 0, sizeof standin__n);
    standin__n.hooked = hooked;
    standin__group_clear();
    standin__tl_msg[0] = 0;
}

static int standin__nccl_live(void) { return standin__n.live; }

static void standin__nccl_settings(void) {
    standin__n.require_groups = 0;
    standin__n.inj_pending = 0;
}

void standin_require_groups(int on) {
    standin__lock();
    standin__hook();
    standin__n.require_groups = on != 0;
    standin__unlock();
}

void standin_nccl_inject_async_error(int rank, int after_n, int result) {
    struct ncclComm* c;
    standin__lock();
    standin__hook();
    if (after_n < 0) after_n = 0;
    for (c = standin__n.comms; c; c = c->next_all) {
        if (c->hdr.dead || (rank >= 0 && c->rank != rank)) continue;
        c->inj_set = result != ncclSuccess;
        c->inj_at = c->n_ops + (uint64_t)after_n;
        c->inj_code = (ncclResult_t)result;
    }
    standin__n.inj_pending = result != ncclSuccess;
    standin__n.inj_rank = rank;
    standin__n.inj_after = after_n;
    standin__n.inj_code = (ncclResult_t)result;
    standin__unlock();
}
