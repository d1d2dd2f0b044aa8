# SPDX-License-Identifier: GPL-2.0-only
#
# The torch.distributed backend (bindings/torch): the Python extension
# r2cc_torch._C and its package in $(BUILD)/lib/torch/r2cc_torch, built
# against Debian's libtorch-dev, python3-torch and pybind11-dev (which
# libtorch-dev does not pull in).  Included by the top Makefile, which has
# BUILD, CXX, LIBSO, DESTDIR and PREFIX; paths are from the top, as there.
# Use it with
#   PYTHONPATH=$(BUILD)/lib/torch /usr/bin/python3 -c 'import r2cc_torch'
# or install it (`make install` does) where Debian's python3 looks:
# $(PREFIX)/lib/python3/dist-packages for /usr, else
# $(PREFIX)/lib/python3.X/dist-packages (TORCH_PYDIR).

TORCH_HEADERS := /usr/include/torch/csrc/distributed/c10d/ProcessGroup.hpp \
	/usr/include/pybind11/pybind11.h
TORCH_AVAILABLE := $(shell ls $(TORCH_HEADERS) >/dev/null 2>&1 && echo 1)

.PHONY: torch install-torch uninstall-torch

ifeq ($(TORCH_AVAILABLE),1)

# python3-torch is built for Debian's interpreter; a python3 found earlier
# on PATH (pyenv, a venv) may have no torch, or other headers.
TORCH_PYTHON ?= /usr/bin/python3
TORCH_PYCONFIG := $(TORCH_PYTHON)-config
TORCH_PKG := $(BUILD)/lib/torch/r2cc_torch
TORCH_EXT := $(TORCH_PKG)/_C$(shell $(TORCH_PYCONFIG) --extension-suffix)

# torch's, pybind11's and Python's headers are system headers (under
# /usr/include, or -isystem), so -Werror holds our code only.  Debian's
# libtorch has the C++11 ABI (std::__cxx11 in its symbols).
TORCH_CXXFLAGS ?= -O2 -g
TORCH_ALL_CXXFLAGS = -std=c++17 -fPIC -fvisibility=hidden \
	-Wall -Wextra -Werror $(TORCH_CXXFLAGS) -Iinclude \
	$(patsubst -I%,-isystem %,$(shell $(TORCH_PYCONFIG) --includes)) \
	-D_GLIBCXX_USE_CXX11_ABI=1 \
	-DTORCH_EXTENSION_NAME=_C -DTORCH_API_INCLUDE_EXTENSION_H \
	$(CPPFLAGS)
# libr2cc.so.0 is two levels up, in $(BUILD)/lib: no LD_LIBRARY_PATH needed.
# A package links without it (TORCH_RPATH=): installed, the library is in
# the linker's own path.
TORCH_RPATH ?= -Wl,-rpath,'$$ORIGIN/../..'
TORCH_LDLIBS = -L$(BUILD)/lib -lr2cc $(TORCH_RPATH) \
	-ltorch -ltorch_cpu -lc10 -ltorch_python

torch: $(TORCH_EXT) $(TORCH_PKG)/__init__.py

$(TORCH_EXT): bindings/torch/r2cc_torch.cpp bindings/torch/torch.mk $(wildcard include/r2cc/*.h) $(LIBSO)
	@mkdir -p $(@D)
	$(CXX) $(TORCH_ALL_CXXFLAGS) $(LDFLAGS) -shared -o $@.tmp $< $(TORCH_LDLIBS)
	mv -f $@.tmp $@

$(TORCH_PKG)/__init__.py: bindings/torch/r2cc_torch/__init__.py
	@mkdir -p $(@D)
	cp -f $< $@

TORCH_PYVER = $(shell $(TORCH_PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
TORCH_PYDIR ?= $(PREFIX)/lib/$(if $(filter /usr,$(PREFIX)),python3,python$(TORCH_PYVER))/dist-packages

# The extension finds libr2cc.so.0 as any program does (ld.so.conf, or
# LD_LIBRARY_PATH): its build-tree rpath points nowhere once installed.
install-torch: torch
	install -d $(DESTDIR)$(TORCH_PYDIR)/r2cc_torch
	install -m 0644 $(TORCH_PKG)/__init__.py $(DESTDIR)$(TORCH_PYDIR)/r2cc_torch/
	install -m 0644 $(TORCH_EXT) $(DESTDIR)$(TORCH_PYDIR)/r2cc_torch/

uninstall-torch:
	rm -rf $(DESTDIR)$(TORCH_PYDIR)/r2cc_torch

else

# `make check` runs deps (which installs them) after this file was read:
# look again.
torch:
	@if ls $(TORCH_HEADERS) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory torch; \
	else \
		echo "torch: skipped (needs libtorch-dev and pybind11-dev)"; \
	fi

install-torch uninstall-torch:
	@echo "$@: skipped (needs libtorch-dev and pybind11-dev)"

endif
