/*
 * snapshot.c: a search's runs forked from a template instead of launched
 * afresh (AFL's fork server, from outside the program).
 *
 * Why.  Runs per second is what limits a search, and every fresh launch
 * pays fork, exec and the dynamic loader (1.2-2.4 ms a run on SCTBench's
 * small programs, a third of a whole run of account_ok; docs/test.md has
 * the measurements).
 *
 * How.  The first run of a search that asks for it launches the program
 * once more as a template: held at its ELF entry point (where every run
 * starts: the loader is done, no program code has run, there is one
 * thread and no child), with its stderr, when sanitizer reports are
 * looked for, an O_APPEND temporary file.  Each run then makes the
 * template fork (tracer/fork.c: through glibc's _Fork the first time,
 * through a stub that repeats it after; a static program, which has run
 * nothing at its entry point, through the stub alone) and takes the child over as its
 * p1: the run cannot tell it from a fresh launch (same registers,
 * memory, layout, since launches run without address randomisation, and
 * file descriptors), so a seed makes the same search either way.  The
 * template's stderr file is emptied before each fork: O_APPEND makes the
 * child's writes start at its beginning, and the run reads only its own
 * output.  The template is in no run's tracer: no run sees, schedules,
 * reports or kills it; engine_snapshot_free kills it, and should cctrace
 * die, PTRACE_O_EXITKILL does.
 *
 * When the template cannot be made or fork (a dynamic program without
 * _Fork: glibc before 2.34; the launch failed), the runs are launched afresh,
 * and engine_snapshot_fallback says why.
 */
#include "engine/internal.h"
#include "symbols/symbols.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct engine_snapshot {
	struct tracer *t;	/* the template's own tracer; NULL: none (yet) */
	struct tr_thread *main; /* held at the entry point */
	uint64_t fork_fn;	/* glibc's _Fork in it */
	struct sym_space *syms; /* its symbols: where _Fork is */
	int stderr_fd;		/* its stderr (O_APPEND), or -1: cctrace's */
	bool sanitizer_bugs;	/* what it was made for */
	bool tried;
	char why[512]; /* the runs are launched afresh: why; "" while not */
};

struct engine_snapshot *engine_snapshot_new(void)
{
	struct engine_snapshot *s = calloc(1, sizeof(*s));

	if (s)
		s->stderr_fd = -1;
	return s;
}

static void drop_template(struct engine_snapshot *s)
{
	sym_close(s->syms);
	s->syms = NULL;
	if (s->t) {
		tracer_kill_launched(s->t);
		tracer_free(s->t);
	}
	s->t = NULL;
	s->main = NULL;
	if (s->stderr_fd >= 0)
		close(s->stderr_fd);
	s->stderr_fd = -1;
}

void engine_snapshot_free(struct engine_snapshot *s)
{
	if (!s)
		return;
	drop_template(s);
	free(s);
}

const char *engine_snapshot_fallback(const struct engine_snapshot *s)
{
	return s && s->why[0] ? s->why : NULL;
}

/* The template's stderr: a temporary file all its children share, in
 * append mode so that each run's output starts at 0 once it is emptied. */
static int capture_template_stderr(struct engine_snapshot *s, int *saved)
{
	int flags;

	s->stderr_fd = stderr_capture_begin(saved);
	if (s->stderr_fd < 0)
		return -1;
	flags = fcntl(s->stderr_fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(s->stderr_fd, F_SETFL, flags | O_APPEND);
}

/* glibc's _Fork, or 0: a static program forks without it (tracer/fork.c),
 * and tracer_fork_held says why when another cannot.  -1 without the
 * template's symbols. */
static int find_fork_fn(struct engine_snapshot *s)
{
	char err[256];
	uint64_t addr = 0;

	s->syms =
	    sym_open_pid(tracer_process_pid(tracer_thread_process(s->main)), err, sizeof(err));
	if (!s->syms) {
		snprintf(s->why, sizeof(s->why), "cannot read the template's symbols: %s", err);
		return -1;
	}
	if (sym_function(s->syms, "_Fork", &addr) == 0)
		s->fork_fn = addr;
	return 0;
}

static void make_template(struct engine_snapshot *s, char *const argv[],
			  const struct engine_options *opt)
{
	struct tracer_options topt = {.pin_cpu = opt->pin_cpu,
				      .stdout_to_stderr = opt->program_stdout_to_stderr};
	char err[400];
	int saved = -1, rc;

	s->tried = true;
	s->sanitizer_bugs = opt->sanitizer_bugs;
	s->t = tracer_new(&topt);
	if (!s->t) {
		snprintf(s->why, sizeof(s->why), "out of memory");
		return;
	}
	if (opt->sanitizer_bugs && capture_template_stderr(s, &saved) < 0) {
		stderr_capture_end(saved);
		snprintf(s->why, sizeof(s->why), "cannot capture the template's stderr");
		drop_template(s);
		return;
	}
	rc = launch_traced(s->t, argv, err, sizeof(err));
	stderr_capture_end(saved);
	if (rc < 0) {
		snprintf(s->why, sizeof(s->why), "the template did not start: %s", err);
		drop_template(s);
		return;
	}
	s->main = tracer_threads(s->t);
	if (find_fork_fn(s) < 0)
		drop_template(s);
}

int snapshot_launch(struct engine_snapshot *s, struct tracer *t, char *const argv[],
		    const struct engine_options *opt, int *program_stderr, char *err, size_t errlen)
{
	char why[512];
	pid_t child;

	if (!s->tried)
		make_template(s, argv, opt);
	if (!s->t || s->sanitizer_bugs != opt->sanitizer_bugs)
		return 0;
	if (s->stderr_fd >= 0 && ftruncate(s->stderr_fd, 0) < 0)
		return 0;
	if (tracer_fork_held(s->main, s->fork_fn, &child, why, sizeof(why)) < 0) {
		snprintf(s->why, sizeof(s->why), "%s", why);
		drop_template(s);
		return 0;
	}
	if (s->stderr_fd >= 0)
		*program_stderr = dup(s->stderr_fd);
	if (tracer_adopt(t, child, s->main, err, errlen) < 0)
		return -1;
	return 1;
}

/* In _Fork, which the template runs to make its first child (and every
 * one, should its fork server not be made)? */
static bool in_fork_fn(void *ctx, uint64_t addr)
{
	struct engine_snapshot *s = ctx;
	struct sym_loc loc;

	return sym_describe_function(s->syms, addr, &loc) == 0 && loc.func &&
	       addr - loc.func_offset == s->fork_fn;
}

void snapshot_learn_points(struct engine_snapshot *s, struct tr_process *p)
{
	char err[256];

	/* A failure costs speed only: the runs plant what the template lacks. */
	if (s && s->t)
		(void)tracer_break_mirror(tracer_thread_process(s->main), p, in_fork_fn, s, err,
					  sizeof(err));
}
