/*
 * test_deadlock.c: a deadlock is reported only when no release by the
 * schedule could end it.
 *
 * tests/fixtures/joinwork is the shape that SCTBench's work-stealing
 * queues, qsort_mt and bluetooth_driver_bad have: main runs t1 itself and
 * joins the worker that runs t2.  The generic search schedule below holds
 * the worker at its exit event while main sleeps in pthread_join on it;
 * cctrace used to call that "deadlock: every thread the schedule controls
 * is blocked" in the first run.  Now the thread held at its exit is let go
 * for the joiner, and the search runs through the join.  A thread blocked
 * on a thread the schedule holds elsewhere is unrealizable, and the
 * message (of a run, of a choose, of a timeout) names the held thread;
 * the lock-order deadlock of tests/fixtures/abba is still a deadlock.
 * tests/fixtures/freelock: a lock that a free (uncontrolled) thread holds
 * while it computes is waited for; a deadlock that involves a free thread
 * is still found.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

TestSuite(deadlock, .fini = h_cleanup, .timeout = 120);

#define JOINWORK "tests/fixtures/joinwork"
#define LOCKERS	 "tests/fixtures/lockers"
#define FREELOCK "tests/fixtures/freelock"

/* Exactly the schedule of the report (issue 10). */
static const char generic_search[] = "thread A, B = wait 2 distinct enter(t1) || enter(t2)\n"
				     "while (!ended(A) || !ended(B)) {\n"
				     "\tthread T = choose(A, B)\n"
				     "\trun T until read || write || exit\n"
				     "}\n";

static long json_long(const char *text, const char *key)
{
	char buf[64];

	cr_assert(h_json_field(text, key, buf, sizeof(buf)), "no \"%s\" in %s", key, text);
	return strtol(buf, NULL, 10);
}

Test(deadlock, generic_search_over_a_join_finds_no_deadlock)
{
	char dir[] = "/tmp/cctrace-deadlock-XXXXXX";
	char *path = h_temp_sched("join.search", generic_search);
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	{
		const char *argv[] = {h_cctrace(), "explore", path, "--runs", "6", "--json",
				      "--out",	   dir,	      "--", JOINWORK, NULL};

		r = h_run(argv, 110);
	}
	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "bug: deadlock") == NULL, "%s", r.err);
	cr_expect_eq(json_long(r.out, "runs"), 6, "%s", r.out);
	cr_expect_eq(json_long(r.out, "bugs"), 0, "%s", r.out);
	/* Every run followed the schedule through the join to the end. */
	cr_expect_eq(json_long(r.out, "completed"), 6, "%s\n%s", r.out, r.err);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

Test(deadlock, joiner_of_a_thread_held_at_its_exit_goes_on)
{
	char *path =
	    h_temp_sched("join-exit.sched", "thread A, B = wait 2 distinct enter(t1) || enter(t2)\n"
					    "thread M = p1.t1\n"
					    "thread W = p1.t2\n"
					    "run W until exit\n"
					    "run M until exit\n");
	const char *argv[] = {h_cctrace(), "run", "--fail-on-exit", path, "--", JOINWORK, NULL};
	struct h_result r = h_run(argv, 60);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "deadlock") == NULL, "%s", r.err);
	cr_expect(strstr(r.err, "let go at its exit: p1.t1 waits for it") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed:") != NULL, "%s", r.err);
	/* main got past the join and saw what both threads did */
	cr_expect(strstr(r.out, "joined: 3\n") != NULL, "program output: %s", r.out);
	h_result_free(&r);
}

