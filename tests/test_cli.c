/*
 * test_cli.c: the conventions of the command line (issue 14), each checked
 * on the built cctrace, and the --jobs fan-out called as a library.
 *
 * The option table is one (cli/options.c): every command's --help comes
 * from it, options go anywhere before `--`, a mistake is one line plus a
 * "Try" line and exit 3, `-` is stdout, a signal gives 128+N.  The runs
 * use samples/bank, whose lost update a schedule forces and a search
 * finds in a few runs.
 */
#include "search/search.h"
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BANK	    "samples/bank/bank"
#define BANK_SCHED  "samples/bank/lost-update.sched"
#define BANK_SEARCH "samples/bank/withdraw.search"
#define ERRFIX	    "tests/fixtures/errfix"
#define QUICK_S	    10

/* A test that fails midway leaves no cctrace it started running. */
TestSuite(cli, .fini = h_cleanup);

/* `cctrace CMD ...` (NULL: no command) refused with message. */
#define EXPECT_USAGE_ERROR(cmd, message, ...)                                                      \
	do {                                                                                       \
		struct h_result r_ = H_RUN(h_cctrace(), __VA_ARGS__);                              \
		expect_usage_error(&r_, cmd, message);                                             \
	} while (0)

static void expect_usage_error(struct h_result *r, const char *cmd, const char *message)
{
	char *want = h_fmt("cctrace%s%s: %s\nTry 'cctrace%s%s --help' for more information.\n",
			   cmd ? " " : "", cmd ? cmd : "", message, cmd ? " " : "", cmd ? cmd : "");

	cr_expect_eq(r->code, 3, "exit %d:\n%s", r->code, r->err);
	cr_expect_str_eq(r->err, want);
	cr_expect_str_eq(r->out, "");
	h_free(want);
	h_result_free(r);
}

static char *temp_dir(void)
{
	char *dir = h_fmt("/tmp/cctrace-cli-XXXXXX");

	cr_assert_not_null(mkdtemp(dir));
	return dir;
}

static void remove_tree(const char *dir)
{
	char *cmd = h_fmt("rm -rf '%s'", dir);

	cr_expect_eq(system(cmd), 0);
	h_free(cmd);
}

Test(cli, version)
{
	struct h_result r = H_RUN(h_cctrace(), "--version");

	cr_expect_eq(r.code, 0);
	cr_expect(strncmp(r.out, "cctrace ", 8) == 0 && r.out[8] >= '0' && r.out[8] <= '9', "%s",
		  r.out);
	cr_expect_eq(h_count_lines(r.out, "cctrace"), 1, "%s", r.out);
	cr_expect_str_eq(r.err, "");
	h_result_free(&r);
}

/* `help CMD`, `CMD -h` and `CMD --help` print the same text, on stdout,
 * exit 0, and it is the command's own. */
Test(cli, help_per_command)
{
	const char *cmds[] = {"run", "attach", "explore", "shell", "watchpoints"};
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct h_result a = H_RUN(h_cctrace(), "help", cmds[i]);
		struct h_result b = H_RUN(h_cctrace(), cmds[i], "-h");
		struct h_result c = H_RUN(h_cctrace(), cmds[i], "--help");
		char *head = h_fmt("usage: cctrace %s", cmds[i]);

		cr_expect_eq(a.code, 0);
		cr_expect_eq(b.code, 0);
		cr_expect_eq(c.code, 0);
		/* then its operands, or the line's end (no blank at its end) */
		cr_expect(strncmp(a.out, head, strlen(head)) == 0 &&
			      (a.out[strlen(head)] == '\n' ||
			       (a.out[strlen(head)] == ' ' && a.out[strlen(head) + 1] != '\n')),
			  "%s", a.out);
		cr_expect_str_eq(a.out, b.out);
		cr_expect_str_eq(a.out, c.out);
		cr_expect(strstr(a.out, "-h, --help"), "%s", a.out);
		h_free(head);
		h_result_free(&a);
		h_result_free(&b);
		h_result_free(&c);
	}
}

