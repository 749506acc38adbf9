/*
 * choose.c: the statements of search: choose, assume, let, and the
 * recording of a run as an exact schedule.
 *
 * Under `cctrace explore` the oracle resolves every choose; under run and
 * attach there is no oracle and a choose takes its first value (for a
 * thread choice, the first thread that has not ended), so the same file
 * runs everywhere.  A thread choice only offers threads that have not
 * ended, and tells the oracle which one ran last, so that context bounding
 * can tell a preemption from a thread simply going on.  Blocked threads
 * are not offered; when all of them are, blocked.c decides whether one can
 * go on again, or the run is a deadlock or waits on the schedule.
 *
 * While exploring, every statement that moves threads is written to
 * r->record as it starts, with thread aliases resolved to the variable a
 * wait first bound, loops unrolled and choices gone: the file replays this
 * very run with `cctrace run`.
 */
#include "engine/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The search's answer; the engine's only way to it (engine.h). */
static int ask_oracle(struct run *r, const struct engine_choice *c)
{
	int k = r->oracle->choose(r->oracle->ctx, c);

	assert(k == ENGINE_CHOICE_ABANDON || (k >= 0 && k < c->n));
	return k;
}

int run_choose_value(void *hook, const struct expr *e, int n)
{
	struct run *r = hook;
	int k;

	(void)e;
	if (!r->oracle)
		return 0;
	k = ask_oracle(r, &(struct engine_choice){.n = n, .current = -1, .current_var = -1});
	if (k == ENGINE_CHOICE_ABANDON) {
		r->abandoned = true;
		return 0;
	}
	return k;
}

static bool has_ended(struct tr_thread *th)
{
	return tracer_thread_exited(th) || tracer_thread_last_event(th) == TR_EV_EXIT;
}

static enum flow abandoned(struct run *r)
{
	r->abandoned = true;
	report_outcome(r, OUTCOME_INFEASIBLE, "this run belongs to another shard");
	return FLOW_STOP;
}

/* The threads of s's choices that may run now, in options (ids: their
 * variables); the bound ones that have not ended, in live.  Returns how
 * many may run. */
static int collect_choices(struct run *r, const struct stmt *s, struct tr_thread **options,
			   int *ids, struct tr_thread **live, int *nlive, int *current)
{
	int i, n = 0;

	*nlive = 0;
	*current = -1;
	for (i = 0; i < s->nchoices; i++) {
		struct tr_thread *th = run_binding(r, s->choices[i]);

		if (!th || has_ended(th))
			continue;
		live[(*nlive)++] = th;
		if (run_thread(r, th)->blocked)
			continue;
		options[n] = th;
		ids[n] = run_var(r, s->choices[i]);
		if (th == r->last_run)
			*current = ids[n];
		n++;
	}
	return n;
}

enum flow exec_choose_thread(struct run *r, const struct stmt *s)
{
	struct tr_thread **options = calloc((size_t)s->nchoices + 1, sizeof(*options));
	struct tr_thread **live = calloc((size_t)s->nchoices + 1, sizeof(*live));
	int *ids = calloc((size_t)s->nchoices + 1, sizeof(*ids));
	int n, nlive, k, current, var;
	struct engine_choice point;
	enum flow flow = FLOW_STOP;
	char where[256];

	if (!options || !live || !ids) {
		report_outcome(r, OUTCOME_ERROR, "out of memory");
		goto out;
	}
	while ((n = collect_choices(r, s, options, ids, live, &nlive, &current)) == 0) {
		if (nlive > 0) {
			/* Blocked, all of them: a deadlock, or waiting on the
			 * schedule, or about to go on. */
			if (!blocked_choose_again(r, s, live, nlive))
				goto out;
			continue;
		}
		run_where(r, s, where, sizeof(where));
		report_outcome(r, OUTCOME_UNREALIZABLE,
			       "every thread to choose from has ended (%s)", where);
		goto out;
	}
	point = (struct engine_choice){n, ids, current,
				       r->last_run ? run_thread(r, r->last_run)->last_var : -1};
	k = r->oracle ? ask_oracle(r, &point) : 0;
	if (k == ENGINE_CHOICE_ABANDON) {
		flow = abandoned(r);
		goto out;
	}
	/* The picture of a bug highlights where the search preempted. */
	if (current >= 0 && ids[k] != current)
		r->preempted = r->last_run;
	var = run_var(r, s->names[0]);
	if (var >= 0)
		run_bind(r, var, options[k]);
	flow = FLOW_NEXT;
out:
	free(options);
	free(live);
	free(ids);
	return flow;
}

static int eval_here(struct run *r, const struct expr *e, int64_t *v)
{
	char err[1024];
	struct eval_ctx c = points_eval_ctx(r, run_main_process(r), err, sizeof(err));

	if (eval_int(&c, e, v) < 0) {
		report_outcome(r, OUTCOME_ERROR, "%s", err);
		return -1;
	}
	if (r->abandoned) {
		abandoned(r);
		return -1;
	}
	return 0;
}

