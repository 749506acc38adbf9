/*
 * address: where a memory operand points, and which instruction a data
 * watchpoint caught.
 *
 * An effective address is segment base + base + index * scale + disp, with
 * rip standing for the address of the next instruction, 32-bit registers
 * zero-extended and the sum cut to 32 bits under an address-size prefix.
 * Only fs and gs have a base in 64-bit mode; it comes from regs.
 *
 * Capstone 4 misreads the SIB index of EVEX (AVX-512) instructions whose
 * EVEX.V' bit is clear: [rdi + rdx - 0x40] comes out as [rdi + xmm2 - 0x40],
 * and "no index" as xmm4.  glibc's evex string functions are full of these.
 * Only gathers and scatters (VSIB) really index with a vector register, so
 * for everything else xmmN is mapped back to general register N.
 *
 * x86 reports a data breakpoint after the access, with rip already past the
 * instruction, and variable-length encoding means the bytes before pc can
 * be split into an instruction in several ways.  dis_access_before() tries
 * every start in the window whose decode ends exactly at pc, longest first,
 * and ranks them: an access (explicit or implicit: a push's slot, a string
 * op's element, a bit string's element) whose address is the watched one
 * beats one that merely overlaps it, which beats any other candidate that
 * touches memory.  Registers are those after the access, turned back where
 * the instruction's own moves of rsp, rsi and rdi are known; an instruction
 * that overwrites its own base register (mov rax, [rax]) may not match and
 * still be found as the longest memory-touching candidate.  A rep string op
 * is reported in the middle of its run, with rip still at it: no
 * instruction before pc explains the access then, and
 * dis_string_in_progress() tells.
 */
#include <stddef.h>
#include <string.h>

#include "disasm/internal.h"

struct reg_slot {
	x86_reg r64, r32;
	size_t offset;
};

#define REG(r, e, f)                                                                               \
	{                                                                                          \
		X86_REG_##r, X86_REG_##e, offsetof(struct user_regs_struct, f)                     \
	}
static const struct reg_slot reg_slots[] = {
    REG(RAX, EAX, rax),	 REG(RBX, EBX, rbx),  REG(RCX, ECX, rcx),  REG(RDX, EDX, rdx),
    REG(RSI, ESI, rsi),	 REG(RDI, EDI, rdi),  REG(RBP, EBP, rbp),  REG(RSP, ESP, rsp),
    REG(R8, R8D, r8),	 REG(R9, R9D, r9),    REG(R10, R10D, r10), REG(R11, R11D, r11),
    REG(R12, R12D, r12), REG(R13, R13D, r13), REG(R14, R14D, r14), REG(R15, R15D, r15),
};
#undef REG

int dis_reg_value(const struct user_regs_struct *regs, x86_reg reg, uint64_t *v)
{
	const char *base = (const char *)regs;

	if (reg == X86_REG_INVALID) {
		*v = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(reg_slots) / sizeof(reg_slots[0]); i++) {
		uint64_t full;

		if (reg != reg_slots[i].r64 && reg != reg_slots[i].r32)
			continue;
		memcpy(&full, base + reg_slots[i].offset, sizeof(full));
		*v = reg == reg_slots[i].r32 ? (uint32_t)full : full;
		return 0;
	}
	return -1;
}

/* General registers by their 4-bit encoding; 4 in an index means none. */
static const x86_reg gpr_by_number[16] = {
    X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX, X86_REG_INVALID, X86_REG_RBP,
    X86_REG_RSI, X86_REG_RDI, X86_REG_R8,  X86_REG_R9,	X86_REG_R10,	 X86_REG_R11,
    X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
};

static bool is_vsib(const cs_insn *ci)
{
	return strstr(ci->mnemonic, "gather") || strstr(ci->mnemonic, "scatter");
}

static x86_reg index_register(const cs_insn *ci, x86_reg index)
{
	if (index >= X86_REG_XMM0 && index <= X86_REG_XMM15 && !is_vsib(ci))
		return gpr_by_number[index - X86_REG_XMM0];
	return index;
}

static uint64_t segment_base(const struct user_regs_struct *regs, x86_reg seg)
{
	if (seg == X86_REG_FS)
		return regs->fs_base;
	if (seg == X86_REG_GS)
		return regs->gs_base;
	return 0;
}

int dis_cs_op_address(const cs_insn *ci, const cs_x86_op *op, const struct user_regs_struct *regs,
		      uint64_t *ea)
{
	uint64_t base, index, sum;

	if (op->mem.base == X86_REG_RIP || op->mem.base == X86_REG_EIP)
		base = ci->address + ci->size;
	else if (dis_reg_value(regs, op->mem.base, &base))
		return -1;
	if (dis_reg_value(regs, index_register(ci, op->mem.index), &index))
		return -1;
	sum = base + index * (uint64_t)op->mem.scale + (uint64_t)op->mem.disp;
	if (ci->detail->x86.addr_size == 4)
		sum = (uint32_t)sum;
	*ea = segment_base(regs, op->mem.segment) + sum;
	return 0;
}

static const cs_x86_op *first_mem_operand(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM)
			return &x->operands[i];
	return NULL;
}

