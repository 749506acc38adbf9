/*
 * System tests: every way the input to cctrace can be wrong.
 *
 * Each test checks the exit code and the exact message, and that nothing
 * was started or attached: schedule errors are reported before the program
 * runs (tests/fixtures/errfix in "marker" mode creates a file when it
 * starts, samples/bank/bank prints a line), and a process that cctrace
 * refused to attach to has neither a tracer nor extra context switches
 * (attaching stops every thread, which shows in
 * /proc/PID/task/TID/status:voluntary_ctxt_switches of threads that are
 * otherwise blocked for ever).
 */
#include "harness.h"

#include <sys/ptrace.h>
#include <sys/stat.h>

TestSuite(errors, .fini = h_cleanup, .timeout = 60);

#define ERRFIX "tests/fixtures/errfix"
#define BANK   "samples/bank/bank"

/* A shorter safety net for runs that should take well under a second. */
#define QUICK_S 10

/*
 * The diagnostic of a schedule error: "PATH:LINE:COL: error: MSG", the
 * source line indented by 4, and a caret under column COL (tabs of the
 * source line copied), then nothing but blank lines.
 */
static void expect_diag(const char *err, const char *path, int line, int col, const char *msg,
			const char *src)
{
	char caret[512];
	char *want;
	size_t n = 0, wl;
	int i;

	for (i = 0; i < col - 1 && src[i] && n + 2 < sizeof(caret); i++)
		caret[n++] = src[i] == '\t' ? '\t' : ' ';
	caret[n++] = '^';
	caret[n] = 0;
	want = h_fmt("%s:%d:%d: error: %s\n    %s\n    %s\n", path, line, col, msg, src, caret);
	wl = strlen(want);
	cr_expect(strncmp(err, want, wl) == 0, "expected the diagnostic\n%s\ngot\n%s", want, err);
	if (strncmp(err, want, wl) == 0)
		cr_expect(strspn(err + wl, "\n") == strlen(err + wl),
			  "more than the diagnostic was printed:\n%s", err);
	free(want);
}

/* Runs `cctrace run SCHED -- errfix marker M` and checks errfix never ran. */
static struct h_result run_not_launched(const char *sched)
{
	char *marker = h_fmt("%s.started", sched);
	struct h_result r = h_run(
	    (const char *const[]){h_cctrace(), "run", sched, "--", ERRFIX, "marker", marker, NULL},
	    QUICK_S);

	cr_expect_eq(r.code, 3, "exit %d, expected 3 (error):\n%s", r.code, r.err);
	cr_expect(access(marker, F_OK) != 0, "the program was started despite the error");
	cr_expect_eq(h_parse_trace(r.err, NULL, 0), 0, "trace lines after an error:\n%s", r.err);
	cr_expect(!strstr(r.err, "cctrace: completed") && !strstr(r.err, "cctrace: bug") &&
		      !strstr(r.err, "cctrace: unrealizable"),
		  "an outcome after a schedule error:\n%s", r.err);
	unlink(marker);
	free(marker);
	return r;
}

/* The check above is meaningful: a valid schedule does start errfix. */
Test(errors, control_valid_schedule_launches)
{
	char *sched = h_temp_sched("ok.sched", "timeout 2s\n");
	char *marker = h_fmt("%s.started", sched);
	struct h_result r = h_run(
	    (const char *const[]){h_cctrace(), "run", sched, "--", ERRFIX, "marker", marker, NULL},
	    QUICK_S);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "cctrace: completed: "), "%s", r.err);
	cr_expect(access(marker, F_OK) == 0, "errfix did not run");
	unlink(marker);
	free(marker);
	h_result_free(&r);
}

Test(errors, syntax_error_has_position_and_caret)
{
	char *sched = h_temp_sched("typo.sched", "timeout 1s\n"
						 "thread A = wait any enter(work)\n"
						 "run A untl return(work)\n");
	struct h_result r = run_not_launched(sched);

	expect_diag(r.err, sched, 3, 7, "expected 'until' after thread list, found 'untl'",
		    "run A untl return(work)");
	/* the caret line ends the message: no blank line after it */
	cr_expect(r.err[strlen(r.err) - 1] == '\n' && !strstr(r.err, "^\n\n"), "%s", r.err);
	h_result_free(&r);
}

/* A UTF-8 byte order mark, which some editors write first, is no error
 * ("unexpected byte 0xef" before). */
Test(errors, a_byte_order_mark_is_skipped)
{
	char *sched = h_temp_sched("bom.sched", "\xef\xbb\xbfthread A = wait any enter(withdraw)\n"
						"release all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", "-q", sched, "--", BANK);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	h_result_free(&r);
}

Test(errors, misspelt_statement_gets_a_suggestion)
{
	char *sched = h_temp_sched("rn.sched", "timeout 1s\n"
					       "thread A = wait any enter(work)\n"
					       "rn A until return(work)\n");
	struct h_result r = run_not_launched(sched);

	expect_diag(r.err, sched, 3, 1, "unknown statement 'rn'; did you mean 'run'?",
		    "rn A until return(work)");
	h_result_free(&r);
}

/* A misspelt 'wait' after 'thread A =', and a misspelt system call,
 * are suggested too. */
Test(errors, misspelt_wait_and_system_call_get_suggestions)
{
	char *sched = h_temp_sched("wiat.sched", "thread A = wiat any enter(work)\n");
	struct h_result r = run_not_launched(sched);

	expect_diag(r.err, sched, 1, 12,
		    "'thread' declarations must have '= wait ...', found 'wiat'; did you mean "
		    "'wait'?",
		    "thread A = wiat any enter(work)");
	h_result_free(&r);
	sched = h_temp_sched("futex.sched", "thread A = wait any syscall(fuutex)\n");
	r = run_not_launched(sched);
	expect_diag(r.err, sched, 1, 29, "unknown system call 'fuutex'; did you mean 'futex'?",
		    "thread A = wait any syscall(fuutex)");
	h_result_free(&r);
}

