/*
 * System tests: `cctrace attach` leaves the process exactly as it found it.
 *
 * The target is tests/fixtures/busy, four workers calling step() tens of
 * millions of times and checking at the end that every call was counted
 * exactly once.  After cctrace has attached, driven two of its threads and
 * detached (normally, or on SIGINT/SIGTERM), the tests check through /proc
 * that the code bytes of the executable and of every library are what they
 * were before, that no thread is traced any more, and through ptrace that no
 * debug register is left set; then the program must finish with the right
 * total.
 */
#include "harness.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>

TestSuite(attach, .fini = h_cleanup, .timeout = 60);

#define BUSY	 "tests/fixtures/busy"
#define MAX_TEXT 64

struct target {
	struct h_proc proc;
	pid_t pid;
	struct h_text text[MAX_TEXT];
	int ntext;
};

/* Starts busy, waits for "ready <pid>" and snapshots its code. */
static void start_busy(struct target *t)
{
	const char *argv[] = {BUSY, NULL};
	char line[128];
	int pid = 0;

	cr_assert(access(BUSY, X_OK) == 0, BUSY " is not built (make fixtures)");
	t->proc = h_spawn(argv, true, true, false);
	t->pid = t->proc.pid;
	cr_assert(h_read_line(t->proc.out, line, sizeof(line), 10000),
		  "busy did not print its ready line");
	cr_assert(sscanf(line, "ready %d", &pid) == 1, "unexpected first line: %s", line);
	cr_assert_eq(pid, t->pid);
	t->ntext = h_snapshot_text(t->pid, t->text, MAX_TEXT);
	cr_assert(h_text_has(t->text, t->ntext, "/busy"), "no text mapping of busy in maps");
	{
		int i, libc = 0;

		for (i = 0; i < t->ntext; i++)
			if (strstr(t->text[i].path, "/libc.so") ||
			    strstr(t->text[i].path, "/libc-"))
				libc = 1;
		cr_assert(libc, "no text mapping of libc in maps");
	}
}

/* Code bytes now == code bytes at start. */
static void expect_text_restored(struct target *t, const char *when)
{
	struct h_text now[MAX_TEXT];
	int n = h_snapshot_text(t->pid, now, MAX_TEXT);
	char *diff = h_text_diff(t->text, t->ntext, now, n);

	cr_expect(diff == NULL, "%s: the code of the target changed: %s", when, diff ? diff : "");
	free(diff);
	h_free_text(now, n);
}

/* No thread of the target is traced or stopped. */
static void expect_untraced(struct target *t, const char *when)
{
	pid_t tids[64];
	int n = h_tasks(t->pid, tids, 64), i;

	cr_expect_eq(n, 5, "%s: busy should have 5 threads, has %d", when, n);
	for (i = 0; i < n; i++) {
		long tracer = h_status_field(t->pid, tids[i], "TracerPid");
		char st = h_task_state(t->pid, tids[i]);

		cr_expect_eq(tracer, 0, "%s: thread %d is still traced by %ld", when, (int)tids[i],
			     tracer);
		cr_expect(st != 't' && st != 'T', "%s: thread %d is stopped (state %c)", when,
			  (int)tids[i], st);
	}
}

/* Tells busy to finish; it must exit 0 having counted every call. */
static void finish_busy(struct target *t)
{
	char *out;
	int code;

	cr_assert(write(t->proc.in, "finish\n", 7) == 7);
	close(t->proc.in);
	t->proc.in = -1;
	out = h_read_all(t->proc.out, 20);
	close(t->proc.out);
	t->proc.out = -1;
	code = h_wait(t->pid, 20, NULL);
	cr_expect_eq(code, 0, "busy exited with %d after the detach:\n%s", code, out);
	cr_expect(strstr(out, "total ") && strstr(out, "\nok\n"), "busy's output:\n%s", out);
	cr_expect(!strstr(out, "BAD"), "busy counted wrong:\n%s", out);
	free(out);
	h_free_text(t->text, t->ntext);
}

static char *pid_arg(pid_t pid)
{
	return h_fmt("%d", (int)pid);
}

