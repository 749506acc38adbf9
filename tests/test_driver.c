/*
 * test_driver.c: searching a server with a client that judges it.
 *
 * tests/fixtures/counterd loses an increment when two bump() calls
 * interleave; tests/schedules/counterd-driver.sh sends two concurrent
 * "incr" and fails when the count is not 2.  `explore --driver` must find
 * the interleaving without being told it, write a schedule whose run line
 * carries the driver, and that line must replay the bug 10 of 10 times.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(driver, explore_finds_the_lost_increment_and_the_run_line_replays_it)
{
	char dir[] = "/tmp/cctrace-driver-XXXXXX";
	char *port, *driver, *line, *report;
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	port = h_fmt("%s/port", dir);
	driver = h_fmt("tests/schedules/counterd-driver.sh %s", port);
	{
		const char *argv[] = {h_cctrace(), "explore", "tests/schedules/counterd.sched",
				      "--out",	   dir,	      "--driver",
				      driver,	   "--",      "tests/fixtures/counterd",
				      port,	   NULL};

		r = h_run(argv, 240);
	}
	cr_assert_eq(r.code, 1, "explore did not find the bug:\n%s", r.err);
	h_result_free(&r);
	report = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(report && strstr(report, "cctrace: bug: the driver exited with status 1"));
	free(report);
	line = h_run_line(h_fmt("%s/bug-1.sched", dir));
	cr_assert(strncmp(line, "--driver '", 10) == 0, "%s", line);
	cr_expect_eq(h_bug_replays(line, 10), 10, "not every replay of %s shows the bug", line);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

/* With --jobs every worker runs its own server: "{job}" in the program's
 * arguments and in the driver gives each its own port file.  The bug file
 * gathered from a worker keeps the driver and the arguments of that job. */
Test(driver, jobs_give_each_worker_its_own_server)
{
	char dir[] = "/tmp/cctrace-driver-XXXXXX";
	char *line, *job;
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	{
		const char *argv[] = {
		    h_cctrace(),
		    "explore",
		    "tests/schedules/counterd.sched",
		    "--jobs",
		    "2",
		    "--no-minimize",
		    "--out",
		    dir,
		    "--driver",
		    h_fmt("tests/schedules/counterd-driver.sh %s/port-{job}", dir),
		    "--",
		    "tests/fixtures/counterd",
		    h_fmt("%s/port-{job}", dir),
		    NULL};

		r = h_run(argv, 240);
	}
	cr_assert_eq(r.code, 1, "explore --jobs 2 did not find the bug:\n%s", r.err);
	h_result_free(&r);
	cr_expect_eq(access(h_fmt("%s/port-{job}", dir), F_OK), -1, "{job} was not replaced");
	line = h_run_line(h_fmt("%s/bug-1.sched", dir));
	job = strstr(line, "/port-");
	cr_assert(job && (job[6] == '1' || job[6] == '2'), "%s", line);
	cr_expect_str_eq(line, h_fmt("--driver 'tests/schedules/counterd-driver.sh %s/port-%c' "
				     "%s/bug-1.sched -- tests/fixtures/counterd %s/port-%c",
				     dir, job[6], dir, dir, job[6]));
	cr_expect_eq(h_bug_replays(line, 3), 3, "not every replay of %s shows the bug", line);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}
