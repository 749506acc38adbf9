/*
 * breakpoint.c: breakpoints that never come out while threads run.
 *
 * A breakpoint is one byte written over the first byte of an instruction.
 * In a process cctrace attached to, it is TRACER_BREAK_BYTE (0xce), not
 * int3 (0xcc): 0xce (into) is invalid in 64-bit mode and faults (#UD,
 * SIGILL) with the pc still on it, where int3 traps with the pc one byte
 * further.  The difference matters when cctrace dies: the kernel then
 * drops the signal of a thread stopped at a breakpoint and lets it run
 * from its pc.  After int3 that pc is inside the instruction, and the
 * thread runs the rest of its bytes as code; after 0xce it is the
 * breakpoint itself, which faults again, and the guardian's handler
 * catches it (guardian.c).
 *
 * A process cctrace launched (or forked from one it launched) dies with
 * cctrace (PTRACE_O_EXITKILL), so that case cannot arise, and there the
 * breakpoint is int3: a #UD fault costs about three times an int3 trap
 * (7.4 against 2.4 us on a KVM guest, bench/trapcost), paid at every stop
 * of a search.  Its stop is told from other SIGTRAPs by our byte one
 * before the pc (over a 1-byte instruction, by the siginfo too:
 * SI_KERNEL), and the pc is rewound (wait.c), so above the tracer a
 * breakpoint stop looks the same whichever byte made it.  An
 * instruction that is itself an int3 gets 0xce, so that a byte of ours
 * is never the program's.
 *
 * Planting a breakpoint decodes the instruction under it once, and keeps
 * that decoding (and, for one that touches memory, capstone's whole
 * detail, dis_keep: a scheduler asks a point's accesses at every choice;
 * copies of a breakpoint share it).  If the
 * instruction's meaning depends on where it sits (relative jmp/call, ret)
 * it will be emulated on the registers of the thread that resumes over it;
 * otherwise a copy, with any rip-relative displacement rebased, is written
 * to a scratch slot near the original code, followed by a jmp back.  A
 * thread held at the breakpoint resumes at the slot (or with the emulated
 * effect) and no second trap is taken, so a breakpoint costs one stop per
 * hit and another thread passing the same address in the meantime still
 * stops there.
 *
 * A removed breakpoint stays in the list as dormant (refs == 0, original
 * byte back in place): its slot may still be in use by a thread, and
 * re-planting it, which schedules do at every `run`, costs one write.
 * So breakpoints only come out all at once, and the index by address
 * beside the list (open addressing, linear probing) never deletes one.
 * It is what makes a stop's look-up, and a choice's decoding of a hundred
 * held threads' next instructions, independent of how many points a
 * search planted.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which byte a new breakpoint over orig is in p (see above). */
static uint8_t break_byte_for(const struct tr_process *p, uint8_t orig)
{
	return p->launched && orig != TRACER_INT3 ? TRACER_INT3 : TRACER_BREAK_BYTE;
}

static size_t slot_of(const struct tr_process *p, uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 32) & (p->bp_cap - 1);
}

/*
 * A vfork child (or any child made with CLONE_VM) runs in its parent's
 * memory until it executes a program: the bytes planted there, and their
 * slots, are the parent's.  So it has no breakpoints of its own: it finds
 * its parent's, which it may meet, and planting or taking out through it
 * changes nothing (the parent's list would not know of a byte planted in
 * its memory, and would miss one taken out).  At its exec it is itself.
 */
static struct tr_process *memory_owner(struct tr_process *p)
{
	struct tr_process *parent;

	if (!p->shares_mm)
		return p;
	parent = tr_process_by_pid(p->tracer, p->parent_pid);
	return parent ? parent : p;
}

struct tr_breakpoint *tr_break_find_any(struct tr_process *p, uint64_t addr)
{
	struct tr_breakpoint *bp;
	size_t i;

