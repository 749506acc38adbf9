/*
 * test_cxx.c: a C++ program, as its developer reads it.
 *
 * tests/fixtures/sercxx has a lost update in bank::Account::deposit,
 * which two std::threads run through lambdas.  Its symbols are mangled;
 * cctrace shows them demangled in traces, stacks and reports, writes
 * schedules that replay, and takes the shown names in a schedule: a name
 * that stands for one function finds it, one that stands for overloads
 * is refused with the overloads' symbols to choose from.
 *
 * tests/fixtures/cxxnames has its lost update in a class template's
 * method and in lambdas: the bug schedules of `cctrace test` write those
 * names quoted, at("NAME"+0xOFF), and they find the same address again
 * and replay.  Names given in part are taken as gdb takes them, or
 * refused with every candidate.
 */
#include "engine/engine.h"
#include "lang/lang.h"
#include "symbols/symbols.h"
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <string.h>

#define CXX "tests/fixtures/sercxx"

TestSuite(cxx, .timeout = 120);

/* The profile's variables have names of their own: the two threads'
 * states are allocated on one line of <thread> (std_thread.h), in two
 * instances of its template. */
static void expect_distinct_variables(const char *err)
{
	const char *line = strstr(err, "variables: ");
	char names[16][64];
	int n = 0, i, j;

	cr_assert_not_null(line, "no profile line:\n%s", err);
	line += strlen("variables: ");
	while (n < 16 && *line && *line != '\n') {
		size_t len = strcspn(line, ",\n");

		snprintf(names[n++], sizeof(names[0]), "%.*s", (int)len, line);
		line += len;
		if (*line == ',')
			line += 2;
	}
	cr_assert_geq(n, 2, "%s", err);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			cr_expect_str_neq(names[i], names[j], "two variables named alike:\n%s",
					  err);
}

/* The search finds the lost update; its report names the C++ functions
 * as shown, and its schedule replays 10 of 10. */
Test(cxx, a_race_in_a_method_is_found_and_reported_with_demangled_names)
{
	char *dir = h_temp_dir(), *text;
	struct h_result r =
	    H_RUN(h_cctrace(), "test", "--seed", "1", "--runs", "100", "--out", dir, "--", CXX);

	cr_assert_eq(r.code, 1, "no bug in 100 runs (exit %d):\n%s", r.code, r.err);
	expect_distinct_variables(r.err);
	text = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_expect(strstr(text, " bank::Account::deposit "), "no demangled deposit:\n%s", text);
	cr_expect(strstr(text, " main::{lambda()#1}::operator() "), "no lambda:\n%s", text);
	cr_expect(strstr(text, "main+") && strstr(text, "(sercxx.cpp:"), "no stack:\n%s", text);
	/* a mangled name is left only in a step's at(...), which finds it */
	for (char *line = text; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char *z = strstr(line, "_ZN4bank");
		char *end = strchr(line, '\n');

		if (z && (!end || z < end))
			cr_expect(z > line + 3 && strncmp(z - 3, "at(", 3) == 0,
				  "a mangled name shown: %.*s", end ? (int)(end - line) : 80, line);
	}
	cr_expect_eq(h_bug_replays(h_run_line(h_fmt("%s/bug-1.sched", dir)), 10), 10);
	h_free(text);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* The control: each deposit in one critical section. */
Test(cxx, the_fixed_method_shows_no_bug)
{
	char *dir = h_temp_dir();
	struct h_result r = H_RUN(h_cctrace(), "test", "-q", "--seed", "1", "--runs", "100",
				  "--out", dir, "--", CXX, "--fixed");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "100 runs, 0 bugs, 100 completed"), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* cctrace run of a serial schedule on sercxx: steps after "serial" and
 * main's binding, in a file called name (errors name it). */
static struct h_result run_steps(const char *name, const char *steps)
{
	char *sched = h_temp_sched(name, h_fmt("serial\nthread t1 = p1.t1\n%s", steps));
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", CXX);

	h_remove_tree(h_fmt("%.*s", (int)(strrchr(sched, '/') - sched), sched));
	return r;
}

/* The steps that let main's two threads finish, then main. */
#define THREADS_FINISH                                                                             \
	"thread t2 = p1.t2\nrun t2 until exit\nthread t3 = p1.t3\nrun t3 until exit\n"

/* A schedule gives a method by its shown name: main stops at the entry
 * of bank::Account::balance, after both threads are done, and the trace
 * says so in the same words.  The constructor has two symbols (C1, C2)
 * for one function: its name is no overload. */
Test(cxx, a_schedule_names_a_method_as_shown)
{
	struct h_result r =
	    run_steps("balance.sched", "run t1 until enter(bank::Account::Account)\n"
				       "run t1 until enter(pthread_join)\n" THREADS_FINISH
				       "run t1 until enter(bank::Account::balance)\n"
				       "run t1 until exit\n");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "enter(bank::Account::balance) bank::Account::balance"),
		  "no stop at balance, or not as shown:\n%s", r.err);
	cr_expect(strstr(r.err, "enter(bank::Account::Account)"), "%s", r.err);
	h_result_free(&r);
}

