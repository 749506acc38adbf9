/*
 * test_junit.c: --junit FILE, parsed as CI systems parse it.
 *
 * libxml2 reads the report (a test-only dependency): it must be
 * well-formed XML with the common JUnit shape, <testsuites> around one
 * <testsuite> whose tests and failures attributes count its <testcase>s
 * and their <failure>s.  Real runs of samples/bank: the forced lost update
 * with and without --expect bug, and searches that find bugs or none.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BANK	    "samples/bank/bank"
#define BANK_SCHED  "samples/bank/lost-update.sched"
#define BANK_SEARCH "samples/bank/withdraw.search"

TestSuite(junit, .timeout = 120);

/* What the parsed report holds. */
struct report {
	int tests, failures; /* the attributes of <testsuite> */
	int cases, failed;   /* counted <testcase>s and those with a <failure> */
	char messages[8][512];
	char texts[8][8192];
};

static int int_attribute(xmlNode *n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int i;

	cr_assert_not_null(v, "<%s> has no %s", (const char *)n->name, name);
	i = atoi((const char *)v);
	xmlFree(v);
	return i;
}

static bool named(xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static void read_case(xmlNode *tc, struct report *r)
{
	xmlNode *c;

	cr_assert(xmlHasProp(tc, (const xmlChar *)"name") &&
		  xmlHasProp(tc, (const xmlChar *)"classname") &&
		  xmlHasProp(tc, (const xmlChar *)"time"));
	for (c = tc->children; c; c = c->next) {
		xmlChar *m, *t;

		if (!named(c, "failure"))
			continue;
		m = xmlGetProp(c, (const xmlChar *)"message");
		t = xmlNodeGetContent(c);
		cr_assert_not_null(m, "a <failure> without a message");
		if (r->failed < 8) {
			snprintf(r->messages[r->failed], sizeof(r->messages[0]), "%s", (char *)m);
			snprintf(r->texts[r->failed], sizeof(r->texts[0]), "%s", (char *)t);
		}
		r->failed++;
		xmlFree(m);
		xmlFree(t);
	}
	r->cases++;
}

static struct report parse(const char *path)
{
	struct report r = {0};
	xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
	xmlNode *root, *suite = NULL, *n;

	cr_assert_not_null(doc, "%s is not well-formed XML", path);
	root = xmlDocGetRootElement(doc);
	cr_assert(root && named(root, "testsuites"), "the root is not <testsuites>");
	for (n = root->children; n; n = n->next)
		if (named(n, "testsuite")) {
			cr_assert_null(suite, "more than one <testsuite>");
			suite = n;
		}
	cr_assert_not_null(suite, "no <testsuite>");
	r.tests = int_attribute(suite, "tests");
	r.failures = int_attribute(suite, "failures");
	for (n = suite->children; n; n = n->next)
		if (named(n, "testcase"))
			read_case(n, &r);
	cr_expect_eq(r.tests, r.cases, "tests=\"%d\" for %d test cases", r.tests, r.cases);
	cr_expect_eq(r.failures, r.failed, "failures=\"%d\" for %d failures", r.failures, r.failed);
	cr_expect_eq(int_attribute(root, "tests"), r.cases);
	xmlFreeDoc(doc);
	return r;
}

/* The report of the forced lost update run with --expect expect, which
 * exits code. */
static struct report run_report(const char *expect, int code)
{
	char *dir = h_temp_dir(), *xml = h_fmt("%s/r.xml", dir);
	struct h_result r = H_RUN(h_cctrace(), "run", "-q", "--expect", expect, "--junit", xml,
				  BANK_SCHED, "--", BANK);
	struct report rep;

	cr_assert_eq(r.code, code, "%s", r.err);
	rep = parse(xml);
	cr_expect_eq(rep.cases, 1);
	h_result_free(&r);
	h_remove_tree(dir);
	return rep;
}

Test(junit, run_expecting_the_bug_passes)
{
	cr_expect_eq(run_report("bug", 0).failed, 0);
}

Test(junit, run_with_another_outcome_fails_with_its_message)
{
	struct report rep = run_report("completed", 4);

	cr_assert_eq(rep.failed, 1);
	cr_expect(strstr(rep.messages[0], "expected completed, got bug: assertion failed"), "%s",
		  rep.messages[0]);
	cr_expect(strstr(rep.texts[0], "assert balance == 70"), "%s", rep.texts[0]);
}

/* Every bug of the search is a failed test case, with the report and the
 * schedule that replays it, which exists. */
Test(junit, explore_has_a_failure_per_bug)
{
	char *dir = h_temp_dir(), *xml = h_fmt("%s/e.xml", dir), *out = h_fmt("%s/bugs", dir);
	struct h_result r = H_RUN(h_cctrace(), "explore", "-q", "--all", "--no-minimize", "--runs",
				  "30", "-o", out, "--junit", xml, BANK_SEARCH, "--", BANK);
	struct report rep;
	long bugs = 0;
	int i;

	cr_assert_eq(r.code, 1, "%s", r.err);
	cr_assert(sscanf(strstr(r.err, "runs, ") ? strstr(r.err, "runs, ") : "", "runs, %ld bugs",
			 &bugs) == 1,
		  "%s", r.err);
	cr_assert_gt(bugs, 1, "want several bugs for this test: %s", r.err);
	rep = parse(xml);
	cr_expect_eq(rep.cases, bugs);
	cr_expect_eq(rep.failed, bugs);
	for (i = 0; i < rep.failed && i < 8; i++) {
		char *sched = h_fmt("%s/bug-%d.sched", out, i + 1);

		cr_expect(strncmp(rep.messages[i], "bug: ", 5) == 0, "%s", rep.messages[i]);
		cr_expect(strstr(rep.texts[i], h_fmt("replay: %s\n", sched)), "%s", rep.texts[i]);
		cr_expect(strstr(rep.texts[i], "--- report\ncctrace: bug:"), "%s", rep.texts[i]);
		cr_expect_eq(access(sched, R_OK), 0, "no %s", sched);
	}
	h_result_free(&r);
	h_remove_tree(dir);
}

Test(junit, explore_without_a_bug_is_one_passed_case)
{
	char *dir = h_temp_dir(), *xml = h_fmt("%s/e.xml", dir);
	struct h_result r = H_RUN(h_cctrace(), "explore", "-q", "--runs", "3", "-o",
				  h_fmt("%s/bugs", dir), "--junit", xml, BANK_SEARCH, "--", BANK);
	struct report rep;

	cr_assert_eq(r.code, 0, "3 runs found a bug: %s", r.err);
	rep = parse(xml);
	cr_expect_eq(rep.cases, 1);
	cr_expect_eq(rep.failed, 0);
	h_result_free(&r);
	/* --expect bug: the same search is a failure */
	r = H_RUN(h_cctrace(), "explore", "-q", "--runs", "3", "--expect", "bug", "-o",
		  h_fmt("%s/bugs2", dir), "--junit", xml, BANK_SEARCH, "--", BANK);
	cr_assert_eq(r.code, 4, "%s", r.err);
	rep = parse(xml);
	cr_expect_eq(rep.cases, 1);
	cr_expect_eq(rep.failed, 1);
	h_result_free(&r);
	h_remove_tree(dir);
}
