/*
 * watchmode.c: hardware or software watchpoints, decided once per cctrace.
 *
 * read(X)/write(X) have two implementations with the same events and the
 * same trace.  Debug registers (tracer/watch.c) cost nothing until the
 * variable is touched, but some hosts accept DR0-DR7 and never trap.  The
 * software one is the decode-ahead stepper (fine.c), which every host runs
 * the same way.
 *
 * Why the stepper and not page protection.  Page protection (mprotect the
 * watched page through an injected system call, take the SIGSEGV, step
 * the access with the page open, protect it again) stops only on accesses
 * to that page, but on this kind of host a protection fault round trip is
 * two injected mprotects (each a register save, a syscall stop pair and a
 * restore) plus the fault and a single step: about 8 ptrace stops per
 * access, where the stepper takes one stop per memory instruction or
 * branch of the moved thread.  A global variable also shares its page with
 * every other global of its module, so the page faults on accesses to the
 * neighbours as often as to X; and every system call that reads or writes
 * a protected page (read(2) into a global buffer, futex on a global lock)
 * would fail with EFAULT unless each were intercepted and replayed.  The
 * stepper's cost is paid only by the threads a wait moves, only while the
 * wait is in progress, and it already matches read(X)/write(X) for locals
 * and for watches beyond the four debug registers, so the software mode
 * is the path that is tested every day.  bench/run measures the software
 * event against a breakpoint event and against a hardware one.
 */
#include "engine/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char why_text[512];
static int probe_result = -2; /* tracer_hw_watchpoints_fire's, -2: not probed */

int engine_watchpoints_parse(const char *name)
{
	if (strcmp(name, "auto") == 0)
		return WATCHPOINTS_AUTO;
	if (strcmp(name, "hw") == 0)
		return WATCHPOINTS_HW;
	if (strcmp(name, "sw") == 0)
		return WATCHPOINTS_SW;
	return -1;
}

static int probe_once(char *why, size_t len)
{
	static char probe_why[400];

	if (probe_result == -2)
		probe_result = tracer_hw_watchpoints_fire(probe_why, sizeof(probe_why));
	snprintf(why, len, "%s", probe_why);
	return probe_result;
}

int watchmode_probed(void)
{
	return probe_result;
}

int engine_resolve_watchpoints(struct engine_options *opt, const char **why, char *err,
			       size_t errlen)
{
	const char *env = getenv("CCTRACE_WATCHPOINTS");
	char probe_why[400];
	int mode, fired;

	*why = NULL;
	if (opt->watchpoints == WATCHPOINTS_DEFAULT) {
		mode = env && *env ? engine_watchpoints_parse(env) : WATCHPOINTS_AUTO;
		if (mode < 0) {
			snprintf(err, errlen,
				 "cctrace: bad CCTRACE_WATCHPOINTS '%s': use hw, sw or auto", env);
			return -1;
		}
		opt->watchpoints = (enum engine_watchpoints)mode;
		if (mode == WATCHPOINTS_SW)
			*why = "CCTRACE_WATCHPOINTS=sw";
	}
	switch (opt->watchpoints) {
	case WATCHPOINTS_SW:
		if (!*why)
			*why = "--watchpoints sw";
		break;
	case WATCHPOINTS_HW:
		/* Forced: still probe (cached), so that a watchpoint that never
		 * fires can be explained rather than reported as a wait that
		 * was never satisfied. */
		probe_once(probe_why, sizeof(probe_why));
		break;
	case WATCHPOINTS_DEFAULT:
	case WATCHPOINTS_AUTO:
		fired = probe_once(probe_why, sizeof(probe_why));
		opt->watchpoints = fired == 1 ? WATCHPOINTS_HW : WATCHPOINTS_SW;
		if (fired != 1) {
			snprintf(why_text, sizeof(why_text), "%s", probe_why);
			*why = why_text;
		}
		break;
	}
	return 0;
}

void engine_note_watchpoints(const struct policy *pol, const struct engine_options *opt,
			     const char *why)
{
	if (!why || !opt->trace || (pol && pol->nwatched == 0))
		return;
	fprintf(opt->trace, "cctrace: watchpoints: software, by decoding instructions: %s\n", why);
}
