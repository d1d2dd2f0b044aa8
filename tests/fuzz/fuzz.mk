# SPDX-License-Identifier: GPL-2.0-only
#
# libFuzzer targets for the parsers that read what a user or a peer gives
# the library (tests/fuzz/README.rst).  Included by the top-level Makefile;
# only its own targets use clang, so `make all` and `make clean` work
# without it.
#
#   make fuzz          $(BUILD)/fuzz/fuzz_* (clang, -fsanitize=fuzzer)
#   make check-fuzz    each target FUZZ_SECS seconds over a copy of its
#                      corpus, after replaying tests/fuzz/regress/<target>/
#   make clean-fuzz    $(BUILD)/fuzz
#
# The library's sources are compiled again into $(BUILD)/fuzz/lib with
# coverage (-fsanitize=fuzzer-no-link) and ASan+UBSan, like $(BUILD)/asan;
# libibverbs stays uninstrumented.  The gcc build owns -Werror: clang's
# warnings differ, and they stay warnings here.

# clang, else Debian's clang-14 (scripts/deps.sh installs that one).
FUZZ_CC    ?= $(or $(shell command -v clang 2>/dev/null),\
		   $(shell command -v clang-14 2>/dev/null),clang)
FUZZ_SECS  ?= 10
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all \
	      -fno-omit-frame-pointer
FUZZ_CFLAGS = $(ALL_CFLAGS) $(LIB_INC) -Wno-error $(FUZZ_SAN) -MMD -MP
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_BINS  := $(addprefix $(BUILD)/fuzz/,$(FUZZ_NAMES))
FUZZ_OBJS  := $(patsubst lib/%.c,$(BUILD)/fuzz/lib/%.o,$(LIB_SRCS))
FUZZ_LIBA  := $(BUILD)/fuzz/lib/libr2cc.a

# fuzz_wire runs the transport in the protocol simulator's world
# (tests/xsim), built as xsim.mk builds it: the library sources of
# XSIM_LIB and the world without xsim.c's main, linked with XSIM_WRAP,
# plus --wrap=conn_new, by which the target catches the world's
# connections.  Into $(BUILD)/fuzz/xsim: the library with coverage, the
# world without (its scheduler's branches are nothing a peer said).
FUZZ_WIRE      := $(BUILD)/fuzz/fuzz_wire
FUZZ_XSIM_OBJS := $(patsubst %,$(BUILD)/fuzz/xsim/lib/%.o,$(XSIM_LIB)) \
		  $(patsubst tests/xsim/%.c,$(BUILD)/fuzz/xsim/%.o,\
			     $(filter-out tests/xsim/xsim.c,$(XSIM_SRCS)))
FUZZ_LIB_BINS  := $(filter-out $(FUZZ_WIRE),$(FUZZ_BINS))

.PHONY: fuzz check-fuzz clean-fuzz fuzz-cc

fuzz: $(FUZZ_BINS)

fuzz-cc:
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found" \
		"(apt-get install clang-14 libclang-rt-14-dev, or set FUZZ_CC)" >&2; \
		exit 1; }

$(BUILD)/fuzz/lib/xport/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/fuzz/lib/%.o: lib/%.c | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -fvisibility=hidden \
		-c -o $@ $<

$(FUZZ_LIBA): $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# A target may #include a library source for its static functions; the
# archive then only supplies what that source does not define.
$(FUZZ_LIB_BINS): $(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_LIBA) | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBA) \
		-libverbs

$(BUILD)/fuzz/xsim/lib/xport/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/fuzz/xsim/lib/%.o: lib/%.c | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(XSIM_CFLAGS) -fsanitize=fuzzer-no-link \
		-fvisibility=hidden -c -o $@ $<

$(BUILD)/fuzz/xsim/%.o: tests/xsim/%.c | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(XSIM_CFLAGS) -Ilib -c -o $@ $<

$(FUZZ_WIRE): tests/fuzz/fuzz_wire.c tests/fuzz/fuzz.h $(FUZZ_XSIM_OBJS) | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ilib -Itests/xsim -fsanitize=fuzzer \
		$(XSIM_WRAP),--wrap=conn_new -o $@ $< $(FUZZ_XSIM_OBJS) -ldl

check-fuzz: fuzz
	@rc=0; for t in $(FUZZ_NAMES); do \
		tests/fuzz/run.sh $(BUILD)/fuzz/$$t $(FUZZ_SECS) || rc=1; \
	done; exit $$rc

clean-fuzz:
	rm -rf $(BUILD)/fuzz

-include $(wildcard $(BUILD)/fuzz/*.d $(BUILD)/fuzz/lib/*/*.d \
		     $(BUILD)/fuzz/lib/*/*/*.d $(BUILD)/fuzz/xsim/*.d \
		     $(BUILD)/fuzz/xsim/lib/*/*.d)