/* deposit has two overloads: the schedule must say which, and the error
 * lists their symbols with their parameters, at the name's column. */
Test(cxx, an_overloaded_name_is_refused_with_its_overloads)
{
	struct h_result r =
	    run_steps("deposit.sched", "run t1 until enter(bank::Account::deposit)\n");

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "deposit.sched:3:14: error: 'bank::Account::deposit' names 2 "
				"functions"),
		  "%s", r.err);
	cr_expect(strstr(r.err, "_ZN4bank7Account7depositEi (bank::Account::deposit(int))") &&
		      strstr(r.err, "_ZN4bank7Account7depositEd (bank::Account::deposit(double))"),
		  "%s", r.err);
	h_result_free(&r);
	/* ...and given by its symbol, the int one is found */
	r = run_steps("deposit.sched", "run t1 until enter(pthread_join)\n"
				       "thread t2 = p1.t2\n"
				       "run t2 until enter(_ZN4bank7Account7depositEi)\n"
				       "run t2 until exit\n"
				       "thread t3 = p1.t3\n"
				       "run t3 until exit\n"
				       "run t1 until exit\n");
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "enter(_ZN4bank7Account7depositEi) bank::Account::deposit"), "%s",
		  r.err);
	h_result_free(&r);
}

/* A misspelt C++ name is compared with the names as shown. */
Test(cxx, a_misspelt_method_is_suggested_as_shown)
{
	struct h_result r = run_steps("typo.sched", "run t1 until enter(bank::Acount::balance)\n");

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "typo.sched:3:14: error: no function 'bank::Acount::balance'; did "
				"you mean 'bank::Account::balance'?"),
		  "%s", r.err);
	h_result_free(&r);
	/* ...while one given without its namespace is found, as gdb's
	 * `break Account::balance` finds it */
	r = run_steps("scope.sched", "run t1 until enter(pthread_join)\n" THREADS_FINISH
				     "run t1 until enter(Account::balance)\nrun t1 until exit\n");
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "enter(Account::balance) ") &&
		      strstr(r.err, " bank::Account::balance "),
		  "%s", r.err);
	h_result_free(&r);
}

/* The callee a call event shows is demangled like every other name in
 * the trace: std::mutex::lock, not _ZNSt5mutex4lockEv. */
Test(cxx, a_call_shows_its_callee_demangled)
{
	struct h_result r = run_steps("call.sched", "run t1 until enter(pthread_join)\n"
						    "thread t2 = p1.t2\n"
						    "run t2 until call(std::mutex::lock)\n"
						    "run t2 until exit\n"
						    "thread t3 = p1.t3\n"
						    "run t3 until exit\n"
						    "run t1 until exit\n");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "call(std::mutex::lock) -> std::mutex::lock "), "%s", r.err);
	cr_expect(!strstr(r.err, "_ZN"), "a mangled name in the trace:\n%s", r.err);
	h_result_free(&r);
}

/* A lambda's locals, and each method's 'this' on its first instruction:
 * the lambda's body had no scope ("no variable 'counter' in scope"), the
 * check typed 'this' by the first method it met, and enter(F) read
 * 'this' from a slot its prologue had not stored yet. */
