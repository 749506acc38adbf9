/*
 * decode: one instruction's bytes to a struct dis_insn.
 *
 * Capstone does the decoding; this file only sorts the result into the few
 * kinds the tracer cares about (decided from the instruction id, the operand
 * type and capstone's "branch_relative" group) and derives the access flags
 * of the explicit memory operands.
 *
 * Capstone 4's per-operand access flags are wrong for a number of common
 * instructions (cmpxchg reads only, test/bt "write", SSE and AVX stores
 * "read", masked stores (vpmaskmov, vmaskmovps) "read", setae reads,
 * rotates of memory and stmxcsr only read, frstor writes, lea and nop "read" an operand they never
 * touch). dis_cs_op_access() corrects those by instruction family before trusting what capstone
 * says; everything not listed keeps capstone's flags.
 *
 * The flags (memory, stack, string, locked, call) are derived from the same
 * list of accesses that dis_accesses() computes addresses for (access.c),
 * taken without registers, so that classification and the per-execution
 * answer can never disagree about what an instruction touches.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "disasm/internal.h"

static bool in_group(const cs_insn *ci, uint8_t group)
{
	for (int i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == group)
			return true;
	return false;
}

/* The mnemonic without prefixes: "lock cmpxchg" -> "cmpxchg". */
static const char *base_mnemonic(const cs_insn *ci)
{
	const char *sp = strrchr(ci->mnemonic, ' ');

	return sp ? sp + 1 : ci->mnemonic;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static const char *const no_access[] = {"lea", "nop", "clflush", "clflushopt", "clwb", NULL};
static const char *const read_only[] = {"cmp", "test", "bt", "frstor", NULL};
static const char *const read_write[] = {"cmpxchg", "cmpxchg8b", "cmpxchg16b", "xadd", "xchg",
					 "rol",	    "ror",	 "rcl",	       "rcr",  NULL};
static const char *const x87_store[] = {"fst",	  "fstp",     "fist",	 "fistp",    "fisttp",
					"fnstcw", "fnstsw",   "fnstenv", "fnsave",   "fbstp",
					"fxsave", "fxsave64", "stmxcsr", "vstmxcsr", NULL};
/* "mov*"/"vmov*"/"pextr*"... with memory first and a register source are
 * stores, which never read their destination. */
static const char *const store_prefixes[] = {
    "mov", "vmov", "pextr", "vpextr", "extractps", "vextract", "vpmaskmov", "vmaskmov", NULL};

/* How an instruction family's memory operands are accessed, whatever
 * capstone says; FAM_CAPSTONE trusts capstone. */
enum family {
	FAM_UNKNOWN, /* not looked up yet */
	FAM_CAPSTONE,
	FAM_NONE,
	FAM_READ,
	FAM_READ_WRITE,
	FAM_WRITE,
	FAM_STORE_FORM, /* a store when operand 0 is memory and operand 1 a register */
};

static bool starts_with_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (starts_with(s, *list))
			return true;
	return false;
}

static enum family family_by_mnemonic(const cs_insn *ci)
{
	const char *mn = base_mnemonic(ci);

	if (is_one_of(mn, no_access) || starts_with(mn, "prefetch"))
		return FAM_NONE;
	if (is_one_of(mn, read_only))
		return FAM_READ;
	if (is_one_of(mn, read_write))
		return FAM_READ_WRITE;
	if (starts_with(mn, "set") || is_one_of(mn, x87_store))
		return FAM_WRITE;
	if (starts_with_one_of(mn, store_prefixes))
		return FAM_STORE_FORM;
	return FAM_CAPSTONE;
}

/* The family depends on the mnemonic without prefixes, which is the same
 * for every instance of an instruction id, so it is worked out once per id
 * (string compares cost as much as the rest of a decode).  Racing threads
 * store the same value; relaxed atomics make that well defined. */
static _Atomic uint8_t families[X86_INS_ENDING];

static enum family family_of(const cs_insn *ci)
{
	uint8_t f;

	if (ci->id >= X86_INS_ENDING)
		return family_by_mnemonic(ci);
	f = atomic_load_explicit(&families[ci->id], memory_order_relaxed);
	if (f == FAM_UNKNOWN) {
		f = (uint8_t)family_by_mnemonic(ci);
		atomic_store_explicit(&families[ci->id], f, memory_order_relaxed);
	}
	return (enum family)f;
}

unsigned dis_cs_op_access(const cs_insn *ci, int i)
{
	const cs_x86 *x = &ci->detail->x86;
	uint8_t ac = x->operands[i].access;
	unsigned access = 0;

	switch (family_of(ci)) {
	case FAM_NONE:
		return 0;
	case FAM_READ:
		return DIS_READ;
	case FAM_READ_WRITE:
		return DIS_READ | DIS_WRITE;
	case FAM_WRITE:
		return DIS_WRITE;
	case FAM_STORE_FORM:
		if (i == 0 && x->op_count >= 2 && x->operands[1].type == X86_OP_REG)
			return DIS_WRITE;
		break;
	default:
		break;
	}
	if (ac & CS_AC_READ)
		access |= DIS_READ;
	if (ac & CS_AC_WRITE)
		access |= DIS_WRITE;
	return access ? access : DIS_READ; /* unknown: it touches memory somehow */
}