	p = memory_owner(p);
	if (p->bp_cap == 0)
		return NULL;
	for (i = slot_of(p, addr); (bp = p->bp_slots[i]); i = (i + 1) & (p->bp_cap - 1))
		if (bp->addr == addr)
			return bp;
	return NULL;
}

static void free_breakpoint(struct tr_breakpoint *bp)
{
	if (bp)
		dis_kept_drop(bp->kept);
	free(bp);
}

static void index_put(struct tr_process *p, struct tr_breakpoint *bp)
{
	size_t i = slot_of(p, bp->addr);

	while (p->bp_slots[i])
		i = (i + 1) & (p->bp_cap - 1);
	p->bp_slots[i] = bp;
}

/* Room in the index for one more, kept at most half full; -1: out of
 * memory, and nothing changed. */
static int index_reserve(struct tr_process *p)
{
	struct tr_breakpoint **old = p->bp_slots;
	size_t old_cap = p->bp_cap, i;

	if (2 * (p->bp_count + 1) <= p->bp_cap)
		return 0;
	p->bp_cap = old_cap ? 2 * old_cap : 64;
	p->bp_slots = calloc(p->bp_cap, sizeof(*p->bp_slots));
	if (!p->bp_slots) {
		p->bp_slots = old;
		p->bp_cap = old_cap;
		return -1;
	}
	for (i = 0; i < old_cap; i++)
		if (old[i])
			index_put(p, old[i]);
	free(old);
	return 0;
}

/* bp joins p's breakpoints: the list's tail is *tail. */
static void link_breakpoint(struct tr_process *p, struct tr_breakpoint ***tail,
			    struct tr_breakpoint *bp)
{
	assert(!tr_break_find_any(p, bp->addr) && 2 * (p->bp_count + 1) <= p->bp_cap);
	bp->next = NULL;
	**tail = bp;
	*tail = &bp->next;
	index_put(p, bp);
	p->bp_count++;
}

struct tr_breakpoint *tr_break_find(struct tr_process *p, uint64_t addr)
{
	struct tr_breakpoint *bp = tr_break_find_any(p, addr);

	return bp && bp->refs > 0 ? bp : NULL;
}

bool tracer_break_at(struct tr_process *p, uint64_t addr)
{
	return tr_break_find(p, addr) != NULL;
}

