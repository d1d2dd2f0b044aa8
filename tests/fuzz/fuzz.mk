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
FUZZ_CFLAGS = $(ALL_CFLAGS) -Wno-error $(FUZZ_SAN) -MMD -MP
FUZZ_SRCS  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_BINS  := $(addprefix $(BUILD)/fuzz/,$(FUZZ_NAMES))
FUZZ_OBJS  := $(patsubst lib/%.c,$(BUILD)/fuzz/lib/%.o,$(LIB_SRCS))
FUZZ_LIBA  := $(BUILD)/fuzz/lib/libr2cc.a

.PHONY: fuzz check-fuzz clean-fuzz fuzz-cc

fuzz: $(FUZZ_BINS)

fuzz-cc:
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found" \
		"(apt-get install clang-14 libclang-rt-14-dev, or set FUZZ_CC)" >&2; \
		exit 1; }

$(BUILD)/fuzz/lib/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/fuzz/lib/%.o: lib/%.c | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -fvisibility=hidden \
		-c -o $@ $<

$(FUZZ_LIBA): $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# A target may #include a library source for its static functions; the
# archive then only supplies what that source does not define.
$(FUZZ_BINS): $(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIBA) | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBA) \
		-libverbs

check-fuzz: fuzz
	@rc=0; for t in $(FUZZ_NAMES); do \
		tests/fuzz/run.sh $(BUILD)/fuzz/$$t $(FUZZ_SECS) || rc=1; \
	done; exit $$rc

clean-fuzz:
	rm -rf $(BUILD)/fuzz

-include $(wildcard $(BUILD)/fuzz/*.d $(BUILD)/fuzz/lib/*.d)
