# SPDX-License-Identifier: GPL-2.0-only
# The protocol simulator: the transport's own sources over a fake verbs
# layer (tests/xsim), built into $(BUILD)/xsim.  Included by the Makefile.

# The layers it runs are whole folders: the base and the transport (a new
# file of theirs is in by itself).  The platform (lib/platform: fabric
# discovery, NIC notification, the clock) is what tests/xsim/env.c
# replaces; the layers above the transport are not run.
XSIM_LIB  := $(patsubst lib/%.c,%,$(wildcard lib/base/*.c lib/xport/*.c))
XSIM_SRCS := $(wildcard tests/xsim/*.c)
XSIM_OBJS := $(patsubst %,$(BUILD)/xsim/lib/%.o,$(XSIM_LIB)) \
	     $(patsubst tests/xsim/%.c,$(BUILD)/xsim/%.o,$(XSIM_SRCS))
XSIM_BIN  := $(BUILD)/tests/xsim/xsim
XSIM_WRAP := -Wl,--wrap=send,--wrap=recv,--wrap=shutdown,--wrap=ctrl_send

.PHONY: xsim check-xsim
xsim: $(XSIM_BIN)

$(BUILD)/xsim/lib/xport/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/xsim/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(XSIM_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(BUILD)/xsim/%.o: tests/xsim/%.c $(wildcard tests/xsim/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(XSIM_CFLAGS) -Ilib -c -o $@ $<

$(XSIM_BIN): $(XSIM_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XSIM_CFLAGS) $(LDFLAGS) $(XSIM_WRAP) -o $@ $^ -ldl

check-xsim: $(XSIM_BIN)
	@prove -v tests/unit/xsim.sh

# The same under ASan and UBSan, run by the sanitizer phase (30 s of seeds).
XSIM_SAN_OBJS := $(patsubst $(BUILD)/xsim/%,$(BUILD)/asan/xsim/%,$(XSIM_OBJS))
XSIM_SAN_BIN  := $(BUILD)/asan/tests/unit/xsim

$(BUILD)/asan/xsim/lib/xport/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/asan/xsim/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(SAN_FLAGS) -fvisibility=hidden -c -o $@ $<

$(BUILD)/asan/xsim/%.o: tests/xsim/%.c $(wildcard tests/xsim/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Ilib -c -o $@ $<

$(XSIM_SAN_BIN): $(XSIM_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS) $(XSIM_WRAP) -o $@ $^ -ldl

sanitize-unit: $(XSIM_SAN_BIN)

# The thread model under ThreadSanitizer (tests/tsan): the library and the
# fake NIC, without the single-threaded simulator's world.
TSAN_FLAGS := -fsanitize=thread -O1 -g -fno-omit-frame-pointer
TSAN_LIB   := $(patsubst %,$(BUILD)/tsan/lib/%.o,$(XSIM_LIB))
TSAN_OBJS  := $(TSAN_LIB) $(BUILD)/tsan/fake_verbs.o \
	      $(BUILD)/tsan/env.o $(BUILD)/tsan/threads.o
TSAN_BIN   := $(BUILD)/tests/tsan/threads

.PHONY: tsan check-tsan
tsan: $(TSAN_BIN)

$(BUILD)/tsan/lib/xport/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/tsan/lib/%.o: lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(TSAN_FLAGS) -fvisibility=hidden -c -o $@ $<

$(BUILD)/tsan/%.o: tests/xsim/%.c $(wildcard tests/xsim/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -Ilib -c -o $@ $<

$(BUILD)/tsan/threads.o: tests/tsan/threads.c $(wildcard tests/xsim/*.h) $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -Ilib -Itests/xsim -c -o $@ $<

$(TSAN_BIN): $(TSAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TSAN_FLAGS) $(LDFLAGS) \
		-Wl,--wrap=send,--wrap=recv,--wrap=shutdown -o $@ $^ -ldl -lpthread

check-tsan: $(TSAN_BIN)
	@TSAN_OPTIONS="halt_on_error=1 exitcode=66" prove -v $(TSAN_BIN)
