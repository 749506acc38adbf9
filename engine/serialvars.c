/*
 * serialvars.c: the shared variables of `cctrace test`, for vb and pctvb.
 *
 * Why.  Variable bounding (004) preempts only at accesses to a few
 * variables; without a schedule nobody names them, so the profiling phase
 * must.  A variable is what a person would call one:
 *   - a global (or file-static) variable: the ELF symbol that covers the
 *     address, sized by its DWARF type (symbols/), so every element of an
 *     array or member of a struct is the one variable;
 *   - a heap object, by allocation site: every block that one call site
 *     of an allocation function returned is the one variable (the objects
 *     one line of code makes play the one role).  The functions are C's
 *     (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign,
 *     valloc, pvalloc) and C++'s operator new and new[] (plain, aligned,
 *     nothrow);
 *   - the synchronisation objects the pthread functions are given (their
 *     first argument), as a global or a heap object like any other: a
 *     preemption at a lock is one at that lock;
 *   - "exit", the process's end, when profiling saw a thread call exit
 *     while another was alive: whether the others run before a main that
 *     returns without joining is a choice about shared state (all of it),
 *     and without a variable there vb could never let them (account_bad).
 * Profiling runs (engine_serial.profile) plant breakpoints on the entries
 * of the allocation functions; at an entry the size and the return address
 * are noted, a breakpoint goes on the return address, and there the block
 * [rax, rax + size) is recorded with its site (posix_memalign's block is
 * *memptr, read at the return; rax is its error).  One allocation is one
 * block at its outermost call: libstdc++'s operator new calls malloc, the
 * aligned one aligned_alloc, new[] jumps to new, and the block is the
 * caller's of new, not new's own.  A call whose return address lies in an
 * allocation function is such an inner call and is not tracked; a tail
 * call arrives with the outer call's stack pointer and replaces it; a
 * pending call whose stack pointer is below the one of a new call of the
 * same thread was left without a return (an exception, a longjmp) and is
 * dropped.  Each access profiling
 * records is keyed by its variable then and there (so a block freed and
 * reused is keyed right); at the run's end the variables of the shared
 * addresses (two threads, one writing) join cfg->vars, and the heap ones
 * remember the instructions that touched them (cfg->var_points).
 *
 * In the search's runs no allocation is tracked (it would cost two stops a
 * malloc): the variable of a thread held at an access point is the global
 * whose range holds the address the instruction is about to touch, else
 * the heap variable profiling saw that instruction touch (the first, if it
 * touched several); at a synchronisation function, the same for its
 * object.  -1 when neither is known.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"
#include "symbols/symbols.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where an allocation function is given its size, and where it returns
 * its block. */
enum alloc_size {
	SIZE_RDI,	/* malloc(size), valloc, operator new(size, ...) */
	SIZE_RSI,	/* realloc(p, size), aligned_alloc(align, size), memalign */
	SIZE_RDI_RSI,	/* calloc(n, size) */
	SIZE_RDI_PAGES, /* pvalloc(size): whole pages */
	SIZE_RDX_MEMPTR /* posix_memalign(&block, align, size): error in rax */
};

static const struct alloc_fn {
	const char *name;
	enum alloc_size size;
} alloc_fns[] = {
    {"malloc", SIZE_RDI},
    {"calloc", SIZE_RDI_RSI},
    {"realloc", SIZE_RSI},
    {"posix_memalign", SIZE_RDX_MEMPTR},
    {"aligned_alloc", SIZE_RSI},
    {"memalign", SIZE_RSI},
    {"valloc", SIZE_RDI},
    {"pvalloc", SIZE_RDI_PAGES},
    {"_Znwm", SIZE_RDI}, /* operator new(size_t) */
    {"_Znam", SIZE_RDI}, /* operator new[](size_t) */
    {"_ZnwmRKSt9nothrow_t", SIZE_RDI},
    {"_ZnamRKSt9nothrow_t", SIZE_RDI},
    {"_ZnwmSt11align_val_t", SIZE_RDI},
    {"_ZnamSt11align_val_t", SIZE_RDI},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", SIZE_RDI},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", SIZE_RDI},
};
#define NALLOC_FNS (sizeof(alloc_fns) / sizeof(alloc_fns[0]))

struct pending_alloc {
	struct tr_thread *th;
	uint64_t ret, size;
	uint64_t rsp;	 /* at the entry: tells a nested, tail or abandoned call */
	uint64_t memptr; /* posix_memalign's: where the block is; 0: in rax */
};

struct block {
	uint64_t lo, hi, site;
};

