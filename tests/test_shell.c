/*
 * System tests of `cctrace shell`, the interactive stepping shell.
 *
 * Most tests drive the shell through a pipe: a script goes to its stdin
 * (one command per line; no prompt, no colour), stdout and stderr are
 * collected until it exits, and the assertions read the `threads` table,
 * the one-line status the shell prints after a statement moved threads, and
 * the trace lines.  `echo` lines mark places in the output.  Saved sessions
 * are replayed with `cctrace run` and must produce the same events (and for
 * the lost update, the bug).
 *
 * Two tests drive it in a real terminal with tmux, on a private server
 * socket (-L) that teardown kills: the prompt, Tab completion of commands
 * and functions, history, and Ctrl-C during a wait.  They poll
 * capture-pane until what they expect is on the screen, with a deadline.
 *
 * The binary under test is $CCTRACE or ./cctrace; tests run from the repo
 * root and need `make samples fixtures`.  Nothing synchronises by sleeping:
 * pipes are read with poll() and every loop has a deadline.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAFETY_MS   20000 /* any single command; reaching it fails the test */
#define BANK	    "samples/bank/bank"
#define WORKEREXITS "tests/fixtures/workerexits"
#define CXX	    "tests/fixtures/sercxx"
#define SHELLFIX    "tests/fixtures/shellfix"
#define TTYREAD	    "tests/fixtures/ttyread"

static char tmux_socket[64]; /* "" when no tmux server was started */
static int tmux_sessions;    /* started by this process, for socket names */

/* What the helpers allocate belongs to the test and is freed by teardown,
 * which also runs when an assertion fails half way (a free() after the
 * assertion would never run, and the leak checker would report it). */
static void **owned;
static size_t nowned;

static void *own(void *p)
{
	void **grown;

	cr_assert(p, "out of memory");
	grown = realloc(owned, sizeof(*grown) * (nowned + 1));
	cr_assert(grown, "out of memory");
	owned = grown;
	owned[nowned++] = p;
	return p;
}

/* Free p now (loops that poll would otherwise pile up their copies). */
static void release(void *p)
{
	size_t i;

	for (i = 0; i < nowned; i++)
		if (owned[i] == p) {
			owned[i] = owned[--nowned];
			break;
		}
	free(p);
}

static void free_owned(void)
{
	while (nowned > 0)
		free(owned[--nowned]);
	free(owned);
	owned = NULL;
}

static void teardown(void)
{
	char cmd[128];

	free_owned();
	if (!tmux_socket[0])
		return;
	snprintf(cmd, sizeof(cmd), "tmux -L %s kill-server 2>/dev/null", tmux_socket);
	if (system(cmd) < 0)
		perror("tmux kill-server");
	tmux_socket[0] = 0;
}

TestSuite(shell, .fini = teardown, .timeout = 60);

/* ------------------------------------------------------------ helpers */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *cctrace(void)
{
	const char *p = getenv("CCTRACE");

	return p && *p ? p : "./cctrace";
}

struct result {
	int code; /* exit code, 128 + signal, or -1 if killed at the deadline */
	char out[65536];
	char err[65536];
};

static void append(char *buf, size_t cap, size_t *len, const char *data, size_t n)
{
	if (*len + n >= cap)
		n = cap - 1 - *len;
	memcpy(buf + *len, data, n);
	*len += n;
	buf[*len] = 0;
}

static void child_exec(const char *const argv[], int in, int out, int err)
{
	sigset_t none;
	int sig;

	setpgid(0, 0);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	execvp(argv[0], (char *const *)argv);
	dprintf(2, "cannot exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Reads out and err until both close or the deadline; kills the group then. */
static bool drain(pid_t pid, int out, int err, struct result *r)
{
	int64_t deadline = now_ms() + SAFETY_MS;
	size_t olen = 0, elen = 0;
	int fds[2] = {out, err}, open_fds = 2;
	char buf[4096];

	while (open_fds > 0) {
		struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
		int64_t left = deadline - now_ms();
		int i;

		if (left <= 0) {
			kill(-pid, SIGKILL);
			return false;
		}
		if (poll(p, 2, (int)left) <= 0)
			continue;
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(fds[i], buf, sizeof(buf));
			if (n <= 0) {
				close(fds[i]);
				fds[i] = -1;
				open_fds--;
			} else if (i == 0) {
				append(r->out, sizeof(r->out), &olen, buf, (size_t)n);
			} else {
				append(r->err, sizeof(r->err), &elen, buf, (size_t)n);
			}
		}
	}
	return true;
}

/* Runs argv with input on stdin; collects stdout, stderr and the exit code. */
static struct result *run(const char *const argv[], const char *input)
{
	struct result *r = own(calloc(1, sizeof(*r)));
	int in[2], out[2], err[2], status = 0;
	pid_t pid;

	cr_assert(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 &&
		  pipe2(err, O_CLOEXEC) == 0);
	fflush(NULL);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		child_exec(argv, in[0], out[1], err[1]);
	setpgid(pid, pid);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	signal(SIGPIPE, SIG_IGN);
	if (input && write(in[1], input, strlen(input)) != (ssize_t)strlen(input))
		cr_log_warn("short write to the shell's stdin");
	close(in[1]);
	if (!drain(pid, out[0], err[0], r))
		r->code = -1;
	kill(-pid, SIGKILL); /* whatever is left of the group */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r->code != -1)
		r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return r;
}

/* cctrace shell [opts...] -- PROG, fed script. */
static struct result *shell(const char *prog, const char *opt, const char *script)
{
	if (opt)
		return run((const char *const[]){cctrace(), "shell", opt, "--", prog, NULL},
			   script);
	return run((const char *const[]){cctrace(), "shell", "--", prog, NULL}, script);
}

/* The text after the line "echo"ed as marker, up to the next marker. */
static char *section(const char *out, const char *marker)
{
	char key[128];
	const char *p, *end;

	snprintf(key, sizeof(key), "%s\n", marker);
	p = strstr(out, key);
	cr_assert(p, "marker '%s' not in the output:\n%s", marker, out);
	p += strlen(key);
	end = strstr(p, "\n--- ");
	return own(strndup(p, end ? (size_t)(end - p + 1) : strlen(p)));
}

/* The row of a `threads` table whose VAR column is var, or NULL. */
static char *thread_row(const char *table, const char *var)
{
	const char *line = table;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char name[32], v[32];

		if (sscanf(line, "%31s %31s", name, v) == 2 && strcmp(v, var) == 0)
			return own(strndup(line, len));
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* The source line of withdraw's opening in bank.c (its first event's line). */
static int withdraw_line(void)
{
	FILE *f = fopen("samples/bank/bank.c", "r");
	char buf[512];
	int n = 0;

	cr_assert(f, "samples/bank/bank.c: %s", strerror(errno));
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, "void withdraw(long amount)"))
			break;
	}
	fclose(f);
	return n + 1; /* the "{" line */
}

/* The scheduling events of a trace ("EVENT FUNC WHERE" per line, no thread
 * names or times), joined by newlines. */
