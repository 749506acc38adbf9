/*
 * Location expressions: the address of a variable as a stopped thread sees it.
 *
 * dwarf_getlocation_addr picks the variable's location for the pc (location
 * lists included) and it is evaluated here on a small stack machine over
 * the thread's registers and memory: libdw decodes the operations but has
 * no public evaluator.  DW_OP_fbreg evaluates the function's
 * DW_AT_frame_base, which is usually DW_OP_call_frame_cfa: the CFA comes
 * from libdw's CFI (.eh_frame, else .debug_frame) for the pc, so it is
 * right even on the function's first instruction, before the prologue has
 * set up rbp.  Only frame 0 is understood: every register is the thread's
 * current one.  DW_OP_form_tls_address adds the start of the module's TLS
 * block in the thread (tls.c).
 *
 * A location that names a register, or computes a value (DW_OP_stack_value,
 * DW_OP_implicit_value, DW_OP_entry_value), has no address to watch; that
 * is an error with the reason, as is a location list with no entry for the
 * pc (optimized out there).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dwarf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

#define EVAL_STACK 64
#define MAX_NEST   4

/* --- registers --- */

static const char *const reg_names[17] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi",
					  "rbp", "rsp", "r8",  "r9",  "r10", "r11",
					  "r12", "r13", "r14", "r15", "rip"};

/* DWARF register number (x86-64 psABI) to its user_regs_struct value. */
static bool reg_value(const struct user_regs_struct *r, unsigned n, uint64_t *v)
{
	const unsigned long long *by_dwarf[17] = {
	    &r->rax, &r->rdx, &r->rcx, &r->rbx, &r->rsi, &r->rdi, &r->rbp, &r->rsp, &r->r8,
	    &r->r9,  &r->r10, &r->r11, &r->r12, &r->r13, &r->r14, &r->r15, &r->rip};

	if (n >= 17)
		return false;
	*v = *by_dwarf[n];
	return true;
}

static void reg_name(unsigned n, char *buf, size_t len)
{
	if (n < 17)
		snprintf(buf, len, "%s", reg_names[n]);
	else if (n >= 17 && n <= 32)
		snprintf(buf, len, "xmm%u", n - 17);
	else
		snprintf(buf, len, "DWARF register %u", n);
}

/* --- the stack machine --- */

struct stack {
	uint64_t v[EVAL_STACK];
	size_t n;
};

static int eval_expr(struct symi_eval *c, Dwarf_Attribute *attr, const Dwarf_Op *ops, size_t n,
		     int nest, uint64_t *out);

int symi_eval_fail(struct symi_eval *c, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "'%s' %s", c->name, what);
	return -1;
}

static int register_location(struct symi_eval *c, unsigned reg)
{
	char name[32];

	reg_name(reg, name, sizeof(name));
	return symi_eval_fail(c, "lives in register %s at this point", name);
}

/* The CFI row for run-time address PC (.eh_frame, else .debug_frame), to
 * free; NULL when there is none. */
static Dwarf_Frame *frame_at(struct symi_eval *c, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(c->s->dwfl, pc);
	Dwarf_CFI *cfis[2] = {NULL, NULL};
	Dwarf_Addr biases[2] = {0, 0};
	Dwarf_Frame *frame;
	int i;

	if (mod) {
		cfis[0] = dwfl_module_eh_cfi(mod, &biases[0]);
		cfis[1] = dwfl_module_dwarf_cfi(mod, &biases[1]);
	}
	for (i = 0; i < 2; i++)
		if (cfis[i] && dwarf_cfi_addrframe(cfis[i], pc - biases[i], &frame) == 0)
			return frame;
	return NULL;
}

/* Canonical frame address of frame 0, from the module's CFI at the pc. */
static int frame_cfa(struct symi_eval *c, int nest, uint64_t *cfa)
{
	Dwarf_Frame *frame = frame_at(c, c->view->regs->rip);
	Dwarf_Op *ops;
	size_t nops;
	int rc;

	if (!frame)
		return symi_eval_fail(c, "has no address: %s",
				      "no call frame information for this pc");
	rc = dwarf_frame_cfa(frame, &ops, &nops) == 0
		 ? eval_expr(c, NULL, ops, nops, nest + 1, cfa)
		 : symi_eval_fail(c, "has no address: %s", "no CFA rule at this pc");
	free(frame);
	return rc;
}