static int prepare_displacement(struct tr_process *p, struct tr_breakpoint *bp, char *err,
				size_t errlen)
{
	uint8_t slot[DIS_SLOT_SIZE];
	int n;

	if (dis_needs_emulation(&bp->insn))
		return 0;
	bp->slot = tr_scratch_alloc(p, bp->addr, DIS_SLOT_SIZE, err, errlen);
	if (!bp->slot)
		return -1;
	n = dis_build_slot(&bp->insn, bp->code, bp->slot, slot);
	if (n < 0) {
		snprintf(err, errlen, "cannot relocate '%s' at %#lx for out-of-line execution",
			 bp->insn.text, (unsigned long)bp->addr);
		return -1;
	}
	if (tracer_write(p, bp->slot, slot, (size_t)n) < 0) {
		snprintf(err, errlen, "cannot write scratch slot at %#lx: %s",
			 (unsigned long)bp->slot, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Our descriptor reaches an address space the process no longer has
 * (mem.c says ESRCH): it has just executed a new program, whose exec event
 * is on its way (it clears this list, and the caller arms its points again
 * in the new program), or it is exiting.  There is nothing to plant in,
 * and that is no error.
 */
static bool image_gone(void)
{
	return errno == ESRCH;
}

static int journal_failed(uint64_t addr, char *err, size_t errlen)
{
	snprintf(err, errlen, "cannot journal the breakpoint at %#lx for the guardian: %s",
		 (unsigned long)addr, strerror(errno));
	return -1;
}

/* A dormant breakpoint planted again: one write. */
static int replant(struct tr_process *p, struct tr_breakpoint *bp, char *err, size_t errlen)
{
	if (tr_guard_break(p, bp, TR_GUARD_LIVE) < 0)
		return journal_failed(bp->addr, err, errlen);
	if (tracer_write(p, bp->addr, &bp->byte, 1) == 0 || image_gone()) {
		bp->refs = 1;
		return 0;
	}
	snprintf(err, errlen, "cannot write a breakpoint at %#lx: %s", (unsigned long)bp->addr,
		 strerror(errno));
	tr_guard_break(p, bp, TR_GUARD_DORMANT);
	return -1;
}

/* Is its byte in the program's code now? */
static bool planted(const struct tr_breakpoint *bp)
{
	return bp->refs > 0 || bp->unclaimed;
}

/* One the template planted: ours without a write. */
static void claim(struct tr_process *p, struct tr_breakpoint *bp)
{
	assert(bp->refs == 0 && p->unclaimed > 0);
	bp->unclaimed = false;
	p->unclaimed--;
	bp->refs = 1;
}

int tracer_break_insert(struct tr_process *p, uint64_t addr, char *err, size_t errlen)
{
	struct tr_breakpoint *bp;

	if (memory_owner(p) != p)
		return 0; /* the parent's memory: its own breakpoints are there */
	bp = tr_break_find_any(p, addr);

	if (bp && bp->refs > 0) {
		bp->refs++;
		assert(bp->refs > 1); /* no wrap-around */
		return 0;
	}
	if (bp && bp->unclaimed) {
		claim(p, bp);
		return 0;
	}
	/* The guardian's rescue handler comes before the first breakpoint. */
	if (tr_guard_prepare(p, err, errlen) < 0)
		return -1;
	if (bp)
		return replant(p, bp, err, errlen);
	bp = index_reserve(p) < 0 ? NULL : calloc(1, sizeof(*bp));
	if (!bp)
		goto oom;
	bp->addr = addr;
	bp->refs = 1;
	/* Without our bytes: the instruction's may run on past a
	 * neighbouring breakpoint, whose byte must not be copied to a slot. */
	if (tracer_read_code(p, addr, bp->code, sizeof(bp->code)) < 0) {
		if (image_gone())
			goto gone;
		snprintf(err, errlen, "cannot read code at %#lx: %s", (unsigned long)addr,
			 strerror(errno));
		goto fail;
	}
	if (dis_decode(bp->code, sizeof(bp->code), addr, &bp->insn) < 0) {
		snprintf(err, errlen, "cannot decode the instruction at %#lx", (unsigned long)addr);
		goto fail;
	}
	/* NULL out of memory: its accesses are decoded when asked, as before */
	if (bp->insn.flags & DIS_F_MEM)
		bp->kept = dis_keep(&bp->insn, bp->code);
	if (prepare_displacement(p, bp, err, errlen) < 0) {
		if (image_gone())
			goto gone;
		goto fail;
	}
	bp->orig = bp->code[0];
	bp->byte = break_byte_for(p, bp->orig);
	/* 0xce is invalid in 64-bit mode, so it cannot begin an instruction
	 * that decoded, and int3 is not chosen over an int3: what we saved is
	 * the program's byte, not ours. */
	assert(bp->orig != bp->byte);
	if (tr_guard_break(p, bp, TR_GUARD_LIVE) < 0) {
		journal_failed(addr, err, errlen);
		goto fail;
	}
	if (tracer_write(p, addr, &bp->byte, 1) < 0) {
		if (image_gone()) {
			tr_guard_break(p, bp, TR_GUARD_GONE);
			goto gone;
		}
		snprintf(err, errlen, "cannot write a breakpoint at %#lx: %s", (unsigned long)addr,
			 strerror(errno));
		tr_guard_break(p, bp, TR_GUARD_GONE);
		goto fail;
	}
	bp->next = p->breakpoints;
	p->breakpoints = bp;
	index_put(p, bp);
	p->bp_count++;
	return 0;
gone:
	free_breakpoint(bp);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free_breakpoint(bp);
	return -1;
}

int tracer_read_code(struct tr_process *p, uint64_t addr, void *buf, size_t len)
{
	struct tr_breakpoint *bp;

	size_t i;

	if (tracer_read(p, addr, buf, len) < 0)
		return -1;
	p = memory_owner(p);
	if (len < p->bp_count) { /* an instruction's bytes: look each up */
		for (i = 0; i < len; i++)
			if ((bp = tr_break_find_any(p, addr + i)) && planted(bp))
				((uint8_t *)buf)[i] = bp->orig;
		return 0;
	}
	for (bp = p->breakpoints; bp; bp = bp->next)
		if (planted(bp) && bp->addr >= addr && bp->addr - addr < len)
			((uint8_t *)buf)[bp->addr - addr] = bp->orig;
	return 0;
}

int tracer_decode_at(struct tr_process *p, uint64_t addr, uint8_t code[DIS_MAX_INSN],
		     struct dis_insn *insn)
{
	const struct tr_breakpoint *bp = tr_break_find_any(p, addr);

	if (bp) { /* decoded when it was planted */
		memcpy(code, bp->code, DIS_MAX_INSN);
		*insn = bp->insn;
		return 0;
	}
	if (tracer_read_code(p, addr, code, DIS_MAX_INSN) < 0)
		return -1;
	return dis_decode(code, DIS_MAX_INSN, addr, insn);
}

int tracer_accesses_at(struct tr_process *p, uint64_t addr, const struct user_regs_struct *regs,
		       struct dis_access *out, int max)
{
	const struct tr_breakpoint *bp = tr_break_find_any(p, addr);
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;

	if (bp && bp->kept)
		return dis_kept_accesses(bp->kept, regs, out, max);
	if (tracer_decode_at(p, addr, code, &insn) < 0)
		return -1;
	return dis_accesses(&insn, code, regs, out, max);
}

void tracer_break_remove(struct tr_process *p, uint64_t addr)
{
	struct tr_breakpoint *bp = memory_owner(p) == p ? tr_break_find(p, addr) : NULL;

	if (!bp)
		return;
	assert(bp->refs > 0 && bp->orig != bp->byte);
	if (--bp->refs > 0)
		return;
	if (p->alive)
		tracer_write(p, addr, &bp->orig, 1);
	tr_guard_break(p, bp, TR_GUARD_DORMANT); /* after: the guardian may undo it twice */
}

void tr_break_remove_all(struct tr_process *p, bool restore_bytes)
{
	while (p->breakpoints) {
		struct tr_breakpoint *bp = p->breakpoints;

		if (restore_bytes && p->alive && planted(bp))
			tracer_write(p, bp->addr, &bp->orig, 1);
		if (bp->gj)
			tr_guard_break(p, bp, TR_GUARD_GONE);
		p->breakpoints = bp->next;
		free_breakpoint(bp);
	}
	free(p->bp_slots);
	p->bp_slots = NULL;
	p->bp_cap = p->bp_count = 0;
	p->unclaimed = 0;
}

int tr_break_step_over(struct tr_thread *th)
{
	struct tr_breakpoint *bp = tr_break_find(th->proc, th->regs.rip);

	assert(th->state == TR_HELD); /* its registers are ours to change */
	if (!bp)
		return 1;
	if (bp->slot) {
		th->regs.rip = bp->slot;
	} else if (dis_emulate(&bp->insn, bp->code, &th->regs, tr_peek_fn, tr_poke_fn, th->proc) <
		   0) {
		return -1;
	}
	tr_set(th, TF_REGS_DIRTY);
	return 0;
}

/* pc as the program's code has it: inside a displaced instruction's slot,
 * the instruction's own address (the slot's start) or the one after it. */
uint64_t tr_break_home(struct tr_process *p, uint64_t pc)
{
	const struct tr_breakpoint *bp;

	/* Slots are in our few scratch pages, where most pcs are not: the
	 * walk of every breakpoint for each held thread at each choice was
	 * 42% of cctrace's time in a search over 100 threads. */
	p = memory_owner(p);
	if (!tr_in_scratch(p, pc, pc + 1))
		return pc;
	for (bp = p->breakpoints; bp; bp = bp->next)
		if (bp->slot && pc >= bp->slot && pc < bp->slot + DIS_SLOT_SIZE)
			return pc == bp->slot ? bp->addr : bp->addr + bp->insn.len;
	return pc;
}

void tr_break_fix_pc_in_slot(struct tr_thread *th)
{
	uint64_t home = tr_break_home(th->proc, th->regs.rip);

	assert(th->state == TR_HELD);
	if (home == th->regs.rip)
		return;
	th->regs.rip = home;
	tr_set(th, TF_REGS_DIRTY);
}

uint64_t tracer_code_pc(struct tr_thread *th)
{
	assert(th->state == TR_HELD);
	return tr_break_home(th->proc, th->regs.rip);
}

/*
 * The child's memory is the parent's as it was at the fork, and the parent
 * may have run between our writes to it (a scratch page is mapped by the
 * parent itself, which runs on before the slot and the breakpoint are written),
 * or our list may have changed while the fork event waited to be reaped.
 * So the copied list is made to agree with the child's bytes before the
 * child runs: a breakpoint we do not account for would kill it with SIGILL
 * once detached, a dormant entry over a live breakpoint would loop, and a slot
 * the child does not have would crash it (such an entry is dropped: the
 * child gets a fresh one if the point is armed there again).  After vfork
 * the memory is shared and already agrees.
 */
static bool sync_inherited(struct tr_process *parent, struct tr_process *child,
			   struct tr_breakpoint *bp)
{
	uint8_t now, slot[DIS_SLOT_SIZE];

	if (tracer_read(child, bp->addr, &now, 1) < 0)
		return false;
	if (bp->slot && tracer_read(child, bp->slot, slot, 1) < 0) {
		/* Its scratch page was mapped after the fork: not the child's. */
		if (now == bp->byte)
			tracer_write(child, bp->addr, &bp->orig, 1);
		return false;
	}
	if (bp->refs == 0) {
		if (now == bp->byte)
			tracer_write(child, bp->addr, &bp->orig, 1);
		return true;
	}
	if (now == bp->byte)
		return true; /* planted before the fork, so its slot was written too */
	if (bp->slot && (tracer_read(parent, bp->slot, slot, sizeof(slot)) < 0 ||
			 tracer_write(child, bp->slot, slot, sizeof(slot)) < 0))
		return false;
	return tracer_write(child, bp->addr, &bp->byte, 1) == 0;
}

/* Scratch pages mapped before the fork are the child's too; one mapped
 * after it (the parent ran on) is not, unless the parent ran none of its
 * code since (a held template): no need to look. */
static void inherit_scratch(const struct tr_process *parent, struct tr_process *child, bool look)
{
	struct tr_scratch *s, *copy, **tail = &child->scratch;
	uint8_t probe;

	for (s = parent->scratch; s; s = s->next) {
		if (look && tracer_read(child, s->addr, &probe, 1) < 0)
			continue;
		copy = malloc(sizeof(*copy));
		if (!copy)
			return;
		*copy = *s;
		copy->next = NULL;
		copy->gj = 0;
		tr_guard_scratch(child, copy, TR_GUARD_LIVE);
		*tail = copy;
		tail = &copy->next;
	}
}

void tr_break_inherit(struct tr_process *parent, struct tr_process *child)
{
	struct tr_breakpoint *bp, *copy, **tail = &child->breakpoints;

	assert(parent->unclaimed == 0); /* it ran to fork */
	if (memory_owner(child) != child)
		return; /* its parent's memory, breakpoints and pages */
	inherit_scratch(parent, child, true);
	for (bp = parent->breakpoints; bp; bp = bp->next) {
		copy = index_reserve(child) < 0 ? NULL : malloc(sizeof(*copy));
		if (!copy)
			return;
		*copy = *bp;
		copy->kept = dis_kept_share(bp->kept);
		copy->next = NULL;
		copy->gj = 0;
		/* Journaled first: syncing may write a breakpoint into the child. */
		tr_guard_break(child, copy, TR_GUARD_LIVE);
		if (!sync_inherited(parent, child, copy)) {
			if (copy->gj)
				tr_guard_break(child, copy, TR_GUARD_GONE);
			free_breakpoint(copy);
			continue;
		}
		if (copy->gj && copy->refs == 0)
			tr_guard_break(child, copy, TR_GUARD_DORMANT);
		link_breakpoint(child, &tail, copy);
	}
}

void tr_break_adopt(const struct tr_process *tmpl, struct tr_process *child)
{
	struct tr_breakpoint *bp, *copy, **btail = &child->breakpoints;

	assert(child->launched && !child->breakpoints && !child->scratch);
	inherit_scratch(tmpl, child, false);
	for (bp = tmpl->breakpoints; bp; bp = bp->next) {
		copy = index_reserve(child) < 0 ? NULL : malloc(sizeof(*copy));
		if (!copy) { /* forgotten, but its byte is in the code */
			tracer_write(child, bp->addr, &bp->orig, 1);
			continue;
		}
		*copy = *bp;
		copy->kept = dis_kept_share(bp->kept);
		copy->next = NULL;
		copy->gj = 0;
		copy->unclaimed = bp->refs > 0;
		copy->refs = 0;
		child->unclaimed += copy->unclaimed;
		link_breakpoint(child, &btail, copy);
	}
	child->syscall_gadget = tmpl->syscall_gadget;
	child->exit_loop = tmpl->exit_loop;
}

void tr_break_drop_unclaimed(struct tr_process *p)
{
	struct tr_breakpoint *bp;

	for (bp = p->breakpoints; bp && p->unclaimed > 0; bp = bp->next) {
		if (!bp->unclaimed)
			continue;
		bp->unclaimed = false;
		p->unclaimed--;
		if (p->alive)
			tracer_write(p, bp->addr, &bp->orig, 1);
	}
	assert(p->unclaimed == 0);
}

/* ------------------------------------------------- a template's set */

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The addresses of p's live breakpoints, sorted; how many, -1 if out of
 * memory. */
static int live_addrs(const struct tr_process *p, uint64_t **out)
{
	const struct tr_breakpoint *bp;
	uint64_t *addrs;
	int n = 0;

	for (bp = p->breakpoints; bp; bp = bp->next)
		n += bp->refs > 0;
	addrs = malloc(sizeof(*addrs) * (size_t)(n ? n : 1));
	if (!addrs)
		return -1;
	n = 0;
	for (bp = p->breakpoints; bp; bp = bp->next)
		if (bp->refs > 0)
			addrs[n++] = bp->addr;
	qsort(addrs, (size_t)n, sizeof(*addrs), cmp_addr);
	*out = addrs;
	return n;
}

static bool among(const uint64_t *sorted, int n, uint64_t addr)
{
	return bsearch(&addr, sorted, (size_t)n, sizeof(addr), cmp_addr) != NULL;
}

int tracer_break_mirror(struct tr_process *to, struct tr_process *from,
			bool (*skip)(void *ctx, uint64_t addr), void *ctx, char *err, size_t errlen)
{
	uint64_t *want = NULL, *have = NULL;
	int nwant = live_addrs(from, &want), nhave = nwant < 0 ? -1 : live_addrs(to, &have);
	int i, rc = -1;

	if (nhave < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < nhave; i++) {
		struct tr_breakpoint *bp = tr_break_find(to, have[i]);

		if (!among(want, nwant, have[i])) /* none that skip refuses is had */
			while (bp && bp->refs > 0)
				tracer_break_remove(to, have[i]);
	}
	for (i = 0; i < nwant; i++)
		if (!among(have, nhave, want[i]) && !skip(ctx, want[i]) &&
		    tracer_break_insert(to, want[i], err, errlen) < 0)
			goto out;
	rc = 0;
out:
	free(want);
	free(have);
	return rc;
}
