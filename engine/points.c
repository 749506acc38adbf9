/*
 * points.c: from the events a predicate names to stops in the target.
 *
 * Only what the current wait can match is armed: enter(F) and at(L) become
 * breakpoints, read(X)/write(X) become debug-register watchpoints, and
 * return(F) becomes a breakpoint at F's entry (to learn the return address
 * of each new call) plus one at the return address of every frame of F the
 * waiting threads are already in.  A return is recognised by its address
 * and the stack pointer after it, so recursion and tail calls are matched
 * to the right frame.  Everything is disarmed once the next wait has armed
 * what it needs, so a schedule costs no stops where it is not looking and
 * no writes to the target when consecutive waits look at the same place.
 *
 * Names are resolved per process, lazily, against that process's live
 * symbols: a forked child or an exec'd image gets its own addresses.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Code decoded to check that an at(F+0xOFF) is an instruction's first byte:
 * a function (or section) longer than this is not checked. */
#define DECODE_CHECK_MAX (16u << 20)

/* The file-backed mappings of pid, hashed: equal hashes, same layout. */
static uint64_t maps_hash(pid_t pid)
{
	char path[64], line[4096];
	uint64_t h = 1469598103934665603ull;
	FILE *f;
	char *c;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strchr(line, '/'))
			continue; /* anonymous, heap, stack, vdso: not what symbols read */
		for (c = line; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
	}
	fclose(f);
	return h;
}

/* The hash of p's layout: for a pristine fork, the template's, read once. */
static uint64_t layout_hash(struct symbol_cache *c, struct tr_process *p)
{
	bool pristine = tracer_process_pristine(p);
	uint64_t h;

	if (pristine && c->template_hash)
		return c->template_hash;
	h = maps_hash(tracer_process_pid(p));
	if (pristine)
		c->template_hash = h;
	return h;
}

static struct sym_space *cached_symbols(struct run *r, struct tr_process *p, bool *borrowed)
{
	struct symbol_cache *c = r->symbol_cache;
	pid_t pid = tracer_process_pid(p);
	char err[256];
	uint64_t h;

	*borrowed = false;
	if (!c)
		return NULL;
	h = layout_hash(c, p);
	if (!h)
		return NULL;
	if (c->syms && c->maps_hash == h) {
		c->lent++;
		*borrowed = true;
		return c->syms;
	}
	if (c->lent > 0)
		return NULL;
	sym_close(c->syms);
	c->syms = sym_open_pid(pid, err, sizeof(err));
	c->maps_hash = h;
	*borrowed = c->syms != NULL;
	c->lent = *borrowed;
	return c->syms;
}

void symbol_cache_free(struct symbol_cache *c)
{
	assert(c->lent == 0); /* no run holds it */
	sym_close(c->syms);
	c->syms = NULL;
	sym_close(c->offline);
	c->offline = NULL;
	free(c->offline_path);
	c->offline_path = NULL;
	text_maps_free(&c->template_texts);
	c->template_texts_read = false;
	c->template_hash = 0;
}

void text_maps_free(struct text_maps *m)
{
	int i;

	for (i = 0; i < m->n; i++)
		free(m->maps[i].file);
	free(m->maps);
	free(m->exe);
	free(m->readonly);
	memset(m, 0, sizeof(*m));
}

static int add_readonly(struct text_maps *m, uint64_t lo, uint64_t hi)
{
	if (vec_reserve(&m->readonly, &m->readonly_cap, m->nreadonly, sizeof(*m->readonly)) < 0)
		return -1;
	m->readonly[m->nreadonly++] = (struct text_range_ro){lo, hi};
	return 0;
}

bool text_maps_readonly(const struct text_maps *m, uint64_t addr)
{
	int i;

	for (i = 0; i < m->nreadonly; i++)
		if (addr >= m->readonly[i].lo && addr < m->readonly[i].hi)
			return true;
	return false;
}

static int add_text_mapping(struct text_maps *m, uint64_t lo, uint64_t hi, const char *file)
{
	if (vec_reserve(&m->maps, &m->cap, m->n, sizeof(*m->maps)) < 0)
		return -1;
	m->maps[m->n].file = strdup(file);
	if (!m->maps[m->n].file)
		return -1;
	m->maps[m->n].lo = lo;
	m->maps[m->n].hi = hi;
	m->n++;
	return 0;
}

int text_maps_read(pid_t pid, struct text_maps *out)
{
	char path[64], exe[4096], line[4600], perms[8], file[4096];
	unsigned long lo, hi, off;
	ssize_t n;
	FILE *f;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	out->exe = strdup(exe);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = out->exe ? fopen(path, "r") : NULL;
	if (!f) {
		text_maps_free(out);
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perms, &off, file) < 4)
			continue;
		if (strchr(perms, 'x') && file[0] == '/')
			rc = add_text_mapping(out, lo, hi, file);
		if (rc == 0 && perms[0] == 'r' && perms[1] != 'w')
			rc = add_readonly(out, lo, hi);
	}
	fclose(f);
	if (rc < 0)
		text_maps_free(out);
	return rc;
}

const struct text_maps *text_maps_of(struct run *r, struct tr_process *p, struct text_maps *own)
{
	struct symbol_cache *c = r->symbol_cache;
	pid_t pid = tracer_process_pid(p);

	memset(own, 0, sizeof(*own));
	if (c && tracer_process_pristine(p)) {
		if (!c->template_texts_read && text_maps_read(pid, &c->template_texts) < 0)
			return NULL;
		c->template_texts_read = true;
		return &c->template_texts;
	}
	return text_maps_read(pid, own) < 0 ? NULL : own;
}

