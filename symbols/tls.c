/*
 * Thread-local storage: where a module's TLS block lies in one thread.
 *
 * x86-64 uses TLS variant II: the thread pointer (fs base) points at the
 * thread control block, and the static TLS blocks lie below it.  The
 * executable's block is TLS module 1, always the first one placed, so its
 * start is fs_base - l_tls_offset with glibc's (_dl_determine_tlsoffset)
 * l_tls_offset = roundup(p_memsz - firstbyte, p_align) + firstbyte, where
 * firstbyte comes from the misalignment of PT_TLS p_vaddr.  That needs only
 * the PT_TLS program header (libelf), and works for static executables too.
 *
 * A library's block is found by libthread_db, glibc's library for
 * debuggers: td_thr_tls_get_addr takes the library's link_map address and
 * reads its module id and the thread's dtv with the field descriptors glibc
 * exports (_thread_db_*), so nothing here depends on glibc's private struct
 * layouts.  The link_map is found through ld.so's public _r_debug: the list
 * is walked through the public head of struct link_map (<link.h>), and the
 * module is the entry whose l_addr is its load bias.  libthread_db calls the
 * ps_* functions below back; the process handle carries the space and the
 * thread view of the call in progress (one thread agent per space, created
 * on the first library TLS lookup, dropped by sym_refresh).
 *
 * Limits: a block of a library loaded with dlopen that the thread has not
 * touched yet is not allocated; that is reported, not guessed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <proc_service.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread_db.h>

#include "symbols/internal.h"

#define MAX_LINK_MAPS 4096

struct ps_prochandle {
	struct sym_space *space;
	const struct sym_thread_view *view;
};

struct thread_db {
	struct ps_prochandle ph;
	td_thragent_t *ta;
};

/* --- the executable's block: static TLS, variant II --- */

static int exe_block(struct sym_mod *m, const struct sym_thread_view *view, uint64_t *base,
		     char *err, size_t errlen)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	GElf_Phdr ph;
	size_t i, n;
	uint64_t align, firstbyte, offset;

	if (!elf || elf_getphdrnum(elf, &n) != 0)
		goto none;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align ? ph.p_align : 1;
		firstbyte = -(ph.p_vaddr & (align - 1)) & (align - 1);
		offset = (ph.p_memsz - firstbyte + align - 1) / align * align + firstbyte;
		*base = view->regs->fs_base - offset;
		return 0;
	}
none:
	snprintf(err, errlen, "%s has no TLS segment", m->base);
	return -1;
}

/* --- libthread_db's view of the process --- */

static int peek_bytes(const struct sym_thread_view *view, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;
	uint64_t word, start = addr & ~7ull, a;
	size_t skip = addr - start, n;

	for (a = start; len; a += 8, skip = 0) {
		if (view->peek(view->ctx, a, &word) < 0)
			return -1;
		n = 8 - skip < len ? 8 - skip : len;
		memcpy(out, (unsigned char *)&word + skip, n);
		out += n;
		len -= n;
	}
	return 0;
}

ps_err_e ps_pdread(struct ps_prochandle *ph, psaddr_t addr, void *buf, size_t len)
{
	if (!ph->view)
		return PS_ERR;
	return peek_bytes(ph->view, (uint64_t)(uintptr_t)addr, buf, len) == 0 ? PS_OK : PS_ERR;
}

/* Finding a TLS block never writes nor needs other registers than fs base. */
ps_err_e ps_pdwrite(struct ps_prochandle *ph, psaddr_t addr, const void *buf, size_t len)
{
	(void)ph, (void)addr, (void)buf, (void)len;
	return PS_ERR;
}

