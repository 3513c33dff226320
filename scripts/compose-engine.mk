# How a standalone program is built with pvdc's composition engine:
# included by tests/unit/Makefile (its check) and bench/Makefile (its
# benchmark).
#
# The engine (hw/display/pvdc-compose*.c) is compiled as it is, against
# the headers of the cached QEMU tree that scripts/build-qemu.sh left
# behind build/qemu (config-host.h comes from its build directory); it
# only needs glib, pixman and zlib at link time.

ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
QEMU_BUILD ?= $(realpath $(ROOT)/build/qemu)
QEMU_SRC ?= $(QEMU_BUILD)/../src

PKGS := glib-2.0 pixman-1 zlib
CPPFLAGS := -iquote $(QEMU_BUILD) -iquote $(QEMU_SRC)/include \
            -iquote $(QEMU_SRC)/host/include/$(shell uname -m) \
            -iquote $(QEMU_SRC)/host/include/generic \
            -iquote $(ROOT)/include -iquote $(ROOT)/hw/display \
            -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
            $(shell pkg-config --cflags $(PKGS))
CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-sign-compare \
          -Wno-unused-parameter -Wmissing-prototypes -Wshadow=local \
          -Wundef -Wvla -fno-strict-aliasing -fwrapv
LDLIBS := $(shell pkg-config --libs $(PKGS)) -lm
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer

ENGINE := $(wildcard $(ROOT)/hw/display/pvdc-compose*.c)
ENGINE_DEPS := $(ENGINE) $(wildcard $(ROOT)/hw/display/pvdc-compose*.h) \
               $(ROOT)/hw/display/pvdc-fields.h \
               $(ROOT)/include/hw/display/pvdc-regs.h
