/*
 * access: every memory access an instruction makes, explicit and implicit.
 *
 * Capstone lists explicit memory operands, but the accesses that matter to
 * a scheduler are also the ones no operand names: push, pop, call, ret,
 * leave and friends touch the stack slot at rsp, string ops walk rsi and
 * rdi, xlat reads [rbx + al].  This file lists them all, in the order the
 * CPU makes them, from the instruction id and a handful of encoding facts
 * (prefixes, REX.W, the one-byte opcode) rather than from capstone's
 * operands for the implicit ones, whose presence varies by instruction.
 *
 * The same function serves classification (regs NULL: what could this
 * touch?) and execution (regs given: where exactly, and does a rep op run
 * at all?), so dis_decode's flags and dis_accesses() always agree.
 *
 * An instruction asked about at every stop (a breakpoint's: a serialized
 * search's access point, at every choice) can keep its whole decoding
 * (dis_keep): the thread's decode cache has a few slots, and a search's
 * points, more of them than that, evicted each other, so each question
 * was a decode with detail, the cost of a ptrace round trip.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "disasm/internal.h"

#define F_DF 0x400 /* eflags direction flag */

/* Where accesses are collected: the first max are kept, later ones dropped. */
struct sink {
	struct dis_access *out;
	int n, max;
};

static void put(struct sink *s, uint64_t addr, unsigned size, unsigned rw, bool stack)
{
	if (s->n >= s->max)
		return;
	s->out[s->n++] =
	    (struct dis_access){.addr = addr, .size = size, .rw = rw, .stack = stack, .count = 1};
}

static bool is_frame_reg(x86_reg r)
{
	return r == X86_REG_RSP || r == X86_REG_RBP || r == X86_REG_ESP || r == X86_REG_EBP;
}

/* fs:/gs: accesses are thread-local data, never the stack, whatever the base. */
static bool op_is_stack(const cs_x86_op *op)
{
	return is_frame_reg(op->mem.base) && op->mem.segment != X86_REG_FS &&
	       op->mem.segment != X86_REG_GS;
}

bool dis_cs_is_string(const cs_insn *ci)
{
	uint8_t op = ci->detail->x86.opcode[0];

	switch (ci->id) {
	case X86_INS_MOVSB:
	case X86_INS_MOVSW:
	case X86_INS_MOVSD: /* also SSE movsd (F2 0F 10): the opcode tells them apart */
	case X86_INS_MOVSQ:
	case X86_INS_CMPSB:
	case X86_INS_CMPSW:
	case X86_INS_CMPSD:
	case X86_INS_CMPSQ:
	case X86_INS_STOSB:
	case X86_INS_STOSW:
	case X86_INS_STOSD:
	case X86_INS_STOSQ:
	case X86_INS_LODSB:
	case X86_INS_LODSW:
	case X86_INS_LODSD:
	case X86_INS_LODSQ:
	case X86_INS_SCASB:
	case X86_INS_SCASW:
	case X86_INS_SCASD:
	case X86_INS_SCASQ:
		return op >= 0xa4 && op <= 0xaf && op != 0xa8 && op != 0xa9;
	default:
		return false;
	}
}

/* Operand size of an instruction without an explicit one: 8 with REX.W, 2
 * with an operand-size prefix, else dflt (4 for string ops, 8 for stack). */
static unsigned implicit_size(const cs_x86 *x, unsigned dflt)
{
	if (x->rex & 8)
		return 8;
	if (x->prefix[2] == X86_PREFIX_OPSIZE)
		return 2;
	return dflt;
}

static uint64_t segment_override_base(const cs_x86 *x, const struct user_regs_struct *regs)
{
	if (x->prefix[1] == X86_PREFIX_FS)
		return regs->fs_base;
	if (x->prefix[1] == X86_PREFIX_GS)
		return regs->gs_base;
	return 0;
}

/* rsi, rdi, rcx, rbx as an address under the instruction's address size. */
static uint64_t addr_reg(const cs_x86 *x, uint64_t v)
{
	return x->addr_size == 4 ? (uint32_t)v : v;
}

static void string_accesses(const cs_insn *ci, const struct user_regs_struct *regs, struct sink *s)
{
	const cs_x86 *x = &ci->detail->x86;
	uint8_t op = x->opcode[0];
	unsigned size = (op & 1) ? implicit_size(x, 4) : 1;
	bool rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	uint64_t src = 0, dst = 0, count = 1;
	bool reads_src = op <= 0xa7 || op == 0xac || op == 0xad; /* movs, cmps, lods */
	bool uses_dst = op != 0xac && op != 0xad;		 /* all but lods */
	bool writes_dst = op == 0xa4 || op == 0xa5 || op == 0xaa || op == 0xab; /* movs, stos */
	int first = s->n;

	if (regs) {
		count = rep ? addr_reg(x, regs->rcx) : 1;
		if (count == 0)
			return;
		src = segment_override_base(x, regs) + addr_reg(x, regs->rsi);
		dst = addr_reg(x, regs->rdi);
	}
	if (reads_src)
		put(s, src, size, DIS_READ, false);
	if (uses_dst)
		put(s, dst, size, writes_dst ? DIS_WRITE : DIS_READ, false);
	for (int i = first; i < s->n; i++) {
		s->out[i].count = count;
		s->out[i].descending = regs && (regs->eflags & F_DF);
	}
}

