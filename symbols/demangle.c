/*
 * demangle.c: C++ names as a person reads them.
 *
 * Symbols keep their mangled names (`_ZN7Account7depositEi`): those are
 * what the symbol tables hold, what a schedule's `enter(...)` finds
 * exactly, and what the JSON outputs give to tools.  What cctrace shows a
 * person (traces, stacks, reports, the shell) is the demangled name
 * without its parameter list (`Account::deposit`), as a one-line trace
 * has no room for `(std::vector<int, std::allocator<int> > const&)`; an
 * overload is then told apart by its file and line, printed beside it.
 *
 * A schedule names a function as shown, quoted when no identifier spells
 * it (a template, a lambda, an operator): sym_schedule_name gives the
 * shown name whenever it stands for that one function.  A name given in
 * part is found as gdb finds it: a suffix at a scope's boundary
 * (`Account::withdraw` for `bank::Account::withdraw`), and a template's
 * name without its arguments gets its instances listed, both answered
 * from the index of shown names that sym_qualified keeps.
 *
 * The demangler is libstdc++'s (`__cxa_demangle`, the one gdb and
 * elfutils' tools use): the C++ ABI's grammar is not ours to write.  Each
 * answer is kept in the space, as describing a pc is done at every stop
 * of a trace; a C name costs one comparison and is never looked up.
 */
#include "symbols/internal.h"

#include <ctype.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s, declared in <cxxabi.h>, which is C++ only. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static bool is_mangled(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

/* The characters an operator's name may have after `operator`. */
#define OPERATOR_CHARS "()[]<>=!+-*/%^&|~,"

/* Past the operator's name at in (just past `operator`): `()`, `[]`,
 * `<<=`, `->*`...; nothing for `operator new` and a conversion
 * `operator int`, which go on as words. */
static const char *operator_end(const char *in)
{
	if (strncmp(in, "()", 2) == 0 || strncmp(in, "[]", 2) == 0)
		return in + 2;
	while (*in && *in != '(' && strchr(OPERATOR_CHARS, *in))
		in++;
	return in;
}

/* Skips the balanced group that opens at in; returns in past its close. */
static const char *skip_group(const char *in)
{
	int depth = 0;

	for (; *in; in++) {
		if (*in == '(')
			depth++;
		else if (*in == ')' && --depth == 0)
			return in + 1;
	}
	return in;
}

