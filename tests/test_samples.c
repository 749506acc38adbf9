/*
 * System tests: the sample schedules reproduce their bugs every time.
 *
 * Every samples/NAME/NAME.sched starts with "# run: cctrace run SCHED --
 * PROG ARGS"; the tests run exactly that command with the binary under test
 * ($CCTRACE or ./cctrace).  Each run must end as a bug (exit 1, "cctrace:
 * bug:"), and with --expect bug exit 0.  The same programs run 200 times
 * without cctrace show the bug rarely if ever: it is the schedule, not luck,
 * that reproduces it.  The bank sample's trace is checked event by event,
 * and its --trace-json output against the human trace.
 */
#include "harness.h"

#include <glob.h>

#define RUNS_WITH_SCHEDULE 5
#define BASELINE_RUNS	   200

TestSuite(samples, .fini = h_cleanup, .timeout = 120);

struct sample {
	char sched[256];
	const char *argv[32]; /* argv[0] is the binary under test; NULL-terminated */
	int argc;
	int prog; /* index in argv of the program after "--" */
	char line[512];
};

/* Reads the "# run:" line of sched into s. */
static void load_sample(const char *sched, struct sample *s)
{
	char *text = h_read_file(sched, NULL), *nl, *tok, *save = NULL;
	const char *prefix = "# run: ";

	cr_assert(text, "cannot read %s", sched);
	memset(s, 0, sizeof(*s));
	snprintf(s->sched, sizeof(s->sched), "%s", sched);
	nl = strchr(text, '\n');
	if (nl)
		*nl = 0;
	cr_assert(strncmp(text, prefix, strlen(prefix)) == 0,
		  "%s: the first line is not '# run: ...': %s", sched, text);
	snprintf(s->line, sizeof(s->line), "%s", text + strlen(prefix));
	free(text);
	for (tok = strtok_r(s->line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		cr_assert(s->argc < 31, "%s: run line too long", sched);
		s->argv[s->argc++] = tok;
	}
	cr_assert(s->argc >= 5, "%s: run line has too few words", sched);
	cr_assert_str_eq(s->argv[0], "cctrace", "%s: run line does not start with cctrace", sched);
	cr_assert_str_eq(s->argv[1], "run", "%s: run line is not 'cctrace run'", sched);
	s->argv[0] = h_cctrace();
	for (s->prog = 2; s->prog < s->argc; s->prog++)
		if (strcmp(s->argv[s->prog], "--") == 0)
			break;
	cr_assert(s->prog < s->argc - 1, "%s: no '-- PROGRAM' in the run line", sched);
	s->prog++;
	cr_assert_str_eq(s->argv[s->prog - 2], sched, "%s: the run line runs another schedule (%s)",
			 sched, s->argv[s->prog - 2]);
	cr_assert(access(s->argv[s->prog], X_OK) == 0, "%s: %s is not built (make samples)", sched,
		  s->argv[s->prog]);
}

static int load_samples(struct sample *out, int max)
{
	glob_t g;
	size_t i;
	int n = 0;

	cr_assert(glob("samples/*/*.sched", 0, NULL, &g) == 0,
		  "no samples/*/*.sched (tests run from the repository root)");
	for (i = 0; i < g.gl_pathc && n < max; i++)
		load_sample(g.gl_pathv[i], &out[n++]);
	globfree(&g);
	cr_assert(n >= 3, "expected at least the three samples, found %d", n);
	return n;
}

/* Does this sample's own bug show in a run's output?  (Beyond the outcome.) */
static void expect_sample_symptom(const struct sample *s, const struct h_result *r)
{
	if (strstr(s->sched, "bank/"))
		cr_expect(strstr(r->err, "cctrace: bug: assertion failed at ") &&
			      strstr(r->err, ": assert balance == 70\n") &&
			      (strstr(r->err, "\n  balance = 80\n") ||
			       strstr(r->err, "\n  balance = 90\n")),
			  "%s: expected the failed balance assertion:\n%s", s->sched, r->err);
	else if (strstr(s->sched, "bbuf/"))
		cr_expect(
		    strstr(r->err, "cctrace: bug: p1.t") &&
			strstr(r->err, "received SEGV (Segmentation fault) in work at bbuf.c:"),
		    "%s: expected a SEGV in work():\n%s", s->sched, r->err);
	else if (strstr(s->sched, "fdclose/"))
		cr_expect(strstr(r->out, "BUG: read() on a closed descriptor") &&
			      strstr(r->err, "cctrace: bug: p1.t") &&
			      strstr(r->err, "received ABRT (Aborted)"),
			  "%s: expected the read after close and abort:\nstdout:\n%s\nstderr:\n%s",
			  s->sched, r->out, r->err);
}

Test(samples, every_run_line_reproduces_the_bug)
{
	struct sample s[16];
	int n = load_samples(s, 16), i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < RUNS_WITH_SCHEDULE; k++) {
			struct h_result r = h_run(s[i].argv, H_SAFETY_S);

			cr_expect(!r.timed_out, "%s run %d: killed after %d s", s[i].sched, k + 1,
				  H_SAFETY_S);
			cr_expect_eq(r.code, 1, "%s run %d: exit %d, expected 1 (bug)\nstderr:\n%s",
				     s[i].sched, k + 1, r.code, r.err);
			cr_expect(strstr(r.err, "\ncctrace: bug: ") ||
				      strncmp(r.err, "cctrace: bug: ", 14) == 0,
				  "%s run %d: no 'cctrace: bug:' line:\n%s", s[i].sched, k + 1,
				  r.err);
			cr_expect_eq(h_count_lines(r.err, "cctrace: bug: "), 1,
				     "%s run %d: expected exactly one outcome line:\n%s",
				     s[i].sched, k + 1, r.err);
			cr_expect(!strstr(r.err, "cctrace: completed") &&
				      !strstr(r.err, "cctrace: unrealizable") &&
				      !strstr(r.err, "cctrace: error"),
				  "%s run %d: other outcome lines:\n%s", s[i].sched, k + 1, r.err);
			expect_sample_symptom(&s[i], &r);
			h_result_free(&r);
		}
	}
}

