/*
 * fine.c: instruction-level events (read, write, call, syscall, and
 * read(X)/write(X) that the debug registers cannot take) for threads that
 * an unmodified binary gives no hook for.
 *
 * A thread is never single-stepped through everything.  At each stop the
 * stepper decodes the instruction under the pc, works out where it will go
 * (the fall-through, or the target of a jump, call or return computed from
 * the registers and memory now), then decodes ahead from there through
 * straight-line code to the next instruction that can matter: one that
 * touches memory the predicate cares about, a call, a system call, or any
 * control transfer.  A temporary breakpoint goes there and the thread runs
 * at full speed to it.  So a stop costs one trap per interesting
 * instruction and one per branch, where single-stepping costs one per
 * instruction.
 *
 * Memory events are reported after the access, as the debug registers
 * report them: the addresses are computed before the instruction runs (its
 * own registers may change them), kept as the thread's pending accesses,
 * and judged at its next stop, when `value` can be read.  Calls and system
 * calls are reported before they happen, with the thread stopped on the
 * instruction.  `--single-step` replaces the breakpoints by one
 * PTRACE_SINGLESTEP per instruction and is the reference the tests compare
 * the stepper against.
 *
 * A predicate that names system calls and nothing else that needs decoding
 * costs less still: the thread is resumed with PTRACE_SYSCALL and stops at
 * system call entries only.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

#include <string.h>

struct plan {
	unsigned want;
	bool syscalls; /* syscall atoms */
	bool lvalues;  /* read(X)/write(X) atoms */
};

static void plan_expr(const struct expr *e, bool include_stack, bool soft_watch, struct plan *pl)
{
again:
	if (!e)
		return;
	switch (e->kind) {
	case E_EV_READ:
	case E_EV_WRITE:
		if (!e->lhs)
			pl->want |= DIS_WANT_MEM | (include_stack ? DIS_WANT_STACK_MEM : 0);
		else if (e->ival == WATCH_BY_DECODING || soft_watch)
			pl->want |= DIS_WANT_MEM;
		pl->lvalues |= e->lhs != NULL;
		return;
	case E_EV_CALL:
		pl->want |= DIS_WANT_CALL;
		return;
	case E_EV_SYSCALL:
		pl->syscalls = true;
		return;
	default:
		plan_expr(e->rhs, include_stack, soft_watch, pl);
		e = e->lhs; /* iterating: along lhs, a chain is as deep as it is long */
		goto again;
	}
}

/* Decide how the candidates of a wait on pred move. */
void fine_plan(struct run *r, const struct expr *pred)
{
	struct plan pl = {0};

	plan_expr(pred, r->opt->include_stack, r->opt->watchpoints == WATCHPOINTS_SW, &pl);
	r->fine_want = pl.want;
	r->fine_syscalls = pl.syscalls && !pl.want;
	if (pl.want && pl.syscalls)
		r->fine_want |= DIS_WANT_SYSCALL;
	/* Once decoding, every read(X)/write(X) is matched by it, and X may
	 * be a local: stack accesses are looked at too. */
	if (pl.want && pl.lvalues)
		r->fine_want |= DIS_WANT_MEM | DIS_WANT_STACK_MEM;
	if (r->fine_want != r->fine_planted_want)
		fine_unplant(r);
	r->fine_planted_want = r->fine_want;
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

/* Judge one instruction-level event; 1 if the predicate holds, and then
 * r->fine (the thread's copy of fe) and r->fine_ev describe it until the
 * caller has reported it. */
static int judge(struct run *r, struct tr_thread *th, const struct fine_event *fe)
{
	struct thread_ctx *tc = run_thread(r, th);
	bool holds = false;

	tc->judged = *fe;
	r->fine_ev = (struct tr_event){.kind = TR_EV_STEP, .thread = th, .pc = fe->pc};
	r->fine = &tc->judged;
	if (run_predicate_holds(r, &r->fine_ev, &holds) < 0) {
		r->fine = NULL;
		return -1;
	}
	if (!holds)
		r->fine = NULL;
	return holds;
}

/* Accesses of an instruction that the predicate may care about. */
static int keep_accesses(struct run *r, const struct dis_insn *insn, const uint8_t *code,
			 const struct user_regs_struct *regs, struct thread_ctx *tc)
{
	struct dis_access all[DIS_MAX_ACCESSES];
	int n, i;
	bool want_stack = r->fine_want & DIS_WANT_STACK_MEM;

	tc->npending = 0;
	if (!(r->fine_want & DIS_WANT_MEM))
		return 0;
	n = dis_accesses(insn, code, regs, all, DIS_MAX_ACCESSES);
	for (i = 0; i < n && tc->npending < FINE_MAX_PENDING; i++) {
		if (all[i].stack && !want_stack)
			continue;
		tc->pending[tc->npending] = (struct fine_event){
		    .kind = FINE_ACCESS,
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
				tc->pending[tc->npending].addr -= span - all[i].size;
			tc->pending[tc->npending].span = span;
		}
		tc->npending++;
	}
	return tc->npending;
}

/* The accesses made since the last stop, judged now that they are done.
 * Those after a match stay pending, to be judged first by the next wait. */
static int judge_pending(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);
	struct fine_event pending[FINE_MAX_PENDING];
	int i, n = tc->npending, rc;

	memcpy(pending, tc->pending, sizeof(pending));
	tc->npending = 0;
	for (i = 0; i < n; i++) {
		struct fine_event *fe = &pending[i];

		fe->value = 0;
		tracer_read(tracer_thread_process(th), fe->addr, &fe->value,
			    fe->size < 8 ? fe->size : 8);
		rc = judge(r, th, fe);
		if (rc < 0)
			return rc;
		if (rc) {
			tc->npending = n - i - 1;
			memcpy(tc->pending, pending + i + 1,
			       sizeof(pending[0]) * (size_t)(n - i - 1));
			tc->pending_at = tracer_regs(th)->rip;
			return 1;
		}
	}
	return 0;
}

