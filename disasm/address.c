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
 * and ranks them: an operand whose address is the watched one beats one
 * whose operand merely covers it, which beats any other candidate that
 * touches memory.  Registers are those after the access, so an instruction
 * that overwrites its own base register (mov rax, [rax]) may not match and
 * still be found as the longest memory-touching candidate.
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

enum match {
	MATCH_NONE = -1, /* no operand that touches memory */
	MATCH_OTHER,	 /* touches memory elsewhere, or the address is unknown */
	MATCH_COVERS,	 /* an operand's bytes include watch_addr */
	MATCH_EXACT,	 /* an operand starts at watch_addr */
};

/* How well candidate ci explains an access to watch; *access gets the flags
 * of the best operand, or of the whole instruction if none matched. */
static enum match rank(const cs_insn *ci, const struct user_regs_struct *regs, uint64_t watch,
		       unsigned *access)
{
	const cs_x86 *x = &ci->detail->x86;
	enum match best = MATCH_NONE;
	unsigned all = 0;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		unsigned ac;
		uint64_t ea;
		enum match m = MATCH_OTHER;

		if (op->type != X86_OP_MEM || !(ac = dis_cs_op_access(ci, i)))
			continue;
		all |= ac;
		if (!dis_cs_op_address(ci, op, regs, &ea) && watch - ea < op->size)
			m = ea == watch ? MATCH_EXACT : MATCH_COVERS;
		if (m > best) {
			best = m;
			if (m > MATCH_OTHER)
				*access = ac;
		}
	}
	if (best == MATCH_OTHER)
		*access = all;
	return best;
}

int dis_access_before(const uint8_t *window, size_t window_len, uint64_t pc,
		      const struct user_regs_struct *regs, uint64_t watch_addr,
		      struct dis_insn *out, unsigned *access)
{
	size_t off = window_len > DIS_MAX_INSN ? window_len - DIS_MAX_INSN : 0;
	enum match best = MATCH_NONE;
	size_t best_off = 0;
	unsigned best_access = 0;

	for (; off < window_len; off++) {
		size_t n = window_len - off;
		const cs_insn *ci = dis_cs_decode(window + off, n, pc - n);
		unsigned ac = 0;
		enum match m;

		if (!ci || ci->size != n)
			continue;
		m = rank(ci, regs, watch_addr, &ac);
		if (m > best) {
			best = m;
			best_off = off;
			best_access = ac;
		}
	}
	if (best == MATCH_NONE)
		return -1;
	*access = best_access;
	return dis_decode(window + best_off, window_len - best_off, pc - (window_len - best_off),
			  out);
}
