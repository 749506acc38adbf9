/*
 * session.c: a schedule from file to outcome.
 *
 * Loading parses the file and checks it against the symbols of the program
 * that is about to run (offline) or of the process about to be attached
 * (its maps), so that every mistake is reported before anything is touched.
 * Running creates the tracer, gets hold of the program, executes, and
 * leaves: a launched program is run to its end (or killed), an attached one
 * is detached with its original code and debug registers.
 */
#include "engine/internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const outcome_names[] = {
    [OUTCOME_COMPLETED] = "completed",	     [OUTCOME_BUG] = "bug",
    [OUTCOME_UNREALIZABLE] = "unrealizable", [OUTCOME_ERROR] = "error",
    [OUTCOME_INFEASIBLE] = "infeasible",
};

static const int outcome_codes[] = {
    [OUTCOME_COMPLETED] = EXIT_COMPLETED,	[OUTCOME_BUG] = EXIT_BUG,
    [OUTCOME_UNREALIZABLE] = EXIT_UNREALIZABLE, [OUTCOME_ERROR] = EXIT_ERROR,
    [OUTCOME_INFEASIBLE] = EXIT_INFEASIBLE,
};

const char *engine_outcome_name(enum engine_outcome o)
{
	return outcome_names[o];
}

int engine_outcome_exit_code(enum engine_outcome o)
{
	return outcome_codes[o];
}

int engine_outcome_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(outcome_names) / sizeof(outcome_names[0]); i++)
		if (strcmp(outcome_names[i], name) == 0)
			return (int)i;
	return -1;
}

void engine_free(struct policy *pol)
{
	int i;

	if (!pol)
		return;
	schedule_free(pol->sched);
	for (i = 0; i < pol->nfuncs; i++)
		free(pol->funcs[i]);
	for (i = 0; i < pol->nlocs; i++)
		free(pol->locs[i].file);
	for (i = 0; i < pol->nthreads; i++)
		free(pol->threads[i]);
	for (i = 0; i < pol->nlocals; i++)
		free(pol->locals[i]);
	free(pol->locals);
	for (i = 0; i < pol->nwatched; i++)
		free(pol->watched[i]);
	free(pol->watched);
	free(pol->funcs);
	free(pol->locs);
	free(pol->threads);
	free(pol->warnings);
	free(pol);
}

/* The file execvp would run for name: PATH is searched when name has no
 * slash.  Sets errno like execvp when there is none. */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	const char *dir, *end;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(name, X_OK);
	}
	errno = ENOENT;
	for (dir = path ? path : "/usr/local/bin:/usr/bin:/bin"; *dir; dir = end + (*end != 0)) {
		end = strchrnul(dir, ':');
		if (end == dir) /* an empty entry means the current directory */
			snprintf(out, len, "./%s", name);
		else
			snprintf(out, len, "%.*s/%s", (int)(end - dir), dir, name);
		if (access(out, X_OK) == 0)
			return 0;
	}
	errno = ENOENT;
	return -1;
}

/* A file that exec runs but that is no ELF program for us: a directory,
 * or a script, whose interpreter would be the process traced, with none
 * of the names the schedule gives.  0, or -1 with why in err. */
static int refuse_non_program(const char *program, char *err, size_t errlen)
{
	char head[128] = "";
	struct stat st;
	ssize_t n = 0;
	int fd;

	if (stat(program, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot run '%s': it is a directory", program);
		return -1;
	}
	fd = open(program, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, head, sizeof(head) - 1);
		close(fd);
	}
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return 0;
	head[n] = '\0';
	head[strcspn(head, "\n")] = '\0';
	snprintf(err, errlen,
		 "cannot run '%s': it is a script (%s), and cctrace needs the program itself; "
		 "give the program the script runs, with its arguments, after --",
		 program, head);
	return -1;
}

