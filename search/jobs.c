/*
 * jobs.c: one search over several processes (`cctrace explore --jobs J`).
 *
 * A search is a loop of runs, each a traced program, and cctrace drives
 * one program at a time; more cores help only through more processes.
 * Shards already split a search into disjoint parts, so J workers each
 * explore one of J sub-shards of the caller's shard (jobs and --shard
 * compose), each into its own directory, and send their summary back
 * through a pipe.  The parent stops the others at the first bug (unless
 * every bug is wanted), then renumbers the workers' bugs into one
 * sequence and adds the summaries into one, with the schema of a search
 * in one process.  This is library code, not the command line's, so that
 * tests and other front ends get the same fan-out.
 */
#include "search/internal.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a worker sends back. */
struct worker_report {
	struct explore_summary sum;
	int rc;
	char err[1024];
};

struct worker {
	pid_t pid;
	int fd;		    /* the worker's report comes back through it */
	bool stopped_by_us; /* sent SIGTERM at another's bug (once) */
	char dir[4096];
};

/* Each worker runs its own copy of a server, which needs its own port:
 * "{job}" becomes the job's number, e.g. -- memcached -p 1131{job}.
 * Returns s itself when it has none (or out of memory). */
char *search_with_job(const char *s, int job)
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
char **search_argv_with_job(char *const argv[], int job)
{
	int n = 0, i, changed = 0;
	char **out;

	while (argv[n])
		changed += strstr(argv[n++], "{job}") != NULL;
	if (!changed || !(out = calloc((size_t)n + 1, sizeof(*out))))
		return NULL;
	for (i = 0; i < n; i++)
		out[i] = search_with_job(argv[i], job);
	return out;
}

void search_free_argv_with_job(char **out, char *const argv[])
{
	int i;

	for (i = 0; out && out[i]; i++)
		if (out[i] != argv[i])
			free(out[i]);
	free(out);
}

/* search_explore as job number `job`: {job} replaced. */
static int explore_as_job(struct policy *pol, char *const argv[], const struct engine_options *opt,
			  const struct explore_options *eo, int job, struct explore_summary *sum,
			  char *err, size_t errlen)
{
	struct engine_options mine = *opt;
	char **job_argv = search_argv_with_job(argv, job);
	int rc;

	mine.driver = search_with_job(opt->driver, job);
	rc = search_explore(pol, job_argv ? job_argv : argv, &mine, eo, sum, err, errlen);
	search_free_argv_with_job(job_argv, argv);
	if (mine.driver != opt->driver)
		free((char *)mine.driver);
	return rc;
}

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

/* Worker j of eo->jobs: never returns. */
static void work(struct policy *pol, char *const argv[], const struct engine_options *opt,
		 const struct explore_options *eo, const struct worker *w, int j, int fd,
		 int found_fd)
{
	struct explore_options mine = *eo;
	struct worker_report rep = {0};
	int base = eo->nshards ? eo->shard - 1 : 0, n = eo->nshards ? eo->nshards : 1;

	spread_over_cpus(j);
	if (engine_input_private() < 0) /* the jobs' runs read it side by side */
		_exit(3);
	/* --runs is the total, shared out among the workers. */
	if (eo->max_runs)
		mine.max_runs = (eo->max_runs + eo->jobs - 1 - j) / eo->jobs;
	/* Sub-shard j of shard base: every part the split by n puts in
	 * base, split again by the jobs (option, seed or permutation k goes
	 * to part k mod n*J: base + n*j is the j-th with k mod n == base). */
	mine.shard = base + n * j + 1;
	mine.nshards = n * eo->jobs;
	mine.out_dir = w->dir;
	mine.out_dir_ready = false;
	mine.found_fd = eo->all ? 0 : found_fd;
	mine.bug_offset = 0; /* numbered into the search's sequence as reaped */
	mine.json = NULL;
	mine.progress = false;
	/* A template is its tracer's, in the process that made it: a worker
	 * makes its own (its argv may differ too, {job} replaced). */
	mine.snapshot = NULL;
	/* The workers share the JSON trace: whole lines, not buffer-fulls. */
	if (mine.trace_json)
		setvbuf(mine.trace_json, NULL, _IOLBF, 0);
	rep.rc = explore_as_job(pol, argv, opt, &mine, j + 1, &rep.sum, rep.err, sizeof(rep.err));
	if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(3);
	_exit(rep.rc < 0 ? 3 : 0);
}

static void start_worker(struct policy *pol, char *const argv[], const struct engine_options *opt,
			 const struct explore_options *eo, struct worker *w, int j,
			 const int found[2])
{
	int fds[2];

	snprintf(w->dir, sizeof(w->dir), "%s/job-%d", eo->out_dir, j + 1);
	if (pipe(fds) < 0) {
		w->pid = -1;
		return;
	}
	w->pid = fork();
	if (w->pid == 0) {
		close(fds[0]);
		close(found[0]);
		work(pol, argv, opt, eo, w, j, fds[1], found[1]);
	}
	close(fds[1]);
	w->fd = fds[0];
	if (w->pid < 0)
		close(w->fd);
}

