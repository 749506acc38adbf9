/*
 * Tests of symbols/ against tests/fixtures/symfix (make fixtures).
 *
 * Expected line numbers come from LINE: markers in the fixture's source and
 * expected struct layouts from the fixture itself (symfix --layout), so
 * editing the fixture does not break the test.  The live tests start the
 * fixture under PTRACE_TRACEME, follow its threads with PTRACE_O_TRACECLONE
 * and wait for the worker thread to stop on the SIGUSR1 it raises at a
 * known depth; synchronisation is waitpid and a pipe only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/symbols.h"
#include "tracer/tracer.h"

/* --- fixture helpers --- */

static char root[PATH_MAX];

static const char *repo_root(void)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (root[0])
		return root;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert(n > 0);
	exe[n] = '\0';
	/* BUILD/tests/test_symbols -> repository root */
	snprintf(root, sizeof(root), "%s", dirname(dirname(dirname(exe))));
	return root;
}

static const char *fixture_named(const char *name)
{
	static char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", repo_root(), name);
	cr_assert(access(path, X_OK) == 0, "%s missing: run make fixtures", path);
	return path;
}

static const char *fixture(void)
{
	return fixture_named("symfix");
}

/* The line of fixture SRC carrying the marker LINE:name. */
static int marker_line_in(const char *src, const char *name)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", repo_root(), src);
	return h_marker_line(path, name);
}

static int marker_line(const char *name)
{
	return marker_line_in("symfix.c", name);
}

/* A value printed by symfix --layout. */
static uint64_t layout(const char *key)
{
	char cmd[PATH_MAX + 64], buf[256];
	size_t klen = strlen(key);
	uint64_t v = 0;
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s --layout", fixture());
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(buf, sizeof(buf), p))
		if (!strncmp(buf, key, klen) && buf[klen] == '=') {
			v = strtoull(buf + klen + 1, NULL, 10);
			found = true;
		}
	pclose(p);
	cr_assert(found, "layout key %s missing", key);
	return v;
}

static struct sym_space *open_offline(void)
{
	char err[256] = "";
	struct sym_space *s = sym_open_program(fixture(), err, sizeof(err));

	cr_assert_not_null(s, "sym_open_program: %s", err);
	return s;
}

/* --- offline view --- */

/* The source line of frame i: outer frames hold return addresses, so the
 * call is the byte before. */
static int frame_line(struct sym_space *s, const struct sym_frame *frames, int i)
{
	struct sym_loc loc;

	cr_assert_eq(sym_describe(s, frames[i].pc - (i ? 1 : 0), &loc), 0);
	return loc.line;
}

Test(symbols, open_errors)
{
	char err[256] = "";

	cr_assert_null(sym_open_program("/nonexistent/prog", err, sizeof(err)));
	cr_assert(strstr(err, "/nonexistent/prog") != NULL, "err: %s", err);
	err[0] = '\0';
	cr_assert_null(sym_open_program("/etc/passwd", err, sizeof(err)));
	cr_assert(err[0] != '\0');
	cr_assert_null(sym_open_pid(999999999, err, sizeof(err)));
}

Test(symbols, function_in_executable)
{
	struct sym_space *s = open_offline();
	struct sym_loc loc;
	uint64_t a;

	cr_assert_eq(sym_function(s, "worker", &a), 0);
	cr_assert_lt(a, 0x10000000, "PIE link-time address expected, got %#lx", (long)a);
	cr_assert_eq(sym_describe(s, a, &loc), 0);
	cr_assert_str_eq(loc.func, "worker");
	cr_assert_eq(loc.func_offset, 0);
	cr_assert_str_eq(loc.file, "symfix.c");
	cr_assert_str_eq(loc.module, "symfix");
	cr_assert_eq(sym_describe(s, a + 4, &loc), 0);
	cr_assert_str_eq(loc.func, "worker");
	cr_assert_eq(loc.func_offset, 4);
	sym_close(s);
}

Test(symbols, function_in_libc)
{
	static const char *const names[] = {"close", "read", "pthread_mutex_lock",
					    "pthread_cond_wait"};
	struct sym_space *s = open_offline();
	struct sym_loc loc;
	uint64_t a;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_assert_eq(sym_function(s, names[i], &a), 0, "%s", names[i]);
		cr_assert_eq(sym_describe(s, a, &loc), 0);
		cr_assert_str_eq(loc.module, "libc.so.6", "%s in %s", names[i], loc.module);
		cr_assert_str_eq(loc.func, names[i]);
		cr_assert_eq(loc.func_offset, 0);
	}
	sym_close(s);
}

/* A name several modules define is the one ld.so binds the program's
 * calls to: serasan's free is AddressSanitizer's (libasan comes first in
 * its DT_NEEDED), not libc's, which its calls never reach.  (dwfl lists
 * modules by address, and libc's used to win.) */
Test(symbols, a_name_defined_twice_is_the_one_the_program_calls)
{
	char err[256] = "";
	struct sym_space *s = sym_open_program(fixture_named("serasan"), err, sizeof(err));
	struct sym_loc loc;
	uint64_t a;

	cr_assert_not_null(s, "sym_open_program: %s", err);
	cr_assert_eq(sym_function(s, "free", &a), 0);
	cr_assert_eq(sym_describe(s, a, &loc), 0);
	cr_expect(loc.module && strncmp(loc.module, "libasan", 7) == 0, "free in %s", loc.module);
	cr_assert_eq(sym_function(s, "pthread_create", &a), 0);
	cr_assert_eq(sym_describe(s, a, &loc), 0);
	cr_expect(loc.module && strncmp(loc.module, "libasan", 7) == 0, "pthread_create in %s",
		  loc.module);
	sym_close(s);
}

