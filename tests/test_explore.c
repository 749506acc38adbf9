/*
 * System tests of `cctrace explore`, the systematic search over the choices
 * of a schedule.
 *
 * The interleave fixture has two threads that each call step() three times;
 * tests/schedules/interleave-all.sched chooses which thread makes the next
 * step until both have ended, so a complete search visits exactly the
 * C(6,3) = 20 interleavings.  Every run's choice trace ("0.1.0.0.1.1") and
 * outcome comes from --schedules FILE.  A trace is a list of option indices
 * among the threads that have not ended, in the order A, B (for dfs, bfs,
 * random, pct); cb numbers the options relative to the thread that ran last
 * (0 = go on with it, then the others in order), so the tests turn both into
 * thread sequences ("AABABB") before comparing them.
 *
 * The bank sample's lost update is the bug to find; the run counts each
 * strategy needs are logged (cr_log_info) and asserted.  Every test uses its
 * own mkdtemp directory for --out and --schedules, removed by the .fini.
 */
#include "harness.h"

#include <sys/stat.h>

#define INTERLEAVE_SCHED "tests/schedules/interleave-all.sched"
#define INTERLEAVE_PROG	 "tests/fixtures/interleave"
#define BANK_SEARCH	 "samples/bank/withdraw.search"
#define BANK_TO_EXIT	 "tests/schedules/bank-to-exit.sched"
#define BANK_PROG	 "samples/bank/bank"
#define LATEORDER_PROG	 "tests/fixtures/lateorder"
#define CRASHSTEP_PROG	 "tests/fixtures/crashstep"
#define ASSUME_SCHED	 "tests/schedules/assume-never.sched"

#define EXPLORE_SAFETY_S 120 /* a whole search; it has failed long before this */
#define MAX_LINES	 256

/* Measured run counts (see docs/search.md); deterministic for dfs and bfs. */
#define BANK_DFS_RUNS	  14
#define BANK_BFS_RUNS	  20
#define BANK_PCT3_RUNS	  78 /* seed 1: the same in 5 of 5 invocations */
#define BANK_CB2_BOUND	  16 /* measured 10 to 11, + margin */
#define TO_EXIT_CB1_BOUND 6  /* measured 3 to 4, + margin */

/* ------------------------------------------------------------ helpers */

static char g_dir[64];

/* rm -r path (no symbolic links are followed: unlink removes the link). */
static void rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			char sub[4096];
			struct stat st;

			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
				rm_rf(sub);
			else
				unlink(sub);
		}
	closedir(d);
	rmdir(path);
}

static void teardown(void)
{
	h_cleanup();
	if (g_dir[0])
		rm_rf(g_dir);
	g_dir[0] = 0;
}

TestSuite(explore_t, .fini = teardown, .timeout = 300);

/* The test's own output directory. */
static const char *workdir(void)
{
	snprintf(g_dir, sizeof(g_dir), "/tmp/cctrace-explore-XXXXXX");
	cr_assert(mkdtemp(g_dir), "mkdtemp: %s", strerror(errno));
	return g_dir;
}

/* Runs cctrace with the NULL-terminated arguments after "cctrace". */
static struct h_result cctrace_v(const char *first, ...)
{
	const char *argv[64];
	const char *a;
	int n = 0;
	va_list ap;