Test(errors, caret_copies_tabs)
{
	char *sched = h_temp_sched("tab.sched", "\twait any enter(never_calld)\n");
	struct h_result r = run_not_launched(sched);

	expect_diag(r.err, sched, 1, 11, "no function 'never_calld'; did you mean 'never_called'?",
		    "\twait any enter(never_calld)");
	h_result_free(&r);
}

/* The README's misspelling, on the real bank sample: bank prints a line
 * when it runs, so empty stdout means it never ran. */
Test(errors, unknown_function_did_you_mean)
{
	char *sched =
	    h_temp_sched("withdarw.sched", "timeout 2s\n"
					   "thread A, B = wait 2 distinct enter(withdarw)\n"
					   "release all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", BANK);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	expect_diag(r.err, sched, 2, 31, "no function 'withdarw'; did you mean 'withdraw'?",
		    "thread A, B = wait 2 distinct enter(withdarw)");
	cr_expect_str_eq(r.out, "", "bank ran:\n%s", r.out);
	h_result_free(&r);
}

/* at(NAME+0xOFF) names a function, else a module (an ELF file's
 * basename): neither, or an offset past the module's end, is an error
 * before the program runs. */
Test(errors, at_of_an_unknown_module_or_past_its_end)
{
	char *none = h_temp_sched("nomod.sched", "wait any at(bnak+0x10)\n"),
	     *past = h_temp_sched("past.sched", "wait any at(bank+0x7fffffff)\n"), *good;
	struct h_result r = H_RUN("sh", "-c", "nm " BANK " | awk '$3 == \"withdraw\" {print $1}'");
	unsigned long long withdraw = strtoull(r.out, NULL, 16);

	cr_assert(withdraw != 0, "nm: %s%s", r.out, r.err);
	good = h_temp_sched("mod.sched",
			    h_fmt("thread A = wait any at(bank+0x%llx)\nrelease all\n", withdraw));
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", none, "--", BANK);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	expect_diag(r.err, none, 1, 10,
		    "no function or module 'bnak' in the program or its libraries (or the "
		    "offset is outside it)",
		    "wait any at(bnak+0x10)");
	cr_expect_str_eq(r.out, "", "bank ran:\n%s", r.out);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", past, "--", BANK);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "no function or module 'bank'"), "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", good, "--", BANK);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "at(bank+0x") && strstr(r.err, "withdraw "), "%s", r.err);
	h_result_free(&r);
}

/* An -O2 build (tests/fixtures/optinline): bump, static, has no symbol,
 * and is inlined into worker.  enter(bump) stops at the copy, where the
 * race is driven as at -O0 ("no function 'bump'; did you mean 'bcmp'?"
 * before); return(bump) cannot be seen and says why; return(add), whose
 * out-of-line copy nothing calls, is warned of before the run. */
Test(errors, an_inlined_function_is_entered_at_its_copies)
{
	const char *prog = "tests/fixtures/optinline";
	char *race = h_temp_sched("race.sched", "thread A, B = wait 2 distinct enter(bump)\n"
						"run A until read(counter)\n"
						"run B until exit\n"
						"release all\n"),
	     *ret = h_temp_sched("ret.sched", "thread A = wait any return(bump)\n"),
	     *add = h_temp_sched("add.sched", "thread A = wait any return(add) || exit\n"
					      "release all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", "--expect", "bug", race, "--", prog);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect_eq(h_count_lines(r.err, "enter(bump) "), 2, "%s", r.err);
	cr_expect(strstr(r.err, "received ABRT"), "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", ret, "--", prog);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, ":1:21: error: 'bump' has no symbol of its own: the compiler "
				"inlined it, or copied it under other names (1 copy: in worker)"),
		  "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", add, "--", prog);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, ":1:21: warning: 'add' is also inlined or copied by the compiler "
				"(1 copy: in worker)"),
		  "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", "-q", add, "--", prog);
	cr_expect(!strstr(r.err, "warning"), "-q:\n%s", r.err);
	h_result_free(&r);
}

/* -O2 (tests/fixtures/optclone): gcc copied heavy as heavy.constprop.0,
 * which a1..a4 call, and inlined it in a5; no symbol is heavy.
 * enter(heavy) stops at both, five times in all (once before: the
 * constprop copy was not seen), and return(heavy) says why it cannot be. */
Test(errors, a_function_the_compiler_copied_is_entered_in_every_copy)
{
	const char *prog = "tests/fixtures/optclone";
	char *five = h_temp_sched("five.sched", "let n = 0\n"
						"while (n < 5) {\n"
						"  thread A = wait any enter(heavy)\n"
						"  let n = n + 1\n"
						"  release all\n"
						"}\n"),
	     *ret = h_temp_sched("ret.sched", "thread A = wait any return(heavy)\n");
	struct h_result r = H_RUN(h_cctrace(), "run", five, "--", prog);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect_eq(h_count_lines(r.err, "enter(heavy) "), 5, "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", ret, "--", prog);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "(2 copies: in heavy.constprop.0 and a5)"), "%s", r.err);
	h_result_free(&r);
}

/* -O2 -flto (tests/fixtures/optlto): withdraw's copy in customer is in
 * another unit than withdraw's own DWARF, and libdw finds no scope for its
 * pc: its parameters were "not in scope" (gdb read them).  They are read
 * from the copy's scopes, found by hand. */
Test(errors, an_inlined_copy_s_parameters_are_read_under_lto)
{
	char *sched = h_temp_sched("lto.sched", "thread A, B = wait 2 distinct enter(withdraw)\n"
						"run A until enter(pthread_mutex_unlock)\n"
						"finish A\n"
						"assert A.amount == 10 || A.amount == 20\n"
						"assert A.a->balance == 100\n"
						"release all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/optlto");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	h_result_free(&r);
}