int run_local_slot(struct run *r, const char *name)
{
	int i;

	for (i = 0; i < r->pol->nlocals; i++)
		if (strcmp(r->pol->locals[i], name) == 0)
			break;
	if (i == r->pol->nlocals)
		return -1;
	if (r->nlocals < r->pol->nlocals) {
		int64_t *grown = realloc(r->locals, sizeof(*grown) * (size_t)r->pol->nlocals);

		if (!grown)
			return -1;
		memset(grown + r->nlocals, 0,
		       sizeof(*grown) * (size_t)(r->pol->nlocals - r->nlocals));
		r->locals = grown;
		r->nlocals = r->pol->nlocals;
	}
	return i;
}

enum flow exec_let(struct run *r, const struct stmt *s)
{
	int slot = run_local_slot(r, s->names[0]);
	int64_t v;

	if (slot < 0 || eval_here(r, s->cond, &v) < 0)
		return FLOW_STOP;
	r->locals[slot] = v;
	return FLOW_NEXT;
}

enum flow exec_assume(struct run *r, const struct stmt *s)
{
	char text[256], where[256];
	int64_t v;

	if (eval_here(r, s->cond, &v) < 0)
		return FLOW_STOP;
	if (v)
		return FLOW_NEXT;
	expr_format(s->cond, text, sizeof(text));
	run_where(r, s, where, sizeof(where));
	report_outcome(r, OUTCOME_INFEASIBLE, "assume(%s) is false (%s)", text, where);
	return FLOW_STOP;
}

/* --- the exact schedule of this run --- */

static const char *primary_name(struct run *r, const char *var)
{
	struct tr_thread *th = run_binding(r, var);
	int p = th ? run_thread(r, th)->primary : -1;

	return p >= 0 ? r->pol->threads[p] : var;
}

static void record_names(struct run *r, const struct stmt *s, bool resolve)
{
	int i;

	for (i = 0; i < s->n_names; i++)
		fprintf(r->record, "%s%s", i ? ", " : "",
			resolve ? primary_name(r, s->names[i]) : s->names[i]);
}

static void record_pred(struct run *r, const struct expr *e)
{
	char text[1024];

	expr_format_bound(e, r->locals, text, sizeof(text));
	fprintf(r->record, "%s", text);
}

void run_record(struct run *r, const struct stmt *s)
{
	static const char *const moves[] = {
	    [S_STEP] = "step", [S_NEXT] = "next", [S_FINISH] = "finish", [S_HOLD] = "hold"};

	if (!r->record)
		return;
	switch (s->kind) {
	case S_TIMEOUT:
		fprintf(r->record, "timeout %ldms\n", (long)s->timeout_ms);
		return;
	case S_WAIT:
		if (s->n_names) {
			fprintf(r->record, "thread ");
			record_names(r, s, false);
			fprintf(r->record, " = ");
		}
		if (s->count == 1)
			fprintf(r->record, "wait any ");
		else
			fprintf(r->record, "wait %ld distinct %s", (long)s->count,
				s->processes ? "processes " : "");
		record_pred(r, s->pred);
		break;
	case S_RUN:
		fprintf(r->record, "run ");
		record_names(r, s, true);
		fprintf(r->record, " until ");
		record_pred(r, s->pred);
		break;
	case S_RELEASE:
		fprintf(r->record, "release ");
		if (s->all)
			fprintf(r->record, "all");
		record_names(r, s, true);
		break;
	case S_STEP:
	case S_NEXT:
	case S_FINISH:
	case S_HOLD:
		fprintf(r->record, "%s ", moves[s->kind]);
		record_names(r, s, true);
		if (s->kind == S_STEP && s->count > 1)
			fprintf(r->record, " %ld", (long)s->count);
		break;
	case S_BIND:
		fprintf(r->record, "thread %s = %s", s->names[0], s->target);
		break;
	case S_ASSERT:
		fprintf(r->record, "assert ");
		record_pred(r, s->cond);
		break;
	default:
		return; /* control flow and choices are resolved away */
	}
}

static bool recorded(enum stmt_kind k)
{
	switch (k) {
	case S_TIMEOUT:
	case S_WAIT:
	case S_RUN:
	case S_RELEASE:
	case S_STEP:
	case S_NEXT:
	case S_FINISH:
	case S_HOLD:
	case S_BIND:
	case S_ASSERT:
		return true;
	default:
		return false;
	}
}

/* `thread A, B = wait 2 distinct P` names the threads in the order they
 * reached P, which is a race unless the program orders them: the replay
 * binds each name again to the thread this run gave it (by its stable
 * name, held where the wait stopped it), or A and B could change places. */
static void record_pins(struct run *r, const struct stmt *s)
{
	struct tr_thread *th;
	int i;

	if (s->kind != S_WAIT || s->n_names < 2)
		return;
	for (i = 0; i < s->n_names; i++) {
		th = run_binding(r, s->names[i]);
		if (th)
			fprintf(r->record, "thread %s = %s%s\n", s->names[i],
				tracer_thread_name(th),
				i ? "" : "   # the threads this run bound, whichever comes first");
	}
}

/* The line ends after the statement: a run that ended on blocked threads
 * says so, so that the replay accepts the same ending. */
void run_record_end(struct run *r, const struct stmt *s)
{
	if (!r->record || !recorded(s->kind))
		return;
	if (r->ended_blocked && s->kind == S_RUN)
		fprintf(r->record, " || blocked");
	fputc('\n', r->record);
	record_pins(r, s);
}
