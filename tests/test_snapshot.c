/*
 * System tests of runs forked from a template (engine/snapshot.c,
 * tracer/fork.c): `cctrace test` holds one copy of the program at its
 * entry point and forks every run from it, unless --no-snapshot.
 *
 * What must hold: the search is the same either way (a seed finds the
 * same bug in the same run, with the same schedule); no process is left
 * behind (the template, nor any zombie of its); a thread created before
 * main (a constructor) is no obstacle, the runs starting before any
 * constructor; a static program, which has no _Fork, forks all the
 * same; and each run's stdout and stderr
 * are its own (the template's stderr file is emptied for each run).
 */
#include "harness.h"

#include <sys/stat.h>

#define SNAP_SAFETY_S 120

/* `cctrace test` with seed 1, no minimisation and --runs runs. */
static struct h_result search(const char *prog, const char *strategy, int runs, const char *dir)
{
	return h_run((const char *const[]){h_cctrace(), "test", "-q", "--no-minimize", "--seed",
					   "1", "--timeout", "2s", "--strategy", strategy, "--runs",
					   h_fmt("%d", runs), "--out", dir, "--clean", "--", prog,
					   NULL},
		     SNAP_SAFETY_S);
}

/* The schedule after its first line (which names the bug file). */
static const char *schedule_body(const char *dir)
{
	char *text = h_read_file(h_fmt("%s/bug-1.sched", dir), NULL);
	char *nl = text ? strchr(text, '\n') : NULL;

	cr_assert(nl, "no %s/bug-1.sched", dir);
	return nl + 1;
}

/* prog's bug found with and without the template: the same summary
 * line (runs to the bug, outcomes) and the same bug schedule. */
static void expect_same_search(const char *prog, const char *strategy, int runs)
{
	char *fresh_dir = h_temp_dir(), *snap_dir = h_temp_dir();
	struct h_result fresh =
	    h_run((const char *const[]){h_cctrace(), "test", "-q", "--no-minimize", "--no-snapshot",
					"--seed", "1", "--timeout", "2s", "--strategy", strategy,
					"--runs", h_fmt("%d", runs), "--out", fresh_dir, "--", prog,
					NULL},
		  SNAP_SAFETY_S);
	struct h_result snap = search(prog, strategy, runs, snap_dir);
	const char *a = strstr(fresh.err, "cctrace test: bug 1 in run"),
		   *b = strstr(snap.err, "cctrace test: bug 1 in run");

	cr_assert_eq(fresh.code, 1, "no bug without the template (exit %d):\n%s", fresh.code,
		     fresh.err);
	cr_assert_eq(snap.code, 1, "no bug with the template (exit %d):\n%s", snap.code, snap.err);
	cr_assert(a && b, "%s\n---\n%s", fresh.err, snap.err);
	cr_expect_eq(strcspn(a, ":"), strcspn(b, ":"));
	cr_expect(strncmp(a, b, strcspn(a, ":")) == 0, "fresh: %.*s; snapshot: %.*s",
		  (int)strcspn(a, ":"), a, (int)strcspn(b, ":"), b);
	a = strstr(a, "\ncctrace test: ");
	b = strstr(b, "\ncctrace test: ");
	cr_assert(a && b);
	cr_expect(strncmp(a, b, strcspn(a, ";")) == 0, "fresh:%s\nsnapshot:%s", a, b);
	cr_expect_str_eq(schedule_body(fresh_dir), schedule_body(snap_dir));
	h_result_free(&fresh);
	h_result_free(&snap);
	h_remove_tree(fresh_dir);
	h_remove_tree(snap_dir);
}

Test(snapshot, the_same_bug_in_the_same_run)
{
	expect_same_search("tests/fixtures/sercounter", "pct:3", 60);
}

Test(snapshot, the_same_deadlock_in_the_same_run)
{
	expect_same_search("tests/fixtures/serdeadlock", "random", 60);
}

/* A constructor's thread runs in each forked run, as in a launched one. */
Test(snapshot, a_thread_before_main)
{
	expect_same_search("tests/fixtures/serctor", "pct:3", 60);
}

/* --verbose says why when runs are launched afresh instead of forked.
 * (--points sync: the launch is what is tested, not the profile.) */
static struct h_result verbose_search(const char *prog, const char *dir)
{
	return h_run((const char *const[]){h_cctrace(), "test", "--verbose", "--no-minimize",
					   "--points", "sync", "--seed", "1", "--strategy", "pct:3",
					   "--runs", "3", "--out", dir, "--clean", "--", prog,
					   NULL},
		     SNAP_SAFETY_S);
}

/* A static program has no _Fork (it links one only if it forks), and
 * needs none: at its entry point it has run nothing, and a bare clone is
 * its fork (tracer/fork.c).  Its runs are forked, with and without
 * debugging information, and make the same search as launched ones.
 * Before, they were launched afresh ("the program has no _Fork"). */
