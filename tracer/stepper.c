/*
 * stepper.c: instruction-level events (memory accesses, calls, system
 * calls) of a held thread, for an unmodified binary that gives no hook for
 * them.  The caller judges each event (tracer_step_judge); this file only
 * finds them and moves the thread on to the next one.
 *
 * A thread is never single-stepped through everything.  At each stop the
 * stepper decodes the instruction under the pc, works out where it will go
 * (the fall-through, or the target of a jump, call or return computed from
 * the registers and memory now), then decodes ahead from there through
 * straight-line code to the next instruction that can matter: one that
 * touches memory the caller wants, a call, a system call, or any control
 * transfer.  A temporary breakpoint goes there and the thread runs at full
 * speed to it.  So a stop costs one trap per interesting instruction and
 * one per branch, where single-stepping costs one per instruction.
 *
 * Memory events are reported after the access, as the debug registers
 * report them: the addresses are computed before the instruction runs (its
 * own registers may change them), kept as the thread's pending accesses,
 * and judged at its next stop, when `value` can be read, in whichever
 * wait of the caller sees that stop: they are dropped only where they go
 * stale, at a resume or single step that is not the stepper's own
 * (tracer_resume, task.c), or when the thread exits.  Calls and system
 * calls are reported before they happen, with the thread stopped on the
 * instruction.  Planned with single_step, one PTRACE_SINGLESTEP per
 * instruction replaces the breakpoints: the reference the tests compare
 * the stepper against.
 *
 * The breakpoints stay planted while the caller keeps wanting the same
 * things: a loop brings the thread back to the same few stop points, which
 * then cost no write to the target.  Every one of them is a place the
 * stepper would stop at anyway, so a thread that meets one earlier than
 * planned loses nothing.  Threads that run freely through them pay a stop
 * each, which is why at most TR_STEP_MAX_BPS stay (the oldest goes first)
 * and why they go as soon as the caller stops decoding.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <string.h>

void tracer_step_plan(struct tracer *t, unsigned want, bool single_step)
{
	struct tr_stepper *s = &t->stepper;

	if (want != s->planted_want)
		tracer_step_unplant(t);
	s->planted_want = want;
	s->want = want;
	s->single_step = single_step;
}

/* Bytes of code at pc, as many as are readable up to len. */
static size_t read_code(struct tr_process *p, uint64_t pc, uint8_t *buf, size_t len)
{
	size_t page_left = 4096 - (pc & 4095);

	if (tracer_read_code(p, pc, buf, len) == 0)
		return len;
	/* The next page may be unmapped: read to the end of this one. */
	if (page_left < len && tracer_read_code(p, pc, buf, page_left) == 0)
		return page_left;
	return 0;
}

static int peek_target(void *ctx, uint64_t addr, uint64_t *value)
{
	return tracer_read(ctx, addr, value, sizeof(*value));
}

static bool is_call(const struct dis_insn *insn)
{
	return insn->flags & DIS_F_CALL;
}

static bool transfers_control(const struct dis_insn *insn)
{
	return insn->kind != DIS_OTHER && insn->kind != DIS_SYSCALL;
}

/* Accesses of the instruction at the pc that the caller may care about,
 * pending until the thread's next stop. */
static void keep_accesses(struct tr_stepper *s, struct tr_thread *th, const struct dis_insn *insn,
			  const uint8_t *code)
{
	struct tr_step_thread *st = &th->step;
	struct dis_access all[DIS_MAX_ACCESSES];
	bool want_stack = s->want & DIS_WANT_STACK_MEM;
	int n, i;

	_Static_assert(TR_STEP_MAX_PENDING >= DIS_MAX_ACCESSES, "every access is kept");
	st->npending = 0;
	if (!(s->want & DIS_WANT_MEM))
		return;
	n = dis_accesses(insn, code, &th->regs, all, DIS_MAX_ACCESSES);
	for (i = 0; i < n; i++) {
		struct tr_step_event *ev = &st->pending[st->npending];

		if (all[i].stack && !want_stack)
			continue;
		*ev = (struct tr_step_event){
		    .kind = TR_STEP_ACCESS,
		    .pc = insn->addr,
		    .addr = all[i].addr,
		    .size = all[i].size,
		    .rw = all[i].rw,
		    .stack = all[i].stack,
		};
		/* rep movs/stos touch count elements, in the direction of DF. */
		if (all[i].count > 1) {
			uint64_t span = all[i].size * all[i].count;

			if (all[i].descending)
				ev->addr -= span - all[i].size;
			ev->span = span;
		}
		st->npending++;
	}
}