static void xlat_access(const cs_insn *ci, const struct user_regs_struct *regs, struct sink *s)
{
	const cs_x86 *x = &ci->detail->x86;
	uint64_t addr = 0;

	if (regs)
		addr = segment_override_base(x, regs) + addr_reg(x, regs->rbx + (regs->rax & 0xff));
	put(s, addr, 1, DIS_READ, false);
}

/* maskmovdqu and vmaskmovdqu store through [rdi] (ds: or an override), an
 * operand capstone does not list. */
static void maskmov_access(const cs_insn *ci, const struct user_regs_struct *regs, struct sink *s)
{
	const cs_x86 *x = &ci->detail->x86;
	uint64_t addr = 0;

	if (regs)
		addr = segment_override_base(x, regs) + addr_reg(x, regs->rdi);
	put(s, addr, 16, DIS_WRITE, false);
}

/* The bytes an xsave area takes with the features enabled here (CPUID leaf
 * 0xd), the most any xsave variant writes or xrstor reads; once. */
static unsigned xsave_area_size(void)
{
	static _Atomic unsigned size;
	unsigned eax = 0xd, ebx = 0, ecx = 0, edx = 0, got = size;

	if (got)
		return got;
	__asm__("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
	got = ebx >= 576 ? ebx : 4096; /* legacy area and header at least */
	size = got;
	return got;
}

/* Capstone sizes the save areas of fxsave, xsave and their restores as 8
 * bytes. */
static unsigned save_area_size(const cs_insn *ci, unsigned size)
{
	switch (ci->id) {
	case X86_INS_FXSAVE:
	case X86_INS_FXSAVE64:
	case X86_INS_FXRSTOR:
	case X86_INS_FXRSTOR64:
		return 512;
	case X86_INS_XSAVE:
	case X86_INS_XSAVE64:
	case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT:
	case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES:
	case X86_INS_XSAVES64:
	case X86_INS_XRSTOR:
	case X86_INS_XRSTOR64:
	case X86_INS_XRSTORS:
	case X86_INS_XRSTORS64:
		return xsave_area_size();
	default:
		return size;
	}
}

/* bt, bts, btr and btc with a register bit offset address a bit string:
 * the offset, signed, may reach any element before or after the operand. */
static uint64_t bit_string_element(const cs_insn *ci, const struct user_regs_struct *regs,
				   uint64_t ea, unsigned size)
{
	const cs_x86 *x = &ci->detail->x86;
	uint64_t offset;
	int64_t bits;

	if (ci->id != X86_INS_BT && ci->id != X86_INS_BTS && ci->id != X86_INS_BTR &&
	    ci->id != X86_INS_BTC)
		return ea;
	if (x->op_count < 2 || x->operands[1].type != X86_OP_REG || size == 0 ||
	    dis_reg_value(regs, x->operands[1].reg, &offset))
		return ea;
	if (size == 2)
		bits = (int16_t)offset;
	else if (size == 4)
		bits = (int32_t)offset;
	else
		bits = (int64_t)offset;
	/* floor division: bit -1 is in the element before */
	return ea + (uint64_t)((bits >> 3) & ~(int64_t)(size - 1));
}

/* The explicit memory operands, with rw forced where the id decides it. */
static int explicit_accesses(const cs_insn *ci, const struct user_regs_struct *regs, struct sink *s)
{
	const cs_x86 *x = &ci->detail->x86;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		struct user_regs_struct popped;
		const struct user_regs_struct *r = regs;
		unsigned rw = 0;
		uint64_t ea = 0;

		if (op->type != X86_OP_MEM || !(rw = dis_cs_op_access(ci, i)))
			continue;
		if (ci->id == X86_INS_POP) {
			rw = DIS_WRITE;
			if (regs) { /* pop [rsp+x] addresses after the increment */
				popped = *regs;
				popped.rsp += implicit_size(x, 8);
				r = &popped;
			}
		} else if (ci->id == X86_INS_PUSH || ci->id == X86_INS_CALL ||
			   ci->id == X86_INS_JMP) {
			rw = DIS_READ;
		}
		if (r && dis_cs_op_address(ci, op, r, &ea))
			return -1;
		if (r)
			ea = bit_string_element(ci, r, ea, op->size);
		put(s, ea, save_area_size(ci, op->size), rw, op_is_stack(op));
	}
	return 0;
}