/* -O2 (tests/fixtures/optnest): leaf's copy is inlined into mid's, and
 * both begin at one pc.  enter(mid) reads mid's v there (leaf's before). */
Test(errors, a_nested_inlined_copy_s_variables_are_its_own)
{
	char *sched = h_temp_sched("mid.sched", "thread A = wait any enter(mid)\n"
						"assert A.v == 6\n"
						"release all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/optnest");

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	h_result_free(&r);
}

/* -O2 (tests/fixtures/optlines): the read's address has two rows, the
 * read's line, which begins a statement there, and the next line's, which
 * does not.  at(LINE) was said to stop at LINE + 1. */
Test(errors, a_stop_is_at_the_statement_its_address_begins)
{
	int line = h_marker_line("tests/fixtures/optlines.c", "read");
	char *sched = h_temp_sched("read.sched", h_fmt("thread A = wait any at(optlines.c:%d)\n"
						       "release all\n",
						       line));
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "tests/fixtures/optlines");
	const char *event = strstr(r.err, h_fmt("at(optlines.c:%d)", line));

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_assert(event, "%s", r.err);
	cr_expect(
	    strstr(h_fmt("%.*s", (int)strcspn(event, "\n"), event), h_fmt(" optlines.c:%d", line)),
	    "%s", r.err);
	h_result_free(&r);
}

/* at(F+0xOFF) inside an instruction is refused before a byte is planted:
 * the program crashed, or went on doing something else.  withdraw begins
 * with a 1-byte push or a 4-byte endbr64: +0x2 is inside either. */
Test(errors, at_inside_an_instruction_is_refused)
{
	char *sched =
	    h_temp_sched("mid.sched", "thread A = wait any at(withdraw+0x2)\nrelease all\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", BANK);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "at(withdraw+0x2) is in the middle of an instruction"), "%s",
		  r.err);
	h_result_free(&r);
}

Test(errors, unknown_variable)
{
	char *s1 = h_temp_sched("balanse.sched", "thread A = wait any write(balanse)\n");
	char *s2 = h_temp_sched("nosuch.sched", "timeout 1s\nassert nosuchthing == 1\n");
	struct h_result r = H_RUN(h_cctrace(), "run", s1, "--", BANK);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	expect_diag(r.err, s1, 1, 27, "no variable 'balanse'; did you mean 'balance'?",
		    "thread A = wait any write(balanse)");
	cr_expect_str_eq(r.out, "", "bank ran:\n%s", r.out);
	h_result_free(&r);

	r = run_not_launched(s2);
	expect_diag(r.err, s2, 2, 8, "no variable or enumerator 'nosuchthing' in the program",
		    "assert nosuchthing == 1");
	h_result_free(&r);
}

/* A fifth variable gets no debug register: it is matched by decoding the
 * running threads' instructions, and the user sees no limit. */
Test(errors, fifth_watched_variable_is_decoded)
{
	char *sched = h_temp_sched("five.sched", "timeout 5s\n"
						 "wait any write(w1) || write(w2) || write(w3) || "
						 "write(w4) || write(w5)\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", ERRFIX, "writes");
	struct h_trace_ev ev[1];

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect_eq(h_parse_trace(r.err, ev, 1), 1, "%s", r.err);
	cr_expect_str_eq(ev[0].event, "write(w1)", "%s", r.err);
	cr_expect_str_eq(ev[0].func, "writer", "%s", r.err);
	cr_expect_str_eq(r.out, "w1..w4 = 1 2 3 4, w5 = 0\n");
	h_result_free(&r);
}

/* Four is the limit, not three: four watched variables work. */
Test(errors, four_watched_variables_are_fine)
{
	char *sched = h_temp_sched("four.sched",
				   "timeout 5s\n"
				   "wait any write(w1) || write(w2) || write(w3) || write(w4)\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", ERRFIX, "writes");
	struct h_trace_ev ev[4];

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect_eq(h_parse_trace(r.err, ev, 4), 1, "%s", r.err);
	cr_expect_str_eq(ev[0].event, "write(w1)", "%s", r.err);
	cr_expect_str_eq(ev[0].func, "writer");
	cr_expect_str_eq(r.out, "w1..w4 = 1 2 3 4, w5 = 0\n");
	h_result_free(&r);
}

/* ----------------------------------------------------------- attach */

struct waiter {
	struct h_proc proc;
	pid_t pid;
	pid_t tids[8];
	int ntids;
	long switches[8];
};

/* Starts `errfix wait`: three threads blocked for ever. */
static void start_waiter(struct waiter *w)
{
	const char *argv[] = {ERRFIX, "wait", NULL};
	char line[64];
	int pid = 0, i;

	w->proc = h_spawn(argv, false, true, false);
	w->pid = w->proc.pid;
	cr_assert(h_read_line(w->proc.out, line, sizeof(line), 10000), "no ready line");
	cr_assert(sscanf(line, "ready %d", &pid) == 1 && pid == w->pid, "%s", line);
	/* All three blocked (main in join, two in read). */
	{
		int64_t deadline = h_now_ms() + 10000;
		bool blocked = false;

		while (!blocked && h_now_ms() < deadline) {
			w->ntids = h_tasks(w->pid, w->tids, 8);
			blocked = w->ntids == 3;
			for (i = 0; i < w->ntids && blocked; i++)
				blocked = h_task_state(w->pid, w->tids[i]) == 'S';
			if (!blocked)
				h_pace();
		}
		cr_assert(blocked, "errfix wait did not block");
	}
	for (i = 0; i < w->ntids; i++)
		w->switches[i] = h_status_field(w->pid, w->tids[i], "voluntary_ctxt_switches") +
				 h_status_field(w->pid, w->tids[i], "nonvoluntary_ctxt_switches");
}

