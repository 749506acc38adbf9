/*
 * Variables as a stopped thread sees them: sym_variable_at, sym_variable_scope.
 *
 * The scopes that contain the pc come from libdw (dwarf_getscopes: lexical
 * blocks, inlined subroutines, the function, the CU, innermost first) and
 * the innermost variable of that name from dwarf_getscopevar, so shadowing
 * follows C.  Its location expression is picked for the pc by
 * dwarf_getlocation_addr (location lists included) and evaluated here on a
 * small stack machine over the thread's registers and memory: libdw decodes
 * the operations but has no public evaluator.  DW_OP_fbreg evaluates the
 * function's DW_AT_frame_base, which is usually DW_OP_call_frame_cfa: the
 * CFA comes from libdw's CFI (.eh_frame, else .debug_frame) for the pc, so
 * it is right even on the function's first instruction, before the
 * prologue has set up rbp.  Only frame 0 is understood: every register is
 * the thread's current one.  The scopes of a pc in a system library (libc,
 * ld.so: symi_mod_is_system) are skipped: with libc6-dbg installed, a
 * thread held at pthread_mutex_lock would otherwise see its parameter
 * 'mutex' where the schedule means the program's global.
 *
 * A location that names a register, or computes a value (DW_OP_stack_value,
 * DW_OP_implicit_value, DW_OP_entry_value), has no address to watch; that
 * is an error with the reason, as is a location list with no entry for the
 * pc (optimized out there).
 *
 * Past the pc's scopes come the executable's thread-local variables, then
 * globals (sym_variable), then the libraries' thread-local variables, so
 * that a program's own names are never hidden by a library's (libc's DWARF,
 * when installed, is full of common names).  TLS variables come from the
 * DWARF index, else from ELF STT_TLS symbols; their blocks from tls.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

#define EVAL_STACK 64
#define MAX_NEST   4

/* Everything an expression of one variable may refer to. */
struct eval_ctx {
	struct sym_space *s;
	struct sym_mod *m; /* module of the variable (TLS, DW_OP_addr) */
	Dwarf_Addr bias;   /* of m's DWARF */
	const struct sym_thread_view *view;
	Dwarf_Die *func; /* innermost concrete DW_TAG_subprogram, for the frame base */
	const char *name;
	char *err;
	size_t errlen;
};

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

static int eval_expr(struct eval_ctx *c, Dwarf_Attribute *attr, const Dwarf_Op *ops, size_t n,
		     int nest, uint64_t *out);

static int fail(struct eval_ctx *c, const char *fmt, const char *detail)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, detail);
	snprintf(c->err, c->errlen, "'%s' %s", c->name, what);
	return -1;
}

static int register_location(struct eval_ctx *c, unsigned reg)
{
	char name[32];

	reg_name(reg, name, sizeof(name));
	return fail(c, "lives in register %s at this point", name);
}

/* Canonical frame address of frame 0, from the module's CFI at the pc. */
static int frame_cfa(struct eval_ctx *c, int nest, uint64_t *cfa)
{
	uint64_t pc = c->view->regs->rip;
	Dwfl_Module *mod = dwfl_addrmodule(c->s->dwfl, pc);
	Dwarf_CFI *cfis[2] = {NULL, NULL};
	Dwarf_Addr biases[2] = {0, 0};
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int i, rc;

	if (mod) {
		cfis[0] = dwfl_module_eh_cfi(mod, &biases[0]);
		cfis[1] = dwfl_module_dwarf_cfi(mod, &biases[1]);
	}
	for (i = 0; i < 2; i++) {
		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], pc - biases[i], &frame) != 0)
			continue;
		rc = dwarf_frame_cfa(frame, &ops, &nops) == 0
			 ? eval_expr(c, NULL, ops, nops, nest + 1, cfa)
			 : fail(c, "has no address: %s", "no CFA rule at this pc");
		free(frame);
		return rc;
	}
	return fail(c, "has no address: %s", "no call frame information for this pc");
}

/* DW_AT_frame_base of the function: a location whose address is the base. */
static int frame_base(struct eval_ctx *c, int nest, uint64_t *base)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t n;
	int k;

	if (!c->func || !dwarf_attr_integrate(c->func, DW_AT_frame_base, &at))
		return fail(c, "has no address: %s", "its function has no frame base");
	k = dwarf_getlocation_addr(&at, c->view->regs->rip - c->bias, &ops, &n, 1);
	if (k <= 0)
		return fail(c, "has no address: %s", "no frame base at this pc");
	if (n == 1 && ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		if (!reg_value(c->view->regs, ops[0].atom - DW_OP_reg0, base))
			return register_location(c, ops[0].atom - DW_OP_reg0);
		return 0;
	}
	return eval_expr(c, &at, ops, n, nest + 1, base);
}

