/*
 * test_limits.c: no silent limit of 64, and no search that reports "0
 * bugs" having explored nothing.
 *
 * Each limit that used to cut off quietly at 64 is driven past it on a
 * real traced process: a return(F) whose F is the 70th function the
 * schedule names (tests/fixtures/manyfuncs), the return of a recursion
 * 100 deep (tests/fixtures/deep), a wait for and a run of 100 threads and
 * a choice among 70 (tests/fixtures/crowd), and 100 breakpoint stops that
 * the tracer queues at one moment (through the tracer's API, so that all
 * 100 are certainly pending when it stops the threads).  Search
 * strategies whose tables were fixed take 300 values or refuse 65
 * variables before anything runs.  A search whose first run cannot follow
 * the schedule, or whose every run is unrealizable, is an error (exit 3)
 * that says why.
 */
#include "symbols/symbols.h"
#include "tests/harness.h"
#include "tracer/tracer.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

TestSuite(limits, .fini = h_cleanup, .timeout = 120);

#define MANYFUNCS "tests/fixtures/manyfuncs"
#define CROWD	  "tests/fixtures/crowd"

/* "A1, A2, ..., An" (or with sep between them) for a generated schedule. */
static char *series(const char *fmt, int from, int to, const char *sep)
{
	char *out = h_fmt("%s", "");
	int i;

	for (i = from; i <= to; i++)
		out = h_fmt("%s%s%s", out, i > from ? sep : "", h_fmt(fmt, i));
	return out;
}

static long json_long(const char *text, const char *key)
{
	char buf[64];

	cr_assert(h_json_field(text, key, buf, sizeof(buf)), "no \"%s\" in %s", key, text);
	return strtol(buf, NULL, 10);
}

static struct h_result run_schedule(const char *name, const char *text, const char *prog,
				    const char *arg)
{
	const char *argv[] = {h_cctrace(), "run", h_temp_sched(name, text), "--", prog, arg, NULL};

	return h_run(argv, 110);
}

Test(limits, return_of_the_70th_function_named)
{
	/* fn0 ... fn69 in this order: fn69 is the 70th in the table. */
	char *text =
	    h_fmt("timeout 20s\n"
		  "thread A = wait any %s\n"
		  "run A until %s\n",
		  series("enter(fn%d)", 0, 69, " || "), series("return(fn%d)", 0, 69, " || "));
	struct h_result r = run_schedule("seventy.sched", text, MANYFUNCS, "69");

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "p1.t1    enter(fn69)") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "p1.t1    return(fn69)") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed:") != NULL, "%s", r.err);
	cr_expect(strstr(r.out, "called fn69\n") != NULL, "%s", r.out);
	h_result_free(&r);
}

Test(limits, return_of_a_recursion_100_deep_is_the_deepest_one)
{
	/* Every call of rec is a frame whose return is awaited: the first
	 * return is rec(99)'s, which used to be the 100th frame of a table of
	 * 64 and went unnoticed (the match was rec(63)'s). */
	struct h_result r = run_schedule("deep.sched",
					 "timeout 20s\n"
					 "thread A = wait any enter(rec)\n"
					 "run A until return(rec)\n"
					 "assert done == 99\n",
					 "tests/fixtures/deep", NULL);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed:") != NULL, "%s", r.err);
	cr_expect(strstr(r.out, "deep: 0\n") != NULL, "%s", r.out);
	h_result_free(&r);
}

/* A thread 100 frames deep: in(A, main) looks at every frame (only the
 * first 64 were unwound, and main was not on the stack, and a table of
 * them grown once by doubling overflowed), and return(main) finds main's
 * frame from there. */
