/*
 * System tests: following the processes a traced program creates.
 *
 * The target is tests/fixtures/forker, whose children call child_work()
 * and report through their exit status whether it returned the right
 * value; the parent exits non-zero if any child did not exit 0, so a child
 * killed by an int3 it inherited, or by a displaced-instruction slot it
 * does not have, fails the run (--fail-on-exit).  Forked children must
 * show in the trace as p2.t1, p3.t1... from their first instruction, an
 * exec must reload symbols so that breakpoints are planted in the new
 * image, a process that ends must not disturb the others, and an attached
 * parent's later children must be followed and left clean at detach.
 */
#include "harness.h"

TestSuite(procs, .fini = h_cleanup, .timeout = 60);

#define FORKER "tests/fixtures/forker"

static void need_forker(void)
{
	cr_assert(access(FORKER, X_OK) == 0, FORKER " is not built (make fixtures)");
}

/* cctrace run --fail-on-exit SCHED -- forker ARGS; expects exit code `code`. */
static struct h_result run_forker(const char *sched_text, const char *mode, const char *arg,
				  int code)
{
	char *sched = h_temp_sched("procs.sched", sched_text);
	struct h_result r;

	need_forker();
	r = h_run((const char *const[]){h_cctrace(), "run", "--fail-on-exit", sched, "--", FORKER,
					mode, arg, NULL},
		  H_SAFETY_S);
	cr_assert_eq(r.code, code, "cctrace exited %d, expected %d:\n%s%s", r.code, code, r.out,
		     r.err);
	return r;
}

/* The trace line of thread `thread` with event `event`, or NULL. */
static const struct h_trace_ev *find_event(const struct h_trace_ev *evs, int n, const char *thread,
					   const char *event)
{
	int i;

	for (i = 0; i < n; i++)
		if ((!thread || strcmp(evs[i].thread, thread) == 0) &&
		    strcmp(evs[i].event, event) == 0)
			return &evs[i];
	return NULL;
}

/* Process number of a "p3.t1" name. */
static int process_of(const char *name)
{
	int p = 0, t = 0;

	cr_assert(sscanf(name, "p%d.t%d", &p, &t) == 2, "not a thread name: %s", name);
	return p;
}

Test(procs, fork_children_are_named_and_driven)
{
	struct h_trace_ev evs[32];
	struct h_result r =
	    run_forker("timeout 10s\n"
		       "thread P = wait 1 distinct fork\n"
		       "let parent = proc(P)\n"
		       "release P\n"
		       "thread C, D = wait 2 distinct processes enter(child_work)\n"
		       "assert proc(C) != parent && proc(D) != parent && proc(C) != proc(D)\n"
		       "run D until return(child_work)\n"
		       "run C until return(child_work)\n"
		       "release all\n",
		       "fork", "3", 0);
	int n = h_parse_trace(r.err, evs, 32), i, entered = 0;
	const struct h_trace_ev *fork = find_event(evs, n, "p1.t1", "fork");

	cr_expect(fork, "no fork event of p1.t1:\n%s", r.err);
	for (i = 0; i < n; i++) {
		if (strcmp(evs[i].event, "enter(child_work)") != 0)
			continue;
		entered++;
		cr_expect_gt(process_of(evs[i].thread), 1, "child_work entered in the parent");
		cr_expect(strstr(evs[i].thread, ".t1"), "a child's only thread is t1: %s",
			  evs[i].thread);
	}
	cr_expect_eq(entered, 2, "expected two children held in child_work:\n%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed"), "%s", r.err);
	h_result_free(&r);
}

/* Eight children run through child_work while its int3 is planted in the
 * parent's text they copied; only one of them is held.  Every child must
 * still return the right value and exit 0. */
Test(procs, inherited_breakpoints_never_crash_a_child)
{
	struct h_result r = run_forker("timeout 10s\n"
				       "thread C, D = wait 2 distinct processes enter(child_work)\n"
				       "run C until return(child_work)\n"
				       "run D until return(child_work)\n"
				       "release all\n",
				       "fork", "8", 0);

	cr_expect(strstr(r.err, "cctrace: completed"), "%s", r.err);
	cr_expect(!strstr(r.err, "forker: child"), "a child failed:\n%s", r.err);
	h_result_free(&r);
}

