/*
 * plt.c: which function a PLT stub calls, so that call(F) matches a call
 * through the procedure linkage table before lazy binding has run.
 *
 * No symbol table names PLT stubs.  The GNU linkers lay them out in the
 * order of the .rela.plt relocations, 16 bytes each: in .plt after its
 * 16-byte header, or in .plt.sec (one stub per slot, no header) when the
 * binary is built for IBT.  Stub i therefore belongs to relocation i,
 * whose symbol is the function (objdump's "foo@plt" comes from the same
 * rule).
 */
#include "symbols/internal.h"

#include <string.h>

#define PLT_ENTRY 16

struct plt_layout {
	GElf_Shdr plt, plt_sec, rela;
	bool has_plt, has_plt_sec, has_rela;
	Elf_Scn *rela_scn;
};

static void find_sections(Elf *elf, struct plt_layout *l)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	memset(l, 0, sizeof(*l));
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(name, ".plt") == 0) {
			l->plt = sh;
			l->has_plt = true;
		} else if (strcmp(name, ".plt.sec") == 0) {
			l->plt_sec = sh;
			l->has_plt_sec = true;
		} else if (strcmp(name, ".rela.plt") == 0) {
			l->rela = sh;
			l->rela_scn = scn;
			l->has_rela = true;
		}
	}
}

/* The relocation index of the stub at link-time address a, -1 if none. */
static long stub_index(const struct plt_layout *l, GElf_Addr a)
{
	if (l->has_plt_sec && a >= l->plt_sec.sh_addr &&
	    a < l->plt_sec.sh_addr + l->plt_sec.sh_size)
		return (long)((a - l->plt_sec.sh_addr) / PLT_ENTRY);
	if (!l->has_plt_sec && l->has_plt && a >= l->plt.sh_addr + PLT_ENTRY &&
	    a < l->plt.sh_addr + l->plt.sh_size)
		return (long)((a - l->plt.sh_addr) / PLT_ENTRY) - 1;
	return -1;
}

static const char *relocation_symbol(Elf *elf, const struct plt_layout *l, long index)
{
	Elf_Data *data = elf_getdata(l->rela_scn, NULL);
	Elf_Scn *symtab = elf_getscn(elf, l->rela.sh_link);
	GElf_Shdr symtab_sh;
	GElf_Rela rela;
	GElf_Sym sym;

	if (!data || !symtab || !gelf_getshdr(symtab, &symtab_sh) ||
	    !gelf_getrela(data, (int)index, &rela) ||
	    !gelf_getsym(elf_getdata(symtab, NULL), (int)GELF_R_SYM(rela.r_info), &sym))
		return NULL;
	return elf_strptr(elf, symtab_sh.sh_link, sym.st_name);
}

/* The module's PLT sections, found once: call(F) asks at every call. */
static const struct plt_layout *layout_of(struct sym_space *space, struct sym_mod *m, Elf *elf)
{
	if (!m->plt_layout) {
		m->plt_layout = symi_arena_alloc(&space->arena, sizeof(*m->plt_layout));
		if (!m->plt_layout)
			return NULL;
		find_sections(elf, m->plt_layout);
	}
	return m->plt_layout;
}

int sym_plt_function(struct sym_space *space, uint64_t addr, const char **name)
{
	const struct plt_layout *layout;
	Dwarf_Addr bias = 0;
	size_t i;
	Elf *elf;
	long index;

	for (i = 0; i < space->nmods; i++) {
		struct sym_mod *m = &space->mods[i];
		uint64_t low = symi_space_out_addr(space, m, m->low);
		uint64_t high = symi_space_out_addr(space, m, m->high);

		if (addr < low || addr >= high)
			continue;
		elf = dwfl_module_getelf(m->mod, &bias);
		layout = elf ? layout_of(space, m, elf) : NULL;
		if (!layout || !layout->has_rela)
			return -1;
		/* Section addresses are link-time; addr is as the space gives them. */
		index = stub_index(layout, space->pid ? addr - bias : addr);
		if (index < 0 || (uint64_t)index >= layout->rela.sh_size / sizeof(Elf64_Rela))
			return -1;
		*name = relocation_symbol(elf, layout, index);
		return *name ? 0 : -1;
	}
	return -1;
}