/* Events that happen before the instruction: calls and system calls. */
static int judge_before(struct run *r, struct tr_thread *th, const struct dis_insn *insn,
			const uint8_t *code)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	struct fine_event fe = {.pc = insn->addr};
	struct thread_ctx *tc = run_thread(r, th);
	int rc;

	if ((r->fine_want & DIS_WANT_CALL) && is_call(insn)) {
		fe.kind = FINE_CALL;
		if (dis_next_pc(insn, code, regs, peek_target, tracer_thread_process(th),
				&fe.target) < 0)
			fe.target = 0;
	} else if ((r->fine_want & DIS_WANT_SYSCALL) && insn->kind == DIS_SYSCALL) {
		fe.kind = FINE_SYSCALL;
		fe.sysno = (long)regs->rax;
	} else {
		return 0;
	}
	rc = judge(r, th, &fe);
	if (rc > 0) { /* not an event again for the next wait */
		tc->parked_before = insn->addr;
		tc->parked_on_syscall = fe.kind == FINE_SYSCALL;
	}
	return rc;
}

/*
 * The stepper's breakpoints stay planted while waits keep decoding for the
 * same things: a loop brings the thread back to the same few stop points,
 * which then cost no write to the target.  Every one of them is a place
 * the stepper would stop at anyway, so a thread that meets one earlier
 * than planned loses nothing.  Threads that run freely through them pay a
 * stop each, which is why there are at most FINE_MAX_BPS and why they go
 * as soon as a wait stops decoding.
 */
static bool planted(struct run *r, struct tr_process *p, uint64_t addr)
{
	int i;

	for (i = 0; i < r->nfine_bps; i++)
		if (r->fine_bps[i].proc == p && r->fine_bps[i].addr == addr)
			return true;
	return false;
}

static int place_breakpoint(struct run *r, struct tr_process *p, uint64_t addr)
{
	char err[256];

	if (planted(r, p, addr))
		return 0;
	if (tracer_break_insert(p, addr, err, sizeof(err)) < 0)
		return -1;
	if (r->nfine_bps == FINE_MAX_BPS) { /* the oldest goes */
		if (tracer_process_alive(r->fine_bps[0].proc))
			tracer_break_remove(r->fine_bps[0].proc, r->fine_bps[0].addr);
		memmove(r->fine_bps, r->fine_bps + 1, sizeof(r->fine_bps[0]) * (FINE_MAX_BPS - 1));
		r->nfine_bps--;
	}
	r->fine_bps[r->nfine_bps++] = (struct armed_bp){p, addr};
	return 0;
}

