/*
 * test_chrome.c: --trace-chrome FILE, the Trace Event Format that Perfetto
 * and chrome://tracing load, parsed with jansson on the forced lost update
 * of samples/bank: one thread_name per traced thread, an instant per line
 * of the human trace (same thread, same event, same order), and slices for
 * the threads the schedule held.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#define BANK	   "samples/bank/bank"
#define BANK_SCHED "samples/bank/lost-update.sched"

TestSuite(chrome, .timeout = 60);

/* The thread_name of tid among the metadata events; NULL if none. */
static const char *thread_name(json_t *events, json_int_t tid)
{
	const char *name = NULL;
	json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "ph")), "M") != 0 ||
		    strcmp(json_string_value(json_object_get(e, "name")), "thread_name") != 0 ||
		    json_integer_value(json_object_get(e, "tid")) != tid)
			continue;
		cr_expect_null(name, "two thread_name events for tid %lld", (long long)tid);
		name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
	}
	return name;
}

Test(chrome, lost_update_has_tracks_instants_and_held_slices)
{
	char *dir = h_temp_dir(), *path = h_fmt("%s/c.json", dir);
	struct h_result r =
	    H_RUN(h_cctrace(), "run", "--trace-chrome", path, BANK_SCHED, "--", BANK);
	struct h_trace_ev ev[16];
	json_error_t err;
	json_t *doc, *events, *e;
	size_t i;
	int n = h_parse_trace(r.err, ev, 16), instants = 0, slices = 0, names = 0;
	double held_us = 0;

	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert_eq(n, 5, "%s", r.err);
	doc = json_load_file(path, 0, &err);
	cr_assert_not_null(doc, "%s: %s (line %d)", path, err.text, err.line);
	events = json_object_get(doc, "traceEvents");
	cr_assert(json_is_array(events));
	json_array_foreach(events, i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));

		cr_assert_not_null(ph);
		cr_assert(json_is_integer(json_object_get(e, "pid")) &&
			  json_is_integer(json_object_get(e, "tid")));
		if (strcmp(ph, "M") == 0) {
			names += strcmp(json_string_value(json_object_get(e, "name")),
					"thread_name") == 0;
		} else if (strcmp(ph, "i") == 0) {
			json_int_t tid = json_integer_value(json_object_get(e, "tid"));

			cr_assert_lt(instants, n, "more instants than trace lines");
			cr_expect_str_eq(json_string_value(json_object_get(e, "name")),
					 ev[instants].event);
			cr_expect_str_eq(thread_name(events, tid), ev[instants].thread,
					 "instant %d is on the wrong track", instants);
			cr_expect(json_is_number(json_object_get(e, "ts")));
			instants++;
		} else if (strcmp(ph, "X") == 0) {
			double dur = json_number_value(json_object_get(e, "dur"));

			cr_expect(json_is_number(json_object_get(e, "ts")));
			cr_expect_geq(dur, 0);
			held_us += dur;
			slices++;
		}
	}
	cr_expect_eq(instants, n, "%d instants for %d trace lines", instants, n);
	/* p1.t2 and p1.t3, the two withdrawing customers */
	cr_expect_eq(names, 2, "%d thread_name events", names);
	cr_expect_geq(slices, 1);
	cr_expect_gt(held_us, 0, "no thread was held for any time");
	json_decref(doc);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* explore does not write it: its bugs are replayed with run. */
Test(chrome, explore_says_to_replay_with_run)
{
	struct h_result r = H_RUN(h_cctrace(), "explore", "--trace-chrome", "x.json",
				  "samples/bank/withdraw.search", "--", BANK);

	cr_expect_eq(r.code, 3);
	cr_expect(strstr(r.err, "cctrace explore: --trace-chrome is for run and attach"), "%s",
		  r.err);
	h_result_free(&r);
}

/* A held slice ends when the schedule lets the thread go, not at the next
 * trace line: in lost-update.sched, A (held at read(balance)) waits while B
 * runs to its return, so A's slice covers B's return event. */
Test(chrome, held_slice_lasts_until_the_release)
{
	char *dir = h_temp_dir(), *path = h_fmt("%s/t.json", dir);
	const char *argv[] = {h_cctrace(), "run",
			      "-q",	   "--trace-chrome",
			      path,	   "samples/bank/lost-update.sched",
			      "--",	   "samples/bank/bank",
			      NULL};
	struct h_result r = h_run(argv, 60);
	json_t *doc, *evs, *e;
	double read_ts = -1, read_end = -1, ret_ts = -1;
	size_t i;

	cr_assert_eq(r.code, 1, "%s", r.err);
	doc = json_load_file(path, 0, NULL);
	cr_assert(doc, "%s does not parse", path);
	evs = json_object_get(doc, "traceEvents");
	json_array_foreach(evs, i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		double ts = json_number_value(json_object_get(e, "ts"));
		json_t *args = json_object_get(e, "args");
		const char *by = args ? json_string_value(json_object_get(args, "by")) : NULL;

		if (strcmp(ph, "X") == 0 && by && strcmp(by, "read(balance)") == 0) {
			read_ts = ts;
			read_end = ts + json_number_value(json_object_get(e, "dur"));
		}
		if (strcmp(ph, "i") == 0 && strcmp(name, "return(withdraw)") == 0 && ret_ts < 0)
			ret_ts = ts;
	}
	cr_assert(read_ts >= 0 && ret_ts >= 0, "no read(balance) slice or return(withdraw)");
	cr_expect(read_ts < ret_ts && ret_ts <= read_end,
		  "A's slice [%.3f, %.3f] does not cover B's return at %.3f", read_ts, read_end,
		  ret_ts);
	json_decref(doc);
	h_result_free(&r);
	h_remove_tree(dir);
}