/* What may follow a function's parameter list and belongs to it. */
static const char *skip_qualifiers(const char *in)
{
	static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
	size_t i;

	for (i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
		if (strncmp(in, quals[i], strlen(quals[i])) == 0)
			return skip_qualifiers(in + strlen(quals[i]));
	return in;
}

static bool is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Is the word `operator` at p, in the name that starts at start? */
static bool operator_at(const char *start, const char *p)
{
	return strncmp(p, "operator", 8) == 0 && !is_word_char(p[8]) &&
	       (p == start || !is_word_char(p[-1]));
}

/*
 * The demangled name in, without its parameter lists, into out (as long
 * as in): a function's (`bank::Account::deposit(int) const`), and those
 * of the functions a local entity is in (`f(void const*)::count` ->
 * `f::count`).  Template arguments and lambdas keep theirs (brackets
 * and braces are not left), as do `operator()` and `(anonymous
 * namespace)`.
 */
static void cut_parameters(const char *in, char *out)
{
	const char *start = in;
	int depth = 0; /* of <> {} [] */

	while (*in) {
		if (operator_at(start, in)) {
			const char *end = operator_end(in + 8);

			memcpy(out, in, (size_t)(end - in));
			out += end - in;
			in = end;
			continue;
		}
		if (strncmp(in, "(anonymous namespace)", 21) == 0) {
			memcpy(out, in, 21);
			out += 21;
			in += 21;
			continue;
		}
		if (*in == '(' && depth == 0) {
			in = skip_qualifiers(skip_group(in));
			continue;
		}
		if (strchr("<{[", *in))
			depth++;
		else if (strchr(">}]", *in) && depth > 0)
			depth--;
		*out++ = *in++;
	}
	*out = '\0';
}

/* Drops a template function's return type (`void std::vector<int>::
 * _M_realloc_insert<int>`): what comes before the last space outside
 * brackets, unless that space follows `operator` (`operator new`, a
 * conversion `operator int`) or is inside `(anonymous namespace)`. */
static void cut_return_type(char *s)
{
	char *p, *last = NULL;
	int depth = 0;

	for (p = s; *p; p++) {
		if (strncmp(p, "(anonymous namespace)", 21) == 0) {
			p += 20;
			continue;
		}
		if (operator_at(s, p)) { /* its characters are no brackets */
			p = (char *)operator_end(p + 8) - 1;
			continue;
		}
		if (strchr("<({[", *p))
			depth++;
		else if (strchr(">)}]", *p) && depth > 0)
			depth--;
		else if (*p == ' ' && depth == 0 && !(p - s >= 8 && operator_at(s, p - 8)))
			last = p;
	}
	if (last)
		memmove(s, last + 1, strlen(last + 1) + 1);
}

/* full, shortened in place: without parameters and return type, keeping
 * a clone suffix (` [clone .cold]`), which GCC's split-off parts of a
 * function have. */
static void shorten(char *full)
{
	char *clone = strstr(full, " [clone ");
	char *cut = malloc(strlen(full) + 1);
	char suffix[64] = "";

	if (!cut)
		return;
	if (clone) {
		snprintf(suffix, sizeof(suffix), "%s", clone);
		*clone = '\0';
	}
	cut_parameters(full, cut);
	cut_return_type(cut);
	snprintf(full, strlen(full) + strlen(suffix) + 1, "%s%s", cut, suffix); /* no longer */
	free(cut);
}

const char *symi_pretty_name(struct sym_space *s, const char *name)
{
	const char *known;
	char *full, *kept, *key;
	int status = -1;

	if (!is_mangled(name))
		return name;
	known = symi_strmap_get(&s->pretty, name);
	if (known)
		return known;
	full = __cxa_demangle(name, NULL, NULL, &status);
	if (full && status == 0) {
		shorten(full);
		kept = symi_arena_strdup(&s->arena, full);
	} else {
		kept = NULL; /* not a name the ABI knows (`_Zfoo` in C): as it is */
	}
	free(full);
	key = kept ? symi_arena_strdup(&s->arena, name) : NULL;
	if (!key || symi_strmap_put(&s->pretty, key, kept) < 0)
		return name;
	return kept;
}

/* Is name a qualified name a schedule can hold: identifiers joined by
 * "::", a component after the first perhaps a destructor's "~Name"? */
static bool writable_name(const char *name)
{
	const char *p = name;

	for (;;) {
		if (!(isalpha((unsigned char)*p) || *p == '_'))
			return false;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (*p == '\0')
			return true;
		if (p[0] != ':' || p[1] != ':')
			return false;
		p += 2;
		if (*p == '~' && p != name + 2) /* a destructor, not a leading ~ */
			p++;
	}
}

const char *symi_shown_name_of(struct sym_space *s, const char *name)
{
	if (!is_mangled(name) || strchr(name, '@'))
		return name;
	return symi_pretty_name(s, name);
}

const char *symi_writable_name_of(struct sym_space *s, const char *name)
{
	if (!is_mangled(name) || strchr(name, '@'))
		return name;
	name = symi_pretty_name(s, name);
	return writable_name(name) ? name : NULL;
}

/* The functions whose shown name is the same, each symbol once. */
struct qual_ent {
	const char *symbol;
	struct qual_ent *next;
};

/* SYMBOL is one of the functions shown as KEY. */
static int add_qualified(struct sym_space *s, const char *key, const char *symbol)
{
	struct qual_ent *head = symi_strmap_get(&s->qualified, key), *e;

	for (e = head; e; e = e->next)
		if (strcmp(e->symbol, symbol) == 0)
			return 0;
	e = symi_arena_alloc(&s->arena, sizeof(*e));
	if (!e || !(e->symbol = symi_arena_strdup(&s->arena, symbol)))
		return -1;
	e->next = head;
	return symi_strmap_put(&s->qualified, key, e);
}

#define ANONYMOUS "(anonymous namespace)::"

/* A function of an anonymous namespace is named as its own file names it:
 * without the namespace, which a schedule cannot write. */
static int add_unqualified_anonymous(struct sym_space *s, const char *pretty, const char *symbol)
{
	char *key = strdup(pretty), *at;
	const char *kept;

	if (!key)
		return -1;
	while ((at = strstr(key, ANONYMOUS)))
		memmove(at, at + strlen(ANONYMOUS), strlen(at + strlen(ANONYMOUS)) + 1);
	kept = symi_arena_strdup(&s->arena, key);
	free(key);
	return kept ? add_qualified(s, kept, symbol) : -1;
}

static int index_qualified_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym,
			      GElf_Addr addr, void *arg)
{
	struct sym_space *s = arg;
	const char *at = strchr(name, '@'), *pretty;

	(void)m;
	(void)addr;
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC && GELF_ST_TYPE(sym->st_info) != STT_GNU_IFUNC)
		return 0;
	if (!is_mangled(name) || (at && at[1] != '@')) /* as sym_function's index */
		return 0;
	name = symi_plain_name(s, name);
	pretty = symi_pretty_name(s, name);
	if (pretty == name)
		return 0;
	if (add_qualified(s, pretty, name) < 0)
		return -1;
	return strstr(pretty, ANONYMOUS) ? add_unqualified_anonymous(s, pretty, name) : 0;
}

