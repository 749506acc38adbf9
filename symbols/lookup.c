/*
 * Names and lines: sym_function, sym_line, sym_describe, sym_suggest_function.
 *
 * Symbol lookups walk the symbol tables libdwfl gives us (.symtab when the
 * file or its separate debug file has one, .dynsym otherwise), module by
 * module, the executable first.  sym_function is called a handful of times
 * per run, so a linear scan is cheaper than building an index of libc.
 * Undefined symbols (PLT stubs, imports) are skipped through their section
 * index, and a versioned symbol that is not the default version (such as
 * the compat pthread_cond_wait@GLIBC_2.2.5) is skipped through .gnu.version
 * or, in a .symtab, through its "name@VERSION" spelling.
 *
 * sym_line reads the DWARF line tables of every CU (libdw) and keeps, for
 * each contiguous run of rows on the requested line, the first is_stmt row.
 *
 * sym_describe may run once per traced event, so its answers are kept in a
 * direct-mapped cache indexed by address, cleared by sym_refresh.  In an
 * offline view the address is a link-time address; modules are tried in
 * order (executable first) and the first whose range contains it answers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

/* --- edit distance (optimal string alignment: Damerau with adjacent swaps) ---
 *
 * The one edit distance of cctrace: symbols/ is the lowest module that every
 * "did you mean" (misspelt symbols here, schedule keywords in policy/, shell
 * commands in cli/) may depend on, so it is public as sym_edit_distance. */

unsigned sym_edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t i, j, w = lb + 1;
	/* three rows: i - 2 (for a swap), i - 1 and i */
	unsigned *d = malloc(3 * w * sizeof(*d)), *r2, *r1, *r0, *t, best;

	if (!d)
		return UINT_MAX;
	r2 = d, r1 = d + w, r0 = d + 2 * w;
	for (j = 0; j <= lb; j++)
		r1[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		r0[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			best = r1[j - 1] + (a[i - 1] != b[j - 1]);
			if (r1[j] + 1 < best)
				best = r1[j] + 1;
			if (r0[j - 1] + 1 < best)
				best = r0[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    r2[j - 2] + 1 < best)
				best = r2[j - 2] + 1;
			r0[j] = best;
		}
		t = r2, r2 = r1, r1 = r0, r0 = t;
	}
	best = r1[lb];
	free(d);
	return best;
}

/* Is CAND a better suggestion for QUERY than *BEST?  Updates *BEST if so. */
/* Is cand[0..lc), its template arguments (<...>, nested) left out, query? */
static bool without_template_args(const char *cand, size_t lc, const char *query)
{
	size_t i, q = 0;
	int depth = 0;

	for (i = 0; i < lc; i++) {
		if (cand[i] == '<')
			depth++;
		else if (cand[i] == '>' && depth > 0)
			depth--;
		else if (depth == 0 && query[q++] != cand[i])
			return false;
	}
	return query[q] == '\0';
}

bool symi_suggest_consider(const char *query, const char *cand, unsigned *best_d, const char **best)
{
	size_t lq = strlen(query);
	size_t lc;
	unsigned limit = lq / 3 > 2 ? (unsigned)(lq / 3) : 2, d;
	const char *at = strchr(cand, '@');

	if (at && at[1] != '@')
		return false;
	if (cand[0] == '_' && query[0] != '_')
		return false;
	lc = strcspn(cand, "@");
	/* a template's name given without its arguments (Acc::add for
	 * Acc<long>::add) is the nearest there is too */
	if (strchr(cand, '<') && without_template_args(cand, lc, query)) {
		d = 1;
		goto consider;
	}
	/* a C++ name given without its outer scopes (Account::withdraw for
	 * bank::Account::withdraw) is the nearest there is, after a typo */
	if (lc > lq + 2 && strncmp(cand + lc - lq - 2, "::", 2) == 0 &&
	    strncmp(cand + lc - lq, query, lq) == 0) {
		d = 2;
		goto consider;
	}
	if ((lq > lc ? lq - lc : lc - lq) > limit)
		return false;
	d = sym_edit_distance(query, lq, cand, lc);
consider:
	if (d == 0 || d > limit || d >= *best_d)
		return false;
	*best_d = d;
	*best = cand;
	return true;
}