struct proc_ctx *run_proc(struct run *r, struct tr_process *p)
{
	struct proc_ctx *pc = tracer_process_user(p);
	char err[256];
	int64_t t0;

	if (pc)
		return pc;
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	t0 = tracer_now_us();
	pc->syms = cached_symbols(r, p, &pc->syms_borrowed);
	if (!pc->syms)
		pc->syms = sym_open_pid(tracer_process_pid(p), err, sizeof(err));
	r->symbols_us += tracer_now_us() - t0;
	tracer_process_set_user(p, pc);
	return pc;
}

struct thread_ctx *run_thread(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = tracer_thread_user(th);

	(void)r;
	if (tc)
		return tc;
	tc = calloc(1, sizeof(*tc));
	if (!tc)
		abort();
	tc->bound = -1;
	tc->primary = -1;
	tc->last_var = -1;
	tc->returned_func = -1;
	tc->entered_copy = -1;
	tracer_thread_set_user(th, tc);
	return tc;
}

struct tr_process *run_main_process(struct run *r)
{
	struct tr_process *p;

	for (p = tracer_processes(r->t); p; p = tracer_process_next(p))
		if (tracer_process_alive(p))
			return p;
	return tracer_processes(r->t);
}

/* Make room for names the checker has added since (the shell). */
static int grow_tables(struct run *r, struct proc_ctx *pc)
{
	void *grown;

	if (pc->nfuncs < r->pol->nfuncs) {
		grown = realloc(pc->func_addr, sizeof(*pc->func_addr) * (size_t)r->pol->nfuncs);
		if (!grown)
			return -1;
		pc->func_addr = grown;
		memset(pc->func_addr + pc->nfuncs, 0,
		       sizeof(*pc->func_addr) * (size_t)(r->pol->nfuncs - pc->nfuncs));
		grown = realloc(pc->inlined, sizeof(*pc->inlined) * (size_t)r->pol->nfuncs);
		if (!grown)
			return -1;
		pc->inlined = grown;
		memset(pc->inlined + pc->nfuncs, 0,
		       sizeof(*pc->inlined) * (size_t)(r->pol->nfuncs - pc->nfuncs));
		pc->nfuncs = r->pol->nfuncs;
	}
	if (pc->nlocs < r->pol->nlocs) {
		grown = realloc(pc->locs, sizeof(*pc->locs) * (size_t)r->pol->nlocs);
		if (!grown)
			return -1;
		pc->locs = grown;
		memset(pc->locs + pc->nlocs, 0,
		       sizeof(*pc->locs) * (size_t)(r->pol->nlocs - pc->nlocs));
		pc->nlocs = r->pol->nlocs;
	}
	return 0;
}

uint64_t points_func_addr(struct run *r, struct tr_process *p, int func)
{
	struct proc_ctx *pc = run_proc(r, p);
	uint64_t addr;

	if (!pc || !pc->syms || grow_tables(r, pc) < 0)
		return 0;
	if (pc->func_addr[func] == 0) {
		if (sym_function(pc->syms, r->pol->funcs[func], &addr) == 0)
			pc->func_addr[func] = addr;
		else
			pc->func_addr[func] = 1;
	}
	return pc->func_addr[func] == 1 ? 0 : pc->func_addr[func];
}

struct loc_addrs *points_func_inlined(struct run *r, struct tr_process *p, int func)
{
	struct proc_ctx *pc = run_proc(r, p);
	struct loc_addrs *la;
	size_t n;

	if (!pc || !pc->syms || grow_tables(r, pc) < 0)
		return NULL;
	la = &pc->inlined[func];
	if (la->resolved)
		return la;
	n = sym_inline_sites(pc->syms, r->pol->funcs[func], NULL, 0);
	if (n) {
		la->addrs = calloc(n, sizeof(*la->addrs));
		if (!la->addrs)
			return NULL;
		la->n = sym_inline_sites(pc->syms, r->pol->funcs[func], la->addrs, n);
		assert(la->n == n);
	}
	la->resolved = true;
	return la;
}

bool points_enters_func(struct run *r, struct tr_process *p, int func, uint64_t addr)
{
	struct loc_addrs *la;
	size_t i;

	if (addr && addr == points_func_addr(r, p, func))
		return true;
	la = points_func_inlined(r, p, func);
	for (i = 0; la && i < la->n; i++)
		if (la->addrs[i] == addr)
			return true;
	return false;
}

/* Every address where the line begins: as many as there are (a line
 * inlined in many places has many), asked for again once their number is
 * known.  -1 when memory is exhausted. */
static int resolve_line(struct sym_space *syms, const struct at_loc *at, struct loc_addrs *la)
{
	uint64_t first;
	size_t n = 0;

	la->resolved = true;
	la->n = 0;
	if (at->line == 0) { /* at(FUNC+0xOFFSET): one address */
		if (lang_func_offset(syms, at->file, &first) < 0)
			return 0;
		la->addrs = calloc(1, sizeof(*la->addrs));
		if (!la->addrs)
			return -1;
		la->addrs[0] = first;
		la->n = 1;
		return 0;
	}
	if (sym_line(syms, at->file, at->line, &first, 1, &n) < 0 || n == 0)
		return 0;
	la->addrs = calloc(n, sizeof(*la->addrs));
	if (!la->addrs)
		return -1;
	if (sym_line(syms, at->file, at->line, la->addrs, n, &la->n) < 0)
		la->n = 0;
	assert(la->n <= n);
	return 0;
}