Test(attach, alternating_threads_then_clean_detach)
{
	char *sched = h_temp_sched("alternate.sched", "timeout 5s\n"
						      "thread A, B = wait 2 distinct enter(step)\n"
						      "run A until enter(checkpoint)\n"
						      "run B until enter(checkpoint)\n"
						      "run A until enter(checkpoint)\n"
						      "run B until enter(checkpoint)\n"
						      "run A until write(checkpoints)\n"
						      "run B until write(checkpoints)\n"
						      "release all\n");
	static const char *const want[] = {
	    "enter(step)",	 "enter(step)",	      "enter(checkpoint)",  "enter(checkpoint)",
	    "enter(checkpoint)", "enter(checkpoint)", "write(checkpoints)", "write(checkpoints)"};
	struct h_trace_ev ev[32];
	struct target t;
	struct h_result r;
	int n, i;

	start_busy(&t);
	r = H_RUN(h_cctrace(), "attach", pid_arg(t.pid), sched);
	/* Right away, before anything else can run in the test. */
	expect_text_restored(&t, "after a completed attach");
	expect_untraced(&t, "after a completed attach");
	cr_expect_eq(r.code, 0, "cctrace attach exited %d, expected 0 (completed):\n%s", r.code,
		     r.err);
	cr_expect(strstr(r.err, "cctrace: completed: ") &&
		      strstr(r.err, "detached, and the process keeps running"),
		  "no completed outcome:\n%s", r.err);
	n = h_parse_trace(r.err, ev, 32);
	cr_expect_eq(n, 8, "expected 8 trace lines:\n%s", r.err);
	for (i = 0; i < n && i < 8; i++) {
		cr_expect_str_eq(ev[i].event, want[i], "trace line %d:\n%s", i + 1, r.err);
		/* A is the first bound thread, B the second; they alternate. */
		cr_expect_str_eq(ev[i].thread, ev[i % 2].thread, "trace line %d is not %s's:\n%s",
				 i + 1, i % 2 ? "B" : "A", r.err);
	}
	if (n >= 2) {
		cr_expect_str_neq(ev[0].thread, ev[1].thread);
		cr_expect_str_neq(ev[0].thread, "p1.t1", "main does not call step()");
		cr_expect_str_neq(ev[1].thread, "p1.t1", "main does not call step()");
	}
	h_result_free(&r);
	finish_busy(&t);
}

static long peek_dr(pid_t tid, int i)
{
	errno = 0;
	return ptrace(PTRACE_PEEKUSER, tid,
		      (void *)(offsetof(struct user, u_debugreg) + (size_t)i * sizeof(long)), NULL);
}

/* Seizes every thread of pid, reads DR0-3 and DR7, and lets them go. */
static void expect_debug_registers_clear(pid_t pid)
{
	pid_t tids[64];
	int n = h_tasks(pid, tids, 64), i, k;

	cr_assert_gt(n, 1);
	for (i = 0; i < n; i++) {
		int status;
		long dr7;

		cr_assert(ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) == 0, "seize %d: %s",
			  (int)tids[i], strerror(errno));
		cr_assert(ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) == 0);
		cr_assert_eq(waitpid(tids[i], &status, __WALL), tids[i], "waitpid %d: %s",
			     (int)tids[i], strerror(errno));
		cr_assert(WIFSTOPPED(status), "thread %d: status %#x", (int)tids[i], status);
		dr7 = peek_dr(tids[i], 7);
		cr_assert_eq(errno, 0, "PEEKUSER DR7 of %d: %s", (int)tids[i], strerror(errno));
		cr_expect_eq(dr7, 0, "thread %d: DR7 = %#lx after cctrace detached", (int)tids[i],
			     dr7);
		for (k = 0; k < 4; k++) {
			long dr = peek_dr(tids[i], k);

			cr_expect_eq(dr, 0, "thread %d: DR%d = %#lx after cctrace detached",
				     (int)tids[i], k, dr);
		}
		cr_assert(ptrace(PTRACE_DETACH, tids[i], NULL, NULL) == 0, "detach %d: %s",
			  (int)tids[i], strerror(errno));
	}
}