/* The first line of a bug-N.sched names the file itself: keep it true
 * (and keep its options) when the file moves from `from` to `to`. */
/* Move a schedule, its first line (`# run: cctrace run DIR/bug-N.sched
 * -- PROG < DIR/bug-N.stdin`) naming its files by their new prefix. */
static void move_schedule(const char *from, const char *to, const char *old_prefix,
			  const char *new_prefix)
{
	char *text = NULL, *line, *at;
	size_t len = 0;
	FILE *f = fopen(from, "r"), *g;
	int c;

	if (!f)
		return;
	if (getline(&text, &len, f) > 0 && (g = fopen(to, "w"))) {
		for (line = text; (at = strstr(line, old_prefix)); line = at + strlen(old_prefix))
			fprintf(g, "%.*s%s", (int)(at - line), line, new_prefix);
		fputs(line, g);
		while ((c = fgetc(f)) != EOF)
			fputc(c, g);
		fclose(g);
	}
	free(text);
	fclose(f);
	unlink(from);
}

/* Worker bug n's kind (bugkind.c), from the report in its bug-N.txt. */
static void kind_of_bug(const struct worker *w, long n, char *kind, size_t len)
{
	char path[8192], *text;

	snprintf(path, sizeof(path), "%s/bug-%ld.txt", w->dir, n);
	text = search_read_text(path);
	search_bug_kind(text, kind, len);
	free(text);
}

/* Worker bug n is one another worker (or an earlier round) wrote: its
 * files go. */
static void drop_bug(const struct worker *w, long n)
{
	static const char *const exts[] = {"txt", "html", "stdin", "full.sched", "sched"};
	char path[8192];
	size_t i;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(path, sizeof(path), "%s/bug-%ld.%s", w->dir, n, exts[i]);
		unlink(path);
	}
}

/* Move a worker's bug-N files to OUT/bug-K, K counting across workers
 * from *next on; one of a kind already written is dropped, and counted in
 * *repeats.  Returns how many were kept. */
static long collect_bugs(const struct explore_options *eo, const struct worker *w, long nbugs,
			 long *next, struct bug_kinds *kinds, long *repeats)
{
	const char *cmd = search_command_of(eo);
	static const char *const moved[] = {"txt", "html", "stdin"};
	static const char *const schedules[] = {"full.sched", "sched"}; /* the one said last */
	char from[8192], to[8192], old_prefix[8192], new_prefix[8192], kind[4096];
	long n, kept = 0;
	size_t i;

	for (n = 1; n <= nbugs; n++) {
		kind_of_bug(w, n, kind, sizeof(kind));
		if (eo->serial && !search_bug_kinds_add(kinds, kind)) { /* as explore.c */
			drop_bug(w, n);
			fprintf(stderr,
				"cctrace %s: %s/bug-%ld.sched repeats a bug already written: "
				"dropped\n",
				cmd, w->dir, n);
			(*repeats)++;
			continue;
		}
		kept++;
		snprintf(old_prefix, sizeof(old_prefix), "%s/bug-%ld.", w->dir, n);
		snprintf(new_prefix, sizeof(new_prefix), "%s/bug-%ld.", eo->out_dir, *next);
		for (i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
			snprintf(from, sizeof(from), "%s%s", old_prefix, moved[i]);
			snprintf(to, sizeof(to), "%s%s", new_prefix, moved[i]);
			rename(from, to);
		}
		for (i = 0; i < sizeof(schedules) / sizeof(schedules[0]); i++) {
			snprintf(from, sizeof(from), "%s%s", old_prefix, schedules[i]);
			snprintf(to, sizeof(to), "%s%s", new_prefix, schedules[i]);
			move_schedule(from, to, old_prefix, new_prefix);
		}
		/* The worker announced the path it wrote; say where it went. */
		fprintf(stderr, "cctrace %s: %s is now %s\n", cmd, from, to);
		(*next)++;
	}
	rmdir(w->dir);
	return kept;
}

void search_summary_add(struct explore_summary *total, const struct explore_summary *s)
{
	total->runs += s->runs;
	total->bugs += s->bugs;
	total->completed += s->completed;
	total->infeasible += s->infeasible;
	total->unrealizable += s->unrealizable;
	total->diverged += s->diverged;
	total->errors += s->errors;
	total->skipped += s->skipped;
	total->out_of_time |= s->out_of_time;
	total->space_left |= s->space_left;
	total->repeats += s->repeats;
	/* The shards are disjoint: their traces and spaces add up. */
	total->distinct += s->distinct;
	total->space_estimate += s->space_estimate;
	total->launch_ms += s->launch_ms;
	total->symbols_ms += s->symbols_ms;
	total->schedule_ms += s->schedule_ms;
	total->finish_ms += s->finish_ms;
	if (s->ms > total->ms)
		total->ms = s->ms;
	if (s->strategy[0])
		memcpy(total->strategy, s->strategy, sizeof(total->strategy));
	if (s->last_failure[0])
		memcpy(total->last_failure, s->last_failure, sizeof(total->last_failure));
}