struct loc_addrs *points_loc_addrs(struct run *r, struct tr_process *p, int loc)
{
	struct proc_ctx *pc = run_proc(r, p);
	struct loc_addrs *la;

	if (!pc || !pc->syms || grow_tables(r, pc) < 0)
		return NULL;
	la = &pc->locs[loc];
	if (!la->resolved && resolve_line(pc->syms, &r->pol->locs[loc], la) < 0)
		return NULL;
	return la;
}

int points_arm_breakpoint(struct run *r, struct tr_process *p, uint64_t addr)
{
	char err[256];

	if (!addr)
		return 0;
	if (r->narmed == r->armed_cap) {
		int cap = r->armed_cap ? r->armed_cap * 2 : 16;
		struct armed_bp *grown = realloc(r->armed, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		r->armed = grown;
		r->armed_cap = cap;
	}
	if (tracer_break_insert(p, addr, err, sizeof(err)) < 0) {
		if (tracer_process_exiting(p))
			return 0; /* its memory is going away with it */
		report_outcome(r, OUTCOME_ERROR, "cannot plant a breakpoint: %s", err);
		return -1;
	}
	r->armed[r->narmed++] = (struct armed_bp){p, addr};
	return 0;
}

/* Where a linear decode of p's code must start to reach addr in step: its
 * function's first byte, else its section's (a stripped program); 0 if
 * neither is known. */
static uint64_t decode_start(struct proc_ctx *pc, uint64_t addr)
{
	const struct sym_range *sec;
	struct sym_loc loc;
	size_t n, i;

	if (sym_describe_function(pc->syms, addr, &loc) == 0 && loc.func)
		return addr - loc.func_offset;
	if (sym_code_sections(pc->syms, &sec, &n) < 0)
		return 0;
	for (i = 0; i < n; i++)
		if (addr >= sec[i].lo && addr < sec[i].hi)
			return sec[i].lo;
	return 0;
}

int points_check_insn_start(struct run *r, struct tr_process *p, uint64_t addr, const char *what)
{
	struct proc_ctx *pc = run_proc(r, p);
	uint64_t lo = pc && pc->syms ? decode_start(pc, addr) : 0, at, prev = 0;
	struct dis_insn insn;
	uint8_t *code;
	size_t len;

	if (!lo || addr - lo > DECODE_CHECK_MAX)
		return 0; /* nothing to decode from: left to the user */
	len = (size_t)(addr - lo);
	code = malloc(len + DIS_MAX_INSN);
	if (!code || tracer_read_code(p, lo, code, len + DIS_MAX_INSN) < 0) {
		free(code);
		return 0;
	}
	for (at = lo; at < addr;) {
		if (dis_decode(code + (at - lo), len + DIS_MAX_INSN - (size_t)(at - lo), at,
			       &insn) < 0 ||
		    insn.len == 0) {
			at++;
			continue;
		}
		prev = at;
		at += insn.len;
	}
	free(code);
	if (at == addr)
		return 0;
	report_outcome(r, OUTCOME_ERROR,
		       "%s is in the middle of an instruction (the instruction begins %lu byte%s "
		       "before): a breakpoint there would change what the program does",
		       what, (unsigned long)(addr - prev), addr - prev == 1 ? "" : "s");
	return -1;
}

void points_disarm_breakpoint(struct run *r, struct tr_process *p, uint64_t addr)
{
	int i;

	for (i = r->narmed - 1; i >= 0; i--)
		if (r->armed[i].proc == p && r->armed[i].addr == addr) {
			r->armed[i] = r->armed[--r->narmed];
			break;
		}
	if (tracer_process_alive(p) && tracer_break_at(p, addr))
		tracer_break_remove(p, addr);
}

static void flush_lingering_watches(struct run *r)
{
	int i;

	for (i = 0; i < r->nlingering_watches; i++)
		if (tracer_process_alive(r->lingering_watches[i].proc))
			tracer_watch_remove(r->lingering_watches[i].proc,
					    r->lingering_watches[i].slot);
	r->nlingering_watches = 0;
}

static void flush_lingering_breakpoints(struct run *r)
{
	int i;

	for (i = 0; i < r->nlingering; i++)
		if (tracer_process_alive(r->lingering[i].proc))
			tracer_break_remove(r->lingering[i].proc, r->lingering[i].addr);
	r->nlingering = 0;
}

/* Where lvalue atom e is, seen from th (NULL: a global expression). */
/* The place of e's variable in p: 0, or 1 when a process other than the
 * program's first has no such place (a child that executed another
 * program, which has no such variable: nothing to watch there), or -1
 * with the outcome reported. */
static int locate(struct run *r, struct tr_process *p, struct tr_thread *th, const struct expr *e,
		  uint64_t *addr, uint64_t *size)
{
	struct eval_ctx c;
	char err[512];

	c = points_eval_ctx(r, p, err, sizeof(err));
	c.thread = th;
	if (eval_lvalue(&c, e->lhs, addr, size) == 0)
		return 0;
	if (p != run_main_process(r))
		return 1;
	report_outcome(r, OUTCOME_ERROR, "%s", err);
	return -1;
}

static int read_first_bytes(struct tr_process *p, uint64_t addr, uint64_t size, uint64_t *value)
{
	*value = 0;
	return tracer_read(p, addr, value, size < 8 ? size : 8);
}

static int arm_watch(struct run *r, struct tr_process *p, struct tr_thread *th,
		     const struct expr *e)
{
	char err[512];
	uint64_t addr, size;
	int slot;
	enum tr_watch_kind kind =
	    atom_of(e)->access == DIS_WRITE ? TR_WATCH_WRITE : TR_WATCH_ACCESS;
	int rc;

	if (vec_reserve(&r->watches, &r->watches_cap, r->nwatches, sizeof(*r->watches)) < 0) {
		report_outcome(r, OUTCOME_ERROR, "out of memory");
		return -1;
	}
	rc = locate(r, p, th, e, &addr, &size);
	if (rc)
		return rc < 0 ? -1 : 0;
	slot = tracer_watch_insert(p, addr, (int)size, kind, err, sizeof(err));
	if (slot < 0 && r->nlingering_watches) {
		flush_lingering_watches(r);
		slot = tracer_watch_insert(p, addr, (int)size, kind, err, sizeof(err));
	}
	if (slot < 0 && kind == TR_WATCH_WRITE)
		slot = tracer_watch_insert(p, addr, (int)size, TR_WATCH_ACCESS, err, sizeof(err));
	if (slot < 0) {
		report_outcome(r, OUTCOME_ERROR, "cannot watch %s: %s",
			       e->lhs->name ? e->lhs->name : "variable", err);
		return -1;
	}
	r->watches[r->nwatches] = (struct armed_watch){e, p, th, addr, slot, (int)size, 0, false};
	read_first_bytes(p, addr, size, &r->watches[r->nwatches].armed_value);
	r->nwatches++;
	return 0;
}

int points_silent_watch(struct run *r, char *buf, size_t len)
{
	char text[128];
	uint64_t now;
	int i;

	for (i = 0; i < r->nwatches; i++) {
		const struct armed_watch *w = &r->watches[i];

		if (w->fired || !tracer_process_alive(w->proc) ||
		    read_first_bytes(w->proc, w->addr, (uint64_t)w->size, &now) < 0 ||
		    now == w->armed_value)
			continue;
		expr_format(w->atom->lhs, text, sizeof(text));
		snprintf(buf, len,
			 "; %s changed from %#lx to %#lx while its debug-register watchpoint was "
			 "armed, and the watchpoint never fired: this host's debug registers do "
			 "not trap (use --watchpoints sw or auto)",
			 text, (unsigned long)w->armed_value, (unsigned long)now);
		return 1;
	}
	if (r->nwatches && watchmode_probed() == 0) {
		snprintf(buf, len,
			 "; its watchpoint used the debug registers (--watchpoints hw), which a "
			 "probe found do not trap on this host (use --watchpoints sw or auto)");
		return 1;
	}
	return 0;
}

/* read(X)/write(X) matched by the stepper: X's place, computed now. */
static int arm_decoded(struct run *r, struct tr_process *p, struct tr_thread *th,
		       const struct expr *e)
{
	uint64_t addr, size;
	int rc;

	if (vec_reserve(&r->decoded, &r->decoded_cap, r->ndecoded, sizeof(*r->decoded)) < 0) {
		report_outcome(r, OUTCOME_ERROR, "out of memory");
		return -1;
	}
	rc = locate(r, p, th, e, &addr, &size);
	if (rc)
		return rc < 0 ? -1 : 0;
	r->decoded[r->ndecoded++] = (struct decoded_lvalue){e, p, th, addr, size};
	return 0;
}

static int arm_lvalue(struct run *r, struct tr_process *p, struct tr_thread *th,
		      const struct expr *e)
{
	return r->fine_want ? arm_decoded(r, p, th, e) : arm_watch(r, p, th, e);
}

/* A local or __thread variable has one place per thread: each thread the
 * `run` moves gets its own watch, and only its accesses count. */
int points_arm_access(struct run *r, struct tr_process *p, const struct expr *e)
{
	char text[128];
	int i;

	if (!e->lhs)
		return 0;
	if (!expr_is_thread_relative(e->lhs))
		return arm_lvalue(r, p, NULL, e);
	if (!r->targets) {
		char msg[1024];

		expr_format(e->lhs, text, sizeof(text));
		schedule_diag(r->sched, e->lhs->loc, msg, sizeof(msg),
			      "'%s' names a local or thread-local variable, which has an address "
			      "only in a given thread: use it in 'run T until ...', not in 'wait'",
			      text);
		report_outcome(r, OUTCOME_ERROR, "%s", msg);
		return -1;
	}
	for (i = 0; i < r->ntargets; i++)
		if (tracer_thread_process(r->targets[i]) == p &&
		    arm_lvalue(r, p, r->targets[i], e) < 0)
			return -1;
	return 0;
}

struct arm_walk {
	struct run *r;
	struct tr_process *p;
	int pass;
};

static int arm_expr(struct run *r, struct tr_process *p, const struct expr *e, int pass);

static int arm_operand(const struct expr *e, void *ctx)
{
	struct arm_walk *w = ctx;

	return arm_expr(w->r, w->p, e, w->pass);
}

/* An atom's row arms it; the rest of the predicate holds atoms. */
static int arm_expr(struct run *r, struct tr_process *p, const struct expr *e, int pass)
{
	struct arm_walk w = {r, p, pass};

	if (!e)
		return 0;
	if (e->kind == E_EVENT)
		return atom_of(e)->arm ? atom_of(e)->arm(r, p, e, pass) : 0;
	return expr_operands(e, arm_operand, &w);
}

/* Mark in r->return_funcs the functions whose return(F) e waits for. */
static void mark_return_funcs(struct run *r, const struct expr *e)
{
	for (; e; e = e->lhs) { /* iterating along lhs: a chain is as deep as it is long */
		if (e->kind == E_EVENT && atom_of(e)->tracks_returns) {
			if (e->slot >= 0 && e->slot / 64 < r->return_words) {
				r->return_funcs[e->slot / 64] |= 1ull << (e->slot % 64);
				r->any_return = true;
			}
			return;
		}
		mark_return_funcs(r, e->rhs);
	}
}

/* A set as large as the schedule's table of functions, which has no
 * limit (a long shell session keeps adding to it). */
static int return_funcs(struct run *r, const struct expr *pred)
{
	int words = (r->pol->nfuncs + 63) / 64;

	if (words > r->return_words) {
		uint64_t *grown = realloc(r->return_funcs, sizeof(*grown) * (size_t)words);

		if (!grown) {
			report_outcome(r, OUTCOME_ERROR, "out of memory");
			return -1;
		}
		r->return_funcs = grown;
		r->return_words = words;
	}
	if (r->return_words)
		memset(r->return_funcs, 0, sizeof(*r->return_funcs) * (size_t)r->return_words);
	r->any_return = false;
	mark_return_funcs(r, pred);
	return 0;
}

static bool wants_return(const struct run *r, int f)
{
	return f >= 0 && f / 64 < r->return_words && (r->return_funcs[f / 64] >> (f % 64) & 1);
}

int points_arm(struct run *r, const struct expr *pred)
{
	struct tr_process *p;

	r->pred = pred;
	if (return_funcs(r, pred) < 0)
		return -1;
	r->ndecoded = 0;
	for (p = tracer_processes(r->t); p; p = tracer_process_next(p)) {
		/* a vfork child runs in its parent's memory, breakpoints
		 * and all, until it executes a program (or exits) */
		if (!tracer_process_alive(p) || tracer_process_vfork_pending(p))
			continue;
		if (arm_expr(r, p, pred, 0) < 0 || arm_expr(r, p, pred, 1) < 0 ||
		    sleeps_arm(r, p) < 0)
			return -1;
	}
	/* What the new wait also wants now has a second reference. */
	flush_lingering_breakpoints(r);
	flush_lingering_watches(r);
	return 0;
}

/* The armed watches become the lingering ones; the old lingering table's
 * memory is reused for the next wait's. */
static void linger_watches(struct run *r)
{
	struct armed_watch *table = r->lingering_watches;
	int cap = r->lingering_watches_cap;

	r->lingering_watches = r->watches;
	r->lingering_watches_cap = r->watches_cap;
	r->nlingering_watches = r->nwatches;
	r->watches = table;
	r->watches_cap = cap;
	r->nwatches = 0;
}

void points_disarm(struct run *r)
{
	struct armed_bp *swap = r->lingering;
	int cap = r->lingering_cap;

	flush_lingering_breakpoints(r);
	flush_lingering_watches(r);
	r->lingering = r->armed;
	r->nlingering = r->narmed;
	r->lingering_cap = r->armed_cap;
	r->armed = swap;
	r->armed_cap = cap;
	r->narmed = 0;
	linger_watches(r);
	r->pred = NULL;
}

void points_flush(struct run *r)
{
	fine_unplant(r);
	flush_lingering_breakpoints(r);
	flush_lingering_watches(r);
}

/* --- return(F) --- */

static void push_frame(struct run *r, struct tr_thread *th, int func, uint64_t ret,
		       uint64_t sp_after)
{
	struct thread_ctx *tc = run_thread(r, th);

	if (tc->nframes == tc->frames_cap) {
		int cap = tc->frames_cap ? 2 * tc->frames_cap : 16;
		struct ret_frame *grown = realloc(tc->frames, sizeof(*grown) * (size_t)cap);

		if (!grown) {
			report_outcome(r, OUTCOME_ERROR, "out of memory");
			return;
		}
		tc->frames = grown;
		tc->frames_cap = cap;
	}
	tc->frames[tc->nframes++] = (struct ret_frame){func, ret, sp_after};
	points_arm_breakpoint(r, tracer_thread_process(th), ret);
}

void points_seed_frames(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct sym_frame *frames = NULL;
	uint64_t ret;
	int n, i, f;

	tc->nframes = 0;
	if (!r->any_return || !tracer_thread_held(th) || !pc || !pc->syms)
		return;
	for (f = 0; f < r->pol->nfuncs; f++) {
		/* At the very entry the unwinder is not needed: [rsp] is it. */
		if (wants_return(r, f) &&
		    tracer_regs(th)->rip == points_func_addr(r, tracer_thread_process(th), f) &&
		    tracer_read(tracer_thread_process(th), tracer_regs(th)->rsp, &ret,
				sizeof(ret)) == 0) {
			push_frame(r, th, f, ret, tracer_regs(th)->rsp + 8);
			return;
		}
	}
	n = run_backtrace_all(r, th, &frames);
	for (i = n - 2; i >= 0; i--) {
		for (f = 0; f < r->pol->nfuncs; f++)
			if (wants_return(r, f) && frames[i].loc.func &&
			    strcmp(frames[i].loc.func, r->pol->funcs[f]) == 0)
				push_frame(r, th, f, frames[i + 1].pc, frames[i + 1].sp);
	}
	free(frames);
}

void points_note_break(struct run *r, struct tr_thread *th, const struct tr_event *ev)
{
	struct thread_ctx *tc = run_thread(r, th);
	const struct user_regs_struct *regs = tracer_regs(th);
	uint64_t ret;
	int f, i;

	tc->returned_func = -1;
	if (!r->any_return)
		return;
	for (i = tc->nframes - 1; i >= 0; i--) {
		if (tc->frames[i].ret_addr == ev->addr && tc->frames[i].sp_after == regs->rsp) {
			tc->returned_func = tc->frames[i].func;
			tc->nframes = i;
			return;
		}
	}
	for (f = 0; f < r->pol->nfuncs; f++)
		if (wants_return(r, f) &&
		    ev->addr == points_func_addr(r, tracer_thread_process(th), f) &&
		    tracer_read(tracer_thread_process(th), regs->rsp, &ret, sizeof(ret)) == 0)
			push_frame(r, th, f, ret, regs->rsp + 8);
}

/* --- evaluating atoms against the event at hand --- */

int points_event_atom(void *hook, void *event, const struct expr *e, bool *out)
{
	struct current_event *cur = event;

	*out = cur && atom_matches(hook, e, cur);
	if (*out && !cur->matched)
		cur->matched = e;
	return 0;
}

/* The functions on th's stack, unwound once per stop however many in()
 * conditions ask. */
static void unwind_once(struct run *r, struct tr_thread *th, struct thread_ctx *tc)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	struct sym_frame *frames = NULL;
	int n, i;

	if (tc->stack_stop == r->stops + 1 && tc->stack_pc == regs->rip &&
	    tc->stack_sp == regs->rsp)
		return;
	tc->stack_stop = r->stops + 1;
	tc->stack_pc = regs->rip;
	tc->stack_sp = regs->rsp;
	tc->nstack = 0;
	n = run_backtrace_all(r, th, &frames);
	if (n > 0 &&
	    vec_reserve(&tc->stack_funcs, &tc->stack_cap, n - 1, sizeof(*tc->stack_funcs)) == 0)
		for (i = 0; i < n; i++)
			tc->stack_funcs[tc->nstack++] = frames[i].loc.func;
	free(frames);
}

