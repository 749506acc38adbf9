/*
 * displace: run an instruction away from home, or pretend it ran.
 *
 * An out-of-line slot is the instruction copied to slot_addr followed by a
 * "jmp rel32" back to the instruction after the original.  Copying is exact
 * for everything whose meaning does not depend on where it sits; the one
 * position-dependent field x86-64 allows outside branches is a rip-relative
 * disp32, which is rebased by the distance the instruction moved.  A jcc
 * (rel8 or rel32) becomes "0F 8x rel32" aimed at the original target, so
 * the slot leaves either to the target or, falling through, via the jump
 * back.  Everything is computed in 64 bits and refused when a rel32 or
 * disp32 cannot reach.
 *
 * jmp, call and ret are emulated on the register file instead (call and
 * ret push and pop through the caller's memory callbacks), as are jrcxz,
 * jecxz and loop*, which have no rel32 form.  dis_emulate() also evaluates
 * any other jcc from eflags, so a caller whose slot is out of reach of the
 * jcc target can emulate it too.  struct dis_insn keeps no operand bytes,
 * so the condition and ret's imm16 are read back from insn->text, whose
 * format ("[prefix ]mnemonic [number]") this module writes itself.
 *
 * An indirect call (call rax, call [rip + x]) is emulated too, its target
 * read as next_pc.c reads it.  Run from a slot it would push the slot's
 * address as its return address: the callee would come back through the
 * slot, and a thread still inside it when the slots go (a detach) would
 * return into unmapped memory; and no unwinder knows the slot.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "disasm/internal.h"

#define JMP_REL32_LEN 5
#define JCC_REL32_LEN 6

/* Writes a rel32 for a jump of len bytes at from (ending at from + len) to
 * to; -1 if it does not reach. */
static int put_rel32(uint8_t *p, uint64_t from, unsigned len, uint64_t to)
{
	int64_t rel = (int64_t)(to - (from + len));
	int32_t rel32 = (int32_t)rel;

	if (rel < INT32_MIN || rel > INT32_MAX)
		return -1;
	memcpy(p, &rel32, sizeof(rel32));
	return 0;
}

/* Appends "jmp rel32" to to at out[pos]; returns the new length or -1. */
static int put_jmp_back(uint8_t *out, int pos, uint64_t slot_addr, uint64_t to)
{
	if (pos + JMP_REL32_LEN > DIS_SLOT_SIZE)
		return -1;
	out[pos] = 0xe9;
	if (put_rel32(out + pos + 1, slot_addr + pos, JMP_REL32_LEN, to))
		return -1;
	return pos + JMP_REL32_LEN;
}

static int rebase_disp(const struct dis_insn *insn, uint8_t *copy, uint64_t slot_addr)
{
	int32_t disp;
	int64_t moved = (int64_t)(insn->addr - slot_addr);
	int64_t rebased;

	if (insn->disp_offset + sizeof(disp) > insn->len)
		return -1;
	memcpy(&disp, copy + insn->disp_offset, sizeof(disp));
	rebased = (int64_t)disp + moved;
	if (rebased < INT32_MIN || rebased > INT32_MAX)
		return -1;
	disp = (int32_t)rebased;
	memcpy(copy + insn->disp_offset, &disp, sizeof(disp));
	return 0;
}

static int slot_copy(const struct dis_insn *insn, const uint8_t *code, uint64_t slot_addr,
		     uint8_t *out)
{
	if (insn->len == 0 || insn->len > DIS_MAX_INSN)
		return -1;
	memcpy(out, code, insn->len);
	if (insn->rip_relative && rebase_disp(insn, out, slot_addr))
		return -1;
	return put_jmp_back(out, (int)insn->len, slot_addr, insn->addr + insn->len);
}