/* Nobody stopped (attached to) the waiter's threads since start_waiter. */
static void expect_never_attached(struct waiter *w)
{
	int i;

	for (i = 0; i < w->ntids; i++) {
		long now = h_status_field(w->pid, w->tids[i], "voluntary_ctxt_switches") +
			   h_status_field(w->pid, w->tids[i], "nonvoluntary_ctxt_switches");

		cr_expect_eq(h_status_field(w->pid, w->tids[i], "TracerPid"), 0,
			     "thread %d is traced", (int)w->tids[i]);
		cr_expect_eq(now, w->switches[i],
			     "thread %d was woken up (context switches %ld -> %ld): something "
			     "attached to it",
			     (int)w->tids[i], w->switches[i], now);
	}
}

/* The check above is meaningful: a real attach does show. */
Test(errors, control_attach_shows_in_context_switches)
{
	char *sched = h_temp_sched("release.sched", "release all\n");
	struct waiter w;
	struct h_result r;
	int i, woken = 0;

	start_waiter(&w);
	r = H_RUN(h_cctrace(), "attach", h_fmt("%d", (int)w.pid), sched);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	for (i = 0; i < w.ntids; i++)
		if (h_status_field(w.pid, w.tids[i], "voluntary_ctxt_switches") +
			h_status_field(w.pid, w.tids[i], "nonvoluntary_ctxt_switches") !=
		    w.switches[i])
			woken++;
	cr_expect_eq(woken, w.ntids, "only %d of %d threads show the attach", woken, w.ntids);
	h_result_free(&r);
}

Test(errors, attach_schedule_error_attaches_nothing)
{
	char *sched = h_temp_sched("typo.sched", "timeout 1s\n"
						 "thread A = wait any enter(work)\n"
						 "run A untl return(work)\n");
	struct waiter w;
	struct h_result r;

	start_waiter(&w);
	r = H_RUN(h_cctrace(), "attach", h_fmt("%d", (int)w.pid), sched);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	expect_diag(r.err, sched, 3, 7, "expected 'until' after thread list, found 'untl'",
		    "run A untl return(work)");
	expect_never_attached(&w);
	h_result_free(&r);

	/* An error found by the checker against the process's symbols. */
	sched = h_temp_sched("nofunc.sched", "wait any enter(never_calld)\n");
	r = H_RUN(h_cctrace(), "attach", h_fmt("%d", (int)w.pid), sched);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	expect_diag(r.err, sched, 1, 10, "no function 'never_calld'; did you mean 'never_called'?",
		    "wait any enter(never_calld)");
	expect_never_attached(&w);
	h_result_free(&r);
}

static void expect_no_such_process(pid_t pid)
{
	char *sched = h_temp_sched("never.sched", "wait any enter(never_called)\n");
	char *arg = h_fmt("%d", (int)pid);
	struct h_result r = H_RUN(h_cctrace(), "attach", arg, sched);

	cr_expect_eq(r.code, 3, "attach %s: exit %d:\n%s", arg, r.code, r.err);
	cr_expect(strstr(r.err, "no such process"), "attach %s: expected 'no such process' in:\n%s",
		  arg, r.err);
	cr_expect(strstr(r.err, arg), "attach %s: the message does not name the pid:\n%s", arg,
		  r.err);
	h_result_free(&r);
	free(arg);
}

Test(errors, attach_no_such_process)
{
	pid_t gone;
	int status;

	expect_no_such_process(999999999);
	/* A pid that existed a moment ago. */
	gone = fork();
	cr_assert(gone >= 0);
	if (gone == 0)
		_exit(0);
	cr_assert_eq(waitpid(gone, &status, 0), gone);
	expect_no_such_process(gone);
}

Test(errors, attach_not_a_pid)
{
	const char *bad[] = {"notapid", "12abc", "0", "", "99999999999999999999"};
	char *sched = h_temp_sched("never.sched", "wait any enter(never_called)\n");
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct h_result r = H_RUN(h_cctrace(), "attach", bad[i], sched);
		char *want = h_fmt("cctrace attach: '%s' is not a process id\n"
				   "Try 'cctrace attach --help' for more information.\n",
				   bad[i]);

		cr_expect_eq(r.code, 3, "attach '%s': exit %d:\n%s", bad[i], r.code, r.err);
		cr_expect_str_eq(r.err, want, "attach '%s'", bad[i]);
		free(want);
		h_result_free(&r);
	}
}

Test(errors, attach_already_traced_by_the_test)
{
	char *sched = h_temp_sched("never.sched", "timeout 1s\nwait any enter(never_called)\n");
	struct waiter w;
	struct h_result r;
	char *want;

	start_waiter(&w);
	cr_assert(ptrace(PTRACE_SEIZE, w.pid, NULL, NULL) == 0, "seize: %s", strerror(errno));
	r = H_RUN(h_cctrace(), "attach", h_fmt("%d", (int)w.pid), sched);
	want = h_fmt("cannot attach to pid %d: it is already traced by pid %d", (int)w.pid,
		     (int)getpid());
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, want), "expected '%s' in:\n%s", want, r.err);
	cr_expect_eq(h_parse_trace(r.err, NULL, 0), 0, "%s", r.err);
	cr_expect_eq(h_status_field(w.pid, w.pid, "TracerPid"), getpid(),
		     "cctrace took the tracee away");
	cr_assert(ptrace(PTRACE_DETACH, w.pid, NULL, NULL) == 0 || errno == ESRCH);
	free(want);
	h_result_free(&r);
}

/* ...one thread of it (strace -p TID): the error names the thread and its
 * tracer ("cannot attach to the threads of pid N: Operation not permitted"
 * before), and no thread is left traced by cctrace. */