static int index_qualified(struct sym_space *s)
{
	size_t i;

	if (s->qualified_indexed)
		return 0;
	for (i = 0; i < s->nmods; i++)
		if (symi_space_each_symbol(s, &s->mods[i], index_qualified_cb, s) < 0) {
			symi_strmap_free(&s->qualified);
			return -1;
		}
	s->qualified_indexed = true;
	return 0;
}

/* The symbol's whole demangled name, parameters and all; the symbol
 * itself when out of memory. */
static const char *signature_of(struct sym_space *s, const char *symbol)
{
	int status = -1;
	char *full = __cxa_demangle(symbol, NULL, NULL, &status);
	const char *kept = full && status == 0 ? symi_arena_strdup(&s->arena, full) : NULL;

	free(full);
	return kept ? kept : symbol;
}

int sym_qualified(struct sym_space *s, const char *qualified, const char **symbols,
		  const char **signatures, size_t max)
{
	const struct qual_ent *head, *e, *before;
	int n = 0;

	if (index_qualified(s) < 0)
		return 0;
	head = symi_strmap_get(&s->qualified, qualified);
	for (e = head; e; e = e->next) {
		uint64_t addr, other;

		if (sym_function(s, e->symbol, &addr) < 0)
			continue;
		/* aliases of one function (a constructor's C1 and C2) are one:
		 * counted at the first of them */
		for (before = head; before != e; before = before->next)
			if (sym_function(s, before->symbol, &other) == 0 && other == addr)
				break;
		if (before != e)
			continue;
		if ((size_t)n < max) {
			symbols[n] = e->symbol;
			if (signatures)
				signatures[n] = signature_of(s, e->symbol);
		}
		n++;
	}
	return n;
}

int sym_function_named(struct sym_space *s, const char *name, uint64_t *addr)
{
	const char *symbol;

	/* A library's static function (libc's debug symbols have an `init`
	 * and an `insert`) is not what a name the program's own C++ function
	 * is shown by means. */
	if (sym_function(s, name, addr) == 0 && !sym_function_is_library_static(s, name))
		return 0;
	if (sym_qualified(s, name, &symbol, NULL, 1) == 1)
		return sym_function(s, symbol, addr);
	return sym_function(s, name, addr);
}

const char *sym_schedule_name(struct sym_space *s, const struct sym_loc *loc)
{
	uint64_t named, ours;

	/* the one function the name stands for is this one (under any of
	 * its symbols: a constructor's C1 and C2 are one); a name no
	 * identifier spells is written quoted, by the schedule's writer */
	if (!loc->func || !loc->pretty || loc->pretty == loc->func ||
	    sym_function_named(s, loc->pretty, &named) < 0 ||
	    sym_function(s, loc->func, &ours) < 0 || named != ours)
		return loc->func;
	return loc->pretty;
}

