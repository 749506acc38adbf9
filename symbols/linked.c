/*
 * linked.c: which members of the system's static archives a statically
 * linked executable holds.
 *
 * A static executable built without debugging information still has its
 * symbol table, in which libc's functions and the program's sit side by
 * side.  The archives it was linked from tell them apart: every archive's
 * index lists the global names each member defines, and a static link
 * copies a member whole, so a member was linked when every name its index
 * lists is defined in the executable.  "Every", not "one": a program that
 * defines its own `error` does not make libc's error.o (which also defines
 * error_at_line and three more) linked, and its `error` stays its own.
 *
 * The archives read are glibc's and gcc's runtime (libgcc, libstdc++),
 * in the system's library directories: what a static link takes without
 * being asked.  Their indexes alone are read, and a member's header only
 * when it was linked.  The result names what is libc's; the caller decides what
 * is the program's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/internal.h"

/* glibc's archives, and gcc's runtime that `gcc -static` and `g++
 * -static` link by themselves.  Not every lib*.a: libgtest_main.a and
 * libcriterion.a define `main` alone, so by the rule above any program's
 * main would be theirs. */
#define GLIBC_ARCHIVES "lib{c,pthread,rt,dl,m,m-*,mvec,resolv,util,anl}.a"
#define GCC_ARCHIVES   "lib{gcc,gcc_eh,stdc++,supc++,atomic}.a"
static const char *const archive_patterns[] = {
    "/lib/x86_64-linux-gnu/" GLIBC_ARCHIVES,
    "/usr/lib/x86_64-linux-gnu/" GLIBC_ARCHIVES,
    "/lib64/" GLIBC_ARCHIVES,
    "/usr/lib64/" GLIBC_ARCHIVES,
    "/usr/lib/" GLIBC_ARCHIVES,
    "/usr/lib/gcc/*/*/" GCC_ARCHIVES,
};

struct index_entry {
	size_t member; /* the member's offset in the archive */
	const char *name;
	bool defined;
};

struct seen_file {
	dev_t dev;
	ino_t ino;
};

struct walk {
	struct symi_arena *arena;
	struct strmap *names; /* the executable's defined names -> SYMI_NAME_* */
	struct strmap *stems; /* linked members' names without extension */
	struct index_entry *entries;
	size_t cap;
	struct seen_file *seen;
	size_t nseen, seen_cap;
};

static int by_member(const void *a, const void *b)
{
	const struct index_entry *x = a, *y = b;

	return (x->member > y->member) - (x->member < y->member);
}

/* name without its directory and its last extension, in the arena */
char *symi_file_stem(struct symi_arena *a, const char *name)
{
	const char *base = strrchr(name, '/'), *dot;
	char *stem;

	base = base ? base + 1 : name;
	dot = strrchr(base, '.');
	stem = symi_arena_strdup(a, base);
	if (stem && dot && dot != base)
		stem[dot - base] = '\0';
	return stem;
}

static int note_member(struct walk *w, int fd, Elf *ar, size_t off)
{
	Elf *member;
	Elf_Arhdr *hdr;
	char *stem = NULL;
	bool named;

	if (elf_rand(ar, off) != off)
		return 0;
	member = elf_begin(fd, ELF_C_READ_MMAP, ar);
	hdr = member ? elf_getarhdr(member) : NULL;
	named = hdr && hdr->ar_name;
	if (named)
		stem = symi_file_stem(w->arena, hdr->ar_name);
	elf_end(member);
	if (named && (!stem || symi_strmap_put(w->stems, stem, stem) < 0))
		return -1;
	return 0;
}

/* Mark the names of the members of [e, end) that the executable linked:
 * one member's entries, every one of them defined. */
static int mark_if_linked(struct walk *w, int fd, Elf *ar, struct index_entry *e,
			  const struct index_entry *end)
{
	const struct index_entry *i;

	for (i = e; i < end; i++)
		if (!i->defined)
			return 0;
	for (i = e; i < end; i++)
		if (symi_strmap_put(w->names, i->name, (void *)SYMI_NAME_SYSTEM) < 0)
			return -1;
	return note_member(w, fd, ar, e->member);
}

static int read_index(struct walk *w, int fd, Elf *ar)
{
	size_t n = 0, i, j, k = 0;
	Elf_Arsym *sym = elf_getarsym(ar, &n);

	if (!sym)
		return 0;
	for (i = 0; i < n; i++) {
		if (!sym[i].as_name) /* the terminating entry */
			continue;
		if (symi_reserve(&w->entries, &w->cap, k, sizeof(*w->entries)) < 0)
			return -1;
		w->entries[k++] = (struct index_entry){
		    .member = (size_t)sym[i].as_off,
		    .name = sym[i].as_name,
		    .defined = symi_strmap_get(w->names, sym[i].as_name) != NULL,
		};
	}
	if (k)
		qsort(w->entries, k, sizeof(*w->entries), by_member);
	for (i = 0; i < k; i = j) {
		for (j = i + 1; j < k && w->entries[j].member == w->entries[i].member; j++)
			;
		if (mark_if_linked(w, fd, ar, &w->entries[i], &w->entries[j]) < 0)
			return -1;
	}
	return 0;
}

/* /lib and /usr/lib are one directory on a merged-/usr system. */
static bool seen_before(struct walk *w, int fd)
{
	struct stat st;
	size_t i;

	if (fstat(fd, &st) < 0)
		return true;
	for (i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == st.st_dev && w->seen[i].ino == st.st_ino)
			return true;
	if (symi_reserve(&w->seen, &w->seen_cap, w->nseen, sizeof(*w->seen)) == 0)
		w->seen[w->nseen++] = (struct seen_file){st.st_dev, st.st_ino};
	return false;
}

static int read_archive(struct walk *w, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	Elf *ar;

	if (fd < 0)
		return 0; /* unreadable: not ours to judge */
	if (seen_before(w, fd))
		goto out;
	ar = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (ar && elf_kind(ar) == ELF_K_AR) /* libm.a is a linker script */
		rc = read_index(w, fd, ar);
	elf_end(ar);
out:
	close(fd);
	return rc;
}

int symi_mark_linked_members(struct symi_arena *arena, struct strmap *names, struct strmap *stems)
{
	struct walk w = {.arena = arena, .names = names, .stems = stems};
	size_t p, i;
	int rc = 0;

	for (p = 0; rc == 0 && p < sizeof(archive_patterns) / sizeof(archive_patterns[0]); p++) {
		glob_t g;

		if (glob(archive_patterns[p], GLOB_BRACE, NULL, &g) != 0)
			continue;
		for (i = 0; rc == 0 && i < g.gl_pathc; i++)
			rc = read_archive(&w, g.gl_pathv[i]);
		globfree(&g);
	}
	free(w.entries);
	free(w.seen);
	return rc;
}
