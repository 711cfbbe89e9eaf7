/* tests/test_standin.c - self-tests of the CPU stand-in for the CUDA
   runtime and NCCL (tests/standin/). Every function is called through the
   real <cuda_runtime_api.h> and <nccl.h>; every rule the stand-in checks is
   broken once (the violation must be recorded, with a message that says
   what went wrong, and the call must fail as CUDA or NCCL would) and kept
   once (no violation). Reduction results are compared with a reference
   computed here: element values decoded with ldexp and rounded by search
   over every finite float16 / bfloat16 value.

   Built only when the CUDA and NCCL headers are there (see the Makefile);
   without them it is compiled with STANDIN_NO_HEADERS and reports a skip. */
#include "harness.h"

#ifdef STANDIN_NO_HEADERS

static void test_standin_headers(void) {
#ifdef STANDIN_SWITCHED_OFF
    SKIP("the CUDA/NCCL stand-in tests are switched off (NO_CUDA=1)");
#else
    SKIP("the CUDA/NCCL stand-in needs cuda_runtime_api.h and nccl.h under CUDA_INCLUDE (default "
         "/usr/local/cuda/include): install the CUDA toolkit headers and NCCL under /usr/local/cuda");
#endif
}

int main(void) {
    TH_RUN(test_standin_headers);
    return th_done();
}

#else

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include "standin/standin.h"

/* ------------------------------------------------------------------ */
/* helpers */

static void sleep_ms(int ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* how many recorded violations contain `part` */
static int violations_with(const char* part) {
    int i, n = 0;
    for (i = 0; i < standin_violation_count(); i++)
        if (strstr(standin_violation(i), part)) n++;
    return n;
}

static const char* first_violation(void) {
    return standin_violation_count() ? standin_violation(0) : "(none)";
}

/* exactly the violations expected so far: n of them, each containing part */
#define CHECK_VIOLATION(n, part, what) do { \
        CHECK(standin_violation_count() == (n) && violations_with(part) == (n), \
              "%s: %d violation(s) containing \"%s\" (got %d, first: %s)", what, (n), part, \
              standin_violation_count(), first_violation()); \
        standin_clear_violations(); \
    } while (0)

#define CHECK_CLEAN(what) CHECK(standin_violation_count() == 0, "%s: no violation (got %d, first: %s)", what, \
                                standin_violation_count(), first_violation())

/* the end of every test: nothing leaked or left running */
static void finish(const char* what) {
    CHECK_INT(standin_live_handles(), 0, "%s: every handle and allocation was destroyed", what);
    standin_reset();
    CHECK(standin_violation_count() == 0, "%s: nothing was left running at the reset (%s)", what, first_violation());
    standin_reset();
}

/* a host function that blocks until the test opens the gate */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open, entered;
} gate;

static void gate_init(gate* g) {
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = g->entered = 0;
}

static void gate_open(gate* g) {
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void gate_fn(void* arg) {
    gate* g = (gate*)arg;
    pthread_mutex_lock(&g->mu);
    g->entered = 1;
    pthread_cond_broadcast(&g->cv);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void gate_free(gate* g) {
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

/* a log of host-function runs, in the order they ran */
typedef struct tlog {
    pthread_mutex_t mu;
    char text[256];
    int n;
} tlog;

typedef struct tlog_arg {
    tlog* log;
    char c;
    int sleep_ms;
} tlog_arg;

static void tlog_fn(void* arg) {
    tlog_arg* a = (tlog_arg*)arg;
    if (a->sleep_ms) sleep_ms(a->sleep_ms);
    pthread_mutex_lock(&a->log->mu);
    if (a->log->n < (int)sizeof a->log->text - 1) a->log->text[a->log->n++] = a->c;
    pthread_mutex_unlock(&a->log->mu);
}

static void sleep_fn(void* arg) { sleep_ms(*(int*)arg); }

/* stream data used by host functions: happens-before comes from the
   stream order the stand-in must provide (TSan checks it) */
typedef struct cell {
    int value;
    int seen;
} cell;

static void cell_set_slow(void* arg) {
    sleep_ms(30);
    ((cell*)arg)->value = 42;
}

static void cell_read(void* arg) { ((cell*)arg)->seen = ((cell*)arg)->value; }

static void count_fn(void* arg) { (*(int*)arg)++; }

/* ------------------------------------------------------------------ */
/* devices, streams, events */

static int other_thread_device;
static void* get_device_thread(void* arg) {
    (void)arg;
    cudaGetDevice(&other_thread_device);
    return NULL;
}

static void test_devices(void) {
    int n = -1, d = -1, least = 7, greatest = 7;
    pthread_t th;
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 8, "8 devices by default (got %d)", n);
    standin_set_device_count(3);
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 3, "standin_set_device_count(3) gives 3 (got %d)", n);
    CHECK(cudaSetDevice(2) == cudaSuccess && cudaGetDevice(&d) == cudaSuccess && d == 2, "cudaSetDevice(2) sticks");
    pthread_create(&th, NULL, get_device_thread, NULL);
    pthread_join(th, NULL);
    CHECK_INT(other_thread_device, 0, "the current device is per thread: another thread is still on device 0");
    CHECK_INT(cudaSetDevice(3), cudaErrorInvalidDevice, "cudaSetDevice(3) of 3 devices is cudaErrorInvalidDevice");
    CHECK_VIOLATION(1, "does not exist", "cudaSetDevice out of range");
    CHECK(cudaGetDevice(&d) == cudaSuccess && d == 2, "a failed cudaSetDevice keeps the device");
    CHECK_INT(cudaGetDeviceCount(NULL), cudaErrorInvalidValue, "cudaGetDeviceCount(NULL)");
    CHECK_INT(cudaGetDevice(NULL), cudaErrorInvalidValue, "cudaGetDevice(NULL)");
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess && least == 0 && greatest == -5,
          "priority range [least 0, greatest -5] (got %d, %d)", least, greatest);
    CHECK_INT(cudaDeviceGetStreamPriorityRange(NULL, NULL), cudaSuccess, "the range with NULL pointers");
    CHECK_INT(cudaDeviceSynchronize(), cudaSuccess, "cudaDeviceSynchronize with nothing to do");
    CHECK_CLEAN("legal device calls");
    finish("devices");
}

static void test_stream_order(void) {
    cudaStream_t s;
    tlog log;
    tlog_arg args[40];
    gate g;
    int i, ok = 1, sleep10 = 10;
    memset(&log, 0, sizeof log);
    pthread_mutex_init(&log.mu, NULL);
    gate_init(&g);
    CHECK_INT(cudaStreamCreate(&s), cudaSuccess, "cudaStreamCreate");
    CHECK_INT(cudaLaunchHostFunc(s, gate_fn, &g), cudaSuccess, "a host function that waits for the test");
    for (i = 0; i < 40; i++) {
        args[i].log = &log;
        args[i].c = (char)('A' + i % 26);
        args[i].sleep_ms = i % 7 == 0 ? 1 : 0;
        cudaLaunchHostFunc(s, tlog_fn, &args[i]);
    }
    CHECK_INT(cudaStreamQuery(s), cudaErrorNotReady, "cudaStreamQuery is cudaErrorNotReady while work waits");
    CHECK_INT(cudaGetLastError(), cudaSuccess, "cudaErrorNotReady is not a sticky last error");
    gate_open(&g);
    CHECK_INT(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
    CHECK_INT(cudaStreamQuery(s), cudaSuccess, "cudaStreamQuery is cudaSuccess once the work is done");
    for (i = 0; i < 40; i++)
        if (log.text[i] != (char)('A' + i % 26)) ok = 0;
    CHECK(ok && log.n == 40, "40 host functions ran in issue order (%.40s)", log.text);
    /* destroying a stream with work queued: the work still runs */
    CHECK_INT(cudaLaunchHostFunc(s, sleep_fn, &sleep10), cudaSuccess, "work before a destroy");
    CHECK_INT(cudaLaunchHostFunc(s, tlog_fn, &args[0]), cudaSuccess, "more work before a destroy");
    CHECK_INT(cudaStreamDestroy(s), cudaSuccess, "cudaStreamDestroy with work queued");
    CHECK_INT(cudaDeviceSynchronize(), cudaSuccess, "cudaDeviceSynchronize waits for a destroyed stream's work");
    CHECK_INT(log.n, 41, "the destroyed stream's queued work ran");
    CHECK_CLEAN("stream order");
    pthread_mutex_destroy(&log.mu);
    gate_free(&g);
    finish("stream order");
}

static void test_cross_stream_events(void) {
    cudaStream_t s1, s2;
    cudaEvent_t e;
    cell c = { 0, -1 }, c2 = { 0, -1 };
    gate g;
    int done_s2 = 0;
    gate_init(&g);
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    CHECK_INT(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess, "cudaEventCreateWithFlags");
    /* s2 waits for a slow host function on s1 through the event */
    cudaLaunchHostFunc(s1, cell_set_slow, &c);
    CHECK_INT(cudaEventRecord(e, s1), cudaSuccess, "cudaEventRecord");
    CHECK_INT(cudaStreamWaitEvent(s2, e, 0), cudaSuccess, "cudaStreamWaitEvent");
    cudaLaunchHostFunc(s2, cell_read, &c);
    cudaStreamSynchronize(s2);
    CHECK_INT(c.seen, 42, "a host function on s2 after the wait sees the slow host function's write on s1");
    /* the wait is for the record current at the call: re-recording e after
       work that blocks does not hold s2 back */
    cudaLaunchHostFunc(s1, cell_set_slow, &c2);
    cudaEventRecord(e, s1);
    cudaStreamWaitEvent(s2, e, 0);
    cudaLaunchHostFunc(s1, gate_fn, &g);
    cudaEventRecord(e, s1);                  /* a later record: complete only after the gate opens */
    cudaLaunchHostFunc(s2, cell_read, &c2);
    cudaLaunchHostFunc(s2, count_fn, &done_s2);
    CHECK_INT(cudaStreamSynchronize(s2), cudaSuccess, "s2 finishes while s1 is still held by the gate");
    CHECK(c2.seen == 42 && done_s2 == 1, "s2 waited for the record it saw at the call, not the later one");
    CHECK_INT(cudaEventQuery(e), cudaErrorNotReady, "cudaEventQuery of the held record is cudaErrorNotReady");
    gate_open(&g);
    CHECK_INT(cudaEventSynchronize(e), cudaSuccess, "cudaEventSynchronize");
    CHECK_INT(cudaEventQuery(e), cudaSuccess, "cudaEventQuery after it completed");
    CHECK_CLEAN("cross-stream events");
    cudaEventDestroy(e);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    gate_free(&g);
    finish("cross-stream events");
}

static void test_priorities(void) {
    cudaStream_t a, b, c, d;
    cudaEvent_t e;
    CHECK_INT(cudaStreamCreateWithPriority(&a, cudaStreamDefault, -2), cudaSuccess, "cudaStreamCreateWithPriority");
    cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, -100);
    cudaStreamCreateWithPriority(&c, 0, 3);
    cudaStreamCreateWithFlags(&d, cudaStreamDefault);
    cudaEventCreate(&e);
    CHECK_INT(standin_stream_priority(a), -2, "priority -2 is kept");
    CHECK_INT(standin_stream_priority(b), -5, "priority -100 is clamped to the greatest, -5");
    CHECK_INT(standin_stream_priority(c), 0, "priority 3 is clamped to the least, 0");
    CHECK_INT(standin_stream_priority(d), 0, "cudaStreamCreateWithFlags has priority 0");
    CHECK_INT(standin_stream_priority(NULL), 0, "the default stream has priority 0");
    CHECK_INT(standin_stream_priority((cudaStream_t)(void*)e), INT_MIN, "an event is not a stream");
    CHECK_INT(cudaStreamCreateWithFlags(&d, 0x10), cudaErrorInvalidValue, "unknown stream flags");
    CHECK_VIOLATION(1, "unknown flags", "unknown stream flags");
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaStreamDestroy(c);
    cudaStreamDestroy(d);
    cudaEventDestroy(e);
    finish("priorities");
}

static void test_event_timing(void) {
    cudaStream_t s;
    cudaEvent_t t0, t1, nt, fresh;
    float ms = -1;
    int sleep25 = 25;
    gate g;
    gate_init(&g);
    cudaStreamCreate(&s);
    CHECK_INT(cudaEventCreate(&t0), cudaSuccess, "cudaEventCreate");
    cudaEventCreateWithFlags(&t1, cudaEventBlockingSync);
    cudaEventCreateWithFlags(&nt, cudaEventDisableTiming);
    cudaEventCreate(&fresh);
    CHECK_INT(cudaEventQuery(fresh), cudaSuccess, "cudaEventQuery of a never-recorded event is cudaSuccess");
    CHECK_CLEAN("querying a never-recorded event is legal");
    cudaEventRecord(t0, s);
    cudaLaunchHostFunc(s, sleep_fn, &sleep25);
    cudaLaunchHostFunc(s, gate_fn, &g);
    cudaEventRecord(t1, s);
    cudaEventRecord(nt, s);
    CHECK_INT(cudaEventElapsedTime(&ms, t0, t1), cudaErrorNotReady, "cudaEventElapsedTime before t1 completed");
    gate_open(&g);
    cudaEventSynchronize(t1);
    CHECK_INT(cudaEventElapsedTime(&ms, t0, t1), cudaSuccess, "cudaEventElapsedTime");
    CHECK(ms >= 20.0f && ms < 5000.0f, "about the 25 ms slept between the records (%.3f ms)", (double)ms);
    CHECK_CLEAN("timing events");
    CHECK_INT(cudaEventElapsedTime(&ms, t0, nt), cudaErrorInvalidResourceHandle,
              "cudaEventElapsedTime with a cudaEventDisableTiming event");
    CHECK_VIOLATION(1, "cudaEventDisableTiming", "timing a cudaEventDisableTiming event");
    CHECK_INT(cudaEventElapsedTime(&ms, fresh, t1), cudaErrorInvalidResourceHandle,
              "cudaEventElapsedTime with a never-recorded event");
    CHECK_VIOLATION(1, "never recorded", "timing a never-recorded event");
    CHECK_INT(cudaEventElapsedTime(NULL, t0, t1), cudaErrorInvalidValue, "cudaEventElapsedTime(NULL, ...)");
    CHECK_INT(cudaEventCreateWithFlags(&fresh, cudaEventInterprocess), cudaErrorInvalidValue,
              "cudaEventInterprocess needs cudaEventDisableTiming");
    CHECK_VIOLATION(1, "invalid flags", "bad event flags");
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaEventDestroy(nt);
    cudaEventDestroy(fresh);
    cudaStreamDestroy(s);
    gate_free(&g);
    finish("event timing");
}

