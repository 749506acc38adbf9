/*
 * explore.c: `cctrace explore`, the command line of systematic search.
 *
 *   cctrace explore SCHED [--strategy dfs|bfs|random|pct:D|cb:N|vb:V[:T]|pctvb:D:V] [--runs N]
 *                         [--time T] [--seed S] [--shard I/N] [--out DIR]
 *                         [--all] [--json] [--schedules FILE] [--jobs J] -- PROG ARGS
 *
 * It parses its options and hands the loaded schedule to search_explore.
 * With --jobs J it forks J workers, each exploring one of J sub-shards of
 * its shard (so --jobs and --shard compose), each into its own directory;
 * the parent stops the others at the first bug (unless --all), then
 * numbers every worker's bugs into one sequence in DIR.
 * Exit code: 1 when a bug was found, 0 when the search ended without one,
 * 3 on an error.  A search in which no run could follow the schedule (the
 * first one failed before its first choice point, or every run was
 * unrealizable or an error) explored nothing: that is an error too, with
 * the reason, not "0 bugs" (exit 3 rather than 2, unrealizable, because it
 * says the search itself could not be done, as a schedule that does not
 * load; exit 0 would let a CI job pass with the bug unfound).
 */
#include "cli/explore.h"
#include "engine/engine.h"
#include "lang/lang.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("usage: cctrace explore SCHEDULE [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "  --strategy S      dfs (default), bfs, random, pct:D, cb:N, vb:V[:T] or pctvb:D:V\n"
	      "  --runs N          stop after N runs (random and pct default to 100)\n"
	      "  --time DURATION   stop after this long (e.g. 30s, 5m)\n"
	      "  --seed S          seed of random, pct, pctvb and vb:V:T (default 1)\n"
	      "  --shard I/N       explore the I-th of N disjoint parts\n"
	      "  --out DIR         where bug-N.sched and bug-N.txt go (default cctrace-bugs)\n"
	      "  --all             keep searching after the first bug\n"
	      "  --verbose         print the trace and report of every run that is not completed\n"
	      "  --driver CMD      a shell command (a client) started once the program is under\n"
	      "                    control; the run ends when it exits, non-zero being a bug\n"
	      "  --minimize R      cut each bug schedule down while it reproduces in R of R\n"
	      "                    replays (default 10); --no-minimize keeps it as found\n"
	      "  --json            print a JSON summary on stdout at the end\n"
	      "  --schedules FILE  write each run's choices and outcome, one line per run\n"
	      "  --jobs J          explore with J processes (default 1); \"{job}\" in PROGRAM,\n"
	      "                    ARGS and --driver is the job's number, 1..J (a port per job)\n"
	      "  --timeout D       limit of every wait (default 10s)\n"
	      "  --fail-on-exit    a non-zero exit status of the program is a bug\n"
	      "  --include-stack   bare read/write also match stack accesses (rsp/rbp)\n"
	      "  --watchpoints M   read(X)/write(X) by debug registers (hw), by decoding (sw),\n"
	      "                    or hw where they trap on this host (auto, the default)\n"
	      "  --no-pin          do not pin cctrace and driven threads to one CPU\n",
	      f);
}

static int bad(const char *what, const char *value)
{
	fprintf(stderr, "cctrace explore: bad %s '%s'\n", what, value);
	return -1;
}

struct explore_cli {
	struct engine_options opt;
	struct explore_options eo;
	const char *schedules_path;
	bool json;
	int jobs;
};

