/*
 * interp.c: executing a schedule.
 *
 * Statements run in order against a live tracer.  The heart is one wait
 * loop, shared by `wait` and `run`: candidate threads are released, every
 * other stop is resumed at once, and each stop of a candidate is checked
 * against the predicate; a thread that satisfies it stays held.  `wait N
 * distinct P` has every unbound thread (including threads born during the
 * wait) as candidates and binds the first N to match; `run A, B until P`
 * has A and B and returns when each has matched.
 *
 * A run ends with one outcome, recorded once by report_outcome(): the
 * first bug, timeout or error wins, and the end of the schedule means
 * "completed" unless the program then misbehaves on its way out.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

#include <assert.h>
#include <inttypes.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static enum flow exec_block(struct run *r, const struct stmt *s);

void run_where(struct run *r, const struct stmt *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%d:%d", r->sched->path, s->loc.line, s->loc.col);
}

void run_resume(struct run *r, struct tr_thread *th)
{
	if (tracer_thread_held(th) && !serial_keeps(r, th)) {
		chrome_note_release(r, th);
		wakes_resume(r, th);
	}
}

int run_move_candidate(struct run *r, struct tr_thread *th)
{
	if (!tracer_thread_held(th))
		return 0;
	chrome_note_release(r, th);
	wakes_before_resume(r, th);
	/* A profile decodes only the threads its tap asked for (tap.c). */
	if (r->fine_want && (!r->tap || tap_decodes(r, th)))
		return fine_advance(r, th);
	if (r->entry_blocks && !r->fine_want && !r->fine_syscalls) {
		tracer_resume_syscalls(th); /* a futex wait is seen at its entry */
		return 0;
	}
	if (r->fine_want) { /* undecoded, but still stopped at system calls */
		if (r->fine_want & DIS_WANT_SYSCALL)
			tracer_resume_syscalls(th);
		else
			tracer_resume(th);
		return 0;
	}
	if (r->fine_syscalls) {
		/* On a system call the last wait reported: its entry stop,
		 * next, is not news. */
		struct thread_ctx *tc = run_thread(r, th);

		tc->skip_syscall_entry = tracer_step_parked_on_syscall(th);
		tracer_resume_syscalls(th);
		return 0;
	}
	return wakes_resume(r, th);
}

/* Unbound threads run freely: anything of theirs still held goes. */
void run_release_free(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t) {
		struct thread_ctx *tc = run_thread(r, th);

		if (!tracer_thread_held(th) || tc->bound >= 0 || tc->matched ||
		    tracer_event_pending(th) || serial_keeps(r, th))
			continue;
		if (tc->candidate && r->fine_want)
			continue; /* the stepper's: run_wait_for moves it */
		if (tc->candidate)
			run_move_candidate(r, th);
		else
			run_resume(r, th);
	}
}

void run_crash(struct run *r, const struct tr_event *ev)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(ev->thread));
	struct sym_loc loc = {0};
	char where[512], line[256] = "";

	if (pc && pc->syms && r->opt->brief)
		sym_describe_function(pc->syms, ev->pc, &loc); /* no debug info to read */
	else if (pc && pc->syms)
		sym_describe(pc->syms, ev->pc, &loc);
	report_code_name(r, tracer_thread_process(ev->thread), ev->pc, &loc, where, sizeof(where));
	if (loc.file)
		snprintf(line, sizeof(line), " at %s:%d", loc.file, loc.line);
	if (r->finished && r->opt->report)
		fprintf(r->opt->report, "cctrace: then %s received %s in %s\n",
			tracer_thread_name(ev->thread), sigabbrev_np(ev->signo), where);
	report_outcome(r, OUTCOME_BUG, "%s (tid %d) received %s (%s) in %s%s",
		       tracer_thread_name(ev->thread), tracer_thread_tid(ev->thread),
		       sigabbrev_np(ev->signo), strsignal(ev->signo), where, line);
	report_stack(r, ev->thread);
}

enum flow run_program_ended(struct run *r, const struct tr_event *ev, const char *during)
{
	struct tr_process *p;
	char report[512];

	for (p = tracer_processes(r->t); p; p = tracer_process_next(p))
		if (tracer_process_alive(p))
			return FLOW_NEXT;
	r->exit_status = ev->signo ? 0 : ev->status;
	if (r->program_stderr >= 0 &&
	    stderr_sanitizer_report(r->program_stderr, report, sizeof(report)))
		report_outcome(r, OUTCOME_BUG, "a sanitizer reported in the program's stderr: %s",
			       report);
	else if (ev->signo)
		report_outcome(
		    r, tracer_signal_crashes(ev->signo) ? OUTCOME_BUG : OUTCOME_UNREALIZABLE,
		    "the program was killed by %s%s%s", sigabbrev_np(ev->signo), during ? " " : "",
		    during ? during : "");
	else if (ev->status && r->opt->fail_on_exit &&
		 !(r->opt->ok_exit[(ev->status & 255) / 64] & (1ull << (ev->status & 63))))
		report_outcome(r, OUTCOME_BUG, "the program exited with status %d%s%s", ev->status,
			       during ? " " : "", during ? during : "");
	else if (during)
		report_outcome(r, OUTCOME_UNREALIZABLE, "the program exited with status %d %s",
			       ev->status, during);
	return FLOW_STOP;
}

/* Drop the entries of p from an armed list (its image is gone). */
static void forget_armed(struct armed_bp *list, int *n, struct tr_process *p)
{
	int i, kept = 0;

	for (i = 0; i < *n; i++)
		if (list[i].proc != p)
			list[kept++] = list[i];
	*n = kept;
}

static void free_loc_addrs(struct proc_ctx *pc)
{
	int i;

	for (i = 0; i < pc->nlocs; i++)
		free(pc->locs[i].addrs);
	for (i = 0; pc->inlined && i < pc->nfuncs; i++)
		free(pc->inlined[i].addrs);
}

/* p's symbols and what was resolved with them, to be read again on first
 * use. */
static void forget_symbols(struct run *r, struct tr_process *p)
{
	struct proc_ctx *pc = tracer_process_user(p);

	if (pc) {
		if (!pc->syms_borrowed)
			sym_close(pc->syms);
		else { /* given back to the search's cache, which lent it */
			assert(r->symbol_cache && r->symbol_cache->lent > 0);
			r->symbol_cache->lent--;
		}
		free(pc->func_addr);
		free_loc_addrs(pc);
		free(pc->locs);
		free(pc->inlined);
		free(pc);
		tracer_process_set_user(p, NULL);
	}
}

/* A new program in p: its symbols are read again on first use, and the
 * old image's breakpoints (gone with it) are forgotten. */
static void exec_happened(struct run *r, struct tr_process *p)
{
	forget_armed(r->armed, &r->narmed, p);
	forget_armed(r->lingering, &r->nlingering, p);
	forget_armed(r->exec_entries, &r->nexec_entries, p);
	forget_symbols(r, p);
	fine_forget_process(r, p);
}