Test(errors, attach_one_thread_already_traced)
{
	char *sched = h_temp_sched("never.sched", "timeout 1s\nwait any enter(never_called)\n");
	struct waiter w;
	struct h_result r;
	pid_t other = 0;
	char *want;
	int i;

	start_waiter(&w);
	for (i = 0; i < w.ntids && !other; i++)
		if (w.tids[i] != w.pid)
			other = w.tids[i];
	cr_assert(other, "errfix wait has no second thread");
	cr_assert(ptrace(PTRACE_SEIZE, other, NULL, NULL) == 0, "seize: %s", strerror(errno));
	r = H_RUN(h_cctrace(), "attach", h_fmt("%d", (int)w.pid), sched);
	want = h_fmt("cannot attach to thread %d of pid %d: it is already traced by pid %d",
		     (int)other, (int)w.pid, (int)getpid());
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, want), "expected '%s' in:\n%s", want, r.err);
	for (i = 0; i < w.ntids; i++)
		cr_expect_eq(h_status_field(w.pid, w.tids[i], "TracerPid"),
			     w.tids[i] == other ? getpid() : 0, "thread %d", (int)w.tids[i]);
	/* a seized thread is detached stopped */
	cr_assert(ptrace(PTRACE_INTERRUPT, other, NULL, NULL) == 0, "%s", strerror(errno));
	cr_assert(waitpid(other, NULL, __WALL) == other, "%s", strerror(errno));
	cr_assert(ptrace(PTRACE_DETACH, other, NULL, NULL) == 0, "%s", strerror(errno));
	free(want);
	h_result_free(&r);
}

Test(errors, attach_already_traced_by_another_cctrace)
{
	char *never = h_temp_sched("never.sched", "timeout 60s\nwait any enter(never_called)\n");
	char *pid;
	struct waiter w;
	struct h_proc first;
	struct h_result r, r1;
	char *want;

	start_waiter(&w);
	pid = h_fmt("%d", (int)w.pid);
	first = h_spawn((const char *const[]){h_cctrace(), "attach", pid, never, NULL}, false, true,
			true);
	cr_assert(h_wait_traced_by(w.pid, first.pid, 10000), "the first cctrace did not attach");
	r = H_RUN(h_cctrace(), "attach", pid, never);
	want = h_fmt("cannot attach to pid %d: it is already traced by pid %d (cctrace)",
		     (int)w.pid, (int)first.pid);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, want), "expected '%s' in:\n%s", want, r.err);
	h_result_free(&r);
	/* The first one is still in charge, and lets go on Ctrl-C. */
	cr_expect(h_wait_traced_by(w.pid, first.pid, 1000),
		  "the second cctrace disturbed the first");
	cr_assert(kill(first.pid, SIGINT) == 0);
	r1 = h_collect(&first, QUICK_S);
	cr_expect_eq(r1.code, 128 + SIGINT, "first cctrace: exit %d:\n%s", r1.code, r1.err);
	cr_expect(strstr(r1.err, "interrupted"), "%s", r1.err);
	cr_expect_eq(h_status_field(w.pid, w.pid, "TracerPid"), 0);
	free(want);
	h_result_free(&r1);
}

/* ---------------------------------------------------------- programs */

Test(errors, program_does_not_exist)
{
	char *sched = h_temp_sched("plain.sched", "timeout 1s\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "/nonexistent/dir/prog");

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "cctrace: error: cannot run '/nonexistent/dir/prog': No such file "
				"or directory\n"),
		  "%s", r.err);
	h_result_free(&r);
}

/* A directory, or a script (whose interpreter would be traced, with none
 * of the schedule's names), is refused as what it is, before anything
 * runs: not as a file whose symbols cannot be read. */
Test(errors, a_directory_or_a_script_is_no_program)
{
	char *sched = h_temp_sched("plain.sched", "timeout 1s\n");
	char *dir = h_temp_dir(), *script = h_fmt("%s/prog.sh", dir);
	struct h_result r;

	h_write_file(script, "#!/bin/sh\nexec tests/fixtures/errfix\n");
	cr_assert(chmod(script, 0755) == 0);
	r = H_RUN(h_cctrace(), "run", sched, "--", dir);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, h_fmt("cctrace: error: cannot run '%s': it is a directory\n", dir)),
		  "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", sched, "--", script);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, h_fmt("cctrace: error: cannot run '%s': it is a script "
				      "(#!/bin/sh), and cctrace needs the program itself",
				      script)),
		  "%s", r.err);
	cr_expect_str_eq(r.out, "", "the script ran:\n%s", r.out);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A program whose work is to run another (env, sh, taskset...) given
 * after -- is named as such, not as a stripped binary to find debug
 * symbols for. */
Test(errors, a_launcher_given_as_the_program_is_named_as_such)
{
	char *sched = h_temp_sched("env.sched", "thread A = wait any enter(withdraw)\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", "/usr/bin/env", BANK);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "no function 'withdraw' in the program or its libraries: "
				"/usr/bin/env runs other programs") &&
		      !strstr(r.err, "debug symbols"),
		  "%s", r.err);
	cr_expect_str_eq(r.out, "", "bank ran:\n%s", r.out);
	h_result_free(&r);
}

/* A schedule's error found while it runs is said once: "cctrace: error:
 * FILE:LINE:COL: what", its line and a caret, and no blank line. */
Test(errors, an_error_found_while_running_is_said_once)
{
	char *sched = h_temp_sched("divide.sched", "thread A = wait any enter(withdraw)\n"
						   "assert 1 / (balance - balance) == 0\n");
	struct h_result r = H_RUN(h_cctrace(), "run", sched, "--", BANK);
	char *want = h_fmt("cctrace: error: %s:2:8: division by zero\n"
			   "    assert 1 / (balance - balance) == 0\n"
			   "           ^\n",
			   sched);

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	cr_expect(!strstr(r.err, "^\n\n"), "%s", r.err);
	h_result_free(&r);
}