static bool thread_in(struct run *r, struct tr_thread *th, const char *func)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct thread_ctx *tc = run_thread(r, th);
	struct sym_loc here;
	int i;

	if (!pc || !pc->syms)
		return false;
	/* In F's own code no unwinding is needed. */
	if (sym_describe_function(pc->syms, tracer_regs(th)->rip, &here) == 0 && here.func &&
	    strcmp(here.func, func) == 0)
		return true;
	unwind_once(r, th, tc);
	for (i = 0; i < tc->nstack; i++)
		if (tc->stack_funcs[i] && strcmp(tc->stack_funcs[i], func) == 0)
			return true;
	return false;
}

int points_thread_cond(void *hook, void *event, const struct expr *e, bool *out)
{
	struct run *r = hook;
	const struct current_event *cur = event;
	struct tr_thread *th = e->name ? run_binding(r, e->name) : cur ? cur->ev->thread : NULL;

	if (!th) {
		*out = e->kind == E_ENDED; /* never bound: nothing to wait for */
		return 0;
	}
	if (e->kind == E_ENDED) {
		*out = tracer_thread_exited(th) || tracer_thread_last_event(th) == TR_EV_EXIT;
		return 0;
	}
	/* the symbol the checker resolved e->func to (a C++ name's mangled one) */
	*out =
	    tracer_thread_held(th) &&
	    thread_in(r, th,
		      e->slot >= 0 && e->slot < r->pol->nfuncs ? r->pol->funcs[e->slot] : e->func);
	return 0;
}