/* Append, for each entry of parent in list, the same address in child. */
static void copy_armed(struct armed_bp **list, int *n, int *cap, struct tr_process *parent,
		       struct tr_process *child)
{
	int i, before = *n;

	for (i = 0; i < before; i++) {
		if ((*list)[i].proc != parent)
			continue;
		if (*n == *cap) {
			int grown_cap = *cap ? *cap * 2 : 16;
			struct armed_bp *grown = realloc(*list, sizeof(*grown) * (size_t)grown_cap);

			if (!grown)
				return;
			*list = grown;
			*cap = grown_cap;
		}
		(*list)[(*n)++] = (struct armed_bp){child, (*list)[i].addr};
	}
}

/* A forked child inherits our int3s in its copy of the text, armed and
 * lingering alike: account for them so that disarming removes them there
 * too. */
static void fork_happened(struct run *r, const struct tr_event *ev)
{
	int i;

	if (!ev->child)
		return;
	/* Once per child: an event given back (tracer_push_back) comes
	 * through the loop twice, and a new child has no entries of its own. */
	for (i = 0; i < r->narmed; i++)
		if (r->armed[i].proc == ev->child)
			return;
	for (i = 0; i < r->nlingering; i++)
		if (r->lingering[i].proc == ev->child)
			return;
	copy_armed(&r->armed, &r->narmed, &r->armed_cap, tracer_thread_process(ev->thread),
		   ev->child);
	copy_armed(&r->lingering, &r->nlingering, &r->lingering_cap,
		   tracer_thread_process(ev->thread), ev->child);
}

/* At an exec only the program and the dynamic loader are mapped: its
 * libraries (and the functions of theirs a schedule names) come before
 * its entry point, where a breakpoint has its symbols read again. */
static void await_libraries(struct run *r, struct tr_process *p)
{
	uint64_t entry = tracer_process_entry(p);
	char err[256];

	/* Not one of a wait's points: it stays until the process gets there,
	 * whatever waits come and go meanwhile.  (Not in a serialized run,
	 * whose steps end at its own points only: it places its points when
	 * each step starts.) */
	if (r->serial || !entry ||
	    vec_reserve(&r->exec_entries, &r->exec_entries_cap, r->nexec_entries,
			sizeof(*r->exec_entries)) < 0 ||
	    tracer_break_insert(p, entry, err, sizeof(err)) < 0)
		return;
	r->exec_entries[r->nexec_entries++] = (struct armed_bp){p, entry};
}

/* A process that executed a program is at its entry point: what was armed
 * in it with the symbols of the program alone is armed again with its
 * libraries'.  false if ev is no such stop. */
bool run_note_entry(struct run *r, const struct tr_event *ev)
{
	struct tr_process *p = tracer_thread_process(ev->thread);
	uint64_t *addrs;
	int i, n = 0;

	for (i = 0; i < r->nexec_entries; i++)
		if (r->exec_entries[i].proc == p && r->exec_entries[i].addr == ev->pc)
			break;
	if (ev->kind != TR_EV_BREAK || i == r->nexec_entries)
		return false;
	r->exec_entries[i] = r->exec_entries[--r->nexec_entries];
	tracer_break_remove(p, ev->pc);
	addrs = calloc((size_t)r->narmed + 1, sizeof(*addrs));
	if (!addrs)
		return true;
	for (i = 0; i < r->narmed; i++)
		if (r->armed[i].proc == p)
			addrs[n++] = r->armed[i].addr;
	for (i = 0; i < n; i++)
		points_disarm_breakpoint(r, p, addrs[i]);
	free(addrs);
	forget_symbols(r, p);
	if (r->pred)
		points_arm(r, r->pred);
	return true;
}

/* Bookkeeping for a fork or an exec (loop.c, for every wait): an exec
 * while a predicate is armed arms it in the new image. */
void run_note_process_event(struct run *r, const struct tr_event *ev)
{
	if (ev->kind == TR_EV_EXEC) {
		exec_happened(r, tracer_thread_process(ev->thread));
		await_libraries(r, tracer_thread_process(ev->thread));
		if (r->pred)
			points_arm(r, r->pred);
	} else if (ev->kind == TR_EV_FORK) {
		fork_happened(r, ev);
	}
}

int run_predicate_holds(struct run *r, struct current_event *cur, bool *holds)
{
	return points_judge(r, cur, holds);
}

/* Returns FLOW_STOP when the run is over. */
/* The test driver (explore --driver) ended: so does the run, judged by
 * the driver's exit status, as CONCURRIT's TestEnd. */
enum flow run_driver_ended(struct run *r, const struct tr_event *ev)
{
	r->no_drain = true;
	r->has_driver = false;
	if (ev->signo)
		report_outcome(r, OUTCOME_BUG, "the driver was killed by %s",
			       sigabbrev_np(ev->signo));
	else if (ev->status)
		report_outcome(r, OUTCOME_BUG, "the driver exited with status %d", ev->status);
	else
		report_outcome(r, OUTCOME_COMPLETED, "the driver finished");
	return FLOW_STOP;
}

static void matched_here(struct run *r, struct tr_thread *th, const struct current_event *cur,
			 struct tr_thread **matched, int *nmatched)
{
	struct thread_ctx *tc = run_thread(r, th);
	const struct expr *atom = cur->matched;

	assert(tc->candidate && !tc->matched);
	tc->matched = true;
	tc->entered_copy = -1;
	if (atom && atom->atom->arg == ATOM_ARG_FUNCTION && !strcmp(atom->atom->name, "enter") &&
	    cur->ev->kind == TR_EV_BREAK &&
	    cur->ev->addr != points_func_addr(r, tracer_thread_process(th), atom->slot)) {
		tc->entered_copy = atom->slot;
		tc->entered_copy_pc = cur->ev->addr;
	}
	tc->last_var = atom && atom->atom->arg == ATOM_ARG_LVALUE && atom->lhs ? atom->slot : -1;
	blocked_forget(r, NULL);
	matched[(*nmatched)++] = th;
	/* arg1..retval outside predicates: the event that ended the wait */
	r->last_ev = *cur->ev;
	r->last_event = (struct current_event){.ev = &r->last_ev};
	r->has_last_event = true;
	report_event(r, cur);
}

/* The stepper matched th: report the event it judged. */
static void matched_by_stepper(struct run *r, struct tr_thread *th, struct tr_thread **matched,
			       int *nmatched)
{
	struct current_event cur = fine_matched_event(r, th);

	matched_here(r, th, &cur, matched, nmatched);
}

/* `wait N distinct processes P`: a thread of a process that already gave
 * one of the N does not match (it runs on). */
static bool process_taken(struct run *r, struct tr_thread *th, struct tr_thread **matched,
			  int nmatched)
{
	int i;

	if (!r->stmt || r->stmt->kind != S_WAIT || !r->stmt->processes)
		return false;
	for (i = 0; i < nmatched; i++)
		if (tracer_thread_process(matched[i]) == tracer_thread_process(th))
			return true;
	return false;
}