/* Each help lists its command's options and not the others'. */
Test(cli, help_lists_the_commands_own_options)
{
	struct h_result run = H_RUN(h_cctrace(), "run", "-h");
	struct h_result explore = H_RUN(h_cctrace(), "explore", "-h");
	struct h_result shell = H_RUN(h_cctrace(), "shell", "-h");
	struct h_result global = H_RUN(h_cctrace(), "help");

	cr_expect(strstr(run.out, "-q, --quiet") && strstr(run.out, "-o, --out FILE") &&
		      strstr(run.out, "--trace-json FILE") && !strstr(run.out, "--jobs") &&
		      !strstr(run.out, "--no-children"),
		  "%s", run.out);
	cr_expect(strstr(explore.out, "-j, --jobs J") && strstr(explore.out, "-o, --out DIR") &&
		      strstr(explore.out, "-q, --quiet") && strstr(explore.out, "--trace-json") &&
		      strstr(explore.out, "--expect") && strstr(explore.out, "--single-step"),
		  "%s", explore.out);
	cr_expect(strstr(shell.out, "--include-stack") && strstr(shell.out, "--exit-on-error") &&
		      !strstr(shell.out, "--strategy"),
		  "%s", shell.out);
	cr_expect_eq(global.code, 0);
	cr_expect(strstr(global.out, "cctrace explore ") && strstr(global.out, "cctrace help"),
		  "%s", global.out);
	h_result_free(&run);
	h_result_free(&explore);
	h_result_free(&shell);
	h_result_free(&global);
}

