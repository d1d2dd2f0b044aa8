# SPDX-License-Identifier: GPL-2.0-only
#
# r2cc top-level build.  Userspace is built into $(BUILD); the module is
# built out of tree with Kbuild, in place for `make kmod`, and in a copy per
# testbed kernel under $(BUILD)/kmod/ for the tests.

# (Kbuild reads ./Kbuild, not this file, when invoked with M=.)

# One version for the library, the tools and r2cc.ko (Kbuild reads it too).
VERSION    := $(shell cat $(dir $(lastword $(MAKEFILE_LIST)))VERSION)
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MANDIR     ?= $(PREFIX)/share/man
UDEVDIR    ?= /lib/udev/rules.d
# where the kernel's YNL tools look for the specs of netlink families
YNLSPECDIR ?= $(PREFIX)/share/ynl/specs
SYSTEMDDIR ?= /lib/systemd/system
TMPFILESDIR ?= /usr/lib/tmpfiles.d
# r2cc.ko's sources for DKMS (dkms.conf.in, DKMS' own convention).
DKMSDIR    ?= /usr/src/r2cc-$(VERSION)
DESTDIR    ?=
BUILD      ?= $(CURDIR)/build

CC      ?= gcc
AR      ?= ar
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
	   -Wmissing-prototypes -Wundef -Wpointer-arith -Wcast-align \
	   -Wwrite-strings -Wvla
CPPFLAGS_R2CC := -Iinclude -Iinclude/uapi -D_GNU_SOURCE
ALL_CFLAGS = $(CPPFLAGS_R2CC) $(WARN) -std=gnu11 -fPIC $(CFLAGS) $(CPPFLAGS)
# The GPU memory path is compiled when the CUDA toolkit's headers are
# there (CUDA itself is loaded at run time).
CUDA_HOME ?= /usr/local/cuda
CUDA_CPPFLAGS := $(if $(wildcard $(CUDA_HOME)/include/cuda.h),-isystem $(CUDA_HOME)/include)

# Module build: the running kernel's build dir, else the newest installed
# Debian amd64 headers (these machines run a kernel without headers).
KVER_RUNNING := $(shell uname -r)
ifeq ($(wildcard /lib/modules/$(KVER_RUNNING)/build/Makefile),)
KDIR ?= $(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64)))
else
KDIR ?= /lib/modules/$(KVER_RUNNING)/build
endif

