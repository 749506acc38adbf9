/*
 * next_pc: where a branch sends the thread, so that a stepper can plant its
 * next breakpoint there instead of single-stepping across the branch.
 *
 * Relative jumps, calls and conditional branches reuse the emulation in
 * displace.c on a copy of the registers (it already evaluates conditions
 * from eflags and rcx).  Indirect transfers are computed here from the
 * register or the memory operand (read through the caller's peek, like the
 * return address of a ret).  Far transfers, traps and xbegin are left to
 * single-stepping: the kernel or the CPU's transaction state decides.
 */
#include "disasm/internal.h"

static int indirect_target(const struct dis_insn *insn, const uint8_t *code,
			   const struct user_regs_struct *regs, dis_peek_fn peek, void *ctx,
			   uint64_t *next)
{
	const cs_insn *ci = dis_cs_decode(code, insn->len, insn->addr);
	const cs_x86_op *op;
	uint64_t ea, target;

	if (!ci || (ci->id != X86_INS_JMP && ci->id != X86_INS_CALL) ||
	    ci->detail->x86.op_count < 1)
		return -1;
	op = &ci->detail->x86.operands[0];
	if (op->type == X86_OP_REG)
		return dis_reg_value(regs, op->reg, next);
	if (op->type != X86_OP_MEM || op->size != 8 || !peek)
		return -1;
	if (dis_cs_op_address(ci, op, regs, &ea))
		return -1;
	if (peek(ctx, ea, &target))
		return -1;
	*next = target;
	return 0;
}

int dis_next_pc(const struct dis_insn *insn, const uint8_t *code,
		const struct user_regs_struct *regs, dis_peek_fn peek, void *ctx, uint64_t *next)
{
	struct user_regs_struct r = *regs;
	uint64_t ret;

	switch (insn->kind) {
	case DIS_OTHER:
	case DIS_SYSCALL:
		*next = insn->addr + insn->len;
		return 0;
	case DIS_JUMP:
	case DIS_CALL:
		*next = insn->target;
		return 0;
	case DIS_JCC:
		if (dis_emulate(insn, NULL, &r, NULL, NULL, NULL))
			return -1;
		*next = r.rip;
		return 0;
	case DIS_RET:
		if (!peek || peek(ctx, regs->rsp, &ret))
			return -1;
		*next = ret;
		return 0;
	case DIS_INDIRECT:
		return indirect_target(insn, code, regs, peek, ctx, next);
	default:
		return -1;
	}
}
