/*
 * test_watchmode.c: hardware and software watchpoints, and the choice
 * between them.
 *
 * Hosts differ: on some the debug registers trap, on others the kernel
 * takes DR0-DR7 and the CPU never traps.  Every test here runs on both.
 * Which path `auto` takes is steered through the per-boot cache of the
 * probe (a file under $XDG_CACHE_HOME), so that each answer is exercised
 * on every host; a test that needs registers that really trap says so and
 * is skipped where they do not.
 */
#include "tests/harness.h"
#include "tracer/tracer.h"

#include <sys/stat.h>

#define BANK	   "samples/bank/bank"
#define BANK_SCHED "samples/bank/lost-update.sched"

/* A fresh cache directory for this test, and no mode from the environment
 * (the CI's second pass sets CCTRACE_WATCHPOINTS=sw for the other tests). */
static char *fresh_cache(void)
{
	char *dir = h_fmt("%s", "/tmp/cctrace-cache-XXXXXX");

	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("CCTRACE_WATCHPOINTS");
	return h_fmt("%s/cctrace/hw-watchpoints", dir);
}

static char *boot_id(void)
{
	char *id = h_read_file("/proc/sys/kernel/random/boot_id", NULL), *copy;

	cr_assert_not_null(id);
	copy = h_fmt("%.*s", (int)strcspn(id, "\n"), id);
	free(id);
	return copy;
}

/* What the debug registers really do here, asked without any cache. */
static int registers_trap(void)
{
	char why[400],
	    *saved = getenv("XDG_CACHE_HOME") ? h_fmt("%s", getenv("XDG_CACHE_HOME")) : NULL;
	int fired;

	setenv("XDG_CACHE_HOME", "/nonexistent-cctrace-cache", 1);
	fired = tracer_hw_watchpoints_fire(why, sizeof(why));
	if (saved)
		setenv("XDG_CACHE_HOME", saved, 1);
	cr_assert_geq(fired, 0, "the probe could not run: %s", why);
	return fired;
}

static void write_cache(const char *path, const char *text)
{
	char *dir = h_fmt("%.*s", (int)(strrchr(path, '/') - path), path);

	mkdir(dir, 0700);
	h_write_file(path, text);
}

/* The first line of the report stream. */
static char *first_line(const char *err)
{
	return h_fmt("%.*s", (int)strcspn(err, "\n"), err);
}

static void expect_lost_update(const struct h_result *r)
{
	cr_expect_eq(r->code, 1, "the lost update, as a bug (exit 1):\n%s", r->err);
	cr_expect(strstr(r->err, "read(balance)"), "%s", r->err);
	cr_expect(strstr(r->err, "assertion failed"), "%s", r->err);
}

Test(watchmode, the_probe_answer_is_cached_for_this_boot)
{
	char *cache = fresh_cache(), *text;
	int fired = registers_trap();
	struct h_result r = H_RUN(h_cctrace(), "run", BANK_SCHED, "--", BANK);

	expect_lost_update(&r);
	text = h_read_file(cache, NULL);
	cr_assert_not_null(text, "no cache at %s", cache);
	cr_expect_str_eq(text, h_fmt("%s %d\n", boot_id(), fired));
	free(text);
	h_result_free(&r);
}

Test(watchmode, a_cache_of_another_boot_is_probed_again)
{
	char *cache = fresh_cache(), *text;
	int fired = registers_trap();
	struct h_result r;

	write_cache(cache, h_fmt("00000000-0000-0000-0000-000000000000 %d\n", !fired));
	r = H_RUN(h_cctrace(), "run", BANK_SCHED, "--", BANK);
	expect_lost_update(&r);
	text = h_read_file(cache, NULL);
	cr_expect_str_eq(text, h_fmt("%s %d\n", boot_id(), fired));
	free(text);
	h_result_free(&r);
}

/* A probe that found no trap: auto uses the stepper and the trace says so
 * first, on every host. */
Test(watchmode, auto_on_a_host_without_traps_decodes_and_says_why)
{
	char *cache = fresh_cache();
	struct h_result r;

	write_cache(cache, h_fmt("%s 0\n", boot_id()));
	r = H_RUN(h_cctrace(), "run", BANK_SCHED, "--", BANK);
	expect_lost_update(&r);
	cr_expect(strstr(first_line(r.err), "watchpoints: software") &&
		      strstr(first_line(r.err), "debug registers do not trap"),
		  "%s", r.err);
	h_result_free(&r);
}