Test(limits, a_stack_100_deep_is_unwound_whole)
{
	struct h_result r = run_schedule("deepstack.sched",
					 "timeout 20s\n"
					 "thread A = wait any enter(rec) && n == 99\n"
					 "assert in(A, main)\n"
					 "assert !in(A, main)\n",
					 "tests/fixtures/deep", NULL);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 1, "the first assert held, the second is the bug:\n%s", r.err);
	cr_expect(strstr(r.err, "assertion failed") && strstr(r.err, ":4:1:"), "%s", r.err);
	h_result_free(&r);
	r = run_schedule("deepreturn.sched",
			 "timeout 20s\n"
			 "thread A = wait any enter(rec) && n == 99\n"
			 "run A until return(main)\n",
			 "tests/fixtures/deep", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "return(main)"), "%s", r.err);
	h_result_free(&r);
}

/* How many trace lines show event, each by a different thread. */
static int distinct_threads_with(const char *text, const char *event)
{
	static struct h_trace_ev evs[1024];
	int n = h_parse_trace(text, evs, 1024), i, j, count = 0;

	for (i = 0; i < n && i < 1024; i++) {
		if (strcmp(evs[i].event, event) != 0)
			continue;
		for (j = 0; j < i; j++)
			if (strcmp(evs[j].event, event) == 0 &&
			    strcmp(evs[j].thread, evs[i].thread) == 0)
				break;
		count += j == i;
	}
	return count;
}

