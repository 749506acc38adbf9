/*
 * Variables as a stopped thread sees them: sym_variable_at, sym_variable_scope.
 *
 * The scopes that contain the pc come from libdw (dwarf_getscopes: lexical
 * blocks, inlined subroutines, the function, the CU, innermost first) and
 * the innermost variable of that name from dwarf_getscopevar, so shadowing
 * follows C; its location is evaluated by locexpr.c.  The scopes of a pc in
 * a system library (libc, ld.so: symi_mod_is_system) are skipped: with
 * libc6-dbg installed, a thread held at pthread_mutex_lock would otherwise
 * see its parameter 'mutex' where the schedule means the program's global.
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

/* A function defined in a class that is itself inside a function (a C++
 * lambda's operator()): dwarf_getscopes follows pc ranges down from the CU,
 * and the outer function's range does not hold the pc, so it stops at the
 * CU.  Such a definition is searched for in every DIE that may hold one. */
static bool nested_function(Dwarf_Die *parent, Dwarf_Addr pc, int depth, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			if (is_concrete_function(&c) && dwarf_haspc(&c, pc) > 0) {
				*out = c;
				return true;
			}
			/* fallthrough */
		case DW_TAG_lexical_block:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_namespace:
			if (nested_function(&c, pc, depth + 1, out))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* The lexical block or inlined subroutine of parent that holds pc, in out:
 * one step of a descent from a function to the innermost scope of pc. */
static bool child_holding(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Die kid;
	int tag;

	if (dwarf_child(parent, &kid) != 0)
		return false;
	do {
		tag = dwarf_tag(&kid);
		if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
		    dwarf_haspc(&kid, pc) > 0) {
			*out = kid;
			return true;
		}
	} while (dwarf_siblingof(&kid, &kid) == 0);
	return false;
}

/* The scopes of an inlined subroutine, chain[k], and of its blocks
 * chain[0..k): then those that enclose its abstract origin, as
 * dwarf_getscopes gives them.  libdw 0.188 (Debian 12) looks for the origin
 * only in the pc's CU and finds no scopes at all when it is in another:
 * with -flto, the early-debug unit of the source file. */
static int inlined_scopes(Dwarf_Die *chain, int k, Dwarf_Die **scopes)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin, *outer = NULL, *all;
	int m;

	if (!dwarf_formref_die(dwarf_attr(&chain[k], DW_AT_abstract_origin, &attr), &origin) ||
	    (m = dwarf_getscopes_die(&origin, &outer)) < 2 ||
	    !(all = realloc(chain, (size_t)(k + m) * sizeof(*all)))) {
		free(outer);
		free(chain);
		return 0;
	}
	memcpy(&all[k + 1], &outer[1], (size_t)(m - 1) * sizeof(*all));
	free(outer);
	*scopes = all;
	return k + m;
}

/* The scopes of pc in such a function: its blocks that hold the pc,
 * innermost first, then the function and its CU.  Not the function it is
 * defined in: main's locals are not the lambda's, and read through the
 * lambda's frame they were garbage.  An inlined subroutine that holds
 * the pc ends its scopes as in dwarf_getscopes (inlined_scopes). */
static int nested_scopes(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
	Dwarf_Die func, inner, *chain = NULL;
	int n, i;

	if (!nested_function(cu, pc, 0, &func))
		return 0;
	/* the innermost of its blocks and inlined subroutines that holds the pc */
	for (inner = func; child_holding(&inner, pc, &inner);)
		;
	/* inner ... func, then what encloses func, the CU last */
	n = dwarf_getscopes_die(&inner, &chain);
	for (i = 0; i < n && dwarf_dieoffset(&chain[i]) != dwarf_dieoffset(&func); i++)
		if (dwarf_tag(&chain[i]) == DW_TAG_inlined_subroutine)
			return inlined_scopes(chain, i, scopes);
	if (i + 1 >= n) {
		free(chain);
		return 0;
	}
	chain[i + 1] = chain[n - 1];
	*scopes = chain;
	return i + 2;
}

/* The scopes of func's copy that holds pc, for a thread stopped at its
 * entry (sym_thread_view.inlined), found by descending from the function
 * that holds it: dwarf_getscopes ends at the innermost copy (a leaf
 * inlined into func at func's first instruction: enter(func) read leaf's
 * v) and never names func's.  Its count, 0 if there is no such copy. */
static int copy_scopes(struct sym_space *s, Dwarf_Die *cu, Dwarf_Addr pc, const char *func,
		       Dwarf_Die **scopes)
{
	Dwarf_Die inner, *chain = NULL;
	bool found = false;
	int n;

	if (!nested_function(cu, pc, 0, &inner))
		return 0;
	while (!found && child_holding(&inner, pc, &inner))
		found = dwarf_tag(&inner) == DW_TAG_inlined_subroutine &&
			symi_die_named(s, &inner, func);
	if (!found || (n = dwarf_getscopes_die(&inner, &chain)) <= 0)
		return 0;
	return inlined_scopes(chain, 0, scopes);
}

