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
 *
 * libunwind finds a module's CFI through its .eh_frame_hdr, and a static
 * link on Debian has none: libunwind then guesses frames by the frame
 * pointer, with the right return addresses but wrong stack pointers, which
 * return(F) matches frames by.  Such an executable is unwound by libdw's
 * unwinder instead, which reads .eh_frame itself; it is attached to the
 * live Dwfl once, on the assumption (true here) that the thread is in a
 * ptrace stop of ours, so it never attaches or detaches either.
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

/* One frame, from either unwinder; EXACT: pc is not a return address. */
static void fill_frame(struct sym_space *s, uint64_t pc, uint64_t sp, bool exact,
		       struct sym_frame *f)
{
	*f = (struct sym_frame){.pc = pc, .sp = sp, .exact = exact || pc == 0};
	sym_describe_function(s, f->exact ? pc : pc - 1, &f->loc);
	/* a return address at a function's first byte (a handler's, which is
	 * __restore_rt: the kernel makes it the return address) names that
	 * function, not whatever lies before it */
	if (!f->exact && !f->loc.func && sym_describe_function(s, pc, &f->loc) == 0 && f->loc.func)
		f->exact = true;
}

static int read_frame(struct sym_space *s, unw_cursor_t *c, bool exact, struct sym_frame *f)
{
	unw_word_t ip, sp;

	if (unw_get_reg(c, UNW_REG_IP, &ip) < 0 || unw_get_reg(c, UNW_REG_SP, &sp) < 0)
		return -1;
	fill_frame(s, ip, sp, exact, f);
	return 0;
}

/* Does the executable lack .eh_frame_hdr (PT_GNU_EH_FRAME)? */
static bool exe_lacks_eh_hdr(struct sym_space *s)
{
	GElf_Addr bias;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;

	if (s->exe_eh_hdr)
		return s->exe_eh_hdr < 0;
	s->exe_eh_hdr = 1;
	elf = s->nmods ? dwfl_module_getelf(s->mods[0].mod, &bias) : NULL;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return false;
	s->exe_eh_hdr = -1;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			s->exe_eh_hdr = 1;
	return s->exe_eh_hdr < 0;
}

struct dw_walk {
	struct sym_space *s;
	struct sym_frame *frames;
	int n, max;
};

static int dw_frame(Dwfl_Frame *frame, void *arg)
{
	struct dw_walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool exact;

	if (w->n >= w->max || !dwfl_frame_pc(frame, &pc, &exact) ||
	    dwfl_frame_reg(frame, 7 /* DWARF's rsp */, &sp) != 0)
		return DWARF_CB_ABORT;
	fill_frame(w->s, pc, sp, exact, &w->frames[w->n]);
	return ++w->n < w->max && pc ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int dw_backtrace(struct sym_space *s, pid_t tid, struct sym_frame *frames, int max)
{
	struct dw_walk w = {.s = s, .frames = frames, .max = max};

	if (s->unwind_dwfl != s->dwfl) {
		if (dwfl_linux_proc_attach(s->dwfl, s->pid, true) != 0)
			return -1;
		s->unwind_dwfl = s->dwfl;
	}
	if (max <= 0)
		return 0;
	dwfl_getthread_frames(s->dwfl, tid, dw_frame, &w);
	return w.n ? w.n : -1;
}

int sym_backtrace(struct sym_space *s, pid_t tid, struct sym_frame *frames, int max)
{
	unw_addr_space_t as = addr_space(s);
	unw_cursor_t c;
	void *upt;
	bool exact = true;
	int n = 0;

	if (s->pid && exe_lacks_eh_hdr(s))
		return dw_backtrace(s, tid, frames, max);
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