/* --- symbol tables --- */

struct verinfo {
	Elf *elf;
	Elf_Data *versym, *dynsym;
	size_t count;
};

static void verinfo_load(struct verinfo *v, Elf *elf)
{
	Elf_Scn *scn = NULL, *versym = NULL, *dynsym = NULL;
	GElf_Shdr sh;

	memset(v, 0, sizeof(*v));
	v->elf = elf;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			return; /* dwfl uses .symtab: versions are in the names */
		if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
		if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			v->count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		}
	}
	if (!versym || !dynsym)
		return;
	v->versym = elf_getdata(versym, NULL);
	v->dynsym = elf_getdata(dynsym, NULL);
}

/* A .dynsym entry whose version is hidden (not the default one)? */
static bool version_hidden(struct verinfo *v, Elf *elf, int ndx, const GElf_Sym *sym)
{
	GElf_Versym vs;
	GElf_Sym ds;

	if (v->elf != elf)
		verinfo_load(v, elf);
	if (!v->versym || !v->dynsym || (size_t)ndx >= v->count)
		return false;
	if (!gelf_getversym(v->versym, ndx, &vs) || !gelf_getsym(v->dynsym, ndx, &ds))
		return false;
	if (ds.st_name != sym->st_name || ds.st_size != sym->st_size)
		return false; /* dwfl's numbering is not .dynsym's */
	return (vs & 0x8000) != 0;
}

static bool wanted_type(const GElf_Sym *sym)
{
	switch (GELF_ST_TYPE(sym->st_info)) {
	case STT_FUNC:
	case STT_OBJECT:
	case STT_GNU_IFUNC:
		return true;
	default:
		return false;
	}
}

/* Call CB for every defined function or object symbol of M; stops at nonzero. */
int symi_space_each_symbol(struct sym_space *s, struct sym_mod *m, symtab_cb cb, void *arg)
{
	struct verinfo v = {0};
	int i, n = dwfl_module_getsymtab(m->mod), rc;
	GElf_Sym sym;
	GElf_Addr addr;
	GElf_Word shndx;
	Elf *elf;
	Dwarf_Addr bias;
	const char *name;

	(void)s;
	for (i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name || shndx == SHN_UNDEF || !wanted_type(&sym))
			continue;
		if (version_hidden(&v, elf, i, &sym))
			continue;
		rc = cb(m, name, &sym, addr, arg);
		if (rc)
			return rc;
	}
	return 0;
}

/* Which of a module's definitions of a name wins: the lowest. */
enum bind_rank { RANK_GLOBAL, RANK_WEAK, RANK_LOCAL };

static int bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return RANK_GLOBAL;
	case STB_WEAK:
		return RANK_WEAK;
	default:
		return RANK_LOCAL;
	}
}

/*
 * sym_function's index: every function and object symbol of every module
 * by its plain name ("name@@VERSION" as "name"; "name@VERSION", a version
 * not the default, is no match), built in one pass on the first lookup.
 * A search asks for the same few dozen names (the synchronisation
 * functions) in every space it opens: for each of its profiling runs, its
 * template, each replay.  A scan of every module's symbol table per name
 * took 12-27 ms a space; the pass takes one scan's time.  The answer for
 * a name is what the scan gave: the first module (the executable first)
 * that defines it, and in it the first global, or else the first weak,
 * or else the first local symbol.
 */
struct func_ent {
	size_t mod;
	int rank;
	GElf_Addr addr;
};

struct index_ctx {
	struct sym_space *s;
	size_t mod;
};

