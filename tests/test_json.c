/*
 * test_json.c: every JSON output of cctrace, parsed with jansson, the
 * library that writes it, on real runs of samples/bank.
 *
 * docs/json.md is the contract: the JSON trace (run, attach and explore
 * --trace-json) is a header record, one event record per trace line and an
 * outcome record; the explore summary (--json) has one schema with or
 * without --jobs.  A field renamed or retyped here is a schema change.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BANK	    "samples/bank/bank"
#define BANK_SCHED  "samples/bank/lost-update.sched"
#define BANK_SEARCH "samples/bank/withdraw.search"

TestSuite(json, .timeout = 120);

/* Every line of text as a JSON object (the records stay referenced). */
static json_t *parse_lines(const char *text)
{
	json_t *records = json_array();
	const char *at = text;

	cr_assert_not_null(text);
	while (*at) {
		size_t len = strcspn(at, "\n");
		json_error_t e;
		json_t *rec = json_loadb(at, len, 0, &e);

		cr_assert_not_null(rec, "not JSON (%s): %.*s", e.text, (int)len, at);
		cr_assert(json_is_object(rec), "not an object: %.*s", (int)len, at);
		json_array_append_new(records, rec);
		at += len + (at[len] == '\n');
	}
	return records;
}

static const char *str(const json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	cr_assert(json_is_string(v), "\"%s\" is not a string in %s", key,
		  json_dumps(rec, JSON_COMPACT));
	return json_string_value(v);
}

static json_int_t integer(const json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	cr_assert(json_is_integer(v), "\"%s\" is not an integer in %s", key,
		  json_dumps(rec, JSON_COMPACT));
	return json_integer_value(v);
}

static bool is_null(const json_t *rec, const char *key)
{
	return json_is_null(json_object_get(rec, key));
}

/* The header record of a trace of command on samples/bank. */
static void expect_header(const json_t *h, const char *command, const char *schedule)
{
	const char *w;

	cr_assert_str_eq(str(h, "type"), "header");
	cr_expect_eq(integer(h, "schema"), 1);
	cr_expect_str_eq(str(h, "command"), command);
	cr_expect(strstr(str(h, "schedule"), schedule), "%s", str(h, "schedule"));
	cr_expect(strstr(str(h, "program"), BANK), "%s", str(h, "program"));
	cr_assert(json_is_array(json_object_get(h, "argv")));
	cr_expect_eq(json_array_size(json_object_get(h, "argv")), 1);
	cr_expect(is_null(h, "pid"));
	w = str(h, "watchpoints");
	cr_expect(strcmp(w, "hw") == 0 || strcmp(w, "sw") == 0, "watchpoints %s", w);
	if (strcmp(command, "explore") == 0) {
		cr_expect_str_eq(str(h, "strategy"), "dfs");
		cr_expect_eq(integer(h, "seed"), 1);
	} else {
		cr_expect(is_null(h, "strategy") && is_null(h, "seed"));
	}
}

/* An event record, as the human trace line has it. */
static void expect_event(const json_t *ev)
{
	cr_assert_str_eq(str(ev, "type"), "event");
	cr_assert(json_is_real(json_object_get(ev, "ms")) ||
		  json_is_integer(json_object_get(ev, "ms")));
	cr_expect(strncmp(str(ev, "thread"), "p1.t", 4) == 0, "%s", str(ev, "thread"));
	cr_expect_gt(integer(ev, "tid"), 0);
	cr_expect(strncmp(str(ev, "pc"), "0x", 2) == 0);
	cr_expect_str_not_empty(str(ev, "event"));
	/* bank is built with -g: every event has its function and line */
	cr_expect_str_not_empty(str(ev, "func"));
	cr_expect_str_eq(str(ev, "file"), "bank.c");
	cr_expect_gt(integer(ev, "line"), 0);
}

static void expect_outcome(const json_t *o, const char *outcome, int exit_code)
{
	cr_assert_str_eq(str(o, "type"), "outcome");
	cr_expect_str_eq(str(o, "outcome"), outcome);
	cr_expect_eq(integer(o, "exit"), exit_code);
	cr_expect_str_not_empty(str(o, "message"));
}

