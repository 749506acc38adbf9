/*
 * test_tracer.c: the ptrace engine on real processes, through its API.
 *
 * The fixture hammer runs 4 threads through the same breakpointed
 * addresses thousands of times.  Every test counts events exactly: an event
 * lost while another thread steps over a breakpoint, a displaced
 * instruction that computes the wrong thing, or a watchpoint missing in a
 * thread created after it was set shows as a wrong count or a wrong result
 * printed by the program itself.
 */
#include "disasm/disasm.h"
#include "symbols/symbols.h"
#include "tracer/tracer.h"

#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define HAMMER	    "tests/fixtures/hammer"
#define ROUNDS	    2000
#define WORKERS	    4
#define DEADLINE_MS 60000

static int marker_line(const char *marker)
{
	FILE *f = fopen("tests/fixtures/hammer.c", "r");
	char line[512];
	int n = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("no marker %s", marker);
	return 0;
}

static uint64_t line_addr(struct sym_space *syms, const char *marker)
{
	uint64_t addr;
	size_t n = 0;

	cr_assert_eq(sym_line(syms, "hammer.c", marker_line(marker), &addr, 1, &n), 0);
	cr_assert_eq(n, 1);
	return addr;
}

struct counts {
	long hits[3];
	long watch_hits;
	int exit_status;
	bool exited;
};

/* Resume everything until the program ends, counting events by address. */
static void drive(struct tracer *t, const uint64_t addrs[3], struct counts *c)
{
	struct tr_event ev;
	int i;

	for (;;) {
		enum tr_wait_result r = tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL);

		cr_assert_eq(r, TR_WAIT_EVENT, "wait ended with %d", r);
		if (ev.kind == TR_EV_PROCESS_EXIT) {
			c->exited = true;
			c->exit_status = ev.signo ? 128 + ev.signo : ev.status;
			return;
		}
		cr_assert_neq(ev.kind, TR_EV_SIGNAL, "unexpected signal %d", ev.signo);
		if (ev.kind == TR_EV_BREAK)
			for (i = 0; i < 3; i++)
				if (addrs[i] == ev.addr)
					c->hits[i]++;
		if (ev.kind == TR_EV_WATCH)
			c->watch_hits++;
		cr_assert_eq(tracer_resume(ev.thread), 0);
	}
}

static struct tracer *launch(char *rounds)
{
	char *argv[] = {HAMMER, rounds, NULL};
	struct tracer_options opt = {.pin_cpu = false};
	struct tracer *t = tracer_new(&opt);
	char err[256];

	cr_assert_eq(tracer_launch(t, argv, err, sizeof(err)), 0, "%s", err);
	return t;
}

Test(tracer, breakpoints_lose_no_event_while_others_step_over)
{
	char rounds[16];
	struct tracer *t;
	struct sym_space *syms;
	struct tr_process *p;
	struct counts c = {0};
	uint64_t addrs[3];
	char err[256];
	int i;

	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	t = launch(rounds);
	p = tracer_processes(t);
	syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_function(syms, "hook", &addrs[0]), 0);
	addrs[1] = line_addr(syms, "MARK:call-line"); /* a call: emulated */
	addrs[2] = line_addr(syms, "MARK:rip-line");  /* rip-relative: displaced */
	for (i = 0; i < 3; i++)
		cr_assert_eq(tracer_break_insert(p, addrs[i], err, sizeof(err)), 0, "%s", err);
	drive(t, addrs, &c);
	for (i = 0; i < 3; i++)
		cr_expect_eq(c.hits[i], WORKERS * ROUNDS, "address %d: %ld hits", i, c.hits[i]);
	cr_expect_eq(c.exit_status, 0, "the program computed a wrong result (%d)", c.exit_status);
	sym_close(syms);
	tracer_free(t);
}