Test(symbols, unknown_names_and_suggestions)
{
	struct sym_space *s = open_offline();
	struct sym_var v;
	int64_t e;
	uint64_t a;
	const char *sug;

	cr_assert_eq(sym_function(s, "wrokr", &a), -1);
	sug = sym_suggest_function(s, "wrokr");
	cr_assert_not_null(sug);
	cr_assert_str_eq(sug, "worker");
	sug = sym_suggest_function(s, "midle");
	cr_assert_not_null(sug);
	cr_assert_str_eq(sug, "middle");
	cr_assert_null(sym_suggest_function(s, "zqxjvkwpz"));
	cr_assert_eq(sym_variable(s, "countr", &v), -1);
	sug = sym_suggest_variable(s, "countr");
	cr_assert_not_null(sug);
	cr_assert_str_eq(sug, "counter");
	cr_assert_null(sym_suggest_variable(s, "zqxjvkwpz"));
	cr_assert_eq(sym_enumerator(s, "PURPLE", &e), -1);
	sym_close(s);
}

static void check_line(struct sym_space *s, const char *file, int line, const char *func,
		       size_t min)
{
	uint64_t addrs[16];
	struct sym_loc loc;
	size_t n = 0, i;

	cr_assert_eq(sym_line(s, file, line, addrs, 16, &n), 0, "%s:%d", file, line);
	cr_assert_geq(n, min, "%s:%d: %zu addresses", file, line, n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(sym_describe(s, addrs[i], &loc), 0);
		cr_assert_str_eq(loc.file, "symfix.c");
		cr_assert_eq(loc.line, line, "%#lx is line %d, not %d", (long)addrs[i], loc.line,
			     line);
		cr_assert_str_eq(loc.func, func);
		if (i)
			cr_assert_gt(addrs[i], addrs[i - 1]);
	}
}

Test(symbols, lines)
{
	struct sym_space *s = open_offline();
	int sum = marker_line("worker_sum");
	uint64_t addrs[4], w;
	size_t n = 99;

	check_line(s, "symfix.c", sum, "worker", 1);
	check_line(s, "fixtures/symfix.c", sum, "worker", 1);
	check_line(s, "tests/fixtures/symfix.c", sum, "worker", 1);
	check_line(s, "symfix.c", sum + 2, "worker", 2); /* for: init and step/test */
	check_line(s, "symfix.c", marker_line("deep_raise"), "deep", 1);
	cr_assert_eq(sym_line(s, "nosuch.c", sum, addrs, 4, &n), -1);
	cr_assert_eq(n, 0);
	cr_assert_eq(sym_line(s, "xsymfix.c", sum, addrs, 4, &n), -1);
	cr_assert_eq(sym_line(s, "symfix.c", sum + 1, addrs, 4, &n), -1); /* blank */
	cr_assert_eq(sym_line(s, "symfix.c", 1, addrs, 4, &n), -1);	  /* comment */
	/* The first line of worker's body is past its entry (the prologue). */
	cr_assert_eq(sym_line(s, "symfix.c", sum, addrs, 4, &n), 0);
	cr_assert_eq(sym_function(s, "worker", &w), 0);
	cr_assert_gt(addrs[0], w);
	sym_close(s);
}

Test(symbols, scalar_variables)
{
	struct sym_space *s = open_offline();
	struct sym_var v;
	uint64_t a;

	cr_assert_eq(sym_variable(s, "counter", &v), 0);
	cr_assert_eq(sym_type_kind(v.type), SYM_T_SIGNED);
	cr_assert_eq(sym_type_size(v.type), 4);
	cr_assert_str_eq(sym_type_name(v.type), "int");
	cr_assert_eq(sym_function(s, "counter", &a), 0);
	cr_assert_eq(v.addr, a, "DWARF %#lx vs ELF %#lx", (long)v.addr, (long)a);

	cr_assert_eq(sym_variable(s, "hidden", &v), 0); /* file static */
	cr_assert_eq(sym_type_kind(v.type), SYM_T_SIGNED);
	cr_assert_eq(sym_type_size(v.type), 8);
	cr_assert_str_eq(sym_type_name(v.type), "long");
	cr_assert_neq(v.addr, 0);

	cr_assert_eq(sym_variable(s, "flags", &v), 0);
	cr_assert_eq(sym_type_kind(v.type), SYM_T_ARRAY);
	cr_assert_eq(sym_type_count(v.type), 16);
	cr_assert_str_eq(sym_type_name(v.type), "volatile unsigned char [16]");
	cr_assert_eq(sym_type_kind(sym_type_target(v.type)), SYM_T_UNSIGNED);

	cr_assert_eq(sym_variable(s, "fnptr", &v), 0);
	cr_assert_eq(sym_type_kind(v.type), SYM_T_POINTER);
	cr_assert_str_eq(sym_type_name(v.type), "int (*)(int)");
	cr_assert_eq(sym_type_kind(sym_type_target(v.type)), SYM_T_FUNCTION);

	cr_assert_eq(sym_variable(s, "anon_var", &v), 0);
	cr_assert_str_eq(sym_type_name(v.type), "anon_t");
	cr_assert_eq(sym_type_kind(v.type), SYM_T_STRUCT);
	sym_close(s);
}

static uint64_t member(const struct sym_type *t, const char *name, const struct sym_type **mt)
{
	uint64_t off = 12345;

	*mt = sym_type_member(t, name, &off);
	cr_assert_not_null(*mt, "member %s", name);
	return off;
}