/* --- names given in part: a suffix at a scope, a template's name --- */

/* Does full end with name at a scope's boundary (`bank::Account::
 * withdraw` for `Account::withdraw`), or is it name? */
static bool ends_at_scope(const char *full, const char *name)
{
	size_t lf = strlen(full), ln = strlen(name);

	if (lf == ln)
		return strcmp(full, name) == 0;
	return lf > ln + 2 && strcmp(full + lf - ln, name) == 0 &&
	       strncmp(full + lf - ln - 2, "::", 2) == 0;
}

/* key without its template arguments (`tally::Counter<long>::add` ->
 * `tally::Counter::add`) into out (as long as key); an operator's `<`
 * is no bracket.  False when key has none. */
static bool drop_template_args(const char *key, char *out)
{
	const char *in = key;
	int depth = 0;
	bool any = false;

	while (*in) {
		if (operator_at(key, in)) {
			const char *end = operator_end(in + 8);

			if (depth == 0) {
				memcpy(out, in, (size_t)(end - in));
				out += end - in;
			}
			in = end;
			continue;
		}
		if (*in == '<')
			depth++, any = true;
		else if (*in == '>' && depth > 0)
			depth--;
		else if (depth == 0)
			*out++ = *in;
		in++;
	}
	*out = '\0';
	return any;
}

/* Is key, a shown name, one that name gives in part? */
static bool partial_match(const char *key, const char *name, bool templates)
{
	char *bare;
	bool yes;

	if (!templates)
		return strcmp(key, name) != 0 && ends_at_scope(key, name);
	if (!strchr(key, '<') || !(bare = malloc(strlen(key) + 1)))
		return false;
	yes = drop_template_args(key, bare) && ends_at_scope(bare, name);
	free(bare);
	return yes;
}

struct match {
	const char *shown;
	uint64_t addr; /* the first function it stands for */
};

/* By function, the shortest name first: of a function in an anonymous
 * namespace, its name without the namespace, which a schedule writes. */
static int by_function(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	size_t lx = strlen(x->shown), ly = strlen(y->shown);

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return lx < ly ? -1 : lx > ly ? 1 : strcmp(x->shown, y->shown);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct match *)a)->shown, ((const struct match *)b)->shown);
}

/* The shown names of the index that name gives in part, one per
 * function, into m (room for the index's every key); how many. */
static size_t collect_matches(struct sym_space *s, const char *name, bool templates,
			      struct match *m)
{
	size_t i, n = 0, kept = 0;

	for (i = 0; i < s->qualified.cap; i++) {
		const char *key = s->qualified.slots[i].key, *symbol;

		if (key && partial_match(key, name, templates) &&
		    sym_qualified(s, key, &symbol, NULL, 1) > 0 &&
		    sym_function(s, symbol, &m[n].addr) == 0)
			m[n++].shown = key;
	}
	qsort(m, n, sizeof(*m), by_function);
	for (i = 0; i < n; i++)
		if (kept == 0 || m[kept - 1].addr != m[i].addr)
			m[kept++] = m[i];
	qsort(m, kept, sizeof(*m), by_name);
	return kept;
}

/* sym_qualified_suffix and sym_template_instances. */
static size_t partial_names(struct sym_space *s, const char *name, bool templates,
			    const char **shown, size_t max)
{
	struct match *m;
	size_t n, i;

	if (index_qualified(s) < 0 ||
	    !(m = calloc(s->qualified.len ? s->qualified.len : 1, sizeof(*m))))
		return 0;
	n = collect_matches(s, name, templates, m);
	for (i = 0; i < n && i < max; i++)
		shown[i] = m[i].shown;
	free(m);
	return n;
}

size_t sym_qualified_suffix(struct sym_space *s, const char *name, const char **shown, size_t max)
{
	return partial_names(s, name, false, shown, max);
}

size_t sym_template_instances(struct sym_space *s, const char *name, const char **shown, size_t max)
{
	return partial_names(s, name, true, shown, max);
}
