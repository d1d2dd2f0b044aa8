# SPDX-License-Identifier: GPL-2.0-only
# The protocol simulator: the transport's own sources over a fake verbs
# layer (tests/xsim), built into $(BUILD)/xsim.  Included by the Makefile.

XSIM_LIB  := conn engine rail xfer ctrl mr handles ctx nics cuda
XSIM_SRCS := $(wildcard tests/xsim/*.c)
XSIM_OBJS := $(patsubst %,$(BUILD)/xsim/lib/%.o,$(XSIM_LIB)) \
	     $(patsubst tests/xsim/%.c,$(BUILD)/xsim/%.o,$(XSIM_SRCS))
XSIM_BIN  := $(BUILD)/tests/xsim/xsim
XSIM_WRAP := -Wl,--wrap=send,--wrap=recv,--wrap=shutdown,--wrap=ctrl_send

.PHONY: xsim check-xsim
xsim: $(XSIM_BIN)

$(BUILD)/xsim/lib/cuda.o: CPPFLAGS += $(CUDA_CPPFLAGS)
$(BUILD)/xsim/lib/%.o: lib/%.c $(wildcard lib/*.h include/r2cc/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(XSIM_CFLAGS) -fvisibility=hidden -c -o $@ $<

$(BUILD)/xsim/%.o: tests/xsim/%.c $(wildcard tests/xsim/*.h lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(XSIM_CFLAGS) -Ilib -c -o $@ $<

$(XSIM_BIN): $(XSIM_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XSIM_CFLAGS) $(LDFLAGS) $(XSIM_WRAP) -o $@ $^ -ldl

check-xsim: $(XSIM_BIN)
	@prove -v $(XSIM_BIN) :: -t 60