	argv[n++] = h_cctrace();
	va_start(ap, first);
	for (a = first; a; a = va_arg(ap, const char *)) {
		cr_assert(n < 63);
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;
	return h_run(argv, EXPLORE_SAFETY_S);
}

#define CCTRACE(...) cctrace_v(__VA_ARGS__, (const char *)NULL)

/* The value of "key":NUMBER in a one-line JSON summary, -1 if absent. */
static long json_num(const char *json, const char *key)
{
	const char *p = strstr(json, h_fmt("\"%s\":", key));

	if (!p)
		return -1;
	return strtol(p + strlen(key) + 3, NULL, 10);
}

/* One line of a --schedules file: "TRACE OUTCOME". */
struct sline {
	char trace[128];
	char outcome[32];
};

/* Reads a --schedules file; returns the number of lines. */
static int read_schedules(const char *path, struct sline *lines, int max)
{
	char *text = h_read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	cr_assert(text, "cannot read %s", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cr_assert(n < max, "%s: more than %d lines", path, max);
		cr_assert(sscanf(line, "%127s %31s", lines[n].trace, lines[n].outcome) == 2,
			  "%s: malformed line '%s'", path, line);
		n++;
	}
	free(text);
	return n;
}

/* The whole "TRACE OUTCOME" lines of a --schedules file, in order. */
static int read_raw_lines(const char *path, char lines[][160], int max)
{
	char *text = h_read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	cr_assert(text, "cannot read %s", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cr_assert(n < max);
		snprintf(lines[n++], 160, "%s", line);
	}
	free(text);
	return n;
}

/*
 * The thread sequence of an interleave trace: one letter per step.  A trace
 * shows the option each choice took, whatever the strategy (cb orders its
 * options relatively, but records the one it took): options index the
 * threads that have not ended, in the order A, B.  Fails the test on a
 * trace that does not describe 3 steps of each thread.
 */
static void to_sequence(const char *trace, char *seq, size_t len)
{
	int done[2] = {0, 0}, n = 0;
	const char *p = trace;

	cr_assert(len > 6);
	while (*p) {
		int alive[2], nalive = 0, k, t, i;
		char *end;

		k = (int)strtol(p, &end, 10);
		cr_assert(end != p, "bad trace '%s'", trace);
		p = *end == '.' ? end + 1 : end;
		for (i = 0; i < 2; i++)
			if (done[i] < 3)
				alive[nalive++] = i;
		cr_assert(nalive > 0 && k >= 0 && k < nalive, "trace '%s': option %d of %d", trace,
			  k, nalive);
		t = alive[k];
		done[t]++;
		cr_assert(n < 6, "trace '%s' has more than 6 steps", trace);
		seq[n++] = (char)('A' + t);
	}
	seq[n] = 0;
	cr_assert(n == 6 && done[0] == 3 && done[1] == 3, "trace '%s' is not 3 + 3 steps (%s)",
		  trace, seq);
}

/* Preemptions of a sequence: switches away from a thread that had steps left. */
static int preemptions(const char *seq)
{
	int done[2] = {0, 0}, i, n = 0;

	for (i = 0; seq[i]; i++) {
		if (i > 0 && seq[i] != seq[i - 1] && done[seq[i - 1] - 'A'] < 3)
			n++;
		done[seq[i] - 'A']++;
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted distinct strings of a set; returns how many, failing on duplicates
 * if unique is set. */
static int sort_set(char **set, int n, bool unique, const char *what)
{
	int i;

	qsort(set, (size_t)n, sizeof(*set), cmp_str);
	for (i = 1; i < n; i++)
		if (unique)
			cr_assert(strcmp(set[i - 1], set[i]) != 0, "%s: '%s' appears twice", what,
				  set[i]);
	return n;
}

static bool in_set(char *const *set, int n, const char *s)
{
	return bsearch(&s, set, (size_t)n, sizeof(*set), cmp_str) != NULL;
}

/*
 * explore over the interleave fixture with extra options; returns the
 * number of schedule lines and fills seqs (thread sequences, h_fmt-owned).
 * Checks the exit code (0) and that every run completed.
 */
static int interleave(const char *dir, const char *tag, const char *strategy, const char *shard,
		      char **seqs, struct h_result *res)
{
	const char *sched_file = h_fmt("%s/%s.lines", dir, tag);
	const char *out = h_fmt("%s/out-%s", dir, tag);
	struct sline lines[MAX_LINES];
	struct h_result r;
	int n, i;

	if (shard)
		r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", strategy, "--shard", shard,
			    "--out", out, "--json", "--schedules", sched_file, "--",
			    INTERLEAVE_PROG);
	else
		r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", strategy, "--out", out,
			    "--json", "--schedules", sched_file, "--", INTERLEAVE_PROG);
	cr_assert_eq(r.code, 0, "explore --strategy %s %s: exit %d\n%s", strategy,
		     shard ? shard : "", r.code, r.err);
	n = read_schedules(sched_file, lines, MAX_LINES);
	for (i = 0; i < n; i++) {
		char seq[8];

		cr_assert_str_eq(lines[i].outcome, "completed", "%s run %d (%s): %s", strategy,
				 i + 1, lines[i].trace, lines[i].outcome);
		to_sequence(lines[i].trace, seq, sizeof(seq));
		seqs[i] = h_fmt("%s", seq);
	}
	if (res)
		*res = r;
	else
		h_result_free(&r);
	return n;
}

/* -------------------------------------------------- interleave: dfs, bfs */

Test(explore_t, dfs_visits_each_of_the_20_interleavings_once)
{
	const char *dir = workdir();
	char *seqs[MAX_LINES], *traces[MAX_LINES];
	struct sline lines[MAX_LINES];
	struct h_result r;
	int n, i;

	n = interleave(dir, "dfs", "dfs", NULL, seqs, &r);
	cr_assert_eq(n, 20, "dfs made %d runs, expected C(6,3) = 20", n);
	cr_assert_eq(read_schedules(h_fmt("%s/dfs.lines", dir), lines, MAX_LINES), 20);
	for (i = 0; i < n; i++)
		traces[i] = h_fmt("%s", lines[i].trace);
	sort_set(traces, n, true, "dfs choice traces");
	sort_set(seqs, n, true, "dfs thread sequences");
	cr_assert_eq(json_num(r.out, "runs"), 20, "json: %s", r.out);
	cr_assert_eq(json_num(r.out, "bugs"), 0, "json: %s", r.out);
	cr_assert_eq(json_num(r.out, "completed"), 20, "json: %s", r.out);
	cr_assert_eq(json_num(r.out, "diverged"), 0, "json: %s", r.out);
	h_result_free(&r);
}

Test(explore_t, bfs_visits_the_same_set_as_dfs)
{
	const char *dir = workdir();
	char *dfs[MAX_LINES], *bfs[MAX_LINES];
	int nd, nb, i;

	nd = interleave(dir, "dfs", "dfs", NULL, dfs, NULL);
	nb = interleave(dir, "bfs", "bfs", NULL, bfs, NULL);
	cr_assert_eq(nb, 20, "bfs made %d runs", nb);
	sort_set(dfs, nd, true, "dfs");
	sort_set(bfs, nb, true, "bfs");
	cr_assert_eq(nd, nb);
	for (i = 0; i < nd; i++)
		cr_assert_str_eq(dfs[i], bfs[i], "dfs and bfs sets differ at %d", i);
}

/* ------------------------------------------------------------- sharding */

static void check_shards(const char *strategy, int nshards)
{
	const char *dir = workdir();
	char *whole[MAX_LINES], *all[MAX_LINES];
	int nwhole, nall = 0, s, i;

	nwhole = interleave(dir, "whole", strategy, NULL, whole, NULL);
	cr_assert_eq(nwhole, 20);
	sort_set(whole, nwhole, true, "unsharded");
	for (s = 1; s <= nshards; s++) {
		const char *shard = h_fmt("%d/%d", s, nshards);
		char *part[MAX_LINES];
		int np = interleave(dir, h_fmt("shard%d", s), strategy, shard, part, NULL);

		cr_log_info("%s --shard %s: %d runs", strategy, shard, np);
		for (i = 0; i < np; i++) {
			cr_assert(nall < MAX_LINES);
			all[nall++] = part[i];
		}
	}
	/* unique: no schedule in two shards (nor twice in one) */
	sort_set(all, nall, true, h_fmt("union of %d %s shards", nshards, strategy));
	cr_assert_eq(nall, nwhole, "%d shards of %s made %d runs, unsharded %d", nshards, strategy,
		     nall, nwhole);
	for (i = 0; i < nall; i++)
		cr_assert_str_eq(all[i], whole[i], "shards and unsharded differ at %d", i);
}

Test(explore_t, three_dfs_shards_cover_dfs_exactly)
{
	check_shards("dfs", 3);
}

Test(explore_t, two_bfs_shards_cover_bfs_exactly)
{
	check_shards("bfs", 2);
}

/* --jobs splits the shard it is given, not another part of the search:
 * with --shard 2/3 the jobs ran other shards' schedules, or none. */
Test(explore_t, jobs_split_their_shard)
{
	const char *dir = workdir(), *lines = h_fmt("%s/jobs.lines", dir);
	char *alone[MAX_LINES], *jobs[MAX_LINES];
	struct sline sl[MAX_LINES];
	struct h_result r;
	int na, nj, i;

	na = interleave(dir, "alone", "dfs", "2/3", alone, NULL);
	r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", "dfs", "--shard", "2/3", "--jobs",
		    "2", "--out", h_fmt("%s/out-jobs", dir), "--schedules", lines, "--",
		    INTERLEAVE_PROG);
	cr_assert_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	h_result_free(&r);
	nj = read_schedules(lines, sl, MAX_LINES);
	for (i = 0; i < nj; i++) {
		char seq[8];

		to_sequence(sl[i].trace, seq, sizeof(seq));
		jobs[i] = h_fmt("%s", seq);
	}
	cr_assert(na > 0);
	cr_assert_eq(nj, na, "--jobs 2 --shard 2/3 made %d runs, --shard 2/3 %d", nj, na);
	sort_set(alone, na, true, "--shard 2/3");
	sort_set(jobs, nj, true, "--jobs 2 --shard 2/3");
	for (i = 0; i < na; i++)
		cr_assert_str_eq(jobs[i], alone[i], "the jobs' schedules differ at %d", i);
}

