/*
 * System tests: threads that come and go while a schedule holds others.
 *
 * tests/fixtures/waves creates three waves of four short-lived threads; a
 * schedule holds one thread of the first wave for the whole run while the
 * other eleven are created and end (a watchpoint set before the later waves
 * exist catches the last of them), then finishes the held one: the program's
 * own checks must pass and the held thread must be the last to finish.
 * tests/fixtures/chain creates its threads one after another; the same
 * schedule run three times must give the same thread names, by creation
 * order.  tests/fixtures/lateorder's second worker always reaches the
 * waited-for function first: the names of a `wait 2 distinct` still go by
 * creation, not arrival.
 */
#include "harness.h"

TestSuite(threads, .fini = h_cleanup, .timeout = 60);

#define WAVES	  "tests/fixtures/waves"
#define CHAIN	  "tests/fixtures/chain"
#define LATEORDER "tests/fixtures/lateorder"

#define QUICK_S 10

Test(threads, hold_one_thread_while_waves_come_and_go)
{
	/* With software watchpoints every free thread is decoded through
	 * job()'s loop until one writes finished: seconds on a loaded host. */
	char *sched = h_temp_sched("waves.sched", "timeout 25s\n"
						  "thread A = wait any enter(job)\n"
						  "wait any write(finished) && finished == 11\n"
						  "run A until return(job)\n"
						  "release all\n");
	char *json_path = h_fmt("%s.json", sched), *json, *first_line, *nl;
	struct h_trace_ev ev[8];
	struct h_result r;
	char tid[32] = "", thread[32] = "";
	int n, job = -1, last_tid = -1, wave2;

	r = H_RUN(h_cctrace(), "run", "--fail-on-exit", "--trace-json", json_path, sched, "--",
		  WAVES);
	cr_assert_eq(r.code, 0, "exit %d, expected 0 (completed):\nstdout:\n%s\nstderr:\n%s",
		     r.code, r.out, r.err);
	cr_expect(strstr(r.err, "cctrace: completed: the schedule ran to its end and the program "
				"exited normally\n"),
		  "%s", r.err);
	cr_assert(sscanf(r.out, "ok: 12 jobs; last to finish: job %d tid %d", &job, &last_tid) == 2,
		  "the program's own check failed:\n%s", r.out);

	n = h_parse_trace(r.err, ev, 8);
	cr_assert_eq(n, 3, "expected 3 trace lines:\n%s", r.err);
	cr_expect_str_eq(ev[0].event, "enter(job)");
	cr_expect_str_eq(ev[1].event, "write(finished)");
	cr_expect_str_eq(ev[2].event, "return(job)");
	cr_expect_str_eq(ev[2].thread, ev[0].thread, "return(job) is not A's:\n%s", r.err);
	cr_expect_str_eq(ev[1].func, "worker");
	/* The eleventh to finish was created in the third wave (p1.t10 ..
	 * p1.t13), after the watchpoint was set. */
	cr_expect(sscanf(ev[1].thread, "p1.t%d", &wave2) == 1 && wave2 >= 10 && wave2 <= 13,
		  "write(finished) == 11 by %s, expected a thread of the third wave:\n%s",
		  ev[1].thread, r.err);

	/* A is the thread the program saw finish last, and its name is its
	 * creation order: job J is thread p1.t(J+2). */
	json = h_read_file(json_path, NULL);
	cr_assert(json, "no %s", json_path);
	first_line = strstr(json, "{\"type\":\"event\","); /* after the header */
	cr_assert_not_null(first_line, "no event in the JSON trace:\n%s", json);
	nl = strchr(first_line, '\n');
	if (nl)
		*nl = 0;
	cr_assert(h_json_field(first_line, "tid", tid, sizeof(tid)), "%s", first_line);
	cr_assert(h_json_field(first_line, "thread", thread, sizeof(thread)), "%s", first_line);
	cr_expect_str_eq(thread, ev[0].thread);
	cr_expect_eq(atoi(tid), last_tid,
		     "A (tid %s) was held, yet tid %d finished last:\nstdout: %s\nstderr:\n%s", tid,
		     last_tid, r.out, r.err);
	{
		char *want = h_fmt("p1.t%d", job + 2);

		cr_expect(job >= 0 && job < 4, "A should be from the first wave, is job %d", job);
		cr_expect_str_eq(ev[0].thread, want, "job %d runs in thread %s, named %s", job,
				 want, ev[0].thread);
		free(want);
	}
	free(json);
	unlink(json_path);
	h_result_free(&r);
}