Test(errors, schedule_file_does_not_exist)
{
	struct h_result r = H_RUN(h_cctrace(), "run", "/nonexistent/x.sched", "--", ERRFIX, "wait");

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "/nonexistent/x.sched: cannot read schedule: No such file or "
				"directory"),
		  "%s", r.err);
	cr_expect_str_eq(r.out, "", "errfix ran:\n%s", r.out);
	h_result_free(&r);
}

Test(errors, command_line_mistakes)
{
	char *sched = h_temp_sched("plain.sched", "timeout 1s\n");
	struct h_result r;

	r = H_RUN(h_cctrace(), "run", sched, ERRFIX);
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace run: expected SCHEDULE -- PROGRAM [ARGS...]\n"
				"Try 'cctrace run --help' for more information.\n");
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "attach", "1");
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace attach: expected PID SCHEDULE\n"
				"Try 'cctrace attach --help' for more information.\n");
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "frob");
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace: unknown command 'frob'\n"
				"Try 'cctrace --help' for more information.\n");
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "run", "--timeout", "5x", sched, "--", ERRFIX, "wait");
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace run: bad --timeout '5x': use e.g. 500ms, 2s or 5m\n"
				"Try 'cctrace run --help' for more information.\n");
	cr_expect_str_eq(r.out, "");
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "run", "--expect", "bogus", sched, "--", ERRFIX, "wait");
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace run: bad --expect 'bogus': use bug, completed, "
				"unrealizable, infeasible or error\n"
				"Try 'cctrace run --help' for more information.\n");
	cr_expect_str_eq(r.out, "");
	h_result_free(&r);
}

/* Decimal durations in a schedule and on the command line mean the same
 * milliseconds: the report names 500 ms either way (no timing asserted). */
Test(errors, decimal_durations_in_schedule_and_cli)
{
	char *timed = h_temp_sched("half.sched", "timeout 0.5s\nwait any enter(never_called)\n");
	char *plain = h_temp_sched("plain.sched", "wait any enter(never_called)\n");
	const char *const *argvs[] = {
	    (const char *const[]){h_cctrace(), "run", timed, "--", ERRFIX, "wait", NULL},
	    (const char *const[]){h_cctrace(), "run", "--timeout", "0.5s", plain, "--", ERRFIX,
				  "wait", NULL}};

	for (int i = 0; i < 2; i++) {
		struct h_result r = h_run(argvs[i], QUICK_S);
		cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
		cr_expect(strstr(r.err, "no thread reached 'enter(never_called)' within 500 ms"),
			  "%s", r.err);
		h_result_free(&r);
	}
	struct h_result r =
	    H_RUN(h_cctrace(), "run", "--timeout", "0.5ms", plain, "--", ERRFIX, "wait");
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace run: bad --timeout '0.5ms': finer than a millisecond\n"
				"Try 'cctrace run --help' for more information.\n");
	cr_expect_str_eq(r.out, "", "errfix ran:\n%s", r.out);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "explore", plain, "--time", "1.5x", "--", ERRFIX, "wait");
	cr_expect_eq(r.code, 3);
	cr_expect_str_eq(r.err, "cctrace explore: bad --time '1.5x': use e.g. 500ms, 2s or 5m\n"
				"Try 'cctrace explore --help' for more information.\n");
	h_result_free(&r);
	char *bad = h_temp_sched("bad.sched", "timeout 0.0001s\n");
	r = H_RUN(h_cctrace(), "run", bad, "--", ERRFIX, "wait");
	cr_expect_eq(r.code, 3);
	cr_expect(strstr(r.err, ":1:9: error: bad duration '0.0001s': finer than a millisecond"),
		  "%s", r.err);
	cr_expect_str_eq(r.out, "", "errfix ran:\n%s", r.out);
	h_result_free(&r);
	free(timed);
	free(plain);
	free(bad);
}

/* Where the threads were: one line per thread, p1.t1 .. p1.tN. */
static void expect_thread_report(const char *err, int nthreads)
{
	const char *threads = strstr(err, "\n  threads:\n");
	int i;

	cr_expect(threads, "no thread report:\n%s", err);
	if (!threads)
		return;
	for (i = 1; i <= nthreads; i++) {
		char *line = h_fmt("\n    p1.t%d ", i);

		cr_expect(strstr(threads, line), "the report does not list p1.t%d:\n%s", i, err);
		free(line);
	}
	cr_expect_eq(h_count_lines(threads, "blocked in read"), 2,
		     "two threads should be blocked in read:\n%s", err);
}

Test(errors, unrealizable_timeout_lists_threads)
{
	char *sched = h_temp_sched("never.sched", "timeout 300ms\nwait any enter(never_called)\n");
	struct h_result r = h_run(
	    (const char *const[]){h_cctrace(), "run", sched, "--", ERRFIX, "wait", NULL}, QUICK_S);
	char *want;
	int pid = 0;

	cr_expect(!r.timed_out, "cctrace did not end within %d s after a 300 ms timeout:\n%s",
		  QUICK_S, r.err);
	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	want = h_fmt("cctrace: unrealizable: no thread reached 'enter(never_called)' within 300 "
		     "ms (%s:2:1); where the threads were:\n",
		     sched);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	expect_thread_report(r.err, 3);
	/* The launched program was killed, not left behind. */
	cr_expect(sscanf(r.out, "ready %d", &pid) == 1, "%s", r.out);
	if (pid > 0) {
		char st = h_task_state(pid, pid);

		cr_expect(st == 0 || st == 'Z' || st == 'X', "errfix %d left running (state %c)",
			  pid, st);
	}
	free(want);
	h_result_free(&r);
}