/* A wait in progress (run_wait_for): the loop's request context. */
struct wait_state {
	const struct stmt *s;
	struct tr_thread **targets; /* NULL: a `wait`, which new threads may satisfy */
	int ntargets;
	int need;
	struct tr_thread **matched; /* in the order they matched */
	int nmatched;
	int64_t deadline; /* the statement's timeout; -1: none */
	int64_t started;  /* when it began (ms) */
};

static const char *wait_during(struct run *r, struct loop_request *req, char *buf, size_t len)
{
	char where[200], silent[512];

	(void)req;
	if (r->all_candidates) /* `continue`: the program may simply end */
		return NULL;
	run_where(r, r->stmt, where, sizeof(where));
	silent[0] = '\0';
	points_silent_watch(r, silent, sizeof(silent));
	snprintf(buf, len, "while the schedule waited at %s%s", where, silent);
	return buf;
}

/* A candidate ended before it reached the predicate. */
static enum loop_verdict exited_early(struct run *r, const struct tr_thread *th,
				      const struct tr_event *ev)
{
	char where[200], text[768], silent[512];

	run_where(r, r->stmt, where, sizeof(where));
	expr_format(r->pred, text, sizeof(text));
	silent[0] = '\0';
	points_silent_watch(r, silent, sizeof(silent));
	/* A server killed under a schedule: say so, not just "exited". */
	if (WIFSIGNALED(ev->status))
		report_outcome(r, OUTCOME_UNREALIZABLE,
			       "%s was killed by %s before reaching '%s' (%s)%s",
			       tracer_thread_name(th), sigabbrev_np(WTERMSIG(ev->status)), text,
			       where, silent);
	else
		report_outcome(r, OUTCOME_UNREALIZABLE, "%s exited before reaching '%s' (%s)%s",
			       tracer_thread_name(th), text, where, silent);
	return LOOP_STOP;
}

/* A call that returns at once, with no sleep an interrupt could end with
 * EINTR: a thread's start (robust list, rseq, signal mask), memory. */
static bool returns_at_once(long nr)
{
	static const long quick[] = {TR_SYS_rt_sigprocmask, TR_SYS_set_robust_list,
				     TR_SYS_rseq,	    TR_SYS_mmap,
				     TR_SYS_munmap,	    TR_SYS_mprotect,
				     TR_SYS_madvise,	    TR_SYS_brk,
				     TR_SYS_gettid,	    TR_SYS_getpid,
				     TR_SYS_sigaltstack,    TR_SYS_clock_gettime};
	size_t i;

	for (i = 0; i < sizeof(quick) / sizeof(quick[0]); i++)
		if (quick[i] == nr)
			return true;
	return false;
}

/*
 * A serialized replay's target at a system call's entry (entry_blocks): a
 * timed futex wait of libc's that would sleep ends the step blocked there,
 * held at the entry as the search's step ended (serial.c's
 * syscall_entered), and times out when it runs again (wakes_times_out_now).
 * Let into the call, a wait of a millisecond timed out by itself before
 * two samples of its state saw it asleep, and the thread ran on past the
 * step: the schedules of --early-timeouts did not replay.  Other futex
 * calls are watched on; a wait of the program's own goes into its call,
 * where the replay's wakes reach it (wakes.c; a timed one may then race
 * its timeout, a limit docs/test.md states), and so does an untimed one,
 * which sleeps until woken; a call that may sleep ends the watching, as
 * in the search's step (an interrupt answered at its exit would end an
 * epoll_wait with EINTR), unless a wake may be owed to a held waiter
 * (wakes_resume_on), and calls that return at once, which a thread makes
 * as it starts, keep it.
 */
static enum loop_verdict entry_stop(struct run *r, struct tr_thread *th, struct wait_state *ws)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	enum flow flow;
	bool again;

	if (regs->orig_rax != TR_SYS_futex) {
		if (returns_at_once((long)regs->orig_rax))
			tracer_resume_syscalls(th);
		else
			wakes_resume_on(r, th);
		return LOOP_AGAIN;
	}
	if (!futex_entry_sleeps(th)) {
		tracer_resume_syscalls(th);
		return LOOP_AGAIN;
	}
	if (regs->r10 == 0 || futex_wait_maker(r, th) != WAIT_LIBC) {
		wakes_resume_on(r, th);
		return LOOP_AGAIN;
	}
	flow = blocked_at_entry(r, ws->s, th, &again);
	if (flow == FLOW_STOP)
		return LOOP_STOP;
	return again ? LOOP_AGAIN : LOOP_DONE;
}

/* Judge one stop against the predicate being waited for. */
static enum loop_verdict judge_stop(struct run *r, const struct tr_event *ev, struct wait_state *ws)
{
	struct tr_thread *th = ev->thread;
	struct thread_ctx *tc = run_thread(r, th);
	struct current_event cur = {.ev = ev};
	bool holds = false;
	int rc;

	if (ev->kind == TR_EV_START && !ws->targets && (tc->bound < 0 || r->all_candidates))
		tc->candidate = true;
	if (!tc->candidate || tc->matched) {
		run_resume(r, th);
		return LOOP_AGAIN;
	}
	r->stops++;
	if (ev->kind == TR_EV_BREAK)
		points_note_break(r, th, ev);
	if (ev->kind == TR_EV_SYSCALL && tc->skip_syscall_entry) {
		tc->skip_syscall_entry = false;
		tracer_resume_syscalls(th);
		return LOOP_AGAIN;
	}
	if (ev->kind == TR_EV_SYSCALL && r->entry_blocks && !r->fine_want && !r->fine_syscalls)
		return entry_stop(r, th, ws);
	if (r->fine_want) {
		rc = fine_settle(r, th);
		if (rc)
			goto fine_matched;
	}
	if (run_predicate_holds(r, &cur, &holds) < 0)
		return LOOP_STOP;
	if (holds && process_taken(r, th, ws->matched, ws->nmatched))
		holds = false;
	if (holds && r->tap) { /* a profile: note it, and on */
		tap_note(r, &cur);
		holds = false;
	}
	if (holds) {
		matched_here(r, th, &cur, ws->matched, &ws->nmatched);
		return LOOP_AGAIN;
	}
	if (ev->kind == TR_EV_EXIT && ws->targets)
		return exited_early(r, th, ev);
	if (ev->kind == TR_EV_EXIT) {
		run_resume(r, th);
		return LOOP_AGAIN;
	}
	rc = run_move_candidate(r, th);
	if (!rc)
		return LOOP_AGAIN;
fine_matched:
	if (rc < 0)
		return LOOP_STOP;
	matched_by_stepper(r, th, ws->matched, &ws->nmatched);
	return LOOP_AGAIN;
}

static enum loop_verdict wait_event(struct run *r, const struct tr_event *ev,
				    struct loop_request *req)
{
	struct wait_state *ws = req->ctx;
	enum loop_verdict v = judge_stop(r, ev, ws);

