/*
 * options.c: the one option table of the command line, and its parser.
 *
 * Three getopt tables (run and attach, explore, shell) used to parse the
 * same options and drifted apart: an option one command took, another
 * refused or spelt differently, and each --help was written by hand.  Here
 * an option is one row: its names, its argument, the commands that take
 * it, its help text and the function that checks and stores its value.
 * getopt_long does the parsing (its option list is built from the rows);
 * the help of each command is printed from the rows that name it.
 */
#include "cli/options.h"
#include "lang/lang.h"
#include "symbols/symbols.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALL_RUNS (CLI_RUN | CLI_ATTACH | CLI_EXPLORE)
#define TRACING	 (CLI_RUN | CLI_ATTACH | CLI_EXPLORE | CLI_SHELL | CLI_TEST)

/* What an option does with its value. */
enum cli_store {
	STORE_TRUE,   /* a flag: the bool at `field` becomes true */
	STORE_FALSE,  /* a flag: ...false (--no-pin) */
	STORE_STRING, /* the const char * at `field` is the argument */
	STORE_CHECK,  /* `set` checks and stores it */
};

struct cli_option {
	const char *name;
	int short_name;	 /* 0: none */
	const char *arg; /* the argument's name in the help; NULL: a flag */
	unsigned commands;
	const char *help; /* words, wrapped when printed */
	enum cli_store store;
	size_t field; /* offsetof(struct cli_args, ...) */
	/* STORE_CHECK: 0, or -1 after cli_usage_error */
	int (*set)(struct cli_args *a, const char *value);
};

static int bad_value(struct cli_args *a, const char *option, const char *value, const char *hint)
{
	cli_usage_error(a->command, "bad --%s '%s'%s%s", option, value, hint ? ": " : "",
			hint ? hint : "");
	return -1;
}

/*
 * --OPTION's duration, with its unit as in a schedule: a bare number was
 * taken for seconds, and `--timeout 1500` meant as milliseconds waited
 * 25 minutes.  0 is refused unless zero_ok (it would mean the default, or
 * no limit, not "no time at all").
 */
static int duration(struct cli_args *a, const char *option, const char *v, bool zero_ok,
		    int64_t *ms)
{
	int64_t bare;
	char hint[128], why[256];
	const char *reason;

	if (lang_parse_duration(v, strlen(v), NULL, ms, why, sizeof(why)) < 0) {
		if (lang_parse_duration(v, strlen(v), "s", &bare, why, sizeof(why)) < 0) {
			/* the grammar's reason, less its "bad duration 'V'" */
			reason = strstr(why, "': ") ? strstr(why, "': ") + 3 : why;
			if (strncmp(reason, "use ms", 6) == 0)
				reason = "use e.g. 500ms, 2s or 5m";
			return bad_value(a, option, v, reason);
		}
		if (bare || !zero_ok) { /* a bare 0 is no time whatever its unit */
			snprintf(hint, sizeof(hint), "needs a unit, e.g. %sms or %ss", v, v);
			return bad_value(a, option, v,
					 bare ? hint : "give a duration above 0, e.g. 500ms or 2s");
		}
		*ms = 0;
	}
	if (*ms <= 0 && !zero_ok)
		return bad_value(a, option, v, "give a duration above 0, e.g. 500ms or 2s");
	return 0;
}

static int set_timeout(struct cli_args *a, const char *v)
{
	return duration(a, "timeout", v, false, &a->opt.timeout_ms);
}

static int set_expect(struct cli_args *a, const char *v)
{
	a->expect = engine_outcome_parse(v);
	if (a->expect < 0)
		return bad_value(a, "expect", v,
				 "use bug, completed, unrealizable, infeasible or error");
	return 0;
}

static int set_watchpoints(struct cli_args *a, const char *v)
{
	int mode = engine_watchpoints_parse(v);

	if (mode < 0)
		return bad_value(a, "watchpoints", v, "use hw, sw or auto");
	a->opt.watchpoints = (enum engine_watchpoints)mode;
	return 0;
}

/* A whole number in [min, max], or -1 after saying which option. */
static int whole(struct cli_args *a, const char *option, const char *v, long min, long max,
		 long *out)
{
	char *end;

	errno = 0;
	*out = strtol(v, &end, 10);
	if (errno || !*v || *end || *out < min || *out > max)
		return bad_value(a, option, v, NULL);
	return 0;
}

static int set_runs(struct cli_args *a, const char *v)
{
	return whole(a, "runs", v, 1, 0x7fffffffL, &a->eo.max_runs);
}

static int set_instances(struct cli_args *a, const char *v)
{
	return whole(a, "instances", v, 1, 0x7fffffffL, &a->instances);
}

static int set_time(struct cli_args *a, const char *v)
{
	/* 0 would mean no limit, as when --time is not given: refused as
	 * --runs 0 is */
	return duration(a, "time", v, false, &a->eo.max_ms);
}