static int index_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
		    void *arg)
{
	struct index_ctx *c = arg;
	const char *at = strchr(name, '@');
	int rank = bind_rank(sym);
	struct func_ent *e;

	(void)m;
	if (at && at[1] != '@')
		return 0;
	name = symi_plain_name(c->s, name);
	e = symi_strmap_get(&c->s->funcs, name);
	if (e) {
		if (e->mod == c->mod && rank < e->rank) {
			e->rank = rank;
			e->addr = addr;
		}
		return 0;
	}
	e = symi_arena_alloc(&c->s->arena, sizeof(*e));
	if (!e || symi_strmap_put(&c->s->funcs, name, e) < 0)
		return -1;
	*e = (struct func_ent){.mod = c->mod, .rank = rank, .addr = addr};
	return 0;
}

static int index_functions(struct sym_space *s)
{
	struct index_ctx c = {.s = s};
	size_t symbols = 0;
	int n;

	if (s->funcs_indexed)
		return 0;
	for (c.mod = 0; c.mod < s->nmods; c.mod++)
		if ((n = dwfl_module_getsymtab(s->mods[c.mod].mod)) > 0)
			symbols += (size_t)n;
	if (symi_strmap_reserve(&s->funcs, symbols) < 0)
		return -1;
	for (c.mod = 0; c.mod < s->nmods; c.mod++)
		if (symi_space_each_symbol(s, &s->mods[c.mod], index_cb, &c) < 0) {
			symi_strmap_free(&s->funcs);
			return -1;
		}
	s->funcs_indexed = true;
	return 0;
}

int sym_function(struct sym_space *s, const char *name, uint64_t *addr)
{
	const struct func_ent *e;

	if (index_functions(s) < 0 || !(e = symi_strmap_get(&s->funcs, name)))
		return -1;
	*addr = symi_space_out_addr(s, &s->mods[e->mod], e->addr);
	return 0;
}

bool sym_function_is_library_static(struct sym_space *s, const char *name)
{
	const struct func_ent *e;

	if (index_functions(s) < 0 || !(e = symi_strmap_get(&s->funcs, name)))
		return false;
	return !s->mods[e->mod].is_exe && e->rank == RANK_LOCAL;
}

/* NAME without its "@@VERSION", as a string that lives as long as S. */
const char *symi_plain_name(struct sym_space *s, const char *name)
{
	const char *at = strchr(name, '@');
	char *copy;

	if (!at)
		return name;
	copy = symi_strmap_get(&s->plain, name);
	if (copy)
		return copy;
	copy = symi_arena_strdup(&s->arena, name);
	if (!copy)
		return name;
	copy[at - name] = '\0';
	symi_strmap_put(&s->plain, name, copy);
	return copy;
}

struct suggest_ctx {
	struct sym_space *s;
	const char *query;
	unsigned best_d;
	const char *best;
};

static int suggest_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
		      void *arg)
{
	struct suggest_ctx *c = arg;

	(void)m;
	(void)addr;
	if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT)
		return 0;
	/* a C++ name misspelt is compared with the names shown, templates'
	 * and lambdas' too (written quoted) */
	name = symi_shown_name_of(c->s, name);
	symi_suggest_consider(c->query, name, &c->best_d, &c->best);
	return 0;
}

const char *sym_suggest_function(struct sym_space *s, const char *name)
{
	struct suggest_ctx c = {.s = s, .query = name, .best_d = -1u};
	size_t i;

	for (i = 0; i < s->nmods; i++)
		symi_space_each_symbol(s, &s->mods[i], suggest_cb, &c);
	return c.best ? symi_plain_name(s, c.best) : NULL;
}

struct each_ctx {
	struct sym_space *s;
	int kind;
	const char *prefix;
	size_t len;
	void (*cb)(const char *name, void *ctx);
	void *ctx;
};