	if (v == LOOP_AGAIN && ws->nmatched >= ws->need)
		return LOOP_DONE;
	req->deadline_ms = blocked_poll_deadline(r, ws->ntargets > 0, ws->started, ws->deadline);
	return v;
}

static void capture_kernel_states(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t) {
		struct thread_ctx *tc = run_thread(r, th);

		tracer_describe_kernel_state(th, tc->kernel_state, sizeof(tc->kernel_state));
		if (strcmp(tc->kernel_state, "held") == 0)
			tc->kernel_state[0] = 0;
		else if (strncmp(tc->kernel_state, "blocked", 7) == 0)
			blocked_describe(r, th, tc->kernel_state, sizeof(tc->kernel_state));
	}
}

void run_timed_out(struct run *r, const struct stmt *s, int matched, int need)
{
	char where[256], text[256], silent[512], who[64];

	run_where(r, s, where, sizeof(where));
	if (s->pred)
		expr_format(s->pred, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "the end of this statement");
	capture_kernel_states(r);
	tracer_stop_all(r->t);
	silent[0] = '\0';
	points_silent_watch(r, silent, sizeof(silent));
	/* A wait for several threads that some reached: how many, of how many */
	if (matched > 0 && need > matched)
		snprintf(who, sizeof(who), "only %d of the %d threads it needs", matched, need);
	else
		snprintf(who, sizeof(who), "no thread");
	report_outcome(r, OUTCOME_UNREALIZABLE,
		       "%s reached '%s' within %ld ms (%s)%s; where the threads were:", who, text,
		       (long)r->timeout_ms, where, silent);
	report_threads(r);
}

void run_interrupted(struct run *r, int signo)
{
	if (r->interactive) {
		tracer_stop_all(r->t);
		report_outcome(r, OUTCOME_ERROR, "interrupted by %s; every thread is held",
			       sigabbrev_np(signo));
		return;
	}
	report_outcome(r, OUTCOME_ERROR, "interrupted by %s; %s", sigabbrev_np(signo),
		       r->launched ? "the program was killed"
				   : "detached, and the process keeps running");
}

static void clear_wait_marks(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t) {
		struct thread_ctx *tc = run_thread(r, th);

		tc->candidate = false;
		tc->matched = false;
		tc->nframes = 0;
	}
	r->fine_want = 0;
	r->fine_syscalls = false;
}

/* Set a candidate going.  Under the stepper it may match where it stands
 * (an access of its last instruction that the last wait left pending). */
static int start_candidate(struct run *r, struct tr_thread *th, struct tr_thread **matched,
			   int *nmatched)
{
	int rc = run_move_candidate(r, th);

	if (rc > 0)
		matched_by_stepper(r, th, matched, nmatched);
	return rc < 0 ? -1 : 0;
}

/* Targets that blocked and were woken while stopped (blocked.c) go on. */
static int restart_targets(struct run *r, struct tr_thread **targets, int n,
			   struct tr_thread **matched, int *nmatched)
{
	int i;

	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, targets[i]);

		if (tc->matched || !tracer_thread_held(targets[i]))
			continue;
		tc->candidate = true;
		tc->sampled = false;
		/* one that woke into an event of its own is judged first */
		if (!tracer_event_pending(targets[i]) &&
		    start_candidate(r, targets[i], matched, nmatched) < 0)
			return -1;
	}
	return 0;
}

/* The deadline of a wait: a blocked-poll tick (blocked.c), or its
 * timeout. */
static enum loop_verdict wait_deadline(struct run *r, struct loop_request *req)
{
	struct wait_state *ws = req->ctx;
	bool again = false;
	enum flow flow;

	if (req->deadline_ms == ws->deadline) {
		run_timed_out(r, ws->s, ws->nmatched, ws->need);
		return LOOP_STOP;
	}
	assert(ws->ntargets > 0); /* only a `run` polls for blocked targets */
	if (blocked_targets(r, ws->targets, ws->ntargets)) {
		flow = blocked_end(r, ws->s, ws->targets, ws->ntargets, &again);
		if (!again)
			return flow == FLOW_STOP ? LOOP_STOP : LOOP_DONE;
		if (restart_targets(r, ws->targets, ws->ntargets, ws->matched, &ws->nmatched) < 0)
			return LOOP_STOP;
		if (ws->nmatched >= ws->need)
			return LOOP_DONE;
	}
	req->deadline_ms = blocked_poll_deadline(r, ws->ntargets > 0, ws->started, ws->deadline);
	return LOOP_AGAIN;
}

/* Does pred end at `blocked` (alone, or in an ||)? */
static bool takes_blocked(const struct expr *pred)
{
	if (!pred)
		return false;
	if (pred->kind == E_BINARY && pred->op == T_OROR)
		return takes_blocked(pred->lhs) || takes_blocked(pred->rhs);
	return pred->kind == E_EVENT && pred->atom == atoms_find("blocked");
}

/* Mark the threads that may satisfy the wait, and arm its points. */
static int prepare_wait(struct run *r, struct wait_state *ws)
{
	struct tr_thread *th;
	int i;

	r->stmt = ws->s;
	tr_for_each_thread(th, r->t)
		if (!tracer_thread_exited(th) && !ws->targets &&
		    (run_thread(r, th)->bound < 0 || r->all_candidates))
			run_thread(r, th)->candidate = true;
	for (i = 0; i < ws->ntargets; i++)
		run_thread(r, ws->targets[i])->candidate = true;
	r->targets = ws->targets;
	r->ntargets = ws->ntargets;
	r->outside_blocks = r->serial && takes_blocked(ws->s->pred);
	fine_plan(r, ws->s->pred);
	return points_arm(r, ws->s->pred);
}

/* Set the targets, the free threads and (for a wait) the stepper's
 * candidates going; some may match where they stand. */
static int start_wait(struct run *r, struct wait_state *ws)
{
	struct tr_thread *th;
	int i;

	for (i = 0; i < ws->ntargets; i++) {
		points_seed_frames(r, ws->targets[i]);
		tracer_pin(ws->targets[i], true);
		/* one with news of its own (a thread bound before its start
		 * event came) is judged at that event, not set going past it */
		if (!tracer_event_pending(ws->targets[i]) &&
		    start_candidate(r, ws->targets[i], ws->matched, &ws->nmatched) < 0)
			return -1;
	}
	/* `continue` lets every thread go: under the stepper when it
	 * decodes (below), for a plain resume would let the accesses right
	 * after the last stop go unseen */
	for (th = tracer_threads(r->t); r->all_candidates && th; th = tracer_thread_next(th))
		if (!tracer_event_pending(th) && !(r->fine_want && !ws->targets))
			run_resume(r, th);
	run_release_free(r);
	for (th = tracer_threads(r->t); r->fine_want && !ws->targets && th;
	     th = tracer_thread_next(th)) {
		struct thread_ctx *tc = run_thread(r, th);

		if (!tc->candidate || tc->matched || tracer_event_pending(th))
			continue;
		/* A free thread still running from the last statement would
		 * make its accesses unseen until it happened to stop: it is
		 * stopped, and its stop brings it under the stepper. */
		if (tracer_thread_running(th) && tracer_interrupt(th) < 0)
			continue; /* it is exiting */
		if (tracer_thread_held(th) &&
		    start_candidate(r, th, ws->matched, &ws->nmatched) < 0)
			return -1;
	}
	for (i = 0; i < ws->ntargets; i++) {
		run_thread(r, ws->targets[i])->blocked = false;
		run_thread(r, ws->targets[i])->sampled = false;
	}
	return 0;
}

