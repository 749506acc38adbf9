/*
 * inline.c: where a function was inlined, so that enter(F) stops at F's
 * inlined copies as gdb's `break F` does.
 *
 * An optimised build inlines small functions into their callers.  The
 * symbol table then has no F (a static function inlined everywhere), or
 * an out-of-line copy that nothing calls: a breakpoint on its entry never
 * fires.  DWARF keeps the truth: F's abstract instance (a subprogram with
 * DW_AT_inline) and, in its callers, one DW_TAG_inlined_subroutine per
 * copy, whose entry pc is where the copy begins.
 *
 * The program's own modules are searched, compile unit by compile unit,
 * only for a name a schedule asks for: a system library's DWARF (libc's,
 * when its debug symbols are installed) is large, and the functions a
 * schedule names there are called, not inlined.  libdw finds the copies
 * within the abstract instance's compile unit; a link-time-optimised
 * build keeps the abstract instance in one unit and the copies in others,
 * so when the unit has none, every unit's inlined subroutines are looked
 * at (once per name: the answer is kept).
 */
#include "symbols/internal.h"

#include <assert.h>
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct inline_search {
	struct sym_space *s;
	const struct sym_mod *m;
	const char *name;
	Dwarf_Addr bias;
	uint64_t *sites; /* may be NULL: counting only */
	size_t max, n;
	bool abstract_seen; /* name defined with no code here: inlined somewhere */
};

bool symi_die_named(struct sym_space *s, Dwarf_Die *die, const char *name)
{
	Dwarf_Attribute attr;
	const char *linkage =
	    dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	const char *plain = dwarf_diename(die), *shown;

	if (!linkage)
		return plain && !strcmp(plain, name);
	if (strcmp(linkage, name) == 0)
		return true;
	shown = symi_pretty_name(s, linkage);
	return shown && strcmp(shown, name) == 0;
}

/* Where an inlined copy begins: DW_AT_entry_pc, else its lowest address. */
static bool copy_entry(Dwarf_Die *copy, Dwarf_Addr *pc)
{
	Dwarf_Addr base, end;
	ptrdiff_t off;

	if (dwarf_entrypc(copy, pc) == 0)
		return true;
	off = dwarf_ranges(copy, 0, &base, pc, &end);
	return off > 0;
}

static int each_copy(Dwarf_Die *copy, void *arg)
{
	struct inline_search *c = arg;
	Dwarf_Addr pc;

	if (!copy_entry(copy, &pc))
		return DWARF_CB_OK;
	if (c->sites && c->n < c->max)
		c->sites[c->n] = symi_space_out_addr(c->s, c->m, pc + c->bias);
	c->n++;
	return DWARF_CB_OK;
}

static int each_function(Dwarf_Die *fn, void *arg)
{
	struct inline_search *c = arg;

	Dwarf_Addr low;
	uint64_t own;

	if (!symi_die_named(c->s, fn, c->name))
		return DWARF_CB_OK;
	/* an out-of-line copy the compiler made (F.constprop.0, F.isra.0,
	 * F.part.0): its code is F's too, under a symbol of another name */
	if (dwarf_hasattr(fn, DW_AT_abstract_origin) && dwarf_lowpc(fn, &low) == 0 &&
	    !(sym_function(c->s, c->name, &own) == 0 &&
	      own == symi_space_out_addr(c->s, c->m, low + c->bias))) {
		each_copy(fn, arg);
		return DWARF_CB_OK;
	}
	if (dwarf_func_inline(fn) == 1) {
		c->abstract_seen = true;
		dwarf_func_inline_instances(fn, each_copy, arg);
	} else if (!dwarf_hasattr(fn, DW_AT_declaration) && !dwarf_hasattr(fn, DW_AT_low_pc) &&
		   !dwarf_hasattr(fn, DW_AT_ranges)) {
		/* a definition with no code: LTO's early debug information,
		 * which says nothing of DW_AT_inline */
		c->abstract_seen = true;
	}
	return DWARF_CB_OK;
}