Test(cxx, lambda_locals_and_this_on_entry)
{
	const char *prog = "tests/fixtures/lambdas";
	char *sched =
	    h_temp_sched("lambdas.sched", "thread T = wait any enter(Gauge::raise)\n"
					  "assert T.this->level == 7 && T.by == 2\n"
					  "run T until enter(Counter::bump)\n"
					  "assert T.this->hits == 1\n"
					  "run T until return(Counter::bump)\n"
					  "assert T.counter.hits == 2 && T.gauge.level == 9\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", prog);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	h_result_free(&r);
	/* main's local, read through the lambda's frame, was garbage */
	sched = h_temp_sched("lambdas2.sched", "thread T = wait any enter(Counter::bump)\n"
					       "run T until return(Counter::bump)\n"
					       "assert T.ticks == 3\n");
	r = H_RUN(h_cctrace(), "run", sched, "--", prog);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "no variable 'ticks' in scope at main::{lambda()#1}::operator()"),
		  "%s", r.err);
	h_result_free(&r);
}

/* A name no identifier spells (a lambda's operator(), a template) is
 * written quoted, as the trace writes it back; one given without its
 * template arguments is suggested with them. */
Test(cxx, names_as_shown_are_written_quoted)
{
	const char *prog = "tests/fixtures/lambdas";
	char *sched = h_temp_sched("quoted.sched",
				   "thread T = wait any enter(\"main::{lambda()#1}::operator()\")\n"
				   "run T until enter(\"twice<int>\")\n"
				   "assert in(T, \"main::{lambda()#1}::operator()\")\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", prog);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "enter(\"main::{lambda()#1}::operator()\")") &&
		      strstr(r.err, "enter(\"twice<int>\")"),
		  "%s", r.err);
	h_result_free(&r);
	sched = h_temp_sched("unquoted.sched", "thread T = wait any enter(twice)\n");
	r = H_RUN(h_cctrace(), "run", sched, "--", prog);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "no function 'twice'; did you mean \"twice<int>\" (quoted)?"), "%s",
		  r.err);
	h_result_free(&r);
}

/* A reference names its object (it read as the pointer: "M.total =
 * 140737488348700"), a derived object has its bases' members (single and
 * multiple inheritance), a global C++ function is named as shown (adjust,
 * not _Z6adjustRiRK4ItemR7Derived), and a variable by its qualified name
 * (count was ledger::count, and ledger::count no variable at all). */
Test(cxx, references_base_members_and_global_functions)
{
	char *sched =
	    h_temp_sched("cxxtypes.sched",
			 "thread M = wait any enter(adjust)\n"
			 "assert M.total == 5 && M.item.id == 7 && M.obj.d == 6\n"
			 "run M until write(sink)\n"
			 "assert M.total == 12 && M.obj.b1 == 3 && M.obj.b2 == 4 && M.obj.m == 5\n"
			 "assert M.obj.o == 8 && derived.d == 9 && &M.obj == &derived\n"
			 "assert count == 33 && ledger::count == 11 && Registry::instances == 44\n"
			 "assert level == Level::High && Level::High == 200\n"
			 "run M until enter(doubled)\n"
			 "assert M.x == 1\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/cxxtypes");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.out, "14 9 88"), "%s", r.out);
	h_result_free(&r);
}

/* At -O2 _start lies just past the last function of a unit of the
 * program's (tests/fixtures/sercxx-opt): libdw gives that unit's last row
 * for it, and _start was said to be at std_thread.h:150.  No line is
 * _start's; its module is said instead. */
Test(cxx, code_past_a_unit_has_no_line_of_the_unit)
{
	char *sched = h_temp_sched("start.sched", "thread A = wait any start\nassert 1\n");
	struct h_result r =
	    H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/sercxx-opt", "--fixed");
	const char *line = strstr(r.err, " start ");

	cr_assert(line, "%s", r.err);
	line = strchr(line, '\n') ? h_fmt("%.*s", (int)(strchr(line, '\n') - line), line) : line;
	cr_expect(strstr(line, "_start") && !strstr(line, ".h:") && !strstr(line, ".cpp:"), "%s",
		  r.err);
	h_result_free(&r);
}

/* A method an -O2 build inlined everywhere has no symbol, only DWARF that
 * names it by its mangled name: enter() takes it as shown, and stops at
 * its copies ("no function 'bank::Account::balance'" before). */
