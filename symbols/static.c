/*
 * static.c: a statically linked program's own code.
 *
 * A dynamically linked program's code and libc's are different files, and
 * the engine tells them apart by their paths.  A statically linked one has
 * libc (and libpthread, libstdc++...) linked into its executable: by path,
 * all of it is the program's, and `cctrace test` profiled, searched and
 * scheduled the inside of malloc, stdio and the dynamic loader's stubs as
 * if the program had written them (hundreds of shared points, and a lost
 * update of the program's own never found).
 *
 * Two sources tell them apart.  Its compile units, first: the program is
 * built with -g to be debugged, and the system's static archives (Debian's
 * libc.a) carry no debugging information, so the program's own code is
 * what its compile units cover.  Without debugging information, its symbol
 * table: a function is libc's when a system archive member the executable
 * linked defines it (linked.c), by name for a global and by its STT_FILE
 * for a local (libc's static functions, malloc's _int_malloc among them),
 * and the program's own code is the extent of every other function.  Code
 * no function symbol covers (the IRELATIVE PLT, padding) is not its own.
 * A stripped static executable, or one whose libc was built with
 * debugging information, stays all the program's own: cctrace cannot
 * tell, and says so by answering -1.
 */
#include <stdlib.h>

#include "symbols/internal.h"

static bool is_static(Elf *elf)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return false;
	return true;
}

static int add_range(struct sym_space *s, uint64_t lo, uint64_t hi, size_t *cap)
{
	if (symi_reserve(&s->own_code, cap, s->nown_code, sizeof(*s->own_code)) < 0)
		return -1;
	s->own_code[s->nown_code++] = (struct sym_range){lo, hi};
	return 0;
}

/* Every compile unit's address ranges, as the caller sees addresses. */
static int read_cu_ranges(struct sym_space *s, const struct sym_mod *m)
{
	Dwarf_Addr bias, base, start, end;
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	size_t cap = 0;

	if (!dw)
		return -1;
	while (dwarf_get_units(dw, cu, &cu, NULL, NULL, &cudie, NULL) == 0) {
		ptrdiff_t it = 0;

		while ((it = dwarf_ranges(&cudie, it, &base, &start, &end)) > 0)
			if (end > start &&
			    add_range(s, symi_space_out_addr(s, m, start + bias),
				      symi_space_out_addr(s, m, end + bias), &cap) < 0)
				return -1;
	}
	return s->nown_code ? 0 : -1;
}

static Elf_Scn *symbol_table(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == SHT_SYMTAB && sh->sh_entsize)
			return scn;
	return NULL;
}

struct symtab {
	Elf *elf;
	Elf_Data *data;
	size_t n, strndx;
};

static const char *symbol_at(const struct symtab *t, size_t i, GElf_Sym *sym)
{
	if (!gelf_getsym(t->data, (int)i, sym))
		return NULL;
	return elf_strptr(t->elf, t->strndx, sym->st_name);
}

static bool is_code(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_size > 0;
}

/* Every name the executable defines, as SYMI_NAME_DEFINED. */
static int index_defined(const struct symtab *t, struct strmap *names)
{
	GElf_Sym sym;
	const char *name;
	size_t i;

	for (i = 1; i < t->n; i++) {
		name = symbol_at(t, i, &sym);
		if (name && *name && sym.st_shndx != SHN_UNDEF &&
		    GELF_ST_TYPE(sym.st_info) != STT_FILE &&
		    symi_strmap_put(names, name, (void *)SYMI_NAME_DEFINED) < 0)
			return -1;
	}
	return 0;
}

/* Is the local symbols' group that STT_FILE file opens libc's? */
static bool file_is_linked_member(struct symi_arena *a, const struct strmap *stems,
				  const char *file)
{
	const char *stem = symi_file_stem(a, file);

	return stem && symi_strmap_get(stems, stem) != NULL;
}

/* Each of the program's own functions, as an address range. */
static int add_own_functions(struct sym_space *s, const struct sym_mod *m, Dwarf_Addr bias,
			     const struct symtab *t, struct symi_arena *a,
			     const struct strmap *names, const struct strmap *stems)
{
	bool libc_file = false, libc;
	size_t i, cap = 0;
	const char *name;
	GElf_Sym sym;
	uint64_t lo;

	for (i = 1; i < t->n; i++) {
		if (!(name = symbol_at(t, i, &sym)))
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE) {
			libc_file = file_is_linked_member(a, stems, name);
			continue;
		}
		if (!is_code(&sym))
			continue;
		libc = GELF_ST_BIND(sym.st_info) == STB_LOCAL
			   ? libc_file
			   : symi_strmap_get(names, name) == (void *)SYMI_NAME_SYSTEM;
		lo = symi_space_out_addr(s, m, sym.st_value + bias);
		if (!libc && add_range(s, lo, lo + sym.st_size, &cap) < 0)
			return -1;
	}
	return 0;
}

int symi_range_by_lo(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* In address order, overlaps and neighbours joined: each_static_piece's
 * walk needs them so. */
static void sort_and_merge(struct sym_space *s)
{
	size_t i, k = 0;

	if (!s->nown_code)
		return;
	qsort(s->own_code, s->nown_code, sizeof(*s->own_code), symi_range_by_lo);
	for (i = 1; i < s->nown_code; i++) {
		if (s->own_code[i].lo <= s->own_code[k].hi) {
			if (s->own_code[i].hi > s->own_code[k].hi)
				s->own_code[k].hi = s->own_code[i].hi;
		} else {
			s->own_code[++k] = s->own_code[i];
		}
	}
	s->nown_code = k + 1;
}

static int read_symtab_ranges(struct sym_space *s, const struct sym_mod *m, Elf *elf,
			      Dwarf_Addr bias)
{
	struct strmap names = {0}, stems = {0};
	struct symi_arena scratch = {0};
	struct symtab t = {.elf = elf};
	GElf_Shdr sh;
	Elf_Scn *scn = symbol_table(elf, &sh);
	int rc = -1;

	if (!scn || !(t.data = elf_getdata(scn, NULL)))
		return -1;
	t.n = sh.sh_size / sh.sh_entsize;
	t.strndx = sh.sh_link;
	if (index_defined(&t, &names) < 0 ||
	    symi_mark_linked_members(&scratch, &names, &stems) < 0 ||
	    add_own_functions(s, m, bias, &t, &scratch, &names, &stems) < 0)
		goto out;
	sort_and_merge(s);
	rc = s->nown_code ? 0 : -1;
out:
	symi_strmap_free(&names);
	symi_strmap_free(&stems);
	symi_arena_free(&scratch);
	return rc;
}

static int find_own_code(struct sym_space *s)
{
	const struct sym_mod *m = s->nmods && s->mods[0].is_exe ? &s->mods[0] : NULL;
	Dwarf_Addr bias;
	Elf *elf = m ? dwfl_module_getelf(m->mod, &bias) : NULL;

	if (!elf || !is_static(elf))
		return -1;
	if (read_cu_ranges(s, m) == 0)
		return 0;
	s->nown_code = 0;
	return read_symtab_ranges(s, m, elf, bias);
}

int sym_static_own_code(struct sym_space *s, const struct sym_range **ranges, size_t *n)
{
	if (s->own_code_known == 0) {
		s->nown_code = 0;
		s->own_code_known = find_own_code(s) == 0 ? 1 : -1;
	}
	if (s->own_code_known < 0)
		return -1;
	*ranges = s->own_code;
	*n = s->nown_code;
	return 0;
}