Test(limits, wait_for_and_run_of_100_threads)
{
	char *names = series("T%d", 1, 100, ", ");
	char *text = h_fmt("timeout 60s\n"
			   "thread %s = wait 100 distinct enter(gate)\n"
			   "assert calls == 0\n"
			   "run %s until return(gate)\n"
			   "assert calls == 100\n",
			   names, names);
	struct h_result r = run_schedule("hundred.sched", text, CROWD, "100");

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect_eq(distinct_threads_with(r.err, "enter(gate)"), 100, "%s", r.err);
	cr_expect_eq(distinct_threads_with(r.err, "return(gate)"), 100, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed:") != NULL, "%s", r.err);
	cr_expect(strstr(r.out, "crowd: 100 calls of 100\n") != NULL, "%s", r.out);
	h_result_free(&r);
}

Test(limits, wait_for_70_threads_without_names)
{
	struct h_result r = run_schedule("seventy-threads.sched",
					 "timeout 60s\n"
					 "wait 70 distinct enter(gate)\n",
					 CROWD, "100");

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect_eq(distinct_threads_with(r.err, "enter(gate)"), 70, "%s", r.err);
	cr_expect(strstr(r.out, "crowd: 100 calls of 100\n") != NULL, "%s", r.out);
	h_result_free(&r);
}

Test(limits, choice_among_70_threads_offers_all_70)
{
	char dir[] = "/tmp/cctrace-limits-XXXXXX";
	char *names = series("T%d", 1, 70, ", ");
	char *path =
	    h_temp_sched("choose70.search", h_fmt("timeout 60s\n"
						  "thread %s = wait 70 distinct enter(gate)\n"
						  "thread T = choose(%s)\n"
						  "run T until return(gate)\n",
						  names, names));
	const char *argv[] = {h_cctrace(), "explore", path,  "--json", "--out",
			      dir,	   "--",      CROWD, "70",     NULL};
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 115);
	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	/* dfs runs out after exactly one run per option */
	cr_expect_eq(json_long(r.out, "runs"), 70, "%s\n%s", r.out, r.err);
	cr_expect_eq(json_long(r.out, "distinct"), 70, "%s", r.out);
	cr_expect_eq(json_long(r.out, "completed"), 70, "%s", r.out);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

/* --- the tracer's event queue --- */

static char task_state(pid_t pid, pid_t tid)
{
	char *stat = h_read_file(h_fmt("/proc/%d/task/%d/stat", pid, tid), NULL);
	char *paren = stat ? strrchr(stat, ')') : NULL, state = paren ? paren[2] : 0;

	free(stat);
	return state;
}

Test(limits, a_hundred_breakpoint_stops_queued_at_once_are_all_delivered)
{
	char *argv[] = {CROWD, "100", NULL};
	struct tracer_options opt = {.pin_cpu = false};
	struct tracer *t = tracer_new(&opt);
	struct tr_process *p;
	struct tr_thread *th;
	struct sym_space *syms;
	struct tr_event ev;
	uint64_t gate;
	int64_t deadline;
	char err[256];
	int started = 0, stopped = 0, delivered = 0;
	pid_t pid;

	cr_assert_eq(tracer_launch(t, argv, err, sizeof(err)), 0, "%s", err);
	p = tracer_processes(t);
	pid = tracer_process_pid(p);
	syms = sym_open_pid(pid, err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_function(syms, "gate", &gate), 0);
	cr_assert_eq(tracer_break_insert(p, gate, err, sizeof(err)), 0, "%s", err);
	/* The workers meet at a barrier before gate(): none can reach it
	 * before the last one has started. */
	deadline = tracer_now_ms() + 60000;
	while (started < 100) {
		cr_assert_eq(tracer_wait(t, &ev, deadline, NULL), TR_WAIT_EVENT);
		cr_assert_neq(ev.kind, TR_EV_BREAK, "a worker passed the barrier early");
		if (ev.kind == TR_EV_START && tracer_thread_tid(ev.thread) != pid)
			started++;
		tracer_resume(ev.thread);
	}
	/* Now every worker runs into the int3; nobody collects the stops. */
	do {
		stopped = 0;
		tr_for_each_thread(th, t)
			stopped += tracer_thread_tid(th) != pid &&
				   task_state(pid, tracer_thread_tid(th)) == 't';
	} while (stopped < 100 && tracer_now_ms() < deadline);
	cr_assert_eq(stopped, 100, "only %d workers reached the breakpoint", stopped);
	tracer_stop_all(t);
	tr_for_each_thread(th, t)
		if (tracer_thread_tid(th) != pid)
			cr_expect(tracer_event_pending(th), "%s has no event queued",
				  tracer_thread_name(th));
	while (delivered < 200 &&
	       tracer_wait(t, &ev, tracer_now_ms() + 200, NULL) == TR_WAIT_EVENT) {
		cr_expect(ev.kind == TR_EV_BREAK && ev.addr == gate, "event %d at %#lx", ev.kind,
			  (unsigned long)ev.addr);
		cr_expect_eq(tracer_thread_state(ev.thread), TR_HELD);
		delivered++;
	}
	cr_expect_eq(delivered, 100, "%d of the 100 queued stops were delivered", delivered);
	sym_close(syms);
	tracer_kill_launched(t);
	tracer_free(t);
}

/* --- the search strategies' tables --- */

Test(limits, pct_over_a_choice_of_300_values)
{
	char dir[] = "/tmp/cctrace-limits-XXXXXX";
	char *path = h_temp_sched("values.search", "timeout 20s\n"
						   "thread A = wait any enter(fn69)\n"
						   "let k = choose(0..299)\n"
						   "run A until return(fn69)\n");
	const char *argv[] = {h_cctrace(), "explore", path, "--strategy", "pct:3",   "--runs", "3",
			      "--json",	   "--out",   dir,  "--",	  MANYFUNCS, NULL};
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 60);
	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect_eq(json_long(r.out, "completed"), 3, "%s\n%s", r.out, r.err);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

/* Variable sets have no size limit (search/varset.c; test_strategies
 * enumerates 70): a schedule watching 65 variables is searched. */
Test(limits, variable_bounding_takes_65_variables)
{
	char *path = h_temp_sched("cells.search", h_fmt("thread A = wait any enter(fn69)\n"
							"thread B = p1.t1\n"
							"thread T = choose(A, B)\n"
							"run T until %s || exit\n",
							series("read(cells[%d])", 0, 64, " || ")));
	char dir[] = "/tmp/cctrace-cells-XXXXXX";
	const char *argv[] = {h_cctrace(), "explore", path, "--strategy", "vb:1",    "--runs", "4",
			      "--json",	   "--out",   dir,  "--",	  MANYFUNCS, NULL};
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 60);
	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect_eq(json_long(r.out, "runs"), 4, "%s\n%s", r.out, r.err);
	cr_expect_eq(json_long(r.out, "completed"), 4, "%s\n%s", r.out, r.err);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

/* --- searches that explore nothing --- */

Test(limits, search_whose_first_wait_never_matches_is_an_error)
{
	char dir[] = "/tmp/cctrace-limits-XXXXXX";
	/* main calls fn69 and lingers; fn3 never comes. */
	char *path = h_temp_sched("never.search", "timeout 300ms\n"
						  "thread A, B = wait 2 distinct enter(fn3)\n"
						  "thread T = choose(A, B)\n"
						  "run T until exit\n");
	const char *argv[] = {h_cctrace(), "explore", path, "--out", dir,
			      "--",	   MANYFUNCS, "69", "5000",  NULL};
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 60);
	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err,
			 "cctrace explore: error: the first run could not follow the "
			 "schedule up to its first choice point, so there is nothing to "
			 "search: unrealizable: no thread reached 'enter(fn3)' within 300 ms") !=
		      NULL,
		  "%s", r.err);
	cr_expect(strstr(r.err, "0 bugs") == NULL, "%s", r.err);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

