/*
 * Parameters on a function's first instructions.
 *
 * enter(F) stops a thread on F's first instruction, where a schedule most
 * wants to read F's arguments (wait any enter(withdraw), then assert
 * A.amount > 0).  Unoptimised code keeps a parameter in the frame, and its
 * DWARF location (DW_OP_fbreg) is right from the first instruction on, but
 * the slot holds nothing yet: the prologue stores the argument registers
 * there.  Until then the value is where the x86-64 psABI passes it, and
 * that is where it is read.  gdb avoids the question by stopping past the
 * prologue; cctrace stops at the entry, where [rsp] is the return address
 * that return(F) needs.
 *
 * clang's frame base is rbp, which the prologue sets too: before then
 * locexpr.c takes it as the CFA less the offset the CFI gives from rbp
 * once the prologue is over, so that every slot is where it will be.
 *
 * The prologue ends at the first line-table row after the function's entry
 * (as gdb's skip_prologue_using_sal finds it).  Parameters are classified
 * in order as the psABI does: an integer, enum, pointer or reference takes
 * the next of rdi, rsi, rdx, rcx, r8, r9; a float an SSE register; an
 * aggregate of up to 16 bytes one register per eightbyte, an integer one
 * where an integer lies in it; an aggregate over 16 bytes, and whatever
 * does not fit in the registers left, is the caller's copy in memory,
 * where its DWARF location is right from the start.  A parameter in a
 * register that is not a scalar (a small struct), or one of a type not
 * worked out, is refused with the reason, never read from a slot that
 * holds something else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dwarf.h>
#include <stdlib.h>

#include "symbols/internal.h"

/* How the psABI passes one parameter: in memory, or in int_regs integer
 * registers (and perhaps SSE ones); unknown for what is not worked out. */
struct arg_pass {
	bool memory, unknown;
	int int_regs;
};

/* Marks in ints[] the eightbytes of an aggregate where an integer scalar
 * of type T, at byte OFFSET, lies: those eightbytes go in integer
 * registers, the others in SSE ones.  False for what is not worked out. */
static bool mark_integers(struct sym_space *s, const struct sym_type *t, uint64_t offset,
			  bool ints[2], int depth)
{
	const struct sym_type *elem;
	Dwarf_Die real, m;
	uint64_t i, at_bit;

	if (depth > 8 || offset >= 16)
		return false;
	if (sym_type_is_integer(t)) {
		ints[offset / 8] = true;
		return true;
	}
	switch (sym_type_kind(t)) {
	case SYM_T_FLOAT:
		return sym_type_size(t) == 4 || sym_type_size(t) == 8;
	case SYM_T_ARRAY:
		elem = sym_type_target(t);
		for (i = 0; elem && i < sym_type_count(t); i++)
			if (!mark_integers(s, elem, offset + i * sym_type_size(elem), ints,
					   depth + 1))
				return false;
		return elem != NULL;
	case SYM_T_STRUCT:
		real = t->real;
		if (dwarf_child(&real, &m) != 0)
			return true;
		do {
			unsigned bits;

			if (dwarf_tag(&m) != DW_TAG_member && dwarf_tag(&m) != DW_TAG_inheritance)
				continue;
			if (!symi_member_bit_offset(&m, &at_bit, &bits) ||
			    !mark_integers(s, symi_type_of(s, &m), offset + at_bit / 8, ints,
					   depth + 1))
				return false;
		} while (dwarf_siblingof(&m, &m) == 0);
		return true;
	default:
		return false;
	}
}

static struct arg_pass how_passed(struct sym_space *s, Dwarf_Die *param)
{
	const struct sym_type *t = symi_type_of(s, param);
	uint64_t size = sym_type_size(t);
	bool ints[2] = {false, false};

	switch (sym_type_kind(t)) {
	case SYM_T_FLOAT:
		return (struct arg_pass){.memory = size != 4 && size != 8};
	case SYM_T_STRUCT:
	case SYM_T_ARRAY:
		if (size > 16)
			return (struct arg_pass){.memory = true};
		if (!mark_integers(s, t, 0, ints, 0))
			return (struct arg_pass){.unknown = true};
		return (struct arg_pass){.int_regs = ints[0] + (size > 8 && ints[1])};
	default:
		if (!mark_integers(s, t, 0, ints, 0) || size > 8)
			return (struct arg_pass){.unknown = true};
		return (struct arg_pass){.int_regs = 1};
	}
}