/* The condition nibble of a jcc rel8 (7x) or rel32 (0F 8x); -1 otherwise. */
static int jcc_condition(const struct dis_insn *insn, const uint8_t *code)
{
	const cs_insn *ci = dis_cs_decode(code, insn->len, insn->addr);
	const uint8_t *opc;

	if (!ci)
		return -1;
	opc = ci->detail->x86.opcode;
	if (opc[0] >= 0x70 && opc[0] <= 0x7f)
		return opc[0] & 0xf;
	if (opc[0] == 0x0f && opc[1] >= 0x80 && opc[1] <= 0x8f)
		return opc[1] & 0xf;
	return -1;
}

static int slot_jcc(const struct dis_insn *insn, const uint8_t *code, uint64_t slot_addr,
		    uint8_t *out)
{
	int cc = jcc_condition(insn, code);

	if (cc < 0)
		return -1;
	out[0] = 0x0f;
	out[1] = (uint8_t)(0x80 | cc);
	if (put_rel32(out + 2, slot_addr, JCC_REL32_LEN, insn->target))
		return -1;
	return put_jmp_back(out, JCC_REL32_LEN, slot_addr, insn->addr + insn->len);
}

int dis_build_slot(const struct dis_insn *insn, const uint8_t *code, uint64_t slot_addr,
		   uint8_t out[DIS_SLOT_SIZE])
{
	if (dis_needs_emulation(insn))
		return -1;
	switch (insn->kind) {
	case DIS_OTHER:
	case DIS_INDIRECT:
	case DIS_SYSCALL:
	case DIS_TRAP:
		return slot_copy(insn, code, slot_addr, out);
	case DIS_JCC:
		return slot_jcc(insn, code, slot_addr, out);
	default:
		return -1;
	}
}

/* Splits insn->text into its mnemonic (prefixes dropped) and, if the last
 * word is a number, that number. */
