# nsfence — plain GNU make. `make` builds ./nsfence, `make test` runs the
# whole suite (unit, fuzz corpora, integration as root and unprivileged, for
# each binary variant) through one prove run.

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=
CC         ?= cc
CLANG      ?= clang
PKG_CONFIG ?= pkg-config

PKGS        = libseccomp libnl-3.0 inih libcares jansson
DEPS_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
DEPS_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
# Both builds link these five libraries' static archives, and glibc's: see
# the nsfence target. libnl-route-3 is not linked at all: lo needs one bare
# RTM_NEWLINK, which libnl-3's message API builds, and its shared object runs
# 74 ELF constructors (cache-ops registrations) at every start.
DEPS_STATIC := $(shell $(PKG_CONFIG) --static --libs $(PKGS) 2>/dev/null)

VERSION    := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
OPT        ?= -O2 -g
WARN        = -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral -Wswitch-enum \
              -Wmissing-prototypes -Wstrict-prototypes
BASE_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -DNF_VERSION='"$(VERSION)"' -I. -I$(B)/gen $(DEPS_CFLAGS) \
              -fno-strict-aliasing -fstack-protector-strong -D_FORTIFY_SOURCE=2
CFLAGS     ?=
LDFLAGS    ?=

MODULE_SRCS := $(sort $(wildcard src/*.c fs/*.c net/*.c seccomp/*.c proxy/*.c))
LIB_SRCS    := $(filter-out src/main.c,$(MODULE_SRCS))
UNIT_SRCS   := $(sort $(wildcard tests/unit/test_*.c))
HELPER_SRCS := $(sort $(wildcard tests/helpers/*.c))
FUZZ_SRCS   := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_NAMES  := $(patsubst fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
INTEG_TESTS := $(sort $(wildcard tests/integration/*.t))

# Build variants: objects never mix between them.
B            = build
DYN_OBJS    := $(patsubst %.c,$(B)/dyn/%.o,$(LIB_SRCS))
ASAN_OBJS   := $(patsubst %.c,$(B)/asan/%.o,$(LIB_SRCS))
STATIC_OBJS := $(patsubst %.c,$(B)/static/%.o,$(LIB_SRCS))
SAN          = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

all: nsfence

# The seccomp filters, compiled by libseccomp once, at build time.
GEN = $(B)/gen
$(GEN)/genbpf: tools/genbpf.c seccomp/filters.c src/err.c seccomp/filters.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -Wno-missing-prototypes -o $@ tools/genbpf.c seccomp/filters.c \
	    src/err.c $(DEPS_LIBS)
$(GEN)/seccomp_bpf.inc: $(GEN)/genbpf
	$< > $@.tmp && mv $@.tmp $@
$(B)/dyn/seccomp/bpf.o $(B)/asan/seccomp/bpf.o $(B)/static/seccomp/bpf.o: $(GEN)/seccomp_bpf.inc

# glibc too is linked in, as a static PIE (its addresses still randomised:
# the host side parses what the sandbox sends). Where a page fault and a
# system call are dear (a VM), the dynamic loader's relocations, its lazily
# bound calls (each a copy-on-write fault in init at its first call after the
# clone) and libc's own mappings cost about 1.8 ms per run: `nsfence -- true`
# took 15.4 ms dynamic and 13.6 ms static, same run (timeit, 200 rounds).
# The linker's notes on NSS concern code nsfence does not reach, but for
# srt's home directory when $$HOME is unset (getpwuid, which reads
# /etc/passwd without a module); they are filtered, its status kept.
#
# lld lays out the functions one run executes together, in the order it
# first does (HOT_ORDER, written by `make hot-order`; tools/hotorder.c says
# why): a process then faults in its code a few 64 KiB windows at a time
# instead of one window per function it calls. Each function has a section of
# its own (-ffunction-sections) for that. A name the list has and the code
# no longer does is skipped; a function the list lacks lands after the rest.
# Its relative relocations are packed (RELR, which glibc's static-PIE start
# applies since 2.36): 60 KiB of them become 1.5 KiB, read at every start.
HOT_ORDER  = tools/hot-order.txt
ORDER_LINK = -fuse-ld=lld -Wl,--symbol-ordering-file=$(HOT_ORDER) -Wl,--no-warn-symbol-ordering \
             -Wl,--pack-dyn-relocs=relr
STATIC_LINK = $(CC) -static-pie $(ORDER_LINK) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) \
              $(DEPS_STATIC) $(LINK_EXTRA)
STATIC_NOTE = grep -v -e 'in statically linked applications requires at runtime' -e ': in function '
define link_static
	@echo "$(STATIC_LINK)"
	@$(STATIC_LINK) 2>$@.ld || { cat $@.ld >&2; rm -f $@.ld; exit 1; }; \
	    $(STATIC_NOTE) $@.ld >&2 || true; rm -f $@.ld
endef
nsfence: $(B)/dyn/src/main.o $(B)/dyn/libnsfence.a $(HOT_ORDER)
	$(link_static)

$(B)/asan/nsfence: $(B)/asan/src/main.o $(B)/asan/libnsfence.a
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(DEPS_LIBS)

# One file, no dynamic dependency, stripped: the same link, its unused
# sections dropped.
nsfence-static: LINK_EXTRA = -Wl,--gc-sections
nsfence-static: $(B)/static/src/main.o $(B)/static/libnsfence.a $(HOT_ORDER)
	$(link_static)
	strip --strip-all $@

static: nsfence-static
asan: $(B)/asan/nsfence

# The policy and plan code runs once, in a process just exec'd, where every
# stack page it first touches is a page fault. Its path helpers each hold a
# PATH_MAX buffer or more; inlined into one another, their frames add up
# (collect's was 21 KiB). -fconserve-stack keeps such helpers out of line,
# so only the frames in use are on the stack.
PLAN_OBJS = fs/plan fs/gitrepo fs/scan fs/resolve src/front src/config
FRAME_CFLAGS =
$(foreach o,$(PLAN_OBJS),$(B)/dyn/$(o).o $(B)/static/$(o).o): FRAME_CFLAGS = -fconserve-stack

$(B)/dyn/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(OPT) -ffunction-sections $(FRAME_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -U_FORTIFY_SOURCE $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/static/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Os -ffunction-sections -fdata-sections -DNF_STATIC=1 $(FRAME_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

%/libnsfence.a:
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/dyn/libnsfence.a: $(DYN_OBJS)
$(B)/asan/libnsfence.a: $(ASAN_OBJS)
$(B)/static/libnsfence.a: $(STATIC_OBJS)

# ---- tests -----------------------------------------------------------------

UNIT_BINS   := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRCS))
HELPER_BINS := $(patsubst tests/helpers/%.c,$(B)/tests/helpers/%,$(HELPER_SRCS))
REPLAY_BINS := $(patsubst %,$(B)/fuzz/replay_%,$(FUZZ_NAMES))

$(B)/tests/unit/%: tests/unit/%.c tests/unit/tmptree.c tests/unit/tmptree.h $(B)/asan/libnsfence.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -U_FORTIFY_SOURCE -Wno-missing-prototypes $(CFLAGS) \
	    -o $@ $< tests/unit/tmptree.c $(B)/asan/libnsfence.a $(DEPS_LIBS) -lcmocka

$(B)/tests/helpers/%: tests/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 $(CFLAGS) -o $@ $< -lpthread $(DEPS_LIBS)

$(B)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/fuzz.h fuzz/replay.c $(B)/asan/libnsfence.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -U_FORTIFY_SOURCE -Wno-missing-prototypes $(CFLAGS) \
	    -o $@ fuzz/fuzz_$*.c fuzz/replay.c $(B)/asan/libnsfence.a $(DEPS_LIBS)

# libFuzzer builds (clang): `make fuzz`, then run e.g. build/fuzz/ini.fuzz fuzz/corpus/ini
FUZZ_BINS := $(patsubst %,$(B)/fuzz/%.fuzz,$(FUZZ_NAMES))
fuzz: $(FUZZ_BINS)
$(B)/fuzz/%.fuzz: fuzz/fuzz_%.c fuzz/fuzz.h $(LIB_SRCS) $(GEN)/seccomp_bpf.inc
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -D_GNU_SOURCE -I. -I$(B)/gen $(DEPS_CFLAGS) -g -O1 \
	    -fsanitize=fuzzer,address,undefined -o $@ fuzz/fuzz_$*.c $(LIB_SRCS) $(DEPS_LIBS)

# Which binaries the integration suite runs against, and as whom. `ll` is
# the normal build in Landlock mode (--mode landlock on every run, see
# tests/leg), only for the test files with a "# modes: landlock" line: the
# other engine under the same checks, without a second build of its own.
# A file with a "# builds: dyn asan" line runs only under those variants
# (what it attacks is the same code in every build; CI's time is not).
VARIANTS ?= dyn asan static ll
LEGS     ?= root user
TAP_DIR   = $(B)/tap

variant_bin_dyn    = nsfence
variant_bin_asan   = $(B)/asan/nsfence
variant_bin_static = nsfence-static
variant_bin_ll     = nsfence
LL_TESTS          := $(shell grep -l '^\# modes: .*landlock' $(INTEG_TESTS) 2>/dev/null)

test-build: nsfence nsfence-static $(foreach v,$(VARIANTS),$(variant_bin_$(v))) $(UNIT_BINS) $(HELPER_BINS) $(REPLAY_BINS)

# Wrappers so that a single prove run covers every test, leg and variant.
tap-wrappers: test-build
	@rm -rf $(TAP_DIR) && mkdir -p $(TAP_DIR)
	@for t in $(UNIT_BINS); do n=$$(basename $$t); \
	    printf '#!/bin/sh\nCMOCKA_MESSAGE_OUTPUT=TAP exec %s\n' "$(CURDIR)/$$t" > $(TAP_DIR)/unit-$$n.t; done
	@for f in $(FUZZ_NAMES); do \
	    printf '#!/bin/sh\nexec %s %s\n' "$(CURDIR)/$(B)/fuzz/replay_$$f" "$(CURDIR)/fuzz/corpus/$$f" \
	        > $(TAP_DIR)/fuzz-$$f.t; done
	@for v in $(VARIANTS); do for l in $(LEGS); do \
	    case $$v in ll) tests="$(LL_TESTS)"; env="env NF_MODE=landlock ";; *) tests="$(INTEG_TESTS)"; env="";; esac; \
	    for t in $$tests; do \
	    only=$$(sed -n 's/^# builds: //p' $$t); \
	    case " $${only:-$$v} " in *" $$v "*) ;; *) continue;; esac; \
	    n=$$(basename $$t .t); \
	    case $$v in dyn|ll) bin=nsfence;; asan) bin=$(B)/asan/nsfence;; static) bin=nsfence-static;; esac; \
	    printf '#!/bin/sh\nexec %s%s/tests/leg %s %s/%s %s/%s\n' "$$env" "$(CURDIR)" $$l "$(CURDIR)" $$bin "$(CURDIR)" $$t \
	        > $(TAP_DIR)/$$v-$$l-$$n.t; done; done; done
	@chmod +x $(TAP_DIR)/*.t

test: check-format tap-wrappers
	prove $(PROVE_FLAGS) $(TAP_DIR)/*.t

check-format:
	clang-format --dry-run --Werror $(MODULE_SRCS) $(wildcard */*.h) $(UNIT_SRCS) tests/unit/tmptree.[ch] \
	    $(HELPER_SRCS) tools/*.c \
	    $(FUZZ_SRCS) fuzz/replay.c

# ---- the code's layout -----------------------------------------------------

# HOT_ORDER anew, from one run of each front end in an empty directory of
# the build's, then one in a repository there (single-stepped: about a
# minute). Then `make` relinks with it.
$(B)/tools/hotorder: tools/hotorder.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O2 $(CFLAGS) -o $@ $<

hot-order: nsfence $(B)/tools/hotorder
	@d=$$(mktemp -d -p $(CURDIR)/$(B)) && trap 'rm -rf "$$d"' EXIT && cd "$$d" && \
	    new="$(CURDIR)/$(HOT_ORDER).new" && \
	    rm -f "$$new" && \
	    $(CURDIR)/$(B)/tools/hotorder "$$new" $(CURDIR)/nsfence -- true && \
	    $(CURDIR)/$(B)/tools/hotorder "$$new" $(CURDIR)/nsfence bwrap --ro-bind / / --dev /dev \
	        --proc /proc --unshare-all -- true && \
	    $(CURDIR)/$(B)/tools/hotorder "$$new" $(CURDIR)/nsfence srt true && \
	    git init -q repo && cd repo && \
	    $(CURDIR)/$(B)/tools/hotorder "$$new" $(CURDIR)/nsfence -- true && \
	    mv "$$new" $(CURDIR)/$(HOT_ORDER) && wc -l $(CURDIR)/$(HOT_ORDER)

# ---- demo, install ---------------------------------------------------------

demo: nsfence
	./tests/demo ./nsfence

# Debian packages. The second line is for the srt and bwrap front ends' tests:
# srt 0.0.83 runs socat and rg; bubblewrap's own suite uses capsh/getpcaps,
# strace, findmnt/unshare, /usr/bin/python3 with the seccomp module (and TAP
# output with python3-tap), and prove (perl); JSON settings use jansson.
DEB_PACKAGES = build-essential lld pkg-config libseccomp-dev libnl-3-dev libinih-dev \
               libc-ares-dev libcmocka-dev clang iproute2 util-linux curl git file procps psmisc \
               busybox-static openssl python3 clang-format keyutils \
               libjansson-dev socat ripgrep libcap2-bin strace python3-seccomp python3-tap perl
# Node.js and npm come only from Debian when the machine has none: the machine
# image ships NodeSource's nodejs (which conflicts with Debian's npm).
DEB_NODE     = nodejs npm

# srt (npm @anthropic-ai/sandbox-runtime), pinned, installed into the
# project-local, gitignored $(SRT_DIR); its CLI is $(SRT_BIN).
SRT_VERSION ?= 0.0.83
SRT_DIR     ?= .deps/srt
SRT_PKG      = $(SRT_DIR)/node_modules/@anthropic-ai/sandbox-runtime/package.json
SRT_BIN      = $(SRT_DIR)/node_modules/.bin/srt

# The container engines' own seccomp profiles, for tests that run nsfence in
# an emulated container (tests/helpers/contain), as Debian 12 ships them:
# Docker's in its Go sources, Podman's in containers-common. Only the two
# .deb files are downloaded (apt-get download) and only the JSON taken out
# of them into the project-local, gitignored $(PROFILES_DIR): installing
# golang-github-docker-docker-dev would pull in about 260 packages (Go,
# systemd, iptables; close to 1 GiB) for one file.
# apt-get download runs in a directory of _apt's: as root, apt fetches as
# its unprivileged _apt user, and warns and fetches as root where _apt
# cannot write. Triples: the name in $(PROFILES_DIR), the package, the file
# in it.
PROFILES_DIR ?= .deps/profiles
PROFILES      = docker-default.json golang-github-docker-docker-dev \
                    ./usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json \
                podman-seccomp.json golang-github-containers-common \
                    ./usr/share/containers/seccomp.json

# Idempotent: apt-get runs only for packages that are missing, npm only when
# the pinned srt is not already in $(SRT_DIR), apt-get download only for
# profiles not already in $(PROFILES_DIR) (and apt-get update only when the
# package lists do not have the packages).
deps:
	@have=" $$(dpkg-query -W -f='$${db:Status-Abbrev} $${Package}\n' $(DEB_PACKAGES) 2>/dev/null | \
	    awk '$$1 == "ii" { printf "%s ", $$2 }')"; \
	missing=$$(for p in $(DEB_PACKAGES); do case "$$have" in *" $$p "*) ;; *) echo $$p;; esac; done); \
	command -v node >/dev/null && command -v npm >/dev/null || missing="$$missing $(DEB_NODE)"; \
	if [ -n "$$(echo $$missing)" ]; then \
	    echo "deps: installing" $$missing; \
	    apt-get update && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	else echo "deps: Debian packages present"; fi
	@if [ "$$(node -p 'require("$(abspath $(SRT_PKG))").version' 2>/dev/null)" = "$(SRT_VERSION)" ]; then \
	    echo "deps: srt $(SRT_VERSION) present in $(SRT_DIR)"; \
	else \
	    echo "deps: npm install @anthropic-ai/sandbox-runtime@$(SRT_VERSION) into $(SRT_DIR)"; \
	    mkdir -p $(SRT_DIR) && \
	    npm install --prefix $(SRT_DIR) --no-audit --no-fund --loglevel=error \
	        @anthropic-ai/sandbox-runtime@$(SRT_VERSION) && \
	    test -x $(SRT_BIN); \
	fi
	@set -e; set -- $(PROFILES); need=""; \
	while [ $$# -gt 0 ]; do [ -s $(PROFILES_DIR)/$$1 ] || need="$$need $$2"; shift 3; done; \
	if [ -z "$$need" ]; then echo "deps: seccomp profiles present in $(PROFILES_DIR)"; exit 0; fi; \
	echo "deps: apt-get download$$need, for their seccomp profiles only"; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	chown _apt "$$tmp" 2>/dev/null || true; \
	(cd "$$tmp" && apt-get download -qq $$need 2>/dev/null) || \
	    { apt-get update -qq && (cd "$$tmp" && apt-get download -qq $$need); }; \
	mkdir -p $(PROFILES_DIR); set -- $(PROFILES); \
	while [ $$# -gt 0 ]; do \
	    if [ ! -s $(PROFILES_DIR)/$$1 ]; then \
	        dpkg-deb --fsys-tarfile "$$tmp"/$$2_*.deb | tar -xO $$3 > $(PROFILES_DIR)/$$1.part; \
	        test -s $(PROFILES_DIR)/$$1.part; \
	        mv $(PROFILES_DIR)/$$1.part $(PROFILES_DIR)/$$1; \
	        echo "deps: $(PROFILES_DIR)/$$1 from $$(basename "$$tmp"/$$2_*.deb)"; \
	    fi; shift 3; done

APPARMOR_DIR ?= /etc/apparmor.d

# The AppArmor profile goes in where AppArmor is (Ubuntu 23.10+ needs it for
# unprivileged user namespaces); it is loaded when installing to the live
# system (no DESTDIR).
install: nsfence
	install -D -m 0755 nsfence $(DESTDIR)$(BINDIR)/nsfence
	install -D -m 0644 doc/nsfence.1 $(DESTDIR)$(MANDIR)/man1/nsfence.1
	@if [ -d /sys/kernel/security/apparmor ] || [ -d $(DESTDIR)$(APPARMOR_DIR) ]; then \
	    mkdir -p $(DESTDIR)$(APPARMOR_DIR) && \
	    sed 's|@BINDIR@|$(BINDIR)|g' apparmor/nsfence.in > $(DESTDIR)$(APPARMOR_DIR)/nsfence && \
	    echo "installed $(DESTDIR)$(APPARMOR_DIR)/nsfence"; \
	    if [ -z "$(DESTDIR)" ] && command -v apparmor_parser >/dev/null; then \
	        apparmor_parser -r $(APPARMOR_DIR)/nsfence; fi; \
	fi

# The bwrap name beside nsfence, for programs that run bubblewrap by name
# (srt finds it with `which bwrap`): a symlink, on which nsfence takes
# bubblewrap's command line. Never over a bwrap already there (bubblewrap's
# own, or anything else), and a note when PATH finds another bwrap first.
BWRAP_LINK = $(DESTDIR)$(BINDIR)/bwrap
install-bwrap:
	@if [ "$$(readlink $(BWRAP_LINK))" != nsfence ] && { [ -e $(BWRAP_LINK) ] || [ -L $(BWRAP_LINK) ]; }; then \
	    echo "install-bwrap: $(BWRAP_LINK) exists and is not nsfence" \
	        "($$($(BWRAP_LINK) --version 2>/dev/null || echo 'not bubblewrap?')); not replacing it." >&2; \
	    echo "install-bwrap: remove it first, or choose another directory: make install-bwrap BINDIR=..." >&2; \
	    exit 1; \
	fi
	$(MAKE) install
	@if [ "$$(readlink $(BWRAP_LINK))" = nsfence ]; then \
	    echo "$(BWRAP_LINK) -> nsfence is already installed"; \
	else \
	    ln -s nsfence $(BWRAP_LINK) && echo "installed $(BWRAP_LINK) -> nsfence"; \
	fi
	@found=$$(command -v bwrap || true); \
	if [ -z "$(DESTDIR)" ] && [ "$$found" != "$(BINDIR)/bwrap" ]; then \
	    echo "install-bwrap: note: PATH finds $${found:-no bwrap} first, not $(BINDIR)/bwrap" >&2; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/nsfence $(DESTDIR)$(MANDIR)/man1/nsfence.1
	@if [ "$$(readlink $(BWRAP_LINK))" = nsfence ]; then rm -f $(BWRAP_LINK); fi
	@if [ -f $(DESTDIR)$(APPARMOR_DIR)/nsfence ]; then \
	    if [ -z "$(DESTDIR)" ] && command -v apparmor_parser >/dev/null; then \
	        apparmor_parser -R $(APPARMOR_DIR)/nsfence || true; fi; \
	    rm -f $(DESTDIR)$(APPARMOR_DIR)/nsfence; fi

clean:
	rm -rf $(B) nsfence nsfence-static

.PHONY: all static asan test test-build tap-wrappers check-format demo deps install install-bwrap uninstall \
        clean fuzz hot-order
.SECONDARY:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