/* Is the cache's offline view of program still that file's? */
static bool offline_fresh(const struct symbol_cache *c, const char *program, const struct stat *st)
{
	return c && c->offline && strcmp(c->offline_path, program) == 0 &&
	       c->offline_stat.st_dev == st->st_dev && c->offline_stat.st_ino == st->st_ino &&
	       c->offline_stat.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       c->offline_stat.st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* The symbols a schedule is checked against: the program's offline view
 * (kept in cache, which then owns it: *borrowed) or the process's. */
static struct sym_space *load_symbols(const char *program, pid_t pid, struct symbol_cache *cache,
				      bool *borrowed, char *err, size_t errlen)
{
	struct sym_space *syms;
	char why[512];
	struct stat st;
	bool keep = program && cache && stat(program, &st) == 0;
	char *copy;

	*borrowed = keep && offline_fresh(cache, program, &st);
	if (*borrowed)
		return cache->offline;
	syms = program ? sym_open_program(program, why, sizeof(why))
		       : sym_open_pid(pid, why, sizeof(why));
	if (!syms) {
		if (program)
			snprintf(err, errlen, "cannot read symbols of '%s': %s", program, why);
		else
			snprintf(err, errlen, "cannot read symbols of pid %d: %s", pid, why);
		return NULL;
	}
	if (keep && (copy = strdup(program))) {
		sym_close(cache->offline);
		free(cache->offline_path);
		cache->offline = syms;
		cache->offline_path = copy;
		cache->offline_stat = st;
		*borrowed = true;
	}
	return syms;
}

static struct policy *load(const char *path, const char *program, pid_t pid,
			   struct symbol_cache *cache, char *err, size_t errlen)
{
	struct policy *pol = calloc(1, sizeof(*pol));
	struct sym_space *syms = NULL;
	char resolved[4096];
	bool borrowed = false;

	if (!pol) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pol->sched = schedule_load(path, engine_atoms(), err, errlen);
	if (!pol->sched)
		goto fail;
	if (program && find_program(program, resolved, sizeof(resolved)) < 0) {
		snprintf(err, errlen, "cannot run '%s': %s", program, strerror(errno));
		goto fail;
	}
	if (program && refuse_non_program(resolved, err, errlen) < 0)
		goto fail;
	if (program)
		program = resolved;
	/* A pid that cannot be attached (init, a kernel thread, a zombie...)
	 * is told so before its symbols are looked for. */
	if (!program && tracer_attach_check(pid, err, errlen) < 0)
		goto fail;
	syms = load_symbols(program, pid, cache, &borrowed, err, errlen);
	if (!syms || lang_check(pol, syms, err, errlen) < 0)
		goto fail;
	if (!borrowed)
		sym_close(syms);
	return pol;
fail:
	if (!borrowed)
		sym_close(syms);
	engine_free(pol);
	return NULL;
}

void engine_note_warnings(const struct policy *pol, FILE *out)
{
	if (pol->warnings)
		fputs(pol->warnings, out);
}

struct policy *engine_load(const char *path, const char *program, pid_t pid, char *err,
			   size_t errlen)
{
	return load(path, program, pid, NULL, err, errlen);
}

struct policy *engine_load_cached(const char *path, const char *program, struct symbol_cache *cache,
				  char *err, size_t errlen)
{
	return load(path, program, 0, cache, err, errlen);
}

/* A quiet program (the search's own replays) writes to /dev/null: its
 * stdout, and its stderr unless it is captured for a sanitizer's report.
 * Under --json its stdout goes to stderr. */
static const struct tracer_options *quiet_output(struct tracer_options *topt,
						 const struct engine_options *opt)
{
	topt->null_stdout = opt->quiet_program;
	topt->null_stderr = opt->quiet_program && !opt->sanitizer_bugs;
	topt->stdout_to_stderr = opt->program_stdout_to_stderr;
	return topt;
}

/* Get hold of the program (launch it when argv is given, else attach to
 * pid), run the schedule, let go. */
static enum engine_outcome run_on(struct policy *pol, char *const argv[], pid_t pid,
				  const struct engine_options *opt)
{
	/* A launched program in a process group of its own: Ctrl-C is
	 * cctrace's, which ends the run ("interrupted") and kills it. */
	struct tracer_options topt = {
	    .pin_cpu = opt->pin_cpu, .own_pgrp = argv != NULL, .no_children = opt->no_children};
	struct tracer *t = tracer_new(quiet_output(&topt, opt));
	enum engine_outcome o = OUTCOME_ERROR;
	char err[1024];
	int rc, saved = -1, program_stderr = -1;

	if (!t)
		return OUTCOME_ERROR;
	if (argv && opt->sanitizer_bugs)
		program_stderr = stderr_capture_begin(&saved);
	if (argv)
		engine_input_rewind();
	rc = argv ? launch_traced(t, argv, err, sizeof(err))
		  : tracer_attach(t, pid, err, sizeof(err));
	stderr_capture_end(saved);
	if (rc < 0) {
		stderr_forward(program_stderr);
		if (opt->report)
			fprintf(opt->report, "cctrace: error: %s\n", err);
		if (opt->trace_json)
			engine_trace_json_outcome(opt->trace_json,
						  &(struct engine_trace_outcome){
						      .outcome = OUTCOME_ERROR, .message = err});
		if (opt->outcome_message)
			*opt->outcome_message = strdup(err);
		tracer_detach_all(t); /* a half-done attach lets go of what it seized */
	} else {
		if (tracer_attach_note(t) && opt->report)
			fprintf(opt->report, "cctrace: note: %s\n", tracer_attach_note(t));
		o = interp_execute(pol, t, opt, argv != NULL, program_stderr);
	}
	tracer_terminal_take(t);
	tracer_free(t);
	return o;
}

enum engine_outcome engine_run_program(struct policy *pol, char *const argv[],
				       const struct engine_options *opt)
{
	return run_on(pol, argv, 0, opt);
}

enum engine_outcome engine_run_attached(struct policy *pol, pid_t pid,
					const struct engine_options *opt)
{
	return run_on(pol, NULL, pid, opt);
}

/* --- one run for a search --- */

static double ms_between(int64_t from_us, int64_t to_us)
{
	return (double)(to_us - from_us) / 1000.0;
}

/* The schedule on a launched program, with the search's hooks; then the
 * program is ended as after `cctrace run`. */
static void run_with_hooks(struct run *r, struct policy *pol, const struct run_hooks *hooks,
			   struct run_result *out)
{
	pid_t driver_pid;
	int64_t t1, t2;

	r->oracle = hooks->choose ? hooks : NULL;
	r->tap = hooks->tap ? hooks : NULL;
	r->record = hooks->record;
	r->deferred_trace = hooks->deferred_trace;
	driver_pid = run_start_driver(r, r->opt->driver, hooks->quiet_driver);
	t1 = tracer_now_us();
	run_statements(r, pol->sched);
	t2 = tracer_now_us();
	run_finish(r);
	out->finish_ms = ms_between(t2, tracer_now_us());
	out->symbols_ms = (double)r->symbols_us / 1000.0;
	out->schedule_ms = ms_between(t1, t2) - out->symbols_ms;
	out->outcome = r->outcome;
	out->abandoned = r->abandoned;
	out->out_of_time = r->out_of_time;
	/* Only a kept trace is named. */
	if (hooks->deferred_trace && (r->opt->trace || hooks->trace_event) &&
	    (r->outcome == OUTCOME_BUG || hooks->trace_every_run))
		report_deferred_trace(r, r->opt->trace, hooks);
	run_stop_driver(driver_pid);
}

int engine_run_once(struct policy *pol, char *const argv[], const struct engine_options *opt,
		    const struct run_hooks *hooks, struct run_result *out, char *err, size_t errlen)
{
	struct tracer_options topt = {.pin_cpu = opt->pin_cpu};
	int64_t t0 = tracer_now_us();
	struct tracer *t = tracer_new(quiet_output(&topt, opt));
	struct run *r = NULL;
	int rc, saved = -1, program_stderr = -1;
	bool forked;

	assert(pol && argv && argv[0] && hooks && out);
	memset(out, 0, sizeof(*out));
	out->outcome = OUTCOME_ERROR;
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	engine_input_rewind();
	/* the template's output is the search's: a quiet run is launched */
	rc = hooks->snapshot && !opt->quiet_program
		 ? snapshot_launch(hooks->snapshot, t, argv, opt, &program_stderr, err, errlen)
		 : 0;
	forked = rc > 0;
	if (rc == 0) { /* no template: a fresh launch */
		if (opt->sanitizer_bugs)
			program_stderr = stderr_capture_begin(&saved);
		rc = launch_traced(t, argv, err, errlen);
		stderr_capture_end(saved);
	}
	if (rc < 0) {
		stderr_forward(program_stderr);
		rc = -1;
		goto out;
	}
	rc = -1;
	out->launch_ms = ms_between(t0, tracer_now_us());
	r = run_new(pol, t, opt, true);
	if (!r) {
		stderr_forward(program_stderr);
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	r->program_stderr = program_stderr;
	r->snapshot = forked ? hooks->snapshot : NULL;
	run_with_hooks(r, pol, hooks, out);
	rc = 0;
out:
	run_free(r);
	tracer_free(t);
	return rc;
}

struct symbol_cache *engine_symbol_cache_new(void)
{
	return calloc(1, sizeof(struct symbol_cache));
}

void engine_symbol_cache_free(struct symbol_cache *c)
{
	if (!c)
		return;
	symbol_cache_free(c);
	free(c);
}

int engine_watched_count(const struct policy *pol)
{
	return pol->nwatched;
}

bool engine_untraced_sleeps_for_good(pid_t pid, unsigned long long *switches)
{
	return tracer_untraced_sleeps_for_good(pid, switches);
}

int engine_stop_signal(void)
{
	return tracer_stop_signal(false);
}

void engine_catch_stop_signals(void)
{
	tracer_catch_stop_signals();
}

int64_t engine_now_ms(void)
{
	return tracer_now_ms();
}
