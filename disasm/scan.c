/*
 * scan: decode ahead to the next instruction a stepper must look at.
 *
 * Single-stepping costs a trap, two context switches and a waitpid per
 * instruction.  Most instructions cannot produce the event a stepper waits
 * for (an arithmetic op touches no memory, a [rsp+x] spill is excluded
 * unless stack accesses are wanted), and straight-line code runs in order,
 * so the stepper can plant one breakpoint at the first instruction that
 * might match, or at the first one that may go elsewhere (a branch), and
 * let the thread run there at full speed.
 *
 * The scan uses classification only, without registers, so it stops at
 * every instruction that may match: dis_matches() then decides, with the
 * thread's registers, whether it actually does (a rep string op with rcx
 * == 0 does not).  Instructions are decoded without their text, which is
 * printed only for the one the scan stops at.
 *
 * A stepper in a loop scans the same code over and over, and a scan costs
 * a capstone decode per instruction, about as much as a trap.  So each
 * thread keeps a small direct-mapped memo of recent scans, keyed by start
 * address and want and validated by comparing the bytes the scan examined:
 * a result depends only on those bytes, so a hit is exact, and changed code
 * (or an int3 the caller left in its copy) simply misses.
 */
#include <stdio.h>
#include <string.h>

#include "disasm/internal.h"

#define WANT_ANY_MEM (DIS_WANT_MEM | DIS_WANT_STACK_MEM)
#define WANT_RW	     (DIS_WANT_READ | DIS_WANT_WRITE)

static bool access_wanted(const struct dis_access *a, unsigned want)
{
	unsigned rw_want = 0;

	if (!(want & (a->stack ? DIS_WANT_STACK_MEM : DIS_WANT_MEM)))
		return false;
	if (!(want & WANT_RW))
		return true;
	if (want & DIS_WANT_READ)
		rw_want |= DIS_READ;
	if (want & DIS_WANT_WRITE)
		rw_want |= DIS_WRITE;
	return (a->rw & rw_want) != 0;
}

static bool any_access_wanted(const struct dis_access *acc, int n, unsigned want)
{
	for (int i = 0; i < n; i++)
		if (access_wanted(&acc[i], want))
			return true;
	return false;
}

/* Could ci match want under some registers? */
static bool may_match(const cs_insn *ci, unsigned want)
{
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n;

	if (!(want & WANT_ANY_MEM))
		return false;
	n = dis_cs_accesses(ci, NULL, acc, DIS_MAX_ACCESSES);
	return any_access_wanted(acc, n, want);
}

#define MEMO_SLOTS 64
#define MEMO_BYTES 96 /* scans that examined more are not remembered */

struct memo {
	uint64_t addr;
	unsigned want;
	unsigned used; /* bytes examined: stop offset + stop length; 0 = empty slot */
	long off;
	struct dis_insn stop;
	uint8_t bytes[MEMO_BYTES];
};

static __thread struct memo memos[MEMO_SLOTS];

static struct memo *memo_slot(uint64_t addr, unsigned want)
{
	uint64_t h = (addr ^ ((uint64_t)want << 7)) * 0x9e3779b97f4a7c15ull;

	return &memos[h >> 58]; /* top 6 bits: 64 slots */
}

static bool memo_lookup(const uint8_t *code, size_t n, uint64_t addr, unsigned want,
			struct dis_insn *stop, long *off)
{
	const struct memo *m = memo_slot(addr, want);

	if (!m->used || m->addr != addr || m->want != want || n < m->used ||
	    memcmp(m->bytes, code, m->used) != 0)
		return false;
	*stop = m->stop;
	*off = m->off;
	return true;
}

static void memo_store(const uint8_t *code, uint64_t addr, unsigned want,
		       const struct dis_insn *stop, long off)
{
	struct memo *m = memo_slot(addr, want);
	size_t used = (size_t)off + stop->len;

	if (used > MEMO_BYTES)
		return;
	m->addr = addr;
	m->want = want;
	m->used = (unsigned)used;
	m->off = off;
	m->stop = *stop;
	memcpy(m->bytes, code, used);
}

static void stop_invalid(uint64_t addr, struct dis_insn *stop)
{
	memset(stop, 0, sizeof(*stop));
	stop->addr = addr;
	stop->kind = DIS_INVALID;
	snprintf(stop->text, sizeof(stop->text), "(bad)");
}

long dis_scan(const uint8_t *code, size_t n, uint64_t addr, unsigned want, struct dis_insn *stop)
{
	size_t off = 0;
	long memo_off;

	if (memo_lookup(code, n, addr, want, stop, &memo_off))
		return memo_off;
	for (;;) {
		const cs_insn *ci = off < n ? dis_cs_decode(code + off, n - off, addr + off) : NULL;

		if (!ci) {
			stop_invalid(addr + off, stop);
			return off == 0 ? -1 : (long)off;
		}
		dis_cs_fill(ci, stop);
		if (stop->kind != DIS_OTHER || may_match(ci, want)) {
			dis_cs_set_text(ci, stop);
			memo_store(code, addr, want, stop, (long)off);
			return (long)off;
		}
		off += ci->size;
	}
}

bool dis_matches(const struct dis_insn *insn, const uint8_t *code,
		 const struct user_regs_struct *regs, unsigned want)
{
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n;

	if ((want & DIS_WANT_CALL) && (insn->flags & DIS_F_CALL))
		return true;
	if ((want & DIS_WANT_RET) && insn->kind == DIS_RET)
		return true;
	if ((want & DIS_WANT_SYSCALL) && insn->kind == DIS_SYSCALL)
		return true;
	if (!(want & WANT_ANY_MEM) || !(insn->flags & DIS_F_MEM))
		return false;
	n = dis_accesses(insn, code, regs, acc, DIS_MAX_ACCESSES);
	if (n < 0) { /* unknown address: stop rather than miss it */
		bool stack = insn->flags & DIS_F_STACK;

		return want & (stack ? DIS_WANT_STACK_MEM : WANT_ANY_MEM);
	}
	return any_access_wanted(acc, n, want);
}
