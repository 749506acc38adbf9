/*
 * code.c: where each module's instructions are, section by section.
 *
 * x86 code cannot be decoded backwards, and a linear decode is only right
 * from an instruction's first byte.  A mapping of executable memory holds
 * several output sections (.init, .plt, .plt.got, .text, .fini), and the
 * linker fills the gaps between them with zeros, which decode as 2-byte
 * "add [rax], al": a decode carried across a gap ends out of step with
 * the next section's instructions.  With a PIE linked by Debian's gcc,
 * one zero byte between .text and .fini made .fini's "sub rsp, 8" read as
 * the tail of another instruction, and a point planted there turned it
 * into "sub rsp, -52": the program crashed at its exit.  So a linear
 * decode starts again at each section's first byte, which is an
 * instruction's.
 *
 * A module without section headers (they may be stripped; the loader does
 * not need them) is given by its executable segments instead.
 */
#include <stdlib.h>

#include "symbols/internal.h"

static int add_code(struct sym_space *s, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (symi_reserve(&s->code, cap, s->ncode, sizeof(*s->code)) < 0)
		return -1;
	s->code[s->ncode++] = (struct sym_range){lo, hi};
	return 0;
}

static int add_sections(struct sym_space *s, const struct sym_mod *m, Elf *elf, Dwarf_Addr bias,
			size_t *cap, bool *any)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !sh.sh_size ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		*any = true;
		if (add_code(s, cap, symi_space_out_addr(s, m, sh.sh_addr + bias),
			     symi_space_out_addr(s, m, sh.sh_addr + sh.sh_size + bias)) < 0)
			return -1;
	}
	return 0;
}

static int add_segments(struct sym_space *s, const struct sym_mod *m, Elf *elf, Dwarf_Addr bias,
			size_t *cap)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_filesz &&
		    add_code(s, cap, symi_space_out_addr(s, m, ph.p_vaddr + bias),
			     symi_space_out_addr(s, m, ph.p_vaddr + ph.p_filesz + bias)) < 0)
			return -1;
	return 0;
}

static int find_code(struct sym_space *s)
{
	size_t i, cap = 0;

	s->ncode = 0;
	for (i = 0; i < s->nmods; i++) {
		Dwarf_Addr bias;
		Elf *elf = dwfl_module_getelf(s->mods[i].mod, &bias);
		bool any = false;

		if (!elf)
			continue;
		if (add_sections(s, &s->mods[i], elf, bias, &cap, &any) < 0 ||
		    (!any && add_segments(s, &s->mods[i], elf, bias, &cap) < 0))
			return -1;
	}
	qsort(s->code, s->ncode, sizeof(*s->code), symi_range_by_lo);
	return 0;
}

int sym_code_sections(struct sym_space *s, const struct sym_range **ranges, size_t *n)
{
	if (!s->code_known) {
		if (find_code(s) < 0)
			return -1;
		s->code_known = true;
	}
	*ranges = s->code;
	*n = s->ncode;
	return 0;
}
