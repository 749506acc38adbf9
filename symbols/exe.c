/*
 * exe.c: why the program's own names cannot be found.
 *
 * A function lookup that fails is usually a misspelling, but three
 * situations make every name of the executable unknowable, and the user
 * can only fix them once told which: the executable was deleted (or
 * replaced, as an upgrade does) after the process started, it has no
 * symbol table (stripped; only its exported dynamic symbols remain, unless
 * its debug symbols are installed), or it is not an x86-64 ELF file at all
 * (a 32-bit program, which cctrace does not trace).  The last is refused
 * when a space is opened, before anything is launched or attached; the
 * first two are explained when a name is not found.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"

static const char deleted_suffix[] = " (deleted)";

int symi_check_elf_kind(const char *path, const char *shown, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	GElf_Ehdr eh;
	Elf *elf;

	if (fd < 0)
		return 0; /* not ours to report: the caller's open says why */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh)) {
		if (eh.e_ident[EI_CLASS] == ELFCLASS32) {
			snprintf(err, errlen,
				 "%s is a 32-bit ELF program (%s): cctrace traces x86-64 programs "
				 "only",
				 shown, eh.e_machine == EM_386 ? "i386" : "not x86-64");
			rc = -1;
		} else if (eh.e_machine != EM_X86_64) {
			snprintf(err, errlen,
				 "%s is an ELF program for another machine (e_machine %d): cctrace "
				 "traces x86-64 programs only",
				 shown, (int)eh.e_machine);
			rc = -1;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/* The executable of a live process was deleted: /proc/PID/exe says so. */
static int deleted_exe(const struct sym_space *s, char *buf, size_t len)
{
	char link[64], target[PATH_MAX];
	size_t n, suffix = sizeof(deleted_suffix) - 1;
	ssize_t got;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)s->pid);
	got = readlink(link, target, sizeof(target) - 1);
	if (got < 0)
		return -1;
	n = (size_t)got;
	target[n] = 0;
	if (n <= suffix || strcmp(target + n - suffix, deleted_suffix) != 0)
		return -1;
	target[n - suffix] = 0;
	snprintf(buf, len,
		 "the executable of pid %d, %s, was deleted (or replaced, as by an upgrade) "
		 "after the process started (%s ends with \"%s\"), so its symbols cannot be "
		 "read; restart the program to trace it",
		 (int)s->pid, target, link, deleted_suffix + 1);
	return 0;
}

/* Programs whose work is to run another one: a schedule meant for that
 * one is checked against them (the names are looked for before anything
 * runs, in the program given), which no debug symbols can mend. */
static bool is_launcher(const char *path)
{
	static const char *const launchers[] = {
	    "env",    "sh",	  "bash",    "dash",   "zsh",	 "nice",    "nohup",   "taskset",
	    "stdbuf", "timeout",  "setarch", "chrt",   "ionice", "numactl", "sudo",    "xargs",
	    "time",   "valgrind", "strace",  "ltrace", "gdb",	 "setsid",  "unshare", "flock",
	};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t i;

	for (i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (strcmp(base, launchers[i]) == 0)
			return true;
	return false;
}

int sym_exe_problem(struct sym_space *s, char *buf, size_t len)
{
	const char *mainfile = NULL, *debugfile = NULL;
	const struct sym_mod *m;
	Dwarf_Addr bias;
	Elf *elf;

	if (s->pid && deleted_exe(s, buf, len) == 0)
		return 0;
	if (!s->nmods || !s->mods[0].is_exe)
		return -1;
	m = &s->mods[0];
	elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf || has_symtab(elf))
		return -1;
	/* Separate debug symbols (a -dbgsym package, .gnu_debuglink) bring
	 * the table back: look for them before blaming the strip. */
	dwfl_module_getdwarf(m->mod, &bias);
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (debugfile)
		return -1;
	if (is_launcher(mainfile ? mainfile : m->name)) {
		snprintf(buf, len,
			 "%s runs other programs, and the schedule's names are looked for in "
			 "the program given after --, before it runs: give your own program "
			 "there (set its environment, priority or CPUs for cctrace itself)",
			 mainfile ? mainfile : m->name);
		return 0;
	}
	snprintf(buf, len,
		 "the executable %s has no symbol table (it was stripped), so only the "
		 "functions it exports have names; install its debug symbols (its -dbgsym or "
		 "-debuginfo package) or use a build that is not stripped",
		 mainfile ? mainfile : m->name);
	return 0;
}