/* rule 1 */
static void test_unrecorded_event(void) {
    cudaStream_t s;
    cudaEvent_t e;
    cudaStreamCreate(&s);
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    CHECK_INT(cudaStreamWaitEvent(s, e, 0), cudaErrorIllegalState, "waiting on a never-recorded event fails");
    CHECK_VIOLATION(1, "never recorded", "cudaStreamWaitEvent on a never-recorded event");
    CHECK_INT(cudaGetLastError(), cudaErrorIllegalState, "and is the last error");
    CHECK_INT(cudaEventSynchronize(e), cudaErrorIllegalState, "cudaEventSynchronize on a never-recorded event");
    CHECK_VIOLATION(1, "never recorded", "cudaEventSynchronize on a never-recorded event");
    cudaEventRecord(e, s);
    CHECK_INT(cudaStreamWaitEvent(s, e, 0), cudaSuccess, "waiting after a record");
    CHECK_INT(cudaEventSynchronize(e), cudaSuccess, "synchronising after a record");
    CHECK_INT(cudaStreamWaitEvent(s, e, 0x8), cudaErrorInvalidValue, "unknown wait flags");
    CHECK_VIOLATION(1, "unknown flags", "unknown wait flags");
    CHECK_INT(cudaStreamWaitEvent(s, e, cudaEventWaitExternal), cudaSuccess, "cudaEventWaitExternal is accepted");
    CHECK_CLEAN("recorded events");
    cudaStreamSynchronize(s);
    cudaEventDestroy(e);
    cudaStreamDestroy(s);
    finish("rule 1");
}

/* rule 2 */
static void test_use_after_destroy(void) {
    cudaStream_t s, s2;
    cudaEvent_t e;
    cudaGraph_t gr;
    cudaGraphExec_t ex;
    int x = 0, bogus = 0;
    cudaStreamCreate(&s);
    cudaStreamCreate(&s2);
    cudaEventCreate(&e);
    cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
    cudaLaunchHostFunc(s2, count_fn, &x);
    cudaStreamEndCapture(s2, &gr);
    cudaGraphInstantiate(&ex, gr, 0);
    CHECK_CLEAN("handles made");
    CHECK_INT(cudaStreamDestroy(s), cudaSuccess, "cudaStreamDestroy");
    CHECK_INT(cudaLaunchHostFunc(s, count_fn, &x), cudaErrorInvalidResourceHandle, "a launch on a destroyed stream");
    CHECK_VIOLATION(1, "used after cudaStreamDestroy", "stream used after destroy");
    CHECK_INT(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle, "synchronising a destroyed stream");
    CHECK_INT(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle, "destroying it twice");
    CHECK_VIOLATION(2, "used after cudaStreamDestroy", "destroyed stream synchronised and destroyed again");
    CHECK_INT(cudaEventDestroy(e), cudaSuccess, "cudaEventDestroy");
    CHECK_INT(cudaEventRecord(e, s2), cudaErrorInvalidResourceHandle, "recording a destroyed event");
    CHECK_VIOLATION(1, "used after cudaEventDestroy", "event used after destroy");
    CHECK_INT(cudaGraphDestroy(gr), cudaSuccess, "cudaGraphDestroy (the exec stays usable)");
    CHECK_INT(cudaGraphInstantiate(&ex, gr, 0), cudaErrorInvalidResourceHandle, "instantiating a destroyed graph");
    CHECK_VIOLATION(1, "used after cudaGraphDestroy", "graph used after destroy");
    CHECK_INT(cudaGraphLaunch(ex, s2), cudaSuccess, "launching an exec whose graph was destroyed");
    CHECK_INT(cudaGraphExecDestroy(ex), cudaSuccess, "cudaGraphExecDestroy with a launch pending");
    CHECK_INT(cudaGraphLaunch(ex, s2), cudaErrorInvalidResourceHandle, "launching a destroyed exec");
    CHECK_VIOLATION(1, "used after cudaGraphExecDestroy", "exec used after destroy");
    CHECK_INT(cudaStreamSynchronize(s2), cudaSuccess, "the pending launch completes");
    CHECK_INT(x, 1, "the graph ran once");
    CHECK_INT(cudaStreamSynchronize((cudaStream_t)(void*)&bogus), cudaErrorInvalidResourceHandle,
              "a pointer the stand-in never made");
    CHECK_VIOLATION(1, "not a stream the stand-in created", "bogus stream");
    CHECK_INT(cudaStreamSynchronize((cudaStream_t)(void*)e), cudaErrorInvalidResourceHandle, "an event as a stream");
    CHECK_VIOLATION(1, "passed where a stream belongs", "event passed as a stream");
    CHECK_INT(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle, "the default stream cannot be destroyed");
    CHECK_VIOLATION(1, "default stream", "destroying the default stream");
    CHECK_INT(cudaStreamSynchronize(cudaStreamPerThread), cudaErrorInvalidResourceHandle,
              "cudaStreamPerThread is refused");
    CHECK_VIOLATION(1, "not modelled", "cudaStreamPerThread");
    cudaStreamDestroy(s2);
    finish("rule 2");
}

/* ------------------------------------------------------------------ */
/* capture */

/* the computation of the fork/join test, as host functions */
typedef struct fj {
    long v, w, u;
    tlog log;
} fj;
static void fj_a(void* p) { fj* f = (fj*)p; f->v = f->v * 3 + 1; tlog_arg a = { &f->log, 'A', 2 }; tlog_fn(&a); }
static void fj_b(void* p) { fj* f = (fj*)p; f->w = f->v + 7; tlog_arg a = { &f->log, 'B', 3 }; tlog_fn(&a); }
static void fj_c(void* p) { fj* f = (fj*)p; f->u = f->v * 2; tlog_arg a = { &f->log, 'C', 0 }; tlog_fn(&a); }
static void fj_d(void* p) { fj* f = (fj*)p; f->v = (f->u + f->w) % 1000003; tlog_arg a = { &f->log, 'D', 0 }; tlog_fn(&a); }

/* A on s1; B on s2 after A (fork); C on s1; D on s1 after B and C (join) */
static cudaError_t fj_issue(cudaStream_t s1, cudaStream_t s2, cudaEvent_t e1, cudaEvent_t e2, fj* f) {
    cudaError_t e = cudaSuccess, r;
#define FJ_CALL(x) do { r = (x); if (e == cudaSuccess) e = r; } while (0)
    FJ_CALL(cudaLaunchHostFunc(s1, fj_a, f));
    FJ_CALL(cudaEventRecord(e1, s1));
    FJ_CALL(cudaStreamWaitEvent(s2, e1, 0));
    FJ_CALL(cudaLaunchHostFunc(s2, fj_b, f));
    FJ_CALL(cudaLaunchHostFunc(s1, fj_c, f));
    FJ_CALL(cudaEventRecord(e2, s2));
    FJ_CALL(cudaStreamWaitEvent(s1, e2, 0));
    FJ_CALL(cudaLaunchHostFunc(s1, fj_d, f));
#undef FJ_CALL
    return e;
}

static int fj_order_ok(const fj* f, int rounds) {
    int i;
    for (i = 0; i < rounds; i++) {
        const char* r = f->log.text + 4 * i;
        if (r[0] != 'A' || r[3] != 'D' || !((r[1] == 'B' && r[2] == 'C') || (r[1] == 'C' && r[2] == 'B'))) return 0;
    }
    return f->log.n == 4 * rounds;
}

static void test_capture_fork_join(void) {
    cudaStream_t s1, s2;
    cudaEvent_t e1, e2;
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ex;
    enum cudaStreamCaptureStatus st;
    fj plain, replay;
    int i, n = 5;
    memset(&plain, 0, sizeof plain);
    memset(&replay, 0, sizeof replay);
    pthread_mutex_init(&plain.log.mu, NULL);
    pthread_mutex_init(&replay.log.mu, NULL);
    plain.v = replay.v = 2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&e1, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&e2, cudaEventDisableTiming);
    for (i = 0; i < n; i++) fj_issue(s1, s2, e1, e2, &plain);
    cudaStreamSynchronize(s1);
    CHECK(fj_order_ok(&plain, n), "plain launches respect the fork and the join (%s)", plain.log.text);

    CHECK_INT(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess, "cudaStreamBeginCapture");
    CHECK(cudaStreamIsCapturing(s1, &st) == cudaSuccess && st == cudaStreamCaptureStatusActive,
          "cudaStreamIsCapturing: active");
    CHECK_INT(fj_issue(s1, s2, e1, e2, &replay), cudaSuccess, "the fork/join work is captured");
    CHECK(cudaStreamIsCapturing(s2, &st) == cudaSuccess && st == cudaStreamCaptureStatusActive,
          "s2 joined the capture by waiting on an event recorded in it");
    CHECK_INT(cudaStreamEndCapture(s1, &gr), cudaSuccess, "cudaStreamEndCapture");
    CHECK(cudaStreamIsCapturing(s2, &st) == cudaSuccess && st == cudaStreamCaptureStatusNone,
          "s2 left the capture with it");
    CHECK(replay.log.n == 0 && replay.v == 2, "captured work did not run");
    CHECK_INT(standin_graph_node_count(gr), 4, "the graph has the 4 host functions");
    CHECK_INT(standin_graph_edge_count(gr), 4, "and 4 edges: A->B, A->C, B->D, C->D");
    CHECK_INT(cudaGraphInstantiate(&ex, gr, 0), cudaSuccess, "cudaGraphInstantiate");
    for (i = 0; i < n; i++) CHECK_INT(cudaGraphLaunch(ex, i % 2 ? s1 : s2), cudaSuccess, "cudaGraphLaunch %d", i);
    CHECK_INT(cudaDeviceSynchronize(), cudaSuccess, "cudaDeviceSynchronize after the launches");
    CHECK(replay.v == plain.v && replay.w == plain.w && replay.u == plain.u,
          "%d replays give what %d plain launches gave (v %ld vs %ld)", n, n, replay.v, plain.v);
    CHECK(fj_order_ok(&replay, n), "each replay respects the captured dependencies, launches one after another (%s)",
          replay.log.text);
    CHECK_CLEAN("capture with fork and join");
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(gr);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    pthread_mutex_destroy(&plain.log.mu);
    pthread_mutex_destroy(&replay.log.mu);
    finish("capture fork/join");
}

static void test_capture_errors(void) {
    cudaStream_t s1, s2, s3;
    cudaEvent_t e, outside;
    cudaGraph_t gr = (cudaGraph_t)(void*)&gr;
    enum cudaStreamCaptureStatus st;
    int x = 0;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaStreamCreate(&s3);
    cudaEventCreate(&e);
    cudaEventCreate(&outside);
    /* a fork that is never joined */
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaLaunchHostFunc(s1, count_fn, &x);
    cudaEventRecord(e, s1);
    cudaStreamWaitEvent(s2, e, 0);
    cudaLaunchHostFunc(s2, count_fn, &x);
    CHECK_INT(cudaStreamEndCapture(s1, &gr), cudaErrorStreamCaptureUnjoined, "an unjoined fork fails the capture");
    CHECK(gr == NULL, "and gives no graph");
    CHECK_VIOLATION(1, "never joined back", "unjoined fork");
    CHECK(cudaStreamIsCapturing(s2, &st) == cudaSuccess && st == cudaStreamCaptureStatusNone,
          "the forked stream left the capture");
    /* an event recorded during the capture cannot be waited on after it */
    CHECK_INT(cudaStreamWaitEvent(s3, e, 0), cudaErrorCapturedEvent, "waiting on an event recorded in an ended capture");
    CHECK_VIOLATION(1, "recorded into a stream capture", "event from an ended capture");
    /* a fork that did nothing needs no join */
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaLaunchHostFunc(s1, count_fn, &x);
    cudaEventRecord(e, s1);
    cudaStreamWaitEvent(s2, e, 0);
    CHECK_INT(cudaStreamEndCapture(s1, &gr), cudaSuccess, "a fork with no work of its own is joined");
    CHECK_CLEAN("empty fork");
    cudaGraphDestroy(gr);
    /* isolation: a capturing stream waits on an event recorded outside */
    cudaEventRecord(outside, s3);
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    CHECK_INT(cudaStreamWaitEvent(s1, outside, 0), cudaErrorStreamCaptureIsolation,
              "waiting on an uncaptured event from a capturing stream");
    CHECK_VIOLATION(1, "capture boundary", "capture isolation");
    CHECK(cudaStreamIsCapturing(s1, &st) == cudaSuccess && st == cudaStreamCaptureStatusInvalidated,
          "the capture is invalidated");
    CHECK_INT(cudaLaunchHostFunc(s1, count_fn, &x), cudaErrorStreamCaptureInvalidated,
              "work on an invalidated capture is refused");
    CHECK_INT(cudaStreamEndCapture(s1, &gr), cudaErrorStreamCaptureInvalidated, "ending an invalidated capture");
    CHECK(gr == NULL, "gives no graph");
    /* ending on the wrong stream, ending twice, beginning twice */
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed);
    CHECK_INT(cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed), cudaErrorIllegalState, "beginning twice");
    CHECK_VIOLATION(1, "already capturing", "capture begun twice");
    cudaEventRecord(e, s1);
    cudaStreamWaitEvent(s2, e, 0);
    CHECK_INT(cudaStreamEndCapture(s2, &gr), cudaErrorStreamCaptureUnmatched, "ending on a joined stream");
    CHECK_VIOLATION(1, "only the stream that began it", "capture ended on the wrong stream");
    CHECK_INT(cudaStreamEndCapture(s1, &gr), cudaErrorStreamCaptureInvalidated, "the origin then ends it");
    CHECK_INT(cudaStreamEndCapture(s1, &gr), cudaErrorIllegalState, "ending a stream that is not capturing");
    CHECK_VIOLATION(1, "is not capturing", "ending twice");
    CHECK_INT(cudaStreamBeginCapture(NULL, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported,
              "the legacy stream cannot be captured");
    CHECK_VIOLATION(1, "cannot be captured", "capturing the legacy stream");
    CHECK_INT(cudaStreamBeginCapture(s1, (enum cudaStreamCaptureMode)7), cudaErrorInvalidValue, "an unknown mode");
    CHECK_VIOLATION(1, "unknown mode", "unknown capture mode");
    /* work on the legacy stream during a global capture */
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    CHECK_INT(cudaLaunchHostFunc(NULL, count_fn, &x), cudaErrorStreamCaptureImplicit,
              "legacy-stream work during a global capture");
    CHECK_VIOLATION(1, "legacy default stream", "legacy stream during capture");
    cudaStreamEndCapture(s1, &gr);
    /* graphs inside graphs are not modelled */
    cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal);
    cudaLaunchHostFunc(s1, count_fn, &x);
    cudaStreamEndCapture(s1, &gr);
    {
        cudaGraphExec_t ex;
        cudaGraph_t g2;
        cudaGraphInstantiate(&ex, gr, 0);
        cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
        CHECK_INT(cudaGraphLaunch(ex, s2), cudaErrorStreamCaptureUnsupported, "cudaGraphLaunch into a capture");
        CHECK_VIOLATION(1, "not modelled", "graph launched into a capture");
        cudaStreamEndCapture(s2, &g2);
        CHECK_INT(cudaGraphInstantiate(&ex, gr, 1ULL << 40), cudaErrorInvalidValue, "unknown instantiate flags");
        CHECK_VIOLATION(1, "unknown flags", "instantiate flags");
        cudaGraphExecDestroy(ex);
    }
    cudaGraphDestroy(gr);
    cudaDeviceSynchronize();
    CHECK_INT(x, 0, "no captured or refused work ran");
    cudaEventDestroy(e);
    cudaEventDestroy(outside);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaStreamDestroy(s3);
    finish("capture errors");
}

