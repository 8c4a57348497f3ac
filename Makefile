# ppkit: one entry point.  See README.md.
#   make            build the kernel modules against KDIR
#   make run        boot the lab, load the pool, run selftests and benchmark
#   make test       deps + build + every test (what CI runs)
#   make bench      pool micro-benchmarks in one guest boot -> build/bench/pool.json
#   make regress    the seeds' experiments on ppsim, one boot each -> build/regress/
#   make check      checkpatch --strict and sparse on our kernel code
#   make tools      libppkit + ppctl (CMake, build/tools) -> build/bin/ppctl
#   make test-unit  the user-space unit tests (Catch2)

SHELL := /bin/bash
KVER ?= $(shell scripts/lab/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
KMOD := $(CURDIR)/kmod
BUILD := $(CURDIR)/build
TOOLS_BUILD := $(BUILD)/tools

.PHONY: all modules tools test-unit deps run test test-kernel bench regress check clean help

all: modules tools

deps:
	scripts/deps.sh

modules:
	@test -d "$(KDIR)" || { echo "no kernel headers at KDIR='$(KDIR)': run scripts/deps.sh or pass KDIR=" >&2; exit 1; }
	@mkdir -p $(BUILD)
	$(MAKE) -C $(KDIR) M=$(KMOD) W=1 modules 2>&1 | tee $(BUILD)/modules.log; \
	  rc=$${PIPESTATUS[0]}; \
	  if grep -q 'warning:' $(BUILD)/modules.log; then echo "kernel build has warnings (see build/modules.log)" >&2; exit 1; fi; exit $$rc

# User space: C++20 with CMake; two jobs at most, like the machines it runs on.
tools:
	@command -v cmake >/dev/null || { echo "cmake missing: run scripts/deps.sh" >&2; exit 1; }
	cmake -S tools -B $(TOOLS_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(TOOLS_BUILD) -j2
	@mkdir -p $(BUILD)/bin
	cp -f $(TOOLS_BUILD)/bin/ppctl $(BUILD)/bin/ppctl

test-unit: tools
	$(TOOLS_BUILD)/tests/unit/ppkit-unit-tests

check: modules
	tests/kernel/static-checks.sh

test-kernel: modules
	tests/lab/run-all.sh

test: deps
	$(MAKE) modules
	$(MAKE) check
	$(MAKE) tools
	$(MAKE) test-unit
	tests/lab/run-all.sh

bench: modules
	scripts/bench/pool-bench.sh

regress: deps
	$(MAKE) modules
	$(MAKE) tools
	scripts/regress/run-lab.sh

run: deps
	$(MAKE) modules
	$(MAKE) tools
	scripts/lab/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(KMOD) clean
	rm -rf $(BUILD)