Test(procs, vfork_then_exec_reloads_symbols)
{
	struct h_trace_ev evs[16];
	struct h_result r = run_forker("timeout 10s\n"
				       "thread E = wait 1 distinct exec\n"
				       "run E until enter(child_work)\n"
				       "assert proc(E) > 0\n"
				       "release all\n",
				       "vfork", NULL, 0);
	int n = h_parse_trace(r.err, evs, 16);
	const struct h_trace_ev *exec = find_event(evs, n, "p2.t1", "exec");
	const struct h_trace_ev *enter = find_event(evs, n, "p2.t1", "enter(child_work)");

	cr_expect(exec, "no exec event of the vfork child p2.t1:\n%s", r.err);
	cr_assert(enter, "the exec'd child did not stop in child_work:\n%s", r.err);
	cr_expect(strstr(enter->where, "forker.c:"), "no source line from the new image: %s",
		  enter->where);
	h_result_free(&r);
}

/* A breakpoint planted while a vfork child lives, its parent asleep in
 * vfork: the scratch page is mapped through the child, which shares the
 * memory (the parent's thread was asked, could make no call until the
 * child's exec, and every such schedule failed after 10 s with "cannot
 * map a scratch page").  The same with the parent let go first. */
Test(procs, a_breakpoint_planted_in_a_vfork_child_s_life)
{
	const char *const scheds[] = {
	    "timeout 5s\nthread M = wait any fork\nthread V = wait any enter(execve)\n"
	    "run V until exec\nrelease all\n",
	    "timeout 5s\nthread M = wait any fork\nrelease M\nthread V = wait any enter(execve)\n"
	    "run V until exec\nrelease all\n"};
	size_t i;

	for (i = 0; i < sizeof(scheds) / sizeof(scheds[0]); i++) {
		char *sched = h_temp_sched("vf.sched", scheds[i]);
		struct h_result r =
		    H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/vforkone");

		cr_expect_eq(r.code, 0, "schedule %zu: exit %d:\n%s", i, r.code, r.err);
		cr_expect(strstr(r.err, "enter(execve)") && strstr(r.out, "child exited 0"),
			  "schedule %zu:\n%s%s", i, r.out, r.err);
		h_result_free(&r);
	}
}

/* A wait that times out while a thread sleeps in vfork for a child the
 * schedule holds: the report's list of threads says where each is, the
 * parent "blocked in vfork, not stopped" (no ptrace stop can reach it).
 * cctrace aborted there (an assertion on a thread it took for stopped),
 * and a hung server's report is made the same way. */
Test(procs, a_timed_out_wait_reports_a_thread_in_vfork)
{
	char *sched = h_temp_sched(
	    "vft.sched",
	    "timeout 300ms\nthread C = wait any enter(execl)\nwait any enter(printf)\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/vforkone");

	cr_expect_eq(r.code, 2, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "no thread reached 'enter(printf)'") &&
		      strstr(r.err, "p1.t1         blocked in vfork, not stopped") &&
		      strstr(r.err, "p2.t1    C    held               at execl"),
		  "%s", r.err);
	h_result_free(&r);
}

/* A parent in wait4 for a child the schedule holds: the message names the
 * held child ("p1.t1 is blocked in wait4; a held thread must go first"
 * left the user to guess which). */
Test(procs, a_wait_for_a_held_child_names_it)
{
	struct h_result r = run_forker("thread C = wait any enter(child_work)\n"
				       "thread P = p1.t1\n"
				       "run P until exit\n",
				       "fork", "1", 2);

	cr_expect(strstr(r.err, "p1.t1 is blocked in wait4 (wait4), waiting for C (p2.t1), which "
				"the schedule holds"),
		  "%s", r.err);
	h_result_free(&r);
}

/* clone() without CLONE_THREAD makes a process: p2, not p1.t2. */
Test(procs, clone_of_a_process_is_a_process)
{
	struct h_trace_ev evs[16];
	struct h_result r = run_forker("timeout 10s\n"
				       "thread P = wait 1 distinct fork\n"
				       "let parent = proc(P)\n"
				       "release P\n"
				       "thread C = wait 1 distinct enter(child_work)\n"
				       "assert proc(C) != parent\n"
				       "run C until return(child_work)\n"
				       "release all\n",
				       "clone", NULL, 0);
	int n = h_parse_trace(r.err, evs, 16);

	cr_expect(find_event(evs, n, "p1.t1", "fork"), "no fork event for clone:\n%s", r.err);
	cr_expect(find_event(evs, n, "p2.t1", "enter(child_work)"), "%s", r.err);
	h_result_free(&r);
}

/* child_work's int3 is in the text the vfork child shares with its parent;
 * after the exec the child's image is new, and the point is planted there. */