struct serial_vars {
	struct engine_serial *cfg;
	struct sym_space *syms; /* the main process's, borrowed */
	uint64_t alloc_addr[NALLOC_FNS];
	uint64_t *ret_armed; /* return addresses with a breakpoint */
	size_t nret;
	uint64_t *ret_inner; /* return addresses in an allocation function */
	size_t ninner;
	struct pending_alloc *pending;
	size_t npending;
	struct block *blocks; /* this run's allocations, in order */
	size_t nblocks;
	struct engine_var *keys; /* the variables profiling met, shared or not */
	size_t nkeys;
};

struct serial_vars *svars_new(struct engine_serial *cfg)
{
	struct serial_vars *v = calloc(1, sizeof(*v));

	if (v)
		v->cfg = cfg;
	return v;
}

void svars_free(struct serial_vars *v)
{
	if (!v)
		return;
	free(v->ret_armed);
	free(v->ret_inner);
	free(v->pending);
	free(v->blocks);
	free(v->keys);
	free(v);
}

static int grow(void *arrayp, size_t n, size_t size)
{
	void **array = arrayp;
	void *grown;

	if (n & (n - 1) && n > 8)
		return 0; /* room until the next power of two */
	grown = realloc(*array, size * (n < 8 ? 8 : n * 2));
	if (!grown)
		return -1;
	*array = grown;
	return 0;
}

/* The allocation function whose entry is addr; -1 if none. */
static int alloc_fn_at(const struct serial_vars *v, uint64_t addr)
{
	size_t i;

	for (i = 0; i < NALLOC_FNS; i++)
		if (v->alloc_addr[i] && v->alloc_addr[i] == addr)
			return (int)i;
	return -1;
}

int svars_plant(struct serial_vars *v, struct run *r, struct tr_process *p, struct sym_space *syms)
{
	size_t i;

	v->syms = syms;
	if (!v->cfg->profile)
		return 0;
	memset(v->alloc_addr, 0, sizeof(v->alloc_addr));
	for (i = 0; i < NALLOC_FNS; i++) {
		uint64_t addr = 0;

		if (sym_function(syms, alloc_fns[i].name, &addr) < 0 || !addr ||
		    alloc_fn_at(v, addr) >= 0)
			continue; /* absent, or an alias (glibc's memalign, aligned_alloc) */
		v->alloc_addr[i] = addr;
		if (points_arm_breakpoint(r, p, addr) < 0)
			return -1;
	}
	return 0;
}

/* Would serial.c plant addr as an access point under --points all? */
static bool is_access_point(struct tr_process *p, uint64_t addr)
{
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;

	return tracer_decode_at(p, addr, code, &insn) == 0 && serial_access_insn(&insn);
}

static uint64_t whole_pages(uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t unit = page > 0 ? (uint64_t)page : 4096;

	return size ? (size + unit - 1) / unit * unit : unit;
}

static uint64_t alloc_size(const struct user_regs_struct *regs, enum alloc_size how)
{
	switch (how) {
	case SIZE_RDI:
		return regs->rdi;
	case SIZE_RSI:
		return regs->rsi;
	case SIZE_RDI_RSI:
		return regs->rdi * regs->rsi;
	case SIZE_RDI_PAGES:
		return whole_pages(regs->rdi);
	case SIZE_RDX_MEMPTR:
		return regs->rdx;
	}
	return 0;
}

static bool in_list(const uint64_t *list, size_t n, uint64_t addr)
{
	while (n-- > 0)
		if (list[n] == addr)
			return true;
	return false;
}

/* Is ret, a call's return address, inside an allocation function (the
 * call one it makes, as operator new calls malloc)?  Remembered per
 * address: one symbol lookup per call site. */
static int inner_call(struct serial_vars *v, struct run *r, struct tr_process *p, uint64_t ret)
{
	struct sym_loc loc;

	if (in_list(v->ret_armed, v->nret, ret))
		return 0;
	if (in_list(v->ret_inner, v->ninner, ret))
		return 1;
	if (v->syms && sym_describe_function(v->syms, ret, &loc) == 0 && loc.func &&
	    alloc_fn_at(v, ret - loc.func_offset) >= 0) {
		if (grow(&v->ret_inner, v->ninner, sizeof(*v->ret_inner)) < 0)
			return -1;
		v->ret_inner[v->ninner++] = ret;
		return 1;
	}
	if (grow(&v->ret_armed, v->nret, sizeof(*v->ret_armed)) < 0 ||
	    points_arm_breakpoint(r, p, ret) < 0)
		return -1;
	v->ret_armed[v->nret++] = ret;
	return 0;
}

/* th's pending call at stack pointer rsp, after dropping those its stack
 * has left; NULL if none. */
static struct pending_alloc *pending_at(struct serial_vars *v, struct tr_thread *th, uint64_t rsp)
{
	struct pending_alloc *same = NULL;
	size_t i = v->npending;