static int set_minimize_time(struct cli_args *a, const char *v)
{
	return duration(a, "minimize-time", v, true, &a->eo.minimize_ms); /* 0: no limit */
}

/* Checked with the other options, before anything runs: a misspelt
 * strategy is a usage error, said before an old --out would be. */
static int set_strategy(struct cli_args *a, const char *v)
{
	struct search_config cfg = {0};
	char err[512];

	if (search_parse(v, &cfg, err, sizeof(err)) < 0) {
		cli_usage_error(a->command, "%s", err);
		return -1;
	}
	a->eo.strategy = v;
	return 0;
}

/* --model given again adds its models to the others' */
static int add_models(struct cli_args *a, const char *v)
{
	char *joined = NULL;

	if (!a->models) {
		a->models = v;
		return 0;
	}
	if (asprintf(&joined, "%s,%s", a->models, v) < 0) {
		cli_usage_error(a->command, "out of memory");
		return -1;
	}
	free(a->models_joined);
	a->models = a->models_joined = joined; /* typestate_main frees it */
	return 0;
}

static int set_seed(struct cli_args *a, const char *v)
{
	char *end;

	errno = 0;
	a->eo.seed = strtoull(v, &end, 10);
	/* strtoull takes "-1" for 2^64 - 1 */
	if (errno || !*v || *end || !isdigit((unsigned char)*v))
		return bad_value(a, "seed", v, "give a whole number from 0 on");
	return 0;
}

static int set_shard(struct cli_args *a, const char *v)
{
	char extra;

	if (sscanf(v, "%d/%d%c", &a->eo.shard, &a->eo.nshards, &extra) != 2 || a->eo.shard < 1 ||
	    a->eo.shard > a->eo.nshards)
		return bad_value(a, "shard", v, "use I/N with 1 <= I <= N, e.g. 2/4");
	return 0;
}

static int set_minimize(struct cli_args *a, const char *v)
{
	long n;

	if (whole(a, "minimize", v, 0, 1000, &n) < 0)
		return -1;
	a->eo.minimize_replays = (int)n;
	return 0;
}

static int set_jobs(struct cli_args *a, const char *v)
{
	long n;

	if (whole(a, "jobs", v, 1, 256, &n) < 0)
		return -1;
	a->eo.jobs = (int)n;
	return 0;
}

static int set_max_steps(struct cli_args *a, const char *v)
{
	return whole(a, "max-steps", v, 1, 0x7fffffffL, &a->to.max_steps);
}

static int set_ok_exit(struct cli_args *a, const char *v)
{
	long code;

	if (whole(a, "ok-exit", v, 1, 255, &code) < 0)
		return -1;
	a->opt.ok_exit[code / 64] |= 1ull << (code % 64);
	return 0;
}

static int set_points(struct cli_args *a, const char *v)
{
	static const char *const names[] = {"shared", "sync", "all"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i]) == 0) {
			a->to.points = (enum test_points)i;
			return 0;
		}
	return bad_value(a, "points", v, "use shared, sync or all");
}

static int set_early_timeouts(struct cli_args *a, const char *v)
{
	(void)v;
	a->to.early_timeouts = true;
	return 0;
}

static int set_no_minimize(struct cli_args *a, const char *v)
{
	(void)v;
	a->eo.minimize_replays = 0;
	return 0;
}

#define FIELD(f)  offsetof(struct cli_args, f)
#define CHECK(fn) STORE_CHECK, 0, fn

/* The table.  Rows of one name may differ by command (-o is a FILE for
 * run, a DIR for explore); a name's first row gives its getopt entry. */