/* Transfers whose destination the kernel or a fault decides. */
static bool is_trap(const cs_insn *ci)
{
	switch (ci->id) {
	case X86_INS_HLT:
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INT:
	case X86_INS_INTO:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_SYSRET:
	case X86_INS_SYSEXIT:
		return true;
	default:
		return false;
	}
}

static enum dis_kind classify(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	bool imm = x->op_count > 0 && x->operands[0].type == X86_OP_IMM;

	switch (ci->id) {
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
		return DIS_SYSCALL;
	case X86_INS_INT:
		if (imm && x->operands[0].imm == 0x80)
			return DIS_SYSCALL;
		return DIS_TRAP;
	case X86_INS_RET:
		return DIS_RET;
	case X86_INS_JMP:
		return imm ? DIS_JUMP : DIS_INDIRECT;
	case X86_INS_CALL:
		return imm ? DIS_CALL : DIS_INDIRECT;
	case X86_INS_LJMP:
	case X86_INS_LCALL:
		return DIS_INDIRECT;
	default:
		if (is_trap(ci))
			return DIS_TRAP;
		return in_group(ci, CS_GRP_BRANCH_RELATIVE) ? DIS_JCC : DIS_OTHER;
	}
}

static void fill_operands(const cs_insn *ci, struct dis_insn *out)
{
	const cs_x86 *x = &ci->detail->x86;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_MEM)
			continue;
		out->mem_access |= dis_cs_op_access(ci, i);
		/* [rip + disp] always has a 32-bit displacement right after
		 * ModRM.  Capstone 4 says disp_size 2 when a 66 prefix is
		 * present (movdqa xmm0, [rip + x]), so its size is not asked. */
		if (op->mem.base == X86_REG_RIP) {
			out->rip_relative = true;
			out->disp_offset = x->encoding.modrm_offset + 1u;
		}
	}
	if (out->kind == DIS_JUMP || out->kind == DIS_CALL || out->kind == DIS_JCC)
		out->target = (uint64_t)x->operands[0].imm;
}

/* flags and access_size, from the instruction's accesses taken without registers. */
static void fill_flags(const cs_insn *ci, struct dis_insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n = dis_cs_accesses(ci, NULL, acc, DIS_MAX_ACCESSES);
	bool all_stack = n > 0;

	for (int i = 0; i < n; i++)
		all_stack = all_stack && acc[i].stack;
	if (n > 0)
		out->flags |= DIS_F_MEM;
	if (all_stack)
		out->flags |= DIS_F_STACK;
	if (x->prefix[0] == X86_PREFIX_LOCK || (ci->id == X86_INS_XCHG && out->mem_access))
		out->flags |= DIS_F_LOCKED;
	if (dis_cs_is_string(ci))
		out->flags |= DIS_F_STRING;
	if (ci->id == X86_INS_CALL || ci->id == X86_INS_LCALL)
		out->flags |= DIS_F_CALL;
	if (ci->id == X86_INS_LJMP || ci->id == X86_INS_LCALL)
		out->flags |= DIS_F_FAR;
	for (int i = 0; i < x->op_count && !out->access_size; i++)
		if (x->operands[i].type == X86_OP_MEM && dis_cs_op_access(ci, i))
			out->access_size = x->operands[i].size;
}

void dis_cs_fill(const cs_insn *ci, struct dis_insn *out)
{
	memset(out, 0, sizeof(*out));
	out->addr = ci->address;
	out->len = ci->size;
	out->kind = classify(ci);
	fill_operands(ci, out);
	fill_flags(ci, out);
}

/* "mnemonic op_str", with "..." at the end if it had to be cut. */
void dis_cs_set_text(const cs_insn *ci, struct dis_insn *out)
{
	size_t size = sizeof(out->text);
	int n =
	    snprintf(out->text, size, "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "", ci->op_str);

	if (n >= (int)size)
		memcpy(out->text + size - 4, "...", 4);
}

int dis_decode(const uint8_t *code, size_t n, uint64_t addr, struct dis_insn *out)
{
	const cs_insn *ci = dis_cs_decode(code, n, addr);

	if (!ci) {
		memset(out, 0, sizeof(*out));
		out->addr = addr;
		out->kind = DIS_INVALID;
		snprintf(out->text, sizeof(out->text), "(bad)");
		return -1;
	}
	dis_cs_fill(ci, out);
	dis_cs_set_text(ci, out);
	return 0;
}