static char *events(const char *trace)
{
	size_t cap = strlen(trace) + 1, len = 0;
	char *outp = own(calloc(1, cap));
	const char *line = trace;

	while (line && *line) {
		const char *nl = strchr(line, '\n'), *rest = strstr(line, " ms] ");
		char thread[32], ev[128], fn[128], where[128];

		if (line[0] == '[' && rest && (!nl || rest < nl) &&
		    sscanf(rest + 5, "%31s %127s %127s %127s", thread, ev, fn, where) == 4)
			len += (size_t)snprintf(outp + len, cap - len, "%s %s %s\n", ev, fn, where);
		line = nl ? nl + 1 : NULL;
	}
	return outp;
}

static void check_built(void)
{
	if (access(BANK, X_OK) != 0 || access(SHELLFIX, X_OK) != 0 || access(TTYREAD, X_OK) != 0)
		cr_assert_fail("build the targets first: make samples fixtures");
}

/* ------------------------------------------------------- pipe tests */

static const char bank_script[] = "thread A, B = wait 2 distinct enter(withdraw)\n"
				  "echo --- threads\n"
				  "threads\n"
				  "echo --- run\n"
				  "run A until read(balance)\n"
				  "echo --- step\n"
				  "step B 3\n"
				  "echo --- print\n"
				  "print balance\n"
				  "echo --- bt\n"
				  "bt A\n"
				  "echo --- save\n"
				  "save %s\n"
				  "quit\n";

Test(shell, bank_session_and_replay)
{
	static const char *const vars[] = {"A", "B"};
	char path[] = "/tmp/cctrace-shell-XXXXXX.sched", script[1024], *s, *row, at[32];
	struct result *r, *replay;
	char *ev_shell, *ev_replay;
	int line = withdraw_line();

	check_built();
	close(mkstemps(path, 6));
	snprintf(script, sizeof(script), bank_script, path);
	r = shell(BANK, NULL, script);
	cr_assert_eq(r->code, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", r->code, r->out, r->err);
	cr_assert(!strstr(r->err, "error"), "stderr:\n%s", r->err);

	s = section(r->out, "--- threads");
	snprintf(at, sizeof(at), " bank.c:%d ", line);
	for (size_t i = 0; i < 2; i++) {
		row = thread_row(s, vars[i]);
		cr_assert(row, "no row for %s in the table:\n%s", vars[i], s);
		cr_assert(strstr(row, " held ") && strstr(row, " withdraw ") && strstr(row, at),
			  "%s is not held in withdraw at bank.c:%d: %s", vars[i], line, row);
	}
	cr_assert(strstr(s, "NAME") && strstr(s, "STATE") && strstr(s, "LAST EVENT"), "%s", s);

	s = section(r->out, "--- run");
	cr_assert(strstr(s, "read(balance)") && strstr(s, "A (p1.t") &&
		      strstr(s, "held in withdraw"),
		  "%s", s);
	s = section(r->out, "--- step");
	cr_assert(strstr(s, "step 3") && strstr(s, "B (p1.t") && strstr(s, "held in withdraw"),
		  "%s", s);
	s = section(r->out, "--- print");
	cr_assert(strstr(s, "balance = 100"), "%s", s);
	s = section(r->out, "--- bt");
	cr_assert(strstr(s, "withdraw") && strstr(s, "customer"), "%s", s);
	s = section(r->out, "--- save");
	cr_assert(strstr(s, "saved"), "%s", s);

	replay = run((const char *const[]){cctrace(), "run", path, "--", BANK, NULL}, NULL);
	cr_assert(replay->code == 0 || replay->code == 1, "replay exit %d:\n%s", replay->code,
		  replay->err);
	ev_shell = events(r->out);
	ev_replay = events(replay->err);
	cr_assert(strncmp(ev_replay, ev_shell, strlen(ev_shell)) == 0,
		  "replay events differ\nshell:\n%s\nreplay:\n%s", ev_shell, ev_replay);
	unlink(path);
}

Test(shell, lost_update_round_trip)
{
	char path[] = "/tmp/cctrace-shell-XXXXXX.sched", script[1024], *text, *ev_shell, *ev_replay;
	struct result *r, *replay;

	check_built();
	close(mkstemps(path, 6));
	snprintf(script, sizeof(script),
		 "thread A, B = wait 2 distinct enter(withdraw)\n"
		 "run A until read(balance)\n"
		 "run B until return(withdraw)\n"
		 "run A until return(withdraw)\n"
		 "print balance\n"
		 "save %s\n",
		 path);
	r = shell(BANK, "--exit-on-error", script);
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	/* 80 or 90, depending on which customer came first and is A */
	cr_assert(strstr(r->out, "balance = ") && !strstr(r->out, "balance = 70"),
		  "the update was not lost:\n%s", r->out);
	text = own(calloc(1, 65536));
	{
		FILE *f = fopen(path, "r");

		cr_assert(f);
		cr_assert(fread(text, 1, 65535, f) > 0);
		fclose(f);
	}
	cr_assert(strncmp(text, "# run: cctrace run ", 19) == 0, "%s", text);
	cr_assert(strstr(text, "run B until return(withdraw)"), "%s", text);

	replay =
	    run((const char *const[]){cctrace(), "run", "--expect", "bug", path, "--", BANK, NULL},
		NULL);
	cr_assert_eq(replay->code, 0, "replay did not end as a bug (exit %d):\n%s", replay->code,
		     replay->err);
	cr_assert(strstr(replay->out, "BUG: lost update"), "%s", replay->out);
	ev_shell = events(r->out);
	ev_replay = events(replay->err);
	cr_assert_str_eq(ev_replay, ev_shell, "replay events differ");
	unlink(path);
}

Test(shell, errors_carry_on)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL,
		  "bogus\n"
		  "print no_such_variable\n"
		  "bt\n"
		  "rn A until exit\n"
		  "print balance\n"
		  "break withdarw\n"
		  "watch balance +\n"
		  "watch balance == 1\n"
		  "print &balanse.x\n"
		  "echo --- still here\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	/* ...and break and watch, not the wait they are checked as; an
	 * aggregate's form, &(X), neither */
	cr_expect(strstr(r->err, "shell:1:7: error: no function 'withdarw'; did you mean "
				 "'withdraw'?\n    break withdarw\n          ^\n"),
		  "%s", r->err);
	cr_expect(strstr(r->err, "shell:1:16: error: expected an expression, found ')'\n"
				 "    watch balance +\n                   ^\n"),
		  "%s", r->err);
	cr_expect(strstr(r->err, "shell:1:8: error: no variable 'balanse'"), "%s", r->err);
	/* ...in the words of the command typed, not write(...)'s */
	cr_expect(strstr(r->err, "shell:1:7: error: watch needs a variable"), "%s", r->err);
	cr_assert(strstr(r->err, "error: unknown command 'bogus'"), "%s", r->err);
	cr_assert(strstr(r->err, "no_such_variable"), "%s", r->err);
	/* said of what was typed: print, not the assert it is checked as */
	cr_expect(strstr(r->err, "shell:1:7: error: no variable") &&
		      strstr(r->err, "\n    print no_such_variable\n          ^"),
		  "%s", r->err);
	cr_assert(strstr(r->err, "usage: bt [THREAD]"), "%s", r->err);
	cr_assert(strstr(r->err, "did you mean 'run'"), "%s", r->err);
	cr_assert(strstr(r->out, "balance = 100"), "%s", r->out);
	cr_assert(strstr(r->out, "--- still here"), "%s", r->out);
}

