# ppkit: one entry point.  See README.md.
#   make            build the kernel modules against KDIR
#   make run        boot the lab, load the pool, run selftests and benchmark
#   make check      the fast tier, for every change (<= 10 minutes warm): builds,
#                   unit tests, static checks, docs, the lab's core boot
#   make test       deps + build + every test (what CI runs), with a summary table
#   make test-matrix  every lab scenario on every kernel of the matrix (5.10, 6.1,
#                   6.12), one table of scenario x kernel
#   make soak       what measures rather than tests: the race tests for hours, 50
#                   reload cycles, ppctld's two minutes, the Orange Pi's 150 s
#   make soak-corruption  the 6.12 corruption hunt: stress-mixed's loops A/B in
#                   one boot (CORRUPTION_LINE=6.12|debug, _ROUNDS, _SECS)
#   make bench      pool micro-benchmarks in one guest boot -> build/bench/pool.json
#                   (KVER=5.10|6.12: on that kernel -> pool-LINE.json),
#                   ppctld's CPU with 1,000 pools -> build/bench/ppctld-cpu.json,
#                   ppctl's time over 1,000 pools (-> build/bench/ppctl-cost.json)
#   make regress    the seeds' experiments on ppsim, one boot each -> build/regress/
#   make static     checkpatch --strict, sparse and the netlink spec on our kernel code
#   make man        man pages ppctl(8), ppctld(8) -> build/man/
#   make install    modules for the running kernel, tools, unit, man pages,
#                   completion (PREFIX=/usr/local, DESTDIR=); make uninstall
#   make dist-board ARCH=arm64|arm|arm64-16k [KVER=LINE|KDIR=...]  one tarball
#                   for a board -> build/dist/ (make test-boards [KVER=LINE] runs them)
#   make tools      libppkit, ppctl, ppctld (CMake, build/tools) -> build/bin/
#   make test-unit  the user-space unit tests (Catch2)
#   make drivers    patched stmmac/mvpp2/mlx4_en + pp_backport, ARCH=x86_64|arm64|arm
#   make test-drivers  their build matrix, static checks, QEMU load and runtime tests

