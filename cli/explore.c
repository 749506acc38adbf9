/*
 * explore.c: `cctrace explore`, the command line of systematic search.
 *
 *   cctrace explore SCHED [--strategy dfs|bfs|random|pct:D|cb:N] [--runs N]
 *                         [--time T] [--seed S] [--shard I/N] [--out DIR]
 *                         [--all] [--json] [--schedules FILE] -- PROG ARGS
 *
 * It parses its options and hands the loaded schedule to policy_explore.
 * Exit code: 1 when a bug was found, 0 when the search ended without one,
 * 3 on an error.
 */
#include "cli/explore.h"
#include "policy/policy.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("usage: cctrace explore SCHEDULE [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "  --strategy S      dfs (default), bfs, random, pct:D or cb:N\n"
	      "  --runs N          stop after N runs (random and pct default to 100)\n"
	      "  --time DURATION   stop after this long (e.g. 30s, 5m)\n"
	      "  --seed S          seed of random and pct (default 1)\n"
	      "  --shard I/N       explore the I-th of N disjoint parts\n"
	      "  --out DIR         where bug-N.sched and bug-N.txt go (default cctrace-bugs)\n"
	      "  --all             keep searching after the first bug\n"
	      "  --json            print a JSON summary on stdout at the end\n"
	      "  --schedules FILE  write each run's choices and outcome, one line per run\n"
	      "  --timeout D       limit of every wait (default 10s)\n"
	      "  --fail-on-exit    a non-zero exit status of the program is a bug\n"
	      "  --no-pin          do not pin cctrace and driven threads to one CPU\n",
	      f);
}

static int parse_ms(const char *s, int64_t *ms)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || v < 0)
		return -1;
	if (strcmp(end, "ms") == 0)
		*ms = v;
	else if (!*end || strcmp(end, "s") == 0)
		*ms = v * 1000;
	else if (strcmp(end, "m") == 0)
		*ms = v * 60000;
	else if (strcmp(end, "h") == 0)
		*ms = v * 3600000;
	else
		return -1;
	return 0;
}

static int bad(const char *what, const char *value)
{
	fprintf(stderr, "cctrace explore: bad %s '%s'\n", what, value);
	return -1;
}

struct explore_cli {
	struct policy_options opt;
	struct explore_options eo;
	const char *schedules_path;
	bool json;
};

static int parse(int argc, char **argv, struct explore_cli *c)
{
	enum { O_STRATEGY = 256, O_RUNS, O_TIME, O_SEED, O_SHARD, O_OUT, O_ALL, O_JSON,
	       O_SCHEDULES, O_TIMEOUT, O_FAIL, O_NOPIN };
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
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int ch;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case O_STRATEGY: c->eo.strategy = optarg; break;
		case O_RUNS:
			c->eo.max_runs = strtol(optarg, &end, 10);
			if (*end || c->eo.max_runs <= 0)
				return bad("--runs", optarg);
			break;
		case O_TIME:
			if (parse_ms(optarg, &c->eo.max_ms) < 0)
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
		case O_OUT: c->eo.out_dir = optarg; break;
		case O_ALL: c->eo.all = true; break;
		case O_JSON: c->json = true; break;
		case O_SCHEDULES: c->schedules_path = optarg; break;
		case O_TIMEOUT:
			if (parse_ms(optarg, &c->opt.timeout_ms) < 0)
				return bad("--timeout", optarg);
			break;
		case O_FAIL: c->opt.fail_on_exit = true; break;
		case O_NOPIN: c->opt.pin_cpu = false; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	return 0;
}

static int search(struct explore_cli *c, const char *sched, char **prog)
{
	struct explore_summary sum;
	struct policy *pol;
	char err[4096];
	int rc;

	pol = policy_load(sched, prog[0], 0, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "%s\n", err);
		return 3;
	}
	rc = policy_explore(pol, prog, &c->opt, &c->eo, &sum, err, sizeof(err));
	policy_free(pol);
	if (rc < 0) {
		fprintf(stderr, "cctrace explore: %s\n", err);
		return 3;
	}
	fprintf(stderr,
		"cctrace explore: %ld runs, %ld bugs, %ld completed, %ld infeasible, "
		"%ld unrealizable, %ld diverged%s\n",
		sum.runs, sum.bugs, sum.completed, sum.infeasible, sum.unrealizable, sum.diverged,
		sum.bugs ? "; see the bug-N.sched files" : "");
	return sum.bugs ? 1 : 0;
}

int explore_main(int argc, char **argv)
{
	struct explore_cli c = {.opt = {.report = stderr, .pin_cpu = true},
				.eo = {.out_dir = "cctrace-bugs", .seed = 1}};
	const char *sched;
	int rc, dashes;

	if (argc < 2) {
		usage(stderr);
		return 3;
	}
	sched = argv[1];
	optind = 2;
	if (parse(argc, argv, &c) < 0)
		return 3;
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
	rc = search(&c, sched, argv + dashes);
	if (c.eo.schedules)
		fclose(c.eo.schedules);
	return rc;
}