Test(cli, mistakes_say_try_help)
{
	EXPECT_USAGE_ERROR("run", "unknown option '--bogus'", "run", "--bogus", BANK_SCHED, "--",
			   BANK);
	EXPECT_USAGE_ERROR("explore", "unknown option '-x'", "explore", "-x", BANK_SEARCH, "--",
			   BANK);
	EXPECT_USAGE_ERROR("shell", "option '--timeout' needs an argument", "shell", "--timeout");
	EXPECT_USAGE_ERROR("run", "--jobs is for explore and test", "run", "--jobs", "2",
			   BANK_SCHED, "--", BANK);
	EXPECT_USAGE_ERROR("explore", "bad --jobs '0'", "explore", "-j", "0", BANK_SEARCH, "--",
			   BANK);
	EXPECT_USAGE_ERROR("explore", "expected SCHEDULE -- PROGRAM [ARGS...]", "explore",
			   BANK_SEARCH);
	EXPECT_USAGE_ERROR(NULL, "unknown command 'frob'", "help", "frob");
	EXPECT_USAGE_ERROR(NULL, "unknown command 'frob'", "frob");
	/* ib counts what only serialized runs tell: over a schedule it made
	 * one run and said every schedule of ib:1 was run */
	EXPECT_USAGE_ERROR("explore",
			   "strategy 'ib:1' is for a search without a schedule (cctrace test): it "
			   "bounds the reads that see another thread's write, which only "
			   "serialized runs tell",
			   "explore", "--strategy", "ib:1", BANK_SEARCH, "--", BANK);
	/* a schedule's search has no serialized runs for them to shape */
	EXPECT_USAGE_ERROR("explore",
			   "--points, --max-steps and --early-timeouts are for a search without a "
			   "schedule (cctrace test)",
			   "explore", "--early-timeouts", BANK_SEARCH, "--", BANK);
	/* test does what these ask already */
	EXPECT_USAGE_ERROR("test",
			   "--fail-on-exit is always on in test (--ok-exit N allows a status)",
			   "test", "--fail-on-exit", "--", BANK);
	/* a slip of the fingers is named, as a schedule's misspelt function is */
	EXPECT_USAGE_ERROR(NULL, "unknown command 'rnu'; did you mean 'run'?", "rnu");
	EXPECT_USAGE_ERROR(NULL, "unknown command 'tets'; did you mean 'test'?", "help", "tets");
	EXPECT_USAGE_ERROR(NULL, "unknown option '--verison'; did you mean '--version'?",
			   "--verison");
	EXPECT_USAGE_ERROR(NULL, "unknown option '--timeout' (a command's options follow it)",
			   "--timeout", "2s");
	/* 0 is no time at all, not the default; a seed is not negative */
	EXPECT_USAGE_ERROR("run", "bad --timeout '0': give a duration above 0, e.g. 500ms or 2s",
			   "run", "--timeout", "0", BANK_SCHED, "--", BANK);
	/* a duration has its unit, as in a schedule (1500 was 1500 s) */
	EXPECT_USAGE_ERROR("run", "bad --timeout '1500': needs a unit, e.g. 1500ms or 1500s", "run",
			   "--timeout", "1500", BANK_SCHED, "--", BANK);
	EXPECT_USAGE_ERROR("explore", "bad --time '5': needs a unit, e.g. 5ms or 5s", "explore",
			   "--time", "5", BANK_SEARCH, "--", BANK);
	/* a flag given a value ("unknown option '-\\0'" before) */
	EXPECT_USAGE_ERROR("run", "option '--quiet' takes no argument", "run", "--quiet=yes",
			   BANK_SCHED, "--", BANK);
	EXPECT_USAGE_ERROR("explore", "bad --seed '-1': give a whole number from 0 on", "explore",
			   "--seed", "-1", BANK_SEARCH, "--", BANK);
	/* a misspelt strategy is a usage error, said before anything else */
	EXPECT_USAGE_ERROR("explore",
			   "unknown strategy 'frob': use dfs, bfs, random[:C], pct:D[:C], cb:N, "
			   "vb:V[:T], pctvb:D[:V], ipb, idb or ib:K",
			   "explore", "--strategy", "frob", BANK_SEARCH, "--", BANK);
	EXPECT_USAGE_ERROR("test",
			   "strategy 'pct:x' needs a depth from 1 to 16, e.g. pct:3 (pct:3:1: "
			   "children below their creator)",
			   "test", "--strategy", "pct:x", "--", BANK);
}

/* The Try line's advice works: `help --help` and `help help` are `help`. */
Test(cli, help_of_help_is_the_list)
{
	const char *const how[] = {"--help", "help", "-h"};
	size_t i;

	for (i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
		struct h_result r = H_RUN(h_cctrace(), "help", how[i]);

		cr_expect_eq(r.code, 0, "help %s: %s", how[i], r.err);
		cr_expect(strstr(r.out, "cctrace explore "), "help %s: %s", how[i], r.out);
		h_result_free(&r);
	}
}

/* `run S -q -- P` as `run -q S -- P`: options before or after the
 * operands, never after `--` (there they are the program's). */
Test(cli, options_anywhere_before_dashes)
{
	struct h_result before =
	    H_RUN(h_cctrace(), "run", "-q", "--expect", "bug", BANK_SCHED, "--", BANK);
	struct h_result after =
	    H_RUN(h_cctrace(), "run", BANK_SCHED, "-q", "--expect", "bug", "--", BANK);
	struct h_result theirs = H_RUN(
	    h_cctrace(), "run", h_temp_sched("plain.sched", "timeout 1s\n"), "--", ERRFIX, "-q");

	cr_expect_eq(before.code, 0, "%s", before.err);
	cr_expect_eq(after.code, 0, "%s", after.err);
	cr_expect(strstr(after.err, "cctrace: bug"), "%s", after.err);
	cr_expect(!strstr(after.err, "[ "), "-q after the schedule was ignored:\n%s", after.err);
	/* -q after -- went to errfix, which says what it takes */
	cr_expect(strstr(theirs.err, "usage: errfix"), "%s", theirs.err);
	h_result_free(&before);
	h_result_free(&after);
	h_result_free(&theirs);
}