/* The lost update, forced: a header, the five scheduling events of the
 * human trace, in its order, and a bug. */
static void expect_lost_update_trace(const char *text, const char *human)
{
	json_t *recs = parse_lines(text), *o;
	struct h_trace_ev ev[16];
	size_t i, n = json_array_size(recs);
	int lines = human ? h_parse_trace(human, ev, 16) : 5;

	cr_assert_geq(n, 3, "%s", text);
	expect_header(json_array_get(recs, 0), "run", BANK_SCHED);
	cr_assert_eq((int)n - 2, lines, "%zu events for %d trace lines:\n%s", n - 2, lines, text);
	for (i = 1; i + 1 < n; i++) {
		json_t *e = json_array_get(recs, i);

		expect_event(e);
		if (human) {
			cr_expect_str_eq(str(e, "thread"), ev[i - 1].thread);
			cr_expect_str_eq(str(e, "event"), ev[i - 1].event);
		}
	}
	cr_expect_str_eq(str(json_array_get(recs, 1), "event"), "enter(withdraw)");
	o = json_array_get(recs, n - 1);
	expect_outcome(o, "bug", 1);
	cr_expect(strstr(str(o, "message"), "assertion failed"), "%s", str(o, "message"));
	cr_expect(!json_object_get(o, "run"), "a run has no run number");
	json_decref(recs);
}