static int push(struct eval_ctx *c, struct stack *st, uint64_t v)
{
	if (st->n == EVAL_STACK)
		return fail(c, "has no address: %s", "DWARF expression too deep");
	st->v[st->n++] = v;
	return 0;
}

static int pop(struct eval_ctx *c, struct stack *st, uint64_t *v)
{
	if (!st->n)
		return fail(c, "has no address: %s", "malformed DWARF expression");
	*v = st->v[--st->n];
	return 0;
}

static int push_reg(struct eval_ctx *c, struct stack *st, unsigned reg, int64_t offset)
{
	uint64_t v;
	char name[32];

	if (!reg_value(c->view->regs, reg, &v)) {
		reg_name(reg, name, sizeof(name));
		return fail(c, "has no address: it is based on %s", name);
	}
	return push(c, st, v + (uint64_t)offset);
}

static int deref(struct eval_ctx *c, struct stack *st, uint64_t size)
{
	uint64_t a, v;

	if (pop(c, st, &a) < 0)
		return -1;
	if (c->view->peek(c->view->ctx, a, &v) < 0)
		return fail(c, "has no address: %s", "its location reads unreadable memory");
	if (size < 8)
		v &= (1ull << (size * 8)) - 1;
	return push(c, st, v);
}

static int binary(struct eval_ctx *c, struct stack *st, unsigned atom)
{
	uint64_t a, b;

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
static int tls_base(struct eval_ctx *c, struct sym_mod *m, uint64_t *base)
{
	char why[160] = "";

	if (symi_tls_block(c->s, m, c->view, base, why, sizeof(why)) == 0)
		return 0;
	snprintf(c->err, c->errlen, "'%s': %s", c->name, why);
	return -1;
}

static int tls_address(struct eval_ctx *c, struct stack *st)
{
	uint64_t off, base;

	if (pop(c, st, &off) < 0 || tls_base(c, c->m, &base) < 0)
		return -1;
	return push(c, st, base + off);
}

/* DW_OP_addrx and friends: an address in .debug_addr. */
static int indexed_address(struct eval_ctx *c, struct stack *st, Dwarf_Attribute *attr,
			   const Dwarf_Op *op)
{
	Dwarf_Attribute res;
	Dwarf_Addr a;

	if (!attr || dwarf_getlocation_attr(attr, op, &res) != 0 || dwarf_formaddr(&res, &a) != 0)
		return fail(c, "has no address: %s", "unreadable DW_OP_addrx");
	return push(c, st, a + (op->atom == DW_OP_constx ? 0 : c->bias));
}

/* Operations that end the search for an address, with the reason. */
static int no_address(struct eval_ctx *c, const Dwarf_Op *ops, size_t i)
{
	unsigned atom = ops[i].atom;

	if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)
		return register_location(c, atom - DW_OP_reg0);
	if (atom == DW_OP_regx)
		return register_location(c, (unsigned)ops[i].number);
	if (atom == DW_OP_piece || atom == DW_OP_bit_piece)
		return fail(c, "is split into pieces at this point%s", "");
	if (atom == DW_OP_entry_value || atom == DW_OP_GNU_entry_value)
		return fail(c, "has no address at this point (%s)",
			    "its value is its value on entry");
	return fail(c, "has no address at this point (%s)", "its value is computed, not stored");
}

static int eval_op(struct eval_ctx *c, struct stack *st, Dwarf_Attribute *attr, const Dwarf_Op *op,
		   int nest)
{
	unsigned atom = op->atom;
	uint64_t a, b;
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
		return fail(c, "has no address: %s", msg);
	}
}

/* Evaluate a DWARF expression or memory location description: *out is the
 * value on top of the stack (for a location, the address). */