Test(cxx, a_method_inlined_everywhere_is_entered_by_its_shown_name)
{
	char *sched =
	    h_temp_sched("bal.sched", "thread A = wait any enter(bank::Account::balance)\n"
				      "release all\n");
	struct h_result r =
	    H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/sercxx-opt", "--fixed");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "enter(bank::Account::balance)"), "%s", r.err);
	h_result_free(&r);
}

/* --- names no identifier spells, and names given in part (cxxnames) --- */

#define NAMES "tests/fixtures/cxxnames"

/* The at(...) a bug schedule writes for symbol+offset (sym_schedule_name,
 * quoted by lang_at_text), parsed and checked against the program: the
 * text into text[len], and the address the check found, which must be
 * the one written. */
static uint64_t written_at_finds(struct sym_space *s, const char *symbol, uint64_t offset,
				 char *text, size_t len)
{
	char err[2048] = "", *at = NULL;
	struct policy *pol = calloc(1, sizeof(*pol));
	struct sym_loc loc;
	uint64_t addr, found = 0;

	cr_assert_not_null(pol);
	cr_assert_eq(sym_function(s, symbol, &addr), 0, "%s", symbol);
	cr_assert_eq(sym_describe_function(s, addr + offset, &loc), 0);
	cr_assert_geq(asprintf(&at, "%s+0x%" PRIx64, sym_schedule_name(s, &loc), offset), 0);
	lang_at_text(text, len, at);
	free(at);
	pol->sched = schedule_parse("w.sched", h_fmt("thread B = wait any %s\n", text),
				    engine_atoms(), err, sizeof(err));
	cr_assert_not_null(pol->sched, "%s", err);
	cr_assert_eq(lang_check(pol, s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pol->nlocs, 1);
	cr_expect_eq(lang_func_offset(s, pol->locs[0].file, &found), 0, "%s", pol->locs[0].file);
	engine_free(pol);
	cr_expect_eq(found, addr + offset, "%s found %#" PRIx64 ", not %#" PRIx64, text, found,
		     addr + offset);
	return found;
}

/* Written, parsed, checked: the same address, for a class template's
 * method, a lambda, a function template's instance and a template's
 * constructor (two symbols, C1 and C2, for one function), all quoted;
 * a plain method is left raw.  None is written by its symbol. */
Test(cxx, a_written_at_finds_its_address_again)
{
	static const struct {
		const char *symbol, *written;
	} cases[] = {
	    {"_ZN5tally7CounterIlE3addEl", "at(\"tally::Counter<long>::add\"+0x4)"},
	    {"_ZZ4mainENKUlvE_clEv", "at(\"main::{lambda()#1}::operator()\"+0x4)"},
	    {"_ZZ4mainENKUlvE0_clEv", "at(\"main::{lambda()#2}::operator()\"+0x4)"},
	    {"_Z6workerIiEiT_", "at(\"worker<int>\"+0x4)"},
	    {"_ZNSt11unique_lockISt5mutexEC1ERS0_St12defer_lock_t",
	     "at(\"std::unique_lock<std::mutex>::unique_lock\"+0x4)"},
	    {"_ZN4bank7Account8withdrawEi", "at(bank::Account::withdraw+0x4)"},
	};
	char err[256] = "", text[512];
	struct sym_space *s = sym_open_program(NAMES, err, sizeof(err));
	size_t i;

	cr_assert_not_null(s, "%s (make fixtures)", err);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		written_at_finds(s, cases[i].symbol, 4, text, sizeof(text));
		cr_expect_str_eq(text, cases[i].written);
	}
	sym_close(s);
}

/* One bug schedule of `cctrace test`: its steps' at(...) have no symbol
 * ("_Z"); which of the two kinds of point it has (1: in the template's
 * method, 2: in a lambda, 0: neither) and, when it has one, that it
 * replays 10 of 10. */
static int bug_schedule_points(const char *dir)
{
	char *text = h_read_file(h_fmt("%s/bug-1.sched", dir), NULL);
	int kind = 0;

	cr_assert_not_null(text, "no bug schedule in %s", dir);
	cr_expect(!strstr(text, "_Z"), "a symbol written:\n%s", text);
	if (strstr(text, "until at(\"tally::Counter<long>::add\"+0x"))
		kind = 1;
	else if (strstr(text, "until at(\"main::{lambda()#"))
		kind = 2;
	if (kind)
		cr_expect_eq(h_bug_replays(h_run_line(h_fmt("%s/bug-1.sched", dir)), 10), 10, "%s",
			     text);
	h_free(text);
	return kind;
}