Test(symbols, struct_layout)
{
	struct sym_space *s = open_offline();
	const struct sym_type *t, *m, *sub;
	struct sym_var v;

	cr_assert_eq(sym_variable(s, "bank", &v), 0);
	t = v.type;
	cr_assert_eq(sym_type_kind(t), SYM_T_STRUCT);
	cr_assert_str_eq(sym_type_name(t), "struct account");
	cr_assert_eq(sym_type_size(t), layout("sizeof_account"));

	cr_assert_eq(member(t, "id", &m), 0);
	cr_assert_str_eq(sym_type_name(m), "long");
	cr_assert_eq(member(t, "in", &m), layout("in"));
	cr_assert_str_eq(sym_type_name(m), "struct inner");
	cr_assert_eq(member(m, "tag", &sub), layout("in.tag"));
	cr_assert_str_eq(sym_type_name(sub), "char [3]");
	cr_assert_eq(member(t, "hist", &m), layout("hist"));
	cr_assert_str_eq(sym_type_name(m), "int [4]");
	cr_assert_eq(sym_type_count(m), 4);
	cr_assert_eq(sym_type_size(m), 16);
	cr_assert_str_eq(sym_type_name(sym_type_target(m)), "int");
	cr_assert_eq(member(t, "u_d", &m), layout("u_d")); /* anonymous union */
	cr_assert_eq(sym_type_kind(m), SYM_T_FLOAT);
	cr_assert_eq(member(t, "u_i", &m), layout("u_d"));
	cr_assert_eq(member(t, "s2", &m), layout("s2")); /* anonymous struct */
	cr_assert_str_eq(sym_type_name(m), "short");
	cr_assert_eq(member(t, "col", &m), layout("col"));
	cr_assert_eq(sym_type_kind(m), SYM_T_ENUM);
	cr_assert_str_eq(sym_type_name(m), "enum color");
	cr_assert_eq(sym_type_size(m), layout("sizeof_color"));
	cr_assert_eq(member(t, "next", &m), layout("next"));
	cr_assert_str_eq(sym_type_name(m), "struct account *");
	cr_assert_eq(sym_type_target(m), t, "types are interned");
	cr_assert_eq(member(t, "grid", &m), layout("grid"));
	cr_assert_str_eq(sym_type_name(m), "int [2][3]");
	cr_assert_eq(sym_type_count(m), 2);
	cr_assert_eq(sym_type_size(m), 24);
	sub = sym_type_target(m);
	cr_assert_str_eq(sym_type_name(sub), "int [3]");
	cr_assert_eq(sym_type_count(sub), 3);
	cr_assert_eq(sym_type_size(sub), 12);
	cr_assert_str_eq(sym_type_name(sym_type_target(sub)), "int");
	cr_assert_null(sym_type_member(t, "nosuch", NULL));
	cr_assert_null(sym_type_member(m, "x", NULL));

	cr_assert_eq(sym_variable(s, "bank_ptr", &v), 0);
	cr_assert_str_eq(sym_type_name(v.type), "struct account *");
	cr_assert_eq(sym_type_size(v.type), 8);
	cr_assert_eq(sym_type_target(v.type), t);
	cr_assert_eq(sym_variable(s, "const_bank", &v), 0); /* const account_t * */
	cr_assert_str_eq(sym_type_name(v.type), "const struct account *");
	cr_assert_eq(sym_type_kind(sym_type_target(v.type)), SYM_T_STRUCT);
	cr_assert_eq(sym_type_size(sym_type_target(v.type)), layout("sizeof_account"));
	cr_assert_not_null(sym_type_member(sym_type_target(v.type), "grid", NULL));
	sym_close(s);
}

Test(symbols, enums)
{
	struct sym_space *s = open_offline();
	struct sym_var v;
	int64_t e = 99;

	cr_assert_eq(sym_enumerator(s, "RED", &e), 0);
	cr_assert_eq(e, 0);
	cr_assert_eq(sym_enumerator(s, "GREEN", &e), 0);
	cr_assert_eq(e, 5);
	cr_assert_eq(sym_enumerator(s, "BLUE", &e), 0);
	cr_assert_eq(e, 6);
	cr_assert_eq(sym_enumerator(s, "NEGATIVE", &e), 0);
	cr_assert_eq(e, -3);
	cr_assert_eq(sym_variable(s, "shade", &v), 0);
	cr_assert_eq(sym_type_kind(v.type), SYM_T_ENUM);
	cr_assert_eq(sym_type_size(v.type), 4);
	sym_close(s);
}

Test(symbols, elf_only_variable)
{
	struct sym_space *s = open_offline();
	struct sym_var v;
	struct sym_loc loc;

	/* libc has no DWARF here: the ELF symbol gives address and size. */
	cr_assert_eq(sym_variable(s, "stdout", &v), 0);
	cr_assert_eq(sym_type_size(v.type), 8);
	cr_assert_eq(sym_describe(s, v.addr, &loc), 0);
	cr_assert_str_eq(loc.module, "libc.so.6");
	sym_close(s);
}

/* An address's symbol comes with its size, without debugging information:
 * how the serialized search sizes a variable (engine/serialvars.c), libc's
 * included, whose DWARF it no longer reads for that. */
Test(symbols, a_symbol_covering_an_address_has_its_size)
{
	struct sym_space *s = open_offline();
	struct sym_var v;
	struct sym_loc loc;

	cr_assert_eq(sym_variable(s, "stdout", &v), 0);
	cr_assert_eq(sym_describe_function(s, v.addr + 3, &loc), 0);
	cr_expect_str_eq(loc.func, "stdout");
	cr_expect_eq(loc.func_offset, 3);
	cr_expect_eq(loc.func_size, 8);
	cr_assert_eq(sym_variable(s, "counter", &v), 0);
	cr_assert_eq(sym_describe(s, v.addr, &loc), 0);
	cr_expect_str_eq(loc.func, "counter");
	cr_expect_eq(loc.func_size, sym_type_size(v.type));
	sym_close(s);
}

/* --- C++ names --- */

/* A C++ function is described by its mangled name (what schedules and
 * JSON keep) and shown demangled, without parameters or a template's
 * return type: a method, an overload, a lambda's operator(), a template
 * instance, a destructor, an operator, a constructor, a function in an
 * anonymous namespace.  A C name is shown as it is. */