Test(tracer, watchpoint_reaches_threads_created_after_it)
{
	char why[400];

	/* The software mechanism that replaces them is tested through the
	 * schedules (test_samples, test_fine, test_watchmode). */
	if (tracer_hw_watchpoints_fire(why, sizeof(why)) != 1)
		cr_skip_test("%s", why);
	struct tracer *t = launch("500");
	struct tr_process *p = tracer_processes(t);
	struct sym_space *syms;
	struct sym_var total;
	struct counts c = {0};
	uint64_t none[3] = {0};
	char err[256];

	syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_variable(syms, "total", &total), 0);
	/* Only the main thread exists now; the workers that write come later. */
	cr_assert_geq(tracer_watch_insert(p, total.addr, 8, TR_WATCH_WRITE, err, sizeof(err)), 0,
		      "%s", err);
	drive(t, none, &c);
	cr_expect_eq(c.watch_hits, WORKERS * 500);
	cr_expect_eq(c.exit_status, 0);
	sym_close(syms);
	tracer_free(t);
}

Test(tracer, fifth_watchpoint_is_refused_with_the_limit_named)
{
	struct tracer *t = launch("1");
	struct tr_process *p = tracer_processes(t);
	char err[256];
	int i;

	for (i = 0; i < 4; i++)
		cr_assert_eq(tracer_watch_insert(p, 0x1000 + 8 * (uint64_t)i, 8, TR_WATCH_WRITE,
						 err, sizeof(err)),
			     i);
	cr_assert_eq(tracer_watch_insert(p, 0x2000, 8, TR_WATCH_WRITE, err, sizeof(err)), -1);
	cr_expect(strstr(err, "4 debug registers") != NULL, "%s", err);
	cr_assert_eq(tracer_watch_insert(p, 0x3001, 4, TR_WATCH_WRITE, err, sizeof(err)), -1);
	tracer_kill_launched(t);
	tracer_free(t);
}