ps_err_e ps_lgetregs(struct ps_prochandle *ph, lwpid_t lwp, prgregset_t regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

ps_err_e ps_lsetregs(struct ps_prochandle *ph, lwpid_t lwp, const prgregset_t regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

ps_err_e ps_lgetfpregs(struct ps_prochandle *ph, lwpid_t lwp, prfpregset_t *regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

ps_err_e ps_lsetfpregs(struct ps_prochandle *ph, lwpid_t lwp, const prfpregset_t *regs)
{
	(void)ph, (void)lwp, (void)regs;
	return PS_ERR;
}

pid_t ps_getpid(struct ps_prochandle *ph)
{
	return ph->space->pid;
}

ps_err_e ps_get_thread_area(struct ps_prochandle *ph, lwpid_t lwp, int idx, psaddr_t *addr)
{
	(void)idx;
	if (!ph->view || ph->view->tid != lwp)
		return PS_ERR;
	*addr = (psaddr_t)(uintptr_t)ph->view->regs->fs_base;
	return PS_OK;
}

/* The object name is ignored: the executable's definition wins, as in ld.so. */
ps_err_e ps_pglobal_lookup(struct ps_prochandle *ph, const char *object, const char *name,
			   psaddr_t *addr)
{
	uint64_t a;

	(void)object;
	if (sym_function(ph->space, name, &a) != 0)
		return PS_NOSYM;
	*addr = (psaddr_t)(uintptr_t)a;
	return PS_OK;
}

/* --- a library's block --- */

static int peek_field(const struct sym_thread_view *view, uint64_t addr, uint64_t *value)
{
	return view->peek(view->ctx, addr, value);
}

/* The link_map of module M, through _r_debug.r_map. */
static int find_link_map(struct sym_space *s, struct sym_mod *m, const struct sym_thread_view *view,
			 uint64_t *lm, char *err, size_t errlen)
{
	uint64_t r_debug, l_addr, bias = symi_mod_elf_bias(m);
	int i;

	if (sym_function(s, "_r_debug", &r_debug) != 0) {
		snprintf(err, errlen, "no _r_debug: cannot find %s's TLS block", m->base);
		return -1;
	}
	if (peek_field(view, r_debug + offsetof(struct r_debug, r_map), lm) < 0)
		goto unreadable;
	for (i = 0; *lm && i < MAX_LINK_MAPS; i++) {
		if (peek_field(view, *lm + offsetof(struct link_map, l_addr), &l_addr) < 0)
			goto unreadable;
		if (l_addr == bias)
			return 0;
		if (peek_field(view, *lm + offsetof(struct link_map, l_next), lm) < 0)
			goto unreadable;
	}
	snprintf(err, errlen, "%s is not in the dynamic linker's list", m->base);
	return -1;
unreadable:
	snprintf(err, errlen, "cannot read the dynamic linker's list of %s", m->base);
	return -1;
}

static td_thragent_t *thread_agent(struct sym_space *s, const struct sym_thread_view *view,
				   char *err, size_t errlen)
{
	struct thread_db *db = s->thread_db;
	td_err_e rc;

	if (!db) {
		db = calloc(1, sizeof(*db));
		if (!db) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		db->ph.space = s;
		s->thread_db = db;
	}
	db->ph.view = view;
	if (db->ta)
		return db->ta;
	/* Not cached when it fails: libc may not be loaded yet. */
	rc = td_init();
	if (rc == TD_OK)
		rc = td_ta_new(&db->ph, &db->ta);
	if (rc == TD_OK)
		return db->ta;
	db->ta = NULL;
	snprintf(err, errlen, "libthread_db cannot read this process's threads (error %d)",
		 (int)rc);
	return NULL;
}

static int library_block(struct sym_space *s, struct sym_mod *m, const struct sym_thread_view *view,
			 uint64_t *base, char *err, size_t errlen)
{
	td_thragent_t *ta;
	td_thrhandle_t th;
	psaddr_t addr;
	uint64_t lm;
	td_err_e rc;

	if (find_link_map(s, m, view, &lm, err, errlen) < 0)
		return -1;
	ta = thread_agent(s, view, err, errlen);
	if (!ta)
		return -1;
	th.th_ta_p = ta;
	th.th_unique = (psaddr_t)(uintptr_t)view->regs->fs_base;
	rc = td_thr_tls_get_addr(&th, (psaddr_t)(uintptr_t)lm, 0, &addr);
	s->thread_db->ph.view = NULL;
	if (rc == TD_OK) {
		*base = (uint64_t)(uintptr_t)addr;
		return 0;
	}
	if (rc == TD_TLSDEFER)
		snprintf(err, errlen, "%s's TLS block is not allocated yet in thread %d", m->base,
			 (int)view->tid);
	else if (rc == TD_NOTLS)
		snprintf(err, errlen, "%s has no TLS block", m->base);
	else
		snprintf(err, errlen, "libthread_db cannot find %s's TLS block (error %d)", m->base,
			 (int)rc);
	return -1;
}

int symi_tls_block(struct sym_space *s, struct sym_mod *m, const struct sym_thread_view *view,
		   uint64_t *base, char *err, size_t errlen)
{
	if (m->is_exe)
		return exe_block(m, view, base, err, errlen);
	return library_block(s, m, view, base, err, errlen);
}

void symi_tls_free(struct sym_space *s)
{
	struct thread_db *db = s->thread_db;

	if (!db)
		return;
	if (db->ta)
		td_ta_delete(db->ta);
	free(db);
	s->thread_db = NULL;
}
