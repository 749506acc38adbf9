/*
 * Typestate mode on a real program: pbzip2 0.9.4 with 2ndStrike's
 * pbzip2-lck (main destroys and frees the queue's mutex while a consumer
 * may still use it), built from ../shared/benchmarks and run on its
 * test.tar: `cctrace typestate --model lock,memory` manifests the bug and
 * its bug-1.sched replays 10 of 10 times.  The same command without
 * cctrace is run a few times as a stress baseline, printed, never
 * asserted (docs/typestate.md has the measurements).  `cctrace test`, with
 * no schedule and no model, finds the same bug.  A suite of its own
 * (tests/test_typestate.c has the samples): one suite per binary.
 */
#include "harness.h"

#include <sys/stat.h>
#include <sys/wait.h>

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

TestSuite(pbzip2, .fini = h_cleanup, .timeout = 900);

#define STRESS_RUNS 20 /* docs/typestate.md has a 50-run baseline; this keeps make test short */

/* The benchmark's directory, beside the project's checkout. */
static const char *benchmark_dir(void)
{
	static const char *const candidates[] = {"../shared/benchmarks/pbzip2-0.9.4",
						 "../../shared/benchmarks/pbzip2-0.9.4",
						 "/work/shared/benchmarks/pbzip2-0.9.4"};
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (exists(h_fmt("%s/pbzip2.cpp", candidates[i])))
			return candidates[i];
	cr_assert_fail("pbzip2 0.9.4 is not in ../shared/benchmarks/pbzip2-0.9.4");
	return NULL;
}

/* pbzip2 built from the benchmark's source into dir, with test.tar. */
static void build_pbzip2(const char *dir)
{
	const char *src = benchmark_dir();

	cr_assert(exists("/usr/include/bzlib.h"),
		  "libbz2-dev is missing (bzlib.h): run make deps to install it");
	cr_assert_eq(
	    system(h_fmt("g++ -g -O0 -pthread -w -o %s/pbzip2 %s/pbzip2.cpp -lbz2", dir, src)), 0,
	    "cannot build pbzip2 from %s", src);
	cr_assert_eq(system(h_fmt("cp %s/test.tar %s/ && chmod u+w %s/test.tar", src, dir, dir)),
		     0);
}

Test(pbzip2, typestate_manifests_the_lock_bug)
{
	char *dir = h_temp_dir(), *out = h_fmt("%s/out", dir), *prog = h_fmt("%s/pbzip2", dir);
	char *tar = h_fmt("%s/test.tar", dir);
	/* --runs 10: the first bug comes at rank 1 or 2; the rest (32
	 * candidates with the stepping profile's loads) would only lengthen
	 * make test */
	const char *const argv[] = {h_cctrace(), "typestate", "--model", "lock,memory", "--timeout",
				    "1s",	 "--runs",    "10",	 "-o",		out,
				    "--",	 prog,	      "-k",	 "-f",		"-q",
				    "-p2",	 "-1",	      "-b1",	 tar,		NULL};
	int64_t t0;
	struct h_result r;
	int i, crashes = 0, ok;

	build_pbzip2(dir);
	/* Stress: the same command without cctrace. */
	for (i = 0; i < STRESS_RUNS; i++) {
		int status = system(h_fmt("%s -k -f -q -p2 -1 -b1 %s >/dev/null 2>&1", prog, tar));

		crashes += !WIFEXITED(status) || WEXITSTATUS(status) > 128;
	}
	t0 = h_now_ms();
	r = h_run(argv, 800);
	cr_log_info("pbzip2: typestate took %.1f s (exit %d); stress: %d of %d plain runs crashed",
		    (double)(h_now_ms() - t0) / 1000.0, r.code, crashes, STRESS_RUNS);
	fprintf(stderr, "pbzip2: %d of %d plain runs crashed; typestate:\n%s", crashes, STRESS_RUNS,
		r.err);
	cr_assert_eq(r.code, 1, "no bug manifested:\n%s", r.err);
	cr_assert(strstr(r.err, "first bug manifested"), "%s", r.err);
	ok = h_bug_replays(h_run_line(h_fmt("%s/bug-1.sched", out)), 10);
	cr_assert_eq(ok, 10, "bug-1.sched replayed %d of 10 times", ok);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* The same bug found with no schedule and no model: `cctrace test`
 * serializes pbzip2's threads and a pct round finds a consumer's
 * pthread_mutex_lock on the queue main has freed (SEGV), and the schedule
 * it writes replays 10 of 10 times.  The consumers wait for work a second
 * at a time (pthread_cond_timedwait) and main ends them without a signal:
 * before timed waits could time out in a serialized run, every run was a
 * false deadlock, main's pthread_cond_destroy waiting for them. */
Test(pbzip2, test_finds_the_lock_bug_without_a_schedule)
{
	char *dir = h_temp_dir(), *out = h_fmt("%s/out", dir), *prog = h_fmt("%s/pbzip2", dir);
	char *tar = h_fmt("%s/test.tar", dir), *txt;
	const char *const argv[] = {
	    h_cctrace(), "test", "-q", "--no-minimize", "--time", "120s", "--out", out, "--", prog,
	    "-k",	 "-f",	 "-q", "-p2",		"-1",	  "-b1",  tar,	   NULL};
	struct h_result r;
	int ok;

	build_pbzip2(dir);
	r = h_run(argv, 300);
	cr_assert_eq(r.code, 1, "no bug (exit %d):\n%s", r.code, r.err);
	txt = h_read_file(h_fmt("%s/bug-1.txt", out), NULL);
	cr_assert_not_null(txt);
	/* pbzip2 is C++: its consumer(void *) is _Z8consumerPv, shown demangled */
	cr_assert(strstr(txt, "received SEGV") && strstr(txt, " consumer+"), "%s", txt);
	cr_assert(!strstr(txt, "_Z8consumerPv"), "%s", txt);
	cr_assert(!strstr(txt, "deadlock"), "%s", txt);
	ok = h_bug_replays(h_run_line(h_fmt("%s/bug-1.sched", out)), 10);
	cr_assert_eq(ok, 10, "bug-1.sched replayed %d of 10 times", ok);
	h_free(txt);
	h_result_free(&r);
	h_remove_tree(dir);
}