/* Does FUNC return an aggregate in memory, through a hidden pointer in rdi? */
static bool returns_in_memory(struct sym_space *s, Dwarf_Die *func)
{
	const struct sym_type *t = symi_type_of(s, func);

	return t && sym_type_kind(t) == SYM_T_STRUCT && sym_type_size(t) > 16;
}

bool symi_prologue_end(Dwarf_Die *func, Dwarf_Addr pc, Dwarf_Addr *end)
{
	Dwarf_Addr entry, high, next = 0, a;
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n, i;

	if (!func || dwarf_entrypc(func, &entry) != 0 || dwarf_highpc(func, &high) != 0 ||
	    pc < entry || !dwarf_diecu(func, &cu, NULL, NULL) ||
	    dwarf_getsrclines(&cu, &lines, &n) != 0)
		return false;
	for (i = 0; i < n; i++) {
		Dwarf_Line *line = dwarf_onesrcline(lines, i);

		if (line && dwarf_lineaddr(line, &a) == 0 && a > entry && (!next || a < next))
			next = a;
	}
	if (!next || next >= high || pc >= next)
		return false;
	*end = next;
	return true;
}

static uint64_t arg_register(const struct user_regs_struct *r, int i)
{
	const unsigned long long *regs[] = {&r->rdi, &r->rsi, &r->rdx, &r->rcx, &r->r8, &r->r9};

	return *regs[i];
}

/* Is VAR a parameter of FUNC itself (not of a block or an inlined call)? */
static bool parameter_of(Dwarf_Die *func, Dwarf_Die *var)
{
	Dwarf_Die p;

	if (dwarf_tag(var) != DW_TAG_formal_parameter || dwarf_child(func, &p) != 0)
		return false;
	do
		if (dwarf_dieoffset(&p) == dwarf_dieoffset(var))
			return true;
	while (dwarf_siblingof(&p, &p) == 0);
	return false;
}

/* The eightbyte at OFFSET in the caller's argument area, which starts at
 * the CFA: a parameter passed on the stack.  gcc copies a char or short
 * one into its own frame in the prologue, where DWARF places it. */
static int stack_argument(struct symi_eval *c, uint64_t offset, uint64_t *value)
{
	uint64_t cfa;

	if (symi_frame_cfa(c, &cfa) < 0)
		return -1;
	if (c->view->peek(c->view->ctx, cfa + offset, value) < 0)
		return symi_eval_fail(c, "has no address: %s", "its stack slot is unreadable");
	return 1;
}

static bool is_aggregate(const struct sym_type *t)
{
	return sym_type_kind(t) == SYM_T_STRUCT || sym_type_kind(t) == SYM_T_ARRAY;
}

int symi_entry_parameter(struct symi_eval *c, Dwarf_Die *var, uint64_t *value)
{
	uint64_t stack_offset = 0;
	Dwarf_Addr end;
	int next_reg;
	Dwarf_Die p;

	if (!c->func || !parameter_of(c->func, var) ||
	    !symi_prologue_end(c->func, c->view->regs->rip - c->bias, &end))
		return 0;
	next_reg = returns_in_memory(c->s, c->func) ? 1 : 0;
	dwarf_child(c->func, &p);
	for (;;) {
		struct arg_pass pass = {.unknown = true};
		bool fits;

		if (dwarf_tag(&p) == DW_TAG_formal_parameter)
			pass = how_passed(c->s, &p);
		/* what does not fit in the registers left goes in memory */
		fits = !pass.memory && next_reg + pass.int_regs <= 6;
		if (dwarf_dieoffset(&p) == dwarf_dieoffset(var)) {
			if (!pass.unknown && !fits && is_aggregate(symi_type_of(c->s, var)))
				return 0; /* the caller's copy: its slot is valid already */
			if (!pass.unknown && !fits)
				return stack_argument(c, stack_offset, value);
			if (pass.unknown || pass.int_regs != 1 ||
			    is_aggregate(symi_type_of(c->s, var)))
				break;
			*value = arg_register(c->view->regs, next_reg);
			return 1;
		}
		if (dwarf_tag(&p) == DW_TAG_formal_parameter && pass.unknown)
			break;
		if (fits)
			next_reg += pass.int_regs;
		else if (!pass.unknown)
			stack_offset += (sym_type_size(symi_type_of(c->s, &p)) + 7) & ~7ull;
		if (dwarf_siblingof(&p, &p) != 0)
			break;
	}
	return symi_eval_fail(c,
			      "is a parameter that %s's prologue has not stored yet, and not "
			      "one integer register; read it past the prologue",
			      dwarf_diename(c->func) ? dwarf_diename(c->func) : "its function");
}