/* `-` is stdout: the JSON trace comes out there and no file "-" appears;
 * -o sends the human trace where it says. */
Test(cli, dash_is_stdout)
{
	char *dir = temp_dir(), *trace = h_fmt("%s/trace.txt", dir);
	struct h_result r;
	struct stat st;
	char *text;

	unlink("-");
	r = H_RUN(h_cctrace(), "run", "--trace-json", "-", BANK_SCHED, "-q", "--", BANK);
	cr_expect_eq(r.code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "{\"type\":\"event\",\"ms\":") &&
		      strstr(r.out, "\"event\":\"enter(withdraw)\""),
		  "%s", r.out);
	cr_expect(stat("-", &st) < 0, "a file named '-' was created");
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", "-o", trace, BANK_SCHED, "--", BANK);
	cr_expect_eq(r.code, 1, "%s", r.err);
	text = h_read_file(trace, NULL);
	cr_assert_not_null(text);
	cr_expect(strstr(text, "enter(withdraw)"), "%s", text);
	cr_expect(!strstr(r.err, "enter(withdraw)"), "the trace went to stderr too:\n%s", r.err);
	cr_expect(strstr(r.err, "cctrace: bug"), "%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "run", "-o", "-", BANK_SCHED, "--", BANK);
	cr_expect(strstr(r.out, "enter(withdraw)"), "%s", r.out);
	h_result_free(&r);
	h_free(text);
	/* -q empties the file: the last run's trace would pass for this one's */
	r = H_RUN(h_cctrace(), "run", "-q", "-o", trace, BANK_SCHED, "--", BANK);
	cr_expect_eq(r.code, 1, "%s", r.err);
	text = h_read_file(trace, NULL);
	cr_assert_not_null(text);
	cr_expect_str_eq(text, "", "-q wrote, or left, a trace:\n%s", text);
	cr_expect(!strstr(r.err, "enter(withdraw)") && strstr(r.err, "cctrace: bug"), "%s", r.err);
	h_result_free(&r);
	h_free(text);
	remove_tree(dir);
}

/* -o, --trace-json and --trace-chrome never write over the command's own
 * schedule or program: `run -o s.sched s.sched` replaced the schedule
 * with the trace, and naming the program truncated it to nothing. */