Test(attach, watchpoint_leaves_no_debug_registers)
{
	char *sched = h_temp_sched("watch.sched", "timeout 10s\n"
						  "thread A = wait any enter(step)\n"
						  "run A until write(checkpoints)\n"
						  "release all\n");
	struct target t;
	struct h_result r;
	struct h_trace_ev ev[8];
	int n;

	start_busy(&t);
	r = H_RUN(h_cctrace(), "attach", pid_arg(t.pid), sched);
	expect_text_restored(&t, "after a watchpoint schedule");
	expect_untraced(&t, "after a watchpoint schedule");
	cr_expect_eq(r.code, 0, "cctrace attach exited %d:\n%s", r.code, r.err);
	n = h_parse_trace(r.err, ev, 8);
	cr_expect_eq(n, 2, "expected 2 trace lines:\n%s", r.err);
	if (n == 2) {
		cr_expect_str_eq(ev[1].event, "write(checkpoints)");
		cr_expect_str_eq(ev[1].thread, ev[0].thread);
		cr_expect_str_eq(ev[1].func, "checkpoint");
	}
	h_result_free(&r);
	expect_debug_registers_clear(t.pid);
	expect_untraced(&t, "after the test's own seize and detach");
	finish_busy(&t);
}

/*
 * cctrace attaches with a wait that can never be satisfied; once it is
 * waiting (every thread traced by it and the breakpoint at never_called() in
 * the code) it gets sig.  It must detach, say so, and exit 128 + sig.
 */
static void interrupt_while_waiting(int sig, const char *abbrev)
{
	char *sched = h_temp_sched("never.sched", "timeout 60s\n"
						  "wait any enter(never_called)\n");
	const char *argv[] = {h_cctrace(), "attach", pid_arg(0), sched, NULL};
	struct h_text busy_before[MAX_TEXT];
	int nbusy = 0, i;
	struct target t;
	struct h_proc c;
	struct h_result r;
	bool armed = false;
	int64_t deadline;
	char *want;

	start_busy(&t);
	argv[2] = pid_arg(t.pid);
	c = h_spawn(argv, false, true, true);
	cr_assert(h_wait_traced_by(t.pid, c.pid, 20000),
		  "cctrace (pid %d) did not attach to every thread of %d", (int)c.pid, (int)t.pid);
	/* Traced is not yet waiting: wait for the int3 in busy's code. */
	for (i = 0; i < t.ntext; i++)
		if (strstr(t.text[i].path, "/busy"))
			busy_before[nbusy++] = t.text[i];
	deadline = h_now_ms() + 20000;
	while (!armed && h_now_ms() < deadline) {
		struct h_text now[MAX_TEXT], busy_now[MAX_TEXT];
		int n = h_snapshot_text(t.pid, now, MAX_TEXT), m = 0;
		char *diff;

		for (i = 0; i < n; i++)
			if (strstr(now[i].path, "/busy"))
				busy_now[m++] = now[i];
		diff = h_text_diff(busy_before, nbusy, busy_now, m);
		armed = diff != NULL;
		free(diff);
		h_free_text(now, n);
		if (!armed)
			h_pace();
	}
	cr_assert(armed, "cctrace never put its breakpoint into busy");
	cr_assert(kill(c.pid, sig) == 0);
	r = h_collect(&c, 20);
	expect_text_restored(&t, "after an interrupted attach");
	expect_untraced(&t, "after an interrupted attach");
	cr_expect_eq(r.code, 128 + sig, "cctrace got SIG%s and exited %d, expected %d:\n%s", abbrev,
		     r.code, 128 + sig, r.err);
	want = h_fmt("cctrace: error: interrupted by %s; detached, and the process keeps running",
		     abbrev);
	cr_expect(strstr(r.err, "interrupted") && strstr(r.err, want), "expected '%s' in:\n%s",
		  want, r.err);
	cr_expect_eq(h_parse_trace(r.err, NULL, 0), 0, "no event was expected:\n%s", r.err);
	free(want);
	h_result_free(&r);
	finish_busy(&t);
}

Test(attach, sigint_while_waiting_detaches)
{
	interrupt_while_waiting(SIGINT, "INT");
}