/* ---------------------------------------------------- context bounding */

Test(explore_t, cb0_runs_each_thread_to_its_end)
{
	const char *dir = workdir();
	char *seqs[MAX_LINES];
	int n = interleave(dir, "cb0", "cb:0", NULL, seqs, NULL);

	/* The first choice is free (nothing ran before it); after it the chosen
	 * thread goes on until it has ended, then the other one runs. */
	cr_assert_eq(n, 2, "cb:0 made %d runs, expected 2", n);
	sort_set(seqs, n, true, "cb:0");
	cr_assert_str_eq(seqs[0], "AAABBB");
	cr_assert_str_eq(seqs[1], "BBBAAA");
}

Test(explore_t, cb1_schedules_are_a_proper_subset_of_dfs)
{
	const char *dir = workdir();
	char *dfs[MAX_LINES], *cb[MAX_LINES];
	int nd, nc, i;

	nd = interleave(dir, "dfs", "dfs", NULL, dfs, NULL);
	nc = interleave(dir, "cb1", "cb:1", NULL, cb, NULL);
	cr_log_info("cb:1 over interleave-all: %d runs", nc);
	cr_assert(nc > 2 && nc < 20, "cb:1 made %d runs", nc);
	sort_set(dfs, nd, true, "dfs");
	sort_set(cb, nc, true, "cb:1");
	for (i = 0; i < nc; i++)
		cr_assert(in_set(dfs, nd, cb[i]), "cb:1 schedule %s is not a dfs schedule", cb[i]);
}

