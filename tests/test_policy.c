/*
 * test_policy.c: the checker's messages and the expression evaluator.
 *
 * The checker is run on schedules against the offline symbols of the symfix
 * fixture, and every message it can give is compared in full, caret line
 * included.  The evaluator is run on a live symfix stopped at its entry
 * point, reading real globals, struct members, array elements, pointers
 * and enumerators through DWARF.
 */
#include "engine/internal.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYMFIX "tests/fixtures/symfix"

/* A shell command, formatted (one at a time). */
static const char *command(const char *fmt, ...)
{
	static char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

static struct policy *parse(const char *text)
{
	struct policy *pol = calloc(1, sizeof(*pol));
	char err[2048];

	cr_assert_not_null(pol);
	pol->sched = schedule_parse("t.sched", text, engine_atoms(), err, sizeof(err));
	cr_assert_not_null(pol->sched, "%s", err);
	return pol;
}

/* Check text; return the diagnostic ("" when it is fine). */
static const char *check(const char *text)
{
	static char err[4096];
	struct sym_space *syms = sym_open_program(SYMFIX, err, sizeof(err));
	struct policy *pol;

	cr_assert_not_null(syms, "%s", err);
	pol = parse(text);
	err[0] = 0;
	lang_check(pol, syms, err, sizeof(err));
	engine_free(pol);
	sym_close(syms);
	return err;
}

#define expect_error(text, message) cr_expect_str_eq(check(text), message)

Test(check, a_correct_schedule_passes)
{
	expect_error("thread A, B = wait 2 distinct enter(worker)\n"
		     "run A until write(counter) || return(worker)\n"
		     "run B until at(symfix.c:61) && bank.id == 42\n"
		     "if (bank_ptr->hist[2] > 0 && shade == GREEN) { release A }\n"
		     "while (!ended(B)) { run B until exit }\n"
		     "assert in(A, worker) || counter != NEGATIVE\n",
		     "");
}

/* engine_load_cached checks schedule after schedule against one read of
 * the program's symbols (a minimisation's trials), and reads them again
 * when the file is replaced: a schedule naming `deep`, which symfix
 * defines and sercounter does not, is refused against sercounter's copy
 * and then accepted once symfix is copied over it. */
Test(check, a_cached_load_reads_a_replaced_program_again)
{
	char dir[] = "/tmp/cctrace-policy-XXXXXX", *prog, *sched, err[2048];
	struct symbol_cache *cache = engine_symbol_cache_new();
	struct policy *pol;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert(asprintf(&prog, "%s/prog", dir) > 0 && asprintf(&sched, "%s/s.sched", dir) > 0);
	cr_assert_not_null(f = fopen(sched, "w"));
	fputs("thread A = wait any enter(deep)\n", f);
	fclose(f);
	cr_assert_eq(system(command("cp tests/fixtures/sercounter %s", prog)), 0);
	pol = engine_load_cached(sched, prog, cache, err, sizeof(err));
	cr_expect_null(pol, "deep resolved in sercounter");
	cr_expect(strstr(err, "deep"), "%s", err);
	engine_free(pol);
	/* the cached view answers again, still without deep */
	cr_expect_null(pol = engine_load_cached(sched, prog, cache, err, sizeof(err)));
	engine_free(pol);
	cr_assert_eq(system(command("rm -f %s && cp %s %s", prog, SYMFIX, prog)), 0);
	pol = engine_load_cached(sched, prog, cache, err, sizeof(err));
	cr_expect_not_null(pol, "the replaced program was not read again: %s", err);
	engine_free(pol);
	engine_symbol_cache_free(cache);
	cr_assert_eq(system(command("rm -rf %s", dir)), 0);
	free(prog);
	free(sched);
}

Test(check, unknown_function_suggests_the_closest_name)
{
	expect_error("thread A = wait any enter(wroker)\n",
		     "t.sched:1:21: error: no function 'wroker'; did you mean 'worker'?\n"
		     "    thread A = wait any enter(wroker)\n"
		     "                        ^\n");
}

Test(check, unknown_function_far_from_anything)
{
	expect_error("wait any enter(qqqqqqqqqqqq)\n",
		     "t.sched:1:10: error: no function 'qqqqqqqqqqqq' in the program or its "
		     "libraries\n"
		     "    wait any enter(qqqqqqqqqqqq)\n"
		     "             ^\n");
}

Test(check, library_functions_resolve)
{
	expect_error("wait any enter(close) || enter(pthread_mutex_lock)\n", "");
}

Test(check, unknown_variable_suggests)
{
	expect_error("assert countr == 0\n",
		     "t.sched:1:8: error: no variable 'countr'; did you mean 'counter'?\n"
		     "    assert countr == 0\n"
		     "           ^\n");
}

Test(check, member_errors)
{
	expect_error("assert bank.balance == 0\n",
		     "t.sched:1:8: error: struct account has no member 'balance'\n"
		     "    assert bank.balance == 0\n"
		     "           ^\n");
	expect_error("assert bank->id == 0\n",
		     "t.sched:1:8: error: '->' needs a pointer to a struct; use '.' on a struct\n"
		     "    assert bank->id == 0\n"
		     "           ^\n");
	expect_error("assert counter.x == 0\n",
		     "t.sched:1:8: error: 'int' is not a struct or union\n"
		     "    assert counter.x == 0\n"
		     "           ^\n");
	expect_error("assert bank == 0\n",
		     "t.sched:1:8: error: 'bank' is a struct account, not an integer\n"
		     "    assert bank == 0\n"
		     "           ^\n");
}

Test(check, unknown_thread)
{
	expect_error("run A until exit\n",
		     "t.sched:1:5: error: unknown thread 'A': no thread has been bound yet (bind "
		     "one with 'thread A = wait any start')\n"
		     "    run A until exit\n"
		     "        ^\n");
	expect_error("thread A = wait any start\nrun A, C until exit\n",
		     "t.sched:2:8: error: unknown thread 'C'; threads bound so far: A\n"
		     "    run A, C until exit\n"
		     "           ^\n");
}

Test(check, events_belong_to_predicates)
{
	expect_error("assert enter(worker)\n",
		     "t.sched:1:8: error: the event 'enter(worker)' can only be used after "
		     "'until' or 'wait'\n"
		     "    assert enter(worker)\n"
		     "           ^\n");
	expect_error("wait any counter == 1\n",
		     "t.sched:1:10: error: this predicate has no event to wait for; add one such "
		     "as enter(F), at(FILE:LINE), write(VAR) or exit\n"
		     "    wait any counter == 1\n"
		     "             ^\n");
}

/* What four debug registers cannot watch (a fifth variable, a struct) is
 * accepted: the stepper matches it by decoding instead. */
Test(check, no_watch_limit_is_visible)
{
	expect_error("wait any write(counter) || write(hidden) || write(shade) || "
		     "read(bank.id) || write(bank.in.a)\n",
		     "");
	expect_error("wait any write(bank.in.tag)\n", "");
	expect_error("wait any write(bank.hist)\n", "");
}

Test(check, instruction_events)
{
	expect_error("thread A = wait any start\nrun A until call(nosuch)\n",
		     "t.sched:2:13: error: no function 'nosuch' in the program or its libraries\n"
		     "    run A until call(nosuch)\n"
		     "                ^\n");
	expect_error("assert in(main)\n",
		     "t.sched:1:8: error: in(main) names no thread, so it can only be used in a "
		     "predicate (after 'until' or 'wait'); elsewhere write in(T, main)\n"
		     "    assert in(main)\n"
		     "           ^\n");
	expect_error("thread A = wait any start\n"
		     "run A until (read || write || call || syscall(futex)) && in(main) && "
		     "addr != 0 && size < 9 && value >= 0 && func == main && line > 0\n",
		     "");
}

Test(check, source_lines)
{
	/* symfix.c: worker's '{' (line 60) is the first line with code, its
	 * blank line 62 lies between two statements */
	expect_error("wait any at(symfix.c:1)\n",
		     "t.sched:1:10: error: no code at symfix.c:1: the first line with code is 60\n"
		     "    wait any at(symfix.c:1)\n"
		     "             ^\n");
	expect_error("wait any at(symfix.c:62)\n",
		     "t.sched:1:10: error: no code at symfix.c:62: the nearest lines with code are "
		     "61 and 63\n"
		     "    wait any at(symfix.c:62)\n"
		     "             ^\n");
	expect_error(
	    "wait any at(nosuch.c:10)\n",
	    "t.sched:1:10: error: no code at nosuch.c:10: no source file 'nosuch.c' in the "
	    "program's debugging information (built without -g, or another name?)\n"
	    "    wait any at(nosuch.c:10)\n"
	    "             ^\n");
}

/* --- evaluation on a live process --- */

static struct tracer *tracer;
static struct sym_space *live;

static void launch_symfix(void)
{
	char *argv[] = {SYMFIX, NULL};
	char err[512];

	tracer = tracer_new(NULL);
	cr_assert_eq(tracer_launch(tracer, argv, err, sizeof(err)), 0, "%s", err);
	live = sym_open_pid(tracer_process_pid(tracer_processes(tracer)), err, sizeof(err));
	cr_assert_not_null(live, "%s", err);
}

static void kill_symfix(void)
{
	tracer_kill_launched(tracer);
	tracer_free(tracer);
	sym_close(live);
}

static int read_target(void *proc, uint64_t addr, void *buf, size_t len)
{
	return tracer_read(proc, addr, buf, len);
}

/* Evaluate `assert EXPR` in the live process; returns 0 and *v, or -1 and err. */
static int eval(const char *expr, int64_t *v, char *err, size_t errlen)
{
	char text[512];
	struct policy *pol;
	struct eval_ctx c = {.syms = live,
			     .target = tracer_processes(tracer),
			     .read_memory = read_target,
			     .err = err,
			     .errlen = errlen};
	int rc;

	snprintf(text, sizeof(text), "assert %s\n", expr);
	pol = parse(text);
	cr_assert_eq(lang_check(pol, live, err, errlen), 0, "%s", err);
	c.sched = pol->sched;
	rc = eval_int(&c, pol->sched->body->cond, v);
	engine_free(pol);
	return rc;
}

static int64_t value_of(const char *expr)
{
	char err[1024];
	int64_t v = 0;

	cr_assert_eq(eval(expr, &v, err, sizeof(err)), 0, "%s: %s", expr, err);
	return v;
}

TestSuite(eval, .init = launch_symfix, .fini = kill_symfix);

Test(eval, globals_members_and_pointers)
{
	cr_expect_eq(value_of("bank.id"), 42);
	cr_expect_eq(value_of("bank_ptr->id + 1"), 43);
	cr_expect_eq(value_of("(*bank_ptr).id"), 42);
	cr_expect_eq(value_of("const_bank->id"), 42);
	cr_expect_eq(value_of("&bank == bank_ptr"), 1);
	cr_expect_eq(value_of("hidden * 2"), 14);
	cr_expect_eq(value_of("-hidden"), -7);
	cr_expect_eq(value_of("bank.hist[3] + bank.grid[1][2] + bank.in.a"), 0);
	cr_expect_eq(value_of("bank_ptr->next == 0"), 1);
}

Test(eval, enumerators_and_enum_variables)
{
	cr_expect_eq(value_of("BLUE"), 6);
	cr_expect_eq(value_of("NEGATIVE"), -3);
	cr_expect_eq(value_of("shade"), 5);
	cr_expect_eq(value_of("shade == GREEN && bank.col == BLUE"), 1);
}

Test(eval, operators_follow_c)
{
	cr_expect_eq(value_of("1 + 2 * 3"), 7);
	cr_expect_eq(value_of("(1 << 4) | 3"), 19);
	cr_expect_eq(value_of("17 % 5 == 2"), 1);
	cr_expect_eq(value_of("~0"), -1);
	cr_expect_eq(value_of("!counter"), 1);
	cr_expect_eq(value_of("0x10 >= 16 && 3 < 2 || 1"), 1);
}

Test(eval, errors_at_run_time)
{
	char err[1024];
	int64_t v;

	cr_expect_eq(eval("bank.hist[4]", &v, err, sizeof(err)), -1);
	cr_expect(strstr(err, "index 4 is outside [0, 4)") != NULL, "%s", err);
	cr_expect_eq(eval("1 / counter", &v, err, sizeof(err)), -1);
	cr_expect(strstr(err, "division by zero") != NULL, "%s", err);
	cr_expect_eq(eval("bank_ptr->next->id", &v, err, sizeof(err)), -1);
	cr_expect(strstr(err, "cannot read 8 bytes at 0") != NULL, "%s", err);
}