Test(procs, point_armed_across_vfork_and_exec)
{
	struct h_trace_ev evs[16];
	struct h_result r = run_forker("timeout 10s\n"
				       "thread C = wait 1 distinct enter(child_work)\n"
				       "run C until return(child_work)\n"
				       "release all\n",
				       "vfork", NULL, 0);
	int n = h_parse_trace(r.err, evs, 16);

	cr_expect(find_event(evs, n, "p2.t1", "enter(child_work)"), "%s", r.err);
	cr_expect(find_event(evs, n, "p2.t1", "return(child_work)"), "%s", r.err);
	h_result_free(&r);
}

Test(procs, exec_in_place_replants_breakpoints)
{
	struct h_trace_ev evs[16];
	struct h_result r = run_forker("timeout 10s\n"
				       "thread E = wait 1 distinct exec\n"
				       "run E until enter(child_work)\n"
				       "run E until return(child_work)\n"
				       "release all\n",
				       "exec", NULL, 0);
	int n = h_parse_trace(r.err, evs, 16);

	cr_expect(find_event(evs, n, "p1.t1", "exec"), "no exec event:\n%s", r.err);
	cr_expect(find_event(evs, n, "p1.t1", "enter(child_work)"), "%s", r.err);
	cr_expect(find_event(evs, n, "p1.t1", "return(child_work)"), "%s", r.err);
	h_result_free(&r);
}

/* The first breakpoint is planted while P is held at its fork event, so
 * the scratch page is mapped by a system call made from inside fork():
 * fork must still return the child's pid (forker exits 2 if it got -1,
 * 1 if a child failed). */
Test(procs, breakpoint_planted_at_a_fork_event_keeps_the_pid)
{
	struct h_trace_ev evs[16];
	struct h_result r = run_forker("timeout 10s\n"
				       "thread P = wait 1 distinct fork\n"
				       "run P until enter(parent_work)\n"
				       "release all\n",
				       "fork", "1", 0);
	int n = h_parse_trace(r.err, evs, 16);

	cr_expect(find_event(evs, n, "p1.t1", "fork"), "%s", r.err);
	cr_expect(find_event(evs, n, "p1.t1", "enter(parent_work)"), "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed"), "%s", r.err);
	h_result_free(&r);
}

/* C's process ends while D is held in another: D is then driven on. */
Test(procs, a_process_exiting_does_not_disturb_the_others)
{
	struct h_trace_ev evs[32];
	struct h_result r = run_forker("timeout 10s\n"
				       "thread C, D = wait 2 distinct processes enter(child_work)\n"
				       "run C until exit\n"
				       "release C\n"
				       "run D until return(child_work)\n"
				       "release all\n",
				       "fork", "3", 0);
	int n = h_parse_trace(r.err, evs, 32);
	const struct h_trace_ev *ret = find_event(evs, n, NULL, "return(child_work)");

	cr_expect(find_event(evs, n, NULL, "exit"), "no exit event:\n%s", r.err);
	cr_expect(ret, "D was not driven after C's process ended:\n%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed"), "%s", r.err);
	h_result_free(&r);
}

/* A parent cctrace attached to: children it forks afterwards are followed,
 * and after the detach it forks clean, untraced children. */
