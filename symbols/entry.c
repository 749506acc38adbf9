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
 * in order as the psABI does, only as far as needed: an INTEGER-class
 * scalar (integer, enum, pointer, reference) takes the next of rdi, rsi,
 * rdx, rcx, r8, r9; a float takes an SSE register and no integer one; an
 * aggregate over 16 bytes is the caller's copy in memory, where its DWARF
 * location is right from the start.  A small aggregate before the one
 * asked for, or a parameter that is not an INTEGER scalar, or one past the
 * sixth register, is not worked out: its value is refused with the reason,
 * never read from a slot that holds something else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dwarf.h>
#include <stdlib.h>

#include "symbols/internal.h"

enum arg_class { ARG_INTEGER, ARG_SSE, ARG_MEMORY, ARG_UNKNOWN };

static enum arg_class classify(struct sym_space *s, Dwarf_Die *var)
{
	const struct sym_type *t = symi_type_of(s, var);
	uint64_t size = sym_type_size(t);

	switch (sym_type_kind(t)) {
	case SYM_T_BOOL:
	case SYM_T_SIGNED:
	case SYM_T_UNSIGNED:
	case SYM_T_POINTER:
	case SYM_T_ENUM:
		return size && size <= 8 ? ARG_INTEGER : ARG_UNKNOWN;
	case SYM_T_FLOAT:
		return size == 4 || size == 8 ? ARG_SSE : ARG_MEMORY;
	case SYM_T_STRUCT:
	case SYM_T_ARRAY:
		return size > 16 ? ARG_MEMORY : ARG_UNKNOWN;
	default:
		return ARG_UNKNOWN;
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

int symi_entry_parameter(struct symi_eval *c, Dwarf_Die *var, uint64_t *value)
{
	Dwarf_Addr end;
	int next_reg;
	Dwarf_Die p;

	if (!c->func || !parameter_of(c->func, var) ||
	    !symi_prologue_end(c->func, c->view->regs->rip - c->bias, &end))
		return 0;
	next_reg = returns_in_memory(c->s, c->func) ? 1 : 0;
	dwarf_child(c->func, &p);
	for (;;) {
		enum arg_class class = ARG_UNKNOWN;

		if (dwarf_tag(&p) == DW_TAG_formal_parameter)
			class = classify(c->s, &p);
		if (dwarf_dieoffset(&p) == dwarf_dieoffset(var)) {
			if (class == ARG_MEMORY)
				return 0; /* the caller's copy: its slot is valid already */
			if (class != ARG_INTEGER || next_reg >= 6)
				break;
			*value = arg_register(c->view->regs, next_reg);
			return 1;
		}
		if (dwarf_tag(&p) == DW_TAG_formal_parameter && class == ARG_UNKNOWN)
			break;
		if (class == ARG_INTEGER)
			next_reg++;
		if (dwarf_siblingof(&p, &p) != 0)
			break;
	}
	return symi_eval_fail(c,
			      "is a parameter that %s's prologue has not stored yet, passed in "
			      "a way cctrace does not work out; read it past the prologue",
			      dwarf_diename(c->func) ? dwarf_diename(c->func) : "its function");
}