Test(errors, unrealizable_timeout_on_attach_lists_threads)
{
	char *sched = h_temp_sched("never.sched", "timeout 300ms\nwait any enter(never_called)\n");
	struct waiter w;
	struct h_result r;
	char *pid, *want;

	start_waiter(&w);
	pid = h_fmt("%d", (int)w.pid);
	r = h_run((const char *const[]){h_cctrace(), "attach", pid, sched, NULL}, QUICK_S);
	cr_expect_eq(r.code, 2, "exit %d:\n%s", r.code, r.err);
	want = h_fmt("cctrace: unrealizable: no thread reached 'enter(never_called)' within 300 "
		     "ms (%s:2:1); where the threads were:\n",
		     sched);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	expect_thread_report(r.err, 3);
	cr_expect_eq(h_status_field(w.pid, w.pid, "TracerPid"), 0, "still traced");
	cr_expect_eq(h_task_state(w.pid, w.pid), 'S', "errfix should be blocked as before");
	h_result_free(&r);

	/* The same with --expect unrealizable. */
	r = h_run((const char *const[]){h_cctrace(), "attach", "--expect", "unrealizable", pid,
					sched, NULL},
		  QUICK_S);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	free(want);
	h_result_free(&r);
}

Test(errors, program_exits_while_the_schedule_waits)
{
	char *sched = h_temp_sched("die.sched", "timeout 10s\n"
						"wait any enter(work)\n"
						"wait any enter(never_called)\n");
	const char *plain[] = {h_cctrace(), "run", sched, "--", ERRFIX, "die", NULL};
	const char *fail[] = {h_cctrace(), "run", "--fail-on-exit", sched, "--", ERRFIX,
			      "die",	   NULL};
	struct h_result r = h_run(plain, QUICK_S);
	char *want;

	cr_expect_eq(r.code, 2, "exit %d, expected 2 (unrealizable):\n%s", r.code, r.err);
	want = h_fmt("cctrace: unrealizable: the program exited with status 3 while the schedule "
		     "waited at %s:3:1\n",
		     sched);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	cr_expect_eq(h_count_lines(r.err, "enter(work)"), 1,
		     "the first wait was satisfied first:\n%s", r.err);
	cr_expect_str_eq(r.out, "exiting with 3\n");
	free(want);
	h_result_free(&r);

	r = h_run(fail, QUICK_S);
	cr_expect_eq(r.code, 1, "--fail-on-exit: exit %d, expected 1 (bug):\n%s", r.code, r.err);
	want = h_fmt("cctrace: bug: the program exited with status 3 while the schedule waited at "
		     "%s:3:1\n",
		     sched);
	cr_expect(strstr(r.err, want), "expected\n%s\nin:\n%s", want, r.err);
	free(want);
	h_result_free(&r);
}

Test(errors, expect_mismatch_exits_4)
{
	char *typo = h_temp_sched("typo.sched", "rn A until exit\n");
	struct h_result r;

	r = H_RUN(h_cctrace(), "run", "--expect", "completed", "samples/bank/lost-update.sched",
		  "--", BANK);
	cr_expect_eq(r.code, 4, "--expect completed on a bug: exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "cctrace: bug: "), "the outcome is still reported:\n%s", r.err);
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "run", "--expect", "unrealizable", "samples/bank/lost-update.sched",
		  "--", BANK);
	cr_expect_eq(r.code, 4, "--expect unrealizable on a bug: exit %d:\n%s", r.code, r.err);
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "run", "--expect", "error", typo, "--", BANK);
	cr_expect_eq(r.code, 0, "--expect error on a schedule error: exit %d:\n%s", r.code, r.err);
	cr_expect_str_eq(r.out, "", "bank ran:\n%s", r.out);
	h_result_free(&r);

	r = H_RUN(h_cctrace(), "run", "--expect", "bug", typo, "--", BANK);
	cr_expect_eq(r.code, 4, "--expect bug on a schedule error: exit %d:\n%s", r.code, r.err);
	h_result_free(&r);
}

/* cctrace test on a server with no client (tests/fixtures/serserve: main
 * in accept for ever).  Before, the search waited in its first run for
 * ever, whatever --time said.  Now a run where every thread has waited
 * --timeout for the outside ends as an error that says so, and --time
 * ends a run it finds going; a search that ended no run is an error, not
 * "0 bugs". */
static void expect_nothing_explored(struct h_result *r, const char *why)
{
	cr_expect_eq(r->code, 3, "exit %d:\n%s", r->code, r->err);
	cr_expect(strstr(r->err, why), "expected '%s' in:\n%s", why, r->err);
	cr_expect(!strstr(r->err, "0 bugs"), "a search that ran nothing:\n%s", r->err);
}

Test(errors, a_server_without_a_client_is_an_error_not_a_hang)
{
	char *dir = h_temp_dir();
	struct h_result r = H_RUN(h_cctrace(), "test", "--timeout", "300ms", "--out", dir, "--",
				  "tests/fixtures/serserve");

	expect_nothing_explored(&r, "the first run ended in an error: every thread waits for "
				    "input from outside the program, p1.t1 in accept for 0.3 s; "
				    "give a server its clients with --driver");
	h_result_free(&r);
	h_remove_tree(dir);
}

Test(errors, time_ends_a_run_that_would_not_end)
{
	char *dir = h_temp_dir();
	struct h_result r;

	/* --timeout longer than the harness waits: only --time can end it */
	r = H_RUN(h_cctrace(), "test", "--time", "1s", "--timeout", "1h", "--out", dir, "--",
		  "tests/fixtures/serserve");
	expect_nothing_explored(&r, "--time ran out before any run ended");
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "test", "--time", "1s", "--timeout", "1h", "--jobs", "2", "--json",
		  "--out", dir, "--clean", "--", "tests/fixtures/serserve");
	expect_nothing_explored(&r, "--time ran out before any run ended");
	cr_expect(strstr(r.out, "\"runs\":0,") && strstr(r.out, "\"out_of_time\":true"), "%s",
		  r.out);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A test whose runs all end at --max-steps has tested nothing: exit 3
 * and say why, not "0 bugs" and exit 0. */
