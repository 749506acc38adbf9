/*
 * junit.h: a JUnit XML report (--junit FILE) for CI systems.
 *
 * Contract.  One <testsuites> holding one <testsuite> of the given test
 * cases, each passed or failed; the counts and times of the suite are
 * computed here.  The text of a case (names, messages, reports) is any
 * byte string: it is escaped, and characters XML 1.0 cannot carry (most
 * control characters, the escapes of a coloured report) are dropped.
 */
#ifndef CCTRACE_CLI_JUNIT_H
#define CCTRACE_CLI_JUNIT_H

#include <stddef.h>

struct junit_case {
	const char *name;
	const char *classname;
	double seconds;
	/* NULL: the case passed; else the one-line reason, with the full
	 * text (a report) in failure_text */
	const char *failure;
	const char *failure_type; /* "bug", "unexpected outcome" */
	const char *failure_text;
	const char *system_out; /* NULL: none */
};

/* Write the suite to path ("-": stdout).  0, or -1 after saying why on
 * stderr as "cctrace CMD: ...". */
int junit_write(const char *cmd, const char *path, const char *suite,
		const struct junit_case *cases, size_t n);

#endif