static int parse(int argc, char **argv, struct explore_cli *c)
{
	enum {
		O_STRATEGY = 256,
		O_RUNS,
		O_TIME,
		O_SEED,
		O_SHARD,
		O_OUT,
		O_ALL,
		O_JSON,
		O_SCHEDULES,
		O_TIMEOUT,
		O_FAIL,
		O_NOPIN,
		O_JOBS,
		O_MIN,
		O_NOMIN,
		O_VERBOSE,
		O_DRIVER,
		O_STACK,
		O_WATCHPOINTS
	};
	static const struct option opts[] = {
	    {"strategy", required_argument, NULL, O_STRATEGY},
	    {"runs", required_argument, NULL, O_RUNS},
	    {"time", required_argument, NULL, O_TIME},
	    {"seed", required_argument, NULL, O_SEED},
	    {"shard", required_argument, NULL, O_SHARD},
	    {"out", required_argument, NULL, O_OUT},
	    {"all", no_argument, NULL, O_ALL},
	    {"json", no_argument, NULL, O_JSON},
	    {"schedules", required_argument, NULL, O_SCHEDULES},
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"fail-on-exit", no_argument, NULL, O_FAIL},
	    {"no-pin", no_argument, NULL, O_NOPIN},
	    {"jobs", required_argument, NULL, O_JOBS},
	    {"minimize", required_argument, NULL, O_MIN},
	    {"no-minimize", no_argument, NULL, O_NOMIN},
	    {"verbose", no_argument, NULL, O_VERBOSE},
	    {"driver", required_argument, NULL, O_DRIVER},
	    {"include-stack", no_argument, NULL, O_STACK},
	    {"watchpoints", required_argument, NULL, O_WATCHPOINTS},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int ch;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case O_STRATEGY:
			c->eo.strategy = optarg;
			break;
		case O_RUNS:
			c->eo.max_runs = strtol(optarg, &end, 10);
			if (*end || c->eo.max_runs <= 0)
				return bad("--runs", optarg);
			break;
		case O_TIME:
			if (lang_parse_duration(optarg, strlen(optarg), "s", &c->eo.max_ms, NULL,
						  0) < 0)
				return bad("--time", optarg);
			break;
		case O_SEED:
			c->eo.seed = strtoull(optarg, &end, 10);
			if (*end)
				return bad("--seed", optarg);
			break;
		case O_SHARD:
			if (sscanf(optarg, "%d/%d", &c->eo.shard, &c->eo.nshards) != 2 ||
			    c->eo.shard < 1 || c->eo.shard > c->eo.nshards)
				return bad("--shard (use I/N with 1 <= I <= N)", optarg);
			break;
		case O_OUT:
			c->eo.out_dir = optarg;
			break;
		case O_ALL:
			c->eo.all = true;
			break;
		case O_JSON:
			c->json = true;
			break;
		case O_SCHEDULES:
			c->schedules_path = optarg;
			break;
		case O_TIMEOUT:
			if (lang_parse_duration(optarg, strlen(optarg), "s", &c->opt.timeout_ms,
						  NULL, 0) < 0)
				return bad("--timeout", optarg);
			break;
		case O_FAIL:
			c->opt.fail_on_exit = true;
			break;
		case O_STACK:
			c->opt.include_stack = true;
			break;
		case O_WATCHPOINTS:
			ch = engine_watchpoints_parse(optarg);
			if (ch < 0)
				return bad("--watchpoints (use hw, sw or auto)", optarg);
			c->opt.watchpoints = (enum engine_watchpoints)ch;
			break;
		case O_NOPIN:
			c->opt.pin_cpu = false;
			break;
		case O_MIN:
			c->eo.minimize_replays = (int)strtol(optarg, &end, 10);
			if (*end || c->eo.minimize_replays < 0 || c->eo.minimize_replays > 1000)
				return bad("--minimize", optarg);
			break;
		case O_DRIVER:
			c->opt.driver = optarg;
			break;
		case O_VERBOSE:
			c->eo.verbose = true;
			break;
		case O_NOMIN:
			c->eo.minimize_replays = 0;
			break;
		case O_JOBS:
			c->jobs = (int)strtol(optarg, &end, 10);
			if (*end || c->jobs < 1 || c->jobs > 256)
				return bad("--jobs", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

static void report(const struct explore_summary *sum)
{
	char errors[48] = "";

	if (sum->errors)
		snprintf(errors, sizeof(errors), ", %ld errors", sum->errors);
	fprintf(stderr,
		"cctrace explore: %ld runs, %ld bugs, %ld completed, %ld infeasible, "
		"%ld unrealizable, %ld diverged%s%s\n",
		sum->runs, sum->bugs, sum->completed, sum->infeasible, sum->unrealizable,
		sum->diverged, errors, sum->bugs ? "; see the bug-N.sched files" : "");
}

/* Every run failed to follow the schedule: nothing was explored. */
static int nothing_explored(const struct explore_summary *sum)
{
	if (sum->interrupted || sum->runs == 0 || sum->unrealizable + sum->errors < sum->runs)
		return 0;
	report(sum);
	fprintf(stderr,
		"cctrace explore: error: no run could follow the schedule (every one was "
		"unrealizable or an error), so nothing was explored; the last: %s\n",
		sum->last_failure[0] ? sum->last_failure : "(no report)");
	return 3;
}

static int search(struct explore_cli *c, struct policy *pol, char **prog,
		  struct explore_summary *sum)
{
	char err[4096];

	if (search_explore(pol, prog, &c->opt, &c->eo, sum, err, sizeof(err)) < 0) {
		fprintf(stderr, "cctrace explore: error: %s\n", err);
		return 3;
	}
	return sum->bugs ? 1 : 0;
}

/* --- --jobs --- */

/* Each worker runs its own copy of a server, which needs its own port:
 * "{job}" in PROG ARGS and in --driver becomes the job's number, 1..J
 * (1 without --jobs), e.g. -- memcached -p 1131{job}. */
static char *with_job(const char *s, int job)
{
	const char *at;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!s || !strstr(s, "{job}") || !(f = open_memstream(&out, &len)))
		return (char *)s;
	while ((at = strstr(s, "{job}"))) {
		fprintf(f, "%.*s%d", (int)(at - s), s, job);
		s = at + 5;
	}
	fputs(s, f);
	fclose(f);
	return out;
}

/* argv with {job} replaced, or NULL if it has none (or out of memory). */
static char **argv_with_job(char **argv, int job)
{
	int n = 0, i, changed = 0;
	char **out;

	while (argv[n])
		changed += strstr(argv[n++], "{job}") != NULL;
	if (!changed || !(out = calloc((size_t)n + 1, sizeof(*out))))
		return NULL;
	for (i = 0; i < n; i++)
		out[i] = with_job(argv[i], job);
	return out;
}

static void free_argv_with_job(char **out, char **argv)
{
	int i;

	for (i = 0; out && out[i]; i++)
		if (out[i] != argv[i])
			free(out[i]);
	free(out);
}

struct worker {
	pid_t pid;
	int fd; /* the worker's summary comes back through it */
	char dir[4096];
};

/* Each worker's tracer pins itself (and the threads it drives) to the CPU
 * it starts on: start them on different CPUs, or they share one. */
static void spread_over_cpus(int j)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET((int)(j % n), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void start_worker(struct explore_cli *c, struct policy *pol, char **prog, struct worker *w,
			 int j)
{
	struct explore_cli mine = *c;
	struct explore_summary sum = {0};
	int base = c->eo.nshards ? c->eo.shard - 1 : 0, n = c->eo.nshards ? c->eo.nshards : 1;
	int fds[2], rc;
	char **job_argv;

	snprintf(w->dir, sizeof(w->dir), "%s/job-%d", c->eo.out_dir, j + 1);
	if (pipe(fds) < 0) {
		w->pid = -1;
		return;
	}
	w->pid = fork();
	if (w->pid != 0) {
		close(fds[1]);
		w->fd = fds[0];
		return;
	}
	close(fds[0]);
	spread_over_cpus(j);
	/* --runs is the total, shared out among the workers. */
	if (c->eo.max_runs)
		mine.eo.max_runs = (c->eo.max_runs + c->jobs - 1 - j) / c->jobs;
	mine.eo.shard = base * c->jobs + j + 1;
	mine.eo.nshards = n * c->jobs;
	mine.eo.out_dir = w->dir;
	mine.eo.json = NULL;
	mine.eo.progress = false;
	mine.opt.driver = with_job(c->opt.driver, j + 1);
	job_argv = argv_with_job(prog, j + 1);
	rc = search(&mine, pol, job_argv ? job_argv : prog, &sum);
	if (write(fds[1], &sum, sizeof(sum)) != (ssize_t)sizeof(sum))
		rc = 3;
	_exit(rc);
}

/* Move a worker's bug-N files to DIR/bug-K, K counting across workers. */
static void collect_bugs(const char *out, const struct worker *w, long nbugs, long *next)
{
	char from[8192], to[8192], *text = NULL;
	size_t len = 0;
	long n;
	FILE *f;

	for (n = 1; n <= nbugs; n++, (*next)++) {
		snprintf(from, sizeof(from), "%s/bug-%ld.txt", w->dir, n);
		snprintf(to, sizeof(to), "%s/bug-%ld.txt", out, *next);
		rename(from, to);
		snprintf(from, sizeof(from), "%s/bug-%ld.sched", w->dir, n);
		snprintf(to, sizeof(to), "%s/bug-%ld.sched", out, *next);
		f = fopen(from, "r");
		if (!f)
			continue;
		/* The first line names the file itself: keep it true, and
		 * keep its options. */
		if (getline(&text, &len, f) > 0) {
			FILE *g = fopen(to, "w");
			char *at = strstr(text, from);
			int c;

			if (g) {
				if (at)
					fprintf(g, "%.*s%s%s", (int)(at - text), text, to,
						at + strlen(from));
				else
					fputs(text, g);
				while ((c = fgetc(f)) != EOF)
					fputc(c, g);
				fclose(g);
			}
		}
		fclose(f);
		unlink(from);
	}
	free(text);
	rmdir(w->dir);
}

static void add(struct explore_summary *total, const struct explore_summary *s)
{
	total->runs += s->runs;
	total->bugs += s->bugs;
	total->completed += s->completed;
	total->infeasible += s->infeasible;
	total->unrealizable += s->unrealizable;
	total->diverged += s->diverged;
	total->errors += s->errors;
	total->skipped += s->skipped;
	total->launch_ms += s->launch_ms;
	total->symbols_ms += s->symbols_ms;
	total->schedule_ms += s->schedule_ms;
	total->finish_ms += s->finish_ms;
	if (s->ms > total->ms)
		total->ms = s->ms;
	if (s->last_failure[0])
		memcpy(total->last_failure, s->last_failure, sizeof(total->last_failure));
	total->interrupted |= s->interrupted;
}

static int fan_out(struct explore_cli *c, struct policy *pol, char **prog,
		   struct explore_summary *total)
{
	struct worker w[256];
	int j, status, running = c->jobs, rc = 0;
	long next = 1;
	pid_t pid;

	if (mkdir(c->eo.out_dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "cctrace explore: cannot create %s: %s\n", c->eo.out_dir,
			strerror(errno));
		return 3;
	}
	fflush(NULL);
	for (j = 0; j < c->jobs; j++)
		start_worker(c, pol, prog, &w[j], j);
	while (running > 0 && (pid = wait(&status)) > 0) {
		for (j = 0; j < c->jobs; j++) {
			struct explore_summary sum = {0};

			if (w[j].pid != pid)
				continue;
			running--;
			/* A worker whose search could not start said why. */
			if (read(w[j].fd, &sum, sizeof(sum)) != (ssize_t)sizeof(sum) ||
			    (WIFEXITED(status) && WEXITSTATUS(status) == 3))
				rc = 3;
			close(w[j].fd);
			add(total, &sum);
			collect_bugs(c->eo.out_dir, &w[j], sum.bugs, &next);
			w[j].pid = 0;
		}
		if (total->bugs && !c->eo.all)
			for (j = 0; j < c->jobs; j++)
				if (w[j].pid > 0)
					kill(w[j].pid, SIGTERM);
	}
	if (c->eo.json)
		fprintf(c->eo.json,
			"{\"jobs\":%d,\"runs\":%ld,\"bugs\":%ld,\"completed\":%ld,"
			"\"infeasible\":%ld,\"unrealizable\":%ld,\"diverged\":%ld,"
			"\"errors\":%ld,\"ms\":%.0f,\"ms_launch\":%.1f,\"ms_symbols\":%.1f,"
			"\"ms_schedule\":%.1f,\"ms_finish\":%.1f}\n",
			c->jobs, total->runs, total->bugs, total->completed, total->infeasible,
			total->unrealizable, total->diverged, total->errors, total->ms,
			total->launch_ms, total->symbols_ms, total->schedule_ms, total->finish_ms);
	if (rc)
		return rc;
	return total->bugs ? 1 : nothing_explored(total);
}

int explore_main(int argc, char **argv)
{
	struct explore_cli c = {
	    .opt = {.report = stderr, .pin_cpu = true},
	    .eo = {.out_dir = "cctrace-bugs", .seed = 1, .minimize_replays = 10}};
	struct explore_summary sum = {0};
	struct policy *pol;
	const char *sched, *watch_why;
	char err[4096];
	int rc, dashes;

	if (argc < 2) {
		usage(stderr);
		return 3;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	sched = argv[1];
	optind = 2;
	if (parse(argc, argv, &c) < 0)
		return 3;
	if (engine_resolve_watchpoints(&c.opt, &watch_why, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 3;
	}
	dashes = optind;
	if (dashes >= argc) {
		fprintf(stderr, "cctrace explore: expected -- PROGRAM [ARGS...]\n");
		return 3;
	}
	if (c.json)
		c.eo.json = stdout;
	if (c.schedules_path) {
		c.eo.schedules = fopen(c.schedules_path, "w");
		if (!c.eo.schedules) {
			fprintf(stderr, "cctrace explore: cannot write %s: %s\n", c.schedules_path,
				strerror(errno));
			return 3;
		}
	}
	if (!c.eo.max_runs && c.eo.strategy &&
	    (strncmp(c.eo.strategy, "random", 6) == 0 || strncmp(c.eo.strategy, "pct", 3) == 0))
		c.eo.max_runs = 100;
	c.eo.progress = isatty(2);
	pol = engine_load(sched, argv[dashes], 0, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "%s\n", err);
		if (c.eo.schedules)
			fclose(c.eo.schedules);
		return 3;
	}
	engine_note_watchpoints(pol, &(struct engine_options){.trace = stderr}, watch_why);
	if (c.jobs > 1) {
		rc = fan_out(&c, pol, argv + dashes, &sum);
	} else {
		char **job_argv = argv_with_job(argv + dashes, 1);
		const char *driver = c.opt.driver;

		c.opt.driver = with_job(driver, 1);
		rc = search(&c, pol, job_argv ? job_argv : argv + dashes, &sum);
		if (rc == 0)
			rc = nothing_explored(&sum);
		free_argv_with_job(job_argv, argv + dashes);
		if (c.opt.driver != driver)
			free((char *)c.opt.driver);
	}
	engine_free(pol);
	if (rc != 3)
		report(&sum);
	if (c.eo.schedules)
		fclose(c.eo.schedules);
	return rc;
}