Test(cli, an_output_that_is_an_input_is_refused)
{
	char *dir = temp_dir(), *sched = h_fmt("%s/s.sched", dir), *prog = h_fmt("%s/bank", dir);
	char *before = h_read_file(BANK_SCHED, NULL), *after;
	struct h_result r;
	struct stat st;

	cr_assert_not_null(before);
	cr_assert_eq(system(h_fmt("cp %s %s && cp %s %s", BANK_SCHED, sched, BANK, prog)), 0);
	r = H_RUN(h_cctrace(), "run", "-o", sched, sched, "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "is an input of this command"), "%s", r.err);
	h_result_free(&r);
	after = h_read_file(sched, NULL);
	cr_expect(after && strcmp(after, before) == 0, "the schedule was changed");
	r = H_RUN(h_cctrace(), "run", "--trace-json", prog, sched, "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	h_result_free(&r);
	cr_expect(stat(prog, &st) == 0 && st.st_size > 1000, "the program was truncated");
	/* --junit too (it replaced the program with XML), and explore's
	 * outputs (its schedule was emptied before it was read) */
	r = H_RUN(h_cctrace(), "run", "-q", "--junit", prog, sched, "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "--junit ") && strstr(r.err, "is an input of this command"), "%s",
		  r.err);
	h_result_free(&r);
	cr_expect(stat(prog, &st) == 0 && st.st_size > 1000, "the program was replaced");
	r = H_RUN(h_cctrace(), "explore", "-q", "-o", h_fmt("%s/out", dir), "--json-file", sched,
		  sched, "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	h_result_free(&r);
	after = h_read_file(sched, NULL);
	cr_expect(after && strcmp(after, before) == 0, "explore changed the schedule");
	/* two outputs in one file: only the last would be left */
	r = H_RUN(h_cctrace(), "run", "-q", "--trace-json", h_fmt("%s/t", dir), "--trace-chrome",
		  h_fmt("%s/t", dir), sched, "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "--trace-json and --trace-chrome both name "), "%s", r.err);
	h_result_free(&r);
	/* --junit's file is written at the end: an unwritable one is said at
	 * once, not after the run, whose outcome it hid */
	r = H_RUN(h_cctrace(), "run", "-q", "--junit", "/nonexistent/x.xml", sched, "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "cannot write /nonexistent/x.xml") && !strstr(r.err, "bug"), "%s",
		  r.err);
	h_result_free(&r);
	/* a search's own bug files are no outputs of the options', and a
	 * refused command makes no file (--junit's check made it empty) */
	r = H_RUN(h_cctrace(), "test", "-q", "-o", dir, "--junit", h_fmt("%s/bug-1.sched", dir),
		  "--", prog);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "would be written over by the search's bug files"), "%s", r.err);
	cr_expect(stat(h_fmt("%s/bug-1.sched", dir), &st) < 0, "a file was left");
	h_result_free(&r);
	h_free(before);
	h_free(after);
	remove_tree(dir);
}

/* The trace reaches its file event by event, not at the end: it can be
 * followed (tail -f), and a kill -9 of cctrace keeps what came before.
 * The first event is in the file while cctrace still waits for the
 * second (which never comes). */
Test(cli, the_trace_file_is_written_as_the_events_come)
{
	char *dir = temp_dir(), *trace = h_fmt("%s/trace.txt", dir);
	char *sched = h_temp_sched("live.sched", "timeout 20s\n"
						 "thread A = wait any enter(tick)\n"
						 "run A until enter(never_called_function)\n");
	struct h_proc c = h_spawn((const char *const[]){h_cctrace(), "run", "-o", trace, sched,
							"--", "tests/fixtures/shellfix", NULL},
				  false, false, true);
	int64_t deadline = h_now_ms() + 15000;
	char *text = NULL;
	bool seen = false;
	int status = 0;

	while (!seen && h_now_ms() < deadline && waitpid(c.pid, &status, WNOHANG) == 0) {
		h_free(text);
		text = h_read_file(trace, NULL);
		seen = text && strstr(text, "enter(tick)");
		if (!seen)
			h_pace();
	}
	cr_expect(seen, "the first event was not in %s while cctrace ran:\n%s", trace,
		  text ? text : "(no file)");
	kill(c.pid, SIGTERM);
	h_wait(c.pid, 20, NULL);
	h_free(text);
	remove_tree(dir);
}

/* explore takes its options anywhere before `--`, -q silences it, and
 * --trace-json, --expect and -o are honoured. */
Test(cli, explore_options)
{
	char *dir = temp_dir(), *json = h_fmt("%s/trace.json", dir), *out = h_fmt("%s/bugs", dir);
	struct h_result r;
	char *text;

	r = H_RUN(h_cctrace(), "explore", "--runs", "30", BANK_SEARCH, "-q", "--no-minimize",
		  "--trace-json", json, "-o", out, "--expect", "bug", "--", BANK);
	cr_expect_eq(r.code, 0, "--expect bug with a bug found: exit %d\n%s", r.code, r.err);
	cr_expect(strncmp(r.err, "cctrace explore: bug 1 in run ", 30) == 0 &&
		      h_count_lines(r.err, "cctrace explore: ") == 2 && strstr(r.err, out),
		  "-q leaves the bug's announcement and the summary only:\n%s", r.err);
	text = h_read_file(json, NULL);
	cr_assert_not_null(text, "no %s", json);
	cr_expect(strstr(text, "\"run\":1,\"search_run\":1,\"choices\":\"") &&
		      strstr(text, "\"outcome\":\"bug\","),
		  "%s", text);
	cr_expect(strstr(text, "\"event\":\"enter(withdraw)\""), "%s", text);
	h_free(text);
	text = h_read_file(h_fmt("%s/bug-1.sched", out), NULL);
	cr_assert_not_null(text, "no bug-1.sched in %s", out);
	cr_expect(strstr(text, "run "), "%s", text);
	h_free(text);
	h_result_free(&r);
	/* the same DIR again: --clean removes the first search's bugs */
	r = H_RUN(h_cctrace(), "explore", BANK_SEARCH, "--runs", "30", "-q", "--no-minimize",
		  "--single-step", "--clean", "-o", out, "--expect", "completed", "--", BANK);
	cr_expect_eq(r.code, 4, "--expect completed with a bug found: exit %d\n%s", r.code, r.err);
	h_result_free(&r);
	remove_tree(dir);
}

Test(cli, shell_takes_include_stack)
{
	struct h_result r = H_RUN(h_cctrace(), "shell", "--include-stack", "-q", "--", BANK);

	cr_expect_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
}

/* Ctrl-C exits 128 + SIGINT, for run and for explore, once the program
 * is known to be running under cctrace (it said "ready"). */
static void interrupted(const char *cmd)
{
	char *sched = h_temp_sched("never.sched", "timeout 60s\n"
						  "let x = choose(1, 2)\n"
						  "wait any enter(never_called)\n");
	char *trace = h_fmt("%s.jsonl", sched), *text, *last;
	struct h_proc p = h_spawn((const char *const[]){h_cctrace(), cmd, "-q", "--trace-json",
							trace, sched, "--", ERRFIX, "wait", NULL},
				  false, true, true);
	char line[256];
	struct h_result r;

	cr_assert(h_read_line(p.out, line, sizeof(line), QUICK_S * 1000), "errfix did not start");
	cr_assert(strncmp(line, "ready", 5) == 0, "%s", line);
	cr_assert(kill(p.pid, SIGINT) == 0);
	r = h_collect(&p, QUICK_S);
	cr_expect_eq(r.code, 128 + SIGINT, "%s: exit %d:\n%s", cmd, r.code, r.err);
	h_result_free(&r);
	/* the run cut short ends its trace with an error outcome (explore's
	 * had none) */
	text = h_read_file(trace, NULL);
	cr_assert(text && *text, "%s: no trace", cmd);
	text[strlen(text) - 1] = 0;
	last = strrchr(text, '\n') ? strrchr(text, '\n') + 1 : text;
	cr_expect(strstr(last, "\"type\":\"outcome\",\"outcome\":\"error\"") &&
		      strstr(last, "interrupted by INT"),
		  "%s: the trace ends with %s", cmd, last);
	free(text);
}

Test(cli, sigint_exits_130)
{
	interrupted("run");
	interrupted("explore");
}

/* A schedule that loops without ever waiting (nested repeats of fewer
 * than 256 turns each, then a for of lets) still ends at Ctrl-C or
 * SIGTERM: nothing looked for the signal, and only SIGKILL ended it.  The
 * signal is sent once the trace shows the wait before the loops. */
Test(cli, a_loop_that_never_waits_is_interrupted)
{
	char *sched =
	    h_temp_sched("busy.sched", "wait any enter(pthread_join)\n"
				       "let n = 0\n"
				       "repeat 200 { repeat 200 { repeat 200 { repeat 200 {\n"
				       "  let n = n + 1\n"
				       "} } } }\n"
				       "for i in 1..9000000000000000000 { let n = i }\n");
	const int sigs[] = {SIGINT, SIGTERM};
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct h_proc p = h_spawn(
		    (const char *const[]){h_cctrace(), "run", sched, "--", ERRFIX, "wait", NULL},
		    false, false, true);
		char line[512] = "";
		struct h_result r;

		while (!strstr(line, "enter(pthread_join)"))
			cr_assert(h_read_line(p.err, line, sizeof(line), QUICK_S * 1000),
				  "the wait never ended");
		cr_assert(kill(p.pid, sigs[i]) == 0);
		r = h_collect(&p, QUICK_S);
		cr_expect(!r.timed_out, "%s did not end it", strsignal(sigs[i]));
		cr_expect_eq(r.code, 128 + sigs[i], "exit %d:\n%s", r.code, r.err);
		h_result_free(&r);
	}
}

/* A for up to the largest integer ends there: i++ wrapped around, and the
 * loop began again from the most negative. */
Test(cli, a_for_up_to_the_largest_integer_ends)
{
	char *sched = h_temp_sched(
	    "big.sched", "let n = 0\n"
			 "for i in 9223372036854775806..9223372036854775807 { let n = n + 1 }\n"
			 "assert n == 2\n");
	struct h_result r = H_RUN(h_cctrace(), "run", "-q", sched, "--", BANK);

	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	h_result_free(&r);
}

/* The --jobs fan-out is a library call: two workers, their bugs numbered
 * into one directory, one summary in the schema of a single search. */
Test(cli, jobs_api_from_the_library)
{
	char err[4096], *dir = temp_dir(), *json = NULL;
	size_t len = 0;
	struct policy *pol = engine_load(BANK_SEARCH, BANK, 0, err, sizeof(err));
	char *argv[] = {BANK, NULL};
	struct engine_options opt = {.pin_cpu = true};
	struct explore_options eo = {.out_dir = dir, .seed = 1, .jobs = 2, .all = true};
	struct explore_summary sum;
	struct stat st;
	long n;

	cr_assert_not_null(pol, "%s", err);
	eo.json = open_memstream(&json, &len);
	cr_assert(engine_resolve_watchpoints(&opt, &(const char *){NULL}, err, sizeof(err)) == 0);
	cr_assert_eq(search_explore_jobs(pol, argv, &opt, &eo, &sum, err, sizeof(err)), 0, "%s",
		     err);
	fclose(eo.json);
	cr_expect_eq(sum.jobs, 2);
	cr_expect_gt(sum.bugs, 0, "no bug in %ld runs", sum.runs);
	cr_expect_gt(sum.runs, sum.bugs);
	cr_expect_str_eq(sum.strategy, "dfs");
	for (n = 1; n <= sum.bugs; n++)
		cr_expect(stat(h_fmt("%s/bug-%ld.sched", dir, n), &st) == 0, "bug-%ld.sched", n);
	cr_expect(stat(h_fmt("%s/job-1", dir), &st) < 0, "a worker's directory was left");
	cr_expect(strstr(json, "\"jobs\":2,") && strstr(json, "\"strategy\":\"dfs\"") &&
		      strstr(json, h_fmt("\"bugs\":%ld,", sum.bugs)),
		  "%s", json);
	free(json);
	engine_free(pol);
	remove_tree(dir);
}

/* `cctrace test --jobs 2` forks its workers after the profiling runs,
 * which left a wait's alarm armed in cctrace: a worker inherits the note
 * of that alarm but not the timer, and used to wait for ever for it as
 * soon as a run's thread went to sleep (3 of 3 such searches hung). */
Test(cli, test_jobs_workers_run_to_the_end)
{
	char *dir = temp_dir();
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "test", "-q", "--no-minimize", "--seed", "1",
					"--jobs", "2", "--runs", "40", "--out", dir, "--",
					"tests/fixtures/sercontrol", NULL},
		  120);

	cr_assert(!r.timed_out, "cctrace test --jobs 2 hung:\n%s", r.err);
	cr_expect_eq(r.code, 0, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "40 runs, 0 bugs, 40 completed"), "%s", r.err);
	h_result_free(&r);
	remove_tree(dir);
}