Test(tracer, singlestep_from_a_breakpoint_lands_after_the_instruction)
{
	struct tracer *t = launch("1");
	struct tr_process *p = tracer_processes(t);
	struct sym_space *syms;
	struct tr_event ev;
	struct dis_insn insn;
	uint8_t code[16];
	uint64_t hook;
	char err[256];

	syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	cr_assert_not_null(syms);
	cr_assert_eq(sym_function(syms, "hook", &hook), 0);
	cr_assert_eq(tracer_read(p, hook, code, sizeof(code)), 0);
	cr_assert_eq(dis_decode(code, sizeof(code), hook, &insn), 0);
	cr_assert_eq(tracer_break_insert(p, hook, err, sizeof(err)), 0, "%s", err);
	for (;;) {
		cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		if (ev.kind == TR_EV_BREAK)
			break;
		tracer_resume(ev.thread);
	}
	cr_assert_eq(ev.addr, hook);
	cr_assert_eq(tracer_singlestep(ev.thread), 0);
	for (;;) {
		struct tr_event step;

		cr_assert_eq(tracer_wait(t, &step, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		if (step.thread == ev.thread && step.kind == TR_EV_STEP) {
			cr_expect_eq(step.pc, hook + insn.len);
			break;
		}
		tracer_resume(step.thread);
	}
	tracer_kill_launched(t);
	sym_close(syms);
	tracer_free(t);
}

static pid_t spawn_waiting_hammer(int *to_child, int *from_child, int rounds)
{
	int in[2], out[2];
	char buf[16], arg[16];
	pid_t pid;

	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		snprintf(arg, sizeof(arg), "%d", rounds);
		execl(HAMMER, HAMMER, arg, "wait", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	cr_assert_eq(read(out[0], buf, 6), 6); /* "ready\n" */
	*from_child = out[0]; /* kept open: the program prints its total at the end */
	*to_child = in[1];
	return pid;
}

/* The program's code at lo; false when it has no memory any more (it
 * has ended: a zombie's /proc/PID/mem reads nothing). */
/* pid's code at lo; false when it cannot be read (the program has ended:
 * a zombie has no memory to open). */
static bool read_text(pid_t pid, uint64_t lo, uint8_t *buf, size_t len)
{
	char path[64];
	size_t got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	cr_assert_eq(fseek(f, (long)lo, SEEK_SET), 0);
	got = fread(buf, 1, len, f);
	fclose(f);
	return got == len;
}

Test(tracer, detach_restores_code_and_lets_the_program_finish)
{
	struct tracer_options opt = {.pin_cpu = true};
	struct tracer *t = tracer_new(&opt);
	struct sym_space *syms;
	struct tr_process *p;
	struct tr_event ev;
	uint8_t before[64], after[64];
	uint64_t hook;
	int to_child, from_child, status, hits = 0;
	char err[256];
	pid_t pid = spawn_waiting_hammer(&to_child, &from_child, 20000);

	syms = sym_open_pid(pid, err, sizeof(err));
	cr_assert_not_null(syms);
	cr_assert_eq(sym_function(syms, "hook", &hook), 0);
	cr_assert(read_text(pid, hook, before, sizeof(before)));
	cr_assert_eq(tracer_attach(t, pid, err, sizeof(err)), 0, "%s", err);
	p = tracer_processes(t);
	cr_assert_eq(tracer_break_insert(p, hook, err, sizeof(err)), 0, "%s", err);
	tr_for_each_thread(ev.thread, t)
		tracer_resume(ev.thread);
	cr_assert_eq(write(to_child, "g", 1), 1);
	while (hits < 500) {
		cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		/* Leave two threads held at the breakpoint when detaching. */
		if (ev.kind == TR_EV_BREAK && ++hits > 498)
			continue;
		tracer_resume(ev.thread);
	}
	cr_assert_eq(tracer_detach_all(t), 0);
	/* Let go, the program may finish before its code can be read (its
	 * four threads against this test on two CPUs): then its clean exit
	 * below is the proof, as a byte of ours left in hook() would have
	 * killed it with SIGILL. */
	if (read_text(pid, hook, after, sizeof(after)))
		cr_expect_arr_eq(before, after, sizeof(before));
	tracer_free(t);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "program did not finish correctly: status %#x", status);
	close(to_child);
	close(from_child);
	sym_close(syms);
}

/* A run forked from a template that planted breakpoints (tracer_adopt):
 * the child starts with the template's bytes in its code, claims some
 * without planting them again, and the one it does not claim is gone
 * before it runs: the claimed ones (the hook, and a rip-relative
 * instruction displaced into the template's scratch page, which the child
 * has too) count every hit, the unclaimed one none, and the program, whose unclaimed byte would
 * kill it with SIGILL, computes its result.  The template keeps all three. */
Test(tracer, a_forked_run_claims_the_templates_breakpoints)
{
	struct tracer *tmpl = launch("200"), *t = tracer_new(&(struct tracer_options){0});
	struct tr_process *tp = tracer_processes(tmpl), *p;
	struct sym_space *syms;
	struct counts c = {0};
	uint64_t addrs[3], fork_fn;
	uint8_t byte, code;
	pid_t child;
	char err[256];
	int i;

	syms = sym_open_pid(tracer_process_pid(tp), err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_function(syms, "hook", &addrs[0]), 0);
	addrs[1] = line_addr(syms, "MARK:call-line");
	addrs[2] = line_addr(syms, "MARK:rip-line");
	cr_assert_eq(sym_function(syms, "_Fork", &fork_fn), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(tracer_break_insert(tp, addrs[i], err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tracer_fork_held(tracer_threads(tmpl), fork_fn, &child, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(tracer_adopt(t, child, tracer_threads(tmpl), err, sizeof(err)), 0, "%s", err);
	p = tracer_processes(t);
	cr_assert_eq(tracer_read(p, addrs[1], &byte, 1), 0);
	cr_assert_eq(tracer_read_code(p, addrs[1], &code, 1), 0);
	cr_expect_eq(byte, TRACER_INT3, "the child has the template's int3");
	cr_expect_neq(code, TRACER_INT3, "read_code shows the program's byte under it");
	cr_expect(!tracer_break_at(p, addrs[1]), "an unclaimed breakpoint is not the run's");
	cr_assert_eq(tracer_break_insert(p, addrs[0], err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tracer_break_insert(p, addrs[2], err, sizeof(err)), 0, "%s", err);
	cr_expect(tracer_break_at(p, addrs[0]) && tracer_break_at(p, addrs[2]));
	drive(t, addrs, &c);
	cr_expect_eq(c.hits[0], WORKERS * 200, "hook: %ld hits", c.hits[0]);
	cr_expect_eq(c.hits[1], 0, "the unclaimed one was hit %ld times", c.hits[1]);
	cr_expect_eq(c.hits[2], WORKERS * 200, "the displaced one: %ld hits", c.hits[2]);
	cr_expect_eq(c.exit_status, 0, "the program computed a wrong result (%d)", c.exit_status);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(tracer_read(tp, addrs[i], &byte, 1), 0);
		cr_expect_eq(byte, TRACER_INT3, "the template lost breakpoint %d", i);
	}
	tracer_free(t);
	tracer_kill_launched(tmpl);
	tracer_free(tmpl);
	sym_close(syms);
}

/* Breakpoints on every instruction of the fixture's four functions and of
 * libc's mutex lock and unlock: hundreds, more than the tracer's index of
 * them first holds.  Each is found (tracer_break_at), code read back
 * through them is the program's, byte by byte and a page at a time, and
 * the run loses no stop and computes its result although every
 * instruction of its loop runs out of line. */
#define MANY_FNS 6
Test(tracer, hundreds_of_breakpoints_are_each_found_and_read_through)
{
	static const char *const fns[MANY_FNS] = {
	    "hook", "callee", "worker", "main", "pthread_mutex_lock", "pthread_mutex_unlock"};
	struct tracer *t = launch("100");
	struct tr_process *p = tracer_processes(t);
	struct sym_space *syms;
	struct counts c = {0};
	uint64_t start[MANY_FNS], addrs[3] = {0, 0, 0}, page;
	uint8_t before[MANY_FNS][1024], after[1024], page_before[4096], page_after[4096];
	size_t size[MANY_FNS], off;
	struct dis_insn insn;
	struct sym_loc loc;
	char err[256];
	int i, planted = 0;

	syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	for (i = 0; i < MANY_FNS; i++) {
		cr_assert_eq(sym_function(syms, fns[i], &start[i]), 0, "%s", fns[i]);
		cr_assert_eq(sym_describe_function(syms, start[i], &loc), 0);
		size[i] = (size_t)loc.func_size;
		cr_assert(size[i] > 0 && size[i] <= sizeof(before[i]), "%s: %zu bytes", fns[i],
			  size[i]);
		cr_assert_eq(tracer_read(p, start[i], before[i], size[i]), 0);
	}
	page = start[3] & ~4095ull; /* main's page, whole */
	cr_assert_eq(tracer_read(p, page, page_before, sizeof(page_before)), 0);
	for (i = 0; i < MANY_FNS; i++)
		for (off = 0; off < size[i]; off += insn.len) {
			cr_assert_eq(
			    dis_decode(before[i] + off, size[i] - off, start[i] + off, &insn), 0,
			    "%s+%zu", fns[i], off);
			cr_assert_eq(tracer_break_insert(p, start[i] + off, err, sizeof(err)), 0,
				     "%s+%zu: %s", fns[i], off, err);
			planted++;
			if (insn.len > 1)
				cr_expect(!tracer_break_at(p, start[i] + off + 1),
					  "%s+%zu: inside an instruction", fns[i], off + 1);
		}
	cr_assert_gt(planted, 200, "only %d instructions", planted);
	for (i = 0; i < MANY_FNS; i++) {
		for (off = 0; off < size[i]; off++) /* a byte at a time */
			cr_assert_eq(tracer_read_code(p, start[i] + off, &after[off], 1), 0);
		cr_expect_arr_eq(after, before[i], size[i], "%s read through one byte at a time",
				 fns[i]);
		cr_assert_eq(tracer_read_code(p, start[i], after, size[i]), 0);
		cr_expect_arr_eq(after, before[i], size[i], "%s read through whole", fns[i]);
		cr_expect(tracer_break_at(p, start[i]), "%s", fns[i]);
	}
	cr_assert_eq(tracer_read_code(p, page, page_after, sizeof(page_after)), 0);
	cr_expect_arr_eq(page_after, page_before, sizeof(page_before), "main's page");
	addrs[0] = start[0]; /* hook and callee: once a round in each worker */
	addrs[1] = start[1];
	drive(t, addrs, &c);
	cr_expect_eq(c.hits[0], WORKERS * 100, "hook: %ld hits", c.hits[0]);
	cr_expect_eq(c.hits[1], WORKERS * 100, "callee: %ld hits", c.hits[1]);
	cr_expect_eq(c.exit_status, 0, "the program computed a wrong result (%d)", c.exit_status);
	sym_close(syms);
	tracer_free(t);
}

/* A launched program's breakpoints are int3, told from its own: one on
 * trapper's first instruction (a 1-byte nop, so that after it runs from
 * its slot the pc is just past our byte) is int3, one on the program's own
 * int3 right after it is 0xce (a byte of ours is never the program's).
 * Each is hit once per call, and every SIGTRAP of the program's int3 is
 * its own: reported as a signal and delivered to its handler, which
 * counts them (the exit status says whether it saw them all). */
Test(tracer, int3_breakpoints_beside_the_programs_own_int3)
{
	char *argv[] = {"tests/fixtures/owntrap", "50", NULL};
	struct tracer *t = tracer_new(&(struct tracer_options){0});
	struct tr_process *p;
	struct sym_space *syms;
	uint64_t trapper;
	long hits[2] = {0, 0}, signals = 0;
	uint8_t byte;
	char err[256];
	int i;

	cr_assert_eq(tracer_launch(t, argv, err, sizeof(err)), 0, "%s", err);
	p = tracer_processes(t);
	syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_function(syms, "trapper", &trapper), 0);
	for (i = 0; i < 2; i++)
		cr_assert_eq(tracer_break_insert(p, trapper + (uint64_t)i, err, sizeof(err)), 0,
			     "%s", err);
	cr_assert_eq(tracer_read(p, trapper, &byte, 1), 0);
	cr_expect_eq(byte, TRACER_INT3, "over the nop: %#x", byte);
	cr_assert_eq(tracer_read(p, trapper + 1, &byte, 1), 0);
	cr_expect_eq(byte, TRACER_BREAK_BYTE, "over the program's int3: %#x", byte);
	for (;;) {
		struct tr_event ev;

		cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		if (ev.kind == TR_EV_PROCESS_EXIT) {
			cr_expect(ev.signo == 0 && ev.status == 0,
				  "the program missed its own traps: status %d, signal %d",
				  ev.status, ev.signo);
			break;
		}
		if (ev.kind == TR_EV_BREAK) {
			cr_assert(ev.addr == trapper || ev.addr == trapper + 1, "break at %#lx",
				  (unsigned long)ev.addr);
			cr_expect_eq(ev.pc, ev.addr, "a breakpoint stop's pc is on it");
			hits[ev.addr - trapper]++;
		} else if (ev.kind == TR_EV_SIGNAL) {
			cr_assert_eq(ev.signo, SIGTRAP);
			signals++;
		}
		cr_assert_eq(tracer_resume(ev.thread), 0);
	}
	cr_expect_eq(hits[0], 50, "nop: %ld hits", hits[0]);
	cr_expect_eq(hits[1], 50, "int3: %ld hits", hits[1]);
	cr_expect_eq(signals, 50, "%ld of the program's SIGTRAPs", signals);
	tracer_free(t);
	sym_close(syms);
}

/* How many children /proc says pid has. */
static int children_of(pid_t pid)
{
	char path[64], buf[256];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fscanf(f, "%255s", buf) == 1)
		n++;
	fclose(f);
	return n;
}

/* The template's forks, the first through glibc's _Fork and the later
 * through the stub that repeats it, are this process's children (as a
 * fresh launch is), never the template's: it has no zombie to bury.  Each
 * child has its robust mutex list registered, as _Fork's child does, is
 * pristine (the template's mappings) until it first runs, and runs the
 * program to its correct result with every hit counted. */
Test(tracer, forks_of_a_template_are_the_tracers_children)
{
	struct tracer *tmpl = launch("50");
	pid_t tmpl_pid = tracer_process_pid(tracer_processes(tmpl));
	struct sym_space *syms;
	uint64_t addrs[3] = {0, 0, 0}, fork_fn;
	char err[256];
	int i;

	syms = sym_open_pid(tmpl_pid, err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_function(syms, "hook", &addrs[0]), 0);
	cr_assert_eq(sym_function(syms, "_Fork", &fork_fn), 0);
	for (i = 0; i < 3; i++) {
		struct tracer *t = tracer_new(&(struct tracer_options){0});
		struct counts c = {0};
		long head = 0;
		size_t len = 0;
		pid_t child;

		cr_assert_eq(
		    tracer_fork_held(tracer_threads(tmpl), fork_fn, &child, err, sizeof(err)), 0,
		    "fork %d: %s", i, err);
		cr_expect_eq(h_status_field(child, child, "PPid"), getpid(), "fork %d", i);
		cr_expect_eq(children_of(tmpl_pid), 0, "fork %d: the template has a child", i);
		cr_expect_eq(syscall(SYS_get_robust_list, child, &head, &len), 0, "%s",
			     strerror(errno));
		cr_expect(head != 0 && len == 24, "fork %d: robust list %#lx, %zu", i, head, len);
		cr_assert_eq(tracer_adopt(t, child, tracer_threads(tmpl), err, sizeof(err)), 0,
			     "%s", err);
		cr_assert_eq(tracer_break_insert(tracer_processes(t), addrs[0], err, sizeof(err)),
			     0, "%s", err);
		cr_expect(tracer_process_pristine(tracer_processes(t)), "fork %d: not pristine", i);
		drive(t, addrs, &c);
		cr_expect(!tracer_process_pristine(tracer_processes(t)), "fork %d: still pristine",
			  i);
		cr_expect_eq(c.hits[0], WORKERS * 50, "fork %d: %ld hits", i, c.hits[0]);
		cr_expect_eq(c.exit_status, 0, "fork %d: wrong result (%d)", i, c.exit_status);
		tracer_free(t);
	}
	tracer_kill_launched(tmpl);
	tracer_free(tmpl);
	sym_close(syms);
}

/* Resume th watching its system calls until it is about to make nr. */
static void run_to_syscall(struct tracer *t, struct tr_thread *th, long nr)
{
	struct tr_event ev;

	do {
		cr_assert_eq(tracer_resume_syscalls(th), 0);
		cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
			     TR_WAIT_EVENT);
		cr_assert_eq(ev.kind, TR_EV_SYSCALL, "event %d before system call %ld", ev.kind,
			     nr);
	} while (ev.sysno != nr);
}

/* Any ptrace stop answers a pending PTRACE_INTERRUPT (the kernel clears
 * its trap), so no PTRACE_EVENT_STOP follows one that came first.  A
 * thread asleep in read() with its system calls watched answers the
 * interrupt with its system-call exit stop: that stop is the interrupt,
 * and the next interrupt, of the same thread asleep again, is sent and
 * answered too (it used to be taken as still pending, never sent, and
 * waited for until the deadline). */
Test(tracer, an_interrupt_answered_by_a_system_call_stop_is_not_left_pending)
{
	char *argv[] = {"tests/fixtures/pipewait", NULL};
	struct tracer *t = tracer_new(&(struct tracer_options){0});
	struct tr_thread *th;
	struct tr_event ev;
	char err[256];
	int i;

	cr_assert_eq(tracer_launch(t, argv, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL), TR_WAIT_EVENT);
	th = ev.thread;
	run_to_syscall(t, th, TR_SYS_read);
	cr_assert_eq(tracer_resume_syscalls(th), 0); /* into the read, asleep */
	for (i = 0; i < 3; i++) {
		cr_assert_eq(tracer_interrupt(th), 0);
		cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + 5000, NULL), TR_WAIT_EVENT,
			     "interrupt %d was not answered", i + 1);
		cr_expect_eq(ev.kind, TR_EV_INTERRUPT, "interrupt %d: event %d", i + 1, ev.kind);
		cr_assert(tracer_thread_held(th));
		cr_assert_eq(tracer_resume(th), 0); /* back to sleep, unwatched */
	}
	tracer_kill_launched(t);
	tracer_free(t);
}

/* The next event of th; other threads' events are refused. */
static struct tr_event event_of(struct tracer *t, struct tr_thread *th, int ms, const char *what)
{
	struct tr_event ev;

	cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + ms, NULL), TR_WAIT_EVENT, "%s: no stop",
		     what);
	cr_assert_eq(ev.thread, th, "%s: a stop of %s", what, tracer_thread_name(ev.thread));
	return ev;
}