/*
 * Release targets (or, with no targets, every unbound thread) and wait until
 * `need` of them satisfy the predicate.  Matched threads are stored in
 * matched[] in the order they matched, and are held.
 */
enum flow run_wait_for(struct run *r, const struct stmt *s, struct tr_thread **targets,
		       int ntargets, int need, struct tr_thread **matched)
{
	struct wait_state ws = {s,
				targets,
				ntargets,
				need,
				matched,
				0,
				r->no_deadline ? -1 : tracer_now_ms() + r->timeout_ms,
				tracer_now_ms()};
	struct loop_request req = {.on_event = wait_event,
				   .on_deadline = wait_deadline,
				   .during = wait_during,
				   .ctx = &ws};
	enum flow flow = FLOW_STOP;

	r->entry_blocks =
	    r->serial && !run_searching_serially(r) && ntargets == 1 && takes_blocked(s->pred);
	if (prepare_wait(r, &ws) < 0 || start_wait(r, &ws) < 0)
		goto out;
	flow = FLOW_NEXT;
	if (ws.nmatched < need) {
		req.deadline_ms = blocked_poll_deadline(r, ntargets > 0, ws.started, ws.deadline);
		flow = loop_run(r, &req);
	}
out:
	r->entry_blocks = false;
	points_disarm(r);
	clear_wait_marks(r);
	r->targets = NULL;
	r->ntargets = 0;
	return flow;
}

/* Room for n threads, or an error outcome. */
static struct tr_thread **thread_array(struct run *r, const struct stmt *s, int64_t n)
{
	struct tr_thread **a = n >= 0 && n < INT_MAX ? calloc((size_t)n + 1, sizeof(*a)) : NULL;
	char where[256];

	if (!a) {
		run_where(r, s, where, sizeof(where));
		report_outcome(r, OUTCOME_ERROR, "cannot wait for %lld threads: %s (%s)",
			       (long long)n, n < INT_MAX ? "out of memory" : "too many", where);
	}
	return a;
}

static enum flow exec_wait(struct run *r, const struct stmt *s)
{
	struct tr_thread **matched = thread_array(r, s, s->count);
	int i, need = (int)s->count;

	if (!matched)
		return FLOW_STOP;
	if (run_wait_for(r, s, NULL, 0, need, matched) == FLOW_STOP) {
		free(matched);
		return FLOW_STOP;
	}
	for (i = 0; i < s->n_names && i < need; i++) {
		int var = run_var(r, s->names[i]);

		if (var >= 0)
			run_bind(r, var, matched[i]);
	}
	/* `wait any P` without names: the thread was only waited for. */
	for (i = s->n_names; i < need; i++)
		run_resume(r, matched[i]);
	free(matched);
	return FLOW_NEXT;
}

int run_var(struct run *r, const char *name)
{
	int i;

	for (i = 0; i < r->nbindings; i++)
		if (strcmp(r->pol->threads[i], name) == 0)
			return i;
	return -1;
}

const char *run_var_of(struct run *r, struct tr_thread *th)
{
	int var = run_thread(r, th)->bound;

	return var >= 0 ? r->pol->threads[var] : NULL;
}

void run_vars_of(struct run *r, struct tr_thread *th, char *buf, size_t len)
{
	size_t n = 0;
	int var;

	assert(len > 0);
	buf[0] = '\0';
	for (var = 0; var < r->nbindings && n < len; var++)
		if (r->bindings[var] == th)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
					      r->pol->threads[var]);
}

struct tr_thread *run_binding(struct run *r, const char *name)
{
	int var = run_var(r, name);

	return var >= 0 ? r->bindings[var] : NULL;
}

/* The release that let name's thread go, if nothing bound it since. */
static const struct stmt *released_var(const struct run *r, const char *name)
{
	int var;

	for (var = 0; var < r->nbindings; var++)
		if (strcmp(r->pol->threads[var], name) == 0)
			return r->released_by[var];
	return NULL;
}

void run_report_unbound(struct run *r, const struct stmt *s, const char *name)
{
	char where[256];

	run_where(r, s, where, sizeof(where));
	if (released_var(r, name))
		report_outcome(r, OUTCOME_ERROR,
			       "thread %s names no thread: 'release' at line %d let its thread go; "
			       "bind it again by its stable name, thread %s = pN.tM (%s)",
			       name, released_var(r, name)->loc.line, name, where);
	else
		report_outcome(r, OUTCOME_UNREALIZABLE, "thread %s was never bound (%s)", name,
			       where);
}

/* Every thread s names, bound and not ended; NULL (outcome reported) if
 * one is not. */
static enum flow run_targets(struct run *r, const struct stmt *s, struct tr_thread **targets)
{
	char where[256];
	int i;

	for (i = 0; i < s->n_names; i++) {
		targets[i] = run_binding(r, s->names[i]);
		if (targets[i] && !tracer_thread_exited(targets[i]) &&
		    tracer_thread_last_event(targets[i]) != TR_EV_EXIT)
			continue;
		if (!targets[i]) {
			run_report_unbound(r, s, s->names[i]);
			return FLOW_STOP;
		}
		run_where(r, s, where, sizeof(where));
		report_outcome(r, OUTCOME_UNREALIZABLE, "thread %s (%s) has already ended (%s)",
			       s->names[i], tracer_thread_name(targets[i]), where);
		return FLOW_STOP;
	}
	return FLOW_NEXT;
}

static enum flow exec_run(struct run *r, const struct stmt *s)
{
	struct tr_thread **targets = thread_array(r, s, s->n_names);
	struct tr_thread **matched = thread_array(r, s, s->n_names);
	int n = s->n_names;
	enum flow flow = FLOW_STOP;

	if (!targets || !matched || run_targets(r, s, targets) == FLOW_STOP)
		goto out;
	if (n == 1)
		r->last_run = targets[0];
	flow = run_wait_for(r, s, targets, n, n, matched);
out:
	free(targets);
	free(matched);
	return flow;
}

static int eval_condition(struct run *r, const struct expr *e, bool *out)
{
	char err[1024];
	struct eval_ctx c = points_eval_ctx(r, run_main_process(r), err, sizeof(err));
	int64_t v;

	if (eval_int(&c, e, &v) < 0) {
		report_outcome(r, OUTCOME_ERROR, "%s", err);
		return -1;
	}
	if (r->abandoned) {
		report_outcome(r, OUTCOME_INFEASIBLE, "this run belongs to another shard");
		return -1;
	}
	*out = v != 0;
	return 0;
}

