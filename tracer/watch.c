/*
 * watch.c: hardware watchpoints in DR0-DR3.
 *
 * Debug registers belong to a thread, not to a process, and a new thread
 * starts with them clear.  So the process keeps the wanted configuration
 * (watch[] and a generation number) and every thread carries the
 * generation it last wrote.  A held thread is brought up to date before it
 * resumes; running threads are interrupted once when the configuration
 * changes, and sync at that stop, which the caller never sees.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#define DR_OFFSET(i) offsetof(struct user, u_debugreg[i])

static unsigned long dr7_len_bits(int len)
{
	switch (len) {
	case 1:
		return 0;
	case 2:
		return 1;
	case 8:
		return 2;
	default:
		return 3;
	}
}

static unsigned long wanted_dr7(const struct tr_process *p)
{
	unsigned long dr7 = 0;
	int i;

	for (i = 0; i < TR_MAX_WATCH; i++) {
		const struct tr_watch *w = &p->watch[i];

		if (!w->used)
			continue;
		dr7 |= 1ul << (2 * i);
		dr7 |= ((unsigned long)w->kind | dr7_len_bits(w->len) << 2) << (16 + 4 * i);
	}
	return dr7;
}

int tr_watch_sync(struct tr_thread *th)
{
	struct tr_process *p = th->proc;
	unsigned long dr7 = wanted_dr7(p);
	int i;

	/* A new thread of a process without watchpoints: nothing to write
	 * (two system calls saved per thread a run creates). */
	if (!dr7 && tr_has(th, TF_DR7_CLEAR)) {
		th->dr_generation = p->dr_generation;
		return 0;
	}
	if (dr7)
		tr_guard_watch(p);
	/* DR7 off first: the kernel validates each address against DR7. */
	if (ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(7), 0) < 0)
		return -1;
	for (i = 0; i < TR_MAX_WATCH; i++) {
		if (!p->watch[i].used)
			continue;
		if (ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(i), p->watch[i].addr) < 0)
			return -1;
	}
	if (ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(7), dr7) < 0)
		return -1;
	tr_assign(th, TF_DR7_CLEAR, !dr7);
	th->dr_generation = p->dr_generation;
	return 0;
}

void tr_watch_clear(struct tr_thread *th)
{
	int i;

	ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(7), 0);
	for (i = 0; i < TR_MAX_WATCH; i++)
		ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(i), 0);
	ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(6), 0);
}

/* Did a debug register cause th's SIGTRAP?  Reads and clears DR6; the
 * slot may since have been freed, which the caller checks. */
int tr_watch_hit(struct tr_thread *th, int *slot)
{
	long dr6;
	int i;

	errno = 0;
	dr6 = ptrace(PTRACE_PEEKUSER, th->tid, DR_OFFSET(6), 0);
	if (errno)
		return 0;
	for (i = 0; i < TR_MAX_WATCH; i++) {
		if (dr6 & (1l << i)) {
			ptrace(PTRACE_POKEUSER, th->tid, DR_OFFSET(6), 0);
			*slot = i;
			return 1;
		}
	}
	return 0;
}

static void refresh_all_threads(struct tr_process *p)
{
	struct tr_thread *th;

	p->dr_generation++;
	for (th = p->tracer->threads; th; th = th->next) {
		if (th->proc != p || th->state == TR_EXITED)
			continue;
		if (th->state == TR_HELD)
			tr_watch_sync(th);
		else if (!tr_has(th, TF_INTERRUPTING) &&
			 ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0)
			tr_set(th, TF_INTERRUPTING);
	}
}

int tracer_watch_insert(struct tr_process *p, uint64_t addr, int len, enum tr_watch_kind kind,
			char *err, size_t errlen)
{
	int i, free_slot = -1;

	if (len != 1 && len != 2 && len != 4 && len != 8) {
		snprintf(err, errlen, "a hardware watchpoint covers 1, 2, 4 or 8 bytes, not %d",
			 len);
		return -1;
	}
	if (addr % (uint64_t)len) {
		snprintf(err, errlen, "address %#lx is not aligned to its size %d",
			 (unsigned long)addr, len);
		return -1;
	}
	for (i = 0; i < TR_MAX_WATCH; i++) {
		struct tr_watch *w = &p->watch[i];

		assert(!w->used || w->refs > 0);
		if (w->used && w->addr == addr && w->len == len && w->kind == kind) {
			w->refs++;
			return i;
		}
		if (!w->used && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		snprintf(err, errlen,
			 "x86-64 has 4 debug registers and all 4 hold watchpoints already");
		return -1;
	}
	/* A debug register's trap needs the rescue handler as a breakpoint does. */
	if (tr_guard_prepare(p, err, errlen) < 0)
		return -1;
	p->watch[free_slot] =
	    (struct tr_watch){.used = true, .refs = 1, .addr = addr, .len = len, .kind = kind};
	refresh_all_threads(p);
	return free_slot;
}

void tracer_watch_remove(struct tr_process *p, int slot)
{
	if (slot < 0 || slot >= TR_MAX_WATCH || !p->watch[slot].used)
		return;
	assert(p->watch[slot].refs > 0);
	if (--p->watch[slot].refs > 0)
		return;
	p->watch[slot].used = false;
	refresh_all_threads(p);
}