/* Every inlined subroutine under die whose abstract origin is name. */
static void walk_copies(struct inline_search *c, Dwarf_Die *die)
{
	Dwarf_Die child, origin;
	Dwarf_Attribute attr;

	if (dwarf_child(die, &child) != 0)
		return;
	do {
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine &&
		    dwarf_formref_die(dwarf_attr(&child, DW_AT_abstract_origin, &attr), &origin) &&
		    symi_die_named(c->s, &origin, c->name))
			each_copy(&child, c);
		walk_copies(c, &child);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void search_module(struct inline_search *c)
{
	Dwarf *dw = dwfl_module_getdwarf(c->m->mod, &c->bias);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;

	size_t before = c->n;

	if (!dw)
		return;
	c->abstract_seen = false;
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0)
		if (dwarf_tag(&cudie) == DW_TAG_compile_unit)
			dwarf_getfuncs(&cudie, each_function, c, 0);
	if (c->n > before || !c->abstract_seen)
		return;
	cu = NULL;
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0)
		if (dwarf_tag(&cudie) == DW_TAG_compile_unit)
			walk_copies(c, &cudie);
}

static void search(struct inline_search *c)
{
	size_t i;

	for (i = 0; i < c->s->nmods; i++) {
		if (symi_mod_is_system(&c->s->mods[i]))
			continue;
		c->m = &c->s->mods[i];
		search_module(c);
	}
}

/* The answer for name, searched once per module list (a search's runs
 * share a space, and ask for the same names in every run). */
struct inline_ent {
	uint64_t *sites;
	size_t n;
};

static struct inline_ent *answer(struct sym_space *s, const char *name)
{
	struct inline_ent *e = symi_strmap_get(&s->inlined, name);
	struct inline_search c = {.s = s, .name = name};
	const char *key;

	if (e)
		return e;
	search(&c);
	e = symi_arena_alloc(&s->arena, sizeof(*e));
	key = symi_arena_strdup(&s->arena, name);
	if (!e || !key)
		return NULL;
	e->n = c.n;
	e->sites = c.n ? symi_arena_alloc(&s->arena, c.n * sizeof(*e->sites)) : NULL;
	if (c.n && !e->sites)
		return NULL;
	c = (struct inline_search){.s = s, .name = name, .sites = e->sites, .max = e->n};
	if (e->n)
		search(&c);
	assert(c.n == e->n);
	return symi_strmap_put(&s->inlined, key, e) < 0 ? NULL : e;
}

size_t sym_inline_sites(struct sym_space *s, const char *name, uint64_t *sites, size_t max)
{
	struct inline_ent *e = answer(s, name);

	if (!e)
		return 0;
	if (sites)
		memcpy(sites, e->sites, (e->n < max ? e->n : max) * sizeof(*sites));
	return e->n;
}

/* --- the inlined calls a pc is in, for stacks --- */

/* The file a DW_AT_call_file of cu names, by its basename; NULL if none. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *copy)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word index;
	size_t n;
	const char *path;

	if (dwarf_formudata(dwarf_attr(copy, DW_AT_call_file, &attr), &index) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &n) != 0 || index >= n)
		return NULL;
	path = dwarf_filesrc(files, index, NULL, NULL);
	return path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

int sym_inlined_frames(struct sym_space *s, uint64_t pc, struct sym_inline_frame *out, int max)
{
	Dwfl_Module *mod = s->pid ? dwfl_addrmodule(s->dwfl, pc) : NULL;
	struct sym_mod *m = mod ? symi_mod_of(s, mod) : NULL;
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Attribute attr;
	Dwarf_Word line;
	Dwarf_Addr bias;
	size_t i;
	int n, k = 0;

	if (!m || symi_mod_is_system(m) || !(cu = symi_addrdie(mod, pc, &bias)))
		return 0;
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	for (i = 0; n > 0 && i < (size_t)n && k < max; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		out[k].func = dwarf_diename(&scopes[i]);
		out[k].call_file = call_file(cu, &scopes[i]);
		out[k].call_line =
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &line) == 0
			? (int)line
			: 0;
		if (out[k].func)
			k++;
	}
	free(scopes);
	return k;
}