Test(deadlock, joiner_of_a_held_thread_is_unrealizable_and_names_it)
{
	char *path =
	    h_temp_sched("join-held.sched", "thread A, B = wait 2 distinct enter(t1) || enter(t2)\n"
					    "thread M = p1.t1\n"
					    "thread W = p1.t2\n"
					    "run M until exit\n");
	const char *argv[] = {h_cctrace(), "run", path, "--", JOINWORK, NULL};
	struct h_result r = h_run(argv, 60);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "deadlock") == NULL, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: unrealizable: p1.t1 is blocked in futex (") != NULL, "%s",
		  r.err);
	/* named by the variable the wait gave it, as in replays */
	cr_expect(strstr(r.err, ", waiting for A (p1.t2), which the schedule holds; a held "
				"thread must go first (") ||
		      strstr(r.err, ", waiting for B (p1.t2), which the schedule holds; a held "
				    "thread must go first ("),
		  "%s", r.err);
	h_result_free(&r);
}

Test(deadlock, choice_of_threads_blocked_on_a_held_one_is_unrealizable)
{
	/* A holds the mutex in critical(); B and C sleep on it.  Neither can
	 * be chosen, and only a release of A (which this schedule never
	 * makes) would wake them: not a deadlock. */
	char *path =
	    h_temp_sched("lockers.sched", "timeout 20s\n"
					  "thread A, B, C = wait 3 distinct enter(worker)\n"
					  "run A until enter(critical)\n"
					  "run B until enter(critical) || blocked\n"
					  "run C until enter(critical) || blocked\n"
					  "thread T = choose(B, C)\n"
					  "run T until enter(critical)\n");
	const char *argv[] = {h_cctrace(), "run", path, "--", LOCKERS, NULL};
	struct h_result r = h_run(argv, 60);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "deadlock") == NULL, "%s", r.err);
	cr_expect(strstr(r.err,
			 "cctrace: unrealizable: every thread to choose from is blocked: ") != NULL,
		  "%s", r.err);
	cr_expect(strstr(r.err, ", waiting for A (p1.t") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "which the schedule holds; a held thread must go first (") != NULL,
		  "%s", r.err);
	h_result_free(&r);
}

/* step, next and finish into a lock a held thread owns end at once, as a
 * run does, saying why (they waited out the statement's timeout and said
 * nobody reached the statement's end). */
Test(deadlock, next_finish_and_step_into_a_held_lock_end_at_once)
{
	/* from take_second's first line, the next is its call of the lock */
	static const char *const moves[] = {"next A\nnext B\nnext A\n", "finish A\n",
					    "step A 10000\n"};
	size_t i;

	for (i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		char *text = h_fmt("timeout 30s\n"
				   "thread A, B = wait 2 distinct enter(take_second)\n"
				   "%s",
				   moves[i]);
		const char *argv[] = {
		    h_cctrace(),	   "run", h_temp_sched("abba.sched", text), "--",
		    "tests/fixtures/abba", NULL};
		struct h_result r = h_run(argv, 100);

		cr_assert(!r.timed_out, "%s", r.err);
		cr_expect_eq(r.code, 2, "%s: %s", moves[i], r.err);
		cr_expect(
		    strstr(r.err, "cctrace: unrealizable: p1.t") &&
			strstr(r.err, " is blocked in futex (") &&
			strstr(r.err, "which the schedule holds; a held thread must go first"),
		    "%s: %s", moves[i], r.err);
		h_result_free(&r);
	}
}

/* A schedule that lets its threads go into a deadlock has found it: every
 * thread sleeps, and none can wake the others (cctrace waited for the
 * program's end for ever).  A wait with a timeout is no such sleep. */
Test(deadlock, a_deadlock_after_the_schedules_end_is_a_bug)
{
	const char *argv[] = {
	    h_cctrace(),
	    "run",
	    h_temp_sched("abba-end.sched", "thread A, B = wait 2 distinct enter(take_second)\n"),
	    "--",
	    "tests/fixtures/abba",
	    NULL};
	const char *nap[] = {
	    h_cctrace(),
	    "run",
	    h_temp_sched("nap.sched", "thread A = wait any enter(about_to_wait)\n"),
	    "--",
	    "tests/fixtures/napwait",
	    NULL};
	struct h_result r = h_run(argv, 60);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 1, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: bug: deadlock after the schedule's end: every thread "
				"sleeps, and none can wake the others"),
		  "%s", r.err);
	cr_expect(
	    strstr(r.err, "(free): blocked in futex (__GI___lll_lock_wait), waiting for p1.t"),
	    "%s", r.err);
	h_result_free(&r);
	r = h_run(nap, 60);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "woke: 110"), "%s", r.out);
	h_result_free(&r);
}

