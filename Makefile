# ppkit: one entry point.  See README.md.
#   make            build the kernel modules against KDIR
#   make run        boot the lab, load the pool, run selftests and benchmark
#   make test       deps + build + every test (what CI runs)
#   make bench      pool micro-benchmarks in one guest boot -> build/bench/pool.json
#   make regress    the seeds' experiments on ppsim, one boot each -> build/regress/
#   make check      checkpatch --strict and sparse on our kernel code
#   make tools      libppkit, ppctl, ppctld (CMake, build/tools) -> build/bin/
#   make test-unit  the user-space unit tests (Catch2)
#   make drivers    patched stmmac/mvpp2/mlx4_en + pp_backport, ARCH=x86_64|arm64|arm
#   make test-drivers  their build matrix, static checks, QEMU load and runtime tests

SHELL := /bin/bash
KVER ?= $(shell scripts/lab/kver 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
KMOD := $(CURDIR)/kmod
BUILD := $(CURDIR)/build
TOOLS_BUILD := $(BUILD)/tools

.PHONY: all modules tools test-unit deps run test test-kernel bench regress check clean help \
	drivers test-drivers

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
# ARCH=arm (or armhf) and ARCH=arm64 cross-build ppctl, without the unit tests,
# in build/tools-<arch> -> build/bin/<arch>/ppctl, against the target's Debian
# libraries unpacked by scripts/tools/sysroot.sh (toolchain: tools/cmake/cross.cmake).
TOOLS_ARCH = $(patsubst armhf,arm,$(patsubst aarch64,arm64,$(filter arm armhf arm64 aarch64,$(ARCH))))
TOOLS_OUT = $(if $(TOOLS_ARCH),$(BUILD)/tools-$(TOOLS_ARCH),$(TOOLS_BUILD))
TOOLS_BIN = $(BUILD)/bin$(if $(TOOLS_ARCH),/$(TOOLS_ARCH))
TOOLS_TRIPLET = $(if $(filter arm,$(TOOLS_ARCH)),arm-linux-gnueabihf,aarch64-linux-gnu)
TOOLS_CMAKE = $(if $(TOOLS_ARCH), -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/tools/cmake/cross.cmake \
	-DPPKIT_TRIPLET=$(TOOLS_TRIPLET) -DPPKIT_SYSROOT=$$(scripts/tools/sysroot.sh $(TOOLS_ARCH)))
tools:
	@command -v cmake >/dev/null || { echo "cmake missing: run scripts/deps.sh" >&2; exit 1; }
	$(if $(filter-out x86_64 x86 amd64 arm armhf arm64 aarch64,$(ARCH)),$(error tools: unknown ARCH '$(ARCH)': use arm (armhf) or arm64))
	cmake -S tools -B $(TOOLS_OUT) -DCMAKE_BUILD_TYPE=RelWithDebInfo$(TOOLS_CMAKE)
	cmake --build $(TOOLS_OUT) -j2
	@mkdir -p $(TOOLS_BIN)
	cp -f $(TOOLS_OUT)/bin/ppctl $(TOOLS_BIN)/ppctl
	if [ -x $(TOOLS_OUT)/bin/ppctld ]; then cp -f $(TOOLS_OUT)/bin/ppctld $(TOOLS_BIN)/ppctld; fi

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
	$(MAKE) test-drivers

# Patched drivers, out of tree from the target kernel's own source:
# ARCH=x86_64|arm64|arm (default: all three) -> build/drivers/<ARCH>/*.ko
DRIVERS_ARCH = $(or $(filter x86_64 x86 amd64 arm64 aarch64 arm armhf,$(ARCH)),x86_64 arm64 arm)
drivers:
	@for a in $(DRIVERS_ARCH); do scripts/drivers/build.sh $$a || exit 1; done

# Build matrix, static analysis, load tests, the orangepi-pc stmmac run.
test-drivers:
	$(MAKE) tools ARCH=arm
	tests/drivers/run.sh

bench: modules
	scripts/bench/pool-bench.sh

regress: deps
	$(MAKE) modules
	$(MAKE) tools
	scripts/drivers/build.sh arm stmmac
	scripts/drivers/build.sh --fixes-only arm stmmac
	python3 scripts/regress/stmmac_orangepi.py
	scripts/regress/run-lab.sh

run: deps
	$(MAKE) modules
	$(MAKE) tools
	scripts/lab/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(KMOD) clean
	rm -rf $(BUILD)