/*
 * A newborn thread's first stop is a trap the kernel set at its birth; an
 * interrupt sent before the newborn reached it sets the same trap, and no
 * stop of its own follows.  The first stop must answer it: kept waiting
 * for, the interrupt was never sent again, and the thread's next
 * interrupt (a wait that found it asleep) went unanswered.  A replay of
 * `thread B = p1.t2` right after B's creation, on a busy machine, ended
 * "unrealizable" after a second's wait so.  Each of newborns' threads is
 * interrupted as soon as its creator is back, often before its first
 * stop, then resumed into its sleep and interrupted again.
 */
Test(tracer, an_interrupt_of_a_newborn_is_answered_by_its_first_stop)
{
	char *argv[] = {"tests/fixtures/newborns", NULL};
	struct tracer *t = tracer_new(&(struct tracer_options){0});
	struct tr_process *p;
	struct sym_space *syms;
	struct tr_thread *main_thread, *nb;
	struct tr_event ev;
	uint64_t created;
	char err[256];
	int i, early = 0;
	cpu_set_t one;

	/* the tracer shares the program's one CPU: woken by the creator's
	 * stop, it runs before a newborn, which the kernel puts last */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	cr_assert_eq(tracer_launch(t, argv, err, sizeof(err)), 0, "%s", err);
	p = tracer_processes(t);
	syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	cr_assert_not_null(syms, "%s", err);
	cr_assert_eq(sym_function(syms, "created", &created), 0);
	cr_assert_eq(tracer_break_insert(p, created, err, sizeof(err)), 0, "%s", err);
	main_thread = tracer_thread_by_name(t, "p1.t1");
	/* the spinner, p1.t2, spins on */
	cr_assert_eq(tracer_resume(main_thread), 0);
	cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL), TR_WAIT_EVENT);
	cr_assert(ev.kind == TR_EV_START && strcmp(tracer_thread_name(ev.thread), "p1.t2") == 0,
		  "event %d of %s", ev.kind, tracer_thread_name(ev.thread));
	cr_assert_eq(tracer_resume(ev.thread), 0);
	main_thread = NULL;
	for (i = 0; i < 1000; i++) {
		if (main_thread)
			cr_assert_eq(tracer_resume(main_thread), 0);
		/* the newborn's first stop may come first: it stays held */
		do
			cr_assert_eq(tracer_wait(t, &ev, tracer_now_ms() + DEADLINE_MS, NULL),
				     TR_WAIT_EVENT);
		while (ev.kind == TR_EV_START);
		cr_assert_eq(ev.kind, TR_EV_BREAK);
		main_thread = ev.thread;
		nb = tracer_thread_by_name(t, h_fmt("p1.t%d", i + 3));
		cr_assert_not_null(nb, "thread %d", i + 3);
		if (tracer_thread_running(nb)) {
			early++;
			cr_assert_eq(tracer_interrupt(nb), 0);
			ev = event_of(t, nb, DEADLINE_MS, "the first stop");
		}
		cr_assert_eq(tracer_resume(nb), 0);
		cr_assert_eq(tracer_interrupt(nb), 0);
		ev = event_of(t, nb, 5000, h_fmt("the second interrupt of p1.t%d", i + 3));
		cr_expect_eq(ev.kind, TR_EV_INTERRUPT, "p1.t%d: event %d", i + 3, ev.kind);
	}
	cr_log_info("%d of 1000 newborns were interrupted before their first stop was seen", early);
	cr_expect_gt(early, 0, "no newborn was interrupted before its first stop: nothing tested");
	tracer_kill_launched(t);
	sym_close(syms);
	tracer_free(t);
}