int dis_effective_address(const struct dis_insn *insn, const uint8_t *code,
			  const struct user_regs_struct *regs, uint64_t *ea)
{
	const cs_insn *ci = dis_cs_decode(code, insn->len, insn->addr);
	const cs_x86_op *op;

	if (!ci)
		return -1;
	op = first_mem_operand(ci);
	if (!op)
		return -1;
	return dis_cs_op_address(ci, op, regs, ea);
}

/* The registers before ci ran, as far as its accesses need them, from
 * those after: a push or a call moved rsp down, a pop or a ret up, leave
 * set rsp from rbp, and one iteration of a string op moved rsi and rdi past
 * the element it touched (which is as true in the middle of a rep as at
 * its end).  Other registers an instruction changes (mov rax, [rax]) are
 * not undone. */
static void registers_before(const cs_insn *ci, const struct user_regs_struct *after,
			     struct user_regs_struct *before)
{
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n = dis_cs_accesses(ci, NULL, acc, DIS_MAX_ACCESSES);
	unsigned size = n > 0 ? acc[0].size : 8;

	*before = *after;
	if (dis_cs_is_string(ci)) {
		uint64_t step = (after->eflags & 0x400) ? -(uint64_t)size : size;

		before->rsi -= step;
		before->rdi -= step;
		before->rcx = 1;
		return;
	}
	switch (ci->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHF:
	case X86_INS_PUSHFQ:
	case X86_INS_CALL:
		before->rsp += ci->id == X86_INS_CALL ? 8 : acc[n - 1].size;
		break;
	case X86_INS_POP:
	case X86_INS_POPF:
	case X86_INS_POPFQ:
		before->rsp -= acc[0].size; /* the slot is read first */
		break;
	case X86_INS_RET:
		before->rsp -= 8;
		break;
	case X86_INS_LEAVE:
		before->rbp = after->rsp - 8;
		break;
	default:
		break;
	}
}

/* How well candidate ci, run with the registers before it, explains an
 * access to [watch, watch + len): *access gets the flags of the accesses
 * that match best, or of all of them if none touches the watch. */
static int rank(const cs_insn *ci, const struct user_regs_struct *regs, uint64_t watch,
		unsigned len, unsigned *access)
{
	struct dis_access acc[DIS_MAX_ACCESSES];
	struct user_regs_struct before;
	int best = -1, n, i;
	unsigned all = 0;

	if (dis_cs_accesses(ci, NULL, acc, DIS_MAX_ACCESSES) <= 0)
		return -1;
	registers_before(ci, regs, &before);
	n = dis_cs_accesses(ci, &before, acc, DIS_MAX_ACCESSES);
	if (n < 0) { /* a register an operand needs is unknown: somewhere */
		n = dis_cs_accesses(ci, NULL, acc, DIS_MAX_ACCESSES);
		for (i = 0; i < n; i++)
			all |= acc[i].rw;
		*access = all;
		return DIS_MATCH_OTHER;
	}
	for (i = 0; i < n; i++) {
		int m = DIS_MATCH_OTHER;

		all |= acc[i].rw;
		if (acc[i].addr == watch)
			m = DIS_MATCH_EXACT;
		else if (dis_access_overlaps(&acc[i], watch, len ? len : 1))
			m = DIS_MATCH_COVERS;
		if (m > best)
			*access = acc[i].rw;
		else if (m == best)
			*access |= acc[i].rw;
		best = m > best ? m : best;
	}
	if (best == DIS_MATCH_OTHER)
		*access = all;
	return best;
}

int dis_access_before(const uint8_t *window, size_t window_len, uint64_t pc,
		      const struct user_regs_struct *regs, uint64_t watch_addr, unsigned watch_len,
		      struct dis_insn *out, unsigned *access)
{
	size_t off = window_len > DIS_MAX_INSN ? window_len - DIS_MAX_INSN : 0;
	int best = -1;
	size_t best_off = 0;
	unsigned best_access = 0;

	for (; off < window_len; off++) {
		size_t n = window_len - off;
		const cs_insn *ci = dis_cs_decode(window + off, n, pc - n);
		unsigned ac = 0;
		int m;

		if (!ci || ci->size != n)
			continue;
		m = rank(ci, regs, watch_addr, watch_len, &ac);
		if (m > best) {
			best = m;
			best_off = off;
			best_access = ac;
		}
	}
	if (best < 0)
		return -1;
	*access = best_access;
	if (dis_decode(window + best_off, window_len - best_off, pc - (window_len - best_off),
		       out) < 0)
		return -1;
	return best;
}

int dis_string_in_progress(const uint8_t *code, size_t n, uint64_t pc,
			   const struct user_regs_struct *regs, uint64_t watch_addr,
			   unsigned watch_len, struct dis_insn *out, unsigned *access)
{
	const cs_insn *ci = dis_cs_decode(code, n, pc);
	const cs_x86 *x;
	int m;

	if (!ci || !dis_cs_is_string(ci))
		return -1;
	x = &ci->detail->x86;
	if (x->prefix[0] != X86_PREFIX_REP && x->prefix[0] != X86_PREFIX_REPNE)
		return -1;
	m = rank(ci, regs, watch_addr, watch_len, access);
	if (m < DIS_MATCH_COVERS || dis_decode(code, ci->size, pc, out) < 0)
		return -1;
	return m;
}