static int each_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
		   void *arg)
{
	struct each_ctx *c = arg;
	bool object = GELF_ST_TYPE(sym->st_info) == STT_OBJECT;

	(void)m;
	(void)addr;
	if (object != (c->kind == 1))
		return 0;
	/* a C++ name as shown (the caller may get it more than once, as it
	 * may any name) */
	name = symi_writable_name_of(c->s, name);
	if (name && strncmp(name, c->prefix, c->len) == 0 && name[0] != '_')
		c->cb(name, c->ctx);
	return 0;
}

void sym_each_name(struct sym_space *s, int kind, const char *prefix,
		   void (*cb)(const char *name, void *ctx), void *ctx)
{
	struct each_ctx c = {s, kind, prefix, strlen(prefix), cb, ctx};
	size_t i;

	for (i = 0; i < s->nmods; i++)
		symi_space_each_symbol(s, &s->mods[i], each_cb, &c);
}

/* --- source lines --- */

static bool file_matches(const char *path, const char *want)
{
	size_t lp = strlen(path), lw;
	const char *slash;

	while (!strncmp(want, "./", 2))
		want += 2;
	if (!strchr(want, '/')) {
		slash = strrchr(path, '/');
		return !strcmp(slash ? slash + 1 : path, want);
	}
	lw = strlen(want);
	if (lp < lw || strcmp(path + lp - lw, want) != 0)
		return false;
	return lp == lw || path[lp - lw - 1] == '/' || want[0] == '/';
}

struct addr_vec {
	uint64_t *v;
	size_t n, cap;
};

static int vec_push(struct addr_vec *a, uint64_t x)
{
	if (symi_reserve(&a->v, &a->cap, a->n, sizeof(*a->v)) < 0)
		return -1;
	a->v[a->n++] = x;
	return 0;
}

struct line_query {
	const char *file;
	int line;
	const char *last_src; /* file-match cache, by libdw's string pointer */
	bool last_match;
	/* sym_line_neighbours: every row is looked at, for these */
	bool neighbours;
	bool file_seen;
	int before, after;
};

static bool row_in_file(struct line_query *q, Dwarf_Line *l)
{
	const char *src = dwarf_linesrc(l, NULL, NULL);

	if (!src)
		return false;
	if (src != q->last_src) {
		q->last_src = src;
		q->last_match = file_matches(src, q->file);
	}
	return q->last_match;
}

static void note_neighbour(struct line_query *q, int lineno)
{
	q->file_seen = true;
	if (lineno < q->line && lineno > q->before)
		q->before = lineno;
	if (lineno > q->line && (q->after == 0 || lineno < q->after))
		q->after = lineno;
}

static bool row_on_line(struct line_query *q, Dwarf_Line *l)
{
	int lineno;

	if (dwarf_lineno(l, &lineno) != 0)
		return false;
	if (q->neighbours) {
		bool stmt;

		/* the rows sym_line would take: statement beginnings */
		if (lineno > 0 && dwarf_linebeginstatement(l, &stmt) == 0 && stmt &&
		    row_in_file(q, l))
			note_neighbour(q, lineno);
		return false;
	}
	return lineno == q->line && row_in_file(q, l);
}

/* Scan one CU's line table, pushing dwfl addresses of line starts. */
static int scan_cu_lines(Dwarf_Die *cu, Dwarf_Addr bias, struct line_query *q, struct addr_vec *out)
{
	Dwarf_Lines *lines;
	size_t i, n;
	bool in_run = false, emitted = false, stmt, end;
	Dwarf_Addr a;

	if (dwarf_getsrclines(cu, &lines, &n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);

		if (!l || dwarf_lineendsequence(l, &end) != 0 || end || !row_on_line(q, l)) {
			in_run = false;
			continue;
		}
		if (!in_run)
			emitted = false;
		in_run = true;
		if (emitted || dwarf_linebeginstatement(l, &stmt) != 0 || !stmt)
			continue;
		if (dwarf_lineaddr(l, &a) != 0)
			continue;
		emitted = true;
		if (vec_push(out, a + bias) < 0)
			return -1;
	}
	return 0;
}