int symi_frame_cfa(struct symi_eval *c, uint64_t *cfa)
{
	return frame_cfa(c, 0, cfa);
}

/* A frame base in register REG (clang's rbp) before the prologue has set
 * it: the value the prologue gives it, the CFA less the offset by which
 * the CFI finds the CFA from REG once the prologue is over.  1 with *base;
 * 0 when the pc is past the prologue, or the CFI says no such thing. */
static int base_before_prologue(struct symi_eval *c, unsigned reg, int nest, uint64_t *base)
{
	Dwarf_Addr end;
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int64_t offset = 0;
	bool from_reg = false;
	uint64_t cfa = 0;

	if (!symi_prologue_end(c->func, c->view->regs->rip - c->bias, &end))
		return 0;
	frame = frame_at(c, end + c->bias);
	if (frame && dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
		if (ops[0].atom == DW_OP_bregx && ops[0].number == reg) {
			from_reg = true;
			offset = (int64_t)ops[0].number2;
		} else if (ops[0].atom == DW_OP_breg0 + reg) {
			from_reg = true;
			offset = (int64_t)ops[0].number;
		}
	}
	free(frame);
	if (!from_reg || frame_cfa(c, nest, &cfa) < 0)
		return 0;
	*base = cfa - (uint64_t)offset;
	return 1;
}

/* DW_AT_frame_base of the function: a location whose address is the base. */
static int frame_base(struct symi_eval *c, int nest, uint64_t *base)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t n;
	int k;

	if (!c->func || !dwarf_attr_integrate(c->func, DW_AT_frame_base, &at))
		return symi_eval_fail(c, "has no address: %s", "its function has no frame base");
	k = dwarf_getlocation_addr(&at, c->view->regs->rip - c->bias, &ops, &n, 1);
	if (k <= 0)
		return symi_eval_fail(c, "has no address: %s", "no frame base at this pc");
	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		unsigned reg = ops[0].atom - DW_OP_reg0;

		if (base_before_prologue(c, reg, nest, base) > 0)
			return 0;
		if (!reg_value(c->view->regs, reg, base))
			return register_location(c, reg);
		return 0;
	}
	return eval_expr(c, &at, ops, n, nest + 1, base);
}

static int push(struct symi_eval *c, struct stack *st, uint64_t v)
{
	if (st->n == EVAL_STACK)
		return symi_eval_fail(c, "has no address: %s", "DWARF expression too deep");
	st->v[st->n++] = v;
	return 0;
}

static int pop(struct symi_eval *c, struct stack *st, uint64_t *v)
{
	if (!st->n)
		return symi_eval_fail(c, "has no address: %s", "malformed DWARF expression");
	*v = st->v[--st->n];
	return 0;
}

static int push_reg(struct symi_eval *c, struct stack *st, unsigned reg, int64_t offset)
{
	uint64_t v = 0;
	char name[32];

	if (!reg_value(c->view->regs, reg, &v)) {
		reg_name(reg, name, sizeof(name));
		return symi_eval_fail(c, "has no address: it is based on %s", name);
	}
	return push(c, st, v + (uint64_t)offset);
}

static int deref(struct symi_eval *c, struct stack *st, uint64_t size)
{
	uint64_t a = 0, v = 0;

	if (pop(c, st, &a) < 0)
		return -1;
	if (c->view->peek(c->view->ctx, a, &v) < 0)
		return symi_eval_fail(c, "has no address: %s",
				      "its location reads unreadable memory");
	if (size < 8)
		v &= (1ull << (size * 8)) - 1;
	return push(c, st, v);
}

static int binary(struct symi_eval *c, struct stack *st, unsigned atom)
{
	uint64_t a = 0, b = 0;

	if (pop(c, st, &b) < 0 || pop(c, st, &a) < 0)
		return -1;
	switch (atom) {
	case DW_OP_plus:
		return push(c, st, a + b);
	case DW_OP_minus:
		return push(c, st, a - b);
	case DW_OP_mul:
		return push(c, st, a * b);
	case DW_OP_and:
		return push(c, st, a & b);
	case DW_OP_or:
		return push(c, st, a | b);
	case DW_OP_xor:
		return push(c, st, a ^ b);
	case DW_OP_shl:
		return push(c, st, b < 64 ? a << b : 0);
	default: /* DW_OP_shr */
		return push(c, st, b < 64 ? a >> b : 0);
	}
}