static const struct cli_option table[] = {
    {"quiet", 'q', NULL, CLI_RUN | CLI_ATTACH | CLI_SHELL, "no trace lines, only the outcome",
     STORE_TRUE, FIELD(quiet)},
    {"quiet", 'q', NULL, CLI_EXPLORE | CLI_TEST,
     "no progress lines and no watchpoint note, only the bugs found and the summary", STORE_TRUE,
     FIELD(quiet)},
    {"out", 'o', "FILE", CLI_RUN | CLI_ATTACH, "the trace to FILE instead of stderr (- for stdout)",
     STORE_STRING, FIELD(out_path)},
    {"out", 'o', "DIR", CLI_EXPLORE | CLI_TEST,
     "where bug-N.sched, bug-N.txt and bug-N.html go (default cctrace-bugs;\n"
     "made with its parents); a search refuses a DIR holding bug files of an\n"
     "earlier one",
     STORE_STRING, FIELD(out_path)},
    {"clean", 0, NULL, CLI_EXPLORE | CLI_TEST,
     "remove the bug files of an earlier search from DIR first", STORE_TRUE, FIELD(eo.clean)},
    {"timeout", 0, "DURATION", TRACING,
     "default limit of every wait (e.g. 500ms, 2s, 1.5m; default 10s)", CHECK(set_timeout)},
    {"expect", 0, "OUTCOME", CLI_RUN | CLI_ATTACH,
     "exit 0 if the outcome is OUTCOME (bug, completed, unrealizable, infeasible, error) and 4 "
     "otherwise",
     CHECK(set_expect)},
    {"expect", 0, "OUTCOME", CLI_EXPLORE | CLI_TEST,
     "exit 0 if the search's outcome is OUTCOME (bug if it found one, else completed) and 4 "
     "otherwise",
     CHECK(set_expect)},
    {"ok-exit", 0, "N", ALL_RUNS | CLI_TEST,
     "with --fail-on-exit, and always in test, exit status N is not a bug\n"
     "(repeatable)",
     CHECK(set_ok_exit)},
    {"fail-on-sanitizer", 0, NULL, CLI_RUN | CLI_EXPLORE,
     "a sanitizer's report (ASan, TSan, UBSan) in the program's stderr is a bug\n"
     "(its stderr then shows when it has ended; on in test)",
     STORE_TRUE, FIELD(opt.sanitizer_bugs)},
    {"fail-on-exit", 0, NULL, ALL_RUNS, "a non-zero exit status of the program is a bug",
     STORE_TRUE, FIELD(opt.fail_on_exit)},
    {"driver", 0, "CMD", ALL_RUNS | CLI_TEST | CLI_TYPESTATE,
     "a shell command (a client) started once the program is under control;\n"
     "the run ends when it exits, non-zero being a bug",
     STORE_STRING, FIELD(opt.driver)},
    {"trace-json", 0, "FILE", CLI_RUN | CLI_ATTACH,
     "also write the trace as JSON lines to FILE (- for stdout): a header,\n"
     "the events and the outcome (docs/json.md)",
     STORE_STRING, FIELD(trace_json_path)},
    {"trace-json", 0, "FILE", CLI_EXPLORE | CLI_TEST,
     "write every run's trace as JSON lines to FILE (- for stdout), each a\n"
     "header, the events and an outcome record with the run's number and\n"
     "choices (docs/json.md)",
     STORE_STRING, FIELD(trace_json_path)},
    {"trace-chrome", 0, "FILE", CLI_RUN | CLI_ATTACH,
     "write the run to FILE (- for stdout) in the Trace Event Format that\n"
     "Perfetto and chrome://tracing load: a track per thread, the trace lines\n"
     "as instants, the times a thread was held as slices (explore: replay a\n"
     "bug-N.sched with run --trace-chrome)",
     STORE_STRING, FIELD(chrome_path)},
    {"junit", 0, "FILE", CLI_RUN | CLI_ATTACH,
     "write a JUnit XML report to FILE (- for stdout): one test case, passed\n"
     "if the outcome is --expect's (completed without it), else failed with\n"
     "the outcome's message",
     STORE_STRING, FIELD(junit_path)},
    {"junit", 0, "FILE", CLI_EXPLORE | CLI_TEST,
     "write a JUnit XML report to FILE (- for stdout): a failed test case per\n"
     "bug found, with its report and bug-N.sched, or one passed test case\n"
     "when none (--expect bug: the other way round)",
     STORE_STRING, FIELD(junit_path)},
    {"no-pin", 0, NULL, TRACING, "do not pin cctrace and driven threads to one CPU", STORE_FALSE,
     FIELD(opt.pin_cpu)},
    {"no-children", 0, NULL, CLI_ATTACH | CLI_SHELL,
     "(PID) the pid alone: not the processes descending from it, and the\n"
     "ones it forks are let go at birth",
     STORE_TRUE, FIELD(opt.no_children)},
    {"include-stack", 0, NULL, TRACING, "bare read/write also match accesses through rsp/rbp",
     STORE_TRUE, FIELD(opt.include_stack)},
    {"single-step", 0, NULL, ALL_RUNS,
     "find instruction-level events (read, write, call) by single-stepping\n"
     "every instruction instead of decoding ahead (slower; the reference)",
     STORE_TRUE, FIELD(opt.single_step)},
    {"watchpoints", 0, "MODE", TRACING,
     "read(X)/write(X) by debug registers (hw), by decoding instructions (sw),\n"
     "or hw where they trap on this host (auto, the default; also\n"
     "$CCTRACE_WATCHPOINTS)",
     CHECK(set_watchpoints)},
    {"strategy", 0, "S", CLI_EXPLORE | CLI_TEST,
     "dfs (explore's default), bfs, random[:C], pct:D[:C], cb:N, vb:V[:T], pctvb:D[:V], ipb, "
     "idb or ib:K; test's default is a portfolio of pct and random (docs/test.md)",
     CHECK(set_strategy)},
    {"runs", 0, "N", CLI_EXPLORE | CLI_TEST,
     "stop after N runs (test's default: 100; explore's random and pct: 100)", CHECK(set_runs)},
    {"time", 0, "DURATION", CLI_EXPLORE | CLI_TEST | CLI_TYPESTATE,
     "stop after this long, ending the run in progress (e.g. 30s, 5m)", CHECK(set_time)},
    {"seed", 0, "S", CLI_EXPLORE | CLI_TEST, "seed of random, pct, pctvb and vb:V:T (default 1)",
     CHECK(set_seed)},
    {"shard", 0, "I/N", CLI_EXPLORE | CLI_TEST, "explore the I-th of N disjoint parts",
     CHECK(set_shard)},
    {"all", 0, NULL, CLI_EXPLORE | CLI_TEST, "keep searching after the first bug", STORE_TRUE,
     FIELD(eo.all)},
    {"verbose", 0, NULL, CLI_EXPLORE | CLI_TEST,
     "print the trace and report of every run that is not completed", STORE_TRUE,
     FIELD(eo.verbose)},
    {"minimize", 0, "R", CLI_EXPLORE | CLI_TEST,
     "cut each bug schedule down while it reproduces in R of R replays\n(default 10; 0: as "
     "--no-minimize)",
     CHECK(set_minimize)},
    {"minimize-time", 0, "DURATION", CLI_EXPLORE | CLI_TEST,
     "minimise each bug for at most this long (default 2m, 0: no limit);\n"
     "the steps dropped by then stay dropped",
     CHECK(set_minimize_time)},
    {"no-minimize", 0, NULL, CLI_EXPLORE | CLI_TEST, "keep each bug schedule as found",
     CHECK(set_no_minimize)},
    {"no-snapshot", 0, NULL, CLI_EXPLORE | CLI_TEST,
     "launch the program afresh for every run instead of forking it from a\n"
     "copy held at its entry point (the same runs, slower)",
     STORE_TRUE, FIELD(eo.no_snapshot)},
    {"json", 0, NULL, CLI_EXPLORE | CLI_TEST,
     "print a JSON summary on stdout at the end (docs/json.md)", STORE_TRUE, FIELD(json)},
    {"json-file", 0, "FILE", CLI_EXPLORE | CLI_TEST,
     "write the JSON summary to FILE instead (- for stdout): apart from what\n"
     "the program prints on stdout",
     STORE_STRING, FIELD(json_path)},
    {"schedules", 0, "FILE", CLI_EXPLORE | CLI_TEST,
     "write each run's choices and outcome, one line per run (- for stdout)", STORE_STRING,
     FIELD(schedules_path)},
    {"jobs", 'j', "J", CLI_EXPLORE | CLI_TEST,
     "explore with J processes (default 1); \"{job}\" in PROGRAM, ARGS and\n"
     "--driver is the job's number, 1..J (a port per job)",
     CHECK(set_jobs)},
    {"max-steps", 0, "N", CLI_TEST | CLI_EXPLORE,
     "end a run after N scheduling steps as a livelock candidate (default 100000;\n"
     "explore: only without a schedule, as test)",
     CHECK(set_max_steps)},
    {"points", 0, "MODE", CLI_TEST | CLI_EXPLORE,
     "scheduling points besides synchronisation: shared (default; the accesses a\n"
     "profiling phase found shared), sync (none), all (every non-stack access;\n"
     "explore: only without a schedule, as test)",
     CHECK(set_points)},
    {"early-timeouts", 0, NULL, CLI_TEST | CLI_EXPLORE,
     "a thread in a timed wait (pthread_mutex_timedlock, try_lock_for, a\n"
     "condition's or semaphore's timed wait) may time out at any choice, as if\n"
     "its time were up, not only when no other thread can run: finds code that\n"
     "gives up too soon (explore: only without a schedule, as test)",
     CHECK(set_early_timeouts)},
    {"model", 0, "MODELS", CLI_TYPESTATE,
     "the typestate models, separated by commas: built-in ones (file, lock,\n"
     "memory; the default is all three) and model files FILE.ts\n"
     "(docs/typestate.md); given again, the models add up",
     CHECK(add_models)},
    {"runs", 0, "N", CLI_TYPESTATE, "re-execute at most N candidates (default: all)",
     CHECK(set_runs)},
    {"instances", 0, "N", CLI_TYPESTATE,
     "re-execute each candidate at most N times, once per instance that matters:\n"
     "the latest of each distinct pair of call stacks, then the first (default 3)",
     CHECK(set_instances)},
    {"out", 'o', "DIR", CLI_TYPESTATE,
     "where profile.sched, candidates.txt, bug-N.sched, bug-N.txt and the\n"
     "history go (default typestate-out; made with its parents)",
     STORE_STRING, FIELD(out_path)},
    {"timeout", 0, "DURATION", CLI_TYPESTATE,
     "limit of every wait of one re-execution (default 5s)", CHECK(set_timeout)},
    {"ignore-history", 0, NULL, CLI_TYPESTATE,
     "also re-execute the candidates DIR/typestate-history says failed before", STORE_TRUE,
     FIELD(ignore_history)},
    {"lock-order", 0, NULL, CLI_TYPESTATE,
     "count a mutex unlock followed by another thread's lock as happens-before\n"
     "(fewer candidates; hides bugs whose order only a lock's order kept)",
     STORE_TRUE, FIELD(lock_order)},
    {"exit-on-error", 0, NULL, CLI_SHELL, "stop at the first failed command, exit code 3",
     STORE_TRUE, FIELD(exit_on_error)},
    {"help", 'h', NULL, ~0u, "this text", STORE_TRUE, FIELD(help)},
};
#define NOPTIONS (sizeof(table) / sizeof(table[0]))

