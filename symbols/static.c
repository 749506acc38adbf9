/*
 * static.c: a statically linked program's own code.
 *
 * A dynamically linked program's code and libc's are different files, and
 * the engine tells them apart by their paths.  A statically linked one has
 * libc (and libpthread, libstdc++...) linked into its executable: by path,
 * all of it is the program's, and `cctrace test` profiled, searched and
 * scheduled the inside of malloc, stdio and the dynamic loader's stubs as
 * if the program had written them (hundreds of shared points, and a lost
 * update of the program's own never found).  Its compile units tell them
 * apart: the program is built with -g to be debugged, and the system's
 * static archives (Debian's libc.a) carry no debugging information.  So
 * the program's own code is what its compile units cover.  A static
 * executable without debugging information, or one whose libc was built
 * with it, stays all the program's own: cctrace cannot tell, and says so
 * by answering -1.
 */
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

static int find_own_code(struct sym_space *s)
{
	const struct sym_mod *m = s->nmods && s->mods[0].is_exe ? &s->mods[0] : NULL;
	Dwarf_Addr bias;
	Elf *elf = m ? dwfl_module_getelf(m->mod, &bias) : NULL;

	if (!elf || !is_static(elf))
		return -1;
	return read_cu_ranges(s, m);
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