/* bt shows a stack 100 deep whole (it stopped at frame #63 with no word
 * of more), each frame's offset that of the address it shows (an outer
 * frame's was its call's, one less). */
Test(shell, bt_shows_a_deep_stack_whole)
{
	struct result *r;
	const char *main_frame;

	check_built();
	r = shell("tests/fixtures/deep", NULL,
		  "thread A = wait any enter(rec) && n == 99\nbt A\nfinish A\nbt A\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	main_frame = strstr(r->out, "    #100 ");
	cr_expect(main_frame && strncmp(strstr(main_frame, " main+"), " main+", 6) == 0 &&
		      strstr(r->out, "    #101 "),
		  "%s", r->out);
	/* rec's return address shown as frame #1, then as frame #0 after
	 * finish: one offset */
	{
		const char *one = strstr(r->out, "    #1  ");
		char where[96] = "";

		cr_assert(one, "%s", r->out);
		snprintf(where, sizeof(where), "    #0  %.*s", (int)strcspn(one + 8, "("), one + 8);
		cr_expect(strstr(r->out, where), "frame #1 as '%s', not so as #0 after finish:\n%s",
			  one + 8, r->out);
	}
}

/* The shell on tests/fixtures/NAME, its thread A bound by `wait any
 * FIRST`, then cmds; the session must end well. */
static struct result *shell_ok(const char *name, const char *first, const char *cmds)
{
	struct result *r = shell(h_fmt("tests/fixtures/%s", name), NULL,
				 h_fmt("thread A = wait any %s\n%s", first, cmds));

	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	return r;
}

/* "at(SRC:N)" for the line of src's marker (tests/fixtures/SRC). */
static const char *at_marker(const char *src, const char *marker)
{
	return h_fmt("at(%s:%d)", src, h_marker_line(h_fmt("tests/fixtures/%s", src), marker));
}

/* "held in FUNC at SRC:N", N the line of src's marker. */
static const char *held_at_marker(const char *func, const char *src, const char *marker)
{
	return h_fmt("held in %s at %s:%d", func, src,
		     h_marker_line(h_fmt("tests/fixtures/%s", src), marker));
}

/* `next` runs over a signal handler that a step entered (sigstep's
 * syscall instruction sends the signal to its own thread): it stopped in
 * the handler, where gdb goes on to the line after. */
Test(shell, next_runs_over_a_signal_handler)
{
	const char *want = held_at_marker("poke", "sigstep.c", "after");
	struct result *r;

	check_built();
	r = shell("tests/fixtures/sigstep", NULL,
		  "thread A = wait any enter(poke)\nnext A\nnext A\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->out, want) && !strstr(r->out, "on_usr1"), "no '%s':\n%s", want, r->out);
	/* in the handler, the frame the kernel made returns to __restore_rt's
	 * first byte: named so, not as "??+1" (the byte before it) */
	r = shell("tests/fixtures/sigstep", NULL, "thread A = wait any enter(on_usr1)\nbt A\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->out, "    #1  ") &&
		      strstr(strstr(r->out, "    #1  "), " __restore_rt+0 "),
		  "%s", r->out);
}

/* A frame left by longjmp: finish and next hold the thread where the jump
 * lands, above the frame (they lost it, and it ran to the program's end);
 * a jump that lands below the frame waited on does not stop them. */
Test(shell, next_and_finish_follow_a_longjmp)
{
	const char *want = held_at_marker("run_once", "jumps.c", "setjmp");
	struct result *r;

	check_built();
	r = shell_ok("jumps", "enter(middle)", "finish A\n");
	cr_expect(strstr(r->out, "longjmp out of middle") && strstr(r->out, want), "no '%s':\n%s",
		  want, r->out);
	r = shell_ok("jumps", at_marker("jumps.c", "call"), "next A\n");
	cr_expect(strstr(r->out, want) && strstr(r->out, "next (longjmp)"), "no '%s':\n%s", want,
		  r->out);
	/* deep_jump lands in inner_jump, below main's frame */
	r = shell_ok("jumps", at_marker("jumps.c", "inner"), "finish A\n");
	cr_expect(strstr(r->out, "return(inner_jump)") &&
		      strstr(r->out, "held in main at jumps.c:"),
		  "%s", r->out);
}

/* A frame left by a C++ exception: next and finish hold the thread in the
 * catch block above it; a throw caught below does not stop them. */
Test(shell, next_and_finish_follow_a_throw)
{
	const char *want = held_at_marker("attempt", "throws.cpp", "catch");
	struct result *r;

	check_built();
	r = shell_ok("throws", at_marker("throws.cpp", "call"), "next A\n");
	cr_expect(strstr(r->out, want) && strstr(r->out, "next (throw)"), "no '%s':\n%s", want,
		  r->out);
	want = held_at_marker("handled_inside", "throws.cpp", "inside");
	r = shell_ok("throws", "enter(fail)", "finish A\n");
	cr_expect(strstr(r->out, "throw out of fail") && strstr(r->out, want), "no '%s':\n%s", want,
		  r->out);
	/* handled_inside catches its own throw: its finish is a return */
	r = shell_ok("throws", "enter(handled_inside)", "finish A\n");
	cr_expect(strstr(r->out, "return(handled_inside)") && strstr(r->out, "held in main"), "%s",
		  r->out);
}

/* A thread named twice shows both names: the VAR column has "A,B" (it
 * showed the last alone), and each statement's line the name it used. */
Test(shell, a_thread_named_twice_shows_both_names)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "thread A = p1.t1\nthread B = p1.t1\nthreads\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->out, "A (p1.t1) held") && strstr(r->out, "B (p1.t1) held"), "%s",
		  r->out);
	cr_expect(strstr(r->out, "\np1.t1  A,B  "), "%s", r->out);
}

/* A false `assert` is a failed command, not the end of the session: it
 * said "the program is gone" (it was not), and every later command
 * failed. */
Test(shell, a_false_assert_fails_the_command_and_the_session_goes_on)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "assert balance < 0\nprint balance\nthread A = p1.t1\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->err, "the assertion is false: balance < 0") &&
		      strstr(r->err, "balance = 100"),
		  "%s", r->err);
	cr_expect(!strstr(r->err, "gone") && !strstr(r->out, "gone"), "%s%s", r->out, r->err);
	cr_expect(strstr(r->out, "balance = 100 (0x64)") && strstr(r->out, "A (p1.t1) held"), "%s",
		  r->out);
}

Test(shell, exit_on_error)
{
	struct result *r;

	check_built();
	r = shell(BANK, "--exit-on-error", "threads\nbogus\necho --- after\n");
	cr_assert_eq(r->code, 3, "exit %d\n%s", r->code, r->err);
	cr_assert(strstr(r->out, "NAME"), "%s", r->out);
	cr_assert(!strstr(r->out, "--- after"), "went on after the error:\n%s", r->out);
	cr_assert(strstr(r->err, "error:"), "%s", r->err);
}