/*
 * Context bounding proper (CHESS; 000 section 5.1, GenericPatternCB): a
 * preemption is a switch away from a thread that could go on.  Two threads
 * of three steps with at most N preemptions: N = 0 gives 2 sequences (AAABBB,
 * BBBAAA), N = 1 adds the 4 of the shape A+ B+ A+ or B+ A+ B+ (6), N = 2 the
 * 8 of the shape ABAB/BABA with every block non-empty (14), N = 3 the 4 of
 * five blocks (18), N = 4 the last 2 (20).  Every cb:N schedule must have at
 * most N preemptions, and cb:N must visit all of them.
 */
Test(explore_t, cbN_bounds_the_preemptions_of_every_schedule)
{
	static const int expected[] = {2, 6, 14, 18, 20};
	const char *dir = workdir();
	int bound;

	for (bound = 0; bound <= 4; bound++) {
		char *seqs[MAX_LINES];
		int n = interleave(dir, h_fmt("cb%d", bound), h_fmt("cb:%d", bound), NULL, seqs,
				   NULL),
		    i;

		cr_log_info("cb:%d over interleave-all: %d runs (expected %d)", bound, n,
			    expected[bound]);
		for (i = 0; i < n; i++)
			cr_expect(preemptions(seqs[i]) <= bound,
				  "cb:%d ran %s, which has %d preemptions", bound, seqs[i],
				  preemptions(seqs[i]));
		sort_set(seqs, n, true, h_fmt("cb:%d", bound));
		cr_expect_eq(n, expected[bound], "cb:%d made %d runs, expected %d", bound, n,
			     expected[bound]);
	}
}

/* ---------------------------------------------------------------- random */

Test(explore_t, random_is_reproducible_from_its_seed)
{
	const char *dir = workdir();
	char a[MAX_LINES][160], b[MAX_LINES][160], c[MAX_LINES][160];
	const char *fa = h_fmt("%s/a", dir), *fb = h_fmt("%s/b", dir), *fc = h_fmt("%s/c", dir);
	const char *out = h_fmt("%s/out", dir);
	struct h_result r;
	int na, nb, nc, i, same = 0;

	r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", "random", "--seed", "7", "--runs",
		    "30", "--out", out, "--schedules", fa, "--", INTERLEAVE_PROG);
	cr_assert_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", "random", "--seed", "7", "--runs",
		    "30", "--out", out, "--schedules", fb, "--", INTERLEAVE_PROG);
	cr_assert_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", "random", "--seed", "8", "--runs",
		    "30", "--out", out, "--schedules", fc, "--", INTERLEAVE_PROG);
	cr_assert_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	na = read_raw_lines(fa, a, MAX_LINES);
	nb = read_raw_lines(fb, b, MAX_LINES);
	nc = read_raw_lines(fc, c, MAX_LINES);
	cr_assert_eq(na, 30, "random --runs 30 made %d runs", na);
	cr_assert_eq(nb, 30);
	cr_assert_eq(nc, 30);
	for (i = 0; i < na; i++) {
		char seq[8];
		char trace[128];

		cr_assert_str_eq(a[i], b[i], "seed 7, run %d differs between invocations", i + 1);
		sscanf(a[i], "%127s", trace);
		to_sequence(trace, seq, sizeof(seq));
		same += strcmp(a[i], c[i]) == 0;
	}
	cr_assert(same < na, "seeds 7 and 8 gave the same %d schedules", na);
}

/* ------------------------------------------------------ the bank bug */