/* The lost update of cxxnames is found at a point in a class template's
 * method or in a lambda, depending on the seed: each is written quoted
 * (it was written by its symbol, _ZN5tally7CounterIlE3addEl+0x26) and
 * replays. */
Test(cxx, a_bug_schedule_writes_templates_and_lambdas_as_shown)
{
	bool seen[3] = {false, false, false};
	int seed;

	for (seed = 1; seed <= 12 && !(seen[1] && seen[2]); seed++) {
		char *dir = h_temp_dir();
		struct h_result r = H_RUN(h_cctrace(), "test", "-q", "--seed", h_fmt("%d", seed),
					  "--runs", "100", "--out", dir, "--", NAMES);
		int kind;

		cr_assert_eq(r.code, 1, "seed %d: no bug in 100 runs (exit %d):\n%s", seed, r.code,
			     r.err);
		kind = seen[1] && seen[2] ? 0 : bug_schedule_points(dir);
		seen[kind] = true;
		h_result_free(&r);
		h_remove_tree(dir);
	}
	cr_expect(seen[1], "no bug schedule stopped in tally::Counter<long>::add");
	cr_expect(seen[2], "no bug schedule stopped in a lambda");
}

/* cctrace run of one wait on cxxnames, in a file called name. */
static struct h_result run_names(const char *name, const char *wait)
{
	char *sched = h_temp_sched(name, h_fmt("%s\nrelease all\n", wait));
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", NAMES, "--fixed");

	h_remove_tree(h_fmt("%.*s", (int)(strrchr(sched, '/') - sched), sched));
	return r;
}

/* One schedule line's run: its exit code, and what its stderr says. */
static void expect_names(const char *file, const char *line, int code, const char *said)
{
	struct h_result r = run_names(file, line);

	cr_expect_eq(r.code, code, "%s: exit %d:\n%s", file, r.code, r.err);
	cr_expect(!said || strstr(r.err, said), "%s: no '%s' in\n%s", file, said, r.err);
	h_result_free(&r);
}

/* Names given in part, as gdb takes them: without outer scopes when one
 * function ends so; an error that lists them when more do, and every
 * instance of a template named without its arguments; an unquoted
 * template says how to quote it.  Errors at the name, with a caret. */
Test(cxx, names_given_in_part)
{
	expect_names("scope.sched", "thread A = wait any enter(Account::withdraw)", 0,
		     "enter(Account::withdraw) ");
	expect_names("scope.sched", "thread A = wait any enter(Account::withdraw)", 0,
		     " bank::Account::withdraw ");
	expect_names("two.sched", "thread A = wait any enter(withdraw)", 3,
		     "two.sched:1:21: error: 'withdraw' names 2 functions, in other "
		     "scopes: audit::Ledger::withdraw, bank::Account::withdraw; give "
		     "the one you mean with its scopes\n"
		     "    thread A = wait any enter(withdraw)\n"
		     "                        ^\n");
	expect_names("worker.sched", "thread A = wait any enter(worker)", 3,
		     "worker.sched:1:21: error: no function 'worker'; did you mean one "
		     "of \"worker<double>\", \"worker<int>\" (quoted)?\n");
	expect_names("angle.sched", "thread A = wait any enter(worker<int>)", 3,
		     "angle.sched:1:33: error: expected ')' to close '(' at 1:26, "
		     "found '<'; a name no identifier spells (a template, a lambda, an "
		     "operator) is written in double quotes: enter(\"worker<int>\")\n"
		     "    thread A = wait any enter(worker<int>)\n"
		     "                                    ^\n");
	/* quoted, it is found; and a template's method given without its
	 * scope and arguments is suggested with both */
	expect_names("quoted.sched", "thread A = wait any enter(\"worker<int>\")", 0, NULL);
	expect_names("add.sched", "thread A = wait any enter(Counter::add)", 3,
		     "add.sched:1:21: error: no function 'Counter::add'; did you mean "
		     "\"tally::Counter<long>::add\" (quoted)?");
}