/* What sleeps for a time, or waits for a signal the program handles, may
 * yet post what a blocked thread waits for: no deadlock (a run held the
 * worker in sem_wait while main slept, then posted, and called it one; a
 * schedule's end with a timer pending was taken for a hang). */
Test(deadlock, a_sleeper_or_a_pending_timer_may_yet_wake_the_blocked)
{
	const char *held[] = {h_cctrace(),
			      "run",
			      h_temp_sched("held.sched", "thread C = wait any enter(waiter)\n"
							 "run C until return(sem_wait)\n"),
			      "--",
			      "tests/fixtures/sleeppost",
			      NULL};
	const char *ended[] = {h_cctrace(),
			       "run",
			       h_temp_sched("ended.sched", "thread C = wait any enter(waiter)\n"),
			       "--",
			       "tests/fixtures/sleeppost",
			       "alarm",
			       NULL};
	struct h_result r = h_run(held, 60);

	cr_expect_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.out, "posted"), "%s", r.out);
	h_result_free(&r);
	r = h_run(ended, 60);
	cr_expect_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.out, "posted"), "%s", r.out);
	h_result_free(&r);
}

Test(deadlock, lock_order_deadlock_is_still_one_every_time)
{
	int i;

	for (i = 0; i < 5; i++) {
		const char *argv[] = {
		    h_cctrace(),	   "run", "tests/schedules/abba-deadlock.sched", "--",
		    "tests/fixtures/abba", NULL};
		struct h_result r = h_run(argv, 30);

		cr_assert(!r.timed_out, "run %d waited for the timeout:\n%s", i, r.err);
		cr_expect_eq(r.code, 1, "run %d: %s", i, r.err);
		cr_expect(strstr(r.err, "cctrace: bug: deadlock: ") != NULL, "run %d: %s", i,
			  r.err);
		/* main, free, sleeps in pthread_join on a blocked thread */
		cr_expect(strstr(r.err, "  p1.t1 (free): blocked in futex") != NULL, "run %d: %s",
			  i, r.err);
		cr_expect(strstr(r.err, "which is blocked too") != NULL, "run %d: %s", i, r.err);
		h_result_free(&r);
	}
}

Test(deadlock, timeout_names_the_held_thread_the_others_wait_for)
{
	/* A is held in critical(), owning the mutex; the other workers, free,
	 * sleep on it, and nobody can return from critical(). */
	char *path = h_temp_sched("timeout.sched", "timeout 500ms\n"
						   "thread A = wait any enter(critical)\n"
						   "wait any return(critical)\n");
	const char *argv[] = {h_cctrace(), "run", path, "--", LOCKERS, NULL};
	struct h_result r = h_run(argv, 60);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: unrealizable: no thread reached 'return(critical)' "
				"within 500 ms") != NULL,
		  "%s", r.err);
	/* the two on the mutex (and main too, if A is the worker it joins) */
	cr_expect_eq(
	    h_count_lines(r.err, ", waiting for A (p1.t2), which the schedule holds at "
				 "__GI___lll_lock_wait+") +
		h_count_lines(r.err, ", waiting for A (p1.t3), which the schedule holds at "
				     "__GI___lll_lock_wait+") +
		h_count_lines(r.err, ", waiting for A (p1.t4), which the schedule holds at "
				     "__GI___lll_lock_wait+"),
	    2, "%s", r.err);
	h_result_free(&r);
}