void fine_unplant(struct run *r)
{
	int i;

	for (i = 0; i < r->nfine_bps; i++)
		if (tracer_process_alive(r->fine_bps[i].proc))
			tracer_break_remove(r->fine_bps[i].proc, r->fine_bps[i].addr);
	r->nfine_bps = 0;
	r->fine_planted_want = 0;
}

/* Where the instruction at the pc sends the thread, 0 if unknown. */
static uint64_t next_pc(struct tr_thread *th, const struct dis_insn *insn, const uint8_t *code)
{
	uint64_t next;

	if (!transfers_control(insn))
		return insn->addr + insn->len;
	if (dis_next_pc(insn, code, tracer_regs(th), peek_target, tracer_thread_process(th),
			&next) < 0)
		return 0;
	return next;
}

/* The first instruction at or after from that the stepper must stop at.
 * Code does not change under a run, so the answers are cached. */
static uint64_t next_stop(struct run *r, struct tr_thread *th, uint64_t from)
{
	struct scan_cache *c = &r->scan_cache[(from ^ (from >> 8)) & 255];
	uint8_t code[256];
	struct dis_insn stop;
	uint64_t start = from;
	size_t n;
	long off;

	if (c->proc == tracer_thread_process(th) && c->from == from && c->want == r->fine_want)
		return c->stop;
	for (;;) {
		n = read_code(tracer_thread_process(th), from, code, sizeof(code));
		if (n == 0)
			return 0;
		off = dis_scan(code, n, from, r->fine_want, &stop);
		if (off < 0)
			return 0;
		if (stop.kind != DIS_INVALID) {
			*c = (struct scan_cache){tracer_thread_process(th), start,
						 from + (uint64_t)off, r->fine_want};
			return from + (uint64_t)off;
		}
		if (off == 0)
			return 0; /* undecodable: let single-stepping show it */
		from += (uint64_t)off;
	}
}

/*
 * Move a held candidate thread on to its next instruction-level event.
 * Returns 1 if an event there satisfied the predicate (the thread stays
 * held), 0 once it is running, -1 when the run is over.
 */
int fine_advance(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;
	uint64_t pc = tracer_regs(th)->rip, next, stop;
	int rc;

	if (read_code(tracer_thread_process(th), pc, code, sizeof(code)) == 0 ||
	    dis_decode(code, sizeof(code), pc, &insn) < 0)
		goto single_step;
	/* Accesses left over by the last wait, if the thread has not moved. */
	if (tc->npending && tc->pending_at == pc) {
		rc = judge_pending(r, th);
		if (rc)
			return rc;
	}
	tc->npending = 0;
	/* A call or system call the last wait stopped it on was reported. */
	if (tc->parked_before != pc) {
		rc = judge_before(r, th, &insn, code);
		if (rc)
			return rc;
	}
	tc->parked_before = 0;
	keep_accesses(r, &insn, code, tracer_regs(th), tc);
	/* A single step of rep movs is one element; its accesses were counted
	 * for all of them, so it runs whole, as under the stepper. */
	if (r->opt->single_step && !(tc->npending && tc->pending[0].span))
		goto single_step;
	next = next_pc(th, &insn, code);
	stop = next ? next_stop(r, th, next) : 0;
	if (!stop || place_breakpoint(r, tracer_thread_process(th), stop) < 0)
		goto single_step;
	tracer_resume(th);
	return 0;
single_step:
	tracer_singlestep(th);
	return 0;
}

/*
 * A candidate under the stepper stopped.  Its pending accesses happened
 * before this stop and are judged before it.  Returns 1 if one satisfied
 * the predicate, -1 if the run is over.
 */
int fine_settle(struct run *r, struct tr_thread *th)
{
	return judge_pending(r, th);
}

/* th ran outside the stepper: nothing it did before is pending now. */
void fine_forget(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	if (!tracer_thread_held(th) || tracer_regs(th)->rip != tc->pending_at)
		tc->npending = 0;
}

/* After an exec the cached scans describe code that is gone. */
void fine_forget_process(struct run *r, struct tr_process *p)
{
	int i, kept = 0;

	for (i = 0; i < r->nfine_bps; i++) /* the image that had them is gone */
		if (r->fine_bps[i].proc != p)
			r->fine_bps[kept++] = r->fine_bps[i];
	r->nfine_bps = kept;
	for (i = 0; i < 256; i++)
		if (r->scan_cache[i].proc == p)
			r->scan_cache[i].proc = NULL;
}