Test(limits, search_whose_every_run_is_unrealizable_is_an_error)
{
	char dir[] = "/tmp/cctrace-limits-XXXXXX";
	/* The choice comes first; then every run waits for a return that
	 * main, in fn69, never makes. */
	char *path = h_temp_sched("never-after.search", "timeout 300ms\n"
							"thread A = wait any enter(fn69)\n"
							"let k = choose(1..3)\n"
							"run A until return(fn3)\n");
	const char *argv[] = {h_cctrace(), "explore", path, "--out", dir, "--", MANYFUNCS, NULL};
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 60);
	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "3 runs, 0 bugs, 0 completed, 0 infeasible, 3 unrealizable") !=
		      NULL,
		  "%s", r.err);
	cr_expect(strstr(r.err, "cctrace explore: error: no run could follow the schedule") != NULL,
		  "%s", r.err);
	cr_expect(strstr(r.err, "; the last: unrealizable: ") != NULL, "%s", r.err);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

/* A line with more copies in the code than the 16 that were once kept: the
 * one that runs is the last of twenty (tests/fixtures/inlined). */
Test(limits, at_a_line_inlined_twenty_times)
{
	char *path = h_temp_sched("inlined.sched", "timeout 10s\n"
						   "thread A = wait any at(inlined.c:14)\n"
						   "assert counter == 0\n"
						   "release all\n");
	const char *argv[] = {h_cctrace(), "run", path, "--", "tests/fixtures/inlined", NULL};
	struct h_result r = h_run(argv, 60);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "at(inlined.c:14)") != NULL, "%s", r.err);
	cr_expect(strstr(r.out, "counter 20") != NULL, "%s", r.out);
	h_result_free(&r);
}

/* The JSON summary's estimate of a search space past any integer: a
 * choice among 30 threads makes more than 2^63 schedules (written as a
 * real), among 200 more than a double holds (null); never a wrapped
 * negative integer, which a cast made of 10^90. */
static const char *space_estimate_of(const char *threads)
{
	char dir[] = "/tmp/cctrace-limits-XXXXXX";
	char buf[64];
	struct h_result r;

	cr_assert(mkdtemp(dir));
	r = h_run((const char *const[]){h_cctrace(), "test", "-q", "--json", "--no-minimize",
					"--strategy", "random", "--runs", "1", "--out", dir, "--",
					CROWD, threads, NULL},
		  110);
	cr_assert(!r.timed_out, "%s", r.err);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_assert(h_json_field(r.out, "space_estimate", buf, sizeof(buf)), "%s", r.out);
	h_remove_tree(dir);
	return h_fmt("%s", buf);
}

Test(limits, a_space_past_any_integer_is_estimated_as_a_real_or_null)
{
	const char *thirty = space_estimate_of("30"), *two_hundred = space_estimate_of("200");
	double value = strtod(thirty, NULL);

	cr_expect(strchr(thirty, 'e') && value > 9.2e18, "30 threads: %s", thirty);
	cr_expect_str_eq(two_hundred, "null");
}