/* rule 3 */
typedef struct sync_case {
    const char* name;
    int which;
} sync_case;

static cudaError_t do_sync(int which, cudaStream_t cap, cudaStream_t other, cudaEvent_t ev, void* dev) {
    static char host[16];
    switch (which) {
    case 0: return cudaStreamSynchronize(other);
    case 1: return cudaStreamSynchronize(cap);
    case 2: return cudaDeviceSynchronize();
    case 3: return cudaEventSynchronize(ev);
    default: return cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
    }
}

typedef struct other_sync {
    cudaStream_t s;
    cudaError_t r;
} other_sync;

static void* sync_from_thread(void* arg) {
    other_sync* o = (other_sync*)arg;
    o->r = cudaStreamSynchronize(o->s);
    return NULL;
}

static void test_sync_in_capture(void) {
    static const char* names[] = { "cudaStreamSynchronize of another stream", "cudaStreamSynchronize",
                                   "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy" };
    cudaStream_t cap, other, dev1;
    cudaEvent_t ev;
    cudaGraph_t gr;
    void* dev;
    enum cudaStreamCaptureStatus st;
    int i, x = 0;
    cudaStreamCreate(&cap);
    cudaStreamCreate(&other);
    cudaEventCreate(&ev);
    cudaMalloc(&dev, 16);
    cudaSetDevice(1);
    cudaStreamCreate(&dev1);
    cudaSetDevice(0);
    cudaEventRecord(ev, other);
    cudaStreamSynchronize(other);
    for (i = 0; i < 5; i++) {
        CHECK_INT(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess, "capture for %s", names[i]);
        cudaLaunchHostFunc(cap, count_fn, &x);
        CHECK_INT(do_sync(i, cap, other, ev, dev), cudaErrorStreamCaptureUnsupported,
                  "%s during a global capture", names[i]);
        CHECK_VIOLATION(1, "host synchronisation while stream", names[i]);
        CHECK(cudaStreamIsCapturing(cap, &st) == cudaSuccess && st == cudaStreamCaptureStatusInvalidated,
              "%s invalidated the capture", names[i]);
        CHECK_INT(cudaStreamEndCapture(cap, &gr), cudaErrorStreamCaptureInvalidated, "ending it fails");
    }
    /* legal: querying, other devices, relaxed mode, thread-local mode from another thread */
    cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal);
    CHECK_INT(cudaStreamQuery(other), cudaSuccess, "cudaStreamQuery of another stream during a capture");
    CHECK_INT(cudaEventQuery(ev), cudaSuccess, "cudaEventQuery during a capture");
    cudaSetDevice(1);
    CHECK_INT(cudaStreamSynchronize(dev1), cudaSuccess, "synchronising a stream of another device");
    CHECK_INT(cudaDeviceSynchronize(), cudaSuccess, "cudaDeviceSynchronize of another device");
    cudaSetDevice(0);
    CHECK_INT(cudaStreamEndCapture(cap, &gr), cudaSuccess, "the capture survived");
    cudaGraphDestroy(gr);
    CHECK_CLEAN("legal calls during a capture");
    cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed);
    CHECK_INT(cudaStreamSynchronize(other), cudaSuccess, "relaxed mode: synchronising another stream is allowed");
    CHECK_INT(cudaEventSynchronize(ev), cudaSuccess, "relaxed mode: an event recorded outside the capture");
    CHECK_INT(cudaStreamSynchronize(cap), cudaErrorStreamCaptureUnsupported,
              "relaxed mode: synchronising the capturing stream is not");
    CHECK_VIOLATION(1, "cudaStreamCaptureModeRelaxed", "relaxed capture synchronised");
    cudaStreamEndCapture(cap, &gr);
    cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal);
    {
        other_sync o;
        pthread_t th;
        o.s = other;
        o.r = cudaErrorUnknown;
        pthread_create(&th, NULL, sync_from_thread, &o);
        pthread_join(th, NULL);
        CHECK_INT(o.r, cudaSuccess, "thread-local mode: another thread may synchronise");
        CHECK_INT(cudaStreamSynchronize(other), cudaErrorStreamCaptureUnsupported,
                  "thread-local mode: the capturing thread may not");
        CHECK_VIOLATION(1, "cudaStreamCaptureModeThreadLocal", "thread-local capture synchronised");
    }
    cudaStreamEndCapture(cap, &gr);
    CHECK_INT(cudaStreamQuery(cap), cudaSuccess, "after the capture the stream is idle");
    cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed);
    CHECK_INT(cudaStreamQuery(cap), cudaErrorStreamCaptureUnsupported, "cudaStreamQuery of the capturing stream");
    CHECK_VIOLATION(1, "is capturing", "query of the capturing stream");
    cudaStreamEndCapture(cap, &gr);
    cudaFree(dev);
    cudaEventDestroy(ev);
    cudaStreamDestroy(cap);
    cudaStreamDestroy(other);
    cudaStreamDestroy(dev1);
    finish("rule 3");
}

/* ------------------------------------------------------------------ */
/* memory, rule 4 */