/* A watchpoint trapped: the changes of its variable are no proof that
 * this host's debug registers do not (points_silent_watch). */
void points_watch_fired(struct run *r, const struct tr_event *ev)
{
	int i;

	for (i = 0; i < r->nwatches; i++)
		if (r->watches[i].slot == ev->watch &&
		    r->watches[i].proc == tracer_thread_process(ev->thread))
			r->watches[i].fired = true;
}

/* A decoded access wider than the variable its read(X)/write(X) names (a
 * 16-byte store, a rep stos, memset's vector stores) is X's part of it, as
 * a debug register reports it: X's first byte, X's size, X's bytes. */
static void clip_to_atom(struct run *r, const struct current_event *cur, struct tr_step_event *a)
{
	const struct expr *atom = cur->matched;
	struct tr_process *p = tracer_thread_process(cur->ev->thread);
	uint64_t end = a->addr + (a->span ? a->span : a->size), lo, hi;
	int i;

	if (!atom || !atom->lhs)
		return;
	for (i = 0; i < r->ndecoded; i++) {
		const struct decoded_lvalue *d = &r->decoded[i];

		if (d->atom != atom || d->proc != p || (d->thread && d->thread != cur->ev->thread))
			continue;
		lo = a->addr > d->addr ? a->addr : d->addr;
		hi = end < d->addr + d->size ? end : d->addr + d->size;
		if (lo >= hi)
			continue;
		if (!a->span && hi - a->addr <= 8) /* the bytes as accessed */
			a->value = eval_bits(a->value, (unsigned)(lo - a->addr) * 8,
					     (unsigned)(hi - lo) * 8, NULL);
		else if ((a->value = 0),
			 tracer_read(p, lo, &a->value, hi - lo < 8 ? hi - lo : 8) < 0)
			a->value = 0;
		a->addr = lo;
		a->size = (unsigned)(hi - lo);
		a->span = 0;
		return;
	}
}