Test(shell, comments_blank_lines_and_help)
{
	struct result *r;

	check_built();
	r = shell(BANK, "--exit-on-error",
		  "# a comment\n"
		  "\n"
		  "   \n"
		  "echo --- hi   # trailing comment\n"
		  "help\n"
		  "help run\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_assert(strstr(r->out, "--- hi\n"), "%s", r->out);
	cr_assert(strstr(r->out, "threads") && strstr(r->out, "Moving"), "%s", r->out);
	cr_assert(strstr(r->out, "run A until read(balance)"), "%s", r->out);
	cr_assert(!strstr(r->out, "\033["), "colour on a pipe");
	cr_assert(!strstr(r->out, "(cctrace)"), "a prompt on a pipe");
}

Test(shell, next_and_finish)
{
	struct result *r;
	char *s, *a, *b, at[32];
	int line = withdraw_line();

	check_built();
	r = shell(BANK, "--exit-on-error",
		  "thread A, B = wait 2 distinct enter(withdraw)\n"
		  "next A\n"
		  "finish B\n"
		  "echo --- threads\n"
		  "threads\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	s = section(r->out, "--- threads");
	a = thread_row(s, "A");
	b = thread_row(s, "B");
	cr_assert(a && b, "%s", s);
	snprintf(at, sizeof(at), " bank.c:%d ", line);
	cr_assert(strstr(a, " held ") && strstr(a, " withdraw ") && strstr(a, " bank.c:") &&
		      !strstr(a, at),
		  "next did not move A to another line of withdraw: %s", a);
	cr_assert(strstr(b, " held ") && strstr(b, " customer ") && strstr(b, " bank.c:"),
		  "finish did not bring B back to customer: %s", b);
}

Test(shell, list_source)
{
	struct result *r;

	check_built();
	r = shell(BANK, "--exit-on-error",
		  "thread A, B = wait 2 distinct enter(withdraw)\n"
		  "run A until read(balance)\n"
		  "list A\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_assert(strstr(r->out, "bank.c:"), "%s", r->out);
	cr_assert(strstr(r->out, "=> ") && strstr(r->out, "long b = balance"), "%s", r->out);
}

/* A C++ method is broken on and listed by its shown name. */
Test(shell, a_cxx_method_by_its_shown_name)
{
	struct result *r;

	check_built();
	r = shell(CXX, "--exit-on-error", "break bank::Account::balance\ncontinue\nthreads\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_assert(strstr(r->out, "breakpoint 1 at bank::Account::balance"), "%s", r->out);
	cr_assert(strstr(r->out, "held   bank::Account::balance  sercxx.cpp:"), "%s", r->out);
}

/* A library's static function of the same name (libc's debug symbols
 * have an `insert` and an `init`) does not take a C++ function's shown
 * name: it did, and the breakpoint never fired. */
Test(shell, a_cxx_function_wins_over_a_library_static_of_its_name)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/cxxstatic", "--exit-on-error",
		  "break insert\ncontinue\nthreads\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_assert(strstr(r->out, "held   insert    cxxstatic.cpp:"), "%s", r->out);
}

/* Moving commands take a stable thread name, as docs/shell.md says every
 * T may be (step p1.t2 was a parse error): its variable, or one bound to
 * it then, which is what `save` writes. */
Test(shell, moving_commands_take_stable_thread_names)
{
	char saved[] = "/tmp/cctrace-moves-XXXXXX.sched", *text;
	struct result *r;

	check_built();
	close(mkstemps(saved, 6));
	r = shell(SHELLFIX, "--exit-on-error",
		  h_fmt("thread A = wait any enter(tick)\nhold p1.t1\nhold p1.t2\nstep p1.t1\n"
			"step p1.t2 2\nsave %s\n",
			saved));
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	text = h_read_file(saved, NULL);
	cr_assert(text);
	cr_expect_eq(h_count_lines(text, "thread p1_t"), 1, "%s", text);
	cr_expect(strstr(text, "\nhold A\n") && h_count_lines(text, "step ") == 2 &&
		      !strstr(text, "failed"),
		  "%s", text);
	free(text);
	unlink(saved);
}

/* A thread that a second continue held again where it ran to has its
 * function and line in `threads`: one held in a breakpoint's slot (the
 * instruction run out of line) showed "-" for both, and list had no line. */
Test(shell, a_thread_held_in_a_slot_is_where_its_instruction_lives)
{
	struct result *r;
	const char *line;

	check_built();
	r = shell(BANK, "--exit-on-error", "break withdraw\ncontinue\ncontinue\nthreads\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	for (line = r->out; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *held = strstr(line, " held ");

		if (strncmp(line, "p1.", 3) != 0 || !held || held > strchr(line, '\n'))
			continue;
		cr_expect(held[strspn(held, " held")] != '-', "no function in:\n%s", r->out);
	}
}

/* print shows a struct, a class with its bases, and an enum's name, as
 * gdb does ("'bits' is a struct bits, not an integer" before). */
Test(shell, print_shows_aggregates_whole)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/ctypes", "--exit-on-error",
		  "thread A = wait any enter(writer)\nprint bits\nprint tint\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(strstr(r->out, "bits = {a = 5, b = -7, c = 1, d = -1000, wide = 78187493547, "
				 "tail = 77}\n"),
		  "%s", r->out);
	cr_expect(strstr(r->out, "tint = COOL\n"), "%s", r->out);
	/* '&' gives a typed pointer, which '*' and '->' follow ("'*' needs a
	 * typed pointer" before) */
	r = shell("tests/fixtures/ctypes", "--exit-on-error",
		  "thread A = wait any enter(writer)\nprint &bits\nprint *&bits\nprint (&bits)->b\n"
		  "print writer\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	/* a function's name is said to be one, not an integer */
	cr_expect(strstr(r->out, "writer = {function} 0x") &&
		      strstr(r->out, " <writer> in ctypes\n"),
		  "%s", r->out);
	cr_expect(strstr(r->out, "&bits = (struct bits *) 0x"), "%s", r->out);
	cr_expect(strstr(r->out, "*&bits = {a = 5, b = -7,"), "%s", r->out);
	cr_expect(strstr(r->out, "(&bits)->b = -7"), "%s", r->out);
	r = shell("tests/fixtures/localtypes", "--exit-on-error",
		  "thread A = wait any enter(main)\nprint &slot\nprint (*&slot)[2]\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(strstr(r->out, "&slot = (int (*)[4]) 0x"), "%s", r->out);
	cr_expect(strstr(r->out, "(*&slot)[2] = 3\n"), "%s", r->out);
	r = shell("tests/fixtures/cxxtypes", "--exit-on-error",
		  "thread A = wait any enter(adjust)\nprint derived\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(strstr(r->out, "derived = {<Mid> = {<Base> = {_vptr.Base = 0x") &&
		      strstr(r->out, ", b1 = 3, b2 = 4}, m = 5}, <Other> = {o = 8}, d = 6}\n"),
		  "%s", r->out);
}

/* quit and detach say what became of the program, as attach does (they
 * said nothing); a session that cannot start says so as an error of
 * cctrace shell's (the bare message before). */
Test(shell, quit_and_detach_say_what_became_of_the_program)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "quit\n");
	cr_expect_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->err, "cctrace shell: the program was killed\n"), "%s", r->err);
	r = shell(BANK, NULL, "detach\n");
	cr_expect_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->err, "cctrace shell: detached, and the process keeps running\n"), "%s",
		  r->err);
	r = shell(BANK, NULL, "continue\nquit\n");
	cr_expect(!strstr(r->err, "killed") && !strstr(r->err, "detached"), "%s", r->err);
	r = run((const char *const[]){cctrace(), "shell", "999999", NULL}, "");
	cr_expect_eq(r->code, 3, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->err, "cctrace shell: error: cannot attach to pid 999999: "), "%s",
		  r->err);
}