/* explore the bank with a strategy; returns the runs it needed (json). */
static long bank_runs(const char *dir, const char *sched, const char *strategy, const char *tag,
		      int expect_code)
{
	const char *out = h_fmt("%s/%s", dir, tag);
	struct h_result r = CCTRACE("explore", sched, "--strategy", strategy, "--seed", "1",
				    "--out", out, "--json", "--", BANK_PROG);
	long runs = json_num(r.out, "runs"), bugs = json_num(r.out, "bugs");

	if (expect_code < 0) { /* only measured */
		cr_log_info("%s --strategy %s: exit %d, %s", sched, strategy, r.code, r.out);
		h_result_free(&r);
		return r.code == 1 ? runs : -runs;
	}
	cr_assert_eq(r.code, expect_code, "explore %s --strategy %s: exit %d, expected %d\n%s%s",
		     sched, strategy, r.code, expect_code, r.out, r.err);
	cr_assert_eq(bugs, expect_code == 1 ? 1 : 0, "%s: %s", strategy, r.out);
	if (expect_code == 1)
		cr_assert(access(h_fmt("%s/bug-1.sched", out), R_OK) == 0);
	h_result_free(&r);
	return runs;
}

Test(explore_t, dfs_finds_the_lost_update_and_its_schedule_replays)
{
	const char *dir = workdir();
	const char *sched = h_fmt("%s/bug-1.sched", dir), *txt = h_fmt("%s/bug-1.txt", dir);
	const char *lines = h_fmt("%s/lines", dir);
	struct sline sl[MAX_LINES];
	struct h_result r;
	char *text, *nl, *report;
	int i, n;

	r = CCTRACE("explore", BANK_SEARCH, "--strategy", "dfs", "--out", dir, "--schedules", lines,
		    "--", BANK_PROG);
	cr_assert_eq(r.code, 1, "exit %d, expected 1 (bug found)\n%s", r.code, r.err);
	h_result_free(&r);
	cr_assert(access(sched, R_OK) == 0, "no %s", sched);
	cr_assert(access(txt, R_OK) == 0, "no %s", txt);
	cr_assert(access(h_fmt("%s/bug-2.sched", dir), F_OK) != 0, "a second bug without --all");

	/* The exact schedule: first line is how to replay it; no choices left. */
	text = h_read_file(sched, NULL);
	cr_assert(text);
	nl = strchr(text, '\n');
	cr_assert(nl);
	cr_assert_eq((size_t)(nl - text),
		     strlen(h_fmt("# run: cctrace run %s -- %s", sched, BANK_PROG)));
	cr_assert(strncmp(text, h_fmt("# run: cctrace run %s -- %s", sched, BANK_PROG),
			  (size_t)(nl - text)) == 0,
		  "first line: %.*s", (int)(nl - text), text);
	for (i = 0; i < 3; i++) {
		static const char *const words[] = {"choose", "while", "assume"};
		char *p;

		/* the comment lines may mention the search; the statements may not */
		for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
			char *line = h_fmt("%.*s", (int)strcspn(p, "\n"), p);

			if (*line != '#')
				cr_assert(!strstr(line, words[i]),
					  "bug-1.sched still has '%s':\n%s", words[i], text);
		}
	}
	cr_assert(strstr(text, "run "), "no run statements:\n%s", text);

	/* The report: outcome, strategy, choices, and where it failed. */
	report = h_read_file(txt, NULL);
	cr_assert(report);
	cr_assert(strstr(report, "outcome: bug"), "%s", report);
	cr_assert(strstr(report, "strategy: dfs"), "%s", report);
	n = read_schedules(lines, sl, MAX_LINES);
	cr_assert(n > 0);
	cr_assert_str_eq(sl[n - 1].outcome, "bug");
	cr_assert(strstr(report, h_fmt("choices: %s\n", sl[n - 1].trace)),
		  "bug-1.txt lacks 'choices: %s':\n%s", sl[n - 1].trace, report);
	cr_assert(strstr(report, "assertion failed") || strstr(report, "stack of"), "%s", report);
	cr_assert(strstr(report, "withdraw"), "no trace of withdraw in the report:\n%s", report);

	/* Replay determinism: the exact schedule finds the bug 10 times of 10. */
	for (i = 0; i < 10; i++) {
		r = CCTRACE("run", "--expect", "bug", sched, "--", BANK_PROG);
		cr_assert_eq(r.code, 0, "replay %d of bug-1.sched: exit %d\n%s%s", i + 1, r.code,
			     r.out, r.err);
		h_result_free(&r);
	}
	h_free(report);
	free(text);
}

