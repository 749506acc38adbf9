/*
 * explore.c: restart the program until the schedule's choices are used up.
 *
 * Each run starts the program afresh (forked from a template held at its
 * entry point, engine/snapshot.c, unless --no-snapshot: the same runs, a
 * third cheaper on short ones), executes the schedule with the oracle
 * resolving every choose, and ends like `cctrace run`: the program
 * is run to its end (crashes and failed asserts are bugs) or killed.  The
 * run's trace and report are written to memory; only a bug's are kept, as
 * DIR/bug-N.sched (the exact schedule of that run, which `cctrace run`
 * replays) and DIR/bug-N.txt (outcome, stack, trace, strategy and seed).
 */
#include "lang/lang.h"
#include "search/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct one_run {
	enum engine_outcome outcome;
	bool abandoned, diverged;
	bool no_choice;			 /* it met no choice: the search's only schedule */
	bool out_of_time;		 /* cut short by --time: no verdict, not counted */
	char *schedule, *report, *trace; /* memstream buffers */
	char *program_stderr;		 /* the end of what the program said there */
	size_t schedule_len, report_len, trace_len;
	char *choices;		 /* the choice trace, "0.1.0": no length limit (a long run
				  * makes thousands of choices, and a cut trace would
				  * make distinct runs look alike) */
	struct picture picture;	 /* a bug's steps, for bug-N.html */
	long preemptions, steps; /* cctrace test: of the serialized run */
	bool repeat;		 /* a bug of a kind already written */
};

/* " --shard I/N" when the search was a shard (a job's, with --jobs), which
 * the seed and run number reproduce only with; "" otherwise. */
static const char *shard_of(const struct explore_options *eo)
{
	static char text[48];

	if (eo->nshards <= 1)
		return "";
	snprintf(text, sizeof(text), " --shard %d/%d", eo->shard, eo->nshards);
	return text;
}

const char *search_command_of(const struct explore_options *eo)
{
	if (eo->command)
		return eo->command;
	return eo->serial ? "test" : "explore";
}

static void free_run(struct one_run *o)
{
	free(o->schedule);
	free(o->report);
	free(o->program_stderr);
	free(o->trace);
	free(o->choices);
	picture_free(&o->picture);
}

/* The engine's choose hook, answered by the search. */
static int choose_by_search(void *ctx, const struct engine_choice *c)
{
	_Static_assert(SEARCH_ABANDON == ENGINE_CHOICE_ABANDON, "one answer for 'not this run'");
	return search_choose(ctx, &(struct search_point){c->n, c->ids, c->current, c->current_var,
							 c->access, c->forced, c->nforced});
}

/* What a run reuses from the runs before it. */
struct run_reuse {
	struct symbol_cache *symbols;
	struct engine_snapshot *snapshot; /* NULL: launched afresh */
	int64_t end_by_ms;		  /* --time's end (engine_now_ms), 0: none */
};

static int execute_once(struct policy *pol, char *const argv[], const struct engine_options *opt,
			const struct explore_options *eo, struct search *oracle,
			const struct run_reuse *reuse, struct one_run *out,
			struct explore_summary *sum, char *err, size_t errlen)
{
	struct engine_options local = *opt;
	FILE *record = open_memstream(&out->schedule, &out->schedule_len);
	struct run_hooks hooks = {
	    .choose = choose_by_search,
	    .ctx = oracle,
	    .record = record,
	    .snapshot = reuse->snapshot,
	    .deferred_trace = !eo->trace_json,
	    .trace_every_run = eo->verbose,
	    .quiet_driver = !eo->verbose,
	    .trace_event = picture_add,
	    .trace_ctx = &out->picture,
	    .serial = eo->serial,
	};
	struct run_result res;
	int rc = -1;
	size_t choices_len;

	out->preemptions = 0;
	if (eo->serial)
		eo->serial->preemptions_out = &out->preemptions;