static int scan_module_lines(struct sym_space *s, struct sym_mod *m, struct line_query *q,
			     struct addr_vec *out)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t first = out->n, i;

	while ((cu = dwfl_module_nextcu(m->mod, cu, &bias)))
		if (scan_cu_lines(cu, bias, q, out) < 0)
			return -1;
	for (i = first; i < out->n; i++)
		out->v[i] = symi_space_out_addr(s, m, out->v[i]);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t i, k = 0;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

int sym_line(struct sym_space *s, const char *file, int line, uint64_t *addrs, size_t max,
	     size_t *n)
{
	struct line_query q = {.file = file, .line = line};
	struct addr_vec found = {0};
	size_t i, count;
	int rc = -1;

	*n = 0;
	for (i = 0; i < s->nmods; i++)
		if (scan_module_lines(s, &s->mods[i], &q, &found) < 0)
			goto out;
	count = sort_unique(found.v, found.n);
	if (count == 0)
		goto out;
	*n = count;
	memcpy(addrs, found.v, (count < max ? count : max) * sizeof(*addrs));
	rc = 0;
out:
	free(found.v);
	return rc;
}

int sym_line_neighbours(struct sym_space *s, const char *file, int line, int *before, int *after)
{
	struct line_query q = {.file = file, .line = line, .neighbours = true};
	struct addr_vec none = {0};
	size_t i;

	for (i = 0; i < s->nmods; i++)
		if (scan_module_lines(s, &s->mods[i], &q, &none) < 0)
			break;
	free(none.v);
	*before = q.before;
	*after = q.after;
	return q.file_seen ? 0 : -1;
}

/* --- describing an address --- */

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The module covering ADDR and ADDR in dwfl's address space. */
static Dwfl_Module *find_module(struct sym_space *s, uint64_t addr, Dwarf_Addr *daddr)
{
	size_t i;
	Dwarf_Addr a;

	*daddr = addr;
	if (s->pid)
		return dwfl_addrmodule(s->dwfl, addr);
	for (i = 0; i < s->nmods; i++) {
		a = addr + symi_mod_elf_bias(&s->mods[i]);
		if (a >= s->mods[i].low && a < s->mods[i].high) {
			*daddr = a;
			return s->mods[i].mod;
		}
	}
	return NULL;
}

struct alias_ctx {
	GElf_Addr addr;
	const char *name;
};

static int alias_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
		    void *arg)
{
	struct alias_ctx *c = arg;

	(void)m;
	if (addr != c->addr || name[0] == '_' || GELF_ST_TYPE(sym->st_info) == STT_OBJECT)
		return 0;
	c->name = name;
	return 1;
}

/* public_alias's answers: one per (module, address) of a name, chained
 * under the name.  A crash's stack, a blocked thread's place and a
 * wait's owner are described in every replay, and each description of
 * "__pthread_kill_implementation" or "_int_malloc" was a scan of the
 * module's whole symbol table. */
struct alias_ent {
	Dwfl_Module *mod;
	GElf_Addr addr;
	const char *public_name;
	struct alias_ent *next;
};

static const char *scan_for_alias(struct sym_space *s, size_t i, const char *name, GElf_Addr addr)
{
	struct alias_ctx c = {.addr = addr};

	symi_space_each_symbol(s, &s->mods[i], alias_cb, &c);
	return c.name ? c.name : name;
}