static const struct cli_command_info {
	const char *name;
	enum cli_command bit;
	const char *synopsis; /* after "cctrace NAME " */
	const char *about;
	const char *epilog; /* NULL: none */
} commands[] = {
    {"run", CLI_RUN, "[OPTIONS] SCHEDULE -- PROGRAM [ARGS...]",
     "Launch PROGRAM and drive its threads along the schedule file.",
     "exit codes: 0 completed, 1 bug, 2 unrealizable, 3 error, 4 unexpected outcome\n"
     "(--expect), 5 infeasible (an assume was false), 128+N interrupted by signal N\n"
     "(130: Ctrl-C), after detaching\n"},
    {"attach", CLI_ATTACH, "[OPTIONS] PID SCHEDULE",
     "Attach to a running process, drive its threads along the schedule file, and\n"
     "detach, leaving it running as it was.",
     "exit codes: as for run\n"},
    {"explore", CLI_EXPLORE, "[OPTIONS] SCHEDULE -- PROGRAM [ARGS...]",
     "Restart PROGRAM until the schedule's choices are used up, saving each bug\n"
     "as DIR/bug-N.sched (replay it with cctrace run) and DIR/bug-N.txt.",
     "exit codes: 0 no bug found, 1 bug found, 3 error (or no run could follow the\n"
     "schedule), 4 unexpected outcome (--expect), 128+N interrupted by signal N\n"
     "(130: Ctrl-C)\n"
     "See docs/search.md.\n"},
    {"test", CLI_TEST, "[OPTIONS] -- PROGRAM [ARGS...]",
     "Test PROGRAM for concurrency bugs without a schedule: run it serialized,\n"
     "one thread at a time, a search choosing the thread at every\n"
     "synchronisation and shared access; save each bug as DIR/bug-N.sched (a\n"
     "`serial` schedule that cctrace run replays) and DIR/bug-N.txt.\n"
     "A fatal signal, a failed assert, a non-zero exit and a deadlock are bugs.",
     "exit codes: 0 no bug found, 1 bug found, 3 error (or no run could run),\n"
     "4 unexpected outcome (--expect), 128+N interrupted by signal N (130: Ctrl-C)\n"
     "See docs/test.md.\n"},
    {"shell", CLI_SHELL, "[OPTIONS] PID | -- PROGRAM [ARGS...]",
     "Hold the threads of a program and schedule them by hand; `save FILE`\n"
     "writes the session as a schedule.  Commands come from the terminal (line\n"
     "editing, history, Tab completion) or, from a pipe, one per line.",
     "See docs/shell.md; 'help' at the prompt lists the commands.\n"},
    {"typestate", CLI_TYPESTATE, "[OPTIONS] -- PROGRAM [ARGS...]",
     "Find typestate bugs across threads (a descriptor used after another thread\n"
     "closed it, a mutex destroyed while another thread uses it, a block freed\n"
     "while another thread uses it) from a profile of one ordinary run, and\n"
     "manifest each by re-executing PROGRAM under a generated schedule (2ndStrike).",
     "exit codes: 0 no bug manifested, 1 bug manifested (DIR/bug-N.sched replays it\n"
     "with cctrace run --expect bug), 3 error, 128+N interrupted by signal N\n"
     "(130: Ctrl-C)\n"
     "See docs/typestate.md.\n"},
    {"watchpoints", CLI_WATCHPOINTS, "",
     "Say whether debug-register watchpoints trap on this host (exit 0) or\n"
     "read(X)/write(X) are found by decoding instructions (exit 1).",
     NULL},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cli_command_info *command_info(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

bool cli_is_command(const char *cmd)
{
	return command_info(cmd) != NULL;
}

const char *cli_nearest_name(const char *word, size_t n, const char *(*name_at)(size_t i))
{
	const char *best = NULL;
	unsigned d, best_d = 3;
	size_t i;

	for (i = 0; i < n; i++) {
		d = sym_edit_distance(word, strlen(word), name_at(i), strlen(name_at(i)));
		if (d < best_d) {
			best_d = d;
			best = name_at(i);
		}
	}
	return best;
}

static const char *command_name_at(size_t i)
{
	return commands[i].name;
}

int cli_unknown_command(const char *word)
{
	const char *near = cli_nearest_name(word, NCOMMANDS, command_name_at);

	if (word[0] == '-' && sym_edit_distance(word, strlen(word), "--version", 9) < 3)
		return cli_usage_error(NULL, "unknown option '%s'; did you mean '--version'?",
				       word);
	if (word[0] == '-') /* --help is too near everything short to guess */
		return cli_usage_error(NULL, "unknown option '%s' (a command's options follow it)",
				       word);
	if (near)
		return cli_usage_error(NULL, "unknown command '%s'; did you mean '%s'?", word,
				       near);
	return cli_usage_error(NULL, "unknown command '%s'", word);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cctrace%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'cctrace%s%s --help' for more information.\n", cmd ? " " : "",
		cmd ? cmd : "");
	return EXIT_ERROR;
}

/* A trace is read while it is written (tail -f, a pipe) and must survive
 * a kill -9 of cctrace up to its last event: whole lines, each written at
 * once, not buffer-fulls at the end. */
/* Are a and b one file (b need not exist)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Is path one of the command's inputs (a schedule operand, the program)?
 * Writing it would destroy it: `run --junit s.sched s.sched` replaced the
 * schedule, and naming the program replaced it with XML. */
static bool is_an_input(const struct cli_args *a, const char *path)
{
	struct stat out;
	int i;

	if (stat(path, &out) < 0 || !S_ISREG(out.st_mode))
		return false;
	for (i = 0; i < a->noperands; i++)
		if (same_file(a->operands[i], path))
			return true;
	return a->program && a->program[0] && same_file(a->program[0], path);
}

/* Could path be written: an existing file we may write, or a new one in
 * a directory we may write to?  errno says why not. */
static bool writable(const char *path)
{
	char *dir = strdup(path), *slash;
	struct stat st;
	bool ok;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			free(dir);
			errno = EISDIR;
			return false;
		}
		free(dir);
		return access(path, W_OK) == 0;
	}
	if (!dir)
		return false;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	ok = access(slash ? dir : ".", W_OK | X_OK) == 0;
	free(dir);
	return ok;
}

