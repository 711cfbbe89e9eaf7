# Makefile - Concerto-C (GNU make, gcc)
#
#   make          build/psplib (tools/psplib.c), build/bench_scale, build/bench_exec,
#                 build/schedule_step, build/hello_step, build/overlap, build/train_gpt
#                 (examples/) and the test programs
#   make test     build and run every test; the last line of output is
#                 "N passed, N failed[, N skipped]", exit status non-zero on a failure
#   make asan     the tests again with -fsanitize=address,undefined (in build/asan)
#   make tsan     the tests that start threads again with -fsanitize=thread (in build/tsan)
#   make test-gpu build/tests/test_gpu and tests/test_gpt_cuda.sh: the CUDA backend,
#                 NCCL and the CUDA trainer on a real GPU, one program at a time
#                 (fails, saying why, without a GPU and a driver new enough for it)
#   make bench    bench/run.sh, if there is one
#   make gpu-check-build, then make gpu-check on a GPU machine: the prepared
#                 GPU check (bench/gpu_check.sh)
#   make demo     the example GPT trainer (examples/gpt) on 4 CPU ranks, in program
#                 order and then scheduled and rewritten by the library; then
#                 decomposition alone, timed on and off
#   make fuzz     the libFuzzer targets of tests/fuzz/, FUZZ_SECONDS (default 60) each (clang-14)
#   make analyze  scan-build and cppcheck over the headers, examples and tools; clean or it fails
#   make clean
#
# Honours CC, CXX, CFLAGS, CXXFLAGS, LDFLAGS, MPICC; NO_CUDA=1, NO_NCCL=1, NO_LPSOLVE=1,
# NO_MPI=1 switch the optional dependencies off (CUDA_HOME: where CUDA and NCCL are); DATA (default ../shared/data) is where the
# PSPLIB files are; BUILD_JOBS (default: the cores) compiles in parallel. Test
# variables: TEST_JOBS, TEST_TIMEOUT (tests/run.sh),
# CI=true (a skipped test counts as a failure).

ifeq ($(origin CC),default)
CC := gcc
endif
ifeq ($(origin CXX),default)
CXX := g++
endif
CFLAGS   ?= -O2
CXXFLAGS ?= -O2
BUILD    ?= build
# parallel compiles in `make test`
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DATA     ?= ../shared/data
SAN      ?=

# The language and warning flags are not negotiable; CFLAGS comes after them
# so that a caller can still add to them.
# The implementation uses POSIX threads: -pthread for compiling and linking.
ALL_CFLAGS   = -std=c99 -Wall -Wextra -Werror -pedantic -pthread $(LPSOLVE_CFLAGS) $(CFLAGS) $(SAN) -MMD -MP
ALL_CXXFLAGS = -std=c++11 -Wall -Wextra -Werror -pedantic -pthread $(LPSOLVE_CFLAGS) $(CXXFLAGS) $(SAN) -MMD -MP
ALL_LDFLAGS  = -pthread $(SAN) $(LDFLAGS)
# the scheduler alone (CONCERTO_NO_RUNTIME): strict C99, no POSIX, no threads
STRICT_CFLAGS = -std=c99 -Wall -Wextra -Werror -pedantic $(CFLAGS) $(SAN) -MMD -MP
LDLIBS       = $(LPSOLVE_LIBS) -lm

T := $(BUILD)/tests
UNIT_TESTS    := test_sched test_memory test_sched_threads test_exact test_exact_shave test_lcg test_j30 test_alloc test_alloc_exec test_guard test_faults test_determinism test_graph test_check test_sim test_psplib test_misc test_world test_exec test_arena test_lpsolve test_fuse test_fuse_bucket test_decompose test_split test_gpt_split test_chunk_cost test_copy test_comm test_cluster test_peers test_step \
                 test_rcpsp_off
# The compile tests (the headers as C99, as C++11, two static copies, the
# scheduler alone) are built and run by make test only: what they check is
# that each way of compiling builds, warning-free, and links; the 3-op
# scenario each runs is code the unit tests run sanitized. Under the
# sanitizers each compiled one more copy of the implementation (about 16 s
# of processor time apiece under AddressSanitizer, five of them).
COMPILE_TESTS := $(if $(SAN),,compile_c99 compile_cpp11 compile_static compile_solver_only)
UNIT_BINS     := $(addprefix $(T)/,$(UNIT_TESTS))
TEST_BINS     := $(UNIT_BINS) $(addprefix $(T)/,$(COMPILE_TESTS)) tests/test_psplib_tool.sh tests/test_plan.sh tests/test_gpt.sh tests/test_gpt_crash.sh \
                 tests/test_examples.sh
# Test programs that never start a second thread (the scheduler, the
# checker, the simulator, the planner and the PSPLIB tool run on the
# caller's thread; only the CPU ranks, the stream workers and the
# scheduler's restarts with cc_sched_desc.threads > 1 start threads):
# ThreadSanitizer has nothing to check in them (they took about 20 minutes
# of processor time under it), so make tsan does not run them; make test and
# make asan do. The unit programs among them link tests/thread_free.c, which
# stops one that starts a thread after all, so that the list cannot go
# stale. An edit of the list reaches a program when it is next linked
# (make clean, or a fresh clone as CI's).
THREAD_FREE_UNITS := test_sched test_memory test_exact test_exact_shave test_lcg test_j30 test_alloc test_determinism test_graph test_check test_sim \
                     test_psplib test_misc test_lpsolve test_split test_gpt_split test_cluster test_peers test_step test_rcpsp_off
THREAD_FREE   := $(addprefix $(T)/,$(THREAD_FREE_UNITS)) tests/test_psplib_tool.sh tests/test_plan.sh
TSAN_BUILD     = $(findstring -fsanitize=thread,$(SAN))
# the longest-running tests (minutes, where the rest take seconds): tests/run.sh
# starts them first (TEST_FIRST), so that the run does not end on one of them
# alone on one core
SLOW_TESTS    := tests/test_gpt.sh tests/test_gpt_mpi.sh tests/test_plan.sh $(T)/test_cuda_standin $(T)/test_sched \
                 $(T)/test_exact_shave $(T)/test_exact $(T)/test_lcg $(T)/test_lpsolve tests/test_mpi.sh
# what make test runs: every test program, but under ThreadSanitizer those that start threads
RUN_BINS       = $(if $(TSAN_BUILD),$(filter-out $(THREAD_FREE),$(TEST_BINS)),$(TEST_BINS))
PSPLIB_TOOL   := $(if $(wildcard tools/psplib.c),$(BUILD)/psplib)
PLAN_TOOL     := $(if $(wildcard tools/plan.c),$(BUILD)/plan)
# other programs, built by `make` when their source is there so that they never rot
PROGRAMS      := $(PSPLIB_TOOL) $(PLAN_TOOL) $(BUILD)/bench_scale $(BUILD)/bench_step_sm $(BUILD)/bench_exec $(BUILD)/bench_window_dump $(BUILD)/bench_cluster $(BUILD)/schedule_step $(BUILD)/hello_step $(BUILD)/overlap \
                 $(BUILD)/train_gpt