/* "close" rather than "__close" when both name the same address. */
static const char *public_alias(struct sym_space *s, Dwfl_Module *mod, const char *name,
				GElf_Addr addr)
{
	struct alias_ent *head, *e;
	size_t i;

	if (name[0] != '_')
		return name;
	for (i = 0; i < s->nmods && s->mods[i].mod != mod; i++)
		;
	if (i == s->nmods)
		return name;
	head = symi_strmap_get(&s->aliases, name);
	for (e = head; e; e = e->next)
		if (e->mod == mod && e->addr == addr)
			return e->public_name;
	e = symi_arena_alloc(&s->arena, sizeof(*e));
	if (!e)
		return scan_for_alias(s, i, name, addr);
	*e = (struct alias_ent){mod, addr, scan_for_alias(s, i, name, addr), head};
	(void)symi_strmap_put(&s->aliases, name, e); /* not kept if memory is short */
	return e->public_name;
}

/* Module and function only: the symbol table, no debug information. */
static Dwfl_Module *describe_function(struct sym_space *s, uint64_t addr, struct sym_loc *out,
				      Dwarf_Addr *a)
{
	Dwarf_Addr symbias;
	Dwfl_Module *mod = find_module(s, addr, a);
	const char *name;
	GElf_Off off;
	GElf_Sym sym;
	GElf_Word shndx;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	if (!mod)
		return NULL;
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	out->module = name ? base_of(name) : NULL;
	name = dwfl_module_addrinfo(mod, *a, &off, &sym, &shndx, &elf, &symbias);
	if (name) {
		name = public_alias(s, mod, name, *a - off);
		out->func = symi_plain_name(s, name);
		out->pretty = symi_pretty_name(s, out->func);
		out->func_offset = off;
		out->func_size = sym.st_size;
	}
	return mod;
}

int sym_describe_function(struct sym_space *s, uint64_t addr, struct sym_loc *out)
{
	Dwarf_Addr a;

	return describe_function(s, addr, out, &a) ? 0 : -1;
}

/* Offsets are the ELF file's own addresses (objdump's), the same for a
 * program offline, live, and in every run whatever its load address. */
int sym_module_offset(struct sym_space *s, uint64_t addr, const char **module, uint64_t *offset)
{
	Dwarf_Addr a, bias = 0;
	Dwfl_Module *mod = find_module(s, addr, &a);
	const char *name =
	    mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;

	if (!name || !dwfl_module_getelf(mod, &bias))
		return -1;
	*module = base_of(name);
	*offset = a - bias;
	return 0;
}

int sym_module_named(struct sym_space *s, const char *module, uint64_t offset, uint64_t *addr)
{
	size_t i;

	for (i = 0; i < s->nmods; i++) {
		const struct sym_mod *m = &s->mods[i];
		Dwarf_Addr a = offset + symi_mod_elf_bias(m);

		if (strcmp(m->base, module) != 0)
			continue;
		if (a < m->low || a >= m->high)
			return -1;
		*addr = symi_space_out_addr(s, m, a);
		return 0;
	}
	return -1;
}

/* dwfl_module_getsrc finds the CU by .debug_aranges, which clang does
 * not write by default: the line is then found in the CU symi_addrdie
 * finds. */
static const char *line_by_cu_ranges(Dwfl_Module *mod, Dwarf_Addr a, int *line)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = symi_addrdie(mod, a, &bias);
	/* libdw may give the unit nearest below a, whose last row is not a's */
	Dwarf_Line *l = cu && dwarf_haspc(cu, a - bias) > 0 ? dwarf_getsrc_die(cu, a - bias) : NULL;

	if (!l || dwarf_lineno(l, line) != 0)
		return NULL;
	return dwarf_linesrc(l, NULL, NULL);
}

Dwarf_Die *symi_addrdie(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);

	if (cu)
		return cu;
	/* Without .debug_aranges libdw (before 0.191) finds no CU for any
	 * address: each CU's own ranges are asked. */
	while ((cu = dwfl_module_nextcu(mod, cu, bias)))
		if (dwarf_haspc(cu, addr - *bias) > 0)
			return cu;
	return NULL;
}