/* Is path a file named bug-* in directory dir? */
static bool in_dir_as_bug_file(const char *dir, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *parent = strndup(path, (size_t)(base - path));
	struct stat a, b;
	bool same;

	if (!parent || strncmp(base, "bug-", 4) != 0) {
		free(parent);
		return false;
	}
	same = stat(dir, &a) == 0 && stat(*parent ? parent : ".", &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	free(parent);
	return same;
}

int cli_check_outputs(const struct cli_args *a)
{
	const bool dir_out = a->bit & (CLI_EXPLORE | CLI_TEST | CLI_TYPESTATE);
	const struct {
		const char *option, *path;
	} outs[] = {
	    {"-o", dir_out ? NULL : a->out_path}, {"--trace-json", a->trace_json_path},
	    {"--trace-chrome", a->chrome_path},	  {"--junit", a->junit_path},
	    {"--json-file", a->json_path},	  {"--schedules", a->schedules_path},
	};
	size_t i, j, n = sizeof(outs) / sizeof(outs[0]);

	for (i = 0; i < n; i++) {
		if (!outs[i].path || strcmp(outs[i].path, "-") == 0)
			continue;
		if (is_an_input(a, outs[i].path)) {
			fprintf(
			    stderr,
			    "cctrace %s: error: %s %s is an input of this command (the schedule "
			    "or the program), not a file to write\n",
			    a->command, outs[i].option, outs[i].path);
			return -1;
		}
		for (j = 0; j < i; j++)
			if (outs[j].path && same_file(outs[i].path, outs[j].path)) {
				fprintf(stderr,
					"cctrace %s: error: %s and %s both name %s; each output "
					"needs a file of its own\n",
					a->command, outs[j].option, outs[i].option, outs[i].path);
				return -1;
			}
	}
	/* written once the run or search is over: a bad path must not wait
	 * for it, and hide its outcome behind "cannot write" (nor is the file
	 * made now: a refused command leaves none behind) */
	if (a->junit_path && strcmp(a->junit_path, "-") != 0 && !writable(a->junit_path)) {
		fprintf(stderr, "cctrace %s: cannot write %s: %s\n", a->command, a->junit_path,
			strerror(errno));
		return -1;
	}
	/* a search's bug files are its own: --junit bug-1.sched in -o's
	 * directory replaced the bug's schedule */
	for (i = 0; dir_out && a->out_path && i < n; i++)
		if (outs[i].path && in_dir_as_bug_file(a->out_path, outs[i].path)) {
			fprintf(stderr,
				"cctrace %s: error: %s %s would be written over by the search's "
				"bug files in %s (bug-N.*)\n",
				a->command, outs[i].option, outs[i].path, a->out_path);
			return -1;
		}
	return 0;
}

FILE *cli_open_output(const char *cmd, const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		return stdout;
	}
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "cctrace %s: cannot write %s: %s\n", cmd, path, strerror(errno));
	else
		setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

