/*
 * System tests: a real memcached bug, RE-INJECTED on purpose.
 *
 * memcached 1.6.18 is built from Debian's source package with debug info
 * and tests/memcached/reinject-incr-race.patch (tests/memcached/build.sh):
 * the patch brings back the classic lost update of incr/decr (memcached
 * issue 127, fixed upstream by holding the item lock across the
 * read-modify-write in do_add_delta).  This memcached is not the one
 * Debian ships; the bug is there because the test put it there.
 *
 * 1. The exact schedule: A reads the value, B does a whole incr, A writes
 *    its stale result.  Two concurrent "incr k 10" on 0 must leave 10, in
 *    10 of 10 attaches.  The same two clients without cctrace show the bug
 *    in some runs only; that count is printed (stress baseline), not
 *    asserted.
 * 2. The search: `cctrace explore --driver` over a SearchInFunc schedule
 *    (tests/memcached/incr-search.sched) finds the bug without being told
 *    the interleaving, and its bug-1.sched replays it 10 of 10 times.
 */
#include "memcached.h"

TestSuite(memcached_bug, .fini = h_cleanup, .timeout = 180);

#define BASELINE_RUNS 300

/* The path of the patched memcached, built (or found in the cache). */
static char *patched_memcached(void)
{
	FILE *p = popen("tests/memcached/build.sh", "r");
	char path[PATH_MAX] = "";
	int status;

	cr_assert(p);
	if (!fgets(path, sizeof(path), p))
		path[0] = 0;
	status = pclose(p);
	path[strcspn(path, "\n")] = 0;
	cr_assert(status == 0 && path[0], "tests/memcached/build.sh failed (make system-deps?)");
	return h_fmt("%s", path);
}

/*
 * The line after do_add_delta has read the value: the first `if (incr) {`
 * after `safe_strtoull(ptr, &value)` in the patched source.
 */
static int line_after_read(const char *bin)
{
	char *dir = h_fmt("%s", bin), *src, *line, *nl;
	int n = 0, read_at = 0, found = 0;

	*strrchr(dir, '/') = 0;
	src = h_read_file(h_fmt("%s/memcached.c", dir), NULL);
	cr_assert(src, "no memcached.c next to %s", bin);
	for (line = src; line && !found; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		n++;
		if (strstr(line, "safe_strtoull(ptr, &value)"))
			read_at = n;
		else if (read_at && strcmp(line, "    if (incr) {") == 0)
			found = n;
	}
	h_free(src);
	cr_assert(found, "cannot find the value read in do_add_delta");
	return found;
}

static void set_counter_to_zero(int port)
{
	/* Two bytes ("0 ", space padded as memcached leaves a counter after a
	 * decr), so that both incr write "10" in place. */
	char *r = mc_ask(port, "set k 0 0 2\r\n0 \r\n", "\r\n");

	cr_assert(r && strcmp(r, "STORED\r\n") == 0, "set: %s", r);
}

static long counter(int port)
{
	char *r = mc_ask(port, "get k\r\n", "END\r\n");
	long v = -1;

	cr_assert(r && sscanf(r, "VALUE k 0 %*d\r\n%ld", &v) == 1, "get k: %s", r);
	return v;
}

/* Two connections send "incr k 10" back to back; waits for both replies. */
static void two_incr(int port)
{
	int a = mc_dial(port), b = mc_dial(port);

	cr_assert(a >= 0 && b >= 0);
	mc_send(a, "incr k 10\r\n");
	mc_send(b, "incr k 10\r\n");
	cr_assert(mc_recv_until(a, "\r\n", 10000), "no reply to A's incr");
	cr_assert(mc_recv_until(b, "\r\n", 10000), "no reply to B's incr");
	close(a);
	close(b);
}

/* One round of the two clients without cctrace: 1 if the update (or the
 * key) was lost, 0 if not, -1 if the server stopped answering. */
static int baseline_round(int port)
{
	char *r = mc_ask(port, "set k 0 0 2\r\n0 \r\n", "\r\n");
	int a, b, answered;
	long v = -1;

	if (!r || strcmp(r, "STORED\r\n") != 0)
		return -1;
	a = mc_dial(port);
	b = mc_dial(port);
	answered = a >= 0 && b >= 0 && send(a, "incr k 10\r\n", 11, MSG_NOSIGNAL) == 11 &&
		   send(b, "incr k 10\r\n", 11, MSG_NOSIGNAL) == 11 &&
		   mc_recv_until(a, "\r\n", 10000) && mc_recv_until(b, "\r\n", 10000);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	r = answered ? mc_ask(port, "get k\r\n", "END\r\n") : NULL;
	if (!r)
		return -1;
	/* Unsynchronised, the race can also lose the key itself (two
	 * item_replace calls interleaved): that counts as the bug too. */
	if (strcmp(r, "END\r\n") == 0)
		return 1;
	return sscanf(r, "VALUE k 0 %*d\r\n%ld", &v) == 1 ? v != 20 : -1;
}