static void parse_text(const struct dis_insn *insn, char mn[16], uint64_t *num)
{
	char buf[sizeof(insn->text)];
	char *words[4];
	int n = 0;
	char *save = NULL;

	*num = 0;
	mn[0] = '\0';
	memcpy(buf, insn->text, sizeof(buf));
	buf[sizeof(buf) - 1] = '\0';
	for (char *w = strtok_r(buf, " ", &save); w && n < 4; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	if (n > 1 && words[n - 1][0] >= '0' && words[n - 1][0] <= '9')
		*num = strtoull(words[--n], NULL, 0);
	if (n > 0)
		snprintf(mn, 16, "%s", words[n - 1]);
}

#define F_CF 0x001
#define F_PF 0x004
#define F_ZF 0x040
#define F_SF 0x080
#define F_OF 0x800

/* Condition nibble cc (as in 7x/0F 8x) evaluated on eflags. */
static bool condition_holds(int cc, uint64_t fl)
{
	bool sf_ne_of = !(fl & F_SF) != !(fl & F_OF);
	bool base;

	switch (cc >> 1) {
	case 0:
		base = fl & F_OF;
		break;
	case 1:
		base = fl & F_CF;
		break;
	case 2:
		base = fl & F_ZF;
		break;
	case 3:
		base = fl & (F_CF | F_ZF);
		break;
	case 4:
		base = fl & F_SF;
		break;
	case 5:
		base = fl & F_PF;
		break;
	case 6:
		base = sf_ne_of;
		break;
	default:
		base = (fl & F_ZF) || sf_ne_of;
		break;
	}
	return (cc & 1) ? !base : base;
}

static const char *const jcc_names[16] = {"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
					  "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg"};

/* Whether the jcc/jrcxz/loop named mn is taken; may decrement rcx. */
static int branch_taken(const char *mn, struct user_regs_struct *r, bool *taken)
{
	for (int cc = 0; cc < 16; cc++) {
		if (strcmp(mn, jcc_names[cc]) == 0) {
			*taken = condition_holds(cc, r->eflags);
			return 0;
		}
	}
	if (strcmp(mn, "jrcxz") == 0)
		*taken = r->rcx == 0;
	else if (strcmp(mn, "jecxz") == 0)
		*taken = (uint32_t)r->rcx == 0;
	else if (strcmp(mn, "loop") == 0)
		*taken = --r->rcx != 0;
	else if (strcmp(mn, "loope") == 0)
		*taken = --r->rcx != 0 && (r->eflags & F_ZF);
	else if (strcmp(mn, "loopne") == 0)
		*taken = --r->rcx != 0 && !(r->eflags & F_ZF);
	else
		return -1;
	return 0;
}

static bool is_rcx_branch(const char *mn)
{
	return strcmp(mn, "jrcxz") == 0 || strcmp(mn, "jecxz") == 0 || strncmp(mn, "loop", 4) == 0;
}

/* call through a register or memory; not a far call (lcall), which
 * user code does not make and which stays with the CPU. */
static bool is_near_indirect_call(const struct dis_insn *insn)
{
	return insn->kind == DIS_INDIRECT && (insn->flags & (DIS_F_CALL | DIS_F_FAR)) == DIS_F_CALL;
}

bool dis_needs_emulation(const struct dis_insn *insn)
{
	char mn[16];
	uint64_t num;

	switch (insn->kind) {
	case DIS_JUMP:
	case DIS_CALL:
	case DIS_RET:
		return true;
	case DIS_INDIRECT:
		return is_near_indirect_call(insn);
	case DIS_JCC:
		parse_text(insn, mn, &num);
		return is_rcx_branch(mn);
	default:
		return false;
	}
}

static int emulate_call(const struct dis_insn *insn, uint64_t target, struct user_regs_struct *r,
			dis_poke_fn poke, void *ctx)
{
	if (!poke || poke(ctx, r->rsp - 8, insn->addr + insn->len))
		return -1;
	r->rsp -= 8;
	r->rip = target;
	return 0;
}

/* The target is read before the push, as the CPU does: `call [rsp + 8]`
 * means the stack as it was. */
static int emulate_indirect_call(const struct dis_insn *insn, const uint8_t *code,
				 struct user_regs_struct *r, dis_peek_fn peek, dis_poke_fn poke,
				 void *ctx)
{
	uint64_t target;

	if (!code || !is_near_indirect_call(insn) || dis_next_pc(insn, code, r, peek, ctx, &target))
		return -1;
	return emulate_call(insn, target, r, poke, ctx);
}

static int emulate_ret(const struct dis_insn *insn, struct user_regs_struct *r, dis_peek_fn peek,
		       void *ctx)
{
	char mn[16];
	uint64_t imm, ret;

	parse_text(insn, mn, &imm);
	if (!peek || peek(ctx, r->rsp, &ret))
		return -1;
	r->rip = ret;
	r->rsp += 8 + (imm & 0xffff);
	return 0;
}

static int emulate_jcc(const struct dis_insn *insn, struct user_regs_struct *r)
{
	char mn[16];
	uint64_t num;
	bool taken;

	parse_text(insn, mn, &num);
	if (branch_taken(mn, r, &taken))
		return -1;
	r->rip = taken ? insn->target : insn->addr + insn->len;
	return 0;
}

int dis_emulate(const struct dis_insn *insn, const uint8_t *code, struct user_regs_struct *regs,
		dis_peek_fn peek, dis_poke_fn poke, void *ctx)
{
	struct user_regs_struct r = *regs;
	int rc;

	switch (insn->kind) {
	case DIS_JUMP:
		r.rip = insn->target;
		rc = 0;
		break;
	case DIS_CALL:
		rc = emulate_call(insn, insn->target, &r, poke, ctx);
		break;
	case DIS_INDIRECT:
		rc = emulate_indirect_call(insn, code, &r, peek, poke, ctx);
		break;
	case DIS_RET:
		rc = emulate_ret(insn, &r, peek, ctx);
		break;
	case DIS_JCC:
		rc = emulate_jcc(insn, &r);
		break;
	default:
		return -1;
	}
	if (rc)
		return -1;
	*regs = r;
	return 0;
}