Test(samples, expect_bug_exits_zero)
{
	struct sample s[16];
	int n = load_samples(s, 16), i;

	for (i = 0; i < n; i++) {
		const char *argv[40];
		int j, k = 0;
		struct h_result r;

		/* cctrace run --expect bug SCHED -- PROG ARGS */
		argv[k++] = s[i].argv[0];
		argv[k++] = s[i].argv[1];
		argv[k++] = "--expect";
		argv[k++] = "bug";
		for (j = 2; j < s[i].argc; j++)
			argv[k++] = s[i].argv[j];
		argv[k] = NULL;
		r = h_run(argv, H_SAFETY_S);
		cr_expect_eq(r.code, 0, "%s with --expect bug: exit %d, expected 0\nstderr:\n%s",
			     s[i].sched, r.code, r.err);
		cr_expect(strstr(r.err, "cctrace: bug: "), "%s: no bug outcome line:\n%s",
			  s[i].sched, r.err);
		h_result_free(&r);

		/* ... and --expect completed is the wrong guess: exit 4. */
		argv[3] = "completed";
		r = h_run(argv, H_SAFETY_S);
		cr_expect_eq(r.code, 4, "%s with --expect completed: exit %d, expected 4\n%s",
			     s[i].sched, r.code, r.err);
		h_result_free(&r);
	}
}

/* The sample programs alone, without cctrace: the bug is rare. */
Test(samples, programs_alone_rarely_show_the_bug)
{
	struct sample s[16];
	int n = load_samples(s, 16), i, k;

	for (i = 0; i < n; i++) {
		int bugs = 0;

		for (k = 0; k < BASELINE_RUNS; k++) {
			struct h_result r = h_run(&s[i].argv[s[i].prog], 10);

			cr_assert(!r.timed_out, "%s alone hung", s[i].argv[s[i].prog]);
			if (r.code != 0 || strstr(r.out, "BUG"))
				bugs++;
			else
				cr_expect(strstr(r.out, "ok"), "%s: exit 0 without 'ok':\n%s",
					  s[i].argv[s[i].prog], r.out);
			h_result_free(&r);
		}
		cr_log_info("baseline: %s showed the bug in %d of %d runs without cctrace",
			    s[i].argv[s[i].prog], bugs, BASELINE_RUNS);
		printf("baseline: %s showed the bug in %d of %d runs without cctrace\n",
		       s[i].argv[s[i].prog], bugs, BASELINE_RUNS);
		cr_expect_lt(bugs, BASELINE_RUNS / 10,
			     "%s shows its bug in %d of %d runs on its own: the sample does not "
			     "need the schedule",
			     s[i].argv[s[i].prog], bugs, BASELINE_RUNS);
	}
}

/* --- the bank schedule, event by event ------------------------------- */

static const char *bank_sched = "samples/bank/lost-update.sched";
static const char *bank_prog = "samples/bank/bank";