Test(watchmode, sw_by_option_or_environment)
{
	struct h_result r;

	fresh_cache();
	r = H_RUN(h_cctrace(), "run", "--watchpoints", "sw", BANK_SCHED, "--", BANK);
	expect_lost_update(&r);
	cr_expect(strstr(first_line(r.err), "software") &&
		      strstr(first_line(r.err), "--watchpoints sw"),
		  "%s", r.err);
	h_result_free(&r);
	setenv("CCTRACE_WATCHPOINTS", "sw", 1);
	r = H_RUN(h_cctrace(), "run", BANK_SCHED, "--", BANK);
	expect_lost_update(&r);
	cr_expect(strstr(first_line(r.err), "CCTRACE_WATCHPOINTS=sw"), "%s", r.err);
	h_result_free(&r);
	/* The option wins over the environment. */
	r = H_RUN(h_cctrace(), "run", "-q", "--watchpoints", "hw", BANK_SCHED, "--", BANK);
	cr_expect(!strstr(r.err, "software"), "%s", r.err);
	h_result_free(&r);
}

/* Hardware where it traps reproduces the bug; where it does not, a forced
 * hw watch is explained by its own variable, not as a wait that was never
 * satisfied. */
Test(watchmode, hw_forced_reproduces_or_explains_the_silence)
{
	struct h_result r;

	fresh_cache();
	r = H_RUN(h_cctrace(), "run", "--watchpoints", "hw", BANK_SCHED, "--", BANK);
	if (registers_trap()) {
		expect_lost_update(&r);
		cr_expect(!strstr(r.err, "software"), "%s", r.err);
	} else {
		cr_expect_eq(r.code, 2, "%s", r.err);
		cr_expect(strstr(r.err, "balance changed from 0x64") &&
			      strstr(r.err, "never fired") &&
			      strstr(r.err, "debug registers do not trap"),
			  "%s", r.err);
	}
	h_result_free(&r);
}

/* A cache that lies (says they trap where they do not) still gets the
 * explanation: the variable changed under an armed watchpoint. */
Test(watchmode, a_watch_that_misses_a_write_says_so)
{
	char *cache = fresh_cache();
	struct h_result r;

	if (registers_trap())
		cr_skip_test("debug registers trap on this host: no write is missed");
	write_cache(cache, h_fmt("%s 1\n", boot_id()));
	r = H_RUN(h_cctrace(), "run", BANK_SCHED, "--", BANK);
	cr_expect_eq(r.code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "exited before reaching 'read(balance)'") &&
		      strstr(r.err, "while its debug-register watchpoint was armed"),
		  "%s", r.err);
	h_result_free(&r);
}

/* A watchpoint that trapped, at a write whose value the rest of the
 * predicate did not want, proves the debug registers work: a variable
 * changed under it is no reason to blame the host.  Where they do not
 * trap, the silence is still explained. */
Test(watchmode, a_watch_that_fired_at_other_values_does_not_blame_the_host)
{
	char *sched = h_temp_sched("value.sched", "thread A = wait any enter(withdraw)\n"
						  "run A until write(balance) && value == 12345\n");
	struct h_result r;

	fresh_cache();
	r = H_RUN(h_cctrace(), "run", "--watchpoints", "hw", sched, "--", BANK);
	cr_expect_eq(r.code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "exited before reaching 'write(balance) && (value == 12345)'"),
		  "%s", r.err);
	if (registers_trap())
		cr_expect(!strstr(r.err, "never fired") && !strstr(r.err, "do not trap"),
			  "the watchpoint fired; the host is not to blame:\n%s", r.err);
	else
		cr_expect(strstr(r.err, "never fired"), "%s", r.err);
	h_result_free(&r);
}

/* The line of bank.c that holds text. */
static int bank_line(const char *text)
{
	char *src = h_read_file("samples/bank/bank.c", NULL), *at;
	int line = 1;

	cr_assert_not_null(src);
	at = strstr(src, text);
	cr_assert_not_null(at, "no '%s' in bank.c", text);
	for (char *p = src; p < at; p++)
		line += *p == '\n';
	h_free(src);
	return line;
}

/* An access is shown at the line of the instruction that made it, in
 * either mode, though the thread stands past it when it is seen (the
 * debug registers trap after the access): the store's line, not the
 * next statement's. */
