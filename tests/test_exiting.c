/*
 * System test: detaching when the thread-group leader has already ended.
 *
 * tests/fixtures/leaderexit's main thread ends with pthread_exit while its
 * worker goes on; the kernel reports the leader only after every other
 * thread has gone.  cctrace used to interrupt and wait for it like any
 * running thread when it detached, while holding the worker: it waited
 * forever (SIGTERM did not help).  The same happened at random when a
 * server was killed in the middle of a schedule (test_memcached.c).  Now
 * the schedule completes, and the worker runs on, untraced.
 */
#include "harness.h"

TestSuite(exiting, .fini = h_cleanup, .timeout = 60);

#define LEADEREXIT "tests/fixtures/leaderexit"

/* After the detach the worker, alone, untraced, goes on calling work()
 * and sleeping: its context switches keep growing. */
static void expect_worker_runs_on(pid_t pid)
{
	pid_t tids[8];
	int64_t deadline;
	long before, now;

	cr_assert_eq(h_tasks(pid, tids, 8), 2, "leaderexit should have 2 threads");
	cr_expect_eq(h_status_field(pid, tids[1], "TracerPid"), 0, "the worker is still traced");
	before = h_status_field(pid, tids[1], "voluntary_ctxt_switches");
	deadline = h_now_ms() + 10000;
	do {
		h_pace();
		now = h_status_field(pid, tids[1], "voluntary_ctxt_switches");
	} while (now < before + 20 && now >= 0 && h_now_ms() < deadline);
	cr_expect_geq(now, before + 20, "the worker stopped running after the detach (%ld -> %ld)",
		      before, now);
	cr_expect_neq(h_task_state(pid, tids[1]), 't');
}

Test(exiting, detach_after_the_leader_ended_does_not_hang)
{
	char *sched = h_temp_sched("leader.sched", "timeout 10s\n"
						   "thread A = wait any enter(work)\n"
						   "wait any exit      # the main thread ends\n"
						   "release all\n");
	const char *fix_argv[] = {LEADEREXIT, NULL};
	struct h_proc fix, cc;
	char line[256], *out;
	int code;

	cr_assert(access(LEADEREXIT, X_OK) == 0, LEADEREXIT " is not built (make fixtures)");
	fix = h_spawn(fix_argv, true, true, false);
	cr_assert(h_read_line(fix.out, line, sizeof(line), 10000) && strcmp(line, "ready") == 0);
	{
		const char *argv[] = {h_cctrace(), "attach", h_fmt("%d", (int)fix.pid), sched,
				      NULL};

		cc = h_spawn(argv, false, false, true);
	}
	cr_assert(h_read_line(cc.err, line, sizeof(line), 10000) && strstr(line, "enter(work)"),
		  "the worker was not bound: %s", line);
	cr_assert_eq(write(fix.in, "go\n", 3), 3);
	out = h_read_all(cc.err, 20);
	code = h_wait(cc.pid, 20, NULL);
	cr_assert_eq(code, 0, "cctrace exited %d (-1: it hung detaching):\n%s", code, out);
	cr_expect(strstr(out, "p1.t1    exit") && strstr(out, "cctrace: completed:"), "%s", out);
	free(out);

	cr_expect_eq(h_task_state(fix.pid, fix.pid), 'Z', "the main thread should have ended");
	expect_worker_runs_on(fix.pid);
}

/* Attaching once the leader has ended: its /proc/PID/maps and mem read
 * empty, so symbols, code and scratch pages go through the worker's
 * /proc/PID/task/TID files, and the worker is the process's only thread. */
Test(exiting, attach_after_the_leader_ended)
{
	char *sched = h_temp_sched("after.sched", "timeout 10s\n"
						  "thread W = wait any enter(work)\n"
						  "run W until return(work)\n"
						  "run W until enter(work)\n"
						  "release all\n");
	const char *fix_argv[] = {LEADEREXIT, NULL};
	struct h_proc fix;
	struct h_result r;
	char line[256];
	int64_t deadline;

	cr_assert(access(LEADEREXIT, X_OK) == 0, LEADEREXIT " is not built (make fixtures)");
	fix = h_spawn(fix_argv, true, true, false);
	cr_assert(h_read_line(fix.out, line, sizeof(line), 10000) && strcmp(line, "ready") == 0);
	cr_assert_eq(write(fix.in, "go\n", 3), 3);
	deadline = h_now_ms() + 10000;
	while (h_task_state(fix.pid, fix.pid) != 'Z' && h_now_ms() < deadline)
		h_pace();
	cr_assert_eq(h_task_state(fix.pid, fix.pid), 'Z', "the main thread did not end");
	r = H_RUN(h_cctrace(), "attach", h_fmt("%d", (int)fix.pid), sched);
	cr_expect_eq(r.code, 0, "cctrace attach exited %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "p1.t1    enter(work)") && strstr(r.err, "return(work)"), "%s",
		  r.err);
	h_result_free(&r);
	expect_worker_runs_on(fix.pid);
}