/* bt, list, step, next and finish without a thread take the current one,
 * the thread the last event stopped, as gdb does; before an event there is
 * none, and the usage says so; run without a thread is a usage error (a
 * parser's "thread list expects a name" before). */
Test(shell, a_missing_thread_is_the_current_one)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "bt\nrun\nbreak withdraw\ncontinue\nbt\nnext\nlist\nfinish\n");
	cr_expect(strstr(r->err, "usage: bt [THREAD] (no thread has stopped at an event yet"), "%s",
		  r->err);
	cr_expect(strstr(r->err, "usage: run THREAD... until EVENT"), "%s", r->err);
	cr_expect(strstr(r->out, "    #0  ") && strstr(r->out, " withdraw+0 (bank.c:"), "%s",
		  r->out);
	cr_expect(strstr(r->out, "held in withdraw at bank.c:31\n"), "%s", r->out);
	cr_expect(strstr(r->out, "=>   31  "), "%s", r->out);
	cr_expect(strstr(r->out, "return(withdraw)") && strstr(r->out, " held in customer "), "%s",
		  r->out);
}

/* Once the current thread has exited, a command without a thread says
 * so, and names it (it said no thread had stopped at an event yet). */
Test(shell, the_current_thread_that_exited_is_named)
{
	struct result *r;

	check_built();
	r = shell(WORKEREXITS, NULL, "break job\ncontinue\nstep p1.t2 100000\nbt\n");
	cr_expect(strstr(r->err, "usage: bt [THREAD] (the current thread, p1.t2, has exited: name "
				 "another)"),
		  "%s", r->err);
}

/* save writes a schedule, never over the program or a directory (`save
 * prog` replaced the program with the schedule). */
Test(shell, save_refuses_an_executable)
{
	char *dir = own(strdup("/tmp/cctrace-save-XXXXXX")), *prog;
	struct result *r;
	struct stat st;

	check_built();
	cr_assert(mkdtemp(dir));
	prog = own(strdup(h_fmt("%s/bank", dir)));
	cr_assert_eq(system(h_fmt("cp %s %s", BANK, prog)), 0);
	r = shell(prog, NULL, h_fmt("save %s\nsave %s\nsave %s/s.sched\n", prog, dir, dir));
	cr_expect(strstr(r->err, "is an executable file or a device, not a schedule"), "%s",
		  r->err);
	cr_expect(strstr(r->err, "is a directory, not a schedule"), "%s", r->err);
	cr_expect(strstr(r->out, h_fmt("saved %s/s.sched", dir)), "%s", r->out);
	cr_expect(stat(prog, &st) == 0 && st.st_size > 1000, "the program was written over");
	h_remove_tree(dir);
}

/* '&' of a pointer and of a function pointer is typed as C spells it
 * ("struct account * *" and "int (*)(int) *" before). */
Test(shell, address_types_are_spelt_as_in_c)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/symfix", "--exit-on-error",
		  "thread A = wait any enter(worker)\nprint &bank_ptr\nprint &fnptr\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(strstr(r->out, "&bank_ptr = (struct account **) 0x"), "%s", r->out);
	cr_expect(strstr(r->out, "&fnptr = (int (**)(int)) 0x"), "%s", r->out);
	/* a char pointer with the string it points to, as gdb shows it */
	r = shell("tests/fixtures/symfix", "--exit-on-error",
		  "thread A = wait any enter(main)\nnext A\nprint A.argv[0]\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(strstr(r->out, "A.argv[0] = (char *) 0x") &&
		      strstr(r->out, " \"tests/fixtures/symfix\"\n"),
		  "%s", r->out);
}

/* In a stripped program a thread is said to be where at() would name it,
 * MODULE+0xOFF ("held in ? at -" before). */
Test(shell, a_stripped_program_s_threads_are_named_by_module)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/sercounter-stripped", NULL,
		  "thread A = wait any start\nthreads\n");
	cr_expect(strstr(r->out, "A (p1.t1) held in sercounter-stripped+0x"), "%s", r->out);
	cr_expect(strstr(r->out, "  held   ") && strstr(r->out, " sercounter-stripped+0x"), "%s",
		  r->out);
}

/* print takes a thread by its stable name, p1.t3.amount, as the moving
 * commands do ("no variable 'p1'" before); errors keep what was typed. */
Test(shell, print_takes_a_stable_thread_name)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "print p1.t1.balance\nprint p1.t1.balanse\n");
	cr_expect(strstr(r->out, "p1.t1.balance = 100 (0x64)\n"), "%s\n%s", r->out, r->err);
	cr_expect(strstr(r->err, "shell:1:7: error: no variable 'balanse'") &&
		      strstr(r->err, "    print p1.t1.balanse\n"),
		  "%s", r->err);
}

/* break on a function an -O2 build inlined everywhere stops at its copy,
 * as gdb's does (before: "no function 'bump'"). */
Test(shell, break_on_an_inlined_function_stops_at_its_copy)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/optinline", "--exit-on-error", "break bump\ncontinue\nbt\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(strstr(r->out, "breakpoint 1 at bump"), "%s", r->out);
	cr_expect(strstr(r->out, "enter(bump)") && strstr(r->out, "worker"), "%s\n%s", r->out,
		  r->err);
	/* the stack shows the inlined call as a frame of its own, as gdb
	 * does, and worker at the line of the call */
	cr_expect(strstr(r->out, "    #0  ") && strstr(r->out, " bump (inlined) (optinline.c:") &&
		      strstr(r->out, "    #1  ") && strstr(r->out, " worker+0 (optinline.c:"),
		  "%s", r->out);
}

/* next on a line that never ends (a loop on one line, over a call of a
 * sleep or on itself) ends at the statement's timeout: it hung for ever
 * over the sleep, and after a million steps of the loop said it had
 * arrived on the same line. */
Test(shell, next_on_a_line_that_never_ends_times_out)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/oneline", "--timeout=1s",
		  "thread A = wait any enter(spin)\nnext A\nnext A\n");
	cr_expect(strstr(r->err, "no thread reached 'the end of this statement' within 1000 ms"),
		  "%s", r->err);
	cr_expect_eq(h_count_lines(r->out, "  next  "), 1, "%s", r->out);
	r = shell("tests/fixtures/oneline", "--timeout=1s",
		  "thread B = wait any return(nap)\nnext B\n");
	cr_expect(strstr(r->err, "no thread reached 'the end of this statement' within 1000 ms"),
		  "%s", r->err);
}