int tracer_step_settle(struct tracer *t, struct tr_thread *th, tr_step_judge judge, void *ctx)
{
	struct tr_step_thread *st = &th->step;
	struct tr_step_event pending[TR_STEP_MAX_PENDING];
	int i, n = st->npending, rc;

	(void)t;
	assert(n >= 0 && n <= TR_STEP_MAX_PENDING);
	memcpy(pending, st->pending, sizeof(pending));
	st->npending = 0;
	for (i = 0; i < n; i++) {
		struct tr_step_event *ev = &pending[i];

		ev->value = 0;
		tracer_read(th->proc, ev->addr, &ev->value, ev->size < 8 ? ev->size : 8);
		rc = judge(ctx, th, ev);
		if (rc < 0)
			return rc;
		if (rc) {
			/* Those after it are still to be judged, first thing
			 * at the next step if the thread has not moved. */
			st->npending = n - i - 1;
			memcpy(st->pending, pending + i + 1,
			       sizeof(pending[0]) * (size_t)(n - i - 1));
			st->pending_at = th->regs.rip;
			return 1;
		}
	}
	return 0;
}

/* Events that happen before the instruction: calls and system calls. */
static int judge_before(struct tr_stepper *s, struct tr_thread *th, const struct dis_insn *insn,
			const uint8_t *code, tr_step_judge judge, void *ctx)
{
	struct tr_step_event ev = {.pc = insn->addr};
	int rc;

	if ((s->want & DIS_WANT_CALL) && is_call(insn)) {
		ev.kind = TR_STEP_CALL;
		if (dis_next_pc(insn, code, &th->regs, peek_target, th->proc, &ev.target) < 0)
			ev.target = 0;
	} else if ((s->want & DIS_WANT_SYSCALL) && insn->kind == DIS_SYSCALL) {
		ev.kind = TR_STEP_SYSCALL;
		ev.sysno = (long)th->regs.rax;
	} else {
		return 0;
	}
	rc = judge(ctx, th, &ev);
	if (rc > 0) { /* not an event again for the next step */
		th->step.parked_before = insn->addr;
		th->step.parked_on_syscall = ev.kind == TR_STEP_SYSCALL;
	}
	return rc;
}

static bool planted(struct tr_stepper *s, struct tr_process *p, uint64_t addr)
{
	int i;

	for (i = 0; i < s->nbps; i++)
		if (s->bps[i].proc == p && s->bps[i].addr == addr)
			return true;
	return false;
}

/* Is a running thread of t on its way to breakpoint i? */
static bool awaited(struct tracer *t, const struct tr_step_bp *bp)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next)
		if (th->state == TR_RUNNING && th->proc == bp->proc &&
		    th->step.heading_to == bp->addr)
			return true;
	return false;
}

/* Make room for one more breakpoint: the oldest goes, unless a running
 * thread is on its way to it (removing that one would let the thread run
 * on past every access after it, unseen).  -1 if every one is awaited. */
static int make_room(struct tracer *t)
{
	struct tr_stepper *s = &t->stepper;
	int i;

	for (i = 0; i < s->nbps && awaited(t, &s->bps[i]); i++)
		;
	if (i == s->nbps)
		return -1;
	if (tracer_process_alive(s->bps[i].proc))
		tracer_break_remove(s->bps[i].proc, s->bps[i].addr);
	memmove(s->bps + i, s->bps + i + 1, sizeof(s->bps[0]) * (size_t)(s->nbps - i - 1));
	s->nbps--;
	return 0;
}

static int place_breakpoint(struct tracer *t, struct tr_process *p, uint64_t addr)
{
	struct tr_stepper *s = &t->stepper;
	char err[256];

	if (planted(s, p, addr))
		return 0;
	if (s->nbps == TR_STEP_MAX_BPS && make_room(t) < 0)
		return -1; /* the caller single-steps instead */
	if (tracer_break_insert(p, addr, err, sizeof(err)) < 0)
		return -1;
	s->bps[s->nbps].proc = p;
	s->bps[s->nbps].addr = addr;
	s->nbps++;
	return 0;
}

void tracer_step_unplant(struct tracer *t)
{
	struct tr_stepper *s = &t->stepper;
	int i;

	for (i = 0; i < s->nbps; i++)
		if (tracer_process_alive(s->bps[i].proc))
			tracer_break_remove(s->bps[i].proc, s->bps[i].addr);
	s->nbps = 0;
	s->planted_want = 0;
}