Test(symbols, a_cxx_function_is_shown_demangled)
{
	static const struct {
		const char *mangled, *shown;
	} names[] = {
	    {"_ZN4bank7Account7depositEi", "bank::Account::deposit"},
	    {"_ZN4bank7Account7depositEd", "bank::Account::deposit"},
	    {"_ZNK4bank7Account7balanceEv", "bank::Account::balance"},
	    {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"},
	    {"_ZNSt10lock_guardISt5mutexED1Ev", "std::lock_guard<std::mutex>::~lock_guard"},
	    {"_ZSt13__invoke_implIvZ4mainEUlvE_JEET_St14__invoke_otherOT0_DpOT1_",
	     "std::__invoke_impl<void, main::{lambda()#1}>"},
	    {"_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZ4mainEUlvE_EEEEE6_M_runEv",
	     "std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > "
	     ">::_M_run"},
	    {"_ZN4bankltERKNS_7AccountES2_", "bank::operator<"},
	    {"_ZN12_GLOBAL__N_16openedEv", "(anonymous namespace)::opened"},
	    {"_ZN4bank7AccountC2Eb", "bank::Account::Account"},
	    {"main", "main"},
	};
	struct sym_var count;
	char err[256] = "";
	struct sym_space *s = sym_open_program(fixture_named("sercxx"), err, sizeof(err));
	struct sym_loc loc;
	uint64_t addr;
	size_t i;

	cr_assert_not_null(s, "%s", err);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_assert_eq(sym_function(s, names[i].mangled, &addr), 0, "%s", names[i].mangled);
		cr_assert_eq(sym_describe(s, addr + 1, &loc), 0);
		cr_expect_str_eq(loc.func, names[i].mangled);
		cr_expect_str_eq(loc.pretty, names[i].shown);
		cr_assert_eq(sym_describe_function(s, addr, &loc), 0);
		cr_expect_str_eq(loc.pretty, names[i].shown, "without debugging information");
	}
	/* the name a written schedule gives: shown when it stands for this
	 * function alone (quoted by the writer where no identifier spells
	 * it), else the symbol */
	{
		static const struct {
			const char *symbol, *written;
		} writes[] = {
		    {"_ZNK4bank7Account7balanceEv", "bank::Account::balance"},
		    {"_ZN4bank7AccountC2Eb", "bank::Account::Account"},
		    {"_ZN4bank7Account7depositEi", "_ZN4bank7Account7depositEi"}, /* overloaded */
		    {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"},	  /* a lambda */
		    {"_ZN4bankltERKNS_7AccountES2_", "bank::operator<"},	  /* an operator */
		    {"main", "main"},
		};

		for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
			cr_assert_eq(sym_function(s, writes[i].symbol, &addr), 0);
			cr_assert_eq(sym_describe_function(s, addr + 2, &loc), 0);
			cr_expect_str_eq(sym_schedule_name(s, &loc), writes[i].written);
		}
	}
	/* a static local: the parameters of the function it is in go too */
	cr_assert_eq(sym_variable(s, "_ZZN12_GLOBAL__N_16openedEvE5count", &count), 0);
	cr_assert_eq(sym_describe_function(s, count.addr, &loc), 0);
	cr_expect_str_eq(loc.pretty, "(anonymous namespace)::opened::count");
	sym_close(s);
}

/* --- a static executable's own code --- */

static bool in_ranges(const struct sym_range *r, size_t n, uint64_t a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return true;
	return false;
}

/* sercounter linked statically: its own functions are its own code, and
 * the libc linked in around them (global and static functions alike) is
 * not, whether the program's compile units say so or, without debugging
 * information, its symbol table and libc.a's index. */
static void expect_own_code_apart_from_libc(const char *fixture_name)
{
	static const char *const own[] = {"worker", "main"};
	static const char *const libc[] = {"pthread_mutex_lock", "pthread_create",    "malloc",
					   "_int_malloc",	 "__libc_start_main", "abort"};
	char err[256] = "";
	struct sym_space *s = sym_open_program(fixture_named(fixture_name), err, sizeof(err));
	const struct sym_range *r;
	size_t n, i;
	uint64_t a;

	cr_assert_not_null(s, "sym_open_program: %s", err);
	cr_assert_eq(sym_static_own_code(s, &r, &n), 0, "%s: no own code", fixture_name);
	for (i = 1; i < n; i++)
		cr_assert_gt(r[i].lo, r[i - 1].hi, "ranges %zu and %zu not apart and in order",
			     i - 1, i);
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		cr_assert_eq(sym_function(s, own[i], &a), 0, "%s not found", own[i]);
		cr_expect(in_ranges(r, n, a), "%s: %s (%#lx) is not its own code", fixture_name,
			  own[i], (unsigned long)a);
	}
	for (i = 0; i < sizeof(libc) / sizeof(libc[0]); i++) {
		cr_assert_eq(sym_function(s, libc[i], &a), 0, "%s not found", libc[i]);
		cr_expect(!in_ranges(r, n, a), "%s: libc's %s (%#lx) counted as its own code",
			  fixture_name, libc[i], (unsigned long)a);
	}
	sym_close(s);
}

Test(symbols, a_static_programs_own_code_by_its_compile_units)
{
	expect_own_code_apart_from_libc("serstatic");
}

Test(symbols, a_static_programs_own_code_by_its_symbol_table)
{
	expect_own_code_apart_from_libc("serstatic-nodebug");
}

/* A dynamically linked program's libc is a file of its own: no ranges. */
Test(symbols, a_dynamic_program_has_no_static_own_code)
{
	struct sym_space *s = open_offline();
	const struct sym_range *r;
	size_t n;

	cr_expect_eq(sym_static_own_code(s, &r, &n), -1);
	sym_close(s);
}

/* A linear decode starts at each section's first byte: _init, _fini and
 * main's .text are each inside one, _init and _fini at a start (serial's
 * every_access_as_a_point_leaves_the_program_whole shows what a decode
 * carried across the gap between two does). */
Test(symbols, code_sections_start_where_a_decode_may)
{
	static const char *const starts[] = {"_init", "_fini"};
	char err[256] = "";
	struct sym_space *s = sym_open_program(fixture_named("serpiexit"), err, sizeof(err));
	const struct sym_range *r;
	size_t n, i, k;
	uint64_t a;

	cr_assert_not_null(s, "sym_open_program: %s", err);
	cr_assert_eq(sym_code_sections(s, &r, &n), 0);
	cr_assert_geq(n, 3, "only %zu code sections", n);
	for (i = 1; i < n; i++) /* offline, libc's link-time addresses overlap ours */
		cr_assert_geq(r[i].lo, r[i - 1].lo, "sections %zu and %zu out of order", i - 1, i);
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		cr_assert_eq(sym_function(s, starts[i], &a), 0, "%s not found", starts[i]);
		for (k = 0; k < n && r[k].lo != a; k++)
			;
		cr_expect_lt(k, n, "%s (%#lx) begins no section", starts[i], (unsigned long)a);
	}
	cr_assert_eq(sym_function(s, "main", &a), 0);
	cr_expect(in_ranges(r, n, a), "main (%#lx) is in no code section", (unsigned long)a);
	sym_close(s);
}

/* --- live view --- */