Test(procs, attach_follows_children_forked_after_it)
{
	struct h_text before[64], after[64];
	const char *argv[] = {FORKER, "server", NULL};
	struct h_proc server, tracer;
	struct h_result r;
	char line[128], *sched, *diff;
	int pid = 0, nbefore, nafter;

	need_forker();
	server = h_spawn(argv, true, true, false);
	cr_assert(h_read_line(server.out, line, sizeof(line), 10000), "forker printed nothing");
	cr_assert(sscanf(line, "ready %d", &pid) == 1 && pid == server.pid, "%s", line);
	nbefore = h_snapshot_text(pid, before, 64);
	sched = h_temp_sched("attach.sched", h_fmt("timeout 10s\n"
						   "thread C = wait 1 distinct enter(child_work)\n"
						   "assert proc(C) != %d\n"
						   "run C until return(child_work)\n"
						   "release all\n",
						   pid));
	tracer =
	    h_spawn((const char *const[]){h_cctrace(), "attach", h_fmt("%d", pid), sched, NULL},
		    false, true, true);
	cr_assert(h_wait_traced_by(pid, tracer.pid, 10000), "cctrace did not attach");
	cr_assert(h_wait_text_changed(pid, before, nbefore, 10000), "no breakpoint was planted");
	cr_assert(dprintf(server.in, "5\n") > 0);
	r = h_collect(&tracer, H_SAFETY_S);
	cr_expect_eq(r.code, 0, "cctrace exited %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "p2.t1    enter(child_work)"), "child not followed:\n%s", r.err);
	cr_assert(h_read_line(server.out, line, sizeof(line), 10000), "no report of child 5");
	cr_expect_str_eq(line, "child 5 status 0");
	cr_expect_eq(h_status_field(pid, pid, "TracerPid"), 0, "still traced after detach");
	cr_assert(dprintf(server.in, "6\n") > 0);
	cr_assert(h_read_line(server.out, line, sizeof(line), 10000), "no report of child 6");
	cr_expect_str_eq(line, "child 6 status 0", "a child forked after the detach failed");
	nafter = h_snapshot_text(pid, after, 64);
	diff = h_text_diff(before, nbefore, after, nafter);
	cr_expect(diff == NULL, "the parent's code changed: %s", diff ? diff : "");
	free(diff);
	h_free_text(before, nbefore);
	h_free_text(after, nafter);
	h_result_free(&r);
}

/* A pool forked before the attach: attaching to the parent takes its
 * children too (p2, p3), and after the detach they run on untraced. */
Test(procs, attach_takes_the_children_that_already_exist)
{
	const char *argv[] = {FORKER, "pool", "2", NULL};
	struct h_proc pool, tracer;
	struct h_result r;
	char line[128], *sched;
	int pid = 0;
	pid_t kids[2] = {0, 0};

	need_forker();
	pool = h_spawn(argv, true, true, false);
	cr_assert(h_read_line(pool.out, line, sizeof(line), 10000), "forker printed nothing");
	cr_assert(sscanf(line, "ready %d", &pid) == 1 && pid == pool.pid, "%s", line);
	sched = h_temp_sched("pool.sched", h_fmt("timeout 10s\n"
						 "thread A, B = wait 2 distinct processes "
						 "enter(child_work)\n"
						 "assert proc(A) != proc(B) && proc(A) != %d && "
						 "proc(B) != %d\n"
						 "run A until return(child_work)\n"
						 "run B until return(child_work)\n"
						 "release all\n",
						 pid, pid));
	tracer =
	    h_spawn((const char *const[]){h_cctrace(), "attach", h_fmt("%d", pid), sched, NULL},
		    false, true, true);
	r = h_collect(&tracer, H_SAFETY_S);
	cr_expect_eq(r.code, 0, "cctrace exited %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "p2.t1    enter(child_work)") &&
		      strstr(r.err, "p3.t1    enter(child_work)"),
		  "the pool's children were not attached:\n%s", r.err);
	{
		FILE *f = fopen(h_fmt("/proc/%d/task/%d/children", pid, pid), "r");

		cr_assert_not_null(f);
		cr_assert_eq(fscanf(f, "%d %d", &kids[0], &kids[1]), 2);
		fclose(f);
	}
	cr_expect_eq(h_status_field(pid, pid, "TracerPid"), 0, "the parent is still traced");
	cr_expect_eq(h_status_field(kids[0], kids[0], "TracerPid"), 0, "a child is still traced");
	cr_expect_eq(h_status_field(kids[1], kids[1], "TracerPid"), 0, "a child is still traced");
	close(pool.in);
	cr_assert(h_read_line(pool.out, line, sizeof(line), 10000), "the pool did not end");
	cr_expect_str_eq(line, "pool ok", "a child of the pool died of something else");
	cr_expect_eq(h_wait(pid, 10, NULL), 0);
	h_result_free(&r);
}

/* Checker errors about processes point at the schedule, before any run. */
Test(procs, proc_of_unknown_thread_is_an_error)
{
	char *sched = h_temp_sched("bad.sched", "assert proc(Z) == 1\n");
	struct h_result r;

	need_forker();
	r = h_run((const char *const[]){h_cctrace(), "run", sched, "--", FORKER, "fork", "1", NULL},
		  H_SAFETY_S);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, h_fmt("%s:1:8: error:", sched)), "no position:\n%s", r.err);
	cr_expect(strstr(r.err, "    assert proc(Z) == 1\n           ^"), "no caret:\n%s", r.err);
	h_result_free(&r);
	sched = h_temp_sched("bad2.sched", "assert fork\n");
	r = h_run((const char *const[]){h_cctrace(), "run", sched, "--", FORKER, "fork", "1", NULL},
		  H_SAFETY_S);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "the event 'fork' can only be used after 'until' or 'wait'"), "%s",
		  r.err);
	h_result_free(&r);
	/* bound once, then let go: not "not bound yet" */
	sched = h_temp_sched("bad3.sched", "thread A = wait any start\nrelease A\n"
					   "assert proc(A) == 1\n");
	r = h_run((const char *const[]){h_cctrace(), "run", sched, "--", FORKER, "fork", "1", NULL},
		  H_SAFETY_S);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(
	    strstr(r.err, "proc(A): A names no thread (not bound yet, or let go by a release)"),
	    "%s", r.err);
	h_result_free(&r);
}

