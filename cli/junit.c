/*
 * junit.c: the JUnit XML report of a run or a search.
 *
 * CI systems (GitLab, Jenkins, GitHub actions' reporters) read JUnit XML,
 * a format with no schema of its own but one common shape: <testsuites>,
 * <testsuite tests= failures=>, <testcase name= classname= time=> and a
 * <failure message= type=> with text.  The document is small and written
 * once, so it is printed here rather than through an XML library that
 * cctrace would then depend on at run time; what an XML writer does that
 * matters, escaping and refusing characters XML cannot hold, is
 * search_markup_text() (search/picture.c, which the bug pictures share) (and tests/test_junit.c
 * parses the result with libxml2).
 */
#include "cli/junit.h"
#include "search/search.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* s as XML character data or attribute value. */
static void xml_text(FILE *f, const char *s)
{
	search_markup_text(f, s);
}

static void attribute(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	xml_text(f, value);
	fputc('"', f);
}

static void write_case(FILE *f, const struct junit_case *c)
{
	fputs("    <testcase", f);
	attribute(f, "name", c->name);
	attribute(f, "classname", c->classname);
	fprintf(f, " time=\"%.3f\">\n", c->seconds);
	if (c->failure) {
		fputs("      <failure", f);
		attribute(f, "message", c->failure);
		attribute(f, "type", c->failure_type ? c->failure_type : "failure");
		fputc('>', f);
		xml_text(f, c->failure_text);
		fputs("</failure>\n", f);
	}
	if (c->system_out) {
		fputs("      <system-out>", f);
		xml_text(f, c->system_out);
		fputs("</system-out>\n", f);
	}
	fputs("    </testcase>\n", f);
}

int junit_write(const char *cmd, const char *path, const char *suite,
		const struct junit_case *cases, size_t n)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	size_t i, failures = 0;
	double seconds = 0;
	int rc;

	if (!f) {
		fprintf(stderr, "cctrace %s: cannot write %s: %s\n", cmd, path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		failures += cases[i].failure != NULL;
		seconds += cases[i].seconds;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
	attribute(f, "name", "cctrace");
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n", n, failures,
		seconds);
	fputs("  <testsuite", f);
	attribute(f, "name", suite);
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.3f\">\n", n,
		failures, seconds);
	for (i = 0; i < n; i++)
		write_case(f, &cases[i]);
	fputs("  </testsuite>\n</testsuites>\n", f);
	rc = f == stdout ? fflush(f) : fclose(f);
	if (rc != 0) {
		fprintf(stderr, "cctrace %s: cannot write %s: %s\n", cmd, path, strerror(errno));
		return -1;
	}
	return 0;
}