Test(errors, a_test_whose_runs_never_end_is_an_error_not_0_bugs)
{
	char *dir = h_temp_dir();
	struct h_result r = H_RUN(h_cctrace(), "test", "-q", "--runs", "3", "--max-steps", "300",
				  "-o", dir, "--", "tests/fixtures/busy");

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "cctrace test: error: no run reached the program's end") &&
		      strstr(r.err, "0 completed, 3 infeasible") &&
		      strstr(r.err, "--max-steps, 300 scheduling points"),
		  "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A program that every run ends the same way before its end (killed by
 * SIGPIPE: its stdout, cctrace's, is a pipe nobody reads any more, as
 * under `| head -1`) is an error that says why, in the last run's words;
 * it read "each was ended at --max-steps", which none was. */
Test(errors, runs_that_all_die_of_a_closed_pipe_say_so)
{
	char *dir = h_temp_dir();
	struct h_proc c =
	    h_spawn((const char *const[]){h_cctrace(), "test", "-q", "--runs", "3", "-o", dir, "--",
					  "tests/fixtures/serprint", NULL},
		    false, true, true);
	struct h_result r;

	close(c.out); /* as `| head` does once it has its lines */
	c.out = -1;
	r = h_collect(&c, 60);
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "no run reached the program's end") &&
		      strstr(r.err, "the program was killed by PIPE") &&
		      !strstr(r.err, "--max-steps"),
		  "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* {job} in the program's arguments is the first job's number in the
 * profiling runs too: a server given "-p 1131{job}" was profiled on a
 * port nobody talked to, and its race was never a point. */
Test(errors, job_in_the_arguments_is_replaced_in_the_profile_too)
{
	char *dir = h_temp_dir(), *runs = h_fmt("%s/runs-{job}.txt", dir);
	char *one = h_fmt("%s/runs-1.txt", dir), *text;
	struct h_result r = H_RUN(h_cctrace(), "test", "-q", "--runs", "2", "-o",
				  h_fmt("%s/out", dir), "--", "tests/fixtures/countruns", runs);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(access(runs, F_OK) != 0, "a run wrote to the file named with {job} itself");
	text = h_read_file(one, NULL);
	cr_assert_not_null(text, "no run wrote %s", one);
	cr_expect_gt(h_count_lines(text, ""), 2, "the profile's runs did not write there:\n%s",
		     text);
	h_free(text);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* Ctrl-C ends a search with its summary and the reason, exit 130: it used
 * to end after the last progress line, and said nothing with -q; and the
 * run it cut short was counted as "1 errors". */
Test(errors, an_interrupted_test_says_so_with_its_summary)
{
	char *dir = h_temp_dir();
	struct h_proc p =
	    h_spawn((const char *const[]){h_cctrace(), "test", "--time", "60s", "-o", dir, "--",
					  "tests/fixtures/sercontrol", NULL},
		    false, true, true);
	struct h_result r;
	char line[512] = "";

	/* the search proper runs once the profile has said what it found */
	while (strncmp(line, "cctrace test: profiling:", 24) != 0)
		cr_assert(h_read_line(p.err, line, sizeof(line), 30000), "the profile never ended");
	cr_assert(kill(p.pid, SIGINT) == 0);
	r = h_collect(&p, 30);
	cr_expect_eq(r.code, 130, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, " runs, ") &&
		      strstr(r.err, "cctrace test: error: interrupted by INT"),
		  "%s", r.err);
	/* the run the signal cut short is no error of the program's */
	cr_expect(!strstr(r.err, " errors"), "the cut run was counted:\n%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A bad --points is refused before anything runs (it printed the error
 * and went on with 100 runs). */
Test(errors, a_bad_points_mode_is_refused)
{
	char *dir = h_temp_dir();
	struct h_result r = H_RUN(h_cctrace(), "test", "--points", "bogus", "-o", dir, "--",
				  "tests/fixtures/sercontrol");

	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "bad --points 'bogus'") && !strstr(r.err, " runs, "), "%s", r.err);
	h_result_free(&r);
	/* --time 0s is refused as --runs 0 is (it meant no limit: 100 runs) */
	r = H_RUN(h_cctrace(), "test", "--time", "0s", "-o", dir, "--",
		  "tests/fixtures/sercontrol");
	cr_expect_eq(r.code, 3, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "bad --time '0s'") && !strstr(r.err, " runs, "), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* The progress line's estimate of the schedules is a whole number below
 * a million ("~531.906" read as thousands), a magnitude above: serpiexit's
 * five random runs estimate 35.2. */
Test(errors, the_schedule_estimate_is_a_whole_number)
{
	char *dir = h_temp_dir();
	struct h_result r = H_RUN(h_cctrace(), "test", "--strategy", "random", "--runs", "5", "-o",
				  dir, "--", "tests/fixtures/serpiexit");
	const char *at = strstr(r.err, " schedules in all");
	const char *tilde = at ? at : r.err;

	while (tilde > r.err && *tilde != '~')
		tilde--;
	cr_assert(at && *tilde == '~', "no estimate:\n%s", r.err);
	cr_expect(!memchr(tilde, '.', (size_t)(at - tilde)) ||
		      memchr(tilde, 'e', (size_t)(at - tilde)),
		  "%.*s", (int)(at - tilde), tilde);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* An event's field read where no event has happened is an error, not a
 * silent 0 (the assert failed "with no values shown"). */
Test(errors, an_event_field_before_any_event_is_an_error)
{
	const char *sched = h_temp_sched("arg1.sched", "assert arg1 == 1\n");
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "run", sched, "--", BANK, NULL}, QUICK_S);

	cr_expect_eq(r.code, 3, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "arg1.sched:1:8: 'arg1' is a field of the event at hand: outside a "
				"predicate, of the event that ended the last wait or run, and none "
				"has yet"),
		  "%s", r.err);
	h_result_free(&r);
}