bool points_event_access(struct run *r, const struct current_event *cur, struct tr_step_event *out)
{
	const struct tr_event *ev = cur ? cur->ev : NULL;
	int i;

	if (cur && cur->fine && cur->fine->kind == TR_STEP_ACCESS) {
		*out = *cur->fine;
		clip_to_atom(r, cur, out);
		return true;
	}
	if (!ev || ev->kind != TR_EV_WATCH)
		return false;
	*out = (struct tr_step_event){.kind = TR_STEP_ACCESS, .pc = ev->pc, .addr = ev->addr};
	for (i = 0; i < r->nwatches; i++)
		if (r->watches[i].addr == ev->addr &&
		    r->watches[i].proc == tracer_thread_process(ev->thread))
			out->size = (unsigned)r->watches[i].size;
	tracer_read(tracer_thread_process(ev->thread), ev->addr, &out->value,
		    out->size && out->size < 8 ? out->size : 8);
	return true;
}

/* arg1..arg6, retval, caller: the call's registers, read from the thread
 * held at the event (entry: the arguments and [rsp]; return: rax and pc;
 * a system call's stop: its arguments in the kernel's registers). */
static int call_field(struct run *r, const struct tr_event *ev, enum event_field field,
		      int64_t *out)
{
	const struct user_regs_struct *regs;
	uint64_t ret = 0;

	if (!tracer_thread_held(ev->thread))
		return 0;
	regs = tracer_regs(ev->thread);
	switch (field) {
	case FIELD_ARG1:
		*out = (int64_t)regs->rdi;
		return 0;
	case FIELD_ARG2:
		*out = (int64_t)regs->rsi;
		return 0;
	case FIELD_ARG3:
		*out = (int64_t)regs->rdx;
		return 0;
	case FIELD_ARG4: /* the kernel's fourth argument is in r10 (syscall clobbers rcx) */
		*out = (int64_t)(ev->kind == TR_EV_SYSCALL ? regs->r10 : regs->rcx);
		return 0;
	case FIELD_ARG5:
		*out = (int64_t)regs->r8;
		return 0;
	case FIELD_ARG6:
		*out = (int64_t)regs->r9;
		return 0;
	case FIELD_RETVAL:
		*out = (int64_t)regs->rax;
		return 0;
	default:
		break;
	}
	assert(field == FIELD_CALLER);
	if (run_thread(r, ev->thread)->returned_func >= 0) {
		*out = (int64_t)regs->rip;
		return 0;
	}
	tracer_read(tracer_thread_process(ev->thread), regs->rsp, &ret, sizeof(ret));
	*out = (int64_t)ret;
	return 0;
}