/* The two threads of bank that enter withdraw are of one process: with
 * `processes`, the second does not match, and the wait times out. */
Test(procs, distinct_processes_refuses_two_threads_of_one_process)
{
	char *sched =
	    h_temp_sched("one.sched", "timeout 1s\n"
				      "thread A, B = wait 2 distinct processes enter(withdraw)\n"
				      "release all\n");
	struct h_trace_ev evs[16];
	struct h_result r;

	cr_assert(access("samples/bank/bank", X_OK) == 0, "samples/bank/bank is not built");
	r = h_run((const char *const[]){h_cctrace(), "run", sched, "--", "samples/bank/bank", NULL},
		  H_SAFETY_S);
	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	cr_expect_eq(h_parse_trace(r.err, evs, 16), 1, "exactly one thread should match:\n%s",
		     r.err);
	h_result_free(&r);
	sched = h_temp_sched("two.sched", "timeout 5s\n"
					  "thread A, B = wait 2 distinct enter(withdraw)\n"
					  "assert proc(A) == proc(B)\n"
					  "release all\n");
	r = h_run((const char *const[]){h_cctrace(), "run", sched, "--", "samples/bank/bank", NULL},
		  H_SAFETY_S);
	cr_expect_eq(r.code, 0, "without 'processes' both threads match:\n%s", r.err);
	h_result_free(&r);
}

/* `next` over execl: the return address is in the old image, so the step
 * ends where the new program starts, with its symbols; a breakpoint set
 * after that is in the new image. */
Test(procs, next_over_exec_stops_in_the_new_program)
{
	char *sched = h_temp_sched("nextexec.sched", "timeout 10s\n"
						     "thread A = wait any enter(main)\n"
						     "while (in(A, main)) {\n"
						     "  next A\n"
						     "}\n"
						     "run A until enter(child_work)\n"
						     "run A until return(child_work)\n");
	struct h_result r;

	need_forker();
	r = H_RUN(h_cctrace(), "run", sched, "--", FORKER, "exec");
	cr_expect_eq(r.code, 0, "cctrace exited %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "next                         _start"), "%s", r.err);
	cr_expect(strstr(r.err, "enter(child_work)"), "%s", r.err);
	h_result_free(&r);
}

/* At an exec only the program and the dynamic loader are mapped.  A
 * library function named after it (here libc's exit, in the program the
 * child executes) was looked for then, never found, and never stopped
 * at; its symbols are now read again at the program's entry point, where
 * its libraries are in. */
Test(procs, a_library_function_is_found_in_a_program_executed_later)
{
	char *sched = h_temp_sched("execlib.sched", "timeout 10s\n"
						    "thread C = wait any exec\n"
						    "run C until enter(exit)\n");
	struct h_result r =
	    H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/forkexec", "fork", "1");
	struct h_trace_ev ev[4];

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_assert_eq(h_parse_trace(r.err, ev, 4), 2, "%s", r.err);
	cr_expect_str_eq(ev[0].event, "exec");
	cr_expect_str_eq(ev[1].event, "enter(exit)");
	cr_expect_str_eq(ev[1].thread, ev[0].thread);
	h_result_free(&r);
}

/* T.var is T's process's variable: a forked child's global is read from
 * the child.  Child 1 of `forker fork 3` adds 1 to sink in its copy; the
 * parent's copy holds 0 or 3, never 1.  It was read from process 1. */
Test(procs, a_variable_of_a_childs_thread_is_read_in_the_child)
{
	struct h_result r = run_forker("timeout 10s\n"
				       "thread C = wait any enter(child_work) && arg1 == 1\n"
				       "run C until return(child_work)\n"
				       "assert C.sink == 1\n",
				       "fork", "3", 0);

	cr_expect(!strstr(r.err, "assertion failed"), "%s", r.err);
	h_result_free(&r);
}