# The library's sources, one folder per layer (lib/*/, and the collectives'
# models in lib/coll/model): a new file is built by its folder.  They
# include each other by their path under lib/ ("xport/rail.h").
LIB_SRCS  := $(wildcard lib/*/*.c lib/*/*/*.c)
LIB_HDRS  := $(wildcard lib/*/*.h lib/*/*/*.h include/r2cc/*.h include/uapi/linux/*.h)
LIB_INC   := -Ilib
LIB_OBJS  := $(patsubst lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
SONAME    := libr2cc.so.0
LIBSO     := $(BUILD)/lib/libr2cc.so.$(VERSION)
LIBA      := $(BUILD)/lib/libr2cc.a
PCFILE    := $(BUILD)/lib/r2cc.pc
# The NCCL net plugin, beside libr2cc (it finds it there: rpath $ORIGIN).
# NCCL dlclose()s it after the last finalize; nodelete keeps it and
# libr2cc mapped under libr2cc's reaper thread, which outlives them.
NCCL_SRCS := $(wildcard plugins/nccl/*.c)
NCCL_OBJS := $(patsubst plugins/nccl/%.c,$(BUILD)/plugins/nccl/%.o,$(NCCL_SRCS))
NCCL_SO   := $(BUILD)/lib/libnccl-net-r2cc.so
TB_BINS   := $(BUILD)/tools/r2cc-tb-agent $(BUILD)/tools/r2cc-tb-hub
PERF_SRCS := $(wildcard tools/perf/*.c)
PERF_BIN  := $(BUILD)/tools/r2cc-perf
CTL_SRCS  := $(wildcard tools/r2ccctl/*.c) lib/base/proc_start.c
CTL_BIN   := $(BUILD)/tools/r2ccctl
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
LIBTEST_SRCS := $(wildcard tests/libr2cc/*.c)
LIBTEST_BINS := $(patsubst tests/libr2cc/%.c,$(BUILD)/tests/libr2cc/%,$(LIBTEST_SRCS))
NCCLTEST_SRCS := $(wildcard tests/nccl/*.c)
NCCLTEST_BINS := $(patsubst tests/nccl/%.c,$(BUILD)/tests/nccl/%,$(NCCLTEST_SRCS))
KTEST_SRCS := $(wildcard tests/kmod/*.c)
KTEST_BINS := $(patsubst tests/kmod/%.c,$(BUILD)/tests/kmod/%,$(KTEST_SRCS))

.PHONY: all lib tools unit ktests libtests sim deps kmod kmod-testbed check check-unit \
	check-testbed demo docs install install-dkms install-kselftest \
	uninstall uninstall-kselftest clean help
.DELETE_ON_ERROR:

all: lib tools unit ktests libtests sim xsim torch

lib: $(LIBSO) $(LIBA) $(PCFILE) $(NCCL_SO)
tools: $(TB_BINS) $(PERF_BIN) $(CTL_BIN)
unit: $(UNIT_BINS)
ktests: $(KTEST_BINS)
libtests: $(LIBTEST_BINS) $(NCCLTEST_BINS)

# r2cc-sim has its own makefile (host-only C, libc + libm).
sim:
	@$(MAKE) -s -C tools/sim BUILD=$(BUILD)

$(BUILD)/lib/xport/cuda.o $(BUILD)/asan/lib/xport/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -fvisibility=hidden -c -o $@ $<

# The plugin uses the public headers only: no -Ilib.
$(BUILD)/plugins/nccl/%.o: plugins/nccl/%.c $(wildcard plugins/nccl/*.h include/r2cc/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(NCCL_SO): $(NCCL_OBJS) plugins/nccl/plugin.map $(LIBSO)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,--version-script=plugins/nccl/plugin.map \
		-Wl,--no-undefined -Wl,-rpath,'$$ORIGIN' -Wl,-z,nodelete \
		-o $@ $(NCCL_OBJS) \
		-L$(BUILD)/lib -l:$(SONAME)

$(LIBSO): $(LIB_OBJS) lib/libr2cc.map
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/libr2cc.map -Wl,--no-undefined \
		-o $@ $(LIB_OBJS) -libverbs
	ln -sf libr2cc.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/lib/libr2cc.so

$(LIBA): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(PCFILE): lib/r2cc.pc.in Makefile | $(BUILD)/lib
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    $< > $@

$(BUILD)/tools/r2cc-tb-%: tools/testbed/%.c tools/testbed/tb_proto.h | $(BUILD)/tools
	$(CC) $(WARN) -std=gnu11 $(CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@.tmp $<
	mv -f $@.tmp $@

# The benchmark runs in the nodes against the shared library, like the
# library tests: found beside it, in the build tree as where it is
# installed (BINDIR/../lib), never at a path of the build machine.
$(PERF_BIN): $(PERF_SRCS) $(wildcard tools/perf/*.h include/r2cc/*.h) $(LIBSO) | $(BUILD)/tools
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@.tmp $(PERF_SRCS) \
		-L$(BUILD)/lib -lr2cc -Wl,-rpath,'$$ORIGIN/../lib' -lm
	mv -f $@.tmp $@

# Unit tests link the static library: they may call its internals.
$(BUILD)/tests/unit/%: tests/unit/%.c tests/lib/tap.h tests/lib/xorshift.h $(LIBA) $(LIBSO) | $(BUILD)/tests/unit
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -Itests/lib -o $@ $< $(LIBA) -libverbs


# Library tests the testbed runs in the nodes, against the shared library.
# NCCL-shaped tests: they dlopen the plugin as NCCL does (and use
# libr2cc's bootstrap to swap handles).
$(BUILD)/tests/nccl/%: tests/nccl/%.c tests/lib/tap.h tests/lib/xorshift.h $(wildcard plugins/nccl/*.h) $(LIBSO) $(NCCL_SO)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/lib -Iplugins/nccl -o $@.tmp $< -L$(BUILD)/lib -lr2cc \
		-Wl,-rpath,$(BUILD)/lib -ldl -lpthread
	mv -f $@.tmp $@

$(BUILD)/tests/libr2cc/%: tests/libr2cc/%.c tests/lib/tap.h $(wildcard tests/libr2cc/*.h) lib/xport/wire.h lib/xport/rail_reason.h $(LIBSO) | $(BUILD)/tests/libr2cc
	$(CC) $(ALL_CFLAGS) -Itests/lib -Ilib -o $@.tmp $< -L$(BUILD)/lib -lr2cc \
		-Wl,-rpath,$(BUILD)/lib
	mv -f $@.tmp $@

# Programs the testbed tests run inside the nodes (host root is shared).
# lib_loopback is the library's: linked against libr2cc.so, found in the
# build tree (the testbed's nodes mount it) unless KSELFTEST_RPATH= (a
# package, where the library is installed).
KSELFTEST_RPATH ?= -Wl,-rpath,$(BUILD)/lib
$(BUILD)/tests/kmod/lib_loopback: $(LIBSO)
$(BUILD)/tests/kmod/%: tests/kmod/%.c tests/kmod/r2cc_test.h tests/lib/tap.h include/uapi/linux/r2cc.h | $(BUILD)/tests/kmod
	$(CC) $(CPPFLAGS_R2CC) $(WARN) -std=gnu11 -Itests/lib $(CFLAGS) \
		$(CPPFLAGS) $(LDFLAGS) -o $@.tmp $< \
		$(if $(filter state_page bench,$*),-libverbs) \
		$(if $(filter bench,$*),-lpthread) \
		$(if $(filter genl,$*),$$(pkg-config --cflags --libs libnl-genl-3.0)) \
		$(if $(filter lib_loopback,$*),-L$(BUILD)/lib -lr2cc $(KSELFTEST_RPATH))
	mv -f $@.tmp $@

# r2ccctl shares two files with the library (tests/unit/layers.sh checks
# it takes no more): lib/base/proc_start.c and lib/xport/rail_reason.h.
$(CTL_BIN): $(CTL_SRCS) tools/r2ccctl/r2ccctl.h lib/base/proc_start.h lib/xport/rail_reason.h include/uapi/linux/r2cc.h \
	    include/r2cc/job.h include/r2cc/r2cc.h | $(BUILD)/tools
	$(CC) $(CPPFLAGS_R2CC) $(LIB_INC) $(WARN) -std=gnu11 $(CFLAGS) $(CPPFLAGS) \
		$(LDFLAGS) -DR2CC_CTL_VERSION='"$(VERSION)"' -o $@.tmp $(CTL_SRCS) \
		$$(pkg-config --cflags --libs libnl-genl-3.0)
	mv -f $@.tmp $@

$(BUILD)/lib $(BUILD)/tools $(BUILD)/tests/unit $(BUILD)/tests/kmod $(BUILD)/tests/libr2cc:
	mkdir -p $@

# Apt packages, the Debian kernels of the testbed and their headers.
deps:
	@scripts/deps.sh

kmod:
	@test -n "$(KDIR)" || { echo "no kernel headers: set KDIR or run 'make deps'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# One copy of the module sources per testbed kernel, so builds for 6.1 and
# 6.12 never share objects: $(BUILD)/kmod/KVER/r2cc.ko.  Outputs that nodes
# run are replaced by rename, never rewritten in place: a node that has the
# old file's pages cached (9p) then sees a new file, not a torn one.  BTF
# is added with the kernel's own vmlinux BTF, which the testbed saves from
# a node the first time it boots that kernel (scripts/kmod-btf).
kmod-testbed:
	@set -e; for series in 6.1 6.12; do \
		kver=$$(scripts/prepare-kernel $$series $(BUILD)/cache); \
		dir=$(BUILD)/kmod/$$kver; mkdir -p $$dir; \
		cp -a Kbuild VERSION kmod include $$dir/; \
		echo "  KMOD    $$kver"; \
		$(MAKE) -s -C /usr/src/linux-headers-$$kver M=$$dir W=1 modules; \
		cp $$dir/r2cc.ko $$dir/.r2cc.ko.tmp; \
		mv -f $$dir/.r2cc.ko.tmp $$dir/r2cc.ko; \
		btf=$(BUILD)/cache/kernels/$$kver/vmlinux.btf; \
		if [ -s $$btf ]; then scripts/kmod-btf $$dir/r2cc.ko $$btf; fi; \
	done

# The build a job per core (CI's machine has two, and calls plain `make
# check`), then the suite.
check: deps
	@$(MAKE) -j$$(nproc) all kmod-testbed
	@tests/run-all

check-unit: all
	@prove -f $(UNIT_BINS) tests/unit/*.sh tests/unit/*.py \
		$(BUILD)/tests/sim/* tests/sim/*.sh

# The host unit tests in C once more, and the library, built with ASan and
# UBSan into $(BUILD)/asan (libibverbs stays uninstrumented).  tests/run-all
# runs them too, with the same options.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=all
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
SAN_OBJS  := $(patsubst lib/%.c,$(BUILD)/asan/lib/%.o,$(LIB_SRCS))
SAN_LIBA  := $(BUILD)/asan/lib/libr2cc.a
SAN_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/asan/tests/unit/%,$(UNIT_SRCS))
.PHONY: check-sanitize sanitize-unit

$(BUILD)/asan/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(SAN_FLAGS) -fvisibility=hidden -c -o $@ $<

$(SAN_LIBA): $(SAN_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/asan/tests/unit/%: tests/unit/%.c tests/lib/tap.h tests/lib/xorshift.h $(SAN_LIBA)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(SAN_FLAGS) -Itests/lib -o $@ $< $(SAN_LIBA) -libverbs

sanitize-unit: $(SAN_BINS)

check-sanitize: sanitize-unit
	@$(SAN_ENV) prove -f $(SAN_BINS)

check-testbed: all kmod-testbed
	@tests/run-all --testbed-only

# Documentation/ as HTML, warnings as errors (tests/unit/docs.sh too).
docs:
	sphinx-build -q -W -b html Documentation $(BUILD)/docs/html

demo: deps all kmod-testbed
	@scripts/demo.sh

# Installed manual pages: the library's, r2cc.ko's and the user tools'
# (r2cc-testbed.1 documents a tool of the source tree, not installed).
MAN_PAGES := $(wildcard man/man3/*.3 man/man4/*.4 man/man8/*.8) \
	     man/man1/r2cc-perf.1 man/man1/r2cc-sim.1
USER_BINS := $(PERF_BIN) $(BUILD)/tools/r2cc-sim

# The pkg-config file is written for the PREFIX given here, not the build's.
install: lib tools sim
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/r2cc \
		$(DESTDIR)$(INCLUDEDIR)/linux $(DESTDIR)$(UDEVDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SBINDIR)
	install -m 0755 $(USER_BINS) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(CTL_BIN) $(DESTDIR)$(SBINDIR)/
	install -d $(DESTDIR)$(SYSTEMDDIR)
	for u in tools/r2ccctl/systemd/*; do \
		sed 's|@SBINDIR@|$(SBINDIR)|' $$u > \
			$(DESTDIR)$(SYSTEMDDIR)/$${u##*/} || exit; \
	done
	for f in $(MAN_PAGES); do \
		install -m 0644 $$f $(DESTDIR)$(MANDIR)/$${f#man/} || exit; \
	done
	install -m 0755 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	ln -sf libr2cc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libr2cc.so
	install -m 0644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(NCCL_SO) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/r2cc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/r2cc.pc
	install -m 0644 include/r2cc/*.h $(DESTDIR)$(INCLUDEDIR)/r2cc/
	install -m 0644 include/uapi/linux/r2cc.h $(DESTDIR)$(INCLUDEDIR)/linux/
	install -m 0644 udev/*.rules $(DESTDIR)$(UDEVDIR)/
	install -d $(DESTDIR)$(TMPFILESDIR)
	install -m 0644 tools/r2ccctl/tmpfiles.d/r2cc.conf $(DESTDIR)$(TMPFILESDIR)/
	install -d $(DESTDIR)$(YNLSPECDIR)
	install -m 0644 Documentation/netlink/specs/r2cc.yaml $(DESTDIR)$(YNLSPECDIR)/
	$(MAKE) -s install-dkms
	$(MAKE) -s install-torch

# r2cc's non-destructive tests of the module and the library, as a
# kselftest collection (tests/kselftest/): what an operator runs on a real
# node.
KSELFTEST_DIR ?= $(PREFIX)/lib/r2cc/kselftest
KSELFTESTS := ioctl_args inject_events state_page genl overflow lib_loopback
install-kselftest: ktests
	install -d $(DESTDIR)$(KSELFTEST_DIR)/r2cc
	install -m 0755 tests/kselftest/run_kselftest.sh $(DESTDIR)$(KSELFTEST_DIR)/
	install -m 0644 tests/kselftest/settings $(DESTDIR)$(KSELFTEST_DIR)/r2cc/
	install -m 0755 $(addprefix $(BUILD)/tests/kmod/,$(KSELFTESTS)) \
		$(DESTDIR)$(KSELFTEST_DIR)/r2cc/
	printf 'r2cc:%s\n' $(KSELFTESTS) > $(DESTDIR)$(KSELFTEST_DIR)/kselftest-list.txt

uninstall-kselftest:
	rm -rf $(DESTDIR)$(KSELFTEST_DIR)

# The module's sources and dkms.conf, for `dkms add/build/install`.
install-dkms:
	install -d $(DESTDIR)$(DKMSDIR)/kmod $(DESTDIR)$(DKMSDIR)/include/uapi/linux
	install -m 0644 Kbuild VERSION $(DESTDIR)$(DKMSDIR)/
	install -m 0644 kmod/*.c kmod/*.h $(DESTDIR)$(DKMSDIR)/kmod/
	install -m 0644 include/uapi/linux/r2cc.h \
		$(DESTDIR)$(DKMSDIR)/include/uapi/linux/
	sed 's|@VERSION@|$(VERSION)|' dkms.conf.in > $(DESTDIR)$(DKMSDIR)/dkms.conf

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libr2cc.so* $(DESTDIR)$(LIBDIR)/libr2cc.a \
	      $(DESTDIR)$(LIBDIR)/libnccl-net-r2cc.so \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/r2cc.pc \
	      $(DESTDIR)$(INCLUDEDIR)/linux/r2cc.h \
	      $(DESTDIR)$(UDEVDIR)/70-r2cc.rules \
	      $(DESTDIR)$(TMPFILESDIR)/r2cc.conf \
	      $(DESTDIR)$(YNLSPECDIR)/r2cc.yaml \
	      $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(USER_BINS))) \
	      $(DESTDIR)$(SBINDIR)/r2ccctl \
	      $(addprefix $(DESTDIR)$(SYSTEMDDIR)/,$(notdir $(wildcard tools/r2ccctl/systemd/*))) \
	      $(patsubst man/%,$(DESTDIR)$(MANDIR)/%,$(MAN_PAGES))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/r2cc $(DESTDIR)$(DKMSDIR)
	$(MAKE) -s uninstall-torch

# Keeps the downloaded kernels ($(BUILD)/cache); `make distclean` drops them.
clean:
	@if [ -e $(BUILD)/testbed/state.json ]; then tools/testbed/r2cc-testbed down; fi
	$(MAKE) -s -C tools/sim BUILD=$(BUILD) clean
	rm -rf $(BUILD)/lib $(BUILD)/plugins $(BUILD)/tools $(BUILD)/tests $(BUILD)/kmod
	rm -f kmod/*.o kmod/.*.cmd *.o .*.cmd *.ko *.mod *.mod.c *.mod.o \
	      Module.symvers modules.order
	rm -rf .tmp_versions

distclean: clean
	rm -rf $(BUILD)

help:
	@echo "make [all]       libr2cc, testbed helpers, unit tests (in $(BUILD))"
	@echo "make torch       the PyTorch backend (part of all when libtorch-dev is installed)"
	@echo "make kmod        r2cc.ko against KDIR=$(KDIR)"
	@echo "make deps        install apt packages and testbed kernels (root)"
	@echo "make check       host unit tests and testbed tests on 6.1 and 6.12"
	@echo "make demo        boot a testbed, run traffic, cut a link, tear down"
	@echo "make install     DESTDIR=, PREFIX= (default /usr/local)"
	@echo "make docs        Documentation/ as HTML in $(BUILD)/docs/html"
	@echo "make install-kselftest  the module's tests for a real node (DESTDIR=, PREFIX=)"
	@echo "make clean       build outputs (keeps downloaded kernels)"

include tests/xsim/xsim.mk
include bindings/torch/torch.mk
include tests/fuzz/fuzz.mk