void cli_close_output(FILE *f)
{
	if (f == stdout)
		fflush(f);
	else if (f)
		fclose(f);
}

void cli_print_error(const char *err)
{
	/* a diagnostic ends with its caret line's newline: no blank line after */
	bool ends = *err && err[strlen(err) - 1] == '\n';

	fprintf(stderr, lang_diag_error_word(err) ? "%s%s" : "cctrace: error: %s%s", err,
		ends ? "" : "\n");
}

#define HELP_COLUMN 26
#define HELP_WIDTH  79

/* The help text from HELP_COLUMN on, its words wrapped at HELP_WIDTH. */
static void print_wrapped(FILE *f, const char *text)
{
	int col = HELP_COLUMN;
	size_t n;

	for (text += strspn(text, " \n"); *text; text += strspn(text, " \n")) {
		n = strcspn(text, " \n");
		if (col > HELP_COLUMN && col + 1 + (int)n > HELP_WIDTH) {
			fprintf(f, "\n%*s", HELP_COLUMN, "");
			col = HELP_COLUMN;
		}
		if (col > HELP_COLUMN) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)n, text);
		col += (int)n;
		text += n;
	}
	fputc('\n', f);
}

static void print_option(FILE *f, const struct cli_option *o)
{
	char left[64];

	if (o->short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	fprintf(f, "  %-*s", HELP_COLUMN - 2, left);
	if (strlen(left) > HELP_COLUMN - 3)
		fprintf(f, "\n%*s", HELP_COLUMN, "");
	print_wrapped(f, o->help);
}

void cli_help(const char *cmd, FILE *f)
{
	const struct cli_command_info *c = command_info(cmd);
	size_t i;

	if (!c)
		return;
	fprintf(f, "usage: cctrace %s%s%s\n\n%s\n\noptions:\n", c->name, c->synopsis[0] ? " " : "",
		c->synopsis, c->about);
	for (i = 0; i < NOPTIONS; i++)
		if (table[i].commands & c->bit)
			print_option(f, &table[i]);
	if (c->epilog)
		fprintf(f, "\n%s", c->epilog);
}

void cli_global_help(FILE *f)
{
	size_t i;

	fputs("usage: cctrace COMMAND [OPTIONS] [OPERANDS] [-- PROGRAM [ARGS...]]\n"
	      "\n"
	      "Drive the threads of a program along a schedule file.\n"
	      "\n"
	      "commands:\n",
	      f);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  cctrace %s%s%s\n", commands[i].name,
			commands[i].synopsis[0] ? " " : "", commands[i].synopsis);
	fputs("  cctrace help [COMMAND]   this text, or a command's options\n"
	      "  cctrace --version\n"
	      "\n"
	      "Options go anywhere before `--`; `cctrace COMMAND --help` lists them.\n"
	      "exit codes: 0 completed, 1 bug, 2 unrealizable, 3 error, 4 unexpected outcome,\n"
	      "            128+N interrupted by signal N (130: Ctrl-C), after detaching\n",
	      f);
}

