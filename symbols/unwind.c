/*
 * Stacks: sym_backtrace with libunwind-ptrace.
 *
 * One unw_addr_space is created per sym_space on the first backtrace and
 * kept (with libunwind's global caching policy, so unwind tables read once
 * are reused across calls); sym_refresh flushes its caches because the
 * mappings may have changed.  The per-thread _UPT context is created and
 * destroyed around each call: it is cheap, and it is tied to the tid.
 *
 * This file never attaches or detaches: the caller guarantees the thread is
 * in a ptrace stop, and the _UPT accessors only read registers and memory
 * with PTRACE_PEEK*.
 *
 * Frame 0 reports the pc itself.  Outer frames report the return address
 * but describe pc - 1, the call instruction, so that a call at the end of a
 * function or of a line is attributed to the right one; the exception is a
 * frame interrupted by a signal, whose pc is exact.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <libunwind-ptrace.h>

#include "symbols/internal.h"

static unw_addr_space_t addr_space(struct sym_space *s)
{
	unw_addr_space_t as;

	if (s->unw_as)
		return s->unw_as;
	as = unw_create_addr_space(&_UPT_accessors, 0);
	if (!as)
		return NULL;
	unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
	s->unw_as = as;
	return as;
}

void symi_unwind_flush(struct sym_space *s)
{
	if (s->unw_as)
		unw_flush_cache(s->unw_as, 0, 0);
}

void symi_unwind_free(struct sym_space *s)
{
	if (s->unw_as)
		unw_destroy_addr_space(s->unw_as);
	s->unw_as = NULL;
}

/* Fill one frame from the cursor; EXACT: pc is not a return address. */
static int read_frame(struct sym_space *s, unw_cursor_t *c, bool exact, struct sym_frame *f)
{
	unw_word_t ip, sp;

	if (unw_get_reg(c, UNW_REG_IP, &ip) < 0 || unw_get_reg(c, UNW_REG_SP, &sp) < 0)
		return -1;
	f->pc = ip;
	f->sp = sp;
	sym_describe_function(s, exact || ip == 0 ? ip : ip - 1, &f->loc);
	return 0;
}

int sym_backtrace(struct sym_space *s, pid_t tid, struct sym_frame *frames, int max)
{
	unw_addr_space_t as = addr_space(s);
	unw_cursor_t c;
	void *upt;
	bool exact = true;
	int n = 0;

	if (!as || max < 0)
		return -1;
	upt = _UPT_create(tid);
	if (!upt)
		return -1;
	if (unw_init_remote(&c, as, upt) < 0) {
		n = -1;
		goto out;
	}
	while (n < max) {
		if (read_frame(s, &c, exact, &frames[n]) < 0)
			break;
		if (frames[n++].pc == 0)
			break;
		exact = unw_is_signal_frame(&c) > 0;
		if (unw_step(&c) <= 0)
			break;
	}
out:
	_UPT_destroy(upt);
	return n;
}
