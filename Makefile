# cctrace build.  One module per directory; cli -> search -> engine -> lang, tracer, symbols; tracer -> disasm.
#
#   make            ./cctrace (and the samples)
#   make deps       Debian packages (apt-get; idempotent)
#   make install    cctrace, its man pages and bash completion under PREFIX
#                   (default /usr/local); DESTDIR, BINDIR, MANDIR... honoured
#   make uninstall  removes what make install put there
#   make system-deps  the real servers the system tests run, and what
#                   building memcached from source needs (as root)
#   make test       the whole Criterion suite, built with ASan + UBSan
#   make bench      side-by-side cost measurements (not part of make test)
#   make fuzz       fuzz the schedule parser and checker for FUZZ_TIME seconds

CC       ?= gcc
PKGS     := libunwind-ptrace libdw libelf capstone jansson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# Warnings are errors for developers; a packager or a newer compiler's new
# warning need not break a build: make WERROR= (debian/rules does).
WERROR   ?= -Werror
WARN     := -Wall -Wextra $(WERROR) -Wshadow -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
ALL_CFLAGS = $(CPPFLAGS) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS   += $(PKG_LIBS) -ledit -lpthread -lthread_db -lm -lstdc++

BUILD    ?= build
Q        := $(if $(V),,@)   # make V=1 shows the commands
MODULES  := tracer disasm symbols lang engine search cli
LIB_SRCS := $(filter-out cli/main.c,$(wildcard $(addsuffix /*.c,$(MODULES))))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/cli/main.o

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
CRITERION_LIBS := $(shell pkg-config --libs criterion 2>/dev/null)
# libxml2 is a test-only dependency: tests/test_junit.c parses --junit's XML.
$(BUILD)/tests/test_junit: TEST_EXTRA = $(shell pkg-config --cflags --libs libxml-2.0 2>/dev/null)

SAMPLE_DIRS := $(patsubst %/,%,$(dir $(wildcard samples/*/Makefile.inc)))
SAMPLE_CFLAGS := -std=gnu11 -g -O0 -pthread -Wall -Wextra $(WERROR)
FIXTURE_LIBS := $(patsubst %.c,%.so,$(wildcard tests/fixtures/lib*.c))
FIXTURE_SRCS := $(filter-out tests/fixtures/lib%.c,$(wildcard tests/fixtures/*.c))
# serstatic, serstatic-nodebug and serstatic-stripped are sercounter linked
# statically (below).
FIXTURE_CXX_SRCS := $(wildcard tests/fixtures/*.cpp)
FIXTURE_BINS := $(FIXTURE_SRCS:%.c=%) $(FIXTURE_CXX_SRCS:%.cpp=%) $(FIXTURE_LIBS) \
		tests/fixtures/serstatic tests/fixtures/serstatic-nodebug \
		tests/fixtures/serstatic-stripped tests/fixtures/fine-static \
		tests/fixtures/sercounter-stripped tests/fixtures/serspinlocal-stripped \
		tests/fixtures/sercxx-opt \
		tests/fixtures/localtypes-clang

.PHONY: all deps system-deps samples fixtures test check-asan bench sctbench fuzz clean format lint \
	install uninstall lint-man
all: cctrace samples

cctrace: $(BUILD)/cctrace
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/cctrace: $(LIB_OBJS) $(MAIN_OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS) $(CRITERION_LIBS) $(TEST_EXTRA)

# The picture test decodes chromium's screenshot.
$(BUILD)/tests/test_picture: LDLIBS += $(shell pkg-config --libs libpng 2>/dev/null)

# Samples and fixtures are targets, not part of cctrace: no sanitizers, -O0 so
# that lines and variables are where the source says.
include $(wildcard samples/*/Makefile.inc)
samples: $(SAMPLE_BINS)
fixtures: $(FIXTURE_BINS)
tests/fixtures/%: tests/fixtures/%.c
	$(CC) $(SAMPLE_CFLAGS) -o $@ $<
# C++ fixtures: names that are mangled in the symbol table.
tests/fixtures/%: tests/fixtures/%.cpp
	$(CXX) $(filter-out -std=gnu11,$(SAMPLE_CFLAGS)) -std=gnu++17 -o $@ $<
# Its bug shows only in UBSan's report (cctrace test reads stderr for it).
tests/fixtures/serubsan: SAMPLE_CFLAGS += -fsanitize=undefined
# ...ASan's and TSan's: their runtimes under ptrace.
tests/fixtures/serasan: SAMPLE_CFLAGS += -fsanitize=address
tests/fixtures/sertsan: SAMPLE_CFLAGS += -fsanitize=thread
# sercounter, static: no _Fork to fork runs from, so test's runs are
# launched afresh.
tests/fixtures/serstatic: tests/fixtures/sercounter.c
	$(CC) $(SAMPLE_CFLAGS) -static -o $@ $<
# localtypes by clang: no .debug_aranges, which libdw finds CUs by.
tests/fixtures/localtypes-clang: tests/fixtures/localtypes.c
	clang $(SAMPLE_CFLAGS) -o $@ $<
# fine, static: no .eh_frame_hdr, so its stacks come from libdw's unwinder.
tests/fixtures/fine-static: tests/fixtures/fine.c
	$(CC) $(SAMPLE_CFLAGS) -static -o $@ $<
# ...and without debugging information: its symbol table alone tells its
# own code from libc's.
tests/fixtures/serstatic-nodebug: tests/fixtures/sercounter.c
	$(CC) $(filter-out -g,$(SAMPLE_CFLAGS)) -static -o $@ $<
# ...and stripped: nothing tells, and cctrace test says so.
tests/fixtures/serstatic-stripped: tests/fixtures/sercounter.c
	$(CC) $(filter-out -g,$(SAMPLE_CFLAGS)) -static -s -o $@ $<
# Optimised: functions inlined into their callers (enter(F) at the copies).
tests/fixtures/optinline tests/fixtures/optlines tests/fixtures/optclone \
	tests/fixtures/optnest: SAMPLE_CFLAGS += -O2
tests/fixtures/optlto: SAMPLE_CFLAGS += -O2 -flto
# sercxx at -O2: _start lies just past a unit's last function, and no line
# of that unit is _start's.
tests/fixtures/sercxx-opt: tests/fixtures/sercxx.cpp
	$(CXX) $(filter-out -std=gnu11,$(SAMPLE_CFLAGS)) -std=gnu++17 -O2 -o $@ $<
# Stripped, linked dynamically: the program's own code has no names, so
# its points are written at(MODULE+0xOFFSET).
tests/fixtures/%-stripped: tests/fixtures/%.c
	$(CC) $(filter-out -g,$(SAMPLE_CFLAGS)) -s -o $@ $<
# seralign calls C++'s operator new by its mangled name: libstdc++.
tests/fixtures/seralign: tests/fixtures/seralign.c
	$(CC) $(SAMPLE_CFLAGS) -o $@ $< -lstdc++
# serlib's race is in a library of its own, found through its rpath.
tests/fixtures/serlib: tests/fixtures/serlib.c tests/fixtures/libsercount.so
	$(CC) $(SAMPLE_CFLAGS) -o $@ $< -Ltests/fixtures -lsercount -Wl,-rpath,'$$ORIGIN'
# cxxstatic's library has a static function named as one of its own.
tests/fixtures/cxxstatic: tests/fixtures/cxxstatic.cpp tests/fixtures/libstatics.so
	$(CXX) $(filter-out -std=gnu11,$(SAMPLE_CFLAGS)) -std=gnu++17 -o $@ $< -Ltests/fixtures -lstatics -Wl,-rpath,'$$ORIGIN'
tests/fixtures/lib%.so: tests/fixtures/lib%.c
	$(CC) $(SAMPLE_CFLAGS) -shared -fPIC -o $@ $<

SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# The suite's build runs on every core unless the caller chose its own -j: it
# is a third of the suite's time on 2 cores when built one file at a time.
NPROC := $(shell nproc 2>/dev/null || echo 2)
PARALLEL = $(if $(findstring jobserver,$(MAKEFLAGS))$(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
test:
	$(MAKE) $(PARALLEL) samples fixtures
	$(MAKE) $(PARALLEL) BUILD=build-asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" build-asan/cctrace test-bins
	CCTRACE=$(CURDIR)/build-asan/cctrace tests/run-all build-asan/tests
check-asan: test

test-bins: $(TEST_BINS)

bench: all fixtures
	bench/run

# cctrace test on every SCTBench-CS program (../shared/benchmarks): one row
# each (docs/test.md).  SCT_RUNS, SCT_TIME, SCT_SEED, SCT_ONLY tune it.
sctbench: all
	bench/sctbench-cs

# libFuzzer (clang) on the parser, printer and checker: tests/fuzz/.  The
# library is rebuilt with clang into build/fuzz, where the corpus, seeded
# with every schedule in the tree, is kept between runs.
FUZZ_TIME ?= 60
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
fuzz: fixtures
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="-O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	  LDFLAGS="$(FUZZ_SAN)" build/fuzz/fuzz_schedule
	tests/fuzz/run build/fuzz/fuzz_schedule build/fuzz $(FUZZ_TIME)

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_OBJS)
	@echo "  FUZZ    $@"
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

# Installation, as the GNU conventions name things; DESTDIR stages it (the
# Debian package installs into debian/cctrace with PREFIX=/usr).  It copies
# $(BUILD)/cctrace, so a tree built with BUILD=build-asan installs without a
# second build (tests/test_package.c does that).
PREFIX      ?= /usr/local
EXEC_PREFIX ?= $(PREFIX)
BINDIR      ?= $(EXEC_PREFIX)/bin
DATAROOTDIR ?= $(PREFIX)/share
MANDIR      ?= $(DATAROOTDIR)/man
BASHCOMPDIR ?= $(DATAROOTDIR)/bash-completion/completions
INSTALL     ?= install
MAN_PAGES   := man/cctrace.1 man/cctrace-schedule.5

install: $(BUILD)/cctrace
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 755 $(BUILD)/cctrace $(DESTDIR)$(BINDIR)/cctrace
	$(INSTALL) -m 644 man/cctrace.1 $(DESTDIR)$(MANDIR)/man1/cctrace.1
	$(INSTALL) -m 644 man/cctrace-schedule.5 $(DESTDIR)$(MANDIR)/man5/cctrace-schedule.5
	$(INSTALL) -m 644 completion/cctrace.bash $(DESTDIR)$(BASHCOMPDIR)/cctrace

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cctrace $(DESTDIR)$(MANDIR)/man1/cctrace.1 \
	  $(DESTDIR)$(MANDIR)/man5/cctrace-schedule.5 $(DESTDIR)$(BASHCOMPDIR)/cctrace

# The man pages must format without a warning (tests/test_package.c too).
lint-man:
	for m in $(MAN_PAGES); do \
	  out=$$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z $$m 2>&1) || exit 1; \
	  [ -z "$$out" ] || { echo "$$m: $$out"; exit 1; }; done

# libbz2-dev: tests/test_typestate.c builds pbzip2 0.9.4 from ../shared/benchmarks.
deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	  build-essential pkg-config libunwind-dev libcapstone-dev libelf-dev libdw-dev \
	  libcriterion-dev libedit-dev libjansson-dev libxml2-dev gdb tmux clang libclang-rt-dev \
	  debhelper dpkg-dev fakeroot groff-base man-db bash-completion \
	  chromium libpng-dev libbz2-dev

# The servers and clients of the system tests (tests/test_memcached*.c), and
# what tests/memcached/build.sh needs to build memcached from Debian's source
# package: a deb-src entry (added if there is none) and its build-deps.
system-deps:
	tests/memcached/add-deb-src.sh
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	  memcached apache2 libmemcached-tools curl dpkg-dev libevent-dev patch

format:
	clang-format -i $(wildcard $(addsuffix /*.[ch],$(MODULES))) $(TEST_SRCS) tests/fuzz/*.c

lint:
	cppcheck --quiet --inline-suppr --enable=warning,performance,portability --error-exitcode=1 \
	  -I. -D_GNU_SOURCE --suppress=missingIncludeSystem $(MODULES)

clean:
	rm -rf build build-asan cctrace $(SAMPLE_BINS) $(FIXTURE_BINS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