/* --- parsing --- */

static void defaults(struct cli_args *a, const struct cli_command_info *c)
{
	memset(a, 0, sizeof(*a));
	a->command = c->name;
	a->bit = c->bit;
	a->expect = -1;
	a->opt.report = stderr;
	a->opt.pin_cpu = true;
	a->opt.trace = c->bit == CLI_SHELL			     ? stdout
		       : c->bit == CLI_EXPLORE || c->bit == CLI_TEST ? NULL
								     : stderr;
	a->eo.out_dir = "cctrace-bugs";
	a->eo.seed = 1;
	a->eo.minimize_replays = 10;
	a->eo.minimize_ms = 2 * 60 * 1000;
}

/* The row of name (long) or short_name for cmd; *known says whether any
 * command takes it. */
static const struct cli_option *find(const char *name, int short_name, unsigned bit, bool *known)
{
	size_t i;

	*known = false;
	for (i = 0; i < NOPTIONS; i++) {
		if (name ? strcmp(table[i].name, name) != 0 : table[i].short_name != short_name)
			continue;
		*known = true;
		if (table[i].commands & bit)
			return &table[i];
	}
	return NULL;
}

/* "attach and shell" */
static void command_names(unsigned bits, char *buf, size_t len)
{
	size_t i, used = 0, n = 0, total = 0;

	for (i = 0; i < NCOMMANDS; i++)
		total += (bits & commands[i].bit) != 0;
	buf[0] = 0;
	for (i = 0; i < NCOMMANDS && used < len; i++)
		if (bits & commands[i].bit)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 n++ == 0     ? ""
						 : n == total ? " and "
							      : ", ",
						 commands[i].name);
}