/* Worker j ended with status: take its report and its bugs. */
static void reap(const struct explore_options *eo, struct worker *w, int j, int status,
		 bool stopped_by_us, struct explore_summary *total, long *next,
		 struct bug_kinds *kinds, int *rc, char *err, size_t errlen)
{
	struct worker_report rep = {0};
	long kept;
	ssize_t got = read(w->fd, &rep, sizeof(rep));

	close(w->fd);
	w->pid = 0;
	if (got != (ssize_t)sizeof(rep)) {
		/* Stopped at another's bug before its handlers were in place
		 * (just forked): it had found nothing, and that is no error. */
		if (stopped_by_us && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
			return;
		if (*rc == 0)
			snprintf(err, errlen, "job %d died without a summary (status %#x)", j + 1,
				 status);
		*rc = -1;
		return;
	}
	/* A worker this search stopped at another's bug may have been cut
	 * short before its first run could start: that is no error. */
	if (rep.rc < 0 && *rc == 0 && !(stopped_by_us && rep.sum.bugs == 0)) {
		snprintf(err, errlen, "job %d: %s", j + 1, rep.err);
		*rc = -1;
	}
	search_summary_add(total, &rep.sum);
	/* A worker this search stopped at another's bug was not interrupted. */
	total->interrupted |= rep.sum.interrupted && !stopped_by_us;
	kept = collect_bugs(eo, w, rep.sum.bugs, next, kinds, &total->repeats);
	total->bugs -= rep.sum.bugs - kept;
}

/* Up to FOUND_POLL_MS for a worker's news of a bug (search.h's found_fd):
 * the finder's pid, 0 if none came.  A worker's end is seen by the
 * caller's waitpid after each wait. */
#define FOUND_POLL_MS 20
static pid_t await_worker(int found_fd)
{
	struct pollfd pfd = {.fd = found_fd, .events = POLLIN};
	pid_t finder = 0;

	if (poll(&pfd, 1, FOUND_POLL_MS) == 1 && (pfd.revents & POLLIN) &&
	    read(found_fd, &finder, sizeof(finder)) != (ssize_t)sizeof(finder))
		finder = 0;
	return finder;
}

/* SIGTERM to every worker still running but `except`: true if any got it. */
static bool stop_workers(struct worker *w, int n, pid_t except)
{
	bool any = false;
	int j;

	for (j = 0; j < n; j++)
		if (w[j].pid > 0 && w[j].pid != except && !w[j].stopped_by_us &&
		    kill(w[j].pid, SIGTERM) == 0)
			any = w[j].stopped_by_us = true;
	return any;
}

static int fan_out(struct policy *pol, char *const argv[], const struct engine_options *opt,
		   const struct explore_options *eo, struct explore_summary *total, char *err,
		   size_t errlen)
{
	struct worker *w = calloc((size_t)eo->jobs, sizeof(*w));
	int j, status, running = 0, rc = 0, found[2];
	bool stopping = false;
	long next = eo->bug_offset + 1;
	struct bug_kinds own_kinds = {0}, *kinds = eo->kinds ? eo->kinds : &own_kinds;
	pid_t pid;

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (search_make_dir(eo->out_dir, err, errlen) < 0) {
		free(w);
		return -1;
	}
	if (pipe(found) < 0) {
		snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
		free(w);
		return -1;
	}
	fflush(NULL);
	for (j = 0; j < eo->jobs; j++) {
		start_worker(pol, argv, opt, eo, &w[j], j, found);
		running += w[j].pid > 0;
		if (w[j].pid < 0 && rc == 0) {
			snprintf(err, errlen, "cannot start job %d: %s", j + 1, strerror(errno));
			rc = -1;
		}
	}
	close(found[1]);
	while (running > 0) {
		pid_t finder = await_worker(found[0]);

		if (finder > 0 && !eo->all) /* the others stop; it minimises */
			stopping |= stop_workers(w, eo->jobs, finder);
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (j = 0; j < eo->jobs; j++)
				if (w[j].pid == pid) {
					running--;
					reap(eo, &w[j], j, status, stopping, total, &next, kinds,
					     &rc, err, errlen);
				}
		}
		if (pid < 0 && errno == ECHILD)
			break;
		if (total->bugs && !eo->all)
			stopping |= stop_workers(w, eo->jobs, 0);
	}
	close(found[0]);
	search_bug_kinds_free(&own_kinds);
	free(w);
	return rc;
}

int search_explore_jobs(struct policy *pol, char *const argv[], const struct engine_options *opt,
			const struct explore_options *eo, struct explore_summary *sum, char *err,
			size_t errlen)
{
	int rc;

	assert(eo->jobs >= 0 && eo->out_dir);
	memset(sum, 0, sizeof(*sum));
	if (search_fresh_out_dir(eo, err, errlen) < 0 || engine_input_prepare(err, errlen) < 0)
		return -1;
	if (eo->jobs <= 1) {
		rc = explore_as_job(pol, argv, opt, eo, 1, sum, err, errlen);
	} else {
		rc = fan_out(pol, argv, opt, eo, sum, err, errlen);
		sum->jobs = eo->jobs;
	}
	if (eo->json && sum->strategy[0])
		search_summary_json(eo->json, eo, sum);
	return rc;
}