Test(snapshot, a_static_program_forks_without_fork_function)
{
	static const char *const progs[] = {"tests/fixtures/sercontrol", "tests/fixtures/serstatic",
					    "tests/fixtures/serstatic-nodebug"};
	char *dir = h_temp_dir();
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct h_result r = verbose_search(progs[i], dir);

		cr_expect(r.code == 0 || r.code == 1, "%s: exit %d:\n%s", progs[i], r.code, r.err);
		cr_expect(strstr(r.err, "3 runs"), "%s:\n%s", progs[i], r.err);
		cr_expect(!strstr(r.err, "launched afresh"), "%s:\n%s", progs[i], r.err);
		h_result_free(&r);
	}
	h_remove_tree(dir);
}

Test(snapshot, the_same_bug_in_the_same_run_of_a_static_program)
{
	expect_same_search("tests/fixtures/serstatic", "pct:3", 60);
}

/* Processes whose name (comm) is name: none may be left. */
static int processes_named(const char *name)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char comm[64];
	int n = 0;

	cr_assert(d);
	while ((e = readdir(d))) {
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		f = fopen(h_fmt("/proc/%s/comm", e->d_name), "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strncmp(comm, name, strlen(name)) == 0 &&
		    comm[strlen(name)] == '\n')
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The template and the runs' processes are gone when the search ends,
 * zombies included: a copy of the program under a name of its own shows
 * it whatever else runs meanwhile.  The search's summary holds summary. */
static void expect_nothing_left_behind(const char *fixture, const char *summary)
{
	char *dir = h_temp_dir(), *copy = h_fmt("%s/snapleft%d", dir, (int)getpid());
	char *name = strrchr(copy, '/') + 1;
	struct h_result r;

	r = H_RUN("cp", fixture, copy);
	cr_assert_eq(r.code, 0);
	h_result_free(&r);
	r = search(copy, "random", 20, dir);
	cr_expect(r.code == 0 || r.code == 1, "exit %d:\n%s", r.code, r.err);
	cr_expect(strstr(r.err, summary), "not \"%s\":\n%s", summary, r.err);
	cr_expect_eq(processes_named(name), 0, "%s left behind", name);
	h_result_free(&r);
	h_remove_tree(dir);
}

Test(snapshot, nothing_is_left_behind)
{
	expect_nothing_left_behind("tests/fixtures/sercontrol", "20 runs, 0 bugs, 20 completed");
}

/* ...nor of a static program's template, forked without _Fork; this one
 * ends its search at its first bug. */
Test(snapshot, nothing_of_a_static_program_is_left_behind)
{
	expect_nothing_left_behind("tests/fixtures/serstatic", " 1 bug,");
}

/* Each run's stdout and stderr are its own: serubsan prints one line on
 * stdout per run, and UBSan's report (on stderr) only in the runs with
 * the lost update; a report left over from an earlier run would be
 * counted again in every later one.  The runs that show the bug are the
 * one written and its repeats (each bug is written once). */
Test(snapshot, output_stays_per_run)
{
	char *dir = h_temp_dir();
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "test", "-q", "--all", "--no-minimize",
					"--seed", "1", "--strategy", "random", "--runs", "20",
					"--out", dir, "--", "tests/fixtures/serubsan", NULL},
		  SNAP_SAFETY_S);
	const char *summary = strstr(r.err, "cctrace test: 20 runs, ");
	int bugs = -1, repeats = 0, reports;

	cr_expect_eq(r.code, 1, "exit %d:\n%s", r.code, r.err);
	cr_assert(summary && sscanf(summary, "cctrace test: 20 runs, %d bugs", &bugs) == 1, "%s",
		  r.err);
	if (strstr(summary, "repeated a bug"))
		cr_assert_eq(
		    sscanf(strstr(summary, "diverged, "), "diverged, %d repeated", &repeats), 1,
		    "%s", r.err);
	cr_expect(bugs == 1 && repeats < 19, "%d bugs, %d repeats in 20 runs:\n%s", bugs, repeats,
		  r.err);
	/* The profiling runs and the replay that counts a bug's statistics
	 * (bugstats.c) show nothing of the program's. */
	reports = h_count_lines(r.err, "runtime error: index -1 out of bounds");
	cr_expect_eq(reports, bugs + repeats, "%d reports, %d bugs, %d repeats:\n%s", reports, bugs,
		     repeats, r.err);
	cr_expect_eq(h_count_lines(r.out, ""), 20, "stdout:\n%s", r.out);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* The search's own replays (minimisation's, by the tens, and the bug
 * statistics') print nothing of the program's: stdout has one line per
 * run of the search, not one per replay. */
Test(snapshot, replays_print_nothing_of_the_program)
{
	char *dir = h_temp_dir();
	struct h_result r =
	    h_run((const char *const[]){h_cctrace(), "test", "-q", "--seed", "1", "--strategy",
					"random", "--runs", "3", "--out", dir, "--",
					"tests/fixtures/serubsan", NULL},
		  SNAP_SAFETY_S);
	const char *line = r.err;
	int runs = -1;

	cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.err);
	while (runs < 0 && (line = strstr(line, "cctrace test: ")))
		if (sscanf(line++, "cctrace test: %d runs,", &runs) != 1)
			runs = -1;
	cr_assert(runs > 0, "no summary:\n%s", r.err);
	cr_expect_eq(h_count_lines(r.out, ""), runs, "%d runs, stdout:\n%s", runs, r.out);
	h_result_free(&r);
	h_remove_tree(dir);
}