Test(attach, sigterm_while_waiting_detaches)
{
	interrupt_while_waiting(SIGTERM, "TERM");
}

/* The stepper plants and moves breakpoints of its own on every event:
 * after the detach none of them may be left in busy's code. */
Test(attach, instruction_stepping_leaves_the_code_as_it_was)
{
	char *sched = h_temp_sched("fine.sched", "timeout 5s\n"
						 "thread A, B = wait 2 distinct enter(step)\n"
						 "repeat 20 {\n"
						 "  run A until read || write || call\n"
						 "  run B until read || write || call\n"
						 "}\n"
						 "run A until syscall(futex) || enter(checkpoint)\n"
						 "release all\n");
	struct target t;
	struct h_result r;

	start_busy(&t);
	r = H_RUN(h_cctrace(), "attach", pid_arg(t.pid), sched);
	expect_text_restored(&t, "after instruction stepping");
	expect_untraced(&t, "after instruction stepping");
	cr_expect_eq(r.code, 0, "cctrace attach exited %d:\n%s", r.code, r.err);
	cr_expect_geq(h_count_lines(r.err, "p1.t"), 43, "%s", r.err);
	h_result_free(&r);
	finish_busy(&t);
}

/* How futexhold waits for its line when cctrace attaches. */
enum futexhold_input {
	POLLS_A_PIPE, /* poll() on a pipe from the test */
	READS_A_PIPE, /* read() of it (--read) */
	READS_A_TTY,  /* read() of a pseudo-terminal's slave (--read) */
};

/* futexhold, its stdout on a pipe and its stdin as how says; *input:
 * where the test writes its line. */
static struct h_proc spawn_futexhold(enum futexhold_input how, int *input)
{
	bool on_tty = how == READS_A_TTY;
	const char *argv[] = {"tests/fixtures/futexhold", how != POLLS_A_PIPE ? "--read" : NULL,
			      NULL};
	struct h_proc p = {.in = -1, .out = -1, .err = -1};
	int out[2], master;