/* Start of module M's TLS block in the thread; the reason names the variable. */
int symi_eval_tls_base(struct symi_eval *c, struct sym_mod *m, uint64_t *base)
{
	char why[160] = "";

	if (symi_tls_block(c->s, m, c->view, base, why, sizeof(why)) == 0)
		return 0;
	snprintf(c->err, c->errlen, "'%s': %s", c->name, why);
	return -1;
}

static int tls_address(struct symi_eval *c, struct stack *st)
{
	uint64_t off = 0, base = 0;

	if (pop(c, st, &off) < 0 || symi_eval_tls_base(c, c->m, &base) < 0)
		return -1;
	return push(c, st, base + off);
}

/* DW_OP_addrx and friends: an address in .debug_addr. */
static int indexed_address(struct symi_eval *c, struct stack *st, Dwarf_Attribute *attr,
			   const Dwarf_Op *op)
{
	Dwarf_Attribute res;
	Dwarf_Addr a;

	if (!attr || dwarf_getlocation_attr(attr, op, &res) != 0 || dwarf_formaddr(&res, &a) != 0)
		return symi_eval_fail(c, "has no address: %s", "unreadable DW_OP_addrx");
	return push(c, st, a + (op->atom == DW_OP_constx ? 0 : c->bias));
}

/* Operations that end the search for an address, with the reason. */
static int no_address(struct symi_eval *c, const Dwarf_Op *ops, size_t i)
{
	unsigned atom = ops[i].atom;

	if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)
		return register_location(c, atom - DW_OP_reg0);
	if (atom == DW_OP_regx)
		return register_location(c, (unsigned)ops[i].number);
	if (atom == DW_OP_piece || atom == DW_OP_bit_piece)
		return symi_eval_fail(c, "is split into pieces at this point");
	if (atom == DW_OP_entry_value || atom == DW_OP_GNU_entry_value)
		return symi_eval_fail(c, "is optimized out at this point (%s)",
				      "DWARF keeps only its value on entry to its function");
	return symi_eval_fail(c, "has no address at this point (%s)",
			      "its value is computed, not stored");
}

static int eval_op(struct symi_eval *c, struct stack *st, Dwarf_Attribute *attr, const Dwarf_Op *op,
		   int nest)
{
	unsigned atom = op->atom;
	uint64_t a = 0, b = 0;
	char msg[64];

	if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31)
		return push(c, st, atom - DW_OP_lit0);
	if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31)
		return push_reg(c, st, atom - DW_OP_breg0, (int64_t)op->number);
	switch (atom) {
	case DW_OP_addr:
		return push(c, st, op->number + c->bias);
	case DW_OP_addrx:
	case DW_OP_GNU_addr_index:
	case DW_OP_constx:
	case DW_OP_GNU_const_index:
		return indexed_address(c, st, attr, op);
	case DW_OP_const1u:
	case DW_OP_const1s:
	case DW_OP_const2u:
	case DW_OP_const2s:
	case DW_OP_const4u:
	case DW_OP_const4s:
	case DW_OP_const8u:
	case DW_OP_const8s:
	case DW_OP_constu:
	case DW_OP_consts:
		return push(c, st, op->number);
	case DW_OP_bregx:
		return push_reg(c, st, (unsigned)op->number, (int64_t)op->number2);
	case DW_OP_fbreg:
		if (frame_base(c, nest, &a) < 0)
			return -1;
		return push(c, st, a + op->number);
	case DW_OP_call_frame_cfa:
		if (frame_cfa(c, nest, &a) < 0)
			return -1;
		return push(c, st, a);
	case DW_OP_plus_uconst:
		if (pop(c, st, &a) < 0)
			return -1;
		return push(c, st, a + op->number);
	case DW_OP_plus:
	case DW_OP_minus:
	case DW_OP_mul:
	case DW_OP_and:
	case DW_OP_or:
	case DW_OP_xor:
	case DW_OP_shl:
	case DW_OP_shr:
		return binary(c, st, atom);
	case DW_OP_neg:
		if (pop(c, st, &a) < 0)
			return -1;
		return push(c, st, -a);
	case DW_OP_dup:
		if (pop(c, st, &a) < 0 || push(c, st, a) < 0)
			return -1;
		return push(c, st, a);
	case DW_OP_drop:
		return pop(c, st, &a);
	case DW_OP_over:
		if (st->n < 2)
			return pop(c, st, &a); /* reports the malformed expression */
		return push(c, st, st->v[st->n - 2]);
	case DW_OP_swap:
		if (pop(c, st, &a) < 0 || pop(c, st, &b) < 0 || push(c, st, a) < 0)
			return -1;
		return push(c, st, b);
	case DW_OP_deref:
		return deref(c, st, 8);
	case DW_OP_deref_size:
		return deref(c, st, op->number);
	case DW_OP_form_tls_address:
	case DW_OP_GNU_push_tls_address:
		return tls_address(c, st);
	case DW_OP_nop:
		return 0;
	default:
		snprintf(msg, sizeof(msg), "DWARF operation %#x is not supported", atom);
		return symi_eval_fail(c, "has no address: %s", msg);
	}
}