/* A struct wider than a debug register is watched by the stepper: a
 * continue from its first store stops at the next one, a few
 * instructions on (continue let the held thread go with a plain resume
 * first, and the store slipped by before the stepper took it). */
Test(shell, continue_from_a_watched_store_sees_the_next)
{
	char want[64];
	struct result *r;

	check_built();
	snprintf(want, sizeof(want), "twostores.c:%d",
		 h_marker_line("tests/fixtures/twostores.c", "second"));
	r = shell("tests/fixtures/twostores", "--exit-on-error",
		  "watch tally\ncontinue\ncontinue\ncontinue\ncontinue\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s\n%s", r->code, r->out, r->err);
	cr_expect(h_count_lines(r->out, want) >= 1, "no stop at %s:\n%s", want, r->out);
}

/* Help says what the commands do (assert "is a bug", info without its
 * threads), a misspelt help topic gets a did-you-mean as a misspelt
 * command does, and threads refuses an argument it would ignore. */
Test(shell, help_matches_the_commands)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "help brek\nthreads extra\nhelp info\nhelp assert\n");
	cr_expect(strstr(r->err, "no command 'brek'; did you mean 'break'?"), "%s", r->err);
	cr_expect(strstr(r->err, "threads takes no argument"), "%s", r->err);
	cr_expect(strstr(r->out, "  info threads\n"), "%s", r->out);
	cr_expect(strstr(r->out, "A false assertion fails the command (the session goes on)") &&
		      !strstr(r->out, "A false assertion is a bug"),
		  "%s", r->out);
}

/* A thread that exits while finish moves it is let go: it stayed held at
 * its exit, and main, joining it, waited for ever. */
Test(shell, a_thread_that_exits_while_moved_is_let_go)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "thread A = wait any enter(customer)\nfinish A\nfinish A\nthreads\n");
	cr_expect(strstr(r->err, "exited while being moved"), "%s", r->err);
	cr_expect(strstr(r->out, "ok: balance = 70"), "the program did not end:\n%s", r->out);
}

/* A deadlock leaves the program alive, held where it stuck: its threads
 * can still be looked at (every command said "the program is gone"), and
 * a command that moves them is refused as such. */
Test(shell, a_deadlocked_program_can_still_be_looked_at)
{
	struct result *r;

	check_built();
	r = shell("tests/fixtures/abba", NULL,
		  "thread A, B = wait 2 distinct enter(take_second)\nfinish A\nfinish B\n"
		  "threads\nbt A\nstep A\n");
	cr_expect(strstr(r->out, "bug: deadlock"), "%s", r->out);
	cr_expect(strstr(r->out, "the program stopped at the bug"), "%s", r->out);
	cr_expect(strstr(r->out, "NAME ") && strstr(r->out, "stack of p1.t"), "%s", r->out);
	cr_expect(strstr(r->err, "the program stopped at the bug: only threads, bt"), "%s", r->err);
}

/* A thread in a PLT stub is in the function the stub calls, through it
 * ("held in ? at -"): customer's 9th instruction is the first of
 * pthread_barrier_wait's stub. */
Test(shell, a_thread_in_a_plt_stub_is_named_by_it)
{
	struct result *r;

	check_built();
	r = shell(BANK, "--exit-on-error", "thread A = wait any enter(customer)\nstep A 9\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_expect(strstr(r->out, "held in pthread_barrier_wait@plt"), "%s", r->out);
}

Test(shell, program_gone)
{
	struct result *r;

	check_built();
	r = shell(BANK, NULL, "continue\nthreads\nhelp save\n");
	cr_assert_eq(r->code, 0, "exit %d\n%s", r->code, r->err);
	cr_assert(strstr(r->out, "the program is gone"), "%s", r->out);
	cr_assert(strstr(r->err, "only save, help and quit"), "%s", r->err);
	cr_assert(strstr(r->out, "save FILE"), "%s", r->out);
}

Test(shell, bad_operands)
{
	struct result *r;

	r = run((const char *const[]){cctrace(), "shell", NULL}, NULL);
	cr_assert_eq(r->code, 3);
	cr_assert(strstr(r->err, "expected PID"), "%s", r->err);
	r = run((const char *const[]){cctrace(), "shell", BANK, NULL}, NULL);
	cr_assert_eq(r->code, 3);
	cr_assert(strstr(r->err, "cctrace shell -- " BANK), "%s", r->err);
	r = run((const char *const[]){cctrace(), "shell", "--timeout", "soon", "--", BANK, NULL},
		NULL);
	cr_assert_eq(r->code, 3);
}

/* ------------------------------------------------------- tmux tests */

static bool have_tmux(void)
{
	return system("tmux -V >/dev/null 2>&1") == 0;
}

/* tmux -L SOCKET ARGS...; returns its stdout. */
static char *tmux(const char *const args[])
{
	const char *argv[16] = {"tmux", "-L", tmux_socket};
	struct result *r;
	char *out;
	int i;

	for (i = 0; args[i] && i < 12; i++)
		argv[3 + i] = args[i];
	argv[3 + i] = NULL;
	r = run(argv, NULL);
	out = own(strdup(r->out));
	release(r);
	return out;
}

#define TMUX(...) release(tmux((const char *const[]){__VA_ARGS__, NULL}))

static char *screen(bool escapes)
{
	if (escapes)
		return tmux((const char *const[]){"capture-pane", "-p", "-e", "-t", "shell", NULL});
	return tmux((const char *const[]){"capture-pane", "-p", "-t", "shell", NULL});
}

/* Polls the screen until every needle is on it (true) or timeout_ms. */
static bool wait_screen(const char *const needles[], int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		char *s = screen(false);
		bool all = true;
		int i;

		for (i = 0; needles[i]; i++)
			all = all && strstr(s, needles[i]);
		release(s);
		if (all)
			return true;
		if (now_ms() >= deadline)
			return false;
		usleep(20000);
	}
}

#define WAIT_SCREEN(ms, ...) wait_screen((const char *const[]){__VA_ARGS__, NULL}, ms)

/*
 * Runs `env ENV CCTRACE ARGS` in a fresh tmux session, then prints its
 * exit code ("SHELL-EXITED N") and reads a line from the terminal, which
 * it echoes as "READ-BACK line": that read waits for input only if cctrace
 * gave the terminal back (tmux runs the command in a shell without job
 * control, where SIGTTIN is ignored, so a read from the background fails
 * at once with EIO and the line is empty).  Waits until ready is on the
 * screen.
 */
static void start_tmux_cmd(const char *env, const char *args, const char *ready)
{
	char cwd[PATH_MAX], bin[PATH_MAX], cmd[3 * PATH_MAX];

	if (!have_tmux())
		cr_skip_test("tmux is not installed");
	check_built();
	cr_assert(getcwd(cwd, sizeof(cwd)));
	cr_assert(realpath(cctrace(), bin), "%s: %s", cctrace(), strerror(errno));
	/* A socket of its own per session: a server that kill-server has
	 * told to go may still hold the last one's name when the next
	 * new-session connects, and that session then never starts. */
	snprintf(tmux_socket, sizeof(tmux_socket), "cctrace-test-%d-%d", (int)getpid(),
		 ++tmux_sessions);
	snprintf(cmd, sizeof(cmd),
		 "env %s %s %s; echo SHELL-EXITED $?; read line; echo READ-BACK \"$line\"; "
		 "sleep 60",
		 env, bin, args);
	TMUX("new-session", "-d", "-s", "shell", "-x", "200", "-y", "50", "-c", cwd, cmd);
	cr_assert(WAIT_SCREEN(30000, ready), "never showed '%s'; the screen:\n%s", ready,
		  screen(false));
}