Test(explore_t, runs_each_strategy_needs_to_reach_the_lost_update)
{
	const char *dir = workdir();
	long dfs, bfs, cb1, cb2, pct, exit_cb0, exit_cb1;

	dfs = bank_runs(dir, BANK_SEARCH, "dfs", "dfs", 1);
	bfs = bank_runs(dir, BANK_SEARCH, "bfs", "bfs", 1);
	/*
	 * In withdraw.search a thread that has returned from withdraw is still
	 * alive, so switching away from it is a preemption: the lost update
	 * (A reads; B reads, writes, returns; A writes) takes 2 preemptions
	 * there.  cb:1 is only measured (a negative count: no bug found).
	 */
	cb1 = bank_runs(dir, BANK_SEARCH, "cb:1", "cb1", -1);
	cb2 = bank_runs(dir, BANK_SEARCH, "cb:2", "cb2", 1);
	pct = bank_runs(dir, BANK_SEARCH, "pct:3", "pct3", 1);
	cr_log_info("bank withdraw.search, runs to the lost update: dfs %ld, bfs %ld, cb:1 %ld, "
		    "cb:2 %ld, pct:3 (seed 1) %ld",
		    dfs, bfs, cb1, cb2, pct);
	printf("bank withdraw.search, runs to the lost update: dfs %ld, bfs %ld, cb:1 %ld, "
	       "cb:2 %ld, pct:3 (seed 1) %ld\n",
	       dfs, bfs, cb1, cb2, pct);
	cr_expect_eq(dfs, BANK_DFS_RUNS, "dfs needed %ld runs", dfs);
	cr_expect_eq(bfs, BANK_BFS_RUNS, "bfs needed %ld runs", bfs);
	cr_expect(cb2 >= 1 && cb2 <= BANK_CB2_BOUND, "cb:2 needed %ld runs", cb2);
	cr_expect_eq(pct, BANK_PCT3_RUNS, "pct:3 --seed 1 needed %ld runs", pct);

	/* With every thread run to its exit one preemption suffices. */
	exit_cb0 = bank_runs(dir, BANK_TO_EXIT, "cb:0", "exit-cb0", 0);
	exit_cb1 = bank_runs(dir, BANK_TO_EXIT, "cb:1", "exit-cb1", 1);
	cr_log_info("bank-to-exit.sched: cb:0 exhausts after %ld runs without the bug, cb:1 finds "
		    "it in %ld",
		    exit_cb0, exit_cb1);
	printf("bank-to-exit.sched: cb:0 %ld runs (no bug), cb:1 %ld runs to the bug\n", exit_cb0,
	       exit_cb1);
	cr_expect_eq(exit_cb0, 2);
	cr_expect(exit_cb1 >= 1 && exit_cb1 <= TO_EXIT_CB1_BOUND, "cb:1 needed %ld runs", exit_cb1);
}

/* ------------------------------------------------------------- assume */

Test(explore_t, assume_false_makes_every_run_infeasible)
{
	const char *dir = workdir();
	const char *out = h_fmt("%s/out", dir);
	struct h_result r =
	    CCTRACE("explore", ASSUME_SCHED, "--out", out, "--json", "--", INTERLEAVE_PROG);
	long runs = json_num(r.out, "runs");
	DIR *d;
	struct dirent *e;

	cr_assert_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_assert(runs >= 2, "json: %s", r.out);
	cr_assert_eq(json_num(r.out, "infeasible"), runs, "json: %s", r.out);
	cr_assert_eq(json_num(r.out, "bugs"), 0, "json: %s", r.out);
	d = opendir(out);
	cr_assert(d, "no %s", out);
	while ((e = readdir(d)))
		cr_assert(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0,
			  "unexpected %s/%s", out, e->d_name);
	closedir(d);
	h_result_free(&r);
}

/* -------------------------------------------------------------- --all */

Test(explore_t, all_keeps_going_after_the_first_bug)
{
	const char *dir = workdir();
	struct h_result r = CCTRACE("explore", BANK_SEARCH, "--strategy", "dfs", "--all",
				    "--no-minimize", "--out", dir, "--json", "--", BANK_PROG);
	long bugs = json_num(r.out, "bugs");

	cr_log_info("bank withdraw.search --all: %s", r.out);
	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_assert(bugs >= 2, "json: %s", r.out);
	cr_assert(access(h_fmt("%s/bug-1.sched", dir), R_OK) == 0);
	cr_assert(access(h_fmt("%s/bug-2.sched", dir), R_OK) == 0);
	cr_assert(access(h_fmt("%s/bug-2.txt", dir), R_OK) == 0);
	cr_assert(access(h_fmt("%s/bug-%ld.sched", dir, bugs), R_OK) == 0);
	cr_assert(access(h_fmt("%s/bug-%ld.sched", dir, bugs + 1), F_OK) != 0);
	h_result_free(&r);
}