static int eval_expr(struct eval_ctx *c, Dwarf_Attribute *attr, const Dwarf_Op *ops, size_t n,
		     int nest, uint64_t *out)
{
	struct stack st = {.n = 0};
	size_t i;

	if (nest > MAX_NEST)
		return fail(c, "has no address: %s", "DWARF expression nests too deep");
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

static int variable_address(struct eval_ctx *c, Dwarf_Die *var, uint64_t *addr)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t n;
	int k;

	if (!dwarf_attr_integrate(var, DW_AT_location, &at)) {
		if (dwarf_attr_integrate(var, DW_AT_const_value, &at))
			return fail(c, "is a constant (%s)", "it has no address");
		return fail(c, "is optimized out%s", "");
	}
	k = dwarf_getlocation_addr(&at, c->view->regs->rip - c->bias, &ops, &n, 1);
	if (k < 0)
		return fail(c, "has no address: %s", dwarf_errmsg(-1));
	if (k == 0 || n == 0)
		return fail(c, "is optimized out at this point%s", "");
	return eval_expr(c, &at, ops, n, 0, addr);
}

static struct sym_mod *mod_of(struct sym_space *s, Dwfl_Module *mod)
{
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].mod == mod)
			return &s->mods[i];
	return NULL;
}

static bool is_declaration(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_declaration) && !dwarf_hasattr(die, DW_AT_location);
}

static bool is_concrete_function(Dwarf_Die *die)
{
	return dwarf_tag(die) == DW_TAG_subprogram && dwarf_hasattr(die, DW_AT_frame_base);
}

/* The function whose frame the pc is in, for DW_AT_frame_base.  Scopes past
 * an inlined subroutine are those of its abstract definition, which has no
 * frame: then the function is the CU's subprogram that contains the pc. */
static bool enclosing_function(Dwarf_Die *scopes, int n, Dwarf_Die *cu, Dwarf_Addr pc,
			       Dwarf_Die *out)
{
	int i;

	for (i = 0; i < n && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine; i++) {
		if (is_concrete_function(&scopes[i])) {
			*out = scopes[i];
			return true;
		}
	}
	if (dwarf_child(cu, out) != 0)
		return false;
	do {
		if (is_concrete_function(out) && dwarf_haspc(out, pc) > 0)
			return true;
	} while (dwarf_siblingof(out, out) == 0);
	return false;
}

/* 1: found in the pc's scopes (*out filled), 0: not there, -1: found, no address. */
static int from_scopes(struct eval_ctx *c, struct sym_var *out)
{
	uint64_t pc = c->view->regs->rip;
	Dwfl_Module *mod = dwfl_addrmodule(c->s->dwfl, pc);
	Dwarf_Die *cu, *scopes = NULL, var, func;
	int n, idx, rc = 0;

	if (!mod || !(c->m = mod_of(c->s, mod)) || symi_mod_is_system(c->m) ||
	    !(cu = dwfl_module_addrdie(mod, pc, &c->bias)))
		return 0;
	n = dwarf_getscopes(cu, pc - c->bias, &scopes);
	if (n <= 0)
		return 0;
	idx = dwarf_getscopevar(scopes, n, c->name, 0, NULL, 0, 0, &var);
	if (idx < 0 || is_declaration(&var))
		goto out;
	c->func = enclosing_function(scopes, n, cu, pc - c->bias, &func) ? &func : NULL;
	rc = variable_address(c, &var, &out->addr) < 0 ? -1 : 1;
	if (rc == 1)
		out->type = symi_type_of(c->s, &var);
	if (rc == 1 && !out->type)
		rc = fail(c, "has no address: %s", "out of memory");
out:
	free(scopes);
	return rc;
}

/* --- thread-local variables of any module --- */

/* "name" or "name@@VERSION". */
static bool symbol_named(const char *symname, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(symname, name, n) && (!symname[n] || !strncmp(symname + n, "@@", 2));
}

static bool elf_tls_symbol(struct sym_mod *m, const char *name, GElf_Sym *out)
{
	int i, n = dwfl_module_getsymtab(m->mod);
	GElf_Sym sym;
	GElf_Addr addr;
	GElf_Word shndx;
	const char *sname;

	for (i = 1; i < n; i++) {
		sname = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (sname && GELF_ST_TYPE(sym.st_info) == STT_TLS && shndx != SHN_UNDEF &&
		    symbol_named(sname, name)) {
			*out = sym;
			return true;
		}
	}
	return false;
}

/* A TLS symbol NAME of the executable (LIBS false) or of a library (true). */
static struct sym_mod *elf_tls_module(struct sym_space *s, const char *name, bool libs,
				      GElf_Sym *sym)
{
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].is_exe != libs && elf_tls_symbol(&s->mods[i], name, sym))
			return &s->mods[i];
	return NULL;
}