/*
 * The stress-testing baseline: the same clients, no cctrace, on a server
 * of its own.  Printed, not asserted.  Without the item lock the race can
 * also corrupt memcached's memory and crash it (here after a few thousand
 * rounds): the baseline then stops and says so.
 */
static void stress_baseline(const char *bin)
{
	struct mc m;
	int i, rc = 0, lost = 0;

	mc_start(&m, bin, 4);
	for (i = 0; i < BASELINE_RUNS && rc >= 0; i++) {
		rc = baseline_round(m.port);
		lost += rc == 1;
	}
	cr_log_info("re-injected incr race: cctrace 10 of 10, stress without cctrace %d of %d",
		    lost, i);
	fprintf(stderr,
		"memcached_bug: stress baseline without cctrace: lost update in %d of %d runs%s\n",
		lost, i,
		rc < 0 ? " (then the server crashed, a consequence of the same race)" : "");
	if (rc >= 0) {
		mc_stop(&m);
		return;
	}
	kill(m.proc.pid, SIGKILL);
	h_wait(m.proc.pid, 10, NULL);
}

Test(memcached_bug, reinjected_incr_race_loses_an_update_in_10_of_10_attaches)
{
	char *bin = patched_memcached(), *sched;
	int i, lost = 0;
	struct mc m;
	uint64_t bp;

	sched = h_temp_sched("incr-race.sched",
			     h_fmt("timeout 10s\n"
				   "thread A, B = wait 2 distinct enter(do_add_delta)\n"
				   "run A until at(memcached.c:%d)   # A has read the value\n"
				   "run B until return(do_add_delta)\n"
				   "run A until return(do_add_delta) # writes its stale sum\n"
				   "release all\n",
				   line_after_read(bin)));
	mc_start(&m, bin, 4);
	bp = h_symbol_addr(m.proc.pid, "/memcached", "do_add_delta");
	for (i = 0; i < 10; i++) {
		struct h_proc cc;
		char *out;
		int code;

		set_counter_to_zero(m.port);
		cc = mc_attach(m.proc.pid, sched, false);
		h_wait_int3(m.proc.pid, bp, &cc, 30000);
		two_incr(m.port);
		out = h_read_all(cc.err, 20);
		code = h_wait(cc.pid, 20, NULL);
		close(cc.err);
		cr_expect_eq(code, 0, "attach %d: cctrace exited %d:\n%s", i, code, out);
		cr_expect_eq(h_count_lines(out, "at(memcached.c:"), 1, "%s", out);
		if (counter(m.port) == 10)
			lost++;
		h_free(out);
	}
	cr_expect_eq(lost, 10, "the update was lost in %d of 10 attaches", lost);
	mc_expect_untraced(m.proc.pid, "after the attaches");
	mc_stop(&m);
	stress_baseline(bin);
}

Test(memcached_bug, explore_finds_the_reinjected_incr_race_and_bug_1_replays_it)
{
	char dir[] = "/tmp/cctrace-mcbug-XXXXXX";
	char *bin = patched_memcached(), *port, *driver, *line, *report;
	struct h_result r;
	int ok;

	cr_assert_not_null(mkdtemp(dir));
	port = h_fmt("%d", mc_free_port());
	driver = h_fmt("tests/memcached/incr-driver.sh %s", port);
	{
		const char *argv[] = {h_cctrace(),
				      "explore",
				      "tests/memcached/incr-search.sched",
				      "--no-minimize",
				      "--out",
				      dir,
				      "--driver",
				      driver,
				      "--",
				      bin,
				      "-l",
				      "127.0.0.1",
				      "-p",
				      port,
				      "-U",
				      "0",
				      "-t",
				      "4",
				      "-u",
				      "root",
				      NULL};

		r = h_run(argv, 120);
	}
	cr_assert_eq(r.code, 1, "explore did not find the bug (exit %d):\n%s", r.code, r.err);
	h_result_free(&r);
	report = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(report && strstr(report, "cctrace: bug: the driver exited with status 1"), "%s",
		  report);
	h_free(report);
	line = h_run_line(h_fmt("%s/bug-1.sched", dir));
	cr_assert(strncmp(line, "--driver '", 10) == 0, "%s", line);
	ok = h_bug_replays(line, 10);
	cr_expect_eq(ok, 10, "bug-1.sched reproduced the lost update in %d of 10 replays: %s", ok,
		     line);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}