/* The implicit stack slot: written below rsp by pushes, read at rsp by pops. */
static void stack_access(const cs_insn *ci, const struct user_regs_struct *regs, struct sink *s)
{
	const cs_x86 *x = &ci->detail->x86;
	unsigned size = implicit_size(x, 8);
	uint64_t rsp = regs ? regs->rsp : 0;

	switch (ci->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHF:
	case X86_INS_PUSHFQ:
	case X86_INS_ENTER:
		put(s, regs ? rsp - size : 0, size, DIS_WRITE, true);
		break;
	case X86_INS_CALL:
		put(s, regs ? rsp - 8 : 0, 8, DIS_WRITE, true);
		break;
	case X86_INS_POP:
	case X86_INS_POPF:
	case X86_INS_POPFQ:
		put(s, rsp, size, DIS_READ, true);
		break;
	case X86_INS_RET:
		put(s, rsp, 8, DIS_READ, true);
		break;
	case X86_INS_LEAVE:
		put(s, regs ? regs->rbp : 0, size, DIS_READ, true);
		break;
	default:
		break;
	}
}

/* Accesses that precede the stack slot: an instruction reads its memory
 * source before pushing it, and pops before storing to its destination. */
static bool explicit_first(const cs_insn *ci)
{
	return ci->id != X86_INS_POP;
}

int dis_cs_accesses(const cs_insn *ci, const struct user_regs_struct *regs, struct dis_access *out,
		    int max)
{
	struct sink s = {out, 0, max > 0 ? max : 0};

	if (dis_cs_is_string(ci)) {
		string_accesses(ci, regs, &s);
		return s.n;
	}
	if (ci->id == X86_INS_XLATB) {
		xlat_access(ci, regs, &s);
		return s.n;
	}
	if (ci->id == X86_INS_MASKMOVDQU || ci->id == X86_INS_VMASKMOVDQU) {
		maskmov_access(ci, regs, &s);
		return s.n;
	}
	if (explicit_first(ci) && explicit_accesses(ci, regs, &s))
		return -1;
	stack_access(ci, regs, &s);
	if (!explicit_first(ci) && explicit_accesses(ci, regs, &s))
		return -1;
	return s.n;
}

int dis_accesses(const struct dis_insn *insn, const uint8_t *code,
		 const struct user_regs_struct *regs, struct dis_access *out, int max)
{
	const cs_insn *ci;

	if (insn->kind == DIS_INVALID || !regs)
		return -1;
	ci = dis_cs_decode(code, insn->len, insn->addr);
	if (!ci)
		return -1;
	return dis_cs_accesses(ci, regs, out, max);
}

/* A whole decoding, detail and all: a copy of what the thread's cache held. */
struct dis_kept {
	_Atomic int refs;
	cs_insn insn; /* insn.detail is &detail */
	cs_detail detail;
};

struct dis_kept *dis_keep(const struct dis_insn *insn, const uint8_t *code)
{
	const cs_insn *ci;
	struct dis_kept *k;

	if (insn->kind == DIS_INVALID)
		return NULL;
	/* just decoded by dis_decode, as a rule: found in the cache */
	ci = dis_cs_decode(code, insn->len, insn->addr);
	if (!ci || !(k = malloc(sizeof(*k))))
		return NULL;
	atomic_init(&k->refs, 1);
	k->insn = *ci;
	k->detail = *ci->detail;
	k->insn.detail = &k->detail;
	return k;
}

struct dis_kept *dis_kept_share(struct dis_kept *k)
{
	if (k)
		atomic_fetch_add(&k->refs, 1);
	return k;
}

void dis_kept_drop(struct dis_kept *k)
{
	if (k && atomic_fetch_sub(&k->refs, 1) == 1)
		free(k);
}

int dis_kept_accesses(const struct dis_kept *k, const struct user_regs_struct *regs,
		      struct dis_access *out, int max)
{
	if (!regs)
		return -1;
	return dis_cs_accesses(&k->insn, regs, out, max);
}

/* [*first, *end) of all elements of a, saturated at the ends of the
 * address space (rcx may be anything). */
static void access_span(const struct dis_access *a, uint64_t *first, uint64_t *end)
{
	uint64_t count = a->count ? a->count : 1, rest;

	if (__builtin_mul_overflow(count - 1, (uint64_t)a->size, &rest))
		rest = UINT64_MAX;
	if (a->descending) {
		*first = a->addr >= rest ? a->addr - rest : 0;
		*end = a->addr + a->size < a->addr ? UINT64_MAX : a->addr + a->size;
	} else {
		*first = a->addr;
		if (__builtin_add_overflow(a->addr, rest, end) ||
		    __builtin_add_overflow(*end, (uint64_t)a->size, end))
			*end = UINT64_MAX;
	}
}

bool dis_access_overlaps(const struct dis_access *a, uint64_t lo, uint64_t len)
{
	uint64_t first, end, hi;

	if (len == 0 || a->size == 0)
		return false;
	access_span(a, &first, &end);
	hi = lo + len < lo ? UINT64_MAX : lo + len;
	return first < hi && lo < end;
}