/* A schedule without choose is one run under explore too. */
Test(explore_t, a_schedule_without_choices_is_one_run)
{
	const char *dir = workdir();
	struct h_result r = CCTRACE("explore", "samples/bank/lost-update.sched", "--out", dir,
				    "--json", "--", BANK_PROG);

	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_assert_eq(json_num(r.out, "runs"), 1, "json: %s", r.out);
	cr_assert_eq(json_num(r.out, "bugs"), 1, "json: %s", r.out);
	h_result_free(&r);
	/* ...and with jobs, or in shards, the first shard's alone (each job
	 * ran it, and two bugs were written) */
	r = CCTRACE("explore", "samples/bank/lost-update.sched", "--out", h_fmt("%s/j", dir),
		    "--jobs", "2", "--no-minimize", "--json", "--", BANK_PROG);
	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_expect_eq(json_num(r.out, "runs"), 1, "json: %s", r.out);
	cr_expect_eq(json_num(r.out, "bugs"), 1, "json: %s", r.out);
	h_result_free(&r);
	r = CCTRACE("explore", "samples/bank/lost-update.sched", "--out", h_fmt("%s/s", dir),
		    "--shard", "2/2", "--json", "--", BANK_PROG);
	cr_assert_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_expect_eq(json_num(r.out, "runs"), 0, "json: %s", r.out);
	h_result_free(&r);
}

/* A bug schedule has no let or for to bind their variables: their values
 * are written in their place (the asserts that read them named variables
 * the replay did not have, and it failed with exit 3). */
Test(explore_t, let_and_for_values_are_written_into_the_bug_schedule)
{
	const char *dir = workdir();
	const char *sched =
	    h_temp_sched("letfor.sched", "timeout 5s\n"
					 "let expected = 70\n"
					 "thread A, B = wait 2 distinct enter(withdraw)\n"
					 "for i in 1..2 {\n"
					 "\tthread T = choose(A, B)\n"
					 "\trun T until read(balance) || return(withdraw)\n"
					 "\tassert balance >= i\n"
					 "}\n"
					 "run A until return(withdraw)\n"
					 "run B until return(withdraw)\n"
					 "assert balance == expected\n");
	const char *bug = h_fmt("%s/bug-1.sched", dir);
	struct h_result r =
	    CCTRACE("explore", sched, "--no-minimize", "--out", dir, "--", BANK_PROG);
	char *text;

	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	h_result_free(&r);
	text = h_read_file(bug, NULL);
	cr_assert(text && strstr(text, "\nassert balance >= 1\n") &&
		      strstr(text, "\nassert balance >= 2\n") &&
		      strstr(text, "\nassert balance == 70\n"),
		  "%s", text);
	free(text);
	r = CCTRACE("run", "--expect", "bug", bug, "--", BANK_PROG);
	cr_expect_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	h_result_free(&r);
}

/* The minimiser keeps a failed assert's values: dropping every step made
 * `assert balance == 70` fail with balance = 100, before any withdrawal,
 * which is another bug than the lost update's balance = 80. */
Test(explore_t, minimising_keeps_the_failed_asserts_values)
{
	const char *dir = workdir();
	const char *sched =
	    h_temp_sched("lost.sched", "timeout 5s\n"
				       "thread A, B = wait 2 distinct enter(withdraw)\n"
				       "run A until read(balance)\n"
				       "run B until return(withdraw)\n"
				       "run A until return(withdraw)\n"
				       "assert balance == 70\n");
	struct h_result r = CCTRACE("explore", sched, "--out", dir, "--", BANK_PROG);
	const char *found;
	char *report;

	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	h_result_free(&r);
	/* 80 when p1.t3 (20) reached withdraw first, as it mostly does; 90
	 * the other way.  The replay must give the found run's. */
	report = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(report, "no bug-1.txt");
	found = strstr(report, "  balance = 80\n") ? "  balance = 80\n" : "  balance = 90\n";
	cr_assert(strstr(report, found), "%s", report);
	h_free(report);
	r = CCTRACE("run", h_fmt("%s/bug-1.sched", dir), "--", BANK_PROG);
	cr_expect_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, found), "not%s:\n%s", found, r.err);
	h_result_free(&r);
}

/* explore finds the bug of sched on prog, with out dir; the text of its
 * (minimised) bug-1.sched, to h_free. */
static char *explored_bug(const char *dir, const char *sched, const char *prog)
{
	struct h_result r = CCTRACE("explore", sched, "--out", dir, "--", prog);
	char *text;

	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	h_result_free(&r);
	text = h_read_file(h_fmt("%s/bug-1.sched", dir), NULL);
	cr_assert_not_null(text, "no bug-1.sched in %s", dir);
	return text;
}