struct live {
	pid_t pid, tid;
	void *worker, *counter, *hidden, *bank, *close;
};

static void cont(pid_t tid, int sig)
{
	cr_assert_eq(ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig), 0, "PTRACE_CONT: %s",
		     strerror(errno));
}

/* Run until the worker thread stops on its SIGUSR1. */
static void wait_for_usr1(struct live *l)
{
	int st, sig;
	pid_t w;

	for (;;) {
		w = waitpid(-1, &st, __WALL);
		cr_assert(w > 0, "waitpid: %s", strerror(errno));
		cr_assert(!(w == l->pid && (WIFEXITED(st) || WIFSIGNALED(st))), "fixture died");
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		if (sig == SIGUSR1) {
			l->tid = w;
			return;
		}
		if (sig == SIGTRAP && (st >> 16) == PTRACE_EVENT_CLONE)
			cont(w, 0);
		else if (sig == SIGSTOP || sig == SIGTRAP)
			cont(w, 0); /* new thread's first stop */
		else
			cont(w, sig);
	}
}

static void start_live(struct live *l)
{
	int fds[2], st, n;
	char buf[512];
	FILE *f;

	memset(l, 0, sizeof(*l));
	cr_assert_eq(pipe(fds), 0);
	l->pid = fork();
	cr_assert_geq(l->pid, 0);
	if (l->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl(fixture(), "symfix", "--live", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	cr_assert_eq(waitpid(l->pid, &st, 0), l->pid);
	cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP, "no exec stop");
	cr_assert_eq(ptrace(PTRACE_SETOPTIONS, l->pid, 0,
			    (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)),
		     0);
	cont(l->pid, 0);
	wait_for_usr1(l);
	f = fdopen(fds[0], "r");
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	n = sscanf(buf, "worker=%p counter=%p hidden=%p bank=%p close=%p", &l->worker, &l->counter,
		   &l->hidden, &l->bank, &l->close);
	cr_assert_eq(n, 5, "bad line: %s", buf);
}

static void stop_live(struct live *l)
{
	kill(l->pid, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(symbols, live_addresses)
{
	struct live l;
	struct sym_space *s;
	struct sym_var v;
	struct sym_loc loc;
	char err[256] = "";
	uint64_t a, b;
	double t0, dt;

	start_live(&l);
	t0 = now();
	s = sym_open_pid(l.pid, err, sizeof(err));
	cr_assert_not_null(s, "sym_open_pid: %s", err);
	cr_assert_eq(sym_function(s, "worker", &a), 0);
	cr_assert_eq(sym_function(s, "close", &b), 0);
	dt = now() - t0;
	cr_assert_lt(dt, 2.0, "open + two lookups took %.3fs", dt);
	cr_assert_eq(a, (uint64_t)(uintptr_t)l.worker, "worker %#lx vs %p", (long)a, l.worker);
	cr_assert_eq(b, (uint64_t)(uintptr_t)l.close, "close %#lx vs %p", (long)b, l.close);
	cr_assert_eq(sym_variable(s, "counter", &v), 0);
	cr_assert_eq(v.addr, (uint64_t)(uintptr_t)l.counter);
	cr_assert_eq(sym_variable(s, "hidden", &v), 0);
	cr_assert_eq(v.addr, (uint64_t)(uintptr_t)l.hidden);
	cr_assert_eq(sym_variable(s, "bank", &v), 0);
	cr_assert_eq(v.addr, (uint64_t)(uintptr_t)l.bank);
	cr_assert_eq(sym_describe(s, a, &loc), 0);
	cr_assert_str_eq(loc.func, "worker");
	cr_assert_str_eq(loc.module, "symfix");
	cr_assert_eq(sym_describe(s, b, &loc), 0);
	cr_assert_str_eq(loc.func, "close");
	cr_assert_str_eq(loc.module, "libc.so.6");
	cr_assert_eq(sym_describe(s, 8, &loc), -1);
	cr_assert_null(loc.func);
	cr_assert_null(loc.module);

	cr_assert_eq(sym_refresh(s), 0);
	cr_assert_str_eq(loc.func == NULL ? "" : "x", ""); /* old strings stay valid */
	cr_assert_eq(sym_function(s, "worker", &a), 0);
	cr_assert_eq(a, (uint64_t)(uintptr_t)l.worker);
	sym_close(s);
	stop_live(&l);
}

Test(symbols, live_backtrace)
{
	static const char *const want[] = {"deep", "middle", "outer", "thread_main"};
	struct sym_frame frames[32];
	struct live l;
	struct sym_space *s;
	char err[256] = "";
	size_t k = 0;
	int n, i, deep = -1;

	start_live(&l);
	s = sym_open_pid(l.pid, err, sizeof(err));
	cr_assert_not_null(s, "sym_open_pid: %s", err);
	n = sym_backtrace(s, l.tid, frames, 32);
	cr_assert_gt(n, 4, "only %d frames", n);
	for (i = 0; i < n && k < 4; i++) {
		if (!frames[i].loc.func || strcmp(frames[i].loc.func, want[k]) != 0)
			continue;
		if (k == 0)
			deep = i;
		cr_assert_neq(frames[i].sp, 0);
		cr_assert_str_eq(frames[i].loc.module, "symfix");
		k++;
	}
	cr_assert_eq(k, 4, "found %zu of the expected frames in order", k);
	/* Frames name functions only; lines come from sym_describe of the call. */
	cr_assert_null(frames[deep].loc.file);
	cr_assert_eq(frame_line(s, frames, deep), marker_line("deep_raise"));
	cr_assert_eq(frame_line(s, frames, deep + 1), marker_line("middle_call"));
	cr_assert_eq(frame_line(s, frames, deep + 2), marker_line("outer_call"));
	cr_assert_gt(frames[deep + 1].sp, frames[deep].sp);
	/* Twice, through the cached address space. */
	cr_assert_eq(sym_backtrace(s, l.tid, frames, 32), n);
	cr_assert_eq(sym_backtrace(s, l.tid, frames, 2), 2);
	sym_close(s);
	stop_live(&l);
}

/* --- variables as a stopped thread sees them (tests/fixtures/scopes) --- */

#define DEADLINE_MS 60000

enum scope_stop {
	SHAPES_ENTRY,
	SHAPES_INNER,
	SHAPES_OUTER,
	RECURSE,
	TLS,
	REG_SQUARE,
	INLINED,
	JOIN,
	NSTOPS
};

static const char *const stop_markers[NSTOPS] = {[SHAPES_INNER] = "shapes_inner",
						 [SHAPES_OUTER] = "shapes_outer",
						 [RECURSE] = "recurse",
						 [TLS] = "tls",
						 [INLINED] = "inlined"};

struct scopes_run {
	struct tracer *t;
	struct tr_process *p;
	struct sym_space *s;
	uint64_t addr[NSTOPS];
	int hits[NSTOPS];
	struct sym_thread_view view;
	uint64_t n_at_entry;
	uint64_t here[3];
	uint64_t tls[2];
};

static int peek_target(void *ctx, uint64_t addr, uint64_t *value)
{
	return tracer_read(ctx, addr, value, sizeof(*value));
}

static uint64_t peek(struct scopes_run *r, uint64_t addr)
{
	uint64_t v = 0;

	cr_assert_eq(tracer_read(r->p, addr, &v, sizeof(v)), 0, "cannot read %#lx", (long)addr);
	return v;
}

static int peek_int(struct scopes_run *r, uint64_t addr)
{
	return (int)(uint32_t)peek(r, addr);
}

/* Element I of the fixture's global pointer array (or pointer) NAME. */
static uint64_t stored(struct scopes_run *r, const char *name, int i)
{
	struct sym_var v;

	cr_assert_eq(sym_variable(r->s, name, &v), 0, "global %s", name);
	return peek(r, v.addr + 8 * (uint64_t)i);
}

static struct sym_var var_at(struct scopes_run *r, const char *name)
{
	struct sym_var v = {0};
	char err[256] = "";

	cr_assert_eq(sym_variable_at(r->s, name, &r->view, &v, err, sizeof(err)), 0, "%s: %s", name,
		     err);
	cr_assert_not_null(v.type, "%s", name);
	return v;
}

static void var_at_fails(struct scopes_run *r, const char *name, const char *want)
{
	struct sym_var v = {0};
	char err[256] = "";

	cr_assert_eq(sym_variable_at(r->s, name, &r->view, &v, err, sizeof(err)), -1,
		     "%s resolved to %#lx", name, (long)v.addr);
	cr_assert_str_eq(err, want);
}

/* The same, where the rest of the message depends on libc's debug information. */
static void var_at_fails_prefix(struct scopes_run *r, const char *name, const char *want)
{
	struct sym_var v = {0};
	char err[256] = "";

	cr_assert_eq(sym_variable_at(r->s, name, &r->view, &v, err, sizeof(err)), -1,
		     "%s resolved to %#lx", name, (long)v.addr);
	cr_assert(!strncmp(err, want, strlen(want)), "%s", err);
}

/* A variable in a register has no address, but its value: the reason
 * it has no address is said all the same, for '&' and watches. */
static void check_register(struct scopes_run *r)
{
	struct sym_var v = {0};
	char err[256] = "";

	cr_assert_eq(sym_variable_at(r->s, "x", &r->view, &v, err, sizeof(err)), 0, "%s", err);
	cr_expect(v.no_address && v.value_known && v.value == 9, "x: %d %d %lu", v.no_address,
		  v.value_known, (unsigned long)v.value);
	cr_expect_str_eq(err, "'x' lives in register rdi at this point");
}

static void check_shapes_inner(struct scopes_run *r)
{
	struct sym_var v, g;
	const struct sym_type *m;
	uint64_t off = 0;
	char want[128];

	v = var_at(r, "total"); /* the inner one shadows the outer one */
	cr_assert_eq(v.addr, stored(r, "at_inner_total", 0));
	cr_assert_eq(peek_int(r, v.addr), 21);
	cr_assert_str_eq(sym_type_name(v.type), "int");
	v = var_at(r, "n");
	cr_assert_eq(v.addr, stored(r, "at_n", 0));
	cr_assert_eq(v.addr, r->n_at_entry, "n at entry %#lx, in the body %#lx",
		     (long)r->n_at_entry, (long)v.addr);
	cr_assert_eq(peek_int(r, v.addr), 7);
	v = var_at(r, "p");
	cr_assert_eq(v.addr, stored(r, "at_p", 0));
	cr_assert_str_eq(sym_type_name(v.type), "int *");
	cr_assert_eq(sym_variable(r->s, "globl", &g), 0);
	cr_assert_eq(peek(r, v.addr), g.addr, "p points to globl");
	v = var_at(r, "s");
	cr_assert_eq(v.addr, stored(r, "at_s", 0));
	cr_assert_str_eq(sym_type_name(v.type), "struct pair");
	m = sym_type_member(v.type, "second", &off);
	cr_assert_not_null(m);
	cr_assert_eq(peek(r, v.addr + off), 8 + 21);
	v = var_at(r, "calls"); /* a static local */
	cr_assert_eq(v.addr, stored(r, "at_calls", 0));
	cr_assert_eq(peek_int(r, v.addr), 1);
	v = var_at(r, "globl"); /* not a local: the global */
	cr_assert_eq(v.addr, g.addr);
	snprintf(want, sizeof(want), "no variable 'here' in scope at shapes (scopes.c:%d)",
		 marker_line_in("scopes.c", "shapes_inner"));
	var_at_fails(r, "here", want);
}

static void check_shapes_outer(struct scopes_run *r)
{
	struct sym_var v = var_at(r, "total");

	cr_assert_eq(v.addr, stored(r, "at_outer_total", 0));
	cr_assert_neq(v.addr, stored(r, "at_inner_total", 0));
	cr_assert_eq(peek_int(r, v.addr), 14);
}

static void check_recurse(struct scopes_run *r)
{
	int depth = peek_int(r, var_at(r, "depth").addr);
	struct sym_var v;

	cr_assert(depth >= 0 && depth < 3, "depth %d", depth);
	cr_assert_eq(r->here[depth], 0, "depth %d twice", depth);
	v = var_at(r, "here");
	cr_assert_eq(v.addr, stored(r, "at_here", depth));
	cr_assert_eq(peek_int(r, v.addr), depth * 10 + 1);
	r->here[depth] = v.addr;
}

static void check_tls(struct scopes_run *r)
{
	struct sym_var v = var_at(r, "id");
	int id = peek_int(r, v.addr);
	char name[9] = "";

	cr_assert(id == 0 || id == 1, "id %d", id);
	cr_assert_eq(v.addr, stored(r, "at_id", id));
	v = var_at(r, "tls_counter");
	cr_assert_eq(v.addr, stored(r, "at_tls", id), "thread %d: %#lx", id, (long)v.addr);
	cr_assert_eq(peek_int(r, v.addr), id * 100 + 7);
	cr_assert_str_eq(sym_type_name(v.type), "int");
	r->tls[id] = v.addr;
	v = var_at(r, "tls_name"); /* initialised: in .tdata, before the .tbss of tls_counter */
	cr_assert_str_eq(sym_type_name(v.type), "char [24]");
	cr_assert_eq(tracer_read(r->p, v.addr, name, 8), 0);
	cr_assert_str_eq(name, "initiali");
	v = var_at(r, "asm_tls"); /* no DWARF: the ELF STT_TLS symbol */
	cr_assert_eq(v.addr, stored(r, "at_asm_tls", id), "thread %d: %#lx", id, (long)v.addr);
	cr_assert_eq(peek(r, v.addr), (uint64_t)id + 1000);
	cr_assert_eq(sym_type_size(v.type), 8);
	v = var_at(r, "errno"); /* libc's: a library's TLS, through libthread_db */
	cr_assert_eq(v.addr, stored(r, "at_errno", id), "thread %d: %#lx", id, (long)v.addr);
	cr_assert_eq(peek_int(r, v.addr), id + 40);
	cr_assert_eq(sym_type_size(v.type), 4);
}

/* In main, inside the inlined body of twice(4). */
static void check_inlined(struct scopes_run *r)
{
	struct sym_var v = var_at(r, "doubled");
	char want[128];

	cr_assert_eq(v.addr, stored(r, "at_doubled", 0));
	cr_assert_eq(peek_int(r, v.addr), 8);
	v = var_at(r, "v");
	cr_assert_eq(v.addr, stored(r, "at_v", 0));
	cr_assert_eq(peek_int(r, v.addr), 4);
	cr_assert_str_eq(sym_type_name(v.type), "int");
	/* C scopes, not the stack: main's locals are not visible in twice(). */
	snprintf(want, sizeof(want), "no variable 'sum' in scope at main (scopes.c:%d)",
		 marker_line_in("scopes.c", "inlined"));
	var_at_fails(r, "sum", want);
}

/* The main thread in pthread_join, a libc function without DWARF: only
 * TLS and globals are visible, and the executable's TLS comes from the
 * DWARF index rather than from the scopes of the pc. */
static void check_join(struct scopes_run *r)
{
	struct sym_var v = var_at(r, "tls_counter");

	cr_assert_eq(v.addr, stored(r, "at_tls_main", 0));
	cr_assert_eq(peek_int(r, v.addr), 3);
	cr_assert_neq(v.addr, r->tls[0]);
	var_at_fails_prefix(r, "total", "no variable 'total' in scope at pthread_join");
	/* libc's own parameter (when libc6-dbg gives it DWARF) is not a name
	 * schedules see: a system library's scopes are skipped. */
	var_at_fails_prefix(r, "threadid", "no variable 'threadid' in scope at pthread_join");
}

static void on_stop(struct scopes_run *r, struct tr_thread *th, int stop)
{
	r->view.tid = tracer_thread_tid(th);
	r->view.regs = tracer_regs(th);
	cr_assert_not_null(r->view.regs);
	r->hits[stop]++;
	switch (stop) {
	case SHAPES_ENTRY: /* before the prologue: the frame base comes from the CFI */
		r->n_at_entry = var_at(r, "n").addr;
		break;
	case SHAPES_INNER:
		check_shapes_inner(r);
		break;
	case SHAPES_OUTER:
		check_shapes_outer(r);
		break;
	case RECURSE:
		check_recurse(r);
		break;
	case TLS:
		check_tls(r);
		break;
	case INLINED:
		check_inlined(r);
		break;
	case JOIN:
		check_join(r);
		break;
	default: /* reg_square(9), built -O2, on entry */
		check_register(r);
		break;
	}
}

static void scopes_breakpoints(struct scopes_run *r)
{
	char err[256] = "";
	size_t n;
	int i;

	cr_assert_eq(sym_function(r->s, "shapes", &r->addr[SHAPES_ENTRY]), 0);
	cr_assert_eq(sym_function(r->s, "reg_square", &r->addr[REG_SQUARE]), 0);
	cr_assert_eq(sym_function(r->s, "pthread_join", &r->addr[JOIN]), 0);
	for (i = 0; i < NSTOPS; i++) {
		if (stop_markers[i])
			cr_assert_eq(sym_line(r->s, "scopes.c",
					      marker_line_in("scopes.c", stop_markers[i]),
					      &r->addr[i], 1, &n),
				     0, "%s", stop_markers[i]);
		cr_assert_eq(tracer_break_insert(r->p, r->addr[i], err, sizeof(err)), 0, "%s", err);
	}
}

Test(symbols, variables_at_breakpoints)
{
	char *argv[] = {(char *)fixture_named("scopes"), NULL};
	struct tracer_options opt = {.pin_cpu = false};
	struct scopes_run r = {0};
	struct tr_event ev;
	char err[256] = "";
	int i;

	r.t = tracer_new(&opt);
	cr_assert_eq(tracer_launch(r.t, argv, err, sizeof(err)), 0, "%s", err);
	r.p = tracer_processes(r.t);
	r.view.peek = peek_target;
	r.view.ctx = r.p;
	r.s = sym_open_pid(tracer_process_pid(r.p), err, sizeof(err));
	cr_assert_not_null(r.s, "%s", err);
	scopes_breakpoints(&r);
	for (;;) {
		cr_assert_eq(tracer_wait(r.t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		if (ev.kind == TR_EV_PROCESS_EXIT)
			break;
		cr_assert_neq(ev.kind, TR_EV_SIGNAL, "signal %d", ev.signo);
		for (i = 0; ev.kind == TR_EV_BREAK && i < NSTOPS; i++)
			if (ev.addr == r.addr[i])
				on_stop(&r, ev.thread, i);
		cr_assert_eq(tracer_resume(ev.thread), 0);
	}
	cr_assert_eq(ev.status, 0, "the fixture failed");
	cr_assert_eq(r.hits[SHAPES_ENTRY] + r.hits[SHAPES_INNER] + r.hits[SHAPES_OUTER], 3);
	cr_assert_eq(r.hits[RECURSE], 3);
	cr_assert_eq(r.hits[TLS], 2);
	cr_assert_eq(r.hits[REG_SQUARE], 1);
	cr_assert_eq(r.hits[INLINED], 1);
	cr_assert_eq(r.hits[JOIN], 2);
	cr_assert(r.here[0] > r.here[1] && r.here[1] > r.here[2], "one frame below the other");
	cr_assert_neq(r.tls[0], r.tls[1]);
	sym_close(r.s);
	tracer_free(r.t);
}

Test(symbols, variable_scope_offline)
{
	struct sym_space *s = sym_open_program(fixture_named("scopes"), NULL, 0);
	const struct sym_type *t = NULL;

	cr_assert_not_null(s);
	cr_assert_eq(sym_variable_scope(s, "total", &t), SYM_SCOPE_LOCAL);
	cr_assert_str_eq(sym_type_name(t), "int");
	cr_assert_eq(sym_variable_scope(s, "p", &t), SYM_SCOPE_LOCAL);
	cr_assert_str_eq(sym_type_name(t), "int *");
	cr_assert_eq(sym_variable_scope(s, "calls", &t), SYM_SCOPE_LOCAL);
	cr_assert_eq(sym_variable_scope(s, "tls_counter", &t), SYM_SCOPE_TLS);
	cr_assert_str_eq(sym_type_name(t), "int");
	cr_assert_eq(sym_variable_scope(s, "asm_tls", &t), SYM_SCOPE_TLS);
	cr_assert_eq(sym_type_size(t), 8);
	cr_assert_eq(sym_variable_scope(s, "errno", &t), SYM_SCOPE_TLS);
	cr_assert_eq(sym_type_size(t), 4);
	cr_assert_eq(sym_variable_scope(s, "globl", &t), SYM_SCOPE_GLOBAL);
	cr_assert_str_eq(sym_type_name(t), "int");
	cr_assert_eq(sym_variable_scope(s, "len", &t), SYM_SCOPE_GLOBAL);
	cr_assert_str_eq(sym_type_name(t), "int");
	cr_assert_eq(sym_variable_scope(s, "nosuch", &t), SYM_SCOPE_NONE);
	cr_assert_eq(sym_variable_scope(s, "threadid", &t), SYM_SCOPE_NONE); /* libc's local */
	cr_assert_null(t);
	cr_assert_eq(sym_variable_scope(s, "tls_worker", NULL), SYM_SCOPE_NONE);
	sym_close(s);
}

Test(symbols, variable_at_needs_a_live_view)
{
	struct sym_space *s = sym_open_program(fixture_named("scopes"), NULL, 0);
	struct user_regs_struct regs = {0};
	struct sym_thread_view view = {.tid = 1, .regs = &regs};
	struct sym_var v;
	char err[128] = "";

	cr_assert_not_null(s);
	cr_assert_eq(sym_variable_at(s, "total", &view, &v, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "'total': locals and TLS need a live process");
	sym_close(s);
}

/* A library loaded with dlopen: its TLS block exists in a thread only after
 * the thread first touched it, and the answer says so until then. */
Test(symbols, dlopen_library_tls)
{
	char *argv[] = {(char *)fixture_named("tlsdyn"), NULL};
	struct tracer_options opt = {.pin_cpu = false};
	struct scopes_run r = {0};
	uint64_t loaded, touched;
	struct tr_event ev;
	struct sym_var v;
	char err[256] = "", want[128];
	int stops = 0;

	r.t = tracer_new(&opt);
	cr_assert_eq(tracer_launch(r.t, argv, err, sizeof(err)), 0, "%s", err);
	r.p = tracer_processes(r.t);
	r.view.peek = peek_target;
	r.view.ctx = r.p;
	r.s = sym_open_pid(tracer_process_pid(r.p), err, sizeof(err));
	cr_assert_not_null(r.s, "%s", err);
	cr_assert_eq(sym_function(r.s, "loaded", &loaded), 0);
	cr_assert_eq(sym_function(r.s, "touched", &touched), 0);
	cr_assert_eq(tracer_break_insert(r.p, loaded, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tracer_break_insert(r.p, touched, err, sizeof(err)), 0, "%s", err);
	for (;;) {
		cr_assert_eq(tracer_wait(r.t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		if (ev.kind == TR_EV_PROCESS_EXIT)
			break;
		cr_assert_neq(ev.kind, TR_EV_SIGNAL, "signal %d", ev.signo);
		if (ev.kind == TR_EV_BREAK && (ev.addr == loaded || ev.addr == touched)) {
			r.view.tid = tracer_thread_tid(ev.thread);
			r.view.regs = tracer_regs(ev.thread);
			cr_assert_eq(sym_refresh(r.s), 0); /* the library is new */
			stops++;
		}
		if (ev.kind == TR_EV_BREAK && ev.addr == loaded) {
			snprintf(want, sizeof(want),
				 "'dyn_tls': libtlsdyn.so's TLS block is not allocated yet in "
				 "thread %d",
				 (int)tracer_thread_tid(ev.thread));
			var_at_fails(&r, "dyn_tls", want);
		} else if (ev.kind == TR_EV_BREAK && ev.addr == touched) {
			v = var_at(&r, "dyn_tls");
			cr_assert_eq(v.addr, stored(&r, "at_dyn", 0));
			cr_assert_eq(peek(&r, v.addr), 42);
			cr_assert_str_eq(sym_type_name(v.type), "long");
		}
		cr_assert_eq(tracer_resume(ev.thread), 0);
	}
	cr_assert_eq(ev.status, 0, "the fixture failed");
	cr_assert_eq(stops, 2);
	sym_close(r.s);
	tracer_free(r.t);
}