void tracer_step_unplant_idle(struct tracer *t)
{
	struct tr_stepper *s = &t->stepper;
	int i, kept = 0;

	for (i = 0; i < s->nbps; i++) {
		if (awaited(t, &s->bps[i])) {
			s->bps[kept++] = s->bps[i];
			continue;
		}
		if (tracer_process_alive(s->bps[i].proc))
			tracer_break_remove(s->bps[i].proc, s->bps[i].addr);
	}
	s->nbps = kept;
}

/* Where the instruction at the pc sends the thread, 0 if unknown. */
static uint64_t next_pc(struct tr_thread *th, const struct dis_insn *insn, const uint8_t *code)
{
	uint64_t next;

	if (!transfers_control(insn))
		return insn->addr + insn->len;
	if (dis_next_pc(insn, code, &th->regs, peek_target, th->proc, &next) < 0)
		return 0;
	return next;
}

/* The first instruction at or after from that the stepper must stop at.
 * Code does not change under a run, so the answers are cached. */
static uint64_t next_stop(struct tr_stepper *s, struct tr_process *p, uint64_t from)
{
	struct tr_scan_cache *c = &s->scan_cache[(from ^ (from >> 8)) % TR_STEP_SCAN_CACHE];
	uint8_t code[256];
	struct dis_insn stop;
	uint64_t start = from;
	size_t n;
	long off;

	if (c->proc == p && c->from == from && c->want == s->want)
		return c->stop;
	for (;;) {
		n = read_code(p, from, code, sizeof(code));
		if (n == 0)
			return 0;
		off = dis_scan(code, n, from, s->want, &stop);
		if (off < 0)
			return 0;
		if (stop.kind != DIS_INVALID) {
			*c = (struct tr_scan_cache){p, start, from + (uint64_t)off, s->want};
			return from + (uint64_t)off;
		}
		if (off == 0)
			return 0; /* undecodable: let single-stepping show it */
		from += (uint64_t)off;
	}
}

int tracer_step(struct tracer *t, struct tr_thread *th, tr_step_judge judge, void *ctx)
{
	struct tr_stepper *s = &t->stepper;
	struct tr_step_thread *st = &th->step;
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;
	uint64_t pc = th->regs.rip, next, stop;
	int rc;

	assert(th->state == TR_HELD && th->proc->tracer == t);
	if (read_code(th->proc, pc, code, sizeof(code)) == 0 ||
	    dis_decode(code, sizeof(code), pc, &insn) < 0)
		goto single_step;
	/* Accesses left over by the last step, if the thread has not moved. */
	if (st->npending && st->pending_at == pc) {
		rc = tracer_step_settle(t, th, judge, ctx);
		if (rc)
			return rc;
	}
	st->npending = 0;
	/* A call or system call the last step stopped it on was reported. */
	if (st->parked_before != pc) {
		rc = judge_before(s, th, &insn, code, judge, ctx);
		if (rc)
			return rc;
	}
	st->parked_before = 0;
	keep_accesses(s, th, &insn, code);
	/* A single step of rep movs is one element; its accesses were counted
	 * for all of them, so it runs whole, as under the stepper. */
	if (s->single_step && !(st->npending && st->pending[0].span))
		goto single_step;
	next = next_pc(th, &insn, code);
	stop = next ? next_stop(s, th->proc, next) : 0;
	if (!stop || place_breakpoint(t, th->proc, stop) < 0)
		goto single_step;
	st->heading_to = stop;
	tr_resume_stepping(th);
	return 0;
single_step:
	st->heading_to = 0;
	tr_singlestep(th);
	return 0;
}

bool tracer_step_parked_on_syscall(const struct tr_thread *th)
{
	return th->step.parked_on_syscall && th->step.parked_before == th->regs.rip;
}

void tracer_step_forget_process(struct tracer *t, struct tr_process *p)
{
	struct tr_stepper *s = &t->stepper;
	int i, kept = 0;

	for (i = 0; i < s->nbps; i++) /* the image that had them is gone */
		if (s->bps[i].proc != p)
			s->bps[kept++] = s->bps[i];
	s->nbps = kept;
	for (i = 0; i < TR_STEP_SCAN_CACHE; i++)
		if (s->scan_cache[i].proc == p)
			s->scan_cache[i].proc = NULL;
}