/* Is a, for which row l was found, outside the code of l's compile unit
 * (crt1's _start, just after a unit's last function)?  libdw gives the
 * nearest row below it, whose line (that function's last) is not a's. */
static bool outside_its_unit(Dwfl_Line *l, Dwarf_Addr a)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_linecu(l);

	return cu && dwfl_dwarf_line(l, &bias) && dwarf_haspc(cu, a - bias) == 0;
}

/*
 * Several rows at l's address (optimised code: a zero-length row for the
 * statement that begins there, then the line whose instruction it is):
 * the last that begins a statement, not one that only continues a line.
 * `at(f.c:16)` was said to stop at line 17.  src and *line are l's, or
 * that row's.
 */
static const char *statement_row(Dwfl_Line *l, const char *src, int *line)
{
	Dwarf_Addr bias, addr, at;
	Dwarf_Line *dl = dwfl_dwarf_line(l, &bias), *row;
	Dwarf_Die *cu = dwfl_linecu(l);
	Dwarf_Lines *lines;
	size_t n, lo = 0, hi;
	bool stmt, end;
	int lineno;

	if (!dl || !cu || dwarf_lineaddr(dl, &addr) != 0 || dwarf_getsrclines(cu, &lines, &n) != 0)
		return src;
	hi = n;
	while (lo < hi) { /* the first row at addr: rows are in address order */
		size_t mid = lo + (hi - lo) / 2;

		row = dwarf_onesrcline(lines, mid);
		if (row && dwarf_lineaddr(row, &at) == 0 && at < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && (row = dwarf_onesrcline(lines, lo)) && dwarf_lineaddr(row, &at) == 0 &&
	       at == addr;
	     lo++) {
		if (dwarf_linebeginstatement(row, &stmt) != 0 || !stmt ||
		    dwarf_lineendsequence(row, &end) != 0 || end ||
		    dwarf_lineno(row, &lineno) != 0 || !dwarf_linesrc(row, NULL, NULL))
			continue;
		*line = lineno; /* the last such row: the statement the code is */
		src = dwarf_linesrc(row, NULL, NULL);
	}
	return src;
}

static int describe_uncached(struct sym_space *s, uint64_t addr, struct sym_loc *out)
{
	Dwarf_Addr a, symbias;
	Dwfl_Module *mod = find_module(s, addr, &a);
	const char *name, *src;
	GElf_Off off;
	GElf_Sym sym;
	GElf_Word shndx;
	Elf *elf;
	Dwfl_Line *l;

	memset(out, 0, sizeof(*out));
	if (!mod)
		return -1;
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	out->module = name ? base_of(name) : NULL;
	name = dwfl_module_addrinfo(mod, a, &off, &sym, &shndx, &elf, &symbias);
	if (name) {
		name = public_alias(s, mod, name, a - off);
		out->func = symi_plain_name(s, name);
		out->pretty = symi_pretty_name(s, out->func);
		out->func_offset = off;
		out->func_size = sym.st_size;
	}
	l = dwfl_module_getsrc(mod, a);
	src = l && !outside_its_unit(l, a) ? dwfl_lineinfo(l, NULL, &out->line, NULL, NULL, NULL)
					   : NULL;
	if (src)
		src = statement_row(l, src, &out->line);
	if (!src)
		src = line_by_cu_ranges(mod, a, &out->line);
	if (src) {
		out->file = base_of(src);
		out->path = src;
	} else
		out->line = 0;
	return 0;
}

int sym_describe(struct sym_space *s, uint64_t addr, struct sym_loc *out)
{
	struct desc_ent *e = &s->desc[(addr ^ (addr >> 12)) % DESC_CACHE_SIZE];

	if (e->valid && e->addr == addr) {
		*out = e->loc;
		return e->rc;
	}
	e->rc = describe_uncached(s, addr, out);
	e->addr = addr;
	e->loc = *out;
	e->valid = true;
	return e->rc;
}