Test(threads, thread_names_are_stable_across_runs)
{
	char *sched = h_temp_sched("chain.sched", "timeout 5s\n"
						  "thread A = wait any enter(visit)\n"
						  "run A until return(visit)\n"
						  "release A\n"
						  "thread B = wait any enter(visit)\n"
						  "run B until return(visit)\n"
						  "release B\n"
						  "thread C = wait any enter(visit)\n"
						  "run C until return(visit)\n"
						  "release C\n"
						  "thread D = wait any enter(visit)\n"
						  "run D until return(visit)\n"
						  "release all\n");
	static const char *const want_thread[] = {"p1.t2", "p1.t2", "p1.t3", "p1.t3",
						  "p1.t4", "p1.t4", "p1.t5", "p1.t5"};
	char first[1024] = "";
	int run;

	for (run = 0; run < 3; run++) {
		struct h_result r = H_RUN(h_cctrace(), "run", "--fail-on-exit", sched, "--", CHAIN);
		struct h_trace_ev ev[16];
		char seq[1024] = "";
		int n, i;

		cr_assert_eq(r.code, 0, "run %d: exit %d:\n%s", run + 1, r.code, r.err);
		cr_expect_str_eq(r.out, "ok: visited 0 1 2 3\n", "run %d", run + 1);
		n = h_parse_trace(r.err, ev, 16);
		cr_assert_eq(n, 8, "run %d: expected 8 trace lines:\n%s", run + 1, r.err);
		for (i = 0; i < n; i++) {
			cr_expect_str_eq(ev[i].thread, want_thread[i], "run %d, line %d:\n%s",
					 run + 1, i + 1, r.err);
			cr_expect_str_eq(ev[i].event, i % 2 ? "return(visit)" : "enter(visit)",
					 "run %d, line %d:\n%s", run + 1, i + 1, r.err);
			strncat(seq, ev[i].thread, sizeof(seq) - strlen(seq) - 1);
			strncat(seq, " ", sizeof(seq) - strlen(seq) - 1);
			strncat(seq, ev[i].event, sizeof(seq) - strlen(seq) - 1);
			strncat(seq, "\n", sizeof(seq) - strlen(seq) - 1);
		}
		if (run == 0)
			snprintf(first, sizeof(first), "%s", seq);
		else
			cr_expect_str_eq(seq, first, "run %d differs from run 1", run + 1);
		h_result_free(&r);
	}
}

/* A named thread that exits before its predicate: unrealizable, and the
 * program (still running, blocked on the held threads' progress) is killed. */
Test(threads, names_of_one_wait_go_by_arrival)
{
	char *sched =
	    h_temp_sched("lateorder.sched", "thread A, B = wait 2 distinct enter(arrive)\n"
					    "assert A.id == 2\n"
					    "assert B.id == 1\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", LATEORDER);

	cr_assert_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	h_result_free(&r);
}

Test(threads, named_thread_exits_before_predicate)
{
	char *sched = h_temp_sched("exits.sched", "timeout 5s\n"
						  "thread A = wait any enter(job)\n"
						  "run A until enter(main)\n");
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "run", sched, "--", WAVES, NULL}, QUICK_S);
	struct h_trace_ev ev[4];
	char *want;

	cr_expect(!r.timed_out, "cctrace did not end within %d s:\n%s", QUICK_S, r.err);
	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	cr_assert_eq(h_parse_trace(r.err, ev, 4), 1, "%s", r.err);
	want = h_fmt("cctrace: unrealizable: %s exited before reaching 'enter(main)' (%s:3:1)\n",
		     ev[0].thread, sched);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	free(want);
	h_result_free(&r);
}