static void check_bank_trace(const struct h_trace_ev *ev, int n, const char *err)
{
	static const char *const want[] = {"enter(withdraw)", "enter(withdraw)", "read(balance)",
					   "return(withdraw)", "return(withdraw)"};
	int i;

	cr_assert_eq(n, 5, "expected 5 trace lines, got %d:\n%s", n, err);
	for (i = 0; i < 5; i++) {
		cr_assert_str_eq(ev[i].event, want[i], "trace line %d: %s instead of %s:\n%s",
				 i + 1, ev[i].event, want[i], err);
		cr_assert(strncmp(ev[i].thread, "p1.t", 4) == 0, "trace line %d: thread %s", i + 1,
			  ev[i].thread);
		cr_assert(strncmp(ev[i].where, "bank.c:", 7) == 0,
			  "trace line %d: location %s is not in bank.c", i + 1, ev[i].where);
	}
	/* A and B are two distinct threads, neither the main thread. */
	cr_assert_str_neq(ev[0].thread, ev[1].thread, "the same thread was bound twice:\n%s", err);
	cr_assert_str_neq(ev[0].thread, "p1.t1");
	cr_assert_str_neq(ev[1].thread, "p1.t1");
	/* A reads, B returns, A returns. */
	cr_assert_str_eq(ev[2].thread, ev[0].thread, "read(balance) is not A's:\n%s", err);
	cr_assert_str_eq(ev[3].thread, ev[1].thread, "the first return is not B's:\n%s", err);
	cr_assert_str_eq(ev[4].thread, ev[0].thread, "the second return is not A's:\n%s", err);
	cr_assert_str_eq(ev[0].func, "withdraw");
	cr_assert_str_eq(ev[2].func, "withdraw");
	cr_assert_str_eq(ev[3].func, "customer", "return(withdraw) is reported in the caller");
}

Test(samples, bank_trace_is_the_schedule)
{
	struct h_trace_ev ev[16];
	struct h_result r = H_RUN(h_cctrace(), "run", bank_sched, "--", bank_prog);
	int n;

	cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.err);
	n = h_parse_trace(r.err, ev, 16);
	check_bank_trace(ev, n, r.err);
	/* The trace comes before the outcome. */
	cr_assert(strstr(r.err, "return(withdraw)") < strstr(r.err, "cctrace: bug: "));
	h_result_free(&r);
}

Test(samples, bank_trace_json_matches_the_trace)
{
	char *json_path = h_temp_sched("trace.json", ""), *json, *line, *save = NULL;
	struct h_trace_ev ev[16];
	struct h_result r;
	int n, lines = 0;

	r = H_RUN(h_cctrace(), "run", "--trace-json", json_path, bank_sched, "--", bank_prog);
	cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.err);
	n = h_parse_trace(r.err, ev, 16);
	check_bank_trace(ev, n, r.err);
	json = h_read_file(json_path, NULL);
	cr_assert(json, "--trace-json did not write %s", json_path);
	for (line = strtok_r(json, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char thread[64], event[128], func[128], file[128], lineno[32];
		size_t len = strlen(line);

		cr_assert(line[0] == '{' && line[len - 1] == '}', "not a JSON object: %s", line);
		/* the header and outcome records: tests/test_json.c */
		if (strncmp(line, "{\"type\":\"event\",", 16) != 0)
			continue;
		cr_assert(h_json_field(line, "thread", thread, sizeof(thread)), "no thread: %s",
			  line);
		cr_assert(h_json_field(line, "event", event, sizeof(event)), "no event: %s", line);
		cr_assert(h_json_field(line, "func", func, sizeof(func)), "no func: %s", line);
		cr_assert(h_json_field(line, "file", file, sizeof(file)), "no file: %s", line);
		cr_assert(h_json_field(line, "line", lineno, sizeof(lineno)), "no line: %s", line);
		cr_assert(strspn(lineno, "0123456789") == strlen(lineno) && atoi(lineno) > 0,
			  "line is not a positive number: %s", line);
		cr_assert_lt(lines, n, "more JSON lines than trace lines:\n%s", line);
		cr_assert_str_eq(thread, ev[lines].thread, "JSON line %d: %s", lines + 1, line);
		cr_assert_str_eq(event, ev[lines].event, "JSON line %d: %s", lines + 1, line);
		cr_assert_str_eq(func, ev[lines].func, "JSON line %d: %s", lines + 1, line);
		{
			char where[160];

			snprintf(where, sizeof(where), "%s:%s", file, lineno);
			cr_assert_str_eq(where, ev[lines].where, "JSON line %d: %s", lines + 1,
					 line);
		}
		lines++;
	}
	cr_assert_eq(lines, n, "%d JSON lines for %d trace lines", lines, n);
	free(json);
	unlink(json_path);
	h_result_free(&r);
}
