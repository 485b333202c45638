# ltensor -- build, test, demo.  Flags come from pkg-config (lua5.4, openblas).
PKGS      := lua5.4 openblas
DEB_PKGS  := lua5.4 liblua5.4-dev libopenblas-dev lua-busted luarocks pkg-config
CC        ?= gcc
OPT       ?= -O2
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs-only-L --libs-only-other openblas 2>/dev/null) -lopenblas
CFLAGS_ALL = -std=c11 $(OPT) -fPIC -Wall -Wextra -D_GNU_SOURCE $(PKG_CFLAGS) $(XCFLAGS)
LDLIBS     = $(PKG_LIBS) -lm -lpthread

SRC  := $(wildcard src/*.c)
OBJ  := $(patsubst src/%.c,build/obj/%.o,$(SRC))
HDR  := $(wildcard src/*.h)

.PHONY: all test demo asan bench install clean deps

all: build/ltensor/core.so build/libltensor.a

build/obj/%.o: src/%.c $(HDR) | build/obj
	$(CC) $(CFLAGS_ALL) -c $< -o $@

build/obj build/ltensor:
	mkdir -p $@

build/ltensor/core.so: $(OBJ) | build/ltensor
	$(CC) -shared -o $@ $(OBJ) $(LDLIBS)

build/libltensor.a: $(OBJ)
	rm -f $@ && ar rcs $@ $(OBJ)

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing missing Debian packages:$$missing"; \
	  apt-get update -qq && apt-get install -y -qq $$missing; fi

test: deps all
	busted

demo: deps all
	lua5.4 -e 'package.path="lua/?.lua;lua/?/init.lua;"..package.path; package.cpath="build/?.so;"..package.cpath' examples/demo.lua

clean:
	rm -rf build
