# cctrace build.  One module per directory; cli -> search -> engine -> lang, tracer, symbols; tracer -> disasm.
#
#   make            ./cctrace (and the samples)
#   make deps       Debian packages (apt-get; idempotent)
#   make system-deps  the real servers the system tests run, and what
#                   building memcached from source needs (as root)
#   make test       the whole Criterion suite, built with ASan + UBSan
#   make bench      side-by-side cost measurements (not part of make test)
#   make fuzz       fuzz the schedule parser and checker for FUZZ_TIME seconds

CC       ?= gcc
PKGS     := libunwind-ptrace libdw libelf capstone
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS   += $(PKG_LIBS) -ledit -lpthread -lthread_db -lm

BUILD    ?= build
Q        := $(if $(V),,@)   # make V=1 shows the commands
MODULES  := tracer disasm symbols lang engine search cli
LIB_SRCS := $(filter-out cli/main.c,$(wildcard $(addsuffix /*.c,$(MODULES))))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/cli/main.o

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
CRITERION_LIBS := $(shell pkg-config --libs criterion 2>/dev/null)

SAMPLE_DIRS := $(patsubst %/,%,$(dir $(wildcard samples/*/Makefile.inc)))
SAMPLE_CFLAGS := -std=gnu11 -g -O0 -pthread -Wall -Wextra -Werror
FIXTURE_LIBS := $(patsubst %.c,%.so,$(wildcard tests/fixtures/lib*.c))
FIXTURE_SRCS := $(filter-out tests/fixtures/lib%.c,$(wildcard tests/fixtures/*.c))
FIXTURE_BINS := $(FIXTURE_SRCS:%.c=%) $(FIXTURE_LIBS)

.PHONY: all deps system-deps samples fixtures test check-asan bench fuzz clean format lint
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
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS) $(CRITERION_LIBS)

# Samples and fixtures are targets, not part of cctrace: no sanitizers, -O0 so
# that lines and variables are where the source says.
include $(wildcard samples/*/Makefile.inc)
samples: $(SAMPLE_BINS)
fixtures: $(FIXTURE_BINS)
tests/fixtures/%: tests/fixtures/%.c
	$(CC) $(SAMPLE_CFLAGS) -o $@ $<
tests/fixtures/lib%.so: tests/fixtures/lib%.c
	$(CC) $(SAMPLE_CFLAGS) -shared -fPIC -o $@ $<

SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
test: samples fixtures
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" build-asan/cctrace test-bins
	CCTRACE=$(CURDIR)/build-asan/cctrace tests/run-all build-asan/tests
check-asan: test

test-bins: $(TEST_BINS)

bench: all fixtures
	bench/run

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

deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	  build-essential pkg-config libunwind-dev libcapstone-dev libelf-dev libdw-dev \
	  libcriterion-dev libedit-dev gdb tmux clang libclang-rt-dev

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