static void print_variables(struct run *r, const struct expr *e);

static int print_operand(const struct expr *e, void *r)
{
	print_variables(r, e);
	return 0;
}

static void print_variables(struct run *r, const struct expr *e)
{
	char err[256], text[128];
	struct eval_ctx c;
	int64_t v;

	if (!e || !r->opt->report)
		return;
	if (e->kind == E_NAME || e->kind == E_MEMBER || e->kind == E_ARROW || e->kind == E_INDEX) {
		/* a call's field too: a typestate schedule's assert on retval */
		if (e->kind == E_NAME && e->ref != REF_VAR && e->ref != REF_FIELD)
			return;
		c = points_eval_ctx(r, run_main_process(r), err, sizeof(err));
		expr_format(e, text, sizeof(text));
		if (eval_int(&c, e, &v) == 0)
			fprintf(r->opt->report, "  %s = %ld\n", text, (long)v);
		return;
	}
	expr_operands(e, print_operand, r);
}

static enum flow exec_assert(struct run *r, const struct stmt *s)
{
	char text[256], where[256];
	bool ok;

	if (eval_condition(r, s->cond, &ok) < 0)
		return FLOW_STOP;
	if (ok)
		return FLOW_NEXT;
	expr_format(s->cond, text, sizeof(text));
	run_where(r, s, where, sizeof(where));
	if (r->interactive) {
		/* the shell's check of a condition now: a failed command, and
		 * the session goes on (it is no bug of the program's, and
		 * nothing of the program's ended) */
		fprintf(r->opt->report, "the assertion is false: %s\n", text);
		print_variables(r, s->cond);
		return FLOW_STOP;
	}
	report_outcome(r, OUTCOME_BUG, "assertion failed at %s: assert %s", where, text);
	print_variables(r, s->cond);
	return FLOW_STOP;
}

/* A thread may be bound to several variables (`thread T = choose(A, B)`
 * makes T an alias); it is free once none refers to it. */
static int any_binding_of(struct run *r, struct tr_thread *th)
{
	int var;

	for (var = 0; var < r->nbindings; var++)
		if (r->bindings[var] == th)
			return var;
	return -1;
}

static void forget_binding(struct run *r, int var)
{
	struct tr_thread *old = r->bindings[var];

	r->bindings[var] = NULL;
	if (old)
		run_thread(r, old)->bound = any_binding_of(r, old);
}

void run_bind(struct run *r, int var, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	forget_binding(r, var);
	r->bindings[var] = th;
	r->released_by[var] = NULL;
	tc->bound = var;
	if (tc->primary < 0)
		tc->primary = var;
	tracer_pin(th, true);
}

void run_unbind(struct run *r, int var)
{
	struct tr_thread *th = r->bindings[var];

	if (!th)
		return;
	forget_binding(r, var);
	if (run_thread(r, th)->bound >= 0)
		return;
	tracer_pin(th, false);
	run_resume(r, th);
}

static enum flow exec_release(struct run *r, const struct stmt *s)
{
	int i, var;

	for (var = 0; var < r->nbindings; var++) {
		bool named = s->all;

		for (i = 0; !named && i < s->n_names; i++)
			named = strcmp(s->names[i], r->pol->threads[var]) == 0;
		if (!named)
			continue;
		if (r->bindings[var])
			r->released_by[var] = s;
		run_unbind(r, var);
	}
	return FLOW_NEXT;
}

static bool stop_requested(struct run *r)
{
	int signo = tracer_stop_signal(false);

	if (!signo)
		return false;
	run_interrupted(r, signo);
	return true;
}

/* One more turn of a loop.  Waits notice Ctrl-C themselves; loops that
 * never wait (a `for` of lets, nested repeats) must too, and are counted
 * together: nested loops of 200 turns each never reached a count of 256. */
static bool loop_turn_stopped(struct run *r)
{
	return (++r->loop_turns & 255) == 0 && stop_requested(r);
}

static enum flow exec_loop(struct run *r, const struct stmt *s)
{
	int64_t i;
	bool go = true;

	for (i = 0; s->kind == S_REPEAT ? i < s->count : go; i++) {
		if (s->kind == S_WHILE && eval_condition(r, s->cond, &go) < 0)
			return FLOW_STOP;
		if (!go)
			break;
		if (exec_block(r, s->body) == FLOW_STOP || loop_turn_stopped(r))
			return FLOW_STOP;
	}
	return FLOW_NEXT;
}

/* The shell adds thread variables and points as it goes. */
static int grow_bindings(struct run *r)
{
	const struct stmt **released;
	struct tr_thread **grown;
	int i;

	if (r->pol->nthreads <= r->nbindings)
		return 0;
	grown = realloc(r->bindings, sizeof(*grown) * (size_t)r->pol->nthreads);
	if (!grown)
		return -1;
	r->bindings = grown;
	released = realloc(r->released_by, sizeof(*released) * (size_t)r->pol->nthreads);
	if (!released)
		return -1;
	r->released_by = released;
	for (i = r->nbindings; i < r->pol->nthreads; i++) {
		grown[i] = NULL;
		released[i] = NULL;
	}
	r->nbindings = r->pol->nthreads;
	return 0;
}

static enum flow exec_for(struct run *r, const struct stmt *s)
{
	char err[1024];
	struct eval_ctx c = points_eval_ctx(r, run_main_process(r), err, sizeof(err));
	int slot = run_local_slot(r, s->names[0]);
	int64_t lo, hi, i;

	if (slot < 0 || eval_int(&c, s->lo, &lo) < 0 || eval_int(&c, s->hi, &hi) < 0) {
		report_outcome(r, OUTCOME_ERROR, "%s", err);
		return FLOW_STOP;
	}
	for (i = lo; i <= hi; i++) {
		r->locals[slot] = i;
		if (exec_block(r, s->body) == FLOW_STOP || loop_turn_stopped(r))
			return FLOW_STOP;
		if (i == hi)
			break; /* i++ would overflow at INT64_MAX, and start again */
	}
	return FLOW_NEXT;
}

static enum flow dispatch(struct run *r, const struct stmt *s);

static enum flow exec_stmt(struct run *r, const struct stmt *s)
{
	enum flow flow;

	if (grow_bindings(r) < 0)
		return FLOW_STOP;
	r->ended_blocked = false;
	run_record(r, s);
	flow = dispatch(r, s);
	run_record_end(r, s);
	return flow;
}

static enum flow dispatch(struct run *r, const struct stmt *s)
{
	bool cond;