/* tests/fixtures/lateorder's second worker (p1.t3) always reaches
 * arrive() first, so the wait names it A.  The bug schedule binds A and B
 * again to the threads the found run gave them, and the minimiser keeps
 * those bindings, which no trial it makes would miss. */
Test(explore_t, bug_schedule_binds_a_waits_names_as_the_run_did)
{
	const char *dir = workdir();
	const char *sched =
	    h_temp_sched("late.sched", "thread A, B = wait 2 distinct enter(arrive)\n"
				       "run B until return(arrive)\n"
				       "assert A.id == 1\n");
	char *text = explored_bug(dir, sched, LATEORDER_PROG);
	struct h_result r;

	cr_assert(strstr(text, "\nthread A, B = wait 2 distinct enter(arrive)\n"
			       "thread A = p1.t3   # the threads this run bound, whichever "
			       "comes first\nthread B = p1.t2\n"),
		  "%s", text);
	h_free(text);
	r = CCTRACE("run", h_fmt("%s/bug-1.sched", dir), "--", LATEORDER_PROG);
	cr_expect_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "  A.id = 2\n"), "%s", r.err);
	h_result_free(&r);
}

/* tests/fixtures/crashstep's worker crashes however it is let go: the
 * found schedule's last step runs it into the crash, and without that
 * step the schedule's end would crash it too.  The minimiser keeps the
 * step: a bug the steps made is not left to the threads the end lets go
 * at once, whose race few replays sample (bbuf's NULL could be taken by
 * either worker). */
Test(explore_t, minimising_keeps_the_step_that_made_the_bug)
{
	const char *dir = workdir();
	const char *sched = h_temp_sched("crash.sched", "thread A = wait any enter(prepare)\n"
							"run A until return(prepare)\n"
							"run A until exit\n");
	char *text = explored_bug(dir, sched, CRASHSTEP_PROG);

	cr_assert(strstr(text, "\nrun A until exit\n") && !strstr(text, "return(prepare)"), "%s",
		  text);
	h_free(text);
}

/* Such a binding gives the name to the thread it says, whichever reached
 * the wait first: pinned one way, then the other, so that one of the two
 * is a swap (lateorder's p1.t3 arrives first, but either order would do). */
Test(explore_t, binding_after_a_wait_swaps_its_names)
{
	static const char *const pins[2][2] = {{"p1.t2", "p1.t3"}, {"p1.t3", "p1.t2"}};
	int i;

	for (i = 0; i < 2; i++) {
		const char *sched =
		    h_temp_sched("swap.sched", h_fmt("thread A, B = wait 2 distinct enter(arrive)\n"
						     "thread A = %s\n"
						     "thread B = %s\n"
						     "assert A.id == %d && B.id == %d\n"
						     "run B until return(arrive)\n"
						     "run A until return(arrive)\n",
						     pins[i][0], pins[i][1], i ? 2 : 1, i ? 1 : 2));
		struct h_result r = CCTRACE("run", sched, "--", LATEORDER_PROG);

		cr_expect_eq(r.code, 0, "A = %s: exit %d\n%s", pins[i][0], r.code, r.err);
		h_result_free(&r);
	}
}

/* ------------------------------------------------------------- errors */

Test(explore_t, unknown_strategy_is_an_error)
{
	const char *dir = workdir();
	struct h_result r = CCTRACE("explore", INTERLEAVE_SCHED, "--strategy", "nope", "--out", dir,
				    "--", INTERLEAVE_PROG);

	cr_assert_eq(r.code, 3, "exit %d\n%s", r.code, r.err);
	cr_assert(strstr(r.err, "unknown strategy") &&
		      strstr(r.err, "Try 'cctrace explore --help' for more information."),
		  "%s", r.err);
	h_result_free(&r);
}

/* withdraw.search's first choice has two options: a third shard has no
 * schedule, and says so rather than "every schedule of dfs was run". */
Test(explore_t, empty_shard_says_it_had_none)
{
	const char *dir = workdir();
	struct h_result r =
	    CCTRACE("explore", BANK_SEARCH, "--shard", "3/3", "--out", dir, "--", BANK_PROG);

	cr_assert_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "every schedule of dfs in shard 3/3 was run (it had none: the "
				"search has fewer parts)"),
		  "%s", r.err);
	h_result_free(&r);
}

Test(explore_t, shard_beyond_the_count_is_an_error)
{
	const char *dir = workdir();
	struct h_result r = CCTRACE("explore", INTERLEAVE_SCHED, "--shard", "4/3", "--out", dir,
				    "--", INTERLEAVE_PROG);

	cr_assert_eq(r.code, 3, "exit %d\n%s", r.code, r.err);
	cr_assert(strstr(r.err, "shard"), "%s", r.err);
	h_result_free(&r);
}