Test(json, run_trace_to_a_file)
{
	char *dir = h_temp_dir(), *path = h_fmt("%s/t.json", dir);
	struct h_result r = H_RUN(h_cctrace(), "run", "--trace-json", path, BANK_SCHED, "--", BANK);

	cr_assert_eq(r.code, 1, "%s", r.err);
	expect_lost_update_trace(h_read_file(path, NULL), r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

Test(json, run_trace_to_stdout)
{
	struct h_result r =
	    H_RUN(h_cctrace(), "run", "-q", "--trace-json", "-", BANK_SCHED, "--", BANK);
	char *json = h_fmt("%s", ""), *line, *save = NULL;

	cr_assert_eq(r.code, 1, "%s", r.err);
	/* The program's own output shares stdout: keep the JSON lines. */
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (line[0] == '{')
			json = h_fmt("%s%s\n", json, line);
	expect_lost_update_trace(json, NULL);
	h_result_free(&r);
}

/* Runs of a search: each a header, its events, and an outcome record that
 * has the run's number and choices; the numbers count 1, 2, ... */
Test(json, explore_trace)
{
	char *dir = h_temp_dir(), *path = h_fmt("%s/t.json", dir);
	struct h_result r =
	    H_RUN(h_cctrace(), "explore", "-q", "--no-minimize", "--runs", "40", "-o",
		  h_fmt("%s/bugs", dir), "--trace-json", path, BANK_SEARCH, "--", BANK);
	json_t *recs, *rec;
	size_t i;
	long headers = 0, outcomes = 0, bugs = 0;
	bool in_run = false;

	cr_assert_eq(r.code, 1, "no bug found: %s", r.err);
	recs = parse_lines(h_read_file(path, NULL));
	json_array_foreach(recs, i, rec)
	{
		const char *type = str(rec, "type");

		if (strcmp(type, "header") == 0) {
			cr_assert(!in_run, "a header inside run %ld", outcomes + 1);
			expect_header(rec, "explore", BANK_SEARCH);
			headers++;
			in_run = true;
		} else if (strcmp(type, "outcome") == 0) {
			cr_assert(in_run, "an outcome without a header");
			cr_expect_eq(integer(rec, "run"), ++outcomes);
			cr_expect_eq(integer(rec, "search_run"), outcomes);
			cr_expect(json_is_string(json_object_get(rec, "choices")));
			cr_expect(json_is_false(json_object_get(rec, "abandoned")));
			bugs += strcmp(str(rec, "outcome"), "bug") == 0;
			in_run = false;
		} else {
			cr_assert(in_run, "an event outside a run");
			expect_event(rec);
		}
	}
	cr_expect(!in_run, "the last run has no outcome record");
	cr_expect_gt(headers, 1);
	cr_expect_eq(headers, outcomes);
	cr_expect_eq(bugs, 1, "the search stops at its first bug");
	json_decref(recs);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* The summary of `explore --json` with jobs jobs: one line on stdout. */
static json_t *summary(const char *dir, const char *jobs)
{
	struct h_result r =
	    H_RUN(h_cctrace(), "explore", "-q", "--no-minimize", "--runs", "40", "-j", jobs, "-o",
		  h_fmt("%s/bugs-%s", dir, jobs), "--json", BANK_SEARCH, "--", BANK);
	const char *line = strstr(r.out, "{\"type\":\"summary\"");
	json_error_t e;
	json_t *s;

	cr_assert_eq(r.code, 1, "--jobs %s found no bug: %s", jobs, r.err);
	cr_assert_not_null(line, "no summary on stdout:\n%s", r.out);
	s = json_loadb(line, strcspn(line, "\n"), 0, &e);
	cr_assert_not_null(s, "%s: %s", e.text, line);
	return s;
}

Test(json, explore_summary_has_one_schema_with_or_without_jobs)
{
	char *dir = h_temp_dir();
	json_t *one = summary(dir, "1"), *two = summary(dir, "2");
	const char *key;
	json_t *v;

	/* The same keys in the same order, with the same JSON types. */
	cr_assert_eq(json_object_size(one), json_object_size(two));
	json_object_foreach(one, key, v)
	{
		json_t *w = json_object_get(two, key);

		cr_assert_not_null(w, "\"%s\" is missing with --jobs 2", key);
		cr_expect(json_typeof(v) == json_typeof(w) ||
			      (json_is_number(v) && json_is_number(w) &&
			       strcmp(key, "runs_per_second") == 0),
			  "\"%s\" changes type with --jobs", key);
	}
	cr_expect_eq(integer(one, "schema"), 1);
	cr_expect_eq(integer(one, "jobs"), 1);
	cr_expect_eq(integer(two, "jobs"), 2);
	cr_expect_str_eq(str(one, "strategy"), "dfs");
	cr_expect_str_eq(str(two, "strategy"), "dfs");
	cr_expect_eq(integer(one, "seed"), 1);
	cr_expect_geq(integer(one, "bugs"), 1);
	cr_expect_geq(integer(two, "bugs"), 1);
	cr_expect_eq(integer(one, "runs"),
		     integer(one, "bugs") + integer(one, "completed") + integer(one, "infeasible") +
			 integer(one, "unrealizable") + integer(one, "errors"));
	cr_expect(json_is_false(json_object_get(two, "interrupted")));
	cr_expect(strstr(str(two, "out_dir"), "bugs-2"), "%s", str(two, "out_dir"));
	json_decref(one);
	json_decref(two);
	h_remove_tree(dir);
}

/* --json-file: the summary goes to its file, and stdout holds only what the
 * program printed (the bank sample's "ok: balance" lines), no JSON. */
Test(json, explore_summary_to_a_file_is_apart_from_the_program)
{
	char *dir = h_temp_dir(), *path = h_fmt("%s/summary.json", dir);
	struct h_result r =
	    H_RUN(h_cctrace(), "explore", "-q", "--no-minimize", "-o", h_fmt("%s/bugs", dir),
		  "--json-file", path, BANK_SEARCH, "--", BANK);
	json_error_t e;
	json_t *s;

	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_expect(strchr(r.out, '{') == NULL, "JSON on stdout:\n%s", r.out);
	cr_expect(strstr(r.out, "balance") != NULL, "the program's output is gone:\n%s", r.out);
	s = json_load_file(path, 0, &e);
	cr_assert_not_null(s, "%s: %s", path, e.text);
	cr_expect_str_eq(str(s, "type"), "summary");
	cr_expect_geq(integer(s, "bugs"), 1);
	json_decref(s);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* --json: stdout is the summary alone, to pipe into a JSON reader; the
 * program's own stdout (serprint's lines) goes to stderr.  They were
 * mixed on stdout, which no JSON reader took. */
Test(json, test_summary_on_stdout_is_json_alone)
{
	char *dir = h_temp_dir();
	struct h_result r = H_RUN(h_cctrace(), "test", "-q", "--seed", "1", "--runs", "3", "-o",
				  h_fmt("%s/bugs", dir), "--json", "--", "tests/fixtures/serprint");
	json_error_t e;
	json_t *s;

	cr_assert_eq(r.code, 0, "%s", r.err);
	s = json_loads(r.out, 0, &e);
	cr_assert_not_null(s, "stdout is not JSON (%s):\n%s", e.text, r.out);
	cr_expect_str_eq(str(s, "type"), "summary");
	cr_expect_eq(integer(s, "runs"), 3);
	cr_expect(strstr(r.err, "thread 0 line 0"), "the program's output is gone:\n%s", r.err);
	json_decref(s);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* The records of the JSON trace of `cctrace test -q --seed 1 --runs runs`
 * on serprint (no bug), with --early-timeouts or not. */
static json_t *serprint_trace(const char *dir, const char *runs, bool early)
{
	char *path = h_fmt("%s/t.json", dir);
	const char *argv[16] = {
	    h_cctrace(),	   "test",	   "-q", "--seed", "1", "--runs", runs, "-o",
	    h_fmt("%s/bugs", dir), "--trace-json", path};
	int n = 11;
	struct h_result r;

	if (early)
		argv[n++] = "--early-timeouts";
	argv[n++] = "--";
	argv[n++] = "tests/fixtures/serprint";
	r = h_run(argv, H_SAFETY_S);
	cr_assert_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	return parse_lines(h_read_file(path, NULL));
}

/* Under test's portfolio each round of 10 runs has a header with its own
 * strategy, and its runs count from 1 (as the `# found by` line of a bug
 * found in it does); search_run counts from the search's start, as the
 * summary and "bug N in run M" do.  Only the round's number was there. */
Test(json, portfolio_runs_count_in_their_round_and_in_the_search)
{
	char *dir = h_temp_dir();
	json_t *recs = serprint_trace(dir, "12", false), *rec;
	size_t i;
	long outcomes = 0;
	const char *strategy = NULL, *first = NULL;

	json_array_foreach(recs, i, rec)
	{
		const char *type = str(rec, "type");

		if (strcmp(type, "header") == 0) {
			strategy = str(rec, "strategy");
			first = first ? first : strategy;
			cr_expect(json_is_false(json_object_get(rec, "early_timeouts")));
		} else if (strcmp(type, "outcome") == 0) {
			outcomes++;
			cr_expect_eq(integer(rec, "search_run"), outcomes);
			cr_expect_eq(integer(rec, "run"),
				     outcomes <= 10 ? outcomes : outcomes - 10);
			cr_expect_str_eq(strategy, outcomes <= 10 ? first : "pct:3", "run %ld",
					 outcomes);
		}
	}
	cr_expect_eq(outcomes, 12);
	cr_expect_str_eq(first, "pct:3:1");
	json_decref(recs);
	h_remove_tree(dir);
}

/* A header says whether the search let timed waits time out at any
 * choice (--early-timeouts), which decides the runs it makes; a run's
 * header says null. */
Test(json, a_header_says_whether_timeouts_came_early)
{
	char *dir = h_temp_dir(), *path = h_fmt("%s/t.json", dir);
	json_t *recs = serprint_trace(dir, "2", true);
	struct h_result r;

	cr_expect(json_is_true(json_object_get(json_array_get(recs, 0), "early_timeouts")));
	json_decref(recs);
	r = H_RUN(h_cctrace(), "run", "-q", "--trace-json", path, BANK_SCHED, "--", BANK);
	recs = parse_lines(h_read_file(path, NULL));
	cr_expect(json_is_null(json_object_get(json_array_get(recs, 0), "early_timeouts")));
	json_decref(recs);
	h_result_free(&r);
	h_remove_tree(dir);
}
