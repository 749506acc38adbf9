/*
 * policy: schedules, and running a program along one.
 *
 * A schedule is loaded (parsed, then checked against the program's symbols
 * so that a misspelt function or a fifth watched variable is reported with
 * file:line:col and a caret before anything is launched or attached), then
 * executed on a launched program or on an attached process.  Execution
 * follows CONCURRIT's select/release model: threads bound by `wait` are held
 * unless a `run` lets them go, unbound threads run freely, and when the
 * schedule ends every thread is released.
 *
 * This module never calls ptrace; it drives tracer/ and asks symbols/.
 */
#ifndef CCTRACE_POLICY_H
#define CCTRACE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum policy_outcome {
	OUTCOME_COMPLETED,    /* the schedule ran to its end and the program behaved */
	OUTCOME_BUG,	      /* fatal signal, failed assert, or bad exit with fail_on_exit */
	OUTCOME_UNREALIZABLE, /* a wait timed out, or the program ended before it could match */
	OUTCOME_ERROR,	      /* schedule, symbol or system error; interrupted */
};

/* Process exit codes, one per outcome (documented in README). */
#define EXIT_COMPLETED	  0
#define EXIT_BUG	  1
#define EXIT_UNREALIZABLE 2
#define EXIT_ERROR	  3
#define EXIT_UNEXPECTED	  4 /* --expect was given and the outcome differs */

struct policy_options {
	bool fail_on_exit;  /* a non-zero exit status of the program is a bug */
	int64_t timeout_ms; /* default limit of every wait; 0 = 10 s */
	FILE *trace;	    /* human trace, one line per scheduling event; NULL = none */
	FILE *trace_json;   /* the same as JSON lines; NULL = none */
	FILE *report;	    /* outcome and diagnostics (stderr) */
	bool pin_cpu;	    /* run cctrace and the threads it drives on one CPU */
};

struct policy;

/*
 * Parse and check the schedule at path.  For a launch, program is the path
 * of the executable (its symbols and those of its libraries are read
 * offline); for an attach, pid is the running process (its maps are read;
 * nothing is attached yet).  On error returns NULL with a printable
 * diagnostic in err.
 */
struct policy *policy_load(const char *path, const char *program, pid_t pid, char *err,
			   size_t errlen);
void policy_free(struct policy *pol);

/* Launch argv and run the schedule on it; the program is then run to its
 * end (or killed on error or Ctrl-C). */
enum policy_outcome policy_run_program(struct policy *pol, char *const argv[],
				       const struct policy_options *opt);

/* Attach to pid, run the schedule, and detach, leaving it running with its
 * code bytes and debug registers as they were. */
enum policy_outcome policy_run_attached(struct policy *pol, pid_t pid,
					const struct policy_options *opt);

const char *policy_outcome_name(enum policy_outcome o);
int policy_outcome_exit_code(enum policy_outcome o);
/* "bug" -> OUTCOME_BUG; -1 if unknown. */
int policy_outcome_parse(const char *name);

#endif