	while (i-- > 0) {
		if (v->pending[i].th != th || v->pending[i].rsp > rsp)
			continue;
		if (v->pending[i].rsp == rsp) {
			same = &v->pending[i];
			continue;
		}
		v->pending[i] = v->pending[--v->npending];
		if (same == &v->pending[v->npending])
			same = &v->pending[i];
	}
	return same;
}

static int alloc_entered(struct serial_vars *v, struct run *r, struct tr_thread *th, size_t fn)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	struct tr_process *p = tracer_thread_process(th);
	struct pending_alloc call = {th, 0, alloc_size(regs, alloc_fns[fn].size), regs->rsp,
				     alloc_fns[fn].size == SIZE_RDX_MEMPTR ? regs->rdi : 0},
			     *same;
	int inner;

	if (tracer_read(p, regs->rsp, &call.ret, sizeof(call.ret)) < 0)
		return 0;
	inner = inner_call(v, r, p, call.ret);
	if (inner != 0)
		return inner < 0 ? -1 : 0;
	same = pending_at(v, th, regs->rsp);
	if (same) { /* a tail call: the same return, its own size */
		*same = call;
		return 0;
	}
	if (grow(&v->pending, v->npending, sizeof(*v->pending)) < 0)
		return -1;
	v->pending[v->npending++] = call;
	return 0;
}

/* The latest pending allocation of th returning to addr: its block. */
static int alloc_returned(struct serial_vars *v, struct tr_thread *th, uint64_t addr)
{
	size_t i = v->npending;
	uint64_t lo = tracer_regs(th)->rax;

	while (i-- > 0)
		if (v->pending[i].th == th && v->pending[i].ret == addr)
			break;
	if (i == (size_t)-1)
		return 0;
	if (v->pending[i].memptr &&
	    (lo != 0 ||
	     tracer_read(tracer_thread_process(th), v->pending[i].memptr, &lo, sizeof(lo)) < 0))
		lo = 0; /* posix_memalign failed: no block */
	if (lo && grow(&v->blocks, v->nblocks, sizeof(*v->blocks)) < 0)
		return -1;
	if (lo)
		v->blocks[v->nblocks++] = (struct block){lo, lo + v->pending[i].size, addr};
	v->pending[i] = v->pending[--v->npending];
	return 0;
}

int svars_break(struct serial_vars *v, struct run *r, struct tr_thread *th, uint64_t addr)
{
	int fn;

	if (!v->cfg->profile)
		return 0;
	fn = alloc_fn_at(v, addr);
	if (fn >= 0) {
		if (alloc_entered(v, r, th, (size_t)fn) < 0)
			return -1;
		run_resume(r, th);
		return 1;
	}
	if (!in_list(v->ret_armed, v->nret, addr))
		return 0;
	if (alloc_returned(v, th, addr) < 0)
		return -1;
	if (is_access_point(tracer_thread_process(th), addr))
		return 0; /* also a point: serial.c stops there */
	run_resume(r, th);
	return 1;
}

/* --- variables --- */

static int var_find(const struct engine_serial *cfg, const struct engine_var *want)
{
	size_t i;

	for (i = 0; i < cfg->nvars; i++)
		if (cfg->vars[i].site == want->site && cfg->vars[i].lo == want->lo)
			return (int)i;
	return -1;
}

static int global_at(const struct engine_serial *cfg, uint64_t addr)
{
	size_t i;

	for (i = 0; i < cfg->nvars; i++)
		if (!cfg->vars[i].site && cfg->vars[i].lo <= addr && addr < cfg->vars[i].hi)
			return (int)i;
	return -1;
}

/* The global covering addr, by its symbol and the symbol's size (a
 * compiler gives every variable one), read without debugging
 * information: a lock inside libc (stdio's, the loader's), or an address
 * past the last variable (_edata), asked libc's DWARF for a size, and
 * indexing it took a quarter of a second of every search's profile.  A
 * symbol without a size covers its first byte alone. */
static bool describe_global(struct serial_vars *v, uint64_t addr, struct engine_var *out)
{
	struct sym_loc loc;
	uint64_t size;

	if (!v->syms || sym_describe_function(v->syms, addr, &loc) < 0 || !loc.func)
		return false;
	size = loc.func_size ? loc.func_size : 1;
	if (loc.func_offset >= size)
		return false; /* the symbol before a hole, not a variable holding addr */
	*out =
	    (struct engine_var){.lo = addr - loc.func_offset, .hi = addr - loc.func_offset + size};
	snprintf(out->name, sizeof(out->name), "%s", loc.pretty);
	return true;
}