/* Running a thread that has ended is unrealizable, and says which thread. */
Test(threads, run_of_an_ended_thread)
{
	char *sched = h_temp_sched("ended.sched", "timeout 5s\n"
						  "thread A = wait any enter(job)\n"
						  "run A until exit\n"
						  "run A until enter(job)\n");
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "run", sched, "--", WAVES, NULL}, QUICK_S);
	struct h_trace_ev ev[4];
	const char *outcome;
	char *where;

	cr_expect(!r.timed_out, "cctrace did not end within %d s:\n%s", QUICK_S, r.err);
	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	cr_assert_eq(h_parse_trace(r.err, ev, 4), 2, "%s", r.err);
	cr_expect_str_eq(ev[1].event, "exit");
	cr_expect_str_eq(ev[1].thread, ev[0].thread);
	outcome = strstr(r.err, "cctrace: unrealizable: ");
	cr_assert(outcome, "%s", r.err);
	where = h_fmt("%s:4:1", sched);
	cr_expect(strstr(outcome, ev[0].thread) && strstr(outcome, where),
		  "the outcome should say that %s (A) has ended, at %s:\n%s", ev[0].thread, where,
		  r.err);
	free(where);
	h_result_free(&r);
}

/* Two held threads run one after the other until the same watched write:
 * the watchpoint must fire in the second thread too. */
Test(threads, same_watchpoint_in_consecutive_runs)
{
	char *sched = h_temp_sched("ww.sched", "timeout 2s\n"
					       "thread A, B = wait 2 distinct enter(withdraw)\n"
					       "run A until write(balance)\n"
					       "run B until write(balance)\n"
					       "release all\n");
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "run", sched, "--", "samples/bank/bank", NULL},
		  QUICK_S);
	struct h_trace_ev ev[8];
	int n;

	cr_expect_eq(r.code, 0, "exit %d, expected 0 (completed):\n%s", r.code, r.err);
	n = h_parse_trace(r.err, ev, 8);
	cr_assert_eq(n, 4, "expected 4 trace lines:\n%s", r.err);
	cr_expect_str_eq(ev[2].event, "write(balance)");
	cr_expect_str_eq(ev[2].thread, ev[0].thread);
	cr_expect_str_eq(ev[3].event, "write(balance)");
	cr_expect_str_eq(ev[3].thread, ev[1].thread, "B's write was not seen:\n%s", r.err);
	/* A wrote first and B read A's value: no update is lost. */
	cr_expect_str_eq(r.out, "ok: balance = 70\n");
	h_result_free(&r);
}

/* Every write of `finished` by the threads of the waves is seen, one wait
 * after another: under software watchpoints a thread the stepper had set
 * running to a temporary breakpoint ran on unseen when that breakpoint was
 * evicted to make room for other threads' (several of the eleven writes
 * were lost, and the loop waited for one that had already happened). */
Test(threads, every_write_of_the_waves_is_seen)
{
	char *sched = h_temp_sched("waves-all.sched", "timeout 25s\n"
						      "thread A = wait any enter(job)\n"
						      "while (finished < 11) {\n"
						      "\twait any write(finished)\n"
						      "}\n"
						      "run A until return(job)\n"
						      "release all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", "--fail-on-exit", sched, "--", WAVES);

	cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.out, "ok: 12 jobs") != NULL, "%s", r.out);
	h_result_free(&r);
}

/* The main thread of a launched program, named by pN.tM before its start
 * was seen, can be run and stepped at once: its start event is news no
 * more.  (It used to be delivered after the thread had been let go, and
 * broke the tracer's contract: an assertion aborted cctrace.) */
Test(threads, a_launched_main_thread_named_at_once_can_be_run_and_stepped)
{
	static const char *const scheds[] = {
	    "thread A = p1.t1\nrun A until exit\n",
	    "thread A = p1.t1\nstep A\nstep A\nstep A\nrun A until exit\n",
	};
	static const int steps[] = {0, 3};
	size_t i;

	for (i = 0; i < sizeof(scheds) / sizeof(scheds[0]); i++) {
		char *sched = h_temp_sched("main.sched", scheds[i]);
		struct h_result r = h_run(
		    (const char *const[]){h_cctrace(), "run", sched, "--", WAVES, NULL}, QUICK_S);
		struct h_trace_ev ev[8];
		int n = h_parse_trace(r.err, ev, 8), k;

		cr_expect(!r.timed_out, "cctrace did not end within %d s:\n%s", QUICK_S, r.err);
		cr_expect_eq(r.code, 0, "schedule %zu: exit %d, expected 0:\n%s", i, r.code, r.err);
		cr_assert_eq(n, steps[i] + 1, "schedule %zu: %d events:\n%s", i, n, r.err);
		for (k = 0; k < steps[i]; k++)
			cr_expect_str_eq(ev[k].event, "step");
		cr_expect_str_eq(ev[n - 1].event, "exit");
		cr_expect_str_eq(ev[n - 1].thread, "p1.t1");
		cr_expect(strstr(r.err, "cctrace: completed:"), "%s", r.err);
		h_result_free(&r);
	}
}