	switch (s->kind) {
	case S_TIMEOUT:
		r->timeout_ms = s->timeout_ms;
		return FLOW_NEXT;
	case S_WAIT:
		return exec_wait(r, s);
	case S_RUN:
		return exec_run(r, s);
	case S_IF:
		if (eval_condition(r, s->cond, &cond) < 0)
			return FLOW_STOP;
		return exec_block(r, cond ? s->body : s->else_body);
	case S_WHILE:
	case S_REPEAT:
		return exec_loop(r, s);
	case S_ASSERT:
		return exec_assert(r, s);
	case S_RELEASE:
		return exec_release(r, s);
	case S_STEP:
		return exec_step(r, s);
	case S_NEXT:
		return exec_next(r, s);
	case S_FINISH:
		return exec_finish(r, s);
	case S_HOLD:
		return exec_hold(r, s);
	case S_BIND:
		return exec_bind(r, s);
	case S_CHOOSE_THREAD:
		return exec_choose_thread(r, s);
	case S_ASSUME:
		return exec_assume(r, s);
	case S_LET:
		return exec_let(r, s);
	case S_FOR:
		return exec_for(r, s);
	case S_SERIAL:
		return exec_serial(r, s);
	}
	return FLOW_NEXT;
}

static enum flow exec_block(struct run *r, const struct stmt *s)
{
	for (; s; s = s->next)
		if (exec_stmt(r, s) == FLOW_STOP)
			return FLOW_STOP;
	return FLOW_NEXT;
}

static void release_everything(struct run *r)
{
	struct tr_thread *th;
	int var;

	points_flush(r);
	r->serial = false; /* the end of the schedule lets every thread go */
	for (var = 0; var < r->nbindings; var++)
		run_unbind(r, var);
	tr_for_each_thread(th, r->t)
		if (!tracer_event_pending(th))
			run_resume(r, th);
}

static enum loop_verdict resume_any(struct run *r, const struct tr_event *ev,
				    struct loop_request *req)
{
	(void)req;
	run_resume(r, ev->thread);
	return LOOP_AGAIN;
}

#define DRAIN_POLL_MS 10 /* how often a drain looks for a hung program */
/* How long every thread must sleep, unchanged, for the program to hang: a
 * minimiser's replay is judged at once; a plain run allows for a thread
 * that is between two calls of a long wait. */
#define STUCK_REPLAY_MS 50
#define STUCK_RUN_MS	1000

struct drain_state {
	int64_t until; /* the drain's deadline, -1: none */
	int64_t stuck_since;
};

static enum loop_verdict drain_too_long(struct run *r, struct loop_request *req)
{
	struct drain_state *d = req->ctx;
	int64_t now = tracer_now_ms();

	if (d->until >= 0 && now >= d->until) {
		r->no_drain = true;
		report_outcome(r, OUTCOME_UNREALIZABLE,
			       "the program did not end within %" PRId64
			       " ms of the schedule's end",
			       r->opt->drain_ms);
		return LOOP_STOP;
	}
	/* A minimiser's replay (a bounded drain) that hangs dropped a step
	 * it needed.  A plain run that hangs is a deadlock the schedule led
	 * to; one whose threads wait for the outside (a driver that writes
	 * to a pipe) is not stuck, and is waited for. */
	if (r->outcome != OUTCOME_BUG &&
	    blocked_program_stuck(r, &d->stuck_since,
				  r->opt->drain_ms > 0 ? STUCK_REPLAY_MS : STUCK_RUN_MS)) {
		if (r->opt->drain_ms > 0) {
			r->no_drain = true;
			report_outcome(r, OUTCOME_UNREALIZABLE,
				       "the program hangs after the schedule's end: every thread "
				       "sleeps and none can wake the others");
		} else {
			report_hang_after_schedule(r);
		}
		return LOOP_STOP;
	}
	req->deadline_ms =
	    d->until >= 0 && d->until < now + DRAIN_POLL_MS ? d->until : now + DRAIN_POLL_MS;
	return LOOP_AGAIN;
}

/* After the schedule: let a launched program run to its end, still
 * watching for crashes and, with --fail-on-exit, a bad exit status. */
/* After a bug the program is let run to see how it ends, but for the
 * schedule's timeout at most: a violation may leave it hung (a lock in
 * freed memory), and the verdict is already in.  With a bounded drain (the
 * minimiser's replays), a program in which every thread sleeps for the
 * program (a deadlock a dropped step made) ends the drain at once. */
static void drain(struct run *r)
{
	struct drain_state d = {.until =
				    r->opt->drain_ms > 0 ? tracer_now_ms() + r->opt->drain_ms : -1,
				.stuck_since = -1};
	struct loop_request req = {.deadline_ms = tracer_now_ms() + DRAIN_POLL_MS,
				   .on_event = resume_any,
				   .on_deadline = drain_too_long,
				   .drain = true,
				   .ctx = &d};

	if (r->outcome == OUTCOME_BUG && r->finished)
		d.until = tracer_now_ms() + r->timeout_ms;

	loop_run(r, &req);
}

static void free_contexts(struct run *r)
{
	struct tr_thread *th;
	struct tr_process *p;

	tr_for_each_thread(th, r->t) {
		if (tracer_thread_user(th)) {
			free(run_thread(r, th)->frames);
			free(run_thread(r, th)->stack_funcs);
		}
		free(tracer_thread_user(th));
		tracer_thread_set_user(th, NULL);
	}
	for (p = tracer_processes(r->t); p; p = tracer_process_next(p))
		exec_happened(r, p);
}

struct run *run_new(struct policy *pol, struct tracer *t, const struct engine_options *opt,
		    bool launched)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->pol = pol;
	r->program_stderr = -1;
	r->t = t;
	r->opt = opt;
	r->launched = launched;
	r->sched = pol->sched;
	r->timeout_ms = opt->timeout_ms > 0 ? opt->timeout_ms : DEFAULT_TIMEOUT_MS;
	r->symbol_cache = opt->symbol_cache;
	r->t0_ms = tracer_now_ms();
	return r;
}

int run_statements(struct run *r, struct schedule *sched)
{
	r->sched = sched;
	return exec_block(r, sched->body) == FLOW_NEXT ? 0 : -1;
}

/* Has another thread of th's process called exit_group (held at its exit)?
 * Then th dies with the process: not a thread to run to its end (its
 * death may already have been seen while another ran, and it would be
 * waited for until the timeout). */
static bool group_exiting(struct run *r, struct tr_thread *th)
{
	struct tr_thread *o;

	tr_for_each_thread(o, r->t)
		if (o != th && tracer_thread_process(o) == tracer_thread_process(th) &&
		    tracer_thread_held(o) && tracer_thread_last_event(o) == TR_EV_EXIT &&
		    tracer_regs(o)->orig_rax == TR_SYS_exit_group)
			return true;
	return false;
}

/* The first (end_order > 0) or last thread, in creation order, that a
 * serial run holds at its start unbound; NULL: none. */
static struct tr_thread *unbound_at_start(struct run *r, int end_order)
{
	struct tr_thread *th, *found = NULL;