/* A TLS variable of the executable (LIBS false) or of a library (true).
 * 1: found (*out filled), 0: no such TLS variable, -1: found, no address. */
static int from_tls(struct eval_ctx *c, struct sym_var *out, bool libs)
{
	Dwarf_Die var;
	GElf_Sym sym;
	uint64_t base;
	size_t i;

	if (symi_tls_variable(c->s, c->name, libs, &var, &i) && c->s->mods[i].is_exe != libs) {
		c->m = &c->s->mods[i];
		if (!dwfl_module_getdwarf(c->m->mod, &c->bias))
			return 0;
		c->func = NULL;
		if (variable_address(c, &var, &out->addr) < 0)
			return -1;
		out->type = symi_type_of(c->s, &var);
		return out->type ? 1 : fail(c, "has no address: %s", "out of memory");
	}
	c->m = elf_tls_module(c->s, c->name, libs, &sym);
	if (!c->m)
		return 0;
	if (tls_base(c, c->m, &base) < 0)
		return -1;
	out->addr = base + sym.st_value;
	out->type = symi_elf_object_type(c->s, sym.st_size);
	return out->type ? 1 : fail(c, "has no address: %s", "out of memory");
}

static void not_in_scope(struct eval_ctx *c)
{
	struct sym_loc loc;
	uint64_t pc = c->view->regs->rip;

	if (sym_describe(c->s, pc, &loc) == 0 && loc.func && loc.file)
		snprintf(c->err, c->errlen, "no variable '%s' in scope at %s (%s:%d)", c->name,
			 loc.func, loc.file, loc.line);
	else if (loc.func)
		snprintf(c->err, c->errlen, "no variable '%s' in scope at %s", c->name, loc.func);
	else
		snprintf(c->err, c->errlen, "no variable '%s' in scope at %#llx", c->name,
			 (unsigned long long)pc);
}

int sym_variable_at(struct sym_space *s, const char *name, const struct sym_thread_view *view,
		    struct sym_var *out, char *err, size_t errlen)
{
	char scratch[8];
	struct eval_ctx c = {.s = s, .view = view, .name = name, .err = err, .errlen = errlen};
	int rc;

	if (!err || !errlen) {
		c.err = scratch;
		c.errlen = sizeof(scratch);
	}
	if (!s->pid) {
		snprintf(c.err, c.errlen, "'%s': locals and TLS need a live process", name);
		return -1;
	}
	rc = from_scopes(&c, out);
	if (rc == 0)
		rc = from_tls(&c, out, false);
	if (rc == 0 && sym_variable(s, name, out) == 0)
		rc = 1;
	if (rc == 0)
		rc = from_tls(&c, out, true);
	if (rc == 0)
		not_in_scope(&c);
	return rc > 0 ? 0 : -1;
}

/* A local or TLS variable of the executable (LIBS false) or of a library. */
static enum sym_var_scope indexed_scope(struct sym_space *s, const char *name, bool libs,
					const struct sym_type **type)
{
	Dwarf_Die die;
	GElf_Sym sym;
	size_t i;

	if (symi_local_variable(s, name, libs, &die, &i) && s->mods[i].is_exe != libs &&
	    !symi_mod_is_system(&s->mods[i])) {
		*type = symi_type_of(s, &die);
		return SYM_SCOPE_LOCAL;
	}
	if (symi_tls_variable(s, name, libs, &die, &i) && s->mods[i].is_exe != libs) {
		*type = symi_type_of(s, &die);
		return SYM_SCOPE_TLS;
	}
	if (elf_tls_module(s, name, libs, &sym)) {
		*type = symi_elf_object_type(s, sym.st_size);
		return SYM_SCOPE_TLS;
	}
	return SYM_SCOPE_NONE;
}

/* The executable's own names first, as at run time: a global of the program
 * is not hidden by a library's local of the same name. */
enum sym_var_scope sym_variable_scope(struct sym_space *s, const char *name,
				      const struct sym_type **type)
{
	const struct sym_type *dummy;
	enum sym_var_scope scope;
	struct sym_var v;

	if (!type)
		type = &dummy;
	*type = NULL;
	scope = indexed_scope(s, name, false, type);
	if (scope != SYM_SCOPE_NONE)
		return scope;
	if (sym_variable(s, name, &v) == 0) {
		*type = v.type;
		return SYM_SCOPE_GLOBAL;
	}
	return indexed_scope(s, name, true, type);
}
