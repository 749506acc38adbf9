/*
 * serialvars.c: the shared variables of `cctrace test`, for vb and pctvb.
 *
 * Why.  Variable bounding (004) preempts only at accesses to a few
 * variables; without a schedule nobody names them, so the profiling phase
 * must.  A variable is what a person would call one:
 *   - a global (or file-static) variable: the ELF symbol that covers the
 *     address, sized by its DWARF type (symbols/), so every element of an
 *     array or member of a struct is the one variable;
 *   - a heap object, by allocation site: every block that one malloc,
 *     calloc or realloc call site returned is the one variable (the objects
 *     one line of code makes play the one role);
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
 * [rax, rax + size) is recorded with its site.  Each access profiling
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

static const char *const alloc_fns[] = {"malloc", "calloc", "realloc"};
#define NALLOC_FNS (sizeof(alloc_fns) / sizeof(alloc_fns[0]))

struct pending_alloc {
	struct tr_thread *th;
	uint64_t ret, size;
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

int svars_plant(struct serial_vars *v, struct run *r, struct tr_process *p, struct sym_space *syms)
{
	size_t i;

	v->syms = syms;
	if (!v->cfg->profile)
		return 0;
	for (i = 0; i < NALLOC_FNS; i++) {
		uint64_t addr = 0;

		if (sym_function(syms, alloc_fns[i], &addr) < 0 || !addr)
			continue;
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

	return tracer_read_code(p, addr, code, sizeof(code)) == 0 &&
	       dis_decode(code, sizeof(code), addr, &insn) == 0 && insn.kind == DIS_OTHER &&
	       (insn.flags & DIS_F_MEM) && !(insn.flags & DIS_F_STACK);
}

static int alloc_entered(struct serial_vars *v, struct run *r, struct tr_thread *th, size_t fn)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	struct tr_process *p = tracer_thread_process(th);
	uint64_t ret, size = fn == 0 ? regs->rdi : fn == 1 ? regs->rdi * regs->rsi : regs->rsi;
	size_t i;

	if (tracer_read(p, regs->rsp, &ret, sizeof(ret)) < 0)
		return 0;
	for (i = 0; i < v->nret && v->ret_armed[i] != ret; i++)
		;
	if (i == v->nret) {
		if (grow(&v->ret_armed, v->nret, sizeof(*v->ret_armed)) < 0 ||
		    points_arm_breakpoint(r, p, ret) < 0)
			return -1;
		v->ret_armed[v->nret++] = ret;
	}
	if (grow(&v->pending, v->npending, sizeof(*v->pending)) < 0)
		return -1;
	v->pending[v->npending++] = (struct pending_alloc){th, ret, size};
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
	if (lo && grow(&v->blocks, v->nblocks, sizeof(*v->blocks)) < 0)
		return -1;
	if (lo)
		v->blocks[v->nblocks++] = (struct block){lo, lo + v->pending[i].size, addr};
	v->pending[i] = v->pending[--v->npending];
	return 0;
}

int svars_break(struct serial_vars *v, struct run *r, struct tr_thread *th, uint64_t addr)
{
	size_t i;
	bool ret = false;

	if (!v->cfg->profile)
		return 0;
	for (i = 0; i < NALLOC_FNS; i++)
		if (v->alloc_addr[i] == addr) {
			if (alloc_entered(v, r, th, i) < 0)
				return -1;
			run_resume(r, th);
			return 1;
		}
	for (i = 0; i < v->nret; i++)
		ret |= v->ret_armed[i] == addr;
	if (!ret)
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

/* The global covering addr, by its symbol and DWARF size; false if none. */
static bool describe_global(struct serial_vars *v, uint64_t addr, struct engine_var *out)
{
	struct sym_loc loc;
	struct sym_var sv;
	uint64_t size = 1;

	if (!v->syms || sym_describe_function(v->syms, addr, &loc) < 0 || !loc.func)
		return false;
	if (sym_variable(v->syms, loc.func, &sv) == 0 && sv.addr == addr - loc.func_offset &&
	    sv.type && sym_type_size(sv.type))
		size = sym_type_size(sv.type);
	if (loc.func_offset >= size)
		return false; /* the symbol before a hole, not a variable holding addr */
	*out =
	    (struct engine_var){.lo = addr - loc.func_offset, .hi = addr - loc.func_offset + size};
	snprintf(out->name, sizeof(out->name), "%s", loc.func);
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
		snprintf(out->name, sizeof(out->name), "heap@%s+0x%lx", loc.func,
			 (unsigned long)loc.func_offset);
	else
		snprintf(out->name, sizeof(out->name), "heap@0x%lx", (unsigned long)out->site);
	return true;
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