static bool describe_heap(struct serial_vars *v, uint64_t addr, struct engine_var *out)
{
	size_t i = v->nblocks;
	struct sym_loc loc = {0};

	while (i-- > 0)
		if (v->blocks[i].lo <= addr && addr < v->blocks[i].hi)
			break;
	if (i == (size_t)-1)
		return false;
	*out = (struct engine_var){.site = v->blocks[i].site};
	if (v->syms && sym_describe(v->syms, out->site, &loc) == 0 && loc.file)
		snprintf(out->name, sizeof(out->name), "heap@%s:%d", loc.file, loc.line);
	else if (loc.func)
		snprintf(out->name, sizeof(out->name), "heap@%s+0x%lx", loc.pretty,
			 (unsigned long)loc.func_offset);
	else
		snprintf(out->name, sizeof(out->name), "heap@0x%lx", (unsigned long)out->site);
	return true;
}

/* A new key named like an earlier one (two allocation sites on one line:
 * a template's instances, a macro) is told apart from it: "#2", "#3"... */
static void name_apart(const struct serial_vars *v, struct engine_var *var)
{
	char base[sizeof(var->name)], suffix[16];
	size_t i;
	int n = 1;

	snprintf(base, sizeof(base), "%s", var->name);
	for (i = 0; i < v->nkeys; i++)
		if (strncmp(v->keys[i].name, base, strlen(base)) == 0 &&
		    (v->keys[i].name[strlen(base)] == '\0' || v->keys[i].name[strlen(base)] == '#'))
			n++;
	if (n == 1)
		return;
	snprintf(suffix, sizeof(suffix), "#%d", n);
	snprintf(var->name, sizeof(var->name), "%.*s%s",
		 (int)(sizeof(var->name) - 1 - strlen(suffix)), base, suffix);
}

/* The key of var in v->keys, added if new; -1 when out of memory. */
static int key_of(struct serial_vars *v, const struct engine_var *var)
{
	size_t i;

	for (i = 0; i < v->nkeys; i++)
		if (v->keys[i].site == var->site && v->keys[i].lo == var->lo)
			return (int)i;
	if (grow(&v->keys, v->nkeys, sizeof(*v->keys)) < 0)
		return -1;
	v->keys[v->nkeys] = *var;
	name_apart(v, &v->keys[v->nkeys]);
	return (int)v->nkeys++;
}

int svars_key(struct serial_vars *v, uint64_t addr)
{
	struct engine_var var;
	size_t i;

	for (i = 0; i < v->nkeys; i++)
		if (!v->keys[i].site && v->keys[i].lo <= addr && addr < v->keys[i].hi)
			return (int)i;
	if (describe_heap(v, addr, &var) || describe_global(v, addr, &var))
		return key_of(v, &var);
	return -1;
}

static int add_var_point(struct engine_serial *cfg, uint64_t pc, int var)
{
	size_t i;

	for (i = 0; i < cfg->nvar_points; i++)
		if (cfg->var_points[i].pc == pc && cfg->var_points[i].var == var)
			return 0;
	if (grow(&cfg->var_points, cfg->nvar_points, sizeof(*cfg->var_points)) < 0)
		return -1;
	cfg->var_points[cfg->nvar_points++] = (struct engine_var_point){pc, var};
	return 0;
}

int svars_add_shared(struct serial_vars *v, int key_index, uint64_t pc)
{
	struct engine_serial *cfg = v->cfg;
	const struct engine_var *key = &v->keys[key_index];
	int i;

	assert(key_index >= 0 && (size_t)key_index < v->nkeys);
	i = var_find(cfg, key);

	if (i < 0) {
		if (grow(&cfg->vars, cfg->nvars, sizeof(*cfg->vars)) < 0)
			return -1;
		i = (int)cfg->nvars;
		cfg->vars[cfg->nvars++] = *key;
	}
	return key->site ? add_var_point(cfg, pc, i) : 0;
}

#define EXIT_SITE 1 /* the "exit" variable's site: no call returns to 1 */

int svars_exit(struct serial_vars *v, bool profiling)
{
	struct engine_var var = {.name = "exit", .site = EXIT_SITE};
	size_t i;

	for (i = 0; i < v->cfg->nvars; i++)
		if (v->cfg->vars[i].site == EXIT_SITE)
			return (int)i;
	if (!profiling)
		return -1;
	if (grow(&v->cfg->vars, v->cfg->nvars, sizeof(*v->cfg->vars)) < 0)
		return -1;
	v->cfg->vars[v->cfg->nvars] = var;
	return (int)v->cfg->nvars++;
}

int svars_var_at(struct serial_vars *v, uint64_t pc, uint64_t addr)
{
	const struct engine_serial *cfg = v->cfg;
	int g = addr ? global_at(cfg, addr) : -1;
	size_t i;

	if (g >= 0)
		return g;
	for (i = 0; i < cfg->nvar_points; i++)
		if (cfg->var_points[i].pc == pc)
			return cfg->var_points[i].var;
	return -1;
}