Test(watchmode, an_access_is_shown_at_the_line_that_made_it)
{
	char *sched = h_temp_sched("store.sched", "thread A, B = wait 2 distinct enter(withdraw)\n"
						  "run A until write(balance)\n"
						  "run A until exit\n");
	char *want = h_fmt("bank.c:%d", bank_line("balance = b - amount;"));
	const char *modes[] = {"sw", "hw"};
	struct h_trace_ev ev[8];
	size_t i;

	for (i = 0; i < 2; i++) {
		struct h_result r;

		if (i == 1 && !registers_trap())
			break;
		fresh_cache();
		r = H_RUN(h_cctrace(), "run", "--watchpoints", modes[i], sched, "--", BANK);
		cr_expect_eq(r.code, 0, "%s: %s", modes[i], r.err);
		cr_assert_geq(h_parse_trace(r.err, ev, 8), 3, "%s: %s", modes[i], r.err);
		cr_expect_str_eq(ev[2].event, "write(balance)");
		cr_expect_str_eq(ev[2].where, want, "%s: %s", modes[i], r.err);
		h_result_free(&r);
	}
	free(want);
}

Test(watchmode, bad_modes_are_refused_before_anything_runs)
{
	struct h_result r;

	fresh_cache();
	r = H_RUN(h_cctrace(), "run", "--watchpoints", "fast", BANK_SCHED, "--", BANK);
	cr_expect_eq(r.code, 3);
	cr_expect(strstr(r.err, "bad --watchpoints 'fast': use hw, sw or auto"), "%s", r.err);
	cr_expect(!strstr(r.err, "read(balance)"), "nothing ran: %s", r.err);
	h_result_free(&r);
	r = H_RUN(h_cctrace(), "explore", BANK_SCHED, "--watchpoints", "x", "--", BANK);
	cr_expect_eq(r.code, 3);
	cr_expect(strstr(r.err, "--watchpoints"), "%s", r.err);
	h_result_free(&r);
	setenv("CCTRACE_WATCHPOINTS", "hardware", 1);
	r = H_RUN(h_cctrace(), "run", BANK_SCHED, "--", BANK);
	cr_expect_eq(r.code, 3);
	cr_expect(strstr(r.err, "bad CCTRACE_WATCHPOINTS 'hardware'"), "%s", r.err);
	h_result_free(&r);
}

/* The trace names the same events at the same places whichever mechanism
 * found them. */
Test(watchmode, hw_and_sw_traces_agree)
{
	struct h_result hw, sw;
	struct h_trace_ev a[8], b[8];
	int n, i;

	fresh_cache();
	if (!registers_trap())
		cr_skip_test("debug registers do not trap on this host: no hw trace to compare");
	hw = H_RUN(h_cctrace(), "run", "--watchpoints", "hw", BANK_SCHED, "--", BANK);
	sw = H_RUN(h_cctrace(), "run", "--watchpoints", "sw", BANK_SCHED, "--", BANK);
	n = h_parse_trace(hw.err, a, 8);
	cr_assert_eq(n, h_parse_trace(sw.err, b, 8), "hw:\n%s\nsw:\n%s", hw.err, sw.err);
	for (i = 0; i < n; i++) {
		cr_expect_str_eq(a[i].event, b[i].event);
		cr_expect_str_eq(a[i].func, b[i].func);
		cr_expect_str_eq(a[i].where, b[i].where);
	}
	h_result_free(&hw);
	h_result_free(&sw);
}

/* Explore finds the bug with software watchpoints too (on a host without
 * traps it used to report "0 bugs" and exit 0). */
Test(watchmode, explore_finds_the_lost_update_with_software_watchpoints)
{
	char dir[] = "/tmp/cctrace-wm-XXXXXX";
	struct h_result r;

	fresh_cache();
	cr_assert(mkdtemp(dir));
	r = H_RUN(h_cctrace(), "explore", "samples/bank/withdraw.search", "--watchpoints", "sw",
		  "--out", dir, "--no-minimize", "--", BANK);
	cr_expect_eq(r.code, 1, "%s", r.err);
	cr_expect(strstr(r.err, " 1 bug"), "%s", r.err);
	cr_expect(access(h_fmt("%s/bug-1.sched", dir), R_OK) == 0, "%s", r.err);
	h_result_free(&r);
}