/* A thread that sleeps in a system call it was moved into by the stepper
 * runs that instruction out of line, from a scratch slot.  Where the
 * threads were is still told from the code: the function it sleeps in,
 * not "??" (a slot has no symbol). */
Test(threads, a_thread_sleeping_in_a_displaced_system_call_is_shown_where_it_is)
{
	char *sched = h_temp_sched("sleeps.sched", "timeout 1s\n"
						   "thread M = p1.t1\n"
						   "run M until call(abort)\n");
	struct h_proc p = h_spawn((const char *const[]){h_cctrace(), "run", sched, "--",
							"tests/fixtures/futexhold", "--read", NULL},
				  true, true, true);
	struct h_result r = h_collect(&p, QUICK_S); /* stdin stays open, unwritten */
	const char *line;

	cr_expect(!r.timed_out, "cctrace did not end within %d s:\n%s", QUICK_S, r.err);
	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	line = strstr(r.err, "    p1.t1    M    blocked in read");
	cr_assert(line, "main should be shown asleep in read:\n%s", r.err);
	cr_expect(strncmp(strstr(line, " at ") ?: "", " at read+", 9) == 0 && !strstr(r.err, "??"),
		  "its place should be libc's read:\n%s", r.err);
	h_result_free(&r);
}

/* Threads that ended plainly, named by no variable, are one line where the
 * threads were: a program that ran hundreds of short workers would bury
 * the ones that matter. */
Test(threads, threads_that_ended_are_one_line_where_the_threads_were)
{
	char *sched = h_temp_sched("rounds.sched", "timeout 2s\n"
						   "thread M = p1.t1\n"
						   "run M until call(abort)\n");
	struct h_result r = h_run((const char *const[]){h_cctrace(), "run", sched, "--",
							"samples/bank/bank", "--loop", NULL},
				  QUICK_S);
	const char *list = strstr(r.err, "  threads:\n"), *summary;
	int n = 0, last = 0;

	cr_expect(!r.timed_out, "cctrace did not end within %d s:\n%s", QUICK_S, r.err);
	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	cr_assert(list, "%s", r.err);
	summary = strstr(list, " other threads exited (p1.t2 ... p1.t");
	cr_assert(summary, "the ended workers should be summed up:\n%s", r.err);
	while (summary > list && summary[-1] != ' ')
		summary--;
	cr_assert_eq(sscanf(summary, "%d other threads exited (p1.t2 ... p1.t%d)", &n, &last), 2,
		     "%s", r.err);
	cr_expect(n >= 2 && last == n + 1, "%d threads from p1.t2 to p1.t%d:\n%s", n, last, r.err);
	cr_expect_eq(h_count_lines(list, "exited"), 1, "one line for all of them:\n%s", r.err);
	h_result_free(&r);
}

/* enter(F) means the F the program's calls reach, as ld.so binds them: a
 * preloaded library's (LD_PRELOAD, read from the live process), or
 * AddressSanitizer's free in a program built with it.  libc's own was
 * taken before: the preload's puts was passed by, and libc's free, which
 * an ASan program never calls, was waited for until the timeout. */
Test(threads, a_function_a_library_interposes_is_the_one_entered)
{
	char *puts_sched = h_temp_sched("puts.sched", "timeout 5s\n"
						      "thread M = wait any enter(puts)\n"
						      "run M until exit\n");
	char *free_sched = h_temp_sched("free.sched", "timeout 5s\n"
						      "thread M = wait any enter(free)\n"
						      "run M until exit\n");
	char *cwd = getcwd(NULL, 0);
	char *preload = h_fmt("LD_PRELOAD=%s/tests/fixtures/libputsfirst.so", cwd);
	struct h_result r;
	struct h_trace_ev ev[8];

	free(cwd);
	/* cctrace inherits the preload too: an ASan build of it (make test)
	 * must be told not to mind that its runtime is not first */
	r = h_run((const char *const[]){"env", preload, "ASAN_OPTIONS=verify_asan_link_order=0",
					h_cctrace(), "run", puts_sched, "--",
					"tests/fixtures/freelock", NULL},
		  QUICK_S);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_assert_geq(h_parse_trace(r.err, ev, 8), 1, "%s", r.err);
	cr_expect_str_eq(ev[0].event, "enter(puts)");
	cr_expect(strstr(r.err, "libputsfirst.c:"), "the preload's puts:\n%s", r.err);
	h_result_free(&r);

	r = h_run((const char *const[]){h_cctrace(), "run", free_sched, "--",
					"tests/fixtures/serasan", "--fixed", NULL},
		  QUICK_S);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_assert_geq(h_parse_trace(r.err, ev, 8), 1, "%s", r.err);
	cr_expect_str_eq(ev[0].event, "enter(free)");
	h_result_free(&r);
}