# the programs a test runs: the sanitized runs (make asan, make tsan) build
# these alone, as the others run in no test there (make and make test build them all)
TESTED_PROGRAMS = $(if $(TSAN_BUILD),,$(PSPLIB_TOOL) $(PLAN_TOOL)) $(BUILD)/train_gpt $(BUILD)/hello_step

J30_TGZ   := $(DATA)/psplib/j30.tar.gz
J30_STAMP := $(if $(wildcard $(J30_TGZ)),build/j30/.extracted)

# ---- optional dependencies: compile probes, run once when first needed ----
# $(call once,VAR,CMD): the output of the shell command held in variable CMD,
# run at most once and only when VAR is first used (so `make clean` probes nothing).
once = $(eval $1 := $$(shell $$($2)))$($1)
NVCC_PROBE    = { ls /usr/local/cuda/bin/nvcc || command -v nvcc; } 2>/dev/null | head -n 1
CUDA_PROBE    = [ -n "$(NVCC_PATH)" ] && "$(NVCC_PATH)" --version >/dev/null 2>&1 && echo 1 || echo 0
LPSOLVE_PROBE = printf '\#include <lpsolve/lp_lib.h>\nint main(void) { lprec* lp = make_lp(0, 1); delete_lp(lp); return 0; }\n' \
                | $(CC) -x c - -o /dev/null -llpsolve55 -lcolamd -lm -ldl >/dev/null 2>&1 && echo 1 || echo 0
NVCC_PATH    = $(call once,NVCC_PATH,NVCC_PROBE)
HAVE_CUDA    = $(if $(filter 1,$(NO_CUDA)),0,$(call once,HAVE_CUDA,CUDA_PROBE))
HAVE_LPSOLVE = $(if $(filter 1,$(NO_LPSOLVE)),0,$(call once,HAVE_LPSOLVE,LPSOLVE_PROBE))
# lp_solve found: every program and test is compiled with the ILP backend
LPSOLVE_CFLAGS = $(if $(filter 1,$(HAVE_LPSOLVE)),-DCONCERTO_USE_LPSOLVE)
LPSOLVE_LIBS   = $(if $(filter 1,$(HAVE_LPSOLVE)),-llpsolve55 -lcolamd -ldl)

.PHONY: all test asan tsan bench demo clean deps tests-build
.DELETE_ON_ERROR:

all: deps $(PROGRAMS) tests-build
ifeq ($(PSPLIB_TOOL),)
	@echo "note: tools/psplib.c is not there yet, so build/psplib is not built"
endif

deps:
	@echo "optional dependencies:"
	@$(GPU_DEPS)
	@$(MPI_DEPS)
	@if [ "$(NO_LPSOLVE)" = 1 ]; then echo "  ✗ lp_solve: switched off (NO_LPSOLVE=1)"; \
	 elif [ "$(HAVE_LPSOLVE)" = 1 ]; then echo "  ✓ lp_solve: <lpsolve/lp_lib.h>, -llpsolve55 ILP backend compiled in (CONCERTO_USE_LPSOLVE)"; \
	 else echo "  ✗ lp_solve: <lpsolve/lp_lib.h> with -llpsolve55 not found (apt-get install liblpsolve55-dev)"; fi

tests-build: $(if $(TSAN_BUILD),$(filter-out $(THREAD_FREE),$(UNIT_BINS)),$(UNIT_BINS)) $(addprefix $(T)/,$(COMPILE_TESTS))

# Compile failures do not stop the run: tests/run.sh counts a program that
# did not build as a failed test, so the closing line stays the last line.
test: deps $(J30_STAMP)
	@$(MAKE) --no-print-directory -k -j$(BUILD_JOBS) $(if $(SAN),$(TESTED_PROGRAMS),$(PROGRAMS)) tests-build || true
	@$(if $(TSAN_BUILD),echo "not run under ThreadSanitizer (they start no thread; make test and make asan run them): $(notdir $(filter $(THREAD_FREE),$(TEST_BINS)))")
	@CONCERTO_DATA="$(DATA)" TEST_BUILD="$(BUILD)" TEST_FIRST="$(SLOW_TESTS)" tests/run.sh $(BUILD) $(RUN_BINS)

# TEST_SANITIZER (asan, tsan; empty in make test) tells the long shell tests
# (test_gpt.sh, test_gpt_mpi.sh, test_plan.sh) that they run sanitized: each
# then runs the subset of its cases that its comments name, one or more of
# every trainer flag, parallel layout and order (make test runs them all).
# ASan and UBSan compile with -O1 (the optimisation level AddressSanitizer's
# documentation suggests): at -O2 gcc took four to five times the processor
# time of a plain -O2 compile for each copy of the implementation (about 38 s
# against 8.5 s; -O1 about 18 s), and some 30 test programs compile one.
asan:
	@TEST_SANITIZER=asan $(MAKE) --no-print-directory test BUILD=$(BUILD)/asan \
	    SAN="-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

tsan:
	@TEST_SANITIZER=tsan $(MAKE) --no-print-directory test BUILD=$(BUILD)/tsan SAN="-fsanitize=thread -fno-omit-frame-pointer"

bench: $(PROGRAMS)
	@if [ -f bench/run.sh ]; then bash bench/run.sh; else echo "bench/run.sh is not written yet: no benchmarks to run"; fi

# The example trainer on 4 CPU ranks (TP2 x DP2) over an emulated link, in
# program order and then in the library's order, from the same start. Its
# summary names what the rewrites kept (each context decomposition split,
# the fusion buckets) with the gain each was judged to bring, and times the
# rewritten step side by side with the step as written, both in the
# library's order, and with program order. Durations come from the
# trainer's model (--profile 0: compute at 1 GB/s over the bytes an op
# touches, collectives on the emulated link), so the rewrites kept are the
# same on every machine; profiled on a shared 2-core machine they vary
# between runs, and with them what is kept. Then decomposition alone
# (DEMO_DEC_ARGS: fusion off), on 2 ranks with wider matmuls and a slower
# link, where its chunks are judged to pay for the ops and waits they add
# (measured 0.94x to 1.08x on a shared 2-core machine); at the first layout
# they do not (bench/RESULTS.md, "Trainer, decomposition on and off").
DEMO_ARGS ?= --tp 2 --dp 2 --order both --steps 300 --print-every 30 --profile 0
DEMO_DEC_ARGS ?= --tp 2 --dp 1 --embd 128 --link 160 --latency 10 --profile 0 --fuse off --order concerto --steps 20 \
                 --print-every 0 --eval 0 --sample 0