static void start_tmux(const char *env, const char *opts, const char *prog)
{
	char args[2 * PATH_MAX];

	snprintf(args, sizeof(args), "shell %s -- %s", opts, prog);
	start_tmux_cmd(env, args, "(cctrace)");
}

static void keys(const char *k)
{
	TMUX("send-keys", "-t", "shell", k);
}

static void literal(const char *text)
{
	TMUX("send-keys", "-t", "shell", "-l", text);
}

Test(shell, terminal_prompt_completion_history)
{
	char hist[] = "/tmp/cctrace-shell-history-XXXXXX", env[128], *s, buf[4096] = "";
	FILE *f;

	close(mkstemp(hist));
	unlink(hist);
	snprintf(env, sizeof(env), "CCTRACE_HISTORY=%s", hist);
	start_tmux(env, "", BANK);

	literal("thr");
	keys("Tab");
	cr_assert(WAIT_SCREEN(5000, "(cctrace) thread"), "thr<Tab> did not complete");
	keys("Tab"); /* thread or threads: both are listed */
	cr_assert(WAIT_SCREEN(5000, "threads"), "no candidate list");
	literal("s");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "LAST EVENT"), "threads did not run");

	literal("break wi");
	keys("Tab");
	cr_assert(WAIT_SCREEN(5000, "break withdraw"), "break wi<Tab> did not complete");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "breakpoint 1 at withdraw"));

	literal("print bal");
	keys("Tab");
	cr_assert(WAIT_SCREEN(5000, "print balance"), "print bal<Tab> did not complete");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "balance = 100"));

	s = screen(true);
	cr_assert(strstr(s, "\033["), "no colour on a terminal");

	keys("C-d");
	cr_assert(WAIT_SCREEN(10000, "SHELL-EXITED 0"));
	f = fopen(hist, "r");
	cr_assert(f, "no history file %s", hist);
	cr_assert(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	fclose(f);
	unlink(hist);
	cr_assert(strstr(buf, "break") && strstr(buf, "withdraw"), "history:\n%s", buf);
}

/* ...and completed across its "::". */
Test(shell, terminal_completes_a_cxx_name)
{
	start_tmux("", "", CXX);
	literal("break bank::Account::bal");
	keys("Tab");
	cr_assert(WAIT_SCREEN(5000, "break bank::Account::balance"),
		  "break bank::Account::bal<Tab> did not complete");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "breakpoint 1 at bank::Account::balance"));
	keys("C-d");
	cr_assert(WAIT_SCREEN(10000, "SHELL-EXITED 0"));
}

Test(shell, terminal_ctrl_c)
{
	char hist[] = "/tmp/cctrace-shell-history-XXXXXX", env[128];
	int64_t deadline;
	char *s;
	bool interrupted = false;

	/* A real file: libedit makes its history file private (chmod 600),
	 * which must never happen to /dev/null. */
	close(mkstemp(hist));
	snprintf(env, sizeof(env), "NO_COLOR=1 CCTRACE_HISTORY=%s", hist);
	start_tmux(env, "--timeout 60s", SHELLFIX);

	literal("half typed");
	keys("C-c"); /* at the prompt: drops the line */
	cr_assert(WAIT_SCREEN(5000, "half typed^C"));

	literal("wait any enter(never_called_function)");
	keys("Enter");
	/* Ctrl-C until the wait says it was interrupted (the first one may
	 * land before the wait started, where it is drained or drops a line). */
	deadline = now_ms() + 15000;
	while (!interrupted && now_ms() < deadline) {
		keys("C-c");
		interrupted = WAIT_SCREEN(1000, "interrupted");
	}
	cr_assert(interrupted, "Ctrl-C did not interrupt the wait");

	literal("echo still alive");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "\nstill alive"), "the shell did not come back");
	s = screen(true);
	cr_assert(!strstr(s, "\033["), "colour despite NO_COLOR:\n%s", s);
	literal("quit");
	keys("Enter");
	cr_assert(WAIT_SCREEN(10000, "SHELL-EXITED 0"));
	unlink(hist);
}

/* The pid the banner names ("launched PROG (pid N)"). */
static pid_t banner_pid(void)
{
	char *s = screen(false), *p = strstr(s, "(pid ");
	long pid = p ? strtol(p + 5, NULL, 10) : 0;

	cr_assert(pid > 0, "no pid in the banner");
	return (pid_t)pid;
}

/* Field n (1-based, as in proc(5): 5 pgrp, 8 tpgid) of /proc/PID/stat. */
static long stat_field(pid_t pid, int n)
{
	char path[64], line[1024], *p;
	long v = -1;
	int i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	cr_assert(f, "pid %d is gone", (int)pid);
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	cr_assert(p, "cannot read %s", path);
	for (i = 3, p++; i < n && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtol(p + 1, NULL, 10);
	return v;
}

/* The pid tmux started in the pane: the shell that runs cctrace. */
static pid_t pane_pid(void)
{
	char *out =
	    tmux((const char *const[]){"display", "-p", "-t", "shell", "#{pane_pid}", NULL});
	long pid = strtol(out, NULL, 10);

	release(out);
	cr_assert(pid > 0, "no pane pid");
	return (pid_t)pid;
}

/* The process group in the foreground of the pane's terminal. */
static pid_t terminal_owner(void)
{
	return (pid_t)stat_field(pane_pid(), 8);
}

/* Polls until the foreground group of the terminal is (or, if !is, is
 * not) pgrp. */
static bool wait_owner(pid_t pgrp, bool is, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		if ((terminal_owner() == pgrp) == is)
			return true;
		if (now_ms() >= deadline)
			return false;
		usleep(20000);
	}
}

/* Is SIGINT pending for pid (its shared or its main thread's queue)? */
static bool sigint_pending(pid_t pid)
{
	char path[64], line[256];
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	cr_assert(f, "pid %d is gone", (int)pid);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "ShdPnd:", 7) == 0 || strncmp(line, "SigPnd:", 7) == 0)
			pending |= (strtoull(line + 7, NULL, 16) >> (SIGINT - 1)) & 1;
	fclose(f);
	return pending;
}

/* Ctrl-C until the running command says it was interrupted (the first
 * one may land before the wait started, where it is drained). */
static void interrupt_command(void)
{
	int64_t deadline = now_ms() + 15000;
	bool interrupted = false;

	while (!interrupted && now_ms() < deadline) {
		keys("C-c");
		interrupted = WAIT_SCREEN(1000, "interrupted by INT; every thread is held");
	}
	cr_assert(interrupted, "Ctrl-C did not interrupt the wait");
}