/* A schedule that ran to its end over a program that then failed says
 * the status: "exited normally" it was not.  --fail-on-exit makes it a bug. */
Test(threads, a_completed_schedule_tells_a_failed_exit_status)
{
	char *sched = h_temp_sched("status.sched", "thread M = p1.t1\nrun M until exit\n");
	struct h_result r = h_run((const char *const[]){h_cctrace(), "run", sched, "--",
							"tests/fixtures/countruns", NULL},
				  QUICK_S);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "cctrace: completed: the schedule ran to its end and the program "
				"exited with status 2 (--fail-on-exit makes that a bug)"),
		  "%s", r.err);
	h_result_free(&r);
	r = h_run((const char *const[]){h_cctrace(), "run", "--fail-on-exit", sched, "--",
					"tests/fixtures/countruns", NULL},
		  QUICK_S);
	cr_expect_eq(r.code, 1, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "cctrace: bug: the program exited with status 2"), "%s", r.err);
	h_result_free(&r);
	/* allowed: said so, and --fail-on-exit is not offered again */
	r = h_run((const char *const[]){h_cctrace(), "run", "--fail-on-exit", "--ok-exit", "2",
					sched, "--", "tests/fixtures/countruns", NULL},
		  QUICK_S);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "exited with status 2 (allowed by --ok-exit)"), "%s", r.err);
	h_result_free(&r);
}

/* A variable whose thread a `release` let go names no thread: running it
 * is the schedule's mistake (exit 3), said with the release's line, not
 * "never bound". */
Test(threads, running_a_released_thread_is_an_error_that_names_the_release)
{
	char *sched = h_temp_sched("released.sched", "timeout 5s\n"
						     "thread A = wait any enter(job)\n"
						     "release A\n"
						     "run A until exit\n");
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "run", sched, "--", WAVES, NULL}, QUICK_S);
	char *want = h_fmt("cctrace: error: thread A names no thread: 'release' at line 3 let "
			   "its thread go; bind it again by its stable name, thread A = pN.tM "
			   "(%s:4:1)\n",
			   sched);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	free(want);
	h_result_free(&r);
	/* hold too: it did nothing, and said nothing */
	sched = h_temp_sched("held.sched", "timeout 5s\n"
					   "thread A = wait any enter(job)\n"
					   "release A\n"
					   "hold A\n");
	r = h_run((const char *const[]){h_cctrace(), "run", sched, "--", WAVES, NULL}, QUICK_S);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "thread A names no thread: 'release' at line 3"), "%s", r.err);
	h_result_free(&r);
}

/* A wait for more threads than can come says how many did, and shows the
 * ones it matched as held by it, not as free: waves' main waits for its
 * first wave of four, which the wait holds at job. */
Test(threads, a_wait_that_runs_out_says_how_many_threads_came)
{
	char *sched = h_temp_sched("five.sched", "timeout 1s\nwait 5 distinct enter(job)\n");
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "run", sched, "--", WAVES, NULL}, QUICK_S);
	char *want = h_fmt("cctrace: unrealizable: only 4 of the 5 threads it needs reached "
			   "'enter(job)' within 1000 ms (%s:2:1); where the threads were:\n",
			   sched);

	cr_expect_eq(r.code, 2, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	cr_expect_eq(h_count_lines(r.err, "matched, held      at job+0"), 4, "%s", r.err);
	cr_expect(!strstr(r.err, " free "), "%s", r.err);
	free(want);
	h_result_free(&r);
}