	cr_assert(access(argv[0], X_OK) == 0, "futexhold is not built (make fixtures)");
	if (!on_tty) {
		p = h_spawn(argv, true, true, false);
		*input = p.in;
		return p;
	}
	master = posix_openpt(O_RDWR | O_NOCTTY);
	cr_assert(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
	cr_assert(pipe2(out, O_CLOEXEC) == 0);
	p.pid = fork();
	cr_assert(p.pid >= 0);
	if (p.pid == 0) {
		int slave = open(ptsname(master), O_RDWR | O_NOCTTY);

		if (slave < 0 || dup2(slave, 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	h_track(p.pid);
	close(out[1]);
	p.out = out[0];
	*input = master;
	return p;
}

/* futexhold started (spawn_futexhold), once it said it is ready. */
static struct h_proc start_futexhold(enum futexhold_input how, int *input)
{
	struct h_proc p = spawn_futexhold(how, input);
	char line[64] = "";
	int pid = 0;

	cr_assert(h_read_line(p.out, line, sizeof(line), 10000) &&
		      sscanf(line, "ready %d", &pid) == 1 && pid == p.pid,
		  "futexhold's first line: %s", line);
	return p;
}

/* futexhold, given its line, finishes: exit 0, both threads through. */
static void expect_futexhold_done(struct h_proc *p)
{
	char *out = h_read_all(p->out, 20);
	int code = h_wait(p->pid, 20, NULL);

	cr_expect_eq(code, 0, "futexhold exited %d (its output: %s)", code, out);
	cr_expect(strstr(out, "woken") && strstr(out, "done"), "futexhold's output:\n%s", out);
	free(out);
}

/*
 * A thread the schedule holds stopped in a futex wait is out of the
 * kernel's queue; a wake another thread makes meanwhile must still reach
 * it, or, let go at the detach, it sleeps for ever in a wait the wake
 * ended (engine/wakes.c).  futexhold's waker wakes its word, without
 * changing it, until a wake says it woke someone: the schedule's run of
 * it must end, and the process finish after the detach.  Before
 * engine/wakes.c, the process slept for ever in main's join.
 */
Test(attach, a_futex_wake_reaches_a_held_waiter_after_the_detach)
{
	char *sched = h_temp_sched("futexhold.sched", "serial\n"
						      "thread m = p1.t1\n"
						      "run m until enter(pthread_join)\n"
						      "thread w = p1.t2\n"
						      "run w until blocked\n"
						      "thread k = p1.t3\n"
						      "run k until exit\n");
	const char *argv[] = {h_cctrace(), "attach", NULL, sched, NULL};
	struct h_proc target, c;
	struct h_result r;
	int input;

	target = start_futexhold(POLLS_A_PIPE, &input);
	argv[2] = pid_arg(target.pid);
	c = h_spawn(argv, false, true, true);
	cr_assert(h_wait_traced_by(target.pid, c.pid, 20000), "cctrace did not attach");
	cr_assert(write(input, "go\n", 3) == 3);
	r = h_collect(&c, 30);
	cr_expect_eq(r.code, 0, "cctrace attach exited %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "detached, and the process keeps running"), "%s", r.err);
	cr_expect(strstr(r.err, "blocked in futex"), "the waiter was not held blocked:\n%s", r.err);
	h_result_free(&r);
	expect_futexhold_done(&target);
}

/*
 * Main sleeps, when cctrace attaches, in a wait for the outside: a
 * statement that runs it waits for its event or its timeout, and is no
 * deadlock.  Nothing comes (--timeout 500ms), and the process is left as
 * it was, to read its line and finish.
 *   - on a pipe, in poll(): our interrupt makes it sleep on as
 *     restart_syscall, which /proc names alone; that was taken for a sleep
 *     on the program, and reported as a deadlock;
 *   - on a terminal, in read(): a read of a terminal was too;
 *   - on a pipe whose write end only the test holds, in read(): a pipe was
 *     taken for one between the program's threads.
 */
static void outside_wait_is_no_deadlock(enum futexhold_input how)
{
	char *sched = h_temp_sched("outside.sched", "serial\n"
						    "thread m = p1.t1\n"
						    "run m until enter(pthread_join)\n");
	struct h_proc target;
	struct h_result r;
	int input;

	target = start_futexhold(how, &input);
	r = H_RUN(h_cctrace(), "attach", "--timeout", "500ms", pid_arg(target.pid), sched);
	cr_expect_eq(r.code, 2,
		     "cctrace attach exited %d, expected 2 (unrealizable: the timeout):\n%s",
		     r.code, r.err);
	cr_expect(strstr(r.err, "within 500 ms") && !strstr(r.err, "deadlock"), "%s", r.err);
	h_result_free(&r);
	cr_assert(write(input, "go\n", 3) == 3);
	expect_futexhold_done(&target);
}

Test(attach, a_poll_restarted_by_the_attach_is_a_wait_for_the_outside)
{
	outside_wait_is_no_deadlock(POLLS_A_PIPE);
}

Test(attach, a_read_of_the_terminal_is_a_wait_for_the_outside)
{
	outside_wait_is_no_deadlock(READS_A_TTY);
}

Test(attach, a_read_of_a_pipe_from_the_outside_is_a_wait_for_the_outside)
{
	outside_wait_is_no_deadlock(READS_A_PIPE);
}

/* outwait MODE started, its stdout on a pipe the test does not read yet,
 * once its worker sleeps in call nr (write: the pipe is full). */
static struct h_proc start_outwait(const char *mode, long nr)
{
	const char *argv[] = {"tests/fixtures/outwait", mode, NULL};
	struct h_proc p;
	char line[64] = "", path[96], text[64];
	int pid = 0, i;

	cr_assert(access(argv[0], X_OK) == 0, "outwait is not built (make fixtures)");
	p = h_spawn(argv, false, true, true);
	cr_assert(h_read_line(p.err, line, sizeof(line), 10000) &&
		      sscanf(line, "ready %d", &pid) == 1 && pid == p.pid,
		  "outwait's first line: %s", line);
	for (i = 0; i < 2000; i++) {
		pid_t tids[4];
		FILE *f;

		if (h_tasks(pid, tids, 4) == 2) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tids[1]);
			f = fopen(path, "r");
			text[0] = 0;
			if (f && fgets(text, sizeof(text), f) && atol(text) == nr &&
			    strncmp(text, "running", 7) != 0) {
				fclose(f);
				return p;
			}
			if (f)
				fclose(f);
		}
		h_pace();
	}
	cr_assert_fail("outwait's worker never slept in call %ld", nr);
	return p;
}

/*
 * main joins a worker that waits for the outside: in its write to a full
 * pipe that a process outside the program reads (`prog | less`), or in
 * pause() for a signal another process sends.  No thread of the program
 * can end either wait, so this is no deadlock: the statement waits for
 * the outside up to its timeout, and says so.  Both were reported as
 * deadlocks (and `cctrace test` found one in every run of a correct
 * program whose output went to a pipe read slowly).
 */
static void join_of_an_outside_wait_is_no_deadlock(const char *mode, long nr, const char *call)
{
	char *sched = h_temp_sched("outwait.sched", "serial\n"
						    "thread m = p1.t1\n"
						    "run m until exit\n");
	struct h_proc p = start_outwait(mode, nr);
	struct h_result r =
	    H_RUN(h_cctrace(), "attach", "--timeout", "500ms", pid_arg(p.pid), sched);
	char *out;
	int code;

	cr_expect_eq(r.code, 2, "cctrace attach exited %d, expected 2 (the timeout):\n%s", r.code,
		     r.err);
	cr_expect(strstr(r.err, h_fmt("which waits in %s for the outside", call)) &&
		      !strstr(r.err, "deadlock"),
		  "%s", r.err);
	h_result_free(&r);
	if (strcmp(mode, "pause") == 0)
		cr_assert_eq(kill(p.pid, SIGUSR1), 0);
	out = h_read_all(p.out, 20);
	code = h_wait(p.pid, 20, NULL);
	cr_expect_eq(code, 0, "outwait %s exited %d", mode, code);
	cr_expect(strcmp(mode, "write") != 0 || strlen(out) == 1u << 20, "%zu bytes written",
		  strlen(out));
	free(out);
}

Test(attach, a_join_of_a_writer_to_a_pipe_read_outside_is_no_deadlock)
{
	join_of_an_outside_wait_is_no_deadlock("write", 1, "write");
}

Test(attach, a_join_of_a_thread_waiting_for_a_signal_is_no_deadlock)
{
	join_of_an_outside_wait_is_no_deadlock("pause", 34, "pause");
}

/* The same wake, and cctrace SIGKILLed while it still holds the woken
 * waiter: the waiter's registers already say its wait returned (wakes.c
 * writes them at the wake, not when it is let go), so the process the
 * kernel and the guardian hand back finishes. */
Test(attach, a_futex_wake_survives_a_sigkill_of_cctrace)
{
	char *sched = h_temp_sched("futexkill.sched", "serial\n"
						      "thread m = p1.t1\n"
						      "run m until enter(pthread_join)\n"
						      "thread w = p1.t2\n"
						      "run w until blocked\n"
						      "thread k = p1.t3\n"
						      "run k until exit\n"
						      "wait any enter(sleep)\n");
	const char *argv[] = {h_cctrace(), "attach", "--timeout", "60s", NULL, sched, NULL};
	struct h_proc target, c;
	char line[512];
	bool waker_done = false;
	int input;

	target = start_futexhold(POLLS_A_PIPE, &input);
	argv[4] = pid_arg(target.pid);
	c = h_spawn(argv, false, false, true);
	cr_assert(h_wait_traced_by(target.pid, c.pid, 20000), "cctrace did not attach");
	cr_assert(write(input, "go\n", 3) == 3);
	while (!waker_done && h_read_line(c.err, line, sizeof(line), 20000))
		waker_done = strstr(line, "p1.t3") && strstr(line, "exit");
	cr_assert(waker_done, "the waker's exit was never traced");
	cr_assert(kill(c.pid, SIGKILL) == 0);
	cr_assert_eq(h_wait(c.pid, 20, NULL), 128 + SIGKILL);
	expect_futexhold_done(&target);
}