	tr_for_each_thread(th, r->t) {
		if (!serial_keeps(r, th) || !tracer_thread_held(th) || tracer_thread_exited(th) ||
		    group_exiting(r, th))
			continue;
		found = th;
		if (end_order > 0)
			break;
	}
	return found;
}

/* The bound threads in order, each until it exits or blocks, and taken
 * out of order[].  A thread held in a timed wait that nothing ended stays
 * for the last pass (timed_out), as in the search a timeout is the last
 * thing to happen: run first, it would time out before the threads that
 * may end its wait had their turn. */
static enum flow finish_in_order(struct run *r, const struct stmt *end, struct tr_thread **order,
				 int n, int end_order, bool timed_out)
{
	struct tr_thread *matched[1];
	int i;

	for (i = 0; i < n && !r->finished; i++) {
		struct tr_thread **th = &order[end_order > 0 ? i : n - 1 - i];

		/* a thread held at its vfork waits for the child: after it */
		if (!*th || (!timed_out &&
			     (wakes_times_out_now(r, *th) || tracer_thread_waits_for_vfork(*th))))
			continue;
		if (tracer_thread_held(*th) && !tracer_thread_exited(*th) &&
		    tracer_thread_last_event(*th) != TR_EV_EXIT && !group_exiting(r, *th) &&
		    run_wait_for(r, end, th, 1, 1, matched) == FLOW_STOP)
			return FLOW_STOP;
		*th = NULL;
	}
	return r->finished ? FLOW_STOP : FLOW_NEXT;
}

/*
 * The end of the schedule with the bound threads let go one at a time,
 * each until it exits or blocks, in binding order (end_order > 0) or its
 * reverse.  A replay that reproduces a bug this way and with everything
 * released at once does not depend on how the released threads race,
 * which is what minimisation needs to know before it drops a step.
 */
static void finish_serially(struct run *r, int end_order)
{
	struct expr exit_atom = {.kind = E_EVENT, .atom = atoms_find("exit")},
		    blocked_atom = {.kind = E_EVENT, .atom = atoms_find("blocked")};
	struct expr pred = {
	    .kind = E_BINARY, .op = T_OROR, .lhs = &exit_atom, .rhs = &blocked_atom};
	struct stmt end = {.kind = S_RUN, .pred = &pred};
	struct tr_thread **order = calloc((size_t)r->nbindings + 1, sizeof(*order)), *matched[1];
	int n = 0, var;

	if (!order) {
		report_outcome(r, OUTCOME_ERROR, "out of memory");
		return;
	}
	for (var = 0; var < r->nbindings; var++)
		if (r->bindings[var] && tracer_thread_held(r->bindings[var]) &&
		    run_thread(r, r->bindings[var])->bound == var)
			order[n++] = r->bindings[var];
	if (finish_in_order(r, &end, order, n, end_order, false) == FLOW_NEXT) {
		/* then the threads the schedule never bound, still at their start
		 * (serial_keeps), one at a time in creation order (or its reverse):
		 * released together they would race (lazy01_bad's end) */
		while (!r->finished) {
			struct tr_thread *th = unbound_at_start(r, end_order);

			if (!th || run_wait_for(r, &end, &th, 1, 1, matched) == FLOW_STOP)
				break;
		}
		finish_in_order(r, &end, order, n, end_order, true);
	}
	free(order);
}

/* A serial schedule ends as it ran, one thread at a time (binding order),
 * so that its replay does not depend on how released threads race. */
static int end_order_of(const struct run *r)
{
	return r->opt->end_order ? r->opt->end_order : r->serial ? 1 : 0;
}

/* Leave the program: a launched one runs to its end, still watched for
 * crashes and, with --fail-on-exit, a bad exit status; an attached one is
 * detached.  Reports "completed" unless something else was reported. */
void run_finish(struct run *r)
{
	int end_order = end_order_of(r);

	if (r->launched) {
		if (!r->finished && end_order)
			finish_serially(r, end_order);
		if (!r->finished || (r->outcome == OUTCOME_BUG && !r->no_drain)) {
			release_everything(r);
			drain(r);
		}
		if (r->exit_status)
			report_outcome(r, OUTCOME_COMPLETED,
				       "the schedule ran to its end and the program exited with "
				       "status %d%s",
				       r->exit_status,
				       r->opt->fail_on_exit ? " (allowed by --ok-exit)"
							    : " (--fail-on-exit makes that a bug)");
		else
			report_outcome(
			    r, OUTCOME_COMPLETED,
			    "the schedule ran to its end and the program exited normally");
		tracer_kill_launched(r->t);
		return;
	}
	if (tracer_detach_all(r->t) < 0)
		report_outcome(r, OUTCOME_COMPLETED,
			       "the schedule ran to its end; a thread could not be let go cleanly "
			       "(cctrace's guardian restores it as cctrace exits), and the process "
			       "keeps running");
	else
		report_outcome(r, OUTCOME_COMPLETED,
			       "the schedule ran to its end; detached, and the process keeps "
			       "running");
}

void run_free(struct run *r)
{
	if (!r)
		return;
	/* read for a bug's report alone: not after each of a search's runs */
	if (r->opt->program_stderr && r->outcome == OUTCOME_BUG)
		*r->opt->program_stderr = stderr_tail(r->program_stderr, PROGRAM_STDERR_KEPT);
	if (r->opt->quiet_program && r->program_stderr >= 0) {
		close(r->program_stderr); /* read for a sanitizer's report only */
		r->program_stderr = -1;
	}
	stderr_forward(r->program_stderr);
	free_contexts(r);
	free(r->bindings);
	free(r->released_by);
	free(r->exec_entries);
	free(r->return_funcs);
	free(r->armed);
	free(r->lingering);
	free(r->watches);
	free(r->lingering_watches);
	free(r->decoded);
	free(r->locals);
	free(r->deferred);
	free(r->outcome_message);
	chrome_free(r);
	free(r);
}

enum engine_outcome interp_execute(struct policy *pol, struct tracer *t,
				   const struct engine_options *opt, bool launched,
				   int program_stderr)
{
	struct run *r = run_new(pol, t, opt, launched);
	enum engine_outcome o;
	pid_t driver;

	if (!r) {
		stderr_forward(program_stderr);
		return OUTCOME_ERROR;
	}
	r->program_stderr = program_stderr;
	driver = run_start_driver(r, opt->driver, false);
	run_statements(r, pol->sched);
	if (opt->before_release)
		*opt->before_release = r->finished || end_order_of(r) != 0;
	run_finish(r);
	run_stop_driver(driver);
	o = r->outcome;
	chrome_finish(r);
	if (opt->trace_json)
		engine_trace_json_outcome(
		    opt->trace_json,
		    &(struct engine_trace_outcome){.outcome = o, .message = r->outcome_message});
	if (opt->outcome_message) {
		*opt->outcome_message = r->outcome_message; /* the caller's now */
		r->outcome_message = NULL;
	}
	run_free(r);
	return o;
}