	local.symbol_cache = reuse->symbols;
	local.end_by_ms = reuse->end_by_ms;
	local.report = open_memstream(&out->report, &out->report_len);
	local.program_stderr = &out->program_stderr;
	local.trace = open_memstream(&out->trace, &out->trace_len);
	local.trace_json = eo->trace_json;
	if (!record || !local.report || !local.trace) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (eo->trace_json)
		engine_trace_json_header(
		    eo->trace_json, &(struct engine_trace_header){
					.command = search_command_of(eo),
					.schedule = eo->schedule,
					.argv = argv,
					.strategy = sum->strategy,
					.seed = eo->seed,
					.watchpoints = opt->watchpoints,
					.early_timeouts = eo->serial && eo->serial->early_timeouts,
				    });
	if (engine_run_once(pol, argv, &local, &hooks, &res, err, errlen) < 0)
		goto out;
	sum->launch_ms += res.launch_ms;
	sum->symbols_ms += res.symbols_ms;
	sum->schedule_ms += res.schedule_ms;
	sum->finish_ms += res.finish_ms;
	out->outcome = res.outcome;
	out->abandoned = res.abandoned;
	/* A schedule without a choice is one run, the first shard's: the
	 * others (a job's too) do not count it again */
	out->no_choice = search_made_no_choice(oracle);
	if (out->no_choice && eo->nshards > 1 && eo->shard != 1)
		out->abandoned = true;
	out->out_of_time = res.out_of_time;
	out->steps = eo->serial ? eo->serial->steps_out : 0;
	out->diverged = search_diverged(oracle);
	choices_len = search_trace(oracle, NULL, 0) + 1;
	out->choices = malloc(choices_len);
	if (!out->choices) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	search_trace(oracle, out->choices, choices_len);
	rc = 0;
out:
	if (record)
		fclose(record);
	if (local.report)
		fclose(local.report);
	if (local.trace)
		fclose(local.trace);
	return rc;
}

static int write_file(const char *dir, const char *name, long n, const char *ext, const char *head,
		      const char *body, char *err, size_t errlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%ld.%s", dir, name, n, ext);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fputs(head, f);
	fputs(body ? body : "", f);
	return fclose(f) == 0 ? 0 : -1;
}

/* word as a POSIX shell reads it back: as it is when it holds nothing the
 * shell would take apart, else in single quotes ('\'' for a quote).  The
 * `# run:` line is pasted into a shell: an argument "a b" written bare
 * replayed as two, and the bug with it never. */
void search_put_shell_word(FILE *f, const char *word)
{
	const char *p;

	if (*word && strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				  "0123456789_/.,:=@%+-") == strlen(word)) {
		fputs(word, f);
		return;
	}
	fputc('\'', f);
	for (p = word; *p; p++)
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	fputc('\'', f);
}

void search_put_replay_tail(FILE *f, const char *path, char *const argv[])
{
	int i;

	fputc(' ', f);
	search_put_shell_word(f, path);
	fputs(" --", f);
	for (i = 0; argv[i]; i++) {
		fputc(' ', f);
		search_put_shell_word(f, argv[i]);
	}
}

/* The options of cctrace test, beyond strategy and seed, that decide which
 * runs it makes: the `# found by` line repeats them, or it finds another
 * search (--early-timeouts decides whether a bug exists at all). */
static const char *serial_options_of(const struct explore_options *eo)
{
	static char text[96];
	const struct engine_serial *cfg = eo->serial;
	int n;

	if (!cfg)
		return "";
	n = snprintf(text, sizeof(text), "%s%s", cfg->all_points ? " --points all" : "",
		     cfg->early_timeouts ? " --early-timeouts" : "");
	if (cfg->max_steps && n >= 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, " --max-steps %ld", cfg->max_steps);
	return text;
}

/* The first lines of DIR/bug-N.sched: how to replay it, and how it was
 * found.  Built in memory: argv and the choice trace have no length limit. */
static char *bug_head(const struct explore_options *eo, const struct engine_options *opt,
		      char *const argv[], const char *path, const struct one_run *o,
		      const char *strategy, long run)
{
	char *head = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&head, &len);
	int i;

	if (!f)
		return NULL;
	/* The options that decide what counts as the bug go with it. */
	fprintf(f, "# run: cctrace run%s%s%s", opt->fail_on_exit ? " --fail-on-exit" : "",
		opt->sanitizer_bugs ? " --fail-on-sanitizer" : "",
		opt->include_stack ? " --include-stack" : "");
	if (opt->driver) {
		fputs(" --driver ", f);
		search_put_shell_word(f, opt->driver);
	}
	for (i = 1; i < 256; i++)
		if (opt->ok_exit[i / 64] & (1ull << (i % 64)))
			fprintf(f, " --ok-exit %d", i);
	search_put_replay_tail(f, path, argv);
	/* the standard input every run read (engine/input.c), kept beside */
	if (engine_input_kept()) {
		char *input = NULL;

		fputs(" < ", f);
		if (asprintf(&input, "%.*s.stdin", (int)(strlen(path) - strlen(".sched")), path) >
		    0)
			search_put_shell_word(f, input);
		free(input);
	}
	fprintf(f, "\n# found by cctrace %s --strategy %s --seed %lu%s%s, run %ld, choices [%s]\n",
		search_command_of(eo), strategy, (unsigned long)eo->seed, serial_options_of(eo),
		shard_of(eo), run, o->choices);
	if (fclose(f) != 0) {
		free(head);
		return NULL;
	}
	return head;
}