/* An access's value as the variable its read(X)/write(X) names is read:
 * X's bytes of the access, signed where X's type is signed, so that
 * write(s) && value == -1 holds for a short s written -1, and
 * write(cur.b) && value == 1 for cur.b copied with cur in one store. */
static int64_t access_value(struct run *r, const struct current_event *cur, uint64_t addr,
			    uint64_t value, uint64_t size)
{
	const struct expr *atom = cur ? cur->matched : NULL;
	char err[256];
	struct eval_ctx c;
	struct value v;

	if (!atom || !atom->lhs || !atom_of(atom)->access || size == 0 || size > 8)
		return (int64_t)value;
	c = points_event_ctx(r, (struct current_event *)cur, err, sizeof(err));
	if (eval_value(&c, atom->lhs, &v) < 0)
		return (int64_t)value;
	/* a bitfield's value is its bits of the bytes stored; a variable's,
	 * its bytes of a wider store (a struct copied in one) */
	if (v.bit_size && v.addr >= addr &&
	    (v.addr - addr) * 8 + v.bit_offset + v.bit_size <= size * 8)
		return eval_bits(value, (unsigned)(v.addr - addr) * 8 + v.bit_offset, v.bit_size,
				 v.type);
	if (!v.bit_size && v.lvalue && sym_type_size(v.type) && sym_type_size(v.type) < size &&
	    v.addr >= addr && v.addr + sym_type_size(v.type) <= addr + size)
		return eval_bits(value, (unsigned)(v.addr - addr) * 8,
				 (unsigned)sym_type_size(v.type) * 8, v.type);
	return eval_bits(value, 0, (unsigned)size * 8, v.type);
}