SHELL := /bin/bash
KVER ?= $(shell scripts/lab/kver 2>/dev/null)
KMOD := $(CURDIR)/kmod
BUILD := $(CURDIR)/build
# Kernel modules for a board: ARCH=arm64|arm (aarch64, armhf) or arm64-16k
# (arm64 with 16 KiB pages), CROSS_COMPILE (default: Debian's
# aarch64-linux-gnu- / arm-linux-gnueabihf-) and KDIR, the board kernel's
# build tree (default: the Debian kernel of that target that
# scripts/drivers/prepare.sh caches for the lab; with KVER=LINE, a line of
# the kernel matrix, that line's: DRV_LINE=LINE prepare.sh).  They are built
# in a copy of kmod/ (build/kmod-<target>[-<line>]), so that the lab's x86
# objects stay.  BOARD is the target (arm64-16k), MOD_ARCH the kernel's ARCH.
BOARD := $(patsubst armhf,arm,$(patsubst aarch64,arm64,$(filter arm armhf arm64 aarch64 arm64-16k,$(ARCH))))
MOD_ARCH := $(patsubst arm64-16k,arm64,$(BOARD))
# KVER=5.10|6.12, a line of the kernel matrix (scripts/lab/kernels): Debian's
# kernel of that line, unpacked by scripts/lab/kernels.sh (scripts/deps.sh),
# built in build/kmod-LINE (log build/modules-LINE.log), with the kernel's own
# compiler when the host has it, else gcc-12 (5.10's gcc-10 is not in
# bookworm: Documentation/kernels.rst).  KVER=6.1 is the default, the host's
# Debian 12 kernel.
ifeq ($(KVER),6.1)
override KVER := $(shell scripts/lab/kver 2>/dev/null)
endif
KLINES := $(shell scripts/lab/kernels.sh --lines 2>/dev/null)
KLINE := $(if $(MOD_ARCH),,$(filter $(KVER),$(KLINES)))
# a board's line (ARCH=arm64|arm|arm64-16k KVER=LINE); empty: Debian 12's 6.1
BOARD_LINE := $(if $(MOD_ARCH),$(filter $(KVER),$(KLINES)))
ifeq ($(KLINE)$(BOARD_LINE),)
ifneq ($(shell echo '$(KVER)' | grep -xE '[0-9]+\.[0-9]+'),)
$(error KVER=$(KVER): not a line of the kernel matrix; use 6.1 (the default), $(KLINES) (scripts/lab/kernels) or a kernel release)
endif
endif
ifneq ($(KLINE),)
KLINE_INFO := $(shell scripts/lab/kernels.sh --print $(KLINE))
ifeq ($(KLINE_INFO),)
$(error KVER=$(KLINE): the $(KLINE) kernel is not unpacked: run scripts/deps.sh (or scripts/lab/kernels.sh $(KLINE)) as root)
endif
KDIR ?= $(word 3,$(KLINE_INFO))
MOD_DIR ?= $(BUILD)/kmod-$(KLINE)
MOD_LOG ?= $(BUILD)/modules-$(KLINE).log
KLINE_CC := $(shell sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' $(KDIR)/.config)
KLINE_CC := $(if $(shell command -v $(KLINE_CC)),$(KLINE_CC),gcc-12)
# The kbuild tools of another Debian release may need its libraries (5.10's
# sign-file and extract-cert: libssl1.1), unpacked next to them.
MOD_ARGS := CC=$(KLINE_CC)
export LD_LIBRARY_PATH := $(word 5,$(KLINE_INFO))$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
else ifeq ($(MOD_ARCH),)
KDIR ?= /lib/modules/$(KVER)/build
# MOD_DIR=<dir> builds in a copy there (make modules-debug: build/kmod-debug)
MOD_DIR ?= $(KMOD)
MOD_ARGS :=
else
ifndef KDIR
KDIR := $(word 4,$(shell DRV_LINE=$(or $(BOARD_LINE),6.1) scripts/drivers/prepare.sh --print $(BOARD)))
# the modules target prepares it first (once: prepare.sh leaves a stamp)
BOARD_PREPARE := DRV_LINE=$(or $(BOARD_LINE),6.1) scripts/drivers/prepare.sh $(BOARD)
endif
CROSS_COMPILE ?= $(if $(filter arm64,$(MOD_ARCH)),aarch64-linux-gnu-,arm-linux-gnueabihf-)
MOD_DIR := $(BUILD)/kmod-$(BOARD)$(if $(BOARD_LINE),-$(BOARD_LINE))
MOD_LOG ?= $(BUILD)/modules-$(BOARD)$(if $(BOARD_LINE),-$(BOARD_LINE)).log
# a line's tree was prepared without Rust (scripts/drivers/prepare.sh)
MOD_ARGS := ARCH=$(MOD_ARCH) CROSS_COMPILE=$(CROSS_COMPILE)$(if $(BOARD_LINE), RUSTC=ppkit-no-rustc)
endif
TOOLS_BUILD := $(BUILD)/tools

.PHONY: all modules tools test-unit deps run test test-matrix test-kernel bench regress check static clean help soak-corruption \
	drivers test-drivers man test-docs test-boards test-intree test-dkms test-dkms-full test-dkms-kernels test-dkms-kernels-full test-asan test-stress test-debug modules-debug install uninstall dist-board soak regress-orangepi

all: modules tools

deps:
	scripts/deps.sh

MOD_LOG ?= $(BUILD)/modules$(if $(MOD_ARCH),-$(MOD_ARCH)).log
# make -n still runs the recipe's sub-make (it contains $(MAKE)): its dry-run
# listing must not land in the log the warning check reads.
ifneq (,$(findstring n,$(firstword -$(MAKEFLAGS))))
MOD_LOG := /dev/null
endif
# The kernel's own compiler, through ccache when it is there, the clone seen
# at one fixed path (scripts/kbuild-stable): another clone's compiles hit.
MOD_CC = $(or $(patsubst CC=%,%,$(filter CC=%,$(MOD_ARGS))),$(if $(MOD_ARCH),$(CROSS_COMPILE)gcc),$(shell \
	sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' $(KDIR)/.config 2>/dev/null),gcc)
MOD_CCACHE = $(if $(shell command -v ccache),CC="ccache $(MOD_CC)")
modules:
	$(BOARD_PREPARE)
	@test -d "$(KDIR)" || { echo "no kernel headers at KDIR='$(KDIR)': run scripts/deps.sh$(if $(BOARD), (or DRV_LINE=$(or $(BOARD_LINE),6.1) scripts/drivers/prepare.sh $(BOARD))) or pass KDIR=" >&2; exit 1; }
	@mkdir -p $(BUILD) $(MOD_DIR)
	$(if $(filter-out $(KMOD),$(MOD_DIR)),cd $(KMOD) && find . \( -name '*.[ch]' -o -name Kbuild -o -name Kconfig \) -print0 | \
	  cpio -pdmu0 --quiet $(MOD_DIR))
	scripts/kbuild-stable $(CURDIR) $(MAKE) -C $(KDIR) M=$(MOD_DIR) $(MOD_ARGS) $(MOD_CCACHE) W=1 modules 2>&1 | tee $(MOD_LOG); \
	  rc=$${PIPESTATUS[0]}; \
	  if grep -q 'warning:' $(MOD_LOG); then echo "kernel build has warnings (see $(MOD_LOG))" >&2; exit 1; fi; exit $$rc

# User space: C++20 with CMake; two jobs at most, like the machines it runs on.
# ARCH=arm (or armhf) and ARCH=arm64 cross-build ppctl, without the unit tests,
# in build/tools-<arch> -> build/bin/<arch>/ppctl, against the target's Debian
# libraries unpacked by scripts/tools/sysroot.sh (toolchain: tools/cmake/cross.cmake).
TOOLS_ARCH = $(patsubst armhf,arm,$(patsubst aarch64,arm64,$(filter arm armhf arm64 aarch64,$(patsubst arm64-16k,arm64,$(ARCH)))))
TOOLS_OUT = $(if $(TOOLS_ARCH),$(BUILD)/tools-$(TOOLS_ARCH),$(TOOLS_BUILD))
TOOLS_BIN = $(BUILD)/bin$(if $(TOOLS_ARCH),/$(TOOLS_ARCH))
TOOLS_TRIPLET = $(if $(filter arm,$(TOOLS_ARCH)),arm-linux-gnueabihf,aarch64-linux-gnu)
TOOLS_CMAKE = $(if $(TOOLS_ARCH), -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/tools/cmake/cross.cmake \
	-DPPKIT_TRIPLET=$(TOOLS_TRIPLET) -DPPKIT_SYSROOT=$$(scripts/tools/sysroot.sh $(TOOLS_ARCH)))
# ccache (from scripts/deps.sh) when present: a compile seen before, in this
# tree or another clone (paths under the tree are hashed relative to it), is
# not run again.  CCACHE_DISABLE=1 turns it off.
TOOLS_CCACHE = $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
tools:
	@command -v cmake >/dev/null || { echo "cmake missing: run scripts/deps.sh" >&2; exit 1; }
	$(if $(filter-out x86_64 x86 amd64 arm armhf arm64 aarch64 arm64-16k,$(ARCH)),$(error tools: unknown ARCH '$(ARCH)': use arm (armhf) or arm64))
	cmake -S tools -B $(TOOLS_OUT) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(TOOLS_CCACHE)$(TOOLS_CMAKE)
	cmake --build $(TOOLS_OUT) -j2
	@mkdir -p $(TOOLS_BIN)
	@# a new file renamed over the old one, never a rewrite in place: a lab
	@# guest running the old one over 9p (make install beside make test's
	@# core boot) must not read a half-written binary
	for b in ppctl ppctld; do \
		if [ ! -x $(TOOLS_OUT)/bin/$$b ]; then [ $$b = ppctld ] && continue; echo "no $$b built" >&2; exit 1; fi; \
		cp -f $(TOOLS_OUT)/bin/$$b $(TOOLS_BIN)/.$$b.new && mv -f $(TOOLS_BIN)/.$$b.new $(TOOLS_BIN)/$$b || exit 1; \
	done

test-unit: tools
	$(TOOLS_BUILD)/tests/unit/ppkit-unit-tests

# The tiers (tests/tier/run.sh): each step timed and limited, one summary
# table at the end (scenario, lane, result, seconds, limit; a SKIP says why
# and is never a pass); results in build/results/<tier>-last/.
check:
	tests/tier/run.sh check

static: modules
	tests/kernel/static-checks.sh

test-kernel: modules tools
	tests/lab/run-all.sh

# DEBUG_LANE=no: no debug subset even when the debug kernel is cached (what
# a bare machine, such as CI's, runs).  With it, make test also runs the
# debug subset on the debug kernel (tests/lab/run-all.sh --list debug-subset).
DEBUG_LANE ?= auto
export DEBUG_LANE
test:
	tests/tier/run.sh test

# Every lab scenario on every line of the kernel matrix (6.1, then
# scripts/lab/kernels' lines), each line with its modules, and one table of
# scenario x kernel (tests/tier/matrix.sh; results in build/results/).
test-matrix: deps tools
	tests/tier/matrix.sh

# What measures rather than tests, each the long form of a short check in
# make test: the race tests at soak strength (tests/lab/race.sh: 10^7
# statistics reads during refills, 10^5 destroy rounds of each return race,
# 1,000 unloads racing sockets), 50 load/unload cycles, ppctld's two minutes
# of traffic and scrapes under a 30 s wrk load, the Orange Pi PC's 150 s of
# /proc/net/dev reads under traffic.  LAB_KERNEL=debug for the debug kernel.
# Hours, not minutes.
SOAK_RACE_ENV ?= READS=10000000 ROUNDS=100000 UNLOAD_ROUNDS=1000
soak: modules tools
	ONLY=pool-races RACE_ENV="$(SOAK_RACE_ENV)" RACE_TIMEOUT=28800 tests/lab/run-all.sh all
	scripts/lab/run --smp 2 --timeout 3600 -- tests/lab/stress/reload.py 50
	scripts/lab/run --smp 2 --mem 1536 --timeout 1800 -- env ROUNDS=12 WRK_S=30 tests/lab/ppctld.sh
	$(MAKE) tools ARCH=arm
	ORANGEPI_STRESS_S=150 tests/drivers/run.sh orangepi

# The hunt for the corruption seen once on 6.12 (Documentation/hardening.rst,
# "The 6.12 corruption"): CORRUPTION_ROUNDS rounds of the four loops of
# tests/lab/stress/corruption.sh (stress-mixed whole, ring rebuilds only, a
# pinned XDP program, a program loaded per attach), CORRUPTION_SECS s each,
# in one boot of CORRUPTION_LINE (6.12; debug: the debug kernel with page
# poisoning, init_on_free and KFENCE sampling every 10 ms).  LAB_CPU=max
# boots 6.12 with CMPXCHG16B, as the lab did when the fault was seen.
CORRUPTION_LINE ?= 6.12
CORRUPTION_ROUNDS ?= 10
CORRUPTION_SECS ?= 20
CORRUPTION_DEBUG_APPEND := page_poison=1 init_on_free=1 kfence.sample_interval=10
soak-corruption: tools
	$(if $(filter debug,$(CORRUPTION_LINE)),scripts/lab/debug-kernel.sh && $(MAKE) modules-debug,$(MAKE) modules KVER=$(CORRUPTION_LINE))
	LAB_KERNEL=$(CORRUPTION_LINE) scripts/lab/run --tcg multi --smp 4 --mem 2048 \
		$(if $(filter debug,$(CORRUPTION_LINE)),--append "$(CORRUPTION_DEBUG_APPEND)") \
		--timeout $$(( $(CORRUPTION_ROUNDS) * 4 * ($(CORRUPTION_SECS) + 40) + 300 )) \
		-- tests/lab/stress/corruption.sh $(CORRUPTION_ROUNDS) $(CORRUPTION_SECS)

# Patched drivers, out of tree from the target kernel's own source:
# ARCH=x86_64|arm64|arm (default: all three) -> build/drivers/<ARCH>/*.ko
# (ARCH=arm64-16k: arm64's drivers for the arm64-16k kernel, KVER=6.12)
DRIVERS_ARCH = $(or $(filter x86_64 x86 amd64 arm64 aarch64 arm armhf arm64-16k,$(ARCH)),x86_64 arm64 arm)
# KVER=5.10|6.12: for that line of the kernel matrix, from
# drivers/<driver>/<line>/ -> build/drivers/<ARCH>-<line>/
drivers:
	@for a in $(DRIVERS_ARCH); do DRV_LINE=$(or $(KLINE),$(BOARD_LINE),6.1) scripts/drivers/build.sh $$a || exit 1; done

# Build matrix, static analysis, load tests, the orangepi-pc stmmac run.
test-drivers:
	$(MAKE) tools ARCH=arm
	tests/drivers/run.sh

# KVER=5.10|6.12: the same in a guest booting that line of the kernel matrix
bench: modules tools
	LAB_KERNEL=$(or $(KLINE),debian) scripts/bench/pool-bench.sh
	LAB_KERNEL=$(or $(KLINE),debian) ICOUNT=1 scripts/bench/pool-bench.sh
	LAB_KERNEL=$(or $(KLINE),debian) scripts/bench/ppctld-cpu.sh
	LAB_KERNEL=$(or $(KLINE),debian) scripts/bench/ppctl-cost.sh
	LAB_KERNEL=$(or $(KLINE),debian) scripts/lab/run --smp 2 -- tests/lab/ppctl-e2e.sh

regress: deps
	$(MAKE) modules
	$(MAKE) tools
	scripts/drivers/build.sh arm stmmac
	scripts/drivers/build.sh --fixes-only arm stmmac
	python3 scripts/regress/stmmac_orangepi.py
	scripts/regress/run-lab.sh

# The stmmac A/B on the emulated Orange Pi PC alone, on a line of the kernel
# matrix: make regress-orangepi [KVER=5.10|6.12] (default 6.1)
regress-orangepi: deps
	DRV_LINE=$(or $(KLINE),6.1) scripts/drivers/build.sh arm stmmac
	DRV_LINE=$(or $(KLINE),6.1) scripts/drivers/build.sh --fixes-only arm stmmac
	python3 scripts/regress/stmmac_orangepi.py --line $(or $(KLINE),6.1)

run: deps
	$(MAKE) modules
	$(MAKE) tools
	scripts/lab/demo.sh

# ppctl and ppctld under AddressSanitizer and UBSan (build/tools-asan): the
# unit tests, then bad command lines, configuration files, API requests and
# HTTP garbage (tests/tools/input.sh).
ASAN_BUILD := $(BUILD)/tools-asan
test-asan:
	cmake -S tools -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPPKIT_SANITIZE=ON $(TOOLS_CCACHE)
	cmake --build $(ASAN_BUILD) -j2
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(ASAN_BUILD)/tests/unit/ppkit-unit-tests
	tests/tools/input.sh $(ASAN_BUILD)/bin

# Stress (Documentation/hardening.rst): 10 load/unload cycles (RELOAD_CYCLES;
# make soak runs 50) with a socket
# holding pool pages, everything at once for 60 s on 4 vCPUs, traffic and a
# ring resize under a memory hog (and fault injection where the kernel has
# it).  About 6 minutes on Debian's kernel.  make test runs it on the debug
# kernel when that is built (test-debug), else on Debian's.
test-stress: modules tools
	tests/lab/run-all.sh stress

# The debug-kernel lane: scripts/lab/debug-kernel.sh builds (once, cached in
# /var/cache/ppkit/debug-kernel) Debian's 6.1 with KASAN, KFENCE, kmemleak,
# lockdep, DEBUG_VM, DEBUG_NET and fault injection; the modules are built for
# it in build/kmod-debug (no warnings; with the race windows pp_race widens,
# <ppkit/race.h>), and every lab and stress scenario boots it
# (LAB_KERNEL=debug).
DEBUG_KMOD := $(BUILD)/kmod-debug
modules-debug:
	@p=$$(scripts/lab/debug-kernel.sh --print) || { \
		echo "no debug kernel built: scripts/lab/debug-kernel.sh (about half an hour, then cached)" >&2; exit 1; }; \
	kdir=$${p#* }/build; \
	cc=$$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' $$kdir/.config); \
	$(MAKE) modules KDIR=$$kdir MOD_DIR=$(DEBUG_KMOD) MOD_LOG=$(BUILD)/modules-debug.log MOD_ARGS="CC=$$cc CONFIG_PPKIT_RACE_WINDOWS=y"

# DEBUG_SUITE=debug-subset: what make test runs on it when it is cached
# (tests/lab/run-all.sh --list debug-subset); any suite of run-all.sh.
DEBUG_SUITE ?= all
test-debug: tools
	scripts/lab/debug-kernel.sh
	$(MAKE) modules-debug
	LAB_KERNEL=debug tests/lab/run-all.sh $(DEBUG_SUITE)

# DKMS in the lab: built on the host (scripts/dkms.sh tarball), installed in
# the guest, reboot, modprobe, uninstall (Documentation/dkms.rst).  -full:
# the guest builds too (10-17 minutes under TCG; not in make test).
test-dkms: modules tools
	tests/lab/dkms.sh

test-dkms-full: modules tools
	tests/lab/dkms.sh --build-in-guest

# DKMS across kernels: Debian 12's 6.1 and Debian 11's 5.10 installed on one
# guest disk; one tarball built on the host for both, installed in a 6.1
# boot, then each kernel boots and modprobes its own build (about 6 minutes;
# in make test-matrix).  -full: the guest builds for both, the second
# through the kernel hook's dkms autoinstall (20-40 minutes under TCG).
DKMS_KERNELS ?= 6.1,5.10
test-dkms-kernels: tools
	tests/lab/dkms.sh --kernels $(DKMS_KERNELS)

test-dkms-kernels-full: tools
	tests/lab/dkms.sh --kernels $(DKMS_KERNELS) --build-in-guest

# Man pages ppctl(8), ppctld(8) from Documentation/ (rst2man) -> build/man/
man:
	scripts/docs/man.sh

# The man pages (no docutils or groff warning), every Documentation .rst,
# netlink.rst against the spec, bash completion against --help.
test-docs: tools
	DOCS_REQUIRE_BINARIES=1 tests/docs/run.sh

# kmod/ as drivers/net/ppkit/ of the Debian 6.1 source: Kconfig selects it
# on Debian's config, the modules build in-tree (Documentation/intree.rst).
# About 6 minutes the first time, one once /var/cache/ppkit/intree is warm.
test-intree:
	scripts/intree/test.sh

# The board tarballs of both ARM targets, installed and run on qemu -M virt
# with Debian's arm64 and armhf kernels (make test).  KVER=LINE: those of
# that line of the kernel matrix, every board target the archive has a
# kernel of (scripts/lab/kernels.sh --boards: 6.12 adds arm64-16k, 16 KiB
# pages); make test-matrix runs them.  BOARDS= chooses among them.
BOARDS ?= $(if $(KLINE),$(shell scripts/lab/kernels.sh --boards $(KLINE)),arm64 arm)
# The Debian arm64 board (tests/boards/board.py): BOARD_FLOW=full (default)
# runs the README's board flow and the regression scripts in board mode
# against a peer, flow the README's flow only, no neither.
BOARD_FLOW ?= full
test-boards:
	@test -n "$(strip $(BOARDS))" || { echo "test-boards: no board target for KVER=$(KVER)" >&2; exit 1; }
	for b in $(BOARDS); do $(MAKE) dist-board ARCH=$$b$(if $(KLINE), KVER=$(KLINE)) || exit 1; done
	fail=0; for b in $(BOARDS); do python3 tests/boards/tarball.py $$b$(if $(KLINE), --kver $(KLINE)) || fail=1; done; \
	if [ -z "$(KLINE)" ] && [[ " $(BOARDS) " = *" arm64 "* ]] && [ "$(BOARD_FLOW)" != no ]; then \
	  python3 tests/boards/flow.py || fail=1; \
	  [ "$(BOARD_FLOW)" = flow ] || python3 tests/boards/regress.py || fail=1; \
	fi; exit $$fail

# Install on this machine (modules for the running kernel, tools, unit, man
# pages, completion); PREFIX=/usr/local, DESTDIR= for a staging root.
PREFIX ?= /usr/local
DIST_ARCH = $(or $(MOD_ARCH),x86_64)
STAGE = $(BUILD)/stage-$(or $(BOARD),$(DIST_ARCH))$(if $(BOARD_LINE),-$(BOARD_LINE))
INSTALL_ARGS = --prefix $(PREFIX)$(if $(DESTDIR), --destdir $(DESTDIR))
install: modules tools man
	scripts/dist/stage.sh $(DIST_ARCH) $(STAGE)
	$(STAGE)/install.sh $(INSTALL_ARGS)

uninstall:
	scripts/install.sh --uninstall $(INSTALL_ARGS)

# One tarball for a board: make dist-board ARCH=arm64|arm|arm64-16k
# [KVER=LINE | KDIR=<board kernel build tree>] ->
# build/dist/ppkit-<version>-<arch>-<kernel>.tar.gz (arm64-16k: arch arm64,
# kernel ...-arm64-16k); on the board: tar xzf it, then ./install.sh
dist-board: modules tools man
	@test -n "$(MOD_ARCH)" || { echo "dist-board: pass ARCH=arm64, arm or arm64-16k (and KVER=<line> or KDIR=<board kernel build tree>)" >&2; exit 1; }
	scripts/dist/stage.sh $(DIST_ARCH) $(STAGE)/ppkit $(MOD_DIR)
	@v=$$(sed -n 's/^version=//p' $(STAGE)/ppkit/MANIFEST); k=$$(sed -n 's/^kernel=//p' $(STAGE)/ppkit/MANIFEST); \
	  n=ppkit-$$v-$(DIST_ARCH)-$$k; mkdir -p $(BUILD)/dist; rm -rf $(STAGE)/$$n; mv $(STAGE)/ppkit $(STAGE)/$$n; \
	  for o in $(BUILD)/dist/ppkit-*-$(DIST_ARCH)-$$k.tar.gz; do [ ! -e "$$o" ] || { rm -f "$$o"; echo "dist-board: replaces $$o"; }; done; \
	  tar -C $(STAGE) --owner=0 --group=0 -czf $(BUILD)/dist/$$n.tar.gz $$n && rm -rf $(STAGE)/$$n && \
	  echo "dist-board: $(BUILD)/dist/$$n.tar.gz" && tar -tzvf $(BUILD)/dist/$$n.tar.gz

clean:
	-$(MAKE) -C $(KDIR) M=$(KMOD) clean
	rm -rf $(BUILD)