static void test_memory(void) {
    cudaStream_t s;
    unsigned char *d, *d2, *pinned;
    unsigned char host[2048], back[2048];
    int i, ok = 1;
    cudaStreamCreate(&s);
    CHECK_INT(cudaMalloc((void**)&d, 1024), cudaSuccess, "cudaMalloc");
    CHECK_INT(cudaMalloc((void**)&d2, 1024), cudaSuccess, "cudaMalloc again");
    CHECK_INT(cudaMallocHost((void**)&pinned, 1024), cudaSuccess, "cudaMallocHost");
    CHECK_INT(standin_live_handles(), 4, "a stream and three allocations are live");
    CHECK(d[0] == 0xff && d[1023] == 0xff, "fresh device memory is not zero (0xff bytes)");
    for (i = 0; i < 2048; i++) host[i] = (unsigned char)(i * 7);
    CHECK_INT(cudaMemcpy(d, host, 1024, cudaMemcpyHostToDevice), cudaSuccess, "cudaMemcpy host to device");
    CHECK_INT(cudaMemcpyAsync(d2, d, 1024, cudaMemcpyDeviceToDevice, s), cudaSuccess, "cudaMemcpyAsync device to device");
    CHECK_INT(cudaMemsetAsync(d2 + 1000, 0x5a, 24, s), cudaSuccess, "cudaMemsetAsync at the end of an allocation");
    CHECK_INT(cudaMemcpyAsync(pinned, d2, 1024, cudaMemcpyDeviceToHost, s), cudaSuccess, "into pinned memory");
    CHECK_INT(cudaMemcpyAsync(back, pinned, 1024, cudaMemcpyDefault, s), cudaSuccess, "cudaMemcpyDefault");
    cudaStreamSynchronize(s);
    for (i = 0; i < 1024; i++)
        if (back[i] != (i >= 1000 ? 0x5a : (unsigned char)(i * 7))) ok = 0;
    CHECK(ok, "the bytes went through device, device, pinned and host memory in stream order");
    CHECK_INT(cudaMemcpy(back, d, 1024, cudaMemcpyDeviceToHost), cudaSuccess, "cudaMemcpy device to host");
    CHECK_INT(cudaMemcpy(back, host, 0, cudaMemcpyHostToHost), cudaSuccess, "a copy of 0 bytes");
    CHECK_CLEAN("copies within their allocations");

    CHECK_INT(cudaMemcpyAsync(d, host, 2048, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue,
              "a copy of 2048 bytes into 1024");
    CHECK_VIOLATION(1, "bytes passed where elements belong?", "copy past the end");
    CHECK_INT(cudaMemsetAsync(d + 512, 0, 1024, s), cudaErrorInvalidValue, "a memset from the middle past the end");
    CHECK_VIOLATION(1, "runs 512 bytes past the end", "memset past the end");
    CHECK_INT(cudaMemcpy(host, d + 1, 1024, cudaMemcpyDeviceToHost), cudaErrorInvalidValue, "a read 1 byte too far");
    CHECK_VIOLATION(1, "bytes passed where elements belong?", "read past the end");
    CHECK_INT(cudaMemsetAsync(host, 0, 16, s), cudaErrorInvalidValue, "a memset of host memory");
    CHECK_VIOLATION(1, "not device memory", "memset of host memory");
    CHECK_INT(cudaMemcpyAsync(host, back, 16, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue,
              "cudaMemcpyHostToDevice into host memory");
    CHECK_VIOLATION(1, "cudaMemcpyHostToDevice", "wrong copy direction");
    CHECK_INT(cudaMemcpyAsync(host, back, 16, (enum cudaMemcpyKind)9, s), cudaErrorInvalidMemcpyDirection,
              "an unknown cudaMemcpyKind");
    CHECK_VIOLATION(1, "unknown cudaMemcpyKind", "unknown copy kind");
    CHECK_INT(cudaFree(d + 8), cudaErrorInvalidValue, "cudaFree of a pointer inside an allocation");
    CHECK_VIOLATION(1, "not its start", "free of an inner pointer");
    CHECK_INT(cudaFree(pinned), cudaErrorInvalidValue, "cudaFree of cudaMallocHost memory");
    CHECK_INT(cudaFreeHost(d), cudaErrorInvalidValue, "cudaFreeHost of cudaMalloc memory");
    CHECK_VIOLATION(2, "was allocated with", "free with the wrong function");
    CHECK_INT(cudaMalloc(NULL, 4), cudaErrorInvalidValue, "cudaMalloc(NULL, ...)");
    CHECK_VIOLATION(1, "NULL", "cudaMalloc(NULL)");
    {
        void* z = (void*)&s;
        CHECK(cudaMalloc(&z, 0) == cudaSuccess && z == NULL, "cudaMalloc of 0 bytes gives NULL");
    }
    /* a copy enqueued behind work, whose buffer is freed before it runs, is
       caught when it runs (cudaFree waits for the device first, so it takes
       a graph launched after the free) */
    {
        cudaGraph_t gr;
        cudaGraphExec_t ex;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
        cudaMemsetAsync(d2, 1, 16, s);
        cudaStreamEndCapture(s, &gr);
        cudaGraphInstantiate(&ex, gr, 0);
        CHECK_INT(cudaFree(d2), cudaSuccess, "cudaFree");
        cudaGraphLaunch(ex, s);
        cudaStreamSynchronize(s);
        CHECK_VIOLATION(1, "freed before the operation ran", "a replayed memset of freed memory");
        cudaGraphExecDestroy(ex);
        cudaGraphDestroy(gr);
    }
    CHECK_INT(cudaFree(d2), cudaErrorInvalidValue, "cudaFree twice");
    CHECK_VIOLATION(1, "freed twice", "double free");
    CHECK_INT(cudaFree(NULL), cudaSuccess, "cudaFree(NULL)");
    CHECK_INT(cudaFree(d), cudaSuccess, "cudaFree");
    CHECK_INT(cudaFreeHost(pinned), cudaSuccess, "cudaFreeHost");
    CHECK_INT(cudaFreeHost(NULL), cudaSuccess, "cudaFreeHost(NULL)");
    cudaStreamDestroy(s);
    finish("memory");
}

static void test_graph_memory_ops(void) {
    cudaStream_t s;
    cudaGraph_t gr;
    cudaGraphExec_t ex;
    int *d, *d2, host[64], out[64], i, round, ok = 1;
    cudaStreamCreate(&s);
    cudaMalloc((void**)&d, sizeof host);
    cudaMalloc((void**)&d2, sizeof host);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cudaMemcpyAsync(d, host, sizeof host, cudaMemcpyHostToDevice, s);
    cudaMemsetAsync(d, 0, 8 * sizeof(int), s);
    cudaMemcpyAsync(d2, d, sizeof host, cudaMemcpyDeviceToDevice, s);
    cudaMemcpyAsync(out, d2, sizeof host, cudaMemcpyDeviceToHost, s);
    CHECK_INT(cudaStreamEndCapture(s, &gr), cudaSuccess, "copies and a memset captured");
    CHECK_INT(standin_graph_node_count(gr), 4, "as 4 nodes");
    cudaGraphInstantiate(&ex, gr, 0);
    for (round = 0; round < 3; round++) {
        for (i = 0; i < 64; i++) host[i] = i * 10 + round;
        cudaGraphLaunch(ex, s);
        cudaStreamSynchronize(s);
        for (i = 0; i < 64; i++)
            if (out[i] != (i < 8 ? 0 : i * 10 + round)) ok = 0;
    }
    CHECK(ok, "each replay copies the current host data and clears the first 8 ints");
    CHECK_CLEAN("captured copies");
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(gr);
    cudaFree(d);
    cudaFree(d2);
    cudaStreamDestroy(s);
    finish("graph memory ops");
}

static void test_legacy_stream(void) {
    cudaStream_t blocking, nonblocking;
    cell c = { 0, -1 };
    gate g;
    int x = 0;
    gate_init(&g);
    cudaStreamCreate(&blocking);
    cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking);
    cudaLaunchHostFunc(blocking, cell_set_slow, &c);
    CHECK_INT(cudaLaunchHostFunc(NULL, cell_read, &c), cudaSuccess, "a host function on the legacy stream");
    CHECK_INT(cudaStreamSynchronize(NULL), cudaSuccess, "cudaStreamSynchronize(0)");
    CHECK_INT(c.seen, 42, "legacy-stream work waits for earlier work on blocking streams");
    cudaLaunchHostFunc(nonblocking, gate_fn, &g);
    cudaLaunchHostFunc(cudaStreamLegacy, count_fn, &x);
    CHECK_INT(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess, "cudaStreamLegacy is the same stream");
    CHECK(x == 1 && cudaStreamQuery(nonblocking) == cudaErrorNotReady,
          "it does not wait for a cudaStreamNonBlocking stream");
    gate_open(&g);
    cudaLaunchHostFunc(NULL, gate_fn, &g);
    cudaLaunchHostFunc(blocking, count_fn, &x);
    cudaStreamSynchronize(blocking);
    CHECK_INT(x, 2, "and blocking streams wait for earlier legacy-stream work");
    cudaDeviceSynchronize();
    CHECK_CLEAN("legacy stream");
    cudaStreamDestroy(blocking);
    cudaStreamDestroy(nonblocking);
    gate_free(&g);
    finish("legacy stream");
}

static cudaError_t hostfn_result;
static void calls_cuda(void* arg) {
    int d;
    (void)arg;
    hostfn_result = cudaGetDevice(&d);
}

static void test_errors(void) {
    cudaStream_t s;
    CHECK_INT(cudaGetLastError(), cudaSuccess, "no error at the start");
    CHECK_INT(cudaSetDevice(99), cudaErrorInvalidDevice, "a failing call");
    CHECK_INT(cudaStreamCreate(&s), cudaSuccess, "a succeeding call does not clear the last error");
    CHECK_INT(cudaPeekAtLastError(), cudaErrorInvalidDevice, "cudaPeekAtLastError returns it");
    CHECK_INT(cudaPeekAtLastError(), cudaErrorInvalidDevice, "and keeps it");
    CHECK_INT(cudaGetLastError(), cudaErrorInvalidDevice, "cudaGetLastError returns it");
    CHECK_INT(cudaGetLastError(), cudaSuccess, "and clears it");
    CHECK(strcmp(cudaGetErrorName(cudaErrorStreamCaptureUnjoined), "cudaErrorStreamCaptureUnjoined") == 0,
          "cudaGetErrorName");
    CHECK(strcmp(cudaGetErrorString(cudaSuccess), "no error") == 0 &&
          strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") == 0, "cudaGetErrorString");
    CHECK(strstr(cudaGetErrorString(cudaErrorStreamCaptureUnsupported), "capturing") != NULL,
          "cudaGetErrorString(cudaErrorStreamCaptureUnsupported)");
    CHECK(strcmp(cudaGetErrorName((cudaError_t)12345), "cudaErrorUnknown") == 0, "an unknown code");
    CHECK_VIOLATION(1, "does not exist", "cudaSetDevice(99)");
    cudaLaunchHostFunc(s, calls_cuda, NULL);
    cudaStreamSynchronize(s);
    CHECK_INT(hostfn_result, cudaErrorNotPermitted, "a CUDA call from a host function is cudaErrorNotPermitted");
    CHECK_VIOLATION(1, "from inside a host function", "CUDA call in a host function");
    cudaStreamDestroy(s);
    finish("errors");
}

/* ------------------------------------------------------------------ */
/* fault injection and call counting */

/* a sequence of CUDA calls; the first failure's code, 0 if none. The
   counters are static: work may still be queued when a failure stops it */
static int scenario_x, scenario_y;
static int cuda_scenario(void) {
    cudaStream_t s = NULL, s2 = NULL;
    cudaEvent_t e = NULL, t = NULL;
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ex = NULL;
    void *d = NULL, *h = NULL;
    int n, least, greatest;
    float ms;
    enum cudaStreamCaptureStatus st;
    cudaError_t r;
#define SC(call) do { if ((r = (call)) != cudaSuccess) return (int)r; } while (0)
    SC(cudaGetDeviceCount(&n));
    SC(cudaSetDevice(0));
    SC(cudaGetDevice(&n));
    SC(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SC(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    SC(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    SC(cudaEventCreate(&t));
    SC(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    SC(cudaMalloc(&d, 64));
    SC(cudaMallocHost(&h, 64));
    SC(cudaEventRecord(t, s));
    SC(cudaMemsetAsync(d, 0, 64, s));
    SC(cudaMemcpyAsync(h, d, 64, cudaMemcpyDeviceToHost, s));
    SC(cudaEventRecord(e, s));
    SC(cudaStreamWaitEvent(s2, e, 0));
    SC(cudaLaunchHostFunc(s2, count_fn, &scenario_x));
    SC(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    SC(cudaStreamIsCapturing(s, &st));
    SC(cudaLaunchHostFunc(s, count_fn, &scenario_y));
    SC(cudaStreamEndCapture(s, &gr));
    SC(cudaGraphInstantiate(&ex, gr, 0));
    SC(cudaGraphLaunch(ex, s));
    SC(cudaEventRecord(e, s));
    SC(cudaEventRecord(t, s));
    SC(cudaStreamSynchronize(s));
    SC(cudaStreamQuery(s));
    SC(cudaEventSynchronize(e));
    SC(cudaEventQuery(e));
    SC(cudaEventElapsedTime(&ms, t, t));
    SC(cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost));
    SC(cudaDeviceSynchronize());
    SC(cudaPeekAtLastError());
    SC(cudaGetLastError());
    SC(cudaGraphExecDestroy(ex));
    SC(cudaGraphDestroy(gr));
    SC(cudaFreeHost(h));
    SC(cudaFree(d));
    SC(cudaEventDestroy(e));
    SC(cudaEventDestroy(t));
    SC(cudaStreamDestroy(s));
    SC(cudaStreamDestroy(s2));
#undef SC
    (void)cudaGetErrorString(cudaSuccess);
    (void)cudaGetErrorName(cudaSuccess);
    return 0;
}

static const char* const cuda_names[] = {
    "cudaGetDeviceCount", "cudaSetDevice", "cudaGetDevice", "cudaDeviceGetStreamPriorityRange",
    "cudaStreamCreateWithPriority", "cudaStreamCreateWithFlags", "cudaEventCreate", "cudaEventCreateWithFlags",
    "cudaMalloc", "cudaMallocHost", "cudaEventRecord", "cudaMemsetAsync", "cudaMemcpyAsync", "cudaStreamWaitEvent",
    "cudaLaunchHostFunc", "cudaStreamBeginCapture", "cudaStreamIsCapturing", "cudaStreamEndCapture",
    "cudaGraphInstantiate", "cudaGraphLaunch", "cudaStreamSynchronize", "cudaStreamQuery", "cudaEventSynchronize",
    "cudaEventQuery", "cudaEventElapsedTime", "cudaMemcpy", "cudaDeviceSynchronize", "cudaPeekAtLastError",
    "cudaGetLastError", "cudaGraphExecDestroy", "cudaGraphDestroy", "cudaFreeHost", "cudaFree", "cudaEventDestroy",
    "cudaStreamDestroy" };

static void test_fail_call_cuda(void) {
    int total, k, failed_ok = 0, i, named_ok = 0;
    size_t j;
    standin_reset();
    CHECK_INT(cuda_scenario(), 0, "the scenario runs clean");
    CHECK_CLEAN("scenario");
    total = standin_call_count(NULL);
    CHECK_INT(total, 43, "43 calls in the scenario (41 failable, 2 string functions)");
    CHECK_INT(standin_call_count("cudaEventRecord"), 4, "standin_call_count counts cudaEventRecord");
    CHECK_INT(standin_call_count("cudaGetErrorName"), 1, "string functions are counted");
    CHECK_INT(standin_call_count("noSuchFunction"), 0, "an unknown name counts 0");
    for (k = 1; k <= total - 2; k++) {
        int r;
        standin_reset();
        standin_fail_call(NULL, k, (int)cudaErrorLaunchFailure);
        r = cuda_scenario();
        if (r == (int)cudaErrorLaunchFailure && standin_call_count(NULL) == k) failed_ok++;
    }
    CHECK_INT(failed_ok, total - 2, "failing the k-th call for each k stops the scenario at that call with the code");
    for (j = 0; j < sizeof cuda_names / sizeof cuda_names[0]; j++) {
        int n;
        standin_reset();
        cuda_scenario();
        n = standin_call_count(cuda_names[j]);
        for (i = 1; i <= n; i++) {
            standin_reset();
            standin_fail_call(cuda_names[j], i, (int)cudaErrorNotSupported);
            if (cuda_scenario() == (int)cudaErrorNotSupported && standin_call_count(cuda_names[j]) == i) named_ok++;
        }
        if (j == 0) CHECK_INT(n, 1, "cudaGetDeviceCount is called once");
    }
    CHECK_INT(named_ok, total - 2, "failing each call site by name returns the injected code");
    standin_reset();
    cudaPeekAtLastError();
    CHECK_INT(standin_call_count("cudaPeekAtLastError"), 1, "the reset zeroed the counts");
    standin_fail_call("cudaMalloc", 2, (int)cudaErrorMemoryAllocation);
    standin_fail_call("cudaMalloc", 1, (int)cudaErrorInvalidValue);
    {
        void *a = NULL, *b = NULL;
        CHECK_INT(cudaMalloc(&a, 8), cudaErrorInvalidValue, "two injections pending: the first call fails with one");
        CHECK_INT(cudaMalloc(&b, 8), cudaErrorMemoryAllocation, "the second with the other");
        CHECK(cudaMalloc(&a, 8) == cudaSuccess && cudaFree(a) == cudaSuccess, "then calls succeed");
        CHECK_INT(cudaGetLastError(), cudaErrorMemoryAllocation, "an injected failure sets the last error");
    }
    standin_fail_call("cudaNoSuchThing", 1, 1);
    standin_fail_call("cudaGetErrorString", 1, 1);
    standin_fail_call("cudaMalloc", 0, 1);
    CHECK_VIOLATION(3, "standin_fail_call", "bad standin_fail_call arguments");
    finish("fail_call (CUDA)");
}

/* ------------------------------------------------------------------ */
/* NCCL: reference arithmetic */

/* the value of a float16 / bfloat16 bit pattern, decoded with ldexp; the
   pattern just past the largest finite value decodes to the next power of
   two, so that rounding can pick it (it stands for infinity) */
static double half_value(unsigned bits) {
    int e = (int)(bits >> 10) & 31, m = (int)bits & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? ldexp(1.0, 16) : ldexp(1024 + m, e - 25);
    return (bits & 0x8000u) ? -v : v;
}

static double bf16_value(unsigned bits) {
    int e = (int)(bits >> 7) & 255, m = (int)bits & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? ldexp(1.0, 128) : ldexp(128 + m, e - 134);
    return (bits & 0x8000u) ? -v : v;
}

/* nearest pattern, ties to the even pattern, by binary search over the
   positive patterns 0 .. top (their values increase with the bits) */
static unsigned round_search(double x, double (*value)(unsigned), unsigned top) {
    unsigned lo = 0, hi = top, sign = x < 0 ? 0x8000u : 0u, b;
    double a = fabs(x), d0, d1;
    if (a >= value(top)) return sign | top;
    while (lo < hi) {                  /* the largest b with value(b) <= a */
        unsigned mid = (lo + hi + 1) / 2;
        if (value(mid) <= a) lo = mid;
        else hi = mid - 1;
    }
    b = lo;
    d0 = a - value(b);
    d1 = value(b + 1) - a;
    if (d1 < d0 || (d1 == d0 && (b & 1u))) b++;
    return sign | b;
}

static unsigned to_half(double x) { return round_search(x, half_value, 0x7c00u); }
static unsigned to_bf16(double x) { return round_search(x, bf16_value, 0x7f80u); }

/* the element types under test */
static const ncclDataType_t types[] = { ncclInt32, ncclInt64, ncclFloat16, ncclBfloat16, ncclFloat32, ncclFloat64 };
static const char* const type_names[] = { "int32", "int64", "float16", "bfloat16", "float32", "float64" };
#define N_TYPES 6

static size_t type_size(ncclDataType_t t) {
    return t == ncclInt32 || t == ncclFloat32 ? 4 : t == ncclFloat16 || t == ncclBfloat16 ? 2 : 8;
}

static int is_int(ncclDataType_t t) { return t == ncclInt32 || t == ncclInt64; }

/* x rounded to type t (exact for the integers used) */
static double round_to(ncclDataType_t t, double x) {
    switch (t) {
    case ncclFloat16: return half_value(to_half(x));
    case ncclBfloat16: return bf16_value(to_bf16(x));
    case ncclFloat32: return (double)(float)x;
    default: return x;
    }
}

static void put(ncclDataType_t t, void* buf, size_t i, double v) {
    switch (t) {
    case ncclInt32: ((int32_t*)buf)[i] = (int32_t)v; break;
    case ncclInt64: ((int64_t*)buf)[i] = (int64_t)v; break;
    case ncclFloat16: ((uint16_t*)buf)[i] = (uint16_t)to_half(v); break;
    case ncclBfloat16: ((uint16_t*)buf)[i] = (uint16_t)to_bf16(v); break;
    case ncclFloat32: ((float*)buf)[i] = (float)v; break;
    default: ((double*)buf)[i] = v; break;
    }
}

static double get(ncclDataType_t t, const void* buf, size_t i) {
    switch (t) {
    case ncclInt32: return ((const int32_t*)buf)[i];
    case ncclInt64: return (double)((const int64_t*)buf)[i];
    case ncclFloat16: return half_value(((const uint16_t*)buf)[i]);
    case ncclBfloat16: return bf16_value(((const uint16_t*)buf)[i]);
    case ncclFloat32: return ((const float*)buf)[i];
    default: return ((const double*)buf)[i];
    }
}

/* rank r's element i: small values with quarters for the float types */
static double input(ncclDataType_t t, int r, size_t i) {
    double v = (double)((r * 5 + (int)i * 3 + 1) % 9) - 3.0;
    return is_int(t) ? v : v + 0.25 * (double)((r + (int)i) % 3);
}

/* acc op x, rounded to t after the step, as the stand-in promises */
static double step(ncclDataType_t t, ncclRedOp_t op, double acc, double x) {
    switch (op) {
    case ncclProd: return round_to(t, acc * x);
    case ncclMax: return x > acc ? x : acc;
    case ncclMin: return x < acc ? x : acc;
    default: return round_to(t, acc + x);
    }
}

static double reduce_ref(ncclDataType_t t, ncclRedOp_t op, int n, size_t i) {
    double acc = input(t, 0, i);
    int r;
    for (r = 1; r < n; r++) acc = step(t, op, acc, input(t, r, i));
    if (op == ncclAvg) acc = is_int(t) ? (double)((long long)acc / n) : round_to(t, acc / n);
    return acc;
}

/* ------------------------------------------------------------------ */
/* NCCL: ranks as threads */

#define MAX_RANKS 4
#define COUNT 6

enum { K_ALLREDUCE, K_REDUCESCATTER, K_REDUCE, K_ALLGATHER, K_BROADCAST };
static const char* const kind_names[] = { "ncclAllReduce", "ncclReduceScatter", "ncclReduce", "ncclAllGather",
                                          "ncclBroadcast" };
static const char* const op_names[] = { "sum", "prod", "max", "min", "avg" };

typedef struct combo {
    int kind;
    int type;
    ncclRedOp_t op;
} combo;

#define MAX_COMBOS (N_TYPES * (3 * 5 + 2))

typedef struct world world;
typedef struct rank_ctx {
    world* w;
    int rank;
    ncclComm_t comm;
    cudaStream_t stream;
    int failures;             /* calls that did not return what they should */
    char note[200];           /* the first of them */
    int ints[8];              /* results of the test body */
    double out[MAX_COMBOS][MAX_RANKS * COUNT];   /* raw elements of any type (double for alignment) */
} rank_ctx;

struct world {
    int n;
    ncclUniqueId id;
    pthread_barrier_t barrier;
    rank_ctx ranks[MAX_RANKS];
    combo combos[MAX_COMBOS];
    int n_combos;
    void (*body)(rank_ctx*);
    const void* user;
};

static void rank_fail(rank_ctx* c, const char* what, long got, long want) {
    if (!c->failures++)
        snprintf(c->note, sizeof c->note, "rank %d: %s gave %ld, expected %ld", c->rank, what, got, want);
}

/* a call made by a rank thread: it must return `want` */
#define RX(c, call, want) do { \
        long rx_ = (long)(call); \
        if (rx_ != (long)(want)) rank_fail((c), #call, rx_, (long)(want)); \
    } while (0)
#define RC(c, call) RX(c, call, 0)

static void* rank_main(void* arg) {
    rank_ctx* c = (rank_ctx*)arg;
    world* w = c->w;
    RC(c, cudaSetDevice(c->rank));
    RC(c, ncclCommInitRank(&c->comm, w->n, w->id, c->rank));
    RC(c, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    w->body(c);
    RC(c, cudaStreamDestroy(c->stream));
    if (c->comm) RC(c, ncclCommDestroy(c->comm));   /* a body that aborted it set it to NULL */
    return NULL;
}

/* n rank threads: each on device `rank`, with a communicator and a
   stream, runs body; then the harness checks that no call failed */
static void run_ranks(world* w, int n, void (*body)(rank_ctx*), const char* what) {
    pthread_t th[MAX_RANKS];
    int r, failures = 0;
    const char* note = "";
    w->n = n;
    w->body = body;
    ncclGetUniqueId(&w->id);
    pthread_barrier_init(&w->barrier, NULL, (unsigned)n);
    for (r = 0; r < n; r++) {
        memset(&w->ranks[r], 0, sizeof w->ranks[r]);
        w->ranks[r].w = w;
        w->ranks[r].rank = r;
    }
    for (r = 0; r < n; r++) pthread_create(&th[r], NULL, rank_main, &w->ranks[r]);
    for (r = 0; r < n; r++) pthread_join(th[r], NULL);
    pthread_barrier_destroy(&w->barrier);
    for (r = 0; r < n; r++) {
        if (w->ranks[r].failures && !failures) note = w->ranks[r].note;
        failures += w->ranks[r].failures;
    }
    CHECK(failures == 0, "%s on %d ranks: every call returned what it should (%d did not; %s)", what, n, failures,
          note);
}

static world* world_new(void) { return (world*)calloc(1, sizeof(world)); }

/* ------------------------------------------------------------------ */
/* NCCL: communicators */

static void basics_body(rank_ctx* c) {
    RC(c, ncclCommCount(c->comm, &c->ints[0]));
    RC(c, ncclCommUserRank(c->comm, &c->ints[1]));
    RC(c, ncclCommCuDevice(c->comm, &c->ints[2]));
    RC(c, ncclCommGetAsyncError(c->comm, (ncclResult_t*)&c->ints[3]));
}

static void test_nccl_basics(void) {
    world* w = world_new();
    int v = 0, n, r, ok;
    ncclUniqueId a, b;
    CHECK(ncclGetVersion(&v) == ncclSuccess && v == NCCL_VERSION_CODE, "ncclGetVersion gives %d (got %d)",
          NCCL_VERSION_CODE, v);
    CHECK(ncclGetUniqueId(&a) == ncclSuccess && ncclGetUniqueId(&b) == ncclSuccess && memcmp(&a, &b, sizeof a) != 0,
          "two unique ids differ");
    for (n = 2; n <= 4; n++) {
        run_ranks(w, n, basics_body, "ncclCommInitRank, count, rank, device");
        for (r = 0, ok = 1; r < n; r++)
            if (w->ranks[r].ints[0] != n || w->ranks[r].ints[1] != r || w->ranks[r].ints[2] != r ||
                w->ranks[r].ints[3] != ncclSuccess)
                ok = 0;
        CHECK(ok, "%d ranks: ncclCommCount, ncclCommUserRank, ncclCommCuDevice, ncclCommGetAsyncError", n);
    }
    /* one thread, one rank per device, inside a group */
    {
        ncclComm_t cs[2] = { NULL, NULL };
        ncclUniqueId id;
        int dev = -1;
        ncclGetUniqueId(&id);
        ncclGroupStart();
        for (r = 0; r < 2; r++) {
            cudaSetDevice(r);
            CHECK_INT(ncclCommInitRank(&cs[r], 2, id, r), ncclSuccess, "ncclCommInitRank of rank %d inside a group", r);
        }
        CHECK_INT(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd completes both inits");
        cudaSetDevice(0);
        CHECK(ncclCommCuDevice(cs[1], &dev) == ncclSuccess && dev == 1, "rank 1 is on the device current at its init");
        CHECK(ncclCommDestroy(cs[0]) == ncclSuccess && ncclCommDestroy(cs[1]) == ncclSuccess, "both destroyed");
    }
    CHECK_CLEAN("communicators");
    free(w);
    finish("NCCL basics");
}

/* ------------------------------------------------------------------ */
/* NCCL: every collective, type and op */

static size_t send_elems(int kind, int n) { return kind == K_REDUCESCATTER ? (size_t)n * COUNT : COUNT; }
static size_t recv_elems(int kind, int n) { return kind == K_ALLGATHER ? (size_t)n * COUNT : COUNT; }

static void coll_body(rank_ctx* c) {
    world* w = c->w;
    int k, n = w->n;
    double host[MAX_RANKS * COUNT];
    for (k = 0; k < w->n_combos; k++) {
        const combo* cb = &w->combos[k];
        ncclDataType_t t = types[cb->type];
        size_t esz = type_size(t), ns = send_elems(cb->kind, n), nr = recv_elems(cb->kind, n), i;
        void *ds = NULL, *dr = NULL;
        for (i = 0; i < ns; i++) put(t, host, i, input(t, c->rank, i));
        RC(c, cudaMalloc(&ds, ns * esz));
        RC(c, cudaMalloc(&dr, nr * esz));
        RC(c, cudaMemcpy(ds, host, ns * esz, cudaMemcpyHostToDevice));
        RC(c, cudaMemsetAsync(dr, 0, nr * esz, c->stream));
        switch (cb->kind) {
        case K_ALLREDUCE: RC(c, ncclAllReduce(ds, dr, COUNT, t, cb->op, c->comm, c->stream)); break;
        case K_REDUCESCATTER: RC(c, ncclReduceScatter(ds, dr, COUNT, t, cb->op, c->comm, c->stream)); break;
        case K_REDUCE: RC(c, ncclReduce(ds, dr, COUNT, t, cb->op, n - 1, c->comm, c->stream)); break;
        case K_ALLGATHER: RC(c, ncclAllGather(ds, dr, COUNT, t, c->comm, c->stream)); break;
        default: RC(c, ncclBroadcast(ds, dr, COUNT, t, 1, c->comm, c->stream)); break;
        }
        RC(c, cudaMemcpyAsync(c->out[k], dr, nr * esz, cudaMemcpyDeviceToHost, c->stream));
        RC(c, cudaStreamSynchronize(c->stream));
        RC(c, cudaFree(ds));
        RC(c, cudaFree(dr));
    }
}

static void test_collectives(void) {
    world* w = world_new();
    int n, k, r, ty, o, kind;
    for (ty = 0; ty < N_TYPES; ty++)
        for (kind = 0; kind < 5; kind++)
            for (o = 0; o < (kind <= K_REDUCE ? 5 : 1); o++) {
                combo* cb = &w->combos[w->n_combos++];
                cb->kind = kind;
                cb->type = ty;
                cb->op = (ncclRedOp_t)o;
            }
    for (n = 2; n <= 4; n++) {
        int bad = 0, checked = 0;
        char first[200] = "";
        run_ranks(w, n, coll_body, "every collective, type and op");
        for (k = 0; k < w->n_combos; k++) {
            const combo* cb = &w->combos[k];
            ncclDataType_t t = types[cb->type];
            for (r = 0; r < n; r++) {
                size_t i, nr = recv_elems(cb->kind, n);
                for (i = 0; i < nr; i++) {
                    double want, got = get(t, w->ranks[r].out[k], i);
                    switch (cb->kind) {
                    case K_ALLREDUCE: want = reduce_ref(t, cb->op, n, i); break;
                    case K_REDUCESCATTER: want = reduce_ref(t, cb->op, n, (size_t)r * COUNT + i); break;
                    case K_REDUCE: want = r == n - 1 ? reduce_ref(t, cb->op, n, i) : 0.0; break;
                    case K_ALLGATHER: want = input(t, (int)(i / COUNT), i % COUNT); break;
                    default: want = input(t, 1, i); break;
                    }
                    checked++;
                    if (got != want && !bad++)
                        snprintf(first, sizeof first, "%s %s %s rank %d element %zu: got %.10g, expected %.10g",
                                 kind_names[cb->kind], type_names[cb->type], cb->kind <= K_REDUCE ? op_names[cb->op] : "",
                                 r, i, got, want);
                }
            }
        }
        CHECK(bad == 0 && checked > 0, "%d ranks: %d results of %d collectives x types x ops equal the reference "
              "(%d differ; %s)", n, checked, w->n_combos, bad, first);
    }
    CHECK_CLEAN("collectives");
    free(w);
    finish("collectives");
}

/* specific float16 / bfloat16 rounding cases */
typedef struct round_case {
    ncclDataType_t t;
    ncclRedOp_t op;
    int n, count;
    uint16_t in[MAX_RANKS][8];
    uint16_t want[8];
    const char* what;
} round_case;

static void round_body(rank_ctx* c) {
    const round_case* rc = (const round_case*)c->w->user;
    void *ds = NULL, *dr = NULL;
    size_t bytes = (size_t)rc->count * 2;
    RC(c, cudaMalloc(&ds, bytes));
    RC(c, cudaMalloc(&dr, bytes));
    RC(c, cudaMemcpy(ds, rc->in[c->rank], bytes, cudaMemcpyHostToDevice));
    RC(c, ncclAllReduce(ds, dr, (size_t)rc->count, rc->t, rc->op, c->comm, c->stream));
    RC(c, cudaMemcpyAsync(c->out[0], dr, bytes, cudaMemcpyDeviceToHost, c->stream));
    RC(c, cudaStreamSynchronize(c->stream));
    RC(c, cudaFree(ds));
    RC(c, cudaFree(dr));
}

static void test_rounding(void) {
    /* float16: 1 = 0x3c00, ulp 2^-10; 2^-11 = 0x1000, 3*2^-11 = 0x1600; 2^-24 = 0x0001 (the smallest
       subnormal); 65504 = 0x7bff (the largest finite), 16 = 0x4c00; 2^-12 = 0x0c00. bfloat16: 1 = 0x3f80,
       ulp 2^-7; 2^-8 = 0x3b80, 3*2^-8 = 0x3c40. */
    static const round_case cases[] = {
        { ncclFloat16, ncclSum, 2, 5, { { 0x3c00, 0x3c00, 0x0001, 0x7bff, 0xbc00 }, { 0x1000, 0x1600, 0x0001, 0x4c00, 0x0c00 } },
          { 0x3c00, 0x3c02, 0x0002, 0x7c00, 0xbc00 },
          "float16: 1 + 2^-11 ties to 1, 1 + 3*2^-11 rounds up to 1 + 2^-9, 2^-24 + 2^-24 = 2^-23, 65504 + 16 "
          "ties to infinity, -1 + 2^-12 ties to -1" },
        { ncclFloat16, ncclSum, 3, 1, { { 0x3c00 }, { 0x1000 }, { 0x1000 } }, { 0x3c00 },
          "float16 rounds after each rank: 1 + 2^-11 + 2^-11 is 1, not 1 + 2^-10" },
        { ncclFloat16, ncclAvg, 3, 1, { { 0x3c00 }, { 0x3c00 }, { 0x4000 } }, { 0x3d55 },
          "float16 avg: (1 + 1 + 2) / 3 rounds to 0x3d55" },
        { ncclFloat16, ncclProd, 2, 1, { { 0x3c01 }, { 0x3c01 } }, { 0x3c02 },
          "float16 prod: (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9" },
        { ncclBfloat16, ncclSum, 2, 2, { { 0x3f80, 0x3f80 }, { 0x3b80, 0x3c40 } }, { 0x3f80, 0x3f82 },
          "bfloat16: 1 + 2^-8 ties to 1, 1 + 3*2^-8 rounds up to 1 + 2^-6" },
        { ncclBfloat16, ncclSum, 3, 1, { { 0x3f80 }, { 0x3b80 }, { 0x3b80 } }, { 0x3f80 },
          "bfloat16 rounds after each rank: 1 + 2^-8 + 2^-8 is 1" },
    };
    world* w = world_new();
    size_t k;
    CHECK(to_half(1.0 + ldexp(1, -11)) == 0x3c00 && to_half(1.0 + 3 * ldexp(1, -11)) == 0x3c02 &&
          to_half(65520.0) == 0x7c00 && to_half(65519.0) == 0x7bff && to_half(ldexp(1, -25)) == 0 &&
          to_half(ldexp(3, -26)) == 1 && to_bf16(1.0 + ldexp(1, -8)) == 0x3f80 && to_bf16(-3.0) == 0xc040,
          "the test's own reference rounding (ties to even, overflow, subnormals)");
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const round_case* rc = &cases[k];
        int r, i, ok = 1;
        w->user = rc;
        run_ranks(w, rc->n, round_body, rc->what);
        for (r = 0; r < rc->n; r++)
            for (i = 0; i < rc->count; i++)
                if (((uint16_t*)w->ranks[r].out[0])[i] != rc->want[i]) ok = 0;
        CHECK(ok, "%s (rank 0 got 0x%04x ...)", rc->what, ((uint16_t*)w->ranks[0].out[0])[rc->count > 1]);
    }
    CHECK_CLEAN("rounding");
    free(w);
    finish("rounding");
}

/* ------------------------------------------------------------------ */
/* NCCL: send/recv, groups, rule 5 */

static void ring_body(rank_ctx* c) {
    int n = c->w->n, next = (c->rank + 1) % n, prev = (c->rank + n - 1) % n, host[COUNT], i;
    int *ds = NULL, *dr = NULL, *dr2 = NULL;
    for (i = 0; i < COUNT; i++) host[i] = c->rank * 100 + i;
    RC(c, cudaMalloc((void**)&ds, sizeof host));
    RC(c, cudaMalloc((void**)&dr, sizeof host));
    RC(c, cudaMalloc((void**)&dr2, sizeof host));
    RC(c, cudaMemcpy(ds, host, sizeof host, cudaMemcpyHostToDevice));
    RC(c, cudaMemsetAsync(dr2, 0, sizeof host, c->stream));
    RC(c, cudaStreamSynchronize(c->stream));
    RC(c, ncclGroupStart());
    RC(c, ncclSend(ds, COUNT, ncclInt32, next, c->comm, c->stream));
    RC(c, ncclRecv(dr, COUNT, ncclInt32, prev, c->comm, c->stream));
    RC(c, ncclGroupEnd());
    RC(c, cudaStreamSynchronize(c->stream));
    /* nested groups: nothing is issued before the outermost end */
    RC(c, ncclGroupStart());
    RC(c, ncclGroupStart());
    RC(c, ncclRecv(dr2, COUNT, ncclInt32, next, c->comm, c->stream));
    RC(c, ncclSend(ds, COUNT, ncclInt32, prev, c->comm, c->stream));
    RC(c, ncclGroupEnd());
    RX(c, cudaStreamQuery(c->stream), cudaSuccess);   /* the inner end issued nothing */
    pthread_barrier_wait(&c->w->barrier);
    sleep_ms(20);
    c->ints[1] = dr2[0];
    RC(c, ncclGroupEnd());
    RC(c, cudaMemcpyAsync(host, dr, sizeof host, cudaMemcpyDeviceToHost, c->stream));
    RC(c, cudaStreamSynchronize(c->stream));
    c->ints[0] = 1;
    for (i = 0; i < COUNT; i++)
        if (host[i] != prev * 100 + i || dr2[i] != next * 100 + i) c->ints[0] = 0;
    RC(c, cudaFree(ds));
    RC(c, cudaFree(dr));
    RC(c, cudaFree(dr2));
}

static void test_send_recv_ring(void) {
    world* w = world_new();
    int r, ok = 1, untouched = 1;
    standin_require_groups(1);
    run_ranks(w, 4, ring_body, "grouped send/recv ring");
    for (r = 0; r < 4; r++) {
        if (!w->ranks[r].ints[0]) ok = 0;
        if (w->ranks[r].ints[1] != 0) untouched = 0;
    }
    CHECK(ok, "each rank received its left neighbour's data, then its right neighbour's");
    CHECK(untouched, "an inner ncclGroupEnd issued nothing");
    CHECK_CLEAN("grouped send/recv with standin_require_groups(1)");
    free(w);
    finish("send/recv ring");
}

/* ungrouped send/recv: mode 0 both send first (needs a group), 1 legal
   order, 2 both receive first (deadlock) */
static int p2p_mode;
static void p2p_body(rank_ctx* c) {
    int peer = 1 - c->rank, host[COUNT], i, send_first;
    int *ds = NULL, *dr = NULL;
    for (i = 0; i < COUNT; i++) host[i] = c->rank * 10 + i;
    RC(c, cudaMalloc((void**)&ds, sizeof host));
    RC(c, cudaMalloc((void**)&dr, sizeof host));
    RC(c, cudaMemcpy(ds, host, sizeof host, cudaMemcpyHostToDevice));
    send_first = p2p_mode == 0 || (p2p_mode == 1 && c->rank == 0);
    if (send_first) {
        RC(c, ncclSend(ds, COUNT, ncclInt32, peer, c->comm, c->stream));
        RC(c, ncclRecv(dr, COUNT, ncclInt32, peer, c->comm, c->stream));
    } else {
        RC(c, ncclRecv(dr, COUNT, ncclInt32, peer, c->comm, c->stream));
        RC(c, ncclSend(ds, COUNT, ncclInt32, peer, c->comm, c->stream));
    }
    if (p2p_mode == 2) {
        double t0 = now_ms();
        while (standin_violation_count() == 0 && now_ms() - t0 < 3000) sleep_ms(5);
        RX(c, cudaStreamQuery(c->stream), cudaErrorNotReady);
        pthread_barrier_wait(&c->w->barrier);
        RC(c, ncclCommAbort(c->comm));
        c->comm = NULL;
    }
    RC(c, cudaStreamSynchronize(c->stream));
    RC(c, cudaMemcpy(host, dr, sizeof host, cudaMemcpyDeviceToHost));
    c->ints[0] = 1;
    for (i = 0; i < COUNT; i++)
        if (host[i] != peer * 10 + i) c->ints[0] = 0;
    RC(c, cudaFree(ds));
    RC(c, cudaFree(dr));
}

static void test_ungrouped_p2p(void) {
    world* w = world_new();
    ncclComm_t self;
    int *buf, *got, i, ok = 1;
    p2p_mode = 1;
    run_ranks(w, 2, p2p_body, "send/recv in a legal order without a group");
    CHECK(w->ranks[0].ints[0] && w->ranks[1].ints[0], "the data crossed");
    CHECK_CLEAN("rank 0 sends then receives, rank 1 receives then sends");
    p2p_mode = 0;
    run_ranks(w, 2, p2p_body, "both ranks send first without a group");
    CHECK(w->ranks[0].ints[0] && w->ranks[1].ints[0], "the data crossed (the stand-in buffers one send)");
    CHECK_VIOLATION(1, "outside a group", "both ranks send first");
    p2p_mode = 2;
    run_ranks(w, 2, p2p_body, "both ranks receive first without a group");
    CHECK_VIOLATION(1, "deadlock", "both ranks receive first");
    finish("ungrouped send/recv between ranks");
    /* to itself, on one stream */
    ncclCommInitAll(&self, 1, NULL);
    cudaMalloc((void**)&buf, 4 * sizeof(int));
    cudaMalloc((void**)&got, 4 * sizeof(int));
    for (i = 0; i < 4; i++) buf[i] = 7 * i;
    CHECK_INT(ncclSend(buf, 4, ncclInt32, 0, self, NULL), ncclSuccess, "ncclSend to itself");
    CHECK_INT(ncclRecv(got, 4, ncclInt32, 0, self, NULL), ncclSuccess, "ncclRecv from itself");
    cudaStreamSynchronize(NULL);
    for (i = 0; i < 4; i++)
        if (got[i] != 7 * i) ok = 0;
    CHECK(ok, "the data arrived");
    CHECK_VIOLATION(1, "outside a group", "send to itself without a group");
    ncclGroupStart();
    ncclSend(buf, 4, ncclInt32, 0, self, NULL);
    ncclRecv(got, 4, ncclInt32, 0, self, NULL);
    CHECK_INT(ncclGroupEnd(), ncclSuccess, "the same inside a group");
    cudaStreamSynchronize(NULL);
    CHECK_CLEAN("send to itself inside a group");
    standin_require_groups(1);
    CHECK_INT(ncclAllReduce(buf, buf, 4, ncclInt32, ncclSum, self, NULL), ncclSuccess,
              "an ungrouped collective still runs with standin_require_groups(1)");
    CHECK_VIOLATION(1, "outside ncclGroupStart/ncclGroupEnd", "ungrouped collective");
    CHECK_INT(ncclGroupEnd(), ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    CHECK_VIOLATION(1, "without a matching ncclGroupStart", "unmatched ncclGroupEnd");
    cudaStreamSynchronize(NULL);
    cudaFree(buf);
    cudaFree(got);
    ncclCommDestroy(self);
    free(w);
    finish("ungrouped send/recv");
}

/* ------------------------------------------------------------------ */
/* NCCL: mismatch, abort, async errors */

static void mismatch_body(rank_ctx* c) {
    float *ds = NULL, *dr = NULL;
    double t0;
    ncclResult_t ae = ncclInternalError;
    RC(c, cudaMalloc((void**)&ds, 8 * sizeof(float)));
    RC(c, cudaMalloc((void**)&dr, 8 * sizeof(float)));
    RC(c, ncclAllReduce(ds, dr, c->rank == 0 ? 4 : 8, ncclFloat32, ncclSum, c->comm, c->stream));
    t0 = now_ms();
    while (standin_violation_count() == 0 && now_ms() - t0 < 3000) sleep_ms(5);
    sleep_ms(30);
    RX(c, cudaStreamQuery(c->stream), cudaErrorNotReady);     /* it hangs */
    RC(c, ncclCommGetAsyncError(c->comm, &ae));
    RX(c, ae, ncclSuccess);                                    /* and says nothing, as NCCL */
    pthread_barrier_wait(&c->w->barrier);
    if (c->rank == 0) RC(c, ncclCommAbort(c->comm));
    pthread_barrier_wait(&c->w->barrier);
    if (c->rank == 1) {
        RC(c, ncclCommGetAsyncError(c->comm, &ae));
        RX(c, ae, ncclRemoteError);                            /* the peer tore the communicator down */
        RX(c, ncclAllReduce(ds, dr, 8, ncclFloat32, ncclSum, c->comm, c->stream), ncclRemoteError);
        RC(c, ncclCommAbort(c->comm));
    }
    c->comm = NULL;
    RC(c, cudaStreamSynchronize(c->stream));                   /* the hanging item finished */
    RC(c, cudaFree(ds));
    RC(c, cudaFree(dr));
}

static void test_mismatch_abort(void) {
    world* w = world_new();
    run_ranks(w, 2, mismatch_body, "mismatched collectives, then abort");
    CHECK(violations_with("ncclAllReduce(count 4, float32, sum)") == 1 &&
          violations_with("ncclAllReduce(count 8, float32, sum)") == 1 && violations_with("rank 0 called") == 1 &&
          violations_with("rank 1 called") == 1,
          "the violation names both ranks' calls (%s)", first_violation());
    CHECK_VIOLATION(1, "hangs until the communicator is aborted", "collective mismatch");
    free(w);
    finish("mismatch and abort");
}

static void async_body(rank_ctx* c) {
    int *d = NULL, host = 0;
    double t0;
    ncclResult_t ae = ncclSuccess;
    RC(c, cudaMalloc((void**)&d, sizeof(int)));
    RC(c, cudaMemcpy(d, &c->rank, sizeof(int), cudaMemcpyHostToDevice));
    RC(c, ncclAllReduce(d, d, 1, ncclInt32, ncclSum, c->comm, c->stream));
    RC(c, cudaMemcpyAsync(&host, d, sizeof(int), cudaMemcpyDeviceToHost, c->stream));
    RC(c, cudaStreamSynchronize(c->stream));
    c->ints[0] = host;
    RC(c, ncclAllReduce(d, d, 1, ncclInt32, ncclSum, c->comm, c->stream));   /* rank 1's second hangs */
    t0 = now_ms();
    while (now_ms() - t0 < 3000) {
        RC(c, ncclCommGetAsyncError(c->comm, &ae));
        if (ae != ncclSuccess || (c->rank == 0 && now_ms() - t0 > 100)) break;
        sleep_ms(5);
    }
    c->ints[1] = (int)ae;
    RX(c, cudaStreamQuery(c->stream), cudaErrorNotReady);
    if (c->rank == 1) snprintf(c->note + 100, 100, "%s", ncclGetLastError(c->comm));
    pthread_barrier_wait(&c->w->barrier);
    if (c->rank == 1) RC(c, ncclCommAbort(c->comm));
    pthread_barrier_wait(&c->w->barrier);
    if (c->rank == 0) {
        RC(c, ncclCommGetAsyncError(c->comm, &ae));
        c->ints[2] = (int)ae;
        RC(c, ncclCommAbort(c->comm));
    }
    c->comm = NULL;
    RC(c, cudaStreamSynchronize(c->stream));
    RC(c, cudaFree(d));
}

static void test_async_error(void) {
    world* w = world_new();
    standin_nccl_inject_async_error(1, 1, (int)ncclInternalError);
    run_ranks(w, 2, async_body, "an injected asynchronous error");
    CHECK(w->ranks[0].ints[0] == 1 && w->ranks[1].ints[0] == 1, "the first all-reduce completed (0 + 1)");
    CHECK_INT(w->ranks[1].ints[1], ncclInternalError, "rank 1's second one hangs with the injected async error");
    CHECK_INT(w->ranks[0].ints[1], ncclSuccess, "rank 0 just waits");
    CHECK_INT(w->ranks[0].ints[2], ncclRemoteError, "after rank 1 aborts, rank 0's async error is ncclRemoteError");
    CHECK_CONTAINS(w->ranks[1].note + 100, "injected", "ncclGetLastError(comm) says it was injected");
    CHECK_CLEAN("an injected error is not a violation");
    free(w);
    finish("async error");
}

/* ------------------------------------------------------------------ */
/* NCCL: argument rules on one rank */

static void nccl_in_hostfn(void* arg) {
    int v;
    *(ncclResult_t*)arg = ncclGetVersion(&v);
}

static void test_nccl_rules(void) {
    ncclComm_t c, c2;
    cudaStream_t s, s1;
    float *d, *d1, *pinned, host[64];
    ncclUniqueId bad;
    ncclConfig_t cfg;
    ncclResult_t inside = ncclSuccess;
    int devs[2] = { 0, 0 }, n;
    CHECK_INT(ncclCommInitAll(&c, 1, NULL), ncclSuccess, "ncclCommInitAll of one rank");
    cudaStreamCreate(&s);
    cudaMalloc((void**)&d, 64 * sizeof(float));
    cudaMallocHost((void**)&pinned, 64 * sizeof(float));
    cudaSetDevice(1);
    cudaStreamCreate(&s1);
    cudaMalloc((void**)&d1, 64 * sizeof(float));
    cudaSetDevice(0);
    CHECK_INT(ncclAllReduce(d, d, 64, ncclFloat32, ncclSum, c, s), ncclSuccess, "64 floats in 256 bytes");
    CHECK_INT(ncclAllReduce(d, d, 256, ncclFloat32, ncclSum, c, s), ncclInvalidArgument, "a count of 256 floats");
    CHECK_CONTAINS(first_violation(), "count 256 x 4-byte float32", "the message shows the count and the type");
    CHECK_VIOLATION(1, "bytes passed where elements belong?", "count in bytes");
    CHECK_INT(ncclReduceScatter(d, d, 64, ncclFloat32, ncclSum, c, s), ncclSuccess, "reduce-scatter in place");
    CHECK_INT(ncclAllGather(d, d + 1, 63, ncclFloat32, c, s), ncclInvalidArgument, "overlapping, not in place");
    CHECK_VIOLATION(1, "overlap", "overlapping buffers");
    CHECK_INT(ncclAllReduce(host, d, 64, ncclFloat32, ncclSum, c, s), ncclInvalidArgument, "a host send buffer");
    CHECK_VIOLATION(1, "not device memory", "host buffer");
    CHECK_INT(ncclBroadcast(pinned, d, 64, ncclFloat32, 0, c, s), ncclInvalidArgument, "a pinned host buffer");
    CHECK_VIOLATION(1, "cudaMallocHost memory", "pinned buffer");
    CHECK_INT(ncclReduce(d, d1, 64, ncclFloat32, ncclMax, 0, c, s), ncclInvalidArgument, "another device's buffer");
    CHECK_VIOLATION(1, "memory of device 1", "buffer of another device");
    CHECK_INT(ncclAllReduce(d, d, 64, ncclFloat32, ncclSum, c, s1), ncclInvalidArgument, "another device's stream");
    CHECK_VIOLATION(1, "the stream is on device 1", "stream of another device");
    CHECK_INT(ncclBroadcast(d, d, 64, ncclFloat32, 3, c, s), ncclInvalidArgument, "root 3 of 1 rank");
    CHECK_VIOLATION(1, "out of range", "root out of range");
    CHECK_INT(ncclSend(d, 64, ncclFloat32, -1, c, s), ncclInvalidArgument, "peer -1");
    CHECK_VIOLATION(1, "out of range", "peer out of range");
    CHECK_INT(ncclAllReduce(d, d, 64, ncclFloat8e4m3, ncclSum, c, s), ncclInvalidArgument, "an fp8 type");
    CHECK_VIOLATION(1, "not modelled", "fp8");
    CHECK_INT(ncclAllReduce(d, d, 64, ncclFloat32, (ncclRedOp_t)9, c, s), ncclInvalidArgument, "an unknown op");
    CHECK_VIOLATION(1, "reduction op", "unknown op");
    CHECK_INT(ncclAllReduce(d, d, 64, ncclFloat32, ncclSum, NULL, s), ncclInvalidArgument, "a NULL communicator");
    CHECK_VIOLATION(1, "communicator is NULL", "NULL communicator");
    CHECK(strlen(ncclGetLastError(NULL)) > 0, "ncclGetLastError(NULL) after a failure: %s", ncclGetLastError(NULL));
    CHECK(strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0 &&
          strstr(ncclGetErrorString(ncclInvalidUsage), "invalid usage") &&
          strstr(ncclGetErrorString(ncclRemoteError), "remote"), "ncclGetErrorString");
    CHECK_INT(ncclAllReduce(d, d, 0, ncclFloat32, ncclSum, c, s), ncclSuccess, "a count of 0");
    CHECK_INT(ncclCommCount(c, NULL), ncclInvalidArgument, "ncclCommCount(comm, NULL)");
    /* ids, devices, configs */
    memset(&bad, 0, sizeof bad);
    CHECK_INT(ncclCommInitRank(&c2, 1, bad, 0), ncclInvalidArgument, "an id not from ncclGetUniqueId");
    CHECK_VIOLATION(1, "not made by ncclGetUniqueId", "bad unique id");
    CHECK_INT(ncclCommInitAll(&c2, 2, devs), ncclInvalidUsage, "two ranks on one device");
    CHECK_VIOLATION(1, "both on device 0", "duplicate devices");
    memset(&cfg, 0, sizeof cfg);
    CHECK_INT(ncclCommSplit(c, 0, 0, &c2, &cfg), ncclInvalidArgument, "a config not from NCCL_CONFIG_INITIALIZER");
    CHECK_VIOLATION(1, "NCCL_CONFIG_INITIALIZER", "bad config");
    {
        ncclConfig_t ok_cfg = NCCL_CONFIG_INITIALIZER;
        CHECK_INT(ncclCommSplit(c, 5, 0, &c2, &ok_cfg), ncclSuccess, "ncclCommSplit of one rank");
        CHECK(ncclCommCount(c2, &n) == ncclSuccess && n == 1, "gives a communicator of 1");
        CHECK_INT(ncclCommDestroy(c2), ncclSuccess, "which is destroyed");
    }
    /* a buffer freed before a replayed collective runs */
    {
        cudaGraph_t gr;
        cudaGraphExec_t ex;
        float* tmp;
        ncclResult_t ae;
        cudaMalloc((void**)&tmp, 16 * sizeof(float));
        cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
        CHECK_INT(ncclAllReduce(tmp, tmp, 16, ncclFloat32, ncclSum, c, s), ncclSuccess, "a captured all-reduce");
        cudaStreamEndCapture(s, &gr);
        cudaGraphInstantiate(&ex, gr, 0);
        cudaFree(tmp);
        cudaGraphLaunch(ex, s);
        {
            double t0 = now_ms();
            while (ncclCommGetAsyncError(c, &ae) == ncclSuccess && ae == ncclSuccess && now_ms() - t0 < 5000)
                sleep_ms(2);
        }
        CHECK_INT(ae, ncclUnhandledCudaError, "the launch after cudaFree fails the communicator");
        CHECK_VIOLATION(1, "freed before the operation ran", "collective on freed memory");
        CHECK_INT(ncclAllReduce(d, d, 4, ncclFloat32, ncclSum, c, s), ncclUnhandledCudaError,
                  "later calls return the async error");
        cudaGraphExecDestroy(ex);   /* before the abort: NCCL 2.26 and later wait there for graphs holding its work */
        cudaGraphDestroy(gr);
        CHECK_INT(ncclCommAbort(c), ncclSuccess, "ncclCommAbort");
        cudaStreamSynchronize(s);
    }
    CHECK_INT(ncclAllReduce(d, d, 4, ncclFloat32, ncclSum, c, s), ncclInvalidArgument, "a collective after abort");
    CHECK_VIOLATION(1, "used after ncclCommAbort", "communicator used after abort");
    /* finalize, destroy, use after destroy */
    ncclCommInitAll(&c, 1, NULL);
    CHECK_INT(ncclAllReduce(d, d, 4, ncclFloat32, ncclSum, c, s), ncclSuccess, "a collective");
    CHECK_INT(ncclCommFinalize(c), ncclSuccess, "ncclCommFinalize waits for it");
    CHECK_INT(ncclAllReduce(d, d, 4, ncclFloat32, ncclSum, c, s), ncclInvalidUsage, "a collective after finalize");
    CHECK_VIOLATION(1, "finalized", "collective after finalize");
    CHECK_INT(ncclCommDestroy(c), ncclSuccess, "ncclCommDestroy");
    CHECK_INT(ncclCommGetAsyncError(c, &inside), ncclInvalidArgument, "a destroyed communicator");
    CHECK_INT(ncclCommDestroy(c), ncclInvalidArgument, "destroying it twice");
    CHECK_VIOLATION(2, "used after ncclCommDestroy", "communicator used after destroy");
    CHECK_INT(ncclCommDestroy(NULL), ncclSuccess, "ncclCommDestroy(NULL)");
    cudaLaunchHostFunc(s, nccl_in_hostfn, &inside);
    cudaStreamSynchronize(s);
    CHECK_INT(inside, ncclInvalidUsage, "an NCCL call from a host function");
    CHECK_VIOLATION(1, "from inside a host function", "NCCL call in a host function");
    cudaFree(d);
    cudaFree(d1);
    cudaFreeHost(pinned);
    cudaStreamDestroy(s);
    cudaStreamDestroy(s1);
    finish("NCCL argument rules");
}

/* ------------------------------------------------------------------ */
/* NCCL: init failures, split, capture, stream order */

typedef struct init_try {
    ncclUniqueId id;
    int nranks, rank, device;
    ncclResult_t r;
    ncclComm_t comm;
} init_try;

static void* init_thread(void* arg) {
    init_try* t = (init_try*)arg;
    cudaSetDevice(t->device);
    t->r = ncclCommInitRank(&t->comm, t->nranks, t->id, t->rank);
    return NULL;
}

static void test_init_failures(void) {
    init_try t[2];
    pthread_t th[2];
    int i;
    standin_set_timeout_ms(150);
    memset(t, 0, sizeof t);
    ncclGetUniqueId(&t[0].id);
    t[0].nranks = 2;
    init_thread(&t[0]);
    CHECK_INT(t[0].r, ncclSystemError, "one rank of two times out");
    CHECK(t[0].comm == NULL, "and gets no communicator");
    CHECK_VIOLATION(1, "only 1 of 2 ranks", "init timeout");
    CHECK_INT(standin_live_handles(), 0, "nothing is left of it");
    /* two ranks on one device */
    for (i = 0; i < 2; i++) {
        t[i].id = t[0].id;
        t[i].nranks = 2;
        t[i].rank = i;
        t[i].device = 3;
        t[i].comm = NULL;
        pthread_create(&th[i], NULL, init_thread, &t[i]);
    }
    for (i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(t[0].r == ncclInvalidUsage && t[1].r == ncclInvalidUsage, "two ranks on device 3 both fail");
    CHECK_VIOLATION(1, "both on device 3", "duplicate device");
    /* ranks that disagree on the size */
    ncclGetUniqueId(&t[0].id);
    t[1].id = t[0].id;
    t[0].nranks = 2;
    t[1].nranks = 3;
    t[1].device = 1;
    t[0].device = 0;
    i = standin_call_count("ncclCommInitRank");
    pthread_create(&th[0], NULL, init_thread, &t[0]);
    while (standin_call_count("ncclCommInitRank") == i) sleep_ms(1);
    sleep_ms(20);   /* rank 0 has joined (it is waiting for its peer) */
    init_thread(&t[1]);
    pthread_join(th[0], NULL);
    CHECK(t[1].r == ncclInvalidUsage && t[0].r == ncclSystemError, "ranks disagreeing on the size fail");
    CHECK(violations_with("says 3 ranks") == 1 && violations_with("only 1 of 2") == 1 &&
          standin_violation_count() == 2, "naming the disagreement and the timeout (%s)", first_violation());
    standin_clear_violations();
    finish("init failures");
}

static void split_body(rank_ctx* c) {
    ncclComm_t sub = NULL;
    int *d = NULL, v = c->rank + 1, got = 0;
    RC(c, ncclCommSplit(c->comm, c->rank / 2, c->rank, &sub, NULL));
    RC(c, ncclCommCount(sub, &c->ints[0]));
    RC(c, ncclCommUserRank(sub, &c->ints[1]));
    RC(c, cudaMalloc((void**)&d, sizeof(int)));
    RC(c, cudaMemcpy(d, &v, sizeof(int), cudaMemcpyHostToDevice));
    RC(c, ncclAllReduce(d, d, 1, ncclInt32, ncclSum, sub, c->stream));
    RC(c, cudaMemcpyAsync(&got, d, sizeof(int), cudaMemcpyDeviceToHost, c->stream));
    RC(c, cudaStreamSynchronize(c->stream));
    c->ints[2] = got;
    RC(c, ncclCommDestroy(sub));
    RC(c, cudaFree(d));
}

static void test_split(void) {
    world* w = world_new();
    ncclComm_t comms[4], sub[4];
    cudaStream_t s[4];
    int* d[4];
    int r, n, rank, dev, ok = 1, devlist[4] = { 0, 1, 2, 3 };
    run_ranks(w, 4, split_body, "ncclCommSplit by rank / 2 from rank threads");
    for (r = 0; r < 4; r++)
        if (w->ranks[r].ints[0] != 2 || w->ranks[r].ints[1] != r % 2 || w->ranks[r].ints[2] != (r / 2 ? 7 : 3)) ok = 0;
    CHECK(ok, "two communicators of 2 ranks, each summing its own ranks");
    /* from one thread, inside a group: color r % 2, key -r, rank 3 without color */
    CHECK_INT(ncclCommInitAll(comms, 4, devlist), ncclSuccess, "ncclCommInitAll of 4");
    ncclGroupStart();
    for (r = 0; r < 4; r++)
        CHECK_INT(ncclCommSplit(comms[r], r == 3 ? NCCL_SPLIT_NOCOLOR : r % 2, -r, &sub[r], NULL), ncclSuccess,
                  "ncclCommSplit of rank %d inside a group", r);
    CHECK_INT(ncclGroupEnd(), ncclSuccess, "ncclGroupEnd completes the splits");
    CHECK(sub[3] == NULL, "NCCL_SPLIT_NOCOLOR gives NULL");
    CHECK(ncclCommCount(sub[0], &n) == ncclSuccess && n == 2 && ncclCommUserRank(sub[0], &rank) == ncclSuccess &&
          rank == 1 && ncclCommCuDevice(sub[0], &dev) == ncclSuccess && dev == 0,
          "color 0: old rank 0 (key 0) is rank 1 of 2, on device 0");
    CHECK(ncclCommUserRank(sub[2], &rank) == ncclSuccess && rank == 0 && ncclCommCuDevice(sub[2], &dev) == ncclSuccess &&
          dev == 2, "old rank 2 (key -2) comes first, on device 2");
    CHECK(ncclCommCount(sub[1], &n) == ncclSuccess && n == 1, "color 1 has old rank 1 alone");
    for (r = 0; r < 3; r++) {
        cudaSetDevice(r);
        cudaStreamCreate(&s[r]);
        cudaMalloc((void**)&d[r], sizeof(int));
        *d[r] = 10 + r;    /* device memory is host memory in the stand-in */
    }
    cudaSetDevice(0);
    ncclGroupStart();
    ncclAllReduce(d[0], d[0], 1, ncclInt32, ncclSum, sub[0], s[0]);
    ncclAllReduce(d[2], d[2], 1, ncclInt32, ncclSum, sub[2], s[2]);
    ncclAllReduce(d[1], d[1], 1, ncclInt32, ncclProd, sub[1], s[1]);
    CHECK_INT(ncclGroupEnd(), ncclSuccess, "collectives of three ranks from one thread in one group");
    for (r = 0; r < 3; r++) cudaStreamSynchronize(s[r]);
    CHECK(*d[0] == 22 && *d[2] == 22 && *d[1] == 11, "the split communicators reduce their own members");
    for (r = 0; r < 3; r++) {
        cudaFree(d[r]);
        cudaStreamDestroy(s[r]);
        ncclCommDestroy(sub[r]);
    }
    for (r = 0; r < 4; r++) ncclCommDestroy(comms[r]);
    CHECK_CLEAN("split");
    free(w);
    finish("split");
}

static void capture_body(rank_ctx* c) {
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ex = NULL;
    cudaStream_t side;
    cudaEvent_t fork, join;
    int *d = NULL, *d2 = NULL, in[COUNT], out[COUNT], round, i;
    RC(c, cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    RC(c, cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    RC(c, cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    RC(c, cudaMalloc((void**)&d, sizeof in));
    RC(c, cudaMalloc((void**)&d2, sizeof in));
    RC(c, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
    RC(c, cudaMemcpyAsync(d, in, sizeof in, cudaMemcpyHostToDevice, c->stream));
    RC(c, cudaEventRecord(fork, c->stream));
    RC(c, cudaStreamWaitEvent(side, fork, 0));
    RC(c, ncclGroupStart());
    RC(c, ncclAllReduce(d, d2, COUNT, ncclInt32, ncclSum, c->comm, side));
    RC(c, ncclGroupEnd());
    RC(c, ncclAllReduce(d2, d2, COUNT, ncclInt32, ncclMax, c->comm, side));
    RC(c, cudaEventRecord(join, side));
    RC(c, cudaStreamWaitEvent(c->stream, join, 0));
    RC(c, cudaMemcpyAsync(out, d2, sizeof out, cudaMemcpyDeviceToHost, c->stream));
    RC(c, cudaStreamEndCapture(c->stream, &gr));
    RC(c, cudaGraphInstantiate(&ex, gr, 0));
    c->ints[0] = 1;
    for (round = 0; round < 3; round++) {
        for (i = 0; i < COUNT; i++) in[i] = (c->rank + 1) * (round + 1) + i;
        RC(c, cudaGraphLaunch(ex, c->stream));
        RC(c, cudaStreamSynchronize(c->stream));
        for (i = 0; i < COUNT; i++)   /* ranks 1 and 2: (1 + 2) * (round + 1) + 2i */
            if (out[i] != 3 * (round + 1) + 2 * i) c->ints[0] = 0;
    }
    RC(c, cudaGraphExecDestroy(ex));
    RC(c, cudaGraphDestroy(gr));
    RC(c, cudaEventDestroy(fork));
    RC(c, cudaEventDestroy(join));
    RC(c, cudaStreamDestroy(side));
    RC(c, cudaFree(d));
    RC(c, cudaFree(d2));
}

static void test_nccl_capture(void) {
    world* w = world_new();
    run_ranks(w, 2, capture_body, "collectives captured on a forked stream and replayed 3 times");
    CHECK(w->ranks[0].ints[0] && w->ranks[1].ints[0], "every replay reduces that round's inputs");
    CHECK_CLEAN("captured collectives");
    free(w);
    finish("NCCL capture");
}

static void write_ones(void* arg) {
    sleep_ms(20);
    ((int*)arg)[0] = 1;
}

static void read_first(void* arg) {
    int** p = (int**)arg;
    p[1][0] = p[0][0];
}

static void order_body(rank_ctx* c) {
    int *d = NULL, *dr = NULL, result = 0;
    int* pair[2];
    RC(c, cudaMalloc((void**)&d, sizeof(int)));
    RC(c, cudaMalloc((void**)&dr, sizeof(int)));
    RC(c, cudaMemsetAsync(d, 0, sizeof(int), c->stream));
    RC(c, cudaLaunchHostFunc(c->stream, write_ones, d));     /* a slow "kernel" writes the input */
    RC(c, ncclAllReduce(d, dr, 1, ncclInt32, ncclSum, c->comm, c->stream));
    pair[0] = dr;
    pair[1] = &result;
    RC(c, cudaLaunchHostFunc(c->stream, read_first, pair));  /* and one after the collective reads it */
    RC(c, cudaStreamSynchronize(c->stream));
    c->ints[0] = result;
    RC(c, cudaFree(d));
    RC(c, cudaFree(dr));
}

static void test_nccl_stream_order(void) {
    world* w = world_new();
    run_ranks(w, 3, order_body, "a collective between two host functions");
    CHECK(w->ranks[0].ints[0] == 3 && w->ranks[1].ints[0] == 3 && w->ranks[2].ints[0] == 3,
          "the collective waited for the work before it, the work after it waited for the collective");
    CHECK_CLEAN("stream order with collectives");
    free(w);
    finish("NCCL stream order");
}

static void test_reset_pending(void) {
    ncclComm_t comms[2];
    int *d, i;
    cudaStream_t s;
    ncclCommInitAll(comms, 2, NULL);
    cudaStreamCreate(&s);
    cudaMalloc((void**)&d, sizeof(int));
    CHECK_INT(ncclAllReduce(d, d, 1, ncclInt32, ncclSum, comms[0], s), ncclSuccess, "rank 0 alone all-reduces");
    for (i = 0; i < 3; i++) cudaLaunchHostFunc(s, count_fn, &i);
    CHECK(standin_live_handles() == 4, "a stream, an allocation and two communicators are live");
    standin_reset();
    CHECK_VIOLATION(1, "still pending", "a reset with a hanging collective");
    CHECK_INT(standin_live_handles(), 0, "the reset freed everything");
    CHECK_INT(i, 3, "the work behind it was discarded, not run");
    finish("reset with work pending");
}

/* every NCCL function in one thread; the first failure's code */
static int nccl_scenario(void) {
    ncclComm_t comms[2] = { NULL, NULL }, one = NULL, sub[2] = { NULL, NULL };
    ncclUniqueId id;
    cudaStream_t s[2] = { NULL, NULL };
    float* d[2] = { NULL, NULL };
    int v, r;
    ncclResult_t ae;
    int rc;
#define NC(call) do { if ((rc = (int)(call)) != 0) return rc; } while (0)
    NC(ncclGetVersion(&v));
    NC(ncclGetUniqueId(&id));
    NC(ncclCommInitRank(&one, 1, id, 0));
    NC(ncclCommInitAll(comms, 2, NULL));
    NC(ncclCommCount(comms[0], &v));
    NC(ncclCommUserRank(comms[1], &v));
    NC(ncclCommCuDevice(comms[1], &v));
    for (r = 0; r < 2; r++) {
        NC(cudaSetDevice(r));
        NC(cudaStreamCreate(&s[r]));
        NC(cudaMalloc((void**)&d[r], 8 * sizeof(float)));
    }
    NC(cudaSetDevice(0));
    NC(ncclGroupStart());
    for (r = 0; r < 2; r++) {
        NC(ncclAllReduce(d[r], d[r], 8, ncclFloat32, ncclSum, comms[r], s[r]));
        NC(ncclReduceScatter(d[r], d[r] + r * 4, 4, ncclFloat32, ncclSum, comms[r], s[r]));
        NC(ncclAllGather(d[r] + r * 4, d[r], 4, ncclFloat32, comms[r], s[r]));
        NC(ncclBroadcast(d[r], d[r], 8, ncclFloat32, 0, comms[r], s[r]));
        NC(ncclReduce(d[r], d[r], 8, ncclFloat32, ncclMax, 1, comms[r], s[r]));
        NC(ncclSend(d[r], 4, ncclFloat32, 1 - r, comms[r], s[r]));
        NC(ncclRecv(d[r] + 4, 4, ncclFloat32, 1 - r, comms[r], s[r]));
    }
    NC(ncclGroupEnd());
    NC(ncclGroupStart());
    NC(ncclCommSplit(comms[0], 0, 0, &sub[0], NULL));
    NC(ncclCommSplit(comms[1], 0, 0, &sub[1], NULL));
    NC(ncclGroupEnd());
    NC(ncclCommGetAsyncError(comms[0], &ae));
    NC(cudaStreamSynchronize(s[0]));
    NC(cudaStreamSynchronize(s[1]));
    NC(ncclCommFinalize(comms[0]));
    NC(ncclCommDestroy(comms[0]));
    NC(ncclCommDestroy(comms[1]));
    NC(ncclCommAbort(sub[0]));
    NC(ncclCommAbort(sub[1]));
    NC(ncclCommDestroy(one));
    for (r = 0; r < 2; r++) {
        NC(cudaFree(d[r]));
        NC(cudaStreamDestroy(s[r]));
    }
#undef NC
    (void)ncclGetErrorString(ncclSuccess);
    (void)ncclGetLastError(NULL);
    return 0;
}

static void test_fail_call_nccl(void) {
    int total, k, ok = 0;
    standin_reset();
    CHECK_INT(nccl_scenario(), 0, "the NCCL scenario runs clean");
    CHECK_CLEAN("NCCL scenario");
    CHECK_INT(standin_live_handles(), 0, "and frees everything");
    total = standin_call_count(NULL) - 2;
    CHECK_INT(standin_call_count("ncclCommSplit"), 2, "ncclCommSplit is counted");
    for (k = 1; k <= total; k++) {
        standin_reset();
        standin_fail_call(NULL, k, 3);   /* ncclInternalError, cudaErrorInitializationError */
        if (nccl_scenario() == 3 && standin_call_count(NULL) == k) ok++;
    }
    CHECK_INT(ok, total, "failing each of the %d calls returns the injected code there", total);
    standin_reset();
    standin_fail_call("ncclGroupEnd", 1, (int)ncclSystemError);
    ncclGroupStart();
    CHECK_INT(ncclGroupEnd(), ncclSystemError, "ncclGroupEnd fails by name");
    CHECK(strstr(ncclGetLastError(NULL), "injected") != NULL, "ncclGetLastError says it was injected");
    finish("fail_call (NCCL)");
}

int main(void) {
    standin_reset();
    TH_RUN(test_devices);
    TH_RUN(test_stream_order);
    TH_RUN(test_cross_stream_events);
    TH_RUN(test_priorities);
    TH_RUN(test_event_timing);
    TH_RUN(test_unrecorded_event);
    TH_RUN(test_use_after_destroy);
    TH_RUN(test_capture_fork_join);
    TH_RUN(test_capture_errors);
    TH_RUN(test_sync_in_capture);
    TH_RUN(test_memory);
    TH_RUN(test_graph_memory_ops);
    TH_RUN(test_legacy_stream);
    TH_RUN(test_errors);
    TH_RUN(test_fail_call_cuda);
    TH_RUN(test_nccl_basics);
    TH_RUN(test_collectives);
    TH_RUN(test_rounding);
    TH_RUN(test_send_recv_ring);
    TH_RUN(test_ungrouped_p2p);
    TH_RUN(test_mismatch_abort);
    TH_RUN(test_async_error);
    TH_RUN(test_nccl_rules);
    TH_RUN(test_init_failures);
    TH_RUN(test_split);
    TH_RUN(test_nccl_capture);
    TH_RUN(test_nccl_stream_order);
    TH_RUN(test_reset_pending);
    TH_RUN(test_fail_call_nccl);
    return th_done();
}

#endif /* STANDIN_NO_HEADERS */