demo: $(BUILD)/train_gpt
	@mkdir -p $(BUILD)/demo
	@cd $(BUILD)/demo && ../train_gpt $(DEMO_ARGS) --trace gpt_step.json --save gpt.ckpt
	@echo "(in $(BUILD)/demo: gpt_step.json, a Chrome trace of one step on every rank; gpt.ckpt, the trained model)"
	@echo; echo "--- decomposition alone: ../train_gpt $(DEMO_DEC_ARGS) ---"
	@cd $(BUILD)/demo && ../train_gpt $(DEMO_DEC_ARGS) | sed -n '/^what the library did/,$$p'

clean:
	rm -rf build

# ---- programs: the command-line solver, benchmarks, examples ----
HEADERS := concerto.h

$(BUILD)/psplib: tools/psplib.c $(HEADERS) concerto_rcpsp.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

# the planner: the step described once (examples/steps/gpt_step.h, shared with the
# trainers) and the peers' policies
$(BUILD)/plan: tools/plan.c tools/peers.h examples/steps/gpt_step.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/bench_%: bench/%.c $(wildcard bench/*.h) examples/steps/synthetic_step.h $(HEADERS) concerto_rcpsp.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

# a synthetic training step written as a PSPLIB .sm file, for CP-SAT (bench/run.sh cpsat)
$(BUILD)/bench_step_sm: bench/solver/step_sm.c examples/steps/synthetic_step.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

# each odd-even window left unproven, written for CP-SAT (bench/run.sh windows)
$(BUILD)/bench_window_dump: bench/solver/window_dump.c $(HEADERS) concerto_rcpsp.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

# the cluster cost model against published NCCL figures (bench/run.sh cluster)
$(BUILD)/bench_cluster: bench/cluster_validate.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/schedule_step: examples/schedule_step.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/hello_step: examples/hello_step.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/overlap: examples/overlap.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/train_gpt: examples/gpt/train_gpt.c examples/gpt/gpt_kernels.h examples/gpt/gpt_cpu_ops.h examples/gpt/gpt_common.h examples/steps/gpt_step.h examples/gpt/gpt_train.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)

# ---- tests ----
# An object that fails to compile takes its program with it, so that a stale
# program from an earlier build is never run.
$(T)/%.o: tests/%.c
	@mkdir -p $(@D)
	@echo "$(CC) $(ALL_CFLAGS) -c $< -o $@"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@ || { rm -f $@ $(T)/$* $(if $(filter util concerto_impl,$*),$(UNIT_BINS)) \
	    $(if $(filter compile_static_%,$*),$(T)/compile_static) $(if $(filter rcpsp_off_with,$*),$(T)/test_rcpsp_off); exit 1; }

$(T)/compile_cpp11.o: tests/compile_cpp11.cpp
	@mkdir -p $(@D)
	@echo "$(CXX) $(ALL_CXXFLAGS) -c $< -o $@"
	@$(CXX) $(ALL_CXXFLAGS) -c $< -o $@ || { rm -f $@ $(T)/compile_cpp11; exit 1; }

# test_lpsolve compiles the implementation itself: it swaps lp_solve's calls
# for failing fakes through hooks that are private to that translation unit;
# test_peers compiles it beside tools/peers.h, as a planner would; test_copy
# to reach the rewrites' helper that adds copy ops.
SELF_IMPL_BINS := $(T)/test_lpsolve $(T)/test_exact $(T)/test_exact_shave $(T)/test_lcg $(T)/test_peers $(T)/test_copy
# test_rcpsp_off links two private copies of the implementation
# (CONCERTO_STATIC): its own, compiled without concerto_rcpsp.h, and
# rcpsp_off_with.c's, compiled with it.
TWO_COPY_BINS  := $(T)/test_rcpsp_off

$(filter-out $(SELF_IMPL_BINS) $(TWO_COPY_BINS),$(UNIT_BINS)): $(T)/%: $(T)/%.o $(T)/util.o $(T)/concerto_impl.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(TWO_COPY_BINS): $(T)/%: $(T)/%.o $(T)/rcpsp_off_with.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(SELF_IMPL_BINS): $(T)/%: $(T)/%.o $(T)/util.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

# the thread-free programs (THREAD_FREE above): pthread_create stops them
$(filter $(THREAD_FREE),$(UNIT_BINS)): $(T)/thread_free.o
$(filter $(THREAD_FREE),$(UNIT_BINS)): ALL_LDFLAGS += -Wl,--wrap=pthread_create

$(T)/compile_c99: $(T)/compile_c99.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(T)/compile_cpp11: $(T)/compile_cpp11.o
	$(CXX) $^ -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(T)/compile_static: $(T)/compile_static_a.o $(T)/compile_static_b.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(T)/compile_solver_only.o: tests/compile_solver_only.c
	@mkdir -p $(@D)
	@echo "$(CC) $(STRICT_CFLAGS) -c $< -o $@"
	@$(CC) $(STRICT_CFLAGS) -c $< -o $@ || { rm -f $@ $(T)/compile_solver_only; exit 1; }

$(T)/compile_solver_only: $(T)/compile_solver_only.o
	$(CC) $^ -o $@ $(SAN) $(LDFLAGS) -lm || { rm -f $@; exit 1; }

# ==== GPU block: concerto_cuda.h, concerto_nccl.h ===========================
# Probes, run once when first needed: the CUDA runtime for gcc
# (cuda_runtime_api.h and -lcudart under CUDA_HOME; nvcc is HAVE_CUDA above)
# and NCCL 2.18+ beside it (<nccl.h>, -lnccl). NO_CUDA=1 switches all of it
# off, NO_NCCL=1 NCCL alone (the programs are then built without
# concerto_nccl.h and say so).
# Programs: compile_cuda (gcc, C11 -pedantic) and compile_cuda_nvcc (nvcc,
# CUDA C++) from tests/compile_cuda.c, run by `make test`; test_gpu, built
# by `make test` and run by `make test-gpu`. Where what one needs is
# missing, it is a two-line program that runs tests/skip.sh with the reason
# and how to get it. They are rebuilt when what was found changes
# ($(T)/gpu-config).
# build/bench_gpu (bench/gpu.cu, nvcc, NVCC_BENCH_FLAGS: default -O2, add
# e.g. -arch=sm_90): the GPU benchmarks, built by `make` (not `make test`)
# only where nvcc and NCCL are found; otherwise it is not built (an old one
# is removed) and `bench/run.sh gpu` says why.
CUDA_HOME    ?= /usr/local/cuda
CUDART_PROBE  = printf '\#include <cuda_runtime_api.h>\nint main(void) { int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? 0 : 0; }\n' \
                | $(CC) -x c -std=c11 -I$(CUDA_HOME)/include - -o /dev/null -L$(CUDA_HOME)/lib64 -lcudart >/dev/null 2>&1 && echo 1 || echo 0
NCCL_PROBE    = printf '\#include <cuda_runtime_api.h>\n\#include <nccl.h>\n\#if NCCL_VERSION_CODE < 21800\n\#error old\n\#endif\nint main(void) { int v = 0; return ncclGetVersion(&v) != ncclSuccess; }\n' \
                | $(CC) -x c -std=c11 -I$(CUDA_HOME)/include - -o /dev/null -L$(CUDA_HOME)/lib64 -lnccl -lcudart >/dev/null 2>&1 && echo 1 || echo 0
HAVE_CUDART   = $(if $(filter 1,$(NO_CUDA)),0,$(call once,HAVE_CUDART,CUDART_PROBE))
HAVE_NCCL     = $(if $(filter 1,$(NO_CUDA) $(NO_NCCL)),0,$(if $(filter 1,$(HAVE_CUDART)),$(call once,HAVE_NCCL,NCCL_PROBE),0))
CUBLAS_PROBE  = printf '\#include <cublas_v2.h>\nint main(void) { cublasHandle_t h; return cublasCreate(&h) == CUBLAS_STATUS_SUCCESS; }\n' \
                | $(CC) -x c -std=c11 -I$(CUDA_HOME)/include - -o /dev/null -L$(CUDA_HOME)/lib64 -lcublas -lcudart >/dev/null 2>&1 && echo 1 || echo 0
HAVE_CUBLAS   = $(if $(filter 1,$(NO_CUDA)),0,$(if $(filter 1,$(HAVE_CUDART)),$(call once,HAVE_CUBLAS,CUBLAS_PROBE),0))

GPU_NCCL_FLAGS = $(if $(filter 1,$(HAVE_NCCL)),,-DCONCERTO_TEST_NO_NCCL)
GPU_CFLAGS     = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -pedantic -pthread -I$(CUDA_HOME)/include \
                 $(GPU_NCCL_FLAGS) $(CFLAGS) $(SAN) -MMD -MP
GPU_LIBS       = $(ALL_LDFLAGS) -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 $(if $(filter 1,$(HAVE_NCCL)),-lnccl) -lcudart -lm
# nvcc: its front end's warnings are errors too, but for "set but never
# used" (550): concerto.h has two (cc__stream_sim's first[], the world's
# carving offset o_head), and gcc's -Wall checks that kind on the host code.
NVCC_FLAGS     = -x cu -Werror all-warnings -diag-suppress 550 -Xcompiler -Wall,-Wextra,-Werror,-pthread \
                 -I$(CUDA_HOME)/include $(GPU_NCCL_FLAGS)
NVCC_LIBS      = -L$(CUDA_HOME)/lib64 -Xlinker -rpath,$(CUDA_HOME)/lib64 $(if $(filter 1,$(HAVE_NCCL)),-lnccl) -lm

CUDA_HOWTO     = install the CUDA toolkit 12 or later (https://developer.nvidia.com/cuda-downloads) in $(CUDA_HOME), or set CUDA_HOME
NCCL_HOWTO     = install NCCL 2.18 or later beside CUDA (libnccl-dev from the CUDA repository of NVIDIA, https://developer.nvidia.com/nccl)
GPU_NO_CUDART  = $(if $(filter 1,$(NO_CUDA)),CUDA switched off with NO_CUDA=1,no CUDA runtime for $(CC) (cuda_runtime_api.h and -lcudart in $(CUDA_HOME)): $(CUDA_HOWTO))
GPU_NO_NVCC    = $(if $(filter 1,$(NO_CUDA)),CUDA switched off with NO_CUDA=1,no working nvcc in $(CUDA_HOME)/bin or on PATH: $(CUDA_HOWTO))
# $(call gpu_stub,NAME,REASON) in a recipe: $@ becomes a program that runs tests/skip.sh NAME REASON
gpu_stub       = printf '\#!/bin/sh\nexec tests/skip.sh %s "%s"\n' '$1' '$2' >$@ && chmod +x $@

# the lines of `make deps`
GPU_DEPS = if [ "$(NO_CUDA)" = 1 ]; then echo "  ✗ CUDA: switched off (NO_CUDA=1)"; \
    elif [ "$(HAVE_CUDA)$(HAVE_CUDART)" = 11 ]; then echo "  ✓ CUDA: $(NVCC_PATH), cuda_runtime_api.h and -lcudart in $(CUDA_HOME): concerto_cuda.h built by gcc and nvcc"; \
    elif [ "$(HAVE_CUDART)" = 1 ]; then echo "  ✗ CUDA: no working nvcc (only gcc builds concerto_cuda.h): $(CUDA_HOWTO)"; \
    else echo "  ✗ CUDA: no cuda_runtime_api.h with -lcudart in $(CUDA_HOME): $(CUDA_HOWTO)"; fi; \
    if [ "$(NO_CUDA)" = 1 ] || [ "$(NO_NCCL)" = 1 ]; then echo "  ✗ NCCL: switched off (NO_$(if $(filter 1,$(NO_CUDA)),CUDA,NCCL)=1)"; \
    elif [ "$(HAVE_NCCL)" = 1 ]; then echo "  ✓ NCCL: <nccl.h> and -lnccl (2.18+) in $(CUDA_HOME): concerto_nccl.h built and its id exchanges run"; \
    elif [ "$(HAVE_CUDART)" = 1 ]; then echo "  ✗ NCCL: no <nccl.h> 2.18+ with -lnccl in $(CUDA_HOME): $(NCCL_HOWTO)"; \
    else echo "  ✗ NCCL: needs CUDA first"; fi; \
    if [ "$(HAVE_CUDA)$(HAVE_NCCL)$(HAVE_CUBLAS)" = 111 ]; then echo "  ✓ CUDA trainer: nvcc, cuBLAS and NCCL: build/train_gpt_cuda ($(GPT_CUDA_SMS))"; \
    elif [ "$(NO_CUDA)" = 1 ]; then echo "  ✗ CUDA trainer: switched off (NO_CUDA=1)"; \
    else echo "  ✗ CUDA trainer: $(GPT_CUDA_MISSING)"; fi

GPU_HEADERS := concerto.h concerto_cuda.h concerto_nccl.h tests/harness.h
# The sanitized runs (make asan, make tsan) leave out what nvcc builds (the
# same unsanitized program as make test's) and test_gpu (run only by
# test-gpu; test_gpu_standin compiles the same file sanitized).
GPU_TESTS   := $(T)/compile_cuda $(if $(SAN),,$(T)/compile_cuda_nvcc)
TEST_BINS   += $(GPU_TESTS)

.PHONY: test-gpu gpu-config-check
tests-build: $(GPU_TESTS) $(if $(SAN),,$(T)/test_gpu)

# test-gpu decides once whether a GPU is there (build/tests/gpu_probe: a
# device, and a driver for the CUDA version the tests were built with) and
# fails, saying why, when none is: it is the GPU target. With one, the GPU
# programs run one at a time (TEST_JOBS=1: one GPU, and test_gpu measures
# time) with GPU_PRESENT=1, under which a check that cannot run fails.
test-gpu: deps
	@$(MAKE) --no-print-directory $(T)/gpu_probe
	@probe=$$($(T)/gpu_probe); echo "$$probe"; \
	 case "$$probe" in "gpu present:"*) ;; *) echo "FAIL test-gpu: $$probe"; echo "0 passed, 1 failed"; exit 1;; esac
	@$(MAKE) --no-print-directory $(T)/test_gpu $(BUILD)/train_gpt $(BUILD)/train_gpt_cuda
	@TEST_JOBS=1 GPU_PRESENT=1 TEST_BUILD="$(BUILD)" GPT_CUDA_GPU=1 tests/run.sh $(BUILD)/gpu $(T)/test_gpu tests/test_gpt_cuda.sh

# What the GPU programs are built with; rewritten only when it changes.
gpu-config-check:
$(T)/gpu-config: gpu-config-check
	@mkdir -p $(@D)
	@echo "cuda=$(HAVE_CUDA) cudart=$(HAVE_CUDART) nccl=$(HAVE_NCCL) cublas=$(HAVE_CUBLAS) home=$(CUDA_HOME) nvcc=$(NVCC_PATH) san=$(SAN)" >$@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(T)/compile_cuda $(T)/test_gpu: $(T)/%: tests/%.c $(GPU_HEADERS) $(T)/gpu-config
	@if [ "$(HAVE_CUDART)" = 1 ]; then \
	    echo "$(CC) $(GPU_CFLAGS) $< -o $@ $(GPU_LIBS)"; \
	    $(CC) $(GPU_CFLAGS) $< -o $@ $(GPU_LIBS) || { rm -f $@; exit 1; }; \
	 else $(call gpu_stub,$*,$(GPU_NO_CUDART)); fi

# The GPU probe of test-gpu (tests/gpu_probe.c); where no CUDA runtime is
# found, a script that says why ("no usable GPU: ...") and exits 1.
$(T)/gpu_probe: tests/gpu_probe.c $(T)/gpu-config
	@if [ "$(HAVE_CUDART)" = 1 ]; then \
	    $(CC) $(GPU_CFLAGS) $< -o $@ $(GPU_LIBS) || { rm -f $@; exit 1; }; \
	 else printf '#!/bin/sh\necho "no usable GPU: %s"\nexit 1\n' "$(GPU_NO_CUDART)" >$@ && chmod +x $@; fi

$(T)/compile_cuda_nvcc: tests/compile_cuda.c $(GPU_HEADERS) $(T)/gpu-config
	@if [ "$(HAVE_CUDA)" = 1 ]; then \
	    echo "$(NVCC_PATH) $(NVCC_FLAGS) $< -o $@ $(NVCC_LIBS)"; \
	    "$(NVCC_PATH)" $(NVCC_FLAGS) -DTH_PROGRAM='"compile_cuda_nvcc"' $< -o $@ $(NVCC_LIBS) || { rm -f $@; exit 1; }; \
	 else $(call gpu_stub,compile_cuda_nvcc,$(GPU_NO_NVCC)); fi

NVCC_BENCH_FLAGS ?= -O2
all: $(BUILD)/bench_gpu
$(BUILD)/bench_gpu: bench/gpu.cu concerto.h concerto_cuda.h concerto_nccl.h $(T)/gpu-config
	@if [ "$(HAVE_CUDA)$(HAVE_NCCL)" = 11 ]; then \
	    mkdir -p $(@D); \
	    echo "$(NVCC_PATH) $(NVCC_FLAGS) $(NVCC_BENCH_FLAGS) $< -o $@ $(NVCC_LIBS)"; \
	    "$(NVCC_PATH)" $(NVCC_FLAGS) $(NVCC_BENCH_FLAGS) $< -o $@ $(NVCC_LIBS) || { rm -f $@; exit 1; }; \
	 else rm -f $@; echo "note: $@ is not built: it needs nvcc and NCCL (see the CUDA and NCCL lines of make deps)"; fi

# build/train_gpt_cuda (examples/gpt/train_gpt.cu): the example trainer on
# GPUs, built by `make` and `make test` where nvcc, cuBLAS and NCCL are
# found, for the architectures in GPT_CUDA_ARCHS (default sm_80 and sm_90),
# with warnings as errors; otherwise tests/test_gpt_cuda.sh says why not.
# Not in the sanitized runs (make asan, make tsan): nvcc builds the same
# unsanitized program there, and the graph it is compared with is checked
# sanitized by test_gpt.sh.
# SASS for each, and PTX for the newest (code=compute_90), which the driver
# compiles for GPUs newer than any listed.
GPT_CUDA_ARCHS   ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                    -gencode arch=compute_90,code=compute_90
GPT_CUDA_SMS      = $(sort $(patsubst arch=compute_%,sm_%,$(filter arch=%,$(subst $(comma), ,$(GPT_CUDA_ARCHS)))))
comma            := ,
GPT_CUDA_MISSING  = needs $(if $(filter 1,$(HAVE_CUDA)),,nvcc )$(if $(filter 1,$(HAVE_NCCL)),,NCCL )$(if $(filter 1,$(HAVE_CUBLAS)),,cuBLAS )in $(CUDA_HOME): $(CUDA_HOWTO)$(if $(filter 1,$(HAVE_NCCL)),,; $(NCCL_HOWTO))
all: $(BUILD)/train_gpt_cuda
ifeq ($(SAN),)
TEST_BINS += tests/test_gpt_cuda.sh
tests-build: $(BUILD)/train_gpt_cuda
endif
$(BUILD)/train_gpt_cuda: examples/gpt/train_gpt.cu examples/gpt/gpt_common.h examples/steps/gpt_step.h examples/gpt/gpt_train.h concerto.h concerto_cuda.h \
                         concerto_nccl.h $(T)/gpu-config
	@mkdir -p $(@D)
	@rm -f $@.skip
	@if [ "$(HAVE_CUDA)$(HAVE_NCCL)$(HAVE_CUBLAS)" = 111 ]; then \
	    echo "$(NVCC_PATH) $(NVCC_FLAGS) -std=c++17 -O2 $(GPT_CUDA_ARCHS) $< -o $@ $(NVCC_LIBS) -lcublas"; \
	    "$(NVCC_PATH)" $(NVCC_FLAGS) -std=c++17 -O2 $(GPT_CUDA_ARCHS) $< -o $@ $(NVCC_LIBS) -lcublas || { rm -f $@; exit 1; }; \
	 else rm -f $@; why="$(if $(filter 1,$(NO_CUDA)),CUDA switched off (NO_CUDA=1),it $(GPT_CUDA_MISSING))"; \
	    echo "$$why" >$@.skip; echo "note: $@ is not built: $$why"; fi

# build/llmc_files (bench/llmc_files.c, plain C): llm.c's input files for
# bench/run.sh gpt-cuda-llmc, built everywhere; tests/test_bench_llmc.sh
# checks them and the script's parts that need no GPU (not sanitized: it
# runs no library code).
all: $(BUILD)/llmc_files
ifeq ($(SAN),)
TEST_BINS += tests/test_bench_llmc.sh
tests-build: $(BUILD)/llmc_files
endif
$(BUILD)/llmc_files: bench/llmc_files.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 -Wall -Wextra -Werror -pedantic $< -o $@

# The prepared GPU check (bench/gpu_check.sh): make gpu-check-build where a
# compiler is (LLMC_BIN or LLMC_DIR: llm.c's train_gpt2cu, copied into
# $(BUILD)/llmc), then, with $(BUILD) carried to a GPU machine, make
# gpu-check there: the programs of make test-gpu one at a time, bench/run.sh
# gpu and bench/run.sh gpt-cuda-llmc, compiling nothing, within 5 minutes,
# and a summary for bench/RESULTS.md.
.PHONY: gpu-check gpu-check-build
gpu-check-build:
	@BUILD="$(BUILD)" bench/gpu_check.sh build
gpu-check:
	@BUILD="$(BUILD)" bench/gpu_check.sh run
# ==== end of the GPU block ===================================================

# The J30 set is extracted into build/ (never into shared/).
build/j30/.extracted: $(J30_TGZ)
	@mkdir -p build
	tar xzf $< -C build
	@touch $@

-include $(wildcard $(T)/*.d $(BUILD)/*.d)

# ---- >>standin: a CPU stand-in for the CUDA runtime and NCCL (tests/standin/) ----
# Compiled against the real cuda_runtime_api.h and nccl.h, linked in place of
# -lcudart -lnccl by tests of the CUDA and NCCL backends: link a test with
# $(STANDIN_OBJS) and compile it with $(STANDIN_CFLAGS) (C11: the CUDA headers
# are not C99). Built only when both headers are under CUDA_INCLUDE and
# NO_CUDA is not 1; otherwise test_standin reports a skip that says why.
CUDA_INCLUDE ?= /usr/local/cuda/include
HAVE_CUDA_HEADERS := $(if $(filter 1,$(NO_CUDA)),0,$(if $(and $(wildcard $(CUDA_INCLUDE)/cuda_runtime_api.h),$(wildcard $(CUDA_INCLUDE)/nccl.h)),1,0))
STANDIN_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -pedantic -pthread -I$(CUDA_INCLUDE) -Itests \
                 $(CFLAGS) $(SAN) -MMD -MP
STANDIN_HEADERS := tests/standin/standin.h tests/standin/standin_internal.h
STANDIN_OBJS := $(T)/standin/cuda_standin.o $(T)/standin/nccl_standin.o

TEST_BINS += $(T)/test_standin
tests-build: $(T)/test_standin

ifeq ($(HAVE_CUDA_HEADERS),1)
$(T)/standin/%.o: tests/standin/%.c $(STANDIN_HEADERS)
	@mkdir -p $(@D)
	@echo "$(CC) $(STANDIN_CFLAGS) -c $< -o $@"
	@$(CC) $(STANDIN_CFLAGS) -c $< -o $@ || { rm -f $@ $(T)/test_standin; exit 1; }

$(T)/test_standin.o: tests/test_standin.c $(STANDIN_HEADERS)
	@mkdir -p $(@D)
	@echo "$(CC) $(STANDIN_CFLAGS) -c $< -o $@"
	@$(CC) $(STANDIN_CFLAGS) -c $< -o $@ || { rm -f $@ $(T)/test_standin; exit 1; }

$(T)/test_standin: $(T)/test_standin.o $(STANDIN_OBJS)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) -lm || { rm -f $@; exit 1; }
else
# the same program, compiled to report the skip
$(T)/test_standin_skip.o: tests/test_standin.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DSTANDIN_NO_HEADERS $(if $(filter 1,$(NO_CUDA)),-DSTANDIN_SWITCHED_OFF) -c $< -o $@

$(T)/test_standin: $(T)/test_standin_skip.o
	$(CC) $^ -o $@ $(ALL_LDFLAGS) || { rm -f $@; exit 1; }
endif

-include $(wildcard $(T)/standin/*.d)

# The CUDA backend and the NCCL family on the stand-in (tests/test_cuda_standin.c):
# the implementation, with both GPU headers, compiled into the test itself
# and linked with the stand-in in place of -lcudart -lnccl.
TEST_BINS += $(T)/test_cuda_standin
tests-build: $(T)/test_cuda_standin
ifeq ($(HAVE_CUDA_HEADERS),1)
$(T)/test_cuda_standin: tests/test_cuda_standin.c $(GPU_HEADERS) $(STANDIN_HEADERS) $(STANDIN_OBJS)
	@mkdir -p $(@D)
	@echo "$(CC) $(STANDIN_CFLAGS) $(LPSOLVE_CFLAGS) $< $(STANDIN_OBJS) -o $@"
	@$(CC) $(STANDIN_CFLAGS) $(LPSOLVE_CFLAGS) $< $(STANDIN_OBJS) -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }
else
$(T)/test_cuda_standin:
	@mkdir -p $(@D)
	@$(call gpu_stub,test_cuda_standin,$(if $(filter 1,$(NO_CUDA)),CUDA switched off with NO_CUDA=1,no cuda_runtime_api.h and nccl.h under $(CUDA_INCLUDE): $(CUDA_HOWTO)))
endif
# test_gpu_standin: tests/test_gpu.c (the checks `make test-gpu` runs on a
# GPU) on the stand-in, so that its graph checks (warm-up, capture, replays
# counted, each executor its own graph, a broken capture) run in `make test`.
TEST_BINS += $(T)/test_gpu_standin
tests-build: $(T)/test_gpu_standin
ifeq ($(HAVE_CUDA_HEADERS),1)
$(T)/test_gpu_standin: tests/test_gpu.c $(GPU_HEADERS) $(STANDIN_HEADERS) $(STANDIN_OBJS)
	@mkdir -p $(@D)
	@echo "$(CC) $(STANDIN_CFLAGS) -DTH_PROGRAM='\"test_gpu_standin\"' -DTEST_GPU_STANDIN $< $(STANDIN_OBJS) -o $@"
	@$(CC) $(STANDIN_CFLAGS) -DTH_PROGRAM='"test_gpu_standin"' -DTEST_GPU_STANDIN $< $(STANDIN_OBJS) -o $@ $(ALL_LDFLAGS) $(LDLIBS) -lm || { rm -f $@; exit 1; }
else
$(T)/test_gpu_standin:
	@mkdir -p $(@D)
	@$(call gpu_stub,test_gpu_standin,$(if $(filter 1,$(NO_CUDA)),CUDA switched off with NO_CUDA=1,no cuda_runtime_api.h and nccl.h under $(CUDA_INCLUDE): $(CUDA_HOWTO)))
endif
# ---- <<standin ----

# ==== >>mpi: concerto_mpi.h ====================================================
# Probe, run once when first needed: $(MPICC) (default mpicc) builds and
# links an MPI 3 program (MPI_Iallreduce) and mpirun is on PATH. NO_MPI=1
# switches it off. build/tests/test_mpi (tests/test_mpi.c, by $(MPICC) with
# the usual flags) is what tests/test_mpi.sh runs under mpirun -np 2 and -np 4
# (with --oversubscribe, and --allow-run-as-root as root). Where it cannot be
# built, $(T)/test_mpi.skip says why and the script reports one skip (MPI
# missing or switched off), or $(T)/test_mpi.note says why and the script
# prints it without counting anything (a choice, not a missing input):
# - ThreadSanitizer (make tsan): Open MPI is not built with it, so TSan sees
#   neither the locks nor the lock-free shared-memory queues inside libmpi
#   and its progress engine, and reports races between our stream threads
#   through MPI that are MPI's own synchronisation; suppressing them all would
#   hide ours as well. make asan runs the MPI tests (LeakSanitizer told to skip
#   what Open MPI keeps until exit: tests/lsan_mpi.supp).
MPICC     ?= mpicc
MPI_PROBE  = printf '\#include <mpi.h>\nint main(int c, char** v) { MPI_Request r; int x = 0; MPI_Init(&c, &v); MPI_Iallreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Finalize(); return 0; }\n' \
             | $(MPICC) -x c - -o /dev/null >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 && echo 1 || echo 0
HAVE_MPI   = $(if $(filter 1,$(NO_MPI)),0,$(call once,HAVE_MPI,MPI_PROBE))
MPI_HOWTO  = apt-get install libopenmpi-dev openmpi-bin
MPI_TSAN   = $(findstring -fsanitize=thread,$(SAN))
MPI_DEPS   = if [ "$(NO_MPI)" = 1 ]; then echo "  ✗ MPI: switched off (NO_MPI=1)"; \
    elif [ "$(HAVE_MPI)" = 1 ]; then echo "  ✓ MPI: $(MPICC) builds MPI 3 programs and mpirun is there: concerto_mpi.h's tests run under mpirun -np 2 and -np 4"; \
    else echo "  ✗ MPI: no $(MPICC) that builds an MPI 3 program, or no mpirun ($(MPI_HOWTO))"; fi

TEST_BINS += tests/test_mpi.sh
tests-build: $(T)/test_mpi
.PHONY: mpi-config-check
mpi-config-check:
$(T)/mpi-config: mpi-config-check
	@mkdir -p $(@D)
	@echo "mpi=$(HAVE_MPI) mpicc=$(MPICC) san=$(SAN) cflags=$(ALL_CFLAGS)" >$@.new; \
	 if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(T)/test_mpi: tests/test_mpi.c concerto.h concerto_mpi.h $(T)/mpi-config
	@mkdir -p $(@D)
	@rm -f $@.skip $@.note
	@if [ "$(NO_MPI)" = 1 ]; then rm -f $@; echo "MPI switched off (NO_MPI=1)" >$@.skip; \
	 elif [ -n "$(MPI_TSAN)" ]; then rm -f $@; \
	    echo "not run under ThreadSanitizer: Open MPI is not instrumented, so TSan reports its internal synchronisation as races (see the Makefile's MPI block); make test and make asan run it" >$@.note; \
	 elif [ "$(HAVE_MPI)" = 1 ]; then \
	    echo "$(MPICC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)"; \
	    $(MPICC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }; \
	 else rm -f $@; echo "no $(MPICC) that builds an MPI 3 program, or no mpirun: $(MPI_HOWTO)" >$@.skip; fi
# build/train_gpt_mpi: the example trainer (examples/gpt/train_gpt.c with
# GPT_MPI) as one rank per process under mpirun, by $(MPICC); built by make
# and make test where MPI is found, with a .skip or .note beside it (as
# test_mpi's) that tests/test_gpt_mpi.sh reports otherwise.
all: $(BUILD)/train_gpt_mpi
tests-build: $(BUILD)/train_gpt_mpi
TEST_BINS += tests/test_gpt_mpi.sh
$(BUILD)/train_gpt_mpi: examples/gpt/train_gpt.c examples/gpt/gpt_kernels.h examples/gpt/gpt_cpu_ops.h examples/gpt/gpt_common.h examples/steps/gpt_step.h examples/gpt/gpt_train.h \
                        concerto.h concerto_mpi.h $(T)/mpi-config
	@mkdir -p $(@D)
	@rm -f $@.skip $@.note
	@if [ "$(NO_MPI)" = 1 ]; then rm -f $@; echo "MPI switched off (NO_MPI=1)" >$@.skip; \
	 elif [ -n "$(MPI_TSAN)" ]; then rm -f $@; \
	    echo "not run under ThreadSanitizer: Open MPI is not instrumented (see the Makefile's MPI block); make test and make asan run it" >$@.note; \
	 elif [ "$(HAVE_MPI)" = 1 ]; then \
	    echo "$(MPICC) $(ALL_CFLAGS) -DGPT_MPI $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)"; \
	    $(MPICC) $(ALL_CFLAGS) -DGPT_MPI $< -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }; \
	 else rm -f $@; echo "no $(MPICC) that builds an MPI 3 program, or no mpirun: $(MPI_HOWTO)" >$@.skip; fi
# build/bench_mpi_overlap (bench/mpi_overlap.c, by $(MPICC)): how much of
# an MPI all-reduce hides behind compute; built by make where MPI is found
# (bench/run.sh gpt-mpi runs it).
all: $(BUILD)/bench_mpi_overlap
$(BUILD)/bench_mpi_overlap: bench/mpi_overlap.c concerto.h concerto_mpi.h $(T)/mpi-config
	@mkdir -p $(@D)
	@if [ "$(HAVE_MPI)" = 1 ] && [ -z "$(MPI_TSAN)" ]; then \
	    echo "$(MPICC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS)"; \
	    $(MPICC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }; \
	 else rm -f $@; echo "note: $@ is not built: it needs MPI ($(MPI_HOWTO))"; fi
# compile_cuda_mpi: tests/compile_cuda.c with CONCERTO_NCCL_WITH_MPI, built
# by $(MPICC) with the GPU block's flags where CUDA, NCCL and MPI are all
# found (cc_nccl_id_exchange_mpi); tests/test_mpi.sh runs it under mpirun -np 2.
tests-build: $(T)/compile_cuda_mpi
$(T)/compile_cuda_mpi: tests/compile_cuda.c $(GPU_HEADERS) $(T)/gpu-config $(T)/mpi-config
	@mkdir -p $(@D)
	@if [ "$(HAVE_CUDART)$(HAVE_NCCL)$(HAVE_MPI)" = 111 ] && [ -z "$(MPI_TSAN)" ]; then \
	    echo "$(MPICC) $(GPU_CFLAGS) -DCONCERTO_NCCL_WITH_MPI $< -o $@ $(GPU_LIBS)"; \
	    $(MPICC) $(GPU_CFLAGS) -DCONCERTO_NCCL_WITH_MPI -DTH_PROGRAM='"compile_cuda_mpi"' $< -o $@ $(GPU_LIBS) || { rm -f $@; exit 1; }; \
	 else rm -f $@; fi
# ==== <<mpi ======================================================================

# ==== >>fuzz: libFuzzer targets (tests/fuzz/) =================================
# Every tests/fuzz/fuzz_NAME.c is a target (LLVMFuzzerTestOneInput over one
# entry point that takes outside input; tests/fuzz/README.md).
# - make test: $(T)/replay_NAME, the target with a plain main
#   (tests/fuzz/replay.c), built by $(CC) with the usual flags, replays the
#   committed corpus tests/fuzz/corpus/NAME (sanitized in make asan; not
#   under ThreadSanitizer: only nccl_id starts threads, a socket peer it
#   joins before it looks at anything).
# - make fuzz: each target built by $(FUZZ_CC) (default clang-14) with
#   libFuzzer, ASan and UBSan into $(BUILD)/fuzz, then run FUZZ_SECONDS
#   seconds (default 60) each by tests/fuzz/run.sh; FUZZ_TARGETS picks some.
#   Where $(FUZZ_CC) cannot link a fuzzer it says how to get one and skips
#   (under CI=true that fails).
FUZZ_CC      ?= clang-14
FUZZ_SECONDS ?= 60
# nccl_id: concerto_nccl.h on the CPU stand-in of CUDA and NCCL (C11; left
# out where the stand-in cannot be built, as test_standin says)
FUZZ_NAMES   := $(filter-out $(if $(filter 1,$(HAVE_CUDA_HEADERS)),,nccl_id),$(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_EXTRA_nccl_id = -std=c11 -D_POSIX_C_SOURCE=200809L -I$(CUDA_INCLUDE) -Itests tests/standin/cuda_standin.c tests/standin/nccl_standin.c
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_DEPS     = tests/fuzz/fuzz.h $(HEADERS) concerto_rcpsp.h concerto_nccl.h examples/gpt/gpt_common.h examples/steps/gpt_step.h
FUZZ_CFLAGS   = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(LPSOLVE_CFLAGS)
FUZZ_PROBE    = printf 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
                | $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1 && echo 1 || echo 0
HAVE_FUZZ     = $(call once,HAVE_FUZZ,FUZZ_PROBE)
FUZZ_HOWTO    = apt-get install clang-14 libclang-rt-14-dev, or set FUZZ_CC to a clang with libFuzzer

REPLAY_BINS  := $(addprefix $(T)/replay_,$(FUZZ_NAMES))
TEST_BINS    += $(REPLAY_BINS)
THREAD_FREE  += $(REPLAY_BINS)
tests-build: $(if $(TSAN_BUILD),,$(REPLAY_BINS))

# A replay links the one implementation object the unit tests share
# (FUZZ_LINKED_IMPL: the target does not compile its own); nccl_id, which
# needs concerto_nccl.h's on the stand-in, compiles its own.
REPLAY_LINKED := $(addprefix $(T)/replay_,$(filter-out nccl_id,$(FUZZ_NAMES)))
$(REPLAY_LINKED): $(T)/replay_%: tests/fuzz/replay.c tests/fuzz/fuzz_%.c $(FUZZ_DEPS) $(T)/concerto_impl.o
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFUZZ_LINKED_IMPL -DFUZZ_NAME='"$*"' tests/fuzz/replay.c tests/fuzz/fuzz_$*.c $(T)/concerto_impl.o -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(T)/replay_%: tests/fuzz/replay.c tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFUZZ_NAME='"$*"' tests/fuzz/replay.c tests/fuzz/fuzz_$*.c $(FUZZ_EXTRA_$*) -o $@ $(ALL_LDFLAGS) $(LDLIBS) || { rm -f $@; exit 1; }

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(FUZZ_EXTRA_$*) -o $@ -pthread $(LDLIBS)

.PHONY: fuzz
fuzz:
	@if [ "$(HAVE_FUZZ)" != 1 ]; then \
	    echo "skip make fuzz: $(FUZZ_CC) cannot link a libFuzzer target ($(FUZZ_HOWTO))"; \
	    if [ "$$CI" = true ]; then echo "0 passed, 1 failed"; exit 1; fi; exit 0; fi
	@$(MAKE) --no-print-directory -k -j$(BUILD_JOBS) $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_TARGETS)) || true
	@tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
# ==== <<fuzz ====================================================================

# ==== >>analyze: static analysis (tests/analyze/run.sh) ========================
# clang's static analyzer (scan-build) and cppcheck over the headers, the C
# examples and the tools; fails on any finding (fixed, or suppressed with a
# reason in tests/analyze/cppcheck.supp or beside the line). The .cu files
# are left out: Debian's clang cannot parse CUDA 13's headers. Needs
# clang-14, clang-tools-14 and cppcheck (apt-get install).
.PHONY: analyze
analyze:
	@tests/analyze/run.sh $(BUILD)
# ==== <<analyze =================================================================