/* Is pc in an inlined copy whose abstract origin is in another unit (the
 * copies of a link-time-optimised build)? */
static bool origin_elsewhere(Dwarf_Die *cu, Dwarf_Addr pc)
{
	Dwarf_Die inner;
	Dwarf_Attribute attr;

	if (!nested_function(cu, pc, 0, &inner))
		return false;
	while (child_holding(&inner, pc, &inner))
		if (dwarf_tag(&inner) == DW_TAG_inlined_subroutine &&
		    dwarf_attr(&inner, DW_AT_abstract_origin, &attr) &&
		    dwarf_whatform(&attr) == DW_FORM_ref_addr)
			return true;
	return false;
}

/* 1: found in the pc's scopes (*out filled), 0: not there, -1: found, no address. */
static int from_scopes(struct symi_eval *c, struct sym_var *out)
{
	uint64_t pc = c->view->regs->rip;
	Dwfl_Module *mod = dwfl_addrmodule(c->s->dwfl, pc);
	Dwarf_Die *cu, *scopes = NULL, var, func;
	int n = 0, idx, rc = 0;

	if (!mod || !(c->m = symi_mod_of(c->s, mod)) || symi_mod_is_system(c->m) ||
	    !(cu = symi_addrdie(mod, pc, &c->bias)))
		return 0;
	if (c->view->inlined)
		n = copy_scopes(c->s, cu, pc - c->bias, c->view->inlined, &scopes);
	/* libdw 0.188 finds no scope for a pc in a copy whose origin is in
	 * another unit, and leaks what it allocated looking: not asked */
	if (n <= 0 && !origin_elsewhere(cu, pc - c->bias))
		n = dwarf_getscopes(cu, pc - c->bias, &scopes);
	if (n <= 0 || (n == 1 && dwarf_tag(&scopes[0]) == DW_TAG_compile_unit)) {
		free(scopes);
		scopes = NULL;
		n = nested_scopes(cu, pc - c->bias, &scopes);
	}
	if (n <= 0)
		return 0;
	idx = dwarf_getscopevar(scopes, n, c->name, 0, NULL, 0, 0, &var);
	if (idx < 0 || is_declaration(&var))
		goto out;
	c->func = enclosing_function(scopes, n, cu, pc - c->bias, &func) ? &func : NULL;
	rc = symi_variable_location(c, &var, out) < 0 ? -1 : 1;
	if (rc == 1 && !out->no_address) {
		int entry = symi_entry_parameter(c, &var, &out->value);

		rc = entry < 0 ? -1 : 1;
		out->value_known = entry > 0;
	}
	if (rc == 1)
		out->type = symi_type_of(c->s, &var);
	if (rc == 1 && !out->type)
		rc = symi_eval_fail(c, "has no address: %s", "out of memory");
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
static int from_tls(struct symi_eval *c, struct sym_var *out, bool libs)
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
		if (symi_variable_address(c, &var, &out->addr) < 0)
			return -1;
		out->type = symi_type_of(c->s, &var);
		return out->type ? 1 : symi_eval_fail(c, "has no address: %s", "out of memory");
	}
	c->m = elf_tls_module(c->s, c->name, libs, &sym);
	if (!c->m)
		return 0;
	if (symi_eval_tls_base(c, c->m, &base) < 0)
		return -1;
	out->addr = base + sym.st_value;
	out->type = symi_elf_object_type(c->s, sym.st_size);
	return out->type ? 1 : symi_eval_fail(c, "has no address: %s", "out of memory");
}

static void not_in_scope(struct symi_eval *c)
{
	struct sym_loc loc = {0};
	uint64_t pc = c->view->regs->rip;
	const char *func = NULL;

	if (sym_describe(c->s, pc, &loc) == 0)
		func = loc.pretty ? loc.pretty : loc.func;
	if (func && loc.file)
		snprintf(c->err, c->errlen, "no variable '%s' in scope at %s (%s:%d)", c->name,
			 func, loc.file, loc.line);
	else if (func)
		snprintf(c->err, c->errlen, "no variable '%s' in scope at %s", c->name, func);
	else
		snprintf(c->err, c->errlen, "no variable '%s' in scope at %#llx", c->name,
			 (unsigned long long)pc);
}

int sym_variable_at(struct sym_space *s, const char *name, const struct sym_thread_view *view,
		    struct sym_var *out, char *err, size_t errlen)
{
	char scratch[8];
	struct symi_eval c = {.s = s, .view = view, .name = name, .err = err, .errlen = errlen};
	int rc;

	if (!err || !errlen) {
		c.err = scratch;
		c.errlen = sizeof(scratch);
	}
	*out = (struct sym_var){0};
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
