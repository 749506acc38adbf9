/*
 * loop.c: the engine's one event loop, and the only caller of tracer_wait.
 *
 * The engine waits for the program in several ways: a `wait` or `run`
 * statement waits for its predicate, `step`/`next`/`finish` drive one
 * thread, blocked.c lets free threads run while the targets sleep and
 * then stops the sleepers, and after the schedule a launched program is
 * drained to its end.  Each is a request handed to loop_run(): a deadline
 * and handlers for what is that request's own business.  What every wait
 * must do the same way is done here, once, before a handler sees the
 * event:
 *   - the driver's end (explore --driver) ends the run, judged by its
 *     status;
 *   - a fork copies the breakpoints a child inherits into the armed lists,
 *     so that disarming removes them from its text too; an exec forgets
 *     the old image's and, while a predicate is armed, arms it in the new
 *     one;
 *   - a fatal signal is a crash, reported with the thread's stack;
 *   - a futex wake reaches the threads held in a wait on its word
 *     (wakes.c), and a stop made only to see it goes on;
 *   - the end of the last process ends the run (how depends on the
 *     request: `during` says what was going on);
 *   - Ctrl-C (or any stop signal) ends it as interrupted, and a tracer
 *     that lost every task is an error (or the end, when draining).
 * When these were written four times over, they drifted: the loop that
 * stopped blocked threads resumed a fork without accounting for the
 * child's inherited breakpoints, and a crash there without reporting it.
 *
 * Handlers answer LOOP_AGAIN (wait on), LOOP_DONE (the request is met)
 * or LOOP_STOP (the run is over; its outcome has been reported).
 */
#include "engine/internal.h"

#include <assert.h>
#include <stdio.h>

/* A thread the schedule does not hold runs on after any stop of its own. */
enum loop_verdict loop_resume_free(struct run *r, const struct tr_event *ev,
				   struct loop_request *req)
{
	(void)req;
	if (run_thread(r, ev->thread)->bound < 0)
		run_resume(r, ev->thread);
	return LOOP_AGAIN;
}

static enum loop_verdict program_ended(struct run *r, const struct tr_event *ev,
				       struct loop_request *req)
{
	char text[768];
	const char *during = NULL;

	if (req->during)
		during = req->during(r, req, text, sizeof(text));
	if (run_program_ended(r, ev, during) == FLOW_NEXT)
		return LOOP_AGAIN; /* another process lives on */
	/* Draining with a driver: its verdict is still to come. */
	return req->drain && r->has_driver ? LOOP_AGAIN : LOOP_STOP;
}

static enum loop_verdict crashed(struct run *r, const struct tr_event *ev, struct loop_request *req)
{
	run_crash(r, ev);
	if (!req->drain)
		return LOOP_STOP;
	run_resume(r, ev->thread); /* the schedule is over: let it die of it */
	return LOOP_AGAIN;
}

/* What every wait does with an event; NULL handler: resume if free. */
static enum loop_verdict dispatch(struct run *r, const struct tr_event *ev,
				  struct loop_request *req)
{
	switch (ev->kind) {
	case TR_EV_CHILD_EXIT:
		run_driver_ended(r, ev);
		return LOOP_STOP;
	case TR_EV_PROCESS_EXIT:
		return program_ended(r, ev, req);
	case TR_EV_SIGNAL:
		if (ev->fatal)
			return crashed(r, ev, req);
		break;
	case TR_EV_FORK:
	case TR_EV_EXEC:
		run_note_process_event(r, ev);
		break;
	case TR_EV_SYSCALL:
		if (wakes_syscall_entry(r, ev))
			return LOOP_AGAIN;
		break;
	case TR_EV_WATCH:
		points_watch_fired(r, ev);
		break;
	case TR_EV_BREAK:
		run_note_entry(r, ev);
		break;
	case TR_EV_NONE:
	case TR_EV_START:
	case TR_EV_STEP:
	case TR_EV_EXIT:
	case TR_EV_INTERRUPT:
		break;
	}
	assert(ev->thread);
	return (req->on_event ? req->on_event : loop_resume_free)(r, ev, req);
}

static enum loop_verdict no_tasks(struct run *r, struct loop_request *req)
{
	if (req->drain)
		return LOOP_DONE;
	report_outcome(r, OUTCOME_ERROR, "lost every traced process");
	return LOOP_STOP;
}

/* The request's deadline, or the run's end (a search's --time) if that
 * comes first. */
static int64_t wait_deadline(const struct run *r, const struct loop_request *req)
{
	int64_t end = r->opt->end_by_ms;

	if (end > 0 && (req->deadline_ms < 0 || req->deadline_ms > end))
		return end;
	return req->deadline_ms;
}

static enum loop_verdict run_out_of_time(struct run *r)
{
	r->out_of_time = true;
	report_outcome(r, OUTCOME_ERROR, "the search's time ran out during this run");
	return LOOP_STOP;
}

enum flow loop_run(struct run *r, struct loop_request *req)
{
	enum loop_verdict v = LOOP_AGAIN;
	struct tr_event ev;
	int signo = 0;

	while (v == LOOP_AGAIN) {
		switch (tracer_wait(r->t, &ev, wait_deadline(r, req), &signo)) {
		case TR_WAIT_EVENT:
			v = dispatch(r, &ev, req);
			break;
		case TR_WAIT_TIMEOUT:
			if (r->opt->end_by_ms > 0 && tracer_now_ms() >= r->opt->end_by_ms)
				v = run_out_of_time(r);
			else
				v = req->on_deadline ? req->on_deadline(r, req) : LOOP_DONE;
			break;
		case TR_WAIT_INTERRUPTED:
			if (req->idle) {
				v = LOOP_DONE;
				break;
			}
			run_interrupted(r, signo);
			v = LOOP_STOP;
			break;
		case TR_WAIT_NO_TASKS:
		case TR_WAIT_ERROR:
			v = no_tasks(r, req);
			break;
		}
	}
	return v == LOOP_STOP ? FLOW_STOP : FLOW_NEXT;
}