static struct h_result run_freelock(const char *mode)
{
	char *path = h_temp_sched("freelock.sched", "timeout 20s\n"
						    "thread W = wait any enter(worker)\n"
						    "run W until enter(worker_done)\n");
	const char *argv[] = {h_cctrace(), "run", path, "--", FREELOCK, mode, NULL};

	return h_run(argv, 60);
}

Test(deadlock, lock_held_by_a_computing_free_thread_is_waited_for)
{
	/* The worker blocks on a lock a free thread holds while it computes
	 * for 300 ms: no held thread is involved, and it is no deadlock. */
	struct h_result r = run_freelock(NULL);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "deadlock") == NULL, "%s", r.err);
	cr_expect(strstr(r.err, "enter(worker_done)") != NULL, "%s", r.err);
	cr_expect(strstr(r.out, "freelock: ok\n") != NULL, "%s", r.out);
	h_result_free(&r);
}

Test(deadlock, deadlock_with_a_free_thread_is_found)
{
	struct h_result r = run_freelock("deadlock");

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 1, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: bug: deadlock: ") != NULL, "%s", r.err);
	/* the free thread is in it, waiting for the worker */
	cr_expect(
	    strstr(r.err, "(free): blocked in futex (__GI___lll_lock_wait), waiting for W (") !=
		NULL,
	    "%s", r.err);
	h_result_free(&r);
}

/* A crash of a free thread while the controlled one is blocked on its
 * lock: whichever wait of the engine's sees it (the statement's, the one
 * that stops the blocked worker, or the one that lets free threads run),
 * it is the same bug, reported with the crashing thread's stack (one
 * event loop, loop.c; the wait that stopped blocked threads used to let a
 * crash go unreported). */
Test(deadlock, crash_of_a_free_thread_while_one_is_blocked_is_reported_with_its_stack)
{
	struct h_result r = run_freelock("crash");

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect_eq(r.code, 1, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: bug: ") && strstr(r.err, "received SEGV"), "%s", r.err);
	cr_expect(strstr(r.err, " in busy") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "deadlock") == NULL, "%s", r.err);
	h_result_free(&r);
}

/* A thread in sigsuspend or pause waits for a signal, which another
 * process (here its child), a timer or the terminal may send and no
 * schedule holds back: not a deadlock.  Both were reported as one, a
 * false bug, every time. */
Test(deadlock, a_thread_waiting_for_a_signal_from_its_child_is_no_deadlock)
{
	const char *modes[] = {"--suspend", "--pause"};
	char *sched = h_temp_sched("signal.sched", "timeout 10s\n"
						   "thread M = wait any enter(main)\n"
						   "run M until exit\n");
	size_t i;

	for (i = 0; i < 2; i++) {
		struct h_result r =
		    H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/sigchild", modes[i]);

		cr_expect_eq(r.code, 0, "%s: exit %d:\n%s", modes[i], r.code, r.err);
		cr_expect(!strstr(r.err, "deadlock"), "%s:\n%s", modes[i], r.err);
		cr_expect(strstr(r.out, "got SIGUSR1"), "%s: %s", modes[i], r.out);
		h_result_free(&r);
	}
}

/* A signal event says which signal once: signal(SIGUSR1) as the schedule
 * wrote it, or signal(USR1) after a bare `signal` (was
 * signal(SIGUSR1)(USR1), and "(null)" for a real-time signal). */
Test(deadlock, a_signal_event_names_its_signal_once)
{
	static const char *const scheds[][2] = {
	    {"thread M = wait any signal(SIGUSR1)\n", "signal(SIGUSR1) "},
	    {"thread M = wait any signal\n", "signal(USR1) "},
	};
	size_t i;

	for (i = 0; i < 2; i++) {
		char *sched = h_temp_sched("sig.sched", h_fmt("timeout 10s\n%s", scheds[i][0]));
		struct h_result r =
		    H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/sigchild");

		cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
		cr_expect(strstr(r.err, scheds[i][1]) && !strstr(r.err, ")("), "%s", r.err);
		h_result_free(&r);
	}
}