/* Evaluate a DWARF expression or memory location description: *out is the
 * value on top of the stack (for a location, the address). */
static int eval_expr(struct symi_eval *c, Dwarf_Attribute *attr, const Dwarf_Op *ops, size_t n,
		     int nest, uint64_t *out)
{
	struct stack st = {.n = 0};
	size_t i;

	if (nest > MAX_NEST)
		return symi_eval_fail(c, "has no address: %s", "DWARF expression nests too deep");
	for (i = 0; i < n; i++) {
		unsigned atom = ops[i].atom;

		if ((atom >= DW_OP_reg0 && atom <= DW_OP_reg31) || atom == DW_OP_regx ||
		    atom == DW_OP_piece || atom == DW_OP_bit_piece || atom == DW_OP_stack_value ||
		    atom == DW_OP_implicit_value || atom == DW_OP_entry_value ||
		    atom == DW_OP_GNU_entry_value || atom == DW_OP_implicit_pointer ||
		    atom == DW_OP_GNU_implicit_pointer)
			return no_address(c, ops, i);
		if (eval_op(c, &st, attr, &ops[i], nest) < 0)
			return -1;
	}
	return pop(c, &st, out);
}

/* --- one variable DIE --- */

/* A location that is a register of the thread's alone, or a value computed
 * from them (DW_OP_stack_value): 1 with *value, the reason it has no
 * address left in c->err; 0: it is some other location. */
static int value_location(struct symi_eval *c, Dwarf_Attribute *at, const Dwarf_Op *ops, size_t n,
			  uint64_t *value)
{
	unsigned reg;

	if (ops[n - 1].atom == DW_OP_stack_value) {
		if (eval_expr(c, at, ops, n - 1, 0, value) < 0)
			return -1;
		symi_eval_fail(c, "has no address at this point (%s)",
			       "its value is computed, not stored");
		return 1;
	}
	if (n != 1 || !((ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) ||
			ops[0].atom == DW_OP_regx))
		return 0;
	reg = ops[0].atom == DW_OP_regx ? (unsigned)ops[0].number
					: (unsigned)(ops[0].atom - DW_OP_reg0);
	register_location(c, reg);
	return reg_value(c->view->regs, reg, value) ? 1 : -1;
}

int symi_variable_location(struct symi_eval *c, Dwarf_Die *var, struct sym_var *out)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t n;
	int k;

	if (!dwarf_attr_integrate(var, DW_AT_location, &at)) {
		if (dwarf_attr_integrate(var, DW_AT_const_value, &at))
			return symi_eval_fail(c, "is a constant (%s)", "it has no address");
		return symi_eval_fail(c, "is optimized out");
	}
	k = dwarf_getlocation_addr(&at, c->view->regs->rip - c->bias, &ops, &n, 1);
	if (k < 0)
		return symi_eval_fail(c, "has no address: %s", dwarf_errmsg(-1));
	if (k == 0 || n == 0)
		return symi_eval_fail(c, "is optimized out at this point");
	k = value_location(c, &at, ops, n, &out->value);
	if (k != 0) {
		out->no_address = out->value_known = k > 0;
		return k > 0 ? 0 : -1;
	}
	return eval_expr(c, &at, ops, n, 0, &out->addr);
}

int symi_variable_address(struct symi_eval *c, Dwarf_Die *var, uint64_t *addr)
{
	struct sym_var v = {0};

	if (symi_variable_location(c, var, &v) < 0 || v.no_address)
		return -1;
	*addr = v.addr;
	return 0;
}