static void outcome_line(const struct one_run *o, char *buf, size_t len);

/* DIR/bug-N.html: the bug's interleaving as a picture (picture.c). */
static int save_picture(const struct explore_options *eo, char *const argv[], long n,
			const struct one_run *o, const char *strategy, long run, char *err,
			size_t errlen)
{
	char path[4096], title[4096], outcome[512];
	char *about = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/bug-%ld.html", eo->out_dir, n);
	snprintf(title, sizeof(title), "cctrace: bug %ld of %s", n, argv[0]);
	outcome_line(o, outcome, sizeof(outcome));
	if (asprintf(&about,
		     "found by cctrace %s --strategy %s --seed %lu%s in run %ld, choices [%s]; "
		     "replay with cctrace run %s/bug-%ld.sched",
		     search_command_of(eo), strategy, (unsigned long)eo->seed, shard_of(eo), run,
		     o->choices ? o->choices : "", eo->out_dir, n) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = picture_write(
	    path, &o->picture,
	    &(struct picture_text){title, about, outcome[0] ? outcome : "bug", o->report}, err,
	    errlen);
	free(about);
	return rc;
}

/* bug-N.txt's measure of the serialized run that found the bug: how many
 * times a thread was switched away from while it could go on, and how many
 * steps it took (the written schedule's numbers go before it: bugstats.c). */
static const char *serial_counts(const struct one_run *o)
{
	static char text[96];

	snprintf(text, sizeof(text), "found run: %ld preemptions, %ld steps\n", o->preemptions,
		 o->steps);
	return text;
}

static int save_bug(const struct explore_options *eo, const struct engine_options *opt,
		    char *const argv[], long n, const struct one_run *o, const char *strategy,
		    long run, char *err, size_t errlen)
{
	char path[4096], *head, shard_line[48] = "";
	int rc;

	if (eo->nshards > 1)
		snprintf(shard_line, sizeof(shard_line), "shard: %d/%d\n", eo->shard, eo->nshards);
	snprintf(path, sizeof(path), "%s/bug-%ld.stdin", eo->out_dir, n);
	if (engine_input_kept() && engine_input_save(path) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/bug-%ld.sched", eo->out_dir, n);
	head = bug_head(eo, opt, argv, path, o, strategy, run);
	if (!head) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = write_file(eo->out_dir, "bug", n, "sched", head, o->schedule, err, errlen);
	free(head);
	if (rc < 0 ||
	    asprintf(&head,
		     "outcome: bug\nfound by cctrace %s%s\nstrategy: %s\nseed: %lu\n%srun: "
		     "%ld\nchoices: %s\n%s\n--- report\n",
		     search_command_of(eo), serial_options_of(eo), strategy,
		     (unsigned long)eo->seed, shard_line, run, o->choices,
		     eo->serial ? serial_counts(o) : "") < 0)
		return -1;
	rc = write_file(eo->out_dir, "bug", n, "txt", head, o->report, err, errlen);
	free(head);
	if (rc < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/bug-%ld.txt", eo->out_dir, n);
	{
		FILE *f = fopen(path, "a");

		if (f) {
			if (o->program_stderr)
				fprintf(
				    f, "\n--- the program's stderr (its last %d bytes at most)\n%s",
				    PROGRAM_STDERR_KEPT, o->program_stderr);
			fprintf(f, "\n--- trace of the run\n%s", o->trace ? o->trace : "");
			fclose(f);
		}
	}
	return save_picture(eo, argv, n, o, strategy, run, err, errlen);
}

/* The first "cctrace: OUTCOME: ..." line of a run's report, without the
 * prefix, into buf. */
static void outcome_line(const struct one_run *o, char *buf, size_t len)
{
	const char *at = o->report ? strstr(o->report, "cctrace: ") : NULL;
	size_t n;

	buf[0] = 0;
	if (!at)
		return;
	at += strlen("cctrace: ");
	n = strcspn(at, "\n");
	snprintf(buf, len, "%.*s", (int)n, at);
}

/* A job's bug, told to the parent at once (the pid says whose): the
 * other jobs stop before this one has minimised it. */
static void tell_found(int fd)
{
	pid_t me = getpid();

	if (write(fd, &me, sizeof(me)) != (ssize_t)sizeof(me))
		return; /* the parent then learns at the job's end */
}

/* A bug to write: not one of a kind already written (bugkind.c). */
static bool new_bug(const struct one_run *o)
{
	return !o->abandoned && o->outcome == OUTCOME_BUG && !o->repeat;
}

static void count(struct explore_summary *sum, const struct one_run *o)
{
	if (o->abandoned) {
		sum->skipped++;
		return;
	}
	sum->runs++;
	sum->diverged += o->diverged;
	switch (o->outcome) {
	case OUTCOME_BUG:
		if (o->repeat)
			sum->repeats++;
		else
			sum->bugs++;
		break;
	case OUTCOME_COMPLETED:
		sum->completed++;
		break;
	case OUTCOME_INFEASIBLE:
		sum->infeasible++;
		break;
	case OUTCOME_UNREALIZABLE:
		sum->unrealizable++;
		outcome_line(o, sum->last_failure, sizeof(sum->last_failure));
		break;
	case OUTCOME_ERROR:
		sum->errors++;
		outcome_line(o, sum->last_failure, sizeof(sum->last_failure));
		break;
	}
}

/*
 * The first run could not follow the schedule up to its first choice
 * point: an error, or unrealizable with no choice made (a wait that never
 * matched, a watchpoint that never fired).  Every run would end the same
 * way, so the search would explore nothing and could only report "0
 * bugs": it stops as an error instead, saying why.
 */
static bool cannot_start(const struct explore_summary *sum, const struct one_run *o, char *err,
			 size_t errlen)
{
	if (o->abandoned || sum->runs != 1)
		return false;
	if (o->outcome == OUTCOME_ERROR) {
		const char *why = sum->last_failure;

		if (strncmp(why, "error: ", 7) == 0)
			why += 7;
		snprintf(err, errlen, "the first run ended in an error: %s", why);
		return true;
	}
	if (o->outcome != OUTCOME_UNREALIZABLE || (o->choices && o->choices[0]))
		return false;
	snprintf(err, errlen,
		 "the first run could not follow the schedule up to its first choice point, so "
		 "there is nothing to search: %s",
		 sum->last_failure);
	return true;
}

/* Distinct choice traces seen: a small open-addressing set of hashes. */
struct seen {
	uint64_t *slots;
	size_t cap, n;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ? h : 1;
}

static void seen_add(struct seen *set, const char *trace)
{
	uint64_t h = fnv1a(trace), *grown;
	size_t i, cap;

	if (2 * (set->n + 1) > set->cap) {
		cap = set->cap ? set->cap * 2 : 256;
		grown = calloc(cap, sizeof(*grown));
		if (!grown)
			return;
		for (i = 0; i < set->cap; i++) {
			size_t j = set->slots[i] % cap;

			if (!set->slots[i])
				continue;
			while (grown[j])
				j = (j + 1) % cap;
			grown[j] = set->slots[i];
		}
		free(set->slots);
		set->slots = grown;
		set->cap = cap;
	}
	for (i = h % set->cap; set->slots[i]; i = (i + 1) % set->cap)
		if (set->slots[i] == h)
			return;
	set->slots[i] = h;
	set->n++;
}

/* bug-N.sched, bug-N.txt, bug-N.html, bug-N.full.sched... */
static bool is_bug_file(const char *name)
{
	unsigned long n;
	int end = 0;

	return sscanf(name, "bug-%lu.%n", &n, &end) == 1 && end > 0;
}

int search_fresh_out_dir(const struct explore_options *eo, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *e;
	char *stale = NULL, path[4096];
	size_t len = 0;
	FILE *names;
	int found = 0, rc = 0;

	if (eo->out_dir_ready) /* a later round of the same search */
		return 0;
	if (search_make_dir(eo->out_dir, err, errlen) < 0)
		return -1;
	d = opendir(eo->out_dir);
	if (!d) {
		snprintf(err, errlen, "cannot read %s: %s", eo->out_dir, strerror(errno));
		return -1;
	}
	names = open_memstream(&stale, &len);
	while (names && (e = readdir(d))) {
		if (!is_bug_file(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", eo->out_dir, e->d_name);
		if (eo->clean && unlink(path) < 0) {
			snprintf(err, errlen, "cannot remove %s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
		if (found++ < 4)
			fprintf(names, "%s%s", found > 1 ? ", " : "", e->d_name);
	}
	closedir(d);
	if (!names) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fclose(names);
	if (rc == 0 && found && !eo->clean) {
		snprintf(err, errlen,
			 "%s holds the bug files of an earlier search (%s%s); give another "
			 "directory with -o DIR, remove them, or pass --clean to have them removed",
			 eo->out_dir, stale, found > 4 ? ", ..." : "");
		rc = -1;
	}
	free(stale);
	return rc;
}

/* Progress on stderr: on a terminal one line rewritten in place; else (a CI
 * log) a plain line every PLAIN_EVERY_MS and one at the end.  A portfolio
 * (test's default) is a search of many rounds, each a search_explore: they
 * share one explore_progress, whose line counts the rounds before the
 * current one and times the whole search, and which only the portfolio
 * ends (explore_progress_end). */
#define PLAIN_EVERY_MS 5000

struct explore_progress {
	bool on, tty, line_shown;
	int64_t t0, last_plain;
	const char *command;	       /* explore or test */
	struct explore_summary before; /* the rounds that ended */
	bool shared;		       /* by a portfolio's rounds */
};

static void progress_line(struct explore_progress *p, const struct explore_summary *sum,
			  double space)
{
	double s = (double)(engine_now_ms() - p->t0) / 1000.0;
	struct explore_summary all = p->before;
	char estimate[32];

	search_summary_add(&all, sum);
	space += p->before.space_estimate;
	/* An estimate of 10^90 schedules is read as a magnitude, not digits;
	 * a small one as a whole number ("~531.906" read as thousands). */
	if (space < 0.5) /* no run has told yet */
		snprintf(estimate, sizeof(estimate), "an unknown number of");
	else if (isfinite(space) && space < 1e6)
		snprintf(estimate, sizeof(estimate), "~%.0f", space);
	else if (isfinite(space))
		snprintf(estimate, sizeof(estimate), "~%.2g", space);
	else
		snprintf(estimate, sizeof(estimate), "more than 1e308");
	fprintf(stderr,
		"%scctrace %s: %ld run%s, %.1f runs/s, %.1f s elapsed, %ld bug%s; %ld distinct "
		"schedule%s run, %ld infeasible, %ld diverged, %s schedule%s in all%s",
		p->tty ? "\r" : "", p->command, all.runs, plural_s(all.runs),
		s > 0 ? all.runs / s : 0.0, s, all.bugs, plural_s(all.bugs), all.distinct,
		plural_s(all.distinct), all.infeasible, all.diverged, estimate,
		isfinite(space) && space >= 0.5 && space < 1.5 ? "" : "s",
		p->tty ? "\033[K" : "\n");
	p->line_shown = p->tty;
}

static void clear_live_line(struct explore_progress *p)
{
	if (p->line_shown)
		fputs("\r\033[K", stderr);
	p->line_shown = false;
}

static void progress(struct explore_progress *p, const struct explore_summary *sum, double space,
		     bool last)
{
	int64_t now = engine_now_ms();

	if (!p->on)
		return;
	if (last && p->before.runs + sum->runs == 0) {
		clear_live_line(p); /* no run ended: what follows says why, not "0 bugs" */
		return;
	}
	if (p->tty) {
		progress_line(p, sum, space);
		if (last)
			fputc('\n', stderr);
		p->line_shown = !last;
		return;
	}
	if (last || now - p->last_plain >= PLAIN_EVERY_MS) {
		progress_line(p, sum, space);
		p->last_plain = now;
	}
}

static void progress_init(struct explore_progress *p, const struct explore_options *eo)
{
	int64_t now = engine_now_ms();

	*p = (struct explore_progress){.on = eo->progress,
				       .tty = isatty(STDERR_FILENO),
				       .t0 = now,
				       .last_plain = now,
				       .command = search_command_of(eo)};
}

struct explore_progress *explore_progress_new(const struct explore_options *eo)
{
	struct explore_progress *p = malloc(sizeof(*p));

	if (p) {
		progress_init(p, eo);
		p->shared = true;
	}
	return p;
}

void explore_progress_end(struct explore_progress *p, const struct explore_summary *total)
{
	struct explore_summary none = {0};

	assert(p->shared);
	p->before = *total; /* the rounds' sum, as the caller added them up */
	progress(p, &none, 0.0, true);
}

void explore_progress_free(struct explore_progress *p)
{
	free(p);
}

/* Said at once, -q or not: where the bug is.  In a portfolio's round,
 * counted from the search's start, as the summary counts, and from the
 * round's (which its `# found by` line names, and reproduces). */
static void announce_bug(struct explore_progress *p, const struct explore_options *eo, long n,
			 long run)
{
	clear_live_line(p);
	if (eo->run_offset > 0)
		fprintf(
		    stderr,
		    "cctrace %s: bug %ld in run %ld (run %ld of its %s round): %s/bug-%ld.sched\n",
		    search_command_of(eo), n, eo->run_offset + run, run, eo->strategy, eo->out_dir,
		    n);
	else
		fprintf(stderr, "cctrace %s: bug %ld in run %ld: %s/bug-%ld.sched\n",
			search_command_of(eo), n, run, eo->out_dir, n);
}

/* ms to a tenth, without binary noise in the printed number. */
static json_t *tenths(double ms)
{
	return json_real(round(ms * 10.0) / 10.0);
}

/* The estimate as an integer while it is one (an int64 holds it); a space
 * of 10^90 schedules, which no cast may make an integer of, as a real;
 * one past a double's range as null. */
static json_t *space_estimate_json(double space)
{
	if (space >= 0 && space < 9.2e18)
		return json_integer((json_int_t)space);
	return isfinite(space) ? json_real(space) : json_null();
}

void search_summary_json(FILE *f, const struct explore_options *eo,
			 const struct explore_summary *sum)
{
	json_t *rec = json_object();

	/* The order is the documented one (jansson keeps insertion order). */
	json_object_set_new(rec, "type", json_string("summary"));
	json_object_set_new(rec, "schema", json_integer(SEARCH_SUMMARY_SCHEMA));
	json_object_set_new(rec, "strategy", json_string(sum->strategy));
	json_object_set_new(rec, "seed", json_integer((json_int_t)eo->seed));
	json_object_set_new(rec, "jobs", json_integer(sum->jobs > 0 ? sum->jobs : 1));
	json_object_set_new(rec, "out_dir", json_string(eo->out_dir));
	json_object_set_new(rec, "runs", json_integer(sum->runs));
	json_object_set_new(rec, "bugs", json_integer(sum->bugs));
	json_object_set_new(rec, "repeats", json_integer(sum->repeats));
	json_object_set_new(rec, "completed", json_integer(sum->completed));
	json_object_set_new(rec, "infeasible", json_integer(sum->infeasible));
	json_object_set_new(rec, "unrealizable", json_integer(sum->unrealizable));
	json_object_set_new(rec, "errors", json_integer(sum->errors));
	json_object_set_new(rec, "diverged", json_integer(sum->diverged));
	json_object_set_new(rec, "skipped", json_integer(sum->skipped));
	json_object_set_new(rec, "distinct", json_integer(sum->distinct));
	json_object_set_new(rec, "space_estimate", space_estimate_json(sum->space_estimate));
	json_object_set_new(rec, "interrupted", json_boolean(sum->interrupted));
	json_object_set_new(rec, "out_of_time", json_boolean(sum->out_of_time));
	json_object_set_new(rec, "ms", json_integer((json_int_t)sum->ms));
	json_object_set_new(rec, "runs_per_second",
			    json_real(sum->ms > 0 ? round(sum->runs * 1e5 / sum->ms) / 100 : 0));
	json_object_set_new(rec, "ms_launch", tenths(sum->launch_ms));
	json_object_set_new(rec, "ms_symbols", tenths(sum->symbols_ms));
	json_object_set_new(rec, "ms_schedule", tenths(sum->schedule_ms));
	json_object_set_new(rec, "ms_finish", tenths(sum->finish_ms));
	json_dumpf(rec, f, JSON_COMPACT | JSON_REAL_PRECISION(15));
	fputc('\n', f);
	fflush(f);
	json_decref(rec);
}

/* After a run's JSON trace: its outcome record, with the run's number
 * (0: abandoned, outside this shard, not counted), in its round and in
 * the search, and its choices. */
static void trace_json_end(const struct explore_options *eo, long run, const struct one_run *o)
{
	const char *at = o->report ? strstr(o->report, "cctrace: ") : NULL;
	char *message = NULL;

	if (!eo->trace_json)
		return;
	/* "cctrace: bug: why": the record has the why, however long */
	if (at && (at = strstr(at + strlen("cctrace: "), ": ")) != NULL)
		message = strndup(at + 2, strcspn(at + 2, "\n"));
	engine_trace_json_outcome(eo->trace_json, &(struct engine_trace_outcome){
						      .outcome = o->outcome,
						      .message = message,
						      .run = run,
						      .search_run = eo->run_offset + run,
						      .choices = o->choices,
						      .abandoned = o->abandoned,
						  });
	free(message);
}

void search_note_snapshot(const struct explore_options *eo, const struct engine_snapshot *s)
{
	if (eo->verbose && engine_snapshot_fallback(s))
		fprintf(stderr, "cctrace %s: note: runs were launched afresh, not forked: %s\n",
			search_command_of(eo), engine_snapshot_fallback(s));
}

/* Ctrl-C, SIGTERM or another stop signal reached cctrace (the flag
 * outlives the run's tracer). */
static bool stop_requested(void)
{
	return engine_stop_signal() != 0;
}

static void minimize_bug(struct explore_progress *shown, const struct explore_options *eo,
			 char *const argv[], const struct engine_options *opt, long n)
{
	char path[4096];
	struct minimize_limits lim = {eo->minimize_replays, eo->minimize_ms};
	struct minimize_result res;

	snprintf(path, sizeof(path), "%s/bug-%ld.sched", eo->out_dir, n);
	if (search_minimize(path, argv, opt, &lim, &res) < 0)
		return;
	if (res.cut_short) { /* said even with -q: the schedule is longer than it could be */
		clear_live_line(shown);
		fprintf(stderr,
			"cctrace %s: bug-%ld.sched minimised %s: %d step%s dropped, %d line%s "
			"left, not every line tried%s\n",
			search_command_of(eo), n,
			engine_stop_signal() ? "until interrupted" : "for its time", res.removed,
			plural_s(res.removed), res.lines, plural_s(res.lines),
			engine_stop_signal() ? "" : " (--minimize-time)");
	} else if (eo->progress) {
		clear_live_line(shown);
		fprintf(stderr, "cctrace %s: bug-%ld.sched minimised: %d step%s dropped\n",
			search_command_of(eo), n, res.removed, plural_s(res.removed));
	}
}

int search_explore(struct policy *pol, char *const argv[], const struct engine_options *opt,
		   const struct explore_options *eo, struct explore_summary *sum, char *err,
		   size_t errlen)
{
	struct search_config cfg = {.seed = eo->seed};
	struct search *oracle;
	struct seen seen = {0};
	struct run_reuse reuse = {0};
	struct engine_snapshot *own_snapshot = NULL;
	struct symbol_cache *own_symbols = NULL;
	struct bug_kinds own_kinds = {0}, *kinds = eo->kinds ? eo->kinds : &own_kinds;
	bool exhausted = false, only_schedule;
	int64_t t0 = engine_now_ms();
	struct explore_progress own_progress, *shown = eo->shared_progress;
	const char *strategy = sum->strategy;
	bool more = true;
	int rc = 0;

	if (!shown) {
		progress_init(&own_progress, eo);
		shown = &own_progress;
	}
	memset(sum, 0, sizeof(*sum));
	sum->jobs = 1;
	if (search_parse(eo->strategy ? eo->strategy : "dfs", &cfg, err, errlen) < 0)
		return -1;
	cfg.shard = eo->nshards > 0 ? eo->shard - 1 : 0;
	cfg.nshards = eo->nshards > 0 ? eo->nshards : 1;
	search_name(&cfg, sum->strategy, sizeof(sum->strategy));
	if (search_make_dir(eo->out_dir, err, errlen) < 0)
		return -1;
	oracle = search_new(&cfg, eo->serial ? (int)eo->serial->nvars : engine_watched_count(pol));
	if (!eo->symbols)
		own_symbols = engine_symbol_cache_new();
	reuse.symbols = eo->symbols ? eo->symbols : own_symbols;
	if (!eo->snapshot && !eo->no_snapshot)
		own_snapshot = engine_snapshot_new();
	reuse.snapshot = eo->snapshot ? eo->snapshot : own_snapshot;
	reuse.end_by_ms = eo->max_ms ? t0 + eo->max_ms : 0;
	if (!oracle || !reuse.symbols || (!eo->no_snapshot && !reuse.snapshot)) {
		search_free(oracle);
		engine_symbol_cache_free(own_symbols);
		engine_snapshot_free(own_snapshot);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (more) {
		struct one_run o = {0};

		if (execute_once(pol, argv, opt, eo, oracle, &reuse, &o, sum, err, errlen) < 0) {
			free_run(&o);
			rc = -1;
			break;
		}
		if (o.out_of_time) { /* a run --time cut short tells nothing */
			sum->out_of_time = true;
			free_run(&o);
			break;
		}
		/* A run Ctrl-C cut short is no run of the search: it has no
		 * verdict, and counted as an error it read "1 errors". */
		if (o.outcome == OUTCOME_ERROR && stop_requested()) {
			sum->interrupted = true; /* no point in restarting */
			/* its trace ends with its error, as `cctrace run`'s does;
			 * it is not counted, but it was run */
			trace_json_end(eo, sum->runs + 1, &o);
			free_run(&o);
			break;
		}
		/* test's runs meet one bug again and again; each of explore's
		 * is a schedule of the user's space, written whatever it shows */
		if (eo->serial && !o.abandoned && o.outcome == OUTCOME_BUG) {
			char kind[4096];

			search_bug_kind(o.report, kind, sizeof(kind));
			o.repeat = !search_bug_kinds_add(kinds, kind);
		}
		count(sum, &o);
		trace_json_end(eo, o.abandoned ? 0 : sum->runs, &o);
		if (eo->verbose && o.outcome != OUTCOME_COMPLETED && !o.abandoned)
			fprintf(stderr, "--- run %ld [%s]: %s\n%s%s", sum->runs,
				o.choices ? o.choices : "", engine_outcome_name(o.outcome),
				o.trace ? o.trace : "", o.report ? o.report : "");
		if (!o.abandoned && eo->schedules)
			fprintf(eo->schedules, "%s %s\n",
				o.choices && o.choices[0] ? o.choices : "-",
				engine_outcome_name(o.outcome));
		if (new_bug(&o) && save_bug(eo, opt, argv, eo->bug_offset + sum->bugs, &o, strategy,
					    sum->runs, err, errlen) < 0)
			rc = -1;
		else if (new_bug(&o))
			announce_bug(shown, eo, eo->bug_offset + sum->bugs, sum->runs);
		if (rc == 0 && new_bug(&o) && eo->found_fd > 0)
			tell_found(eo->found_fd);
		if (rc == 0 && new_bug(&o) && eo->minimize_replays)
			minimize_bug(shown, eo, argv, opt, eo->bug_offset + sum->bugs);
		if (rc == 0 && new_bug(&o) && eo->serial)
			search_bug_stats(pol, argv, opt, eo, eo->bug_offset + sum->bugs);
		if (!o.abandoned) {
			seen_add(&seen, o.choices ? o.choices : "");
			sum->distinct = (long)seen.n;
		}
		if (cannot_start(sum, &o, err, errlen)) {
			fputs(o.report ? o.report : "", stderr);
			rc = -1;
			free_run(&o);
			break;
		}
		only_schedule = o.no_choice;
		free_run(&o);
		progress(shown, sum, search_space_estimate(oracle), false);
		exhausted = !search_next_run(oracle) || only_schedule;
		/* a stop signal between two runs (a job stopped at another's
		 * bug) ends the search as one inside a run does */
		if (!exhausted && stop_requested())
			sum->interrupted = true;
		more = rc == 0 && !exhausted && !sum->interrupted && (eo->all || sum->bugs == 0) &&
		       (!eo->max_runs || sum->runs < eo->max_runs) &&
		       (!eo->max_ms || engine_now_ms() - t0 < eo->max_ms);
	}
	/* A search that could not run has no progress to show: its error says
	 * why, never "0 bugs". */
	sum->ms = (double)(engine_now_ms() - t0);
	sum->space_estimate = exhausted ? (double)sum->distinct : search_space_estimate(oracle);
	sum->space_left = !exhausted;
	if (rc != 0)
		clear_live_line(shown);
	else if (!shown->shared)
		progress(shown, sum, search_space_estimate(oracle), true);
	else /* a round: its line goes on counting it */
		search_summary_add(&shown->before, sum);
	if (own_snapshot)
		search_note_snapshot(eo, own_snapshot);
	search_free(oracle);
	engine_symbol_cache_free(own_symbols);
	engine_snapshot_free(own_snapshot);
	search_bug_kinds_free(&own_kinds);
	free(seen.slots);
	return rc;
}
