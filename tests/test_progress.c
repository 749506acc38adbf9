/*
 * test_progress.c: what a search says while it runs.  Off a terminal (a
 * CI log) a plain progress line every few seconds and one at the end; on
 * a terminal one line rewritten in place; every bug announced at once with
 * its path; the summary names the output directory; a directory holding
 * an earlier search's bug files refused unless --clean.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <pty.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char g_dir[] = "/tmp/cctrace-progress-XXXXXX";

static void setup(void)
{
	cr_assert(mkdtemp(g_dir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	(void)!system(h_fmt("rm -rf '%s'", g_dir));
}

TestSuite(progress, .init = setup, .fini = teardown, .timeout = 300);

#define BANK "samples/bank/withdraw.search"

Test(progress, plain_lines_off_a_terminal)
{
	/* random never runs out: the 6 s budget ends it, past the first 5 s line */
	struct h_result r =
	    H_RUN(h_cctrace(), "explore", BANK, "--strategy", "random", "--runs", "1000000",
		  "--all", "--time", "6s", "-o", h_fmt("%s/out", g_dir), "--", "samples/bank/bank");

	cr_assert(r.code == 0 || r.code == 1, "exit %d: %s", r.code, r.err);
	cr_assert_geq(h_count_lines(r.err, "s elapsed"), 2,
		      "a line every 5 s and one at the end:\n%s", r.err);
	cr_assert(!strchr(r.err, '\r'), "no carriage return off a terminal");
	h_result_free(&r);
}

/* test's default portfolio is rounds of 10 runs, each a search of its own:
 * its progress is still one search's, a line every 5 s counting every
 * round from the start, the last line's count the summary's. */
Test(progress, a_portfolio_s_lines_count_the_whole_search)
{
	struct h_result r = H_RUN(h_cctrace(), "test", "--runs", "1000000", "--time", "6s", "-o",
				  h_fmt("%s/out", g_dir), "--", "tests/fixtures/sercontrol");
	long runs = 0, last = 0, summary = -1;
	int lines = 0;
	const char *at;

	cr_assert_eq(r.code, 0, "exit %d: %s", r.code, r.err);
	for (at = r.err; (at = strstr(at, "cctrace test: ")); at++) {
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(at, "\n"), at);
		if (strstr(line, " s elapsed")) {
			cr_assert_eq(sscanf(line, "cctrace test: %ld runs,", &runs), 1, "%s", line);
			cr_assert_gt(runs, last, "the count went back:\n%s", r.err);
			last = runs;
			lines++;
		} else if (strstr(line, " completed")) {
			cr_assert_eq(sscanf(line, "cctrace test: %ld runs, 0 bugs", &summary), 1,
				     "%s", line);
		}
	}
	cr_assert(lines >= 2 && lines <= 3,
		  "a line every 5 s and one at the end, not one a round:\n%s", r.err);
	cr_assert_gt(last, 100, "%s", r.err);
	cr_assert_eq(last, summary, "the last line counts every run:\n%s", r.err);
	h_result_free(&r);
}

Test(progress, a_bug_is_announced_with_its_path_and_the_summary_names_the_directory)
{
	char *out = h_fmt("%s/out", g_dir);
	struct h_result r =
	    H_RUN(h_cctrace(), "explore", "-q", BANK, "-o", out, "--", "samples/bank/bank");

	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(strstr(r.err, h_fmt("cctrace explore: bug 1 in run 14: %s/bug-1.sched\n", out)),
		  "%s", r.err);
	cr_assert(strstr(r.err, h_fmt(" in %s\n", out)), "summary names %s:\n%s", out, r.err);
	cr_assert_eq(h_count_lines(r.err, "s elapsed"), 0, "-q: no progress:\n%s", r.err);
	h_result_free(&r);
}

Test(progress, an_earlier_search_s_bug_files_are_refused_then_cleaned)
{
	char *out = h_fmt("%s/out", g_dir);
	struct h_result r =
	    H_RUN(h_cctrace(), "explore", "-q", BANK, "-o", out, "--", "samples/bank/bank");

	cr_assert_eq(r.code, 1, "%s", r.err);
	h_result_free(&r);
	h_write_file(h_fmt("%s/bug-1.html", out), "stale");
	r = H_RUN(h_cctrace(), "explore", "-q", BANK, "-o", out, "--", "samples/bank/bank");
	cr_assert_eq(r.code, 3, "%s", r.err);
	cr_assert(strstr(r.err, "earlier search") && strstr(r.err, "bug-1.sched") &&
		      strstr(r.err, "--clean"),
		  "%s", r.err);
	cr_assert(!strstr(r.err, "bug 1 in run"), "nothing ran:\n%s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "explore", "-q", "--clean", BANK, "-o", out, "--",
		  "samples/bank/bank");
	cr_assert_eq(r.code, 1, "%s", r.err);
	h_free(h_read_file(h_fmt("%s/bug-1.sched", out), NULL));
	cr_assert(!strstr(h_read_file(h_fmt("%s/bug-1.html", out), NULL), "stale"));
	h_result_free(&r);
}

Test(progress, one_line_rewritten_in_place_on_a_terminal)
{
	int fd;
	pid_t pid = forkpty(&fd, NULL, NULL, NULL);
	char *text;
	int status;

	cr_assert_geq(pid, 0, "forkpty: %s", strerror(errno));
	if (pid == 0) {
		execl(h_cctrace(), "cctrace", "explore", BANK, "-o", h_fmt("%s/out", g_dir), "--",
		      "samples/bank/bank", (char *)NULL);
		_exit(127);
	}
	text = h_read_all(fd, 120);
	cr_assert_eq(h_wait(pid, 60, &status), 1, "%s", text);
	cr_assert(strstr(text, "\rcctrace explore: ") && strstr(text, "\033[K"),
		  "a line rewritten in place:\n%s", text);
	cr_assert(strstr(text, "runs/s") && strstr(text, "s elapsed") && strstr(text, "bugs"), "%s",
		  text);
	cr_assert(strstr(text, "cctrace explore: bug 1 in run 14: "), "%s", text);
}