static int store(struct cli_args *a, const struct cli_option *o, const char *value)
{
	char *base = (char *)a;

	switch (o->store) {
	case STORE_TRUE:
	case STORE_FALSE:
		*(bool *)(base + o->field) = o->store == STORE_TRUE;
		return 0;
	case STORE_STRING:
		*(const char **)(base + o->field) = value;
		return 0;
	case STORE_CHECK:
		return o->set(a, value);
	}
	return -1;
}

/* getopt's list, one entry per name; val is the row of its first use. */
static struct option *long_options(char *shorts, size_t len)
{
	struct option *l = calloc(NOPTIONS + 1, sizeof(*l));
	size_t i, j, n = 0, used = 0;

	if (!l)
		return NULL;
	used += (size_t)snprintf(shorts, len, ":"); /* report missing arguments as ':' */
	for (i = 0; i < NOPTIONS; i++) {
		for (j = 0; j < n && strcmp(l[j].name, table[i].name) != 0; j++)
			;
		if (j < n)
			continue;
		l[n++] =
		    (struct option){table[i].name, table[i].arg ? required_argument : no_argument,
				    NULL, (int)(256 + i)};
		assert(used + 3 < len); /* room for "x:" and the NUL: grow shorts[] */
		if (table[i].short_name)
			used += (size_t)snprintf(shorts + used, len - used, "%c%s",
						 table[i].short_name, table[i].arg ? ":" : "");
	}
	return l;
}

/* What test does without being asked: refused there, as said. */
static bool always_in_test(const char *name)
{
	return name &&
	       (strcmp(name, "fail-on-exit") == 0 || strcmp(name, "fail-on-sanitizer") == 0);
}

/* What getopt returned for one option: stored, or a mistake reported. */
static int one_option(struct cli_args *a, int ch, char **argv)
{
	const struct cli_option *o;
	char where[128];
	bool known;

	if (ch == '?' || ch == ':') {
		const char *text = argv[optind - 1];

		if (ch == ':')
			return cli_usage_error(a->command, "option '%s' needs an argument", text),
			       -1;
		/* --quiet=yes: getopt gives the option's value, ours 256 + row */
		if (optopt >= 256 && optopt < 256 + (int)NOPTIONS)
			return cli_usage_error(a->command, "option '--%s' takes no argument",
					       table[optopt - 256].name),
			       -1;
		if (optopt > 0 && optopt < 256)
			return cli_usage_error(a->command, "unknown option '-%c'", optopt), -1;
		return cli_usage_error(a->command, "unknown option '%s'", text), -1;
	}
	o = ch >= 256 ? find(table[ch - 256].name, 0, a->bit, &known)
		      : find(NULL, ch, a->bit, &known);
	if (!o) {
		size_t i;
		unsigned bits = 0;
		const char *name = ch >= 256 ? table[ch - 256].name : NULL;

		for (i = 0; i < NOPTIONS; i++)
			if (name ? strcmp(table[i].name, name) == 0 : table[i].short_name == ch)
				bits |= table[i].commands, name = table[i].name;
		if (a->bit == CLI_TEST && always_in_test(name))
			return cli_usage_error(a->command, "--%s is always on in test%s", name,
					       strcmp(name, "fail-on-exit") == 0
						   ? " (--ok-exit N allows a status)"
						   : ""),
			       -1;
		command_names(bits, where, sizeof(where));
		return cli_usage_error(a->command, "--%s is for %s", name, where), -1;
	}
	return store(a, o, optarg);
}

int cli_parse(const char *cmd, int argc, char **argv, struct cli_args *a)
{
	const struct cli_command_info *c = command_info(cmd);
	char shorts[64], err[512];
	struct option *longs;
	int ch, dashes, rc = 0;

	if (!c)
		return cli_usage_error(NULL, "unknown command '%s'", cmd), -1;
	defaults(a, c);
	for (dashes = 1; dashes < argc && strcmp(argv[dashes], "--") != 0; dashes++)
		;
	longs = long_options(shorts, sizeof(shorts));
	if (!longs) {
		fprintf(stderr, "cctrace %s: out of memory\n", cmd);
		return -1;
	}
	optind = 0; /* a fresh scan; options and operands may mix before `--` */
	opterr = 0;
	while (rc == 0 && (ch = getopt_long(dashes, argv, shorts, longs, NULL)) != -1)
		rc = one_option(a, ch, argv);
	free(longs);
	if (rc < 0)
		return -1;
	if (a->help) {
		cli_help(cmd, stdout);
		return 1;
	}
	a->operands = argv + optind;
	a->noperands = dashes - optind;
	a->program = dashes < argc ? argv + dashes + 1 : NULL;
	if (a->quiet && c->bit != CLI_EXPLORE && c->bit != CLI_TEST)
		a->opt.trace = NULL;
	if (c->bit & TRACING &&
	    engine_resolve_watchpoints(&a->opt, &a->watch_why, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}