static int event_field(void *hook, void *event, enum event_field field, int64_t *out)
{
	struct run *r = hook;
	/* Outside a predicate: the event that ended the last wait or run. */
	const struct current_event *cur =
	    event ? event : (r->has_last_event ? &r->last_event : NULL);
	const struct tr_event *ev = cur ? cur->ev : NULL;
	const struct tr_step_event *fe = cur ? cur->fine : NULL;
	struct tr_step_event access;
	struct proc_ctx *pc;
	struct sym_loc loc;
	uint64_t addr = 0, size = 0, value = 0;

	*out = 0;
	if (!ev || !ev->thread)
		return 1; /* no event to read */
	if (field >= FIELD_ARG1)
		return call_field(r, ev, field, out);
	if (points_event_access(r, cur, &access)) {
		addr = access.addr;
		size = access.size;
		value = access.value;
	}
	switch (field) {
	case FIELD_ADDR:
		*out = (int64_t)addr;
		return 0;
	case FIELD_SIZE:
		*out = (int64_t)size;
		return 0;
	case FIELD_VALUE:
		*out = access_value(r, cur, addr, value, size);
		return 0;
	case FIELD_FUNC:
	case FIELD_LINE:
		break; /* from the symbols, below */
	default:
		assert(!"not a field");
		return 0;
	}
	pc = run_proc(r, tracer_thread_process(ev->thread));
	if (!pc || !pc->syms)
		return 0;
	if (field == FIELD_FUNC && fe && fe->kind == TR_STEP_CALL) {
		*out = (int64_t)fe->target;
		return 0;
	}
	memset(&loc, 0, sizeof(loc));
	if (field == FIELD_FUNC) {
		sym_describe_function(pc->syms, ev->pc, &loc);
		*out = loc.func ? (int64_t)(ev->pc - loc.func_offset) : 0;
	} else {
		sym_describe(pc->syms, ev->pc, &loc);
		*out = loc.line;
	}
	return 0;
}

static void *thread_of(void *hook, const char *name)
{
	return run_binding(hook, name);
}

static int read_memory(void *target, uint64_t addr, void *buf, size_t len)
{
	return tracer_read(target, addr, buf, len);
}

static int peek_word(void *proc, uint64_t addr, uint64_t *value)
{
	return tracer_read(proc, addr, value, sizeof(*value));
}

static int thread_view(void *hook, void *thread, struct sym_thread_view *view, const char **name)
{
	struct run *r = hook;
	struct tr_thread *th = thread;
	struct thread_ctx *tc;

	if (!tracer_thread_held(th))
		return -1;
	tc = run_thread(r, th);
	*view = (struct sym_thread_view){tracer_thread_tid(th), tracer_regs(th), peek_word,
					 tracer_thread_process(th)};
	/* still at the entry of F's inlined copy that enter(F) stopped at */
	if (tc->entered_copy >= 0 && tracer_regs(th)->rip == tc->entered_copy_pc)
		view->inlined = r->pol->funcs[tc->entered_copy];
	*name = tracer_thread_name(th);
	return 0;
}

int points_thread_value(void *hook, const struct expr *e, int64_t *out)
{
	struct tr_thread *th = run_binding(hook, e->name);

	if (!th)
		return -1;
	*out = tracer_process_pid(tracer_thread_process(th));
	return 0;
}

struct eval_ctx points_eval_ctx(struct run *r, struct tr_process *p, char *err, size_t errlen)
{
	struct proc_ctx *pc = run_proc(r, p);

	return (struct eval_ctx){
	    .syms = pc ? pc->syms : NULL,
	    .target = p,
	    .read_memory = read_memory,
	    .thread_view = thread_view,
	    .event_atom = points_event_atom,
	    .thread_cond = points_thread_cond,
	    .event_field = event_field,
	    .thread_of = thread_of,
	    .thread_value = points_thread_value,
	    .choose = run_choose_value,
	    .locals = r->locals,
	    .hook = r,
	    .sched = r->sched,
	    .err = err,
	    .errlen = errlen,
	};
}

struct eval_ctx points_event_ctx(struct run *r, struct current_event *cur, char *err, size_t errlen)
{
	struct eval_ctx c;

	assert(cur->ev && cur->ev->thread);
	c = points_eval_ctx(r, tracer_thread_process(cur->ev->thread), err, errlen);
	c.event = cur;
	c.thread = cur->ev->thread;
	return c;
}

int points_judge(struct run *r, struct current_event *cur, bool *holds)
{
	char err[1024];
	struct eval_ctx c = points_event_ctx(r, cur, err, sizeof(err));
	int64_t v;

	cur->matched = NULL;
	if (eval_int(&c, r->pred, &v) < 0) {
		report_outcome(r, OUTCOME_ERROR, "%s", err);
		return -1;
	}
	*holds = v != 0;
	return 0;
}

/* Deeper than this is no stack: a frame takes 16 bytes at least, and a
 * thread's stack is a few megabytes. */
#define MAX_STACK_DEPTH (1 << 20)

int run_backtrace_all(struct run *r, struct tr_thread *th, struct sym_frame **frames)
{
	struct sym_frame *f = NULL, *grown;
	int cap = MAX_FRAMES, n;

	for (;;) {
		grown = realloc(f, sizeof(*f) * (size_t)cap);
		if (!grown) {
			free(f);
			*frames = NULL;
			return -1;
		}
		f = grown;
		n = run_backtrace(r, th, f, cap);
		/* full: unwound again with room for more (deep stacks only) */
		if (n < cap || cap >= MAX_STACK_DEPTH)
			break;
		cap *= 8;
	}
	*frames = f;
	return n;
}

int run_backtrace(struct run *r, struct tr_thread *th, struct sym_frame *frames, int max)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));

	struct user_regs_struct kept, shown;
	int n;

	if (!pc || !pc->syms || !tracer_thread_held(th))
		return -1;
	/* The unwinder reads the kernel's registers: a thread in a scratch
	 * slot is shown from its instruction's home for the while. */
	kept = shown = *tracer_regs(th);
	shown.rip = tracer_code_pc(th);
	if (shown.rip != kept.rip)
		tracer_set_regs(th, &shown);
	if (tracer_sync_regs(th) < 0)
		return -1;
	n = sym_backtrace(pc->syms, tracer_thread_tid(th), frames, max);
	if (shown.rip != kept.rip)
		tracer_set_regs(th, &kept);
	return n;
}