static void shell_command(const char *line, const char *expect)
{
	char *s;

	literal(line);
	keys("Enter");
	if (WAIT_SCREEN(10000, expect))
		return;
	s = screen(false);
	cr_assert_fail("'%s' did not show '%s':\n%s", line, expect, s);
}

/*
 * Regression: the launched program shared cctrace's process group, so the
 * Ctrl-C that interrupted a wait reached it too, and the next command that
 * resumed a thread reported "killed by INT".  Now the program has a group
 * of its own: after several Ctrl-C it has no SIGINT pending, resumes, and
 * the session ends normally.
 */
Test(shell, terminal_ctrl_c_is_cctraces_not_the_programs)
{
	char hist[] = "/tmp/cctrace-shell-history-XXXXXX", env[128], *s;
	pid_t pid;

	close(mkstemp(hist));
	snprintf(env, sizeof(env), "NO_COLOR=1 CCTRACE_HISTORY=%s", hist);
	start_tmux(env, "--timeout 60s", SHELLFIX);
	pid = banner_pid();

	shell_command("wait any enter(never_called_function)",
		      "wait any enter(never_called_function)");
	cr_assert_neq(terminal_owner(), pid, "the program has the terminal without reading it");
	interrupt_command();
	keys("C-c"); /* one more, at the prompt */
	shell_command("bind A = p1.t1", "A (p1.t1) held");
	cr_assert(!sigint_pending(pid), "a SIGINT is on its way to the program");
	shell_command("run A until enter(tick)", "A (p1.t1) held in tick at shellfix.c:");
	shell_command("next A", "next ");
	cr_assert(WAIT_SCREEN(5000, "A (p1.t1) held in tick at shellfix.c:20"),
		  "next did not step");
	s = screen(false);
	cr_assert(!strstr(s, "killed") && !strstr(s, "unrealizable") && !strstr(s, "gone"),
		  "the program did not survive the Ctrl-C:\n%s", s);
	cr_assert(kill(pid, 0) == 0, "the program is gone");
	shell_command("quit", "SHELL-EXITED 0");
	literal("back");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "READ-BACK back"), "the terminal was not given back");
	unlink(hist);
}

/*
 * A program that reads the terminal gets it while a command runs (gdb's
 * scheme, on demand): the line typed during `wait` is its, Ctrl-C during
 * the next wait, while it has the terminal, still interrupts the wait and
 * not the program, and the prompt has the terminal after each command.
 */
Test(shell, terminal_program_reads_the_terminal)
{
	char hist[] = "/tmp/cctrace-shell-history-XXXXXX", env[128], *s;
	pid_t pid;

	close(mkstemp(hist));
	snprintf(env, sizeof(env), "NO_COLOR=1 CCTRACE_HISTORY=%s", hist);
	start_tmux(env, "--timeout 60s", TTYREAD);
	pid = banner_pid();

	literal("wait any enter(got_line)");
	keys("Enter");
	/* The program reads the terminal once the wait lets it run; what is
	 * typed until then waits in the terminal's input queue. */
	literal("hello");
	keys("Enter");
	cr_assert(WAIT_SCREEN(10000, "enter(got_line)"), "the program did not read the line");
	cr_assert(wait_owner(pid, false, 5000), "the prompt does not have the terminal");
	shell_command("print first", "first = 104");
	shell_command("wait any enter(never_called_function)",
		      "wait any enter(never_called_function)");
	/* It reads the terminal again: the Ctrl-C goes to it, and on to cctrace. */
	cr_assert(wait_owner(pid, true, 10000),
		  "the reading program never got the terminal (tpgid %d, pid %d)",
		  (int)terminal_owner(), (int)pid);
	interrupt_command();
	cr_assert(wait_owner(pid, false, 5000), "the prompt did not take the terminal back");
	cr_assert(!sigint_pending(pid), "a SIGINT is on its way to the program");
	shell_command("bind A = p1.t2", "A (p1.t2) held");
	shell_command("run A until enter(tick)", "A (p1.t2) held in tick at ttyread.c:");
	s = screen(false);
	cr_assert(!strstr(s, "killed") && !strstr(s, "gone"), "the program died:\n%s", s);
	/* The result is printed before the prompt takes the terminal back
	 * from the reading program: typed earlier, "quit" would be its. */
	cr_assert(wait_owner(pid, false, 5000), "the prompt did not take the terminal back");
	shell_command("quit", "SHELL-EXITED 0");
	literal("back");
	keys("Enter");
	cr_assert(WAIT_SCREEN(5000, "READ-BACK back"), "the terminal was not given back");
	unlink(hist);
}

/*
 * Ctrl-C on `cctrace run` is cctrace's: the run ends as interrupted, exit
 * 130 (128 + SIGINT), the program killed, and the terminal is the shell's again; the same
 * when the program holds the terminal because it is reading it.
 */
Test(shell, run_ctrl_c_interrupts_the_run)
{
	char sched[] = "/tmp/cctrace-ctrl-c-XXXXXX.sched", args[PATH_MAX];
	const char *const progs[] = {SHELLFIX, TTYREAD};
	size_t i;
	FILE *f;

	close(mkstemps(sched, 6));
	f = fopen(sched, "w");
	cr_assert(f);
	fputs("timeout 60s\n"
	      "thread A = wait any enter(tick)\n"
	      "wait any enter(never_called_function)\n",
	      f);
	cr_assert(fclose(f) == 0);
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		snprintf(args, sizeof(args), "run %s -- %s", sched, progs[i]);
		start_tmux_cmd("NO_COLOR=1", args, "enter(tick)");
		if (strcmp(progs[i], TTYREAD) == 0) /* then the Ctrl-C goes to the program */
			cr_assert(wait_owner((pid_t)stat_field(pane_pid(), 5), false, 10000),
				  "the reading program never got the terminal");
		keys("C-c");
		cr_assert(WAIT_SCREEN(10000,
				      "cctrace: error: interrupted by INT; the program was killed",
				      "SHELL-EXITED 130"),
			  "%s: Ctrl-C did not end the run as interrupted", progs[i]);
		literal("back");
		keys("Enter");
		cr_assert(WAIT_SCREEN(5000, "READ-BACK back"),
			  "%s: the terminal was not given back", progs[i]);
		teardown();
	}
	unlink(sched);
}

/* NO_COLOR set but empty is unset (no-color.org): colour on a terminal
 * (set to anything, none: terminal_ctrl_c checks
 * that). */
Test(shell, empty_no_color_is_unset)
{
	char hist[] = "/tmp/cctrace-history-XXXXXX", env[PATH_MAX];
	char *s;

	close(mkstemp(hist));
	snprintf(env, sizeof(env), "NO_COLOR= CCTRACE_HISTORY=%s", hist);
	start_tmux(env, "--timeout 60s", SHELLFIX);
	literal("thread A = wait any enter(tick)");
	keys("Enter");
	cr_assert(WAIT_SCREEN(20000, "enter(tick)"), "no event shown");
	s = screen(true);
	cr_expect(strstr(s, "\033[") != NULL, "no colour with NO_COLOR empty:\n%s", s);
	literal("quit");
	keys("Enter");
	cr_assert(WAIT_SCREEN(10000, "SHELL-EXITED 0"));
	unlink(hist);
}
