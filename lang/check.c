/*
 * check.c: everything that can be wrong with a schedule, found before the
 * program runs.
 *
 * One walk over the tree, in program order, so that a thread variable is
 * known only after the statement that binds it.  Each name is resolved once:
 * functions and source lines against the symbol tables (the offline view of
 * the program to launch, or the maps of the process to attach to), program
 * variables and enumerators through DWARF, and every expression is typed by
 * running the evaluator without a process.  The first error stops the walk
 * and is reported with file:line:col and a caret.
 */
#include "lang/lang.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct checker {
	struct policy *pol;
	struct sym_space *syms;
	char *err;
	size_t errlen;
	int watches; /* distinct watched lvalues in the current predicate */
	char watch_text[MAX_WATCH_PER_WAIT + 1][128];
	bool in_predicate;
	bool in_choose;		  /* in the values of a choose(...) */
	const struct stmt *first; /* the schedule's first statement: serial's place */
};

static int fail(struct checker *k, struct src_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct checker *k, struct src_loc loc, const char *fmt, ...)
{
	char msg[1536]; /* a list of a name's matches (name_list) is up to 1024 */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	schedule_diag(k->pol->sched, loc, k->err, k->errlen, "%s", msg);
	return -1;
}

static void warn(struct checker *k, struct src_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(struct checker *k, struct src_loc loc, const char *fmt, ...)
{
	static const char error[] = ": error: ";
	char msg[512], diag[1024], *word, *said = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	schedule_diag(k->pol->sched, loc, diag, sizeof(diag), "%s", msg);
	word = strstr(diag, error);
	/* the diagnostic as an error says it, its word changed */
	if (!word ||
	    asprintf(&said, "%s%.*s: warning: %s", k->pol->warnings ? k->pol->warnings : "",
		     (int)(word - diag), diag, word + strlen(error)) < 0)
		return; /* a warning lost to a lack of memory harms nothing */
	free(k->pol->warnings);
	k->pol->warnings = said;
}

static int intern(char ***names, int *n, const char *name)
{
	int i;
	char **grown;

	for (i = 0; i < *n; i++)
		if (strcmp((*names)[i], name) == 0)
			return i;
	grown = realloc(*names, sizeof(**names) * (size_t)(*n + 1));
	if (!grown)
		return -1;
	*names = grown;
	grown[*n] = strdup(name);
	return (*n)++;
}

static int thread_index(struct checker *k, const char *name)
{
	int i;

	for (i = 0; i < k->pol->nthreads; i++)
		if (strcmp(k->pol->threads[i], name) == 0)
			return i;
	return -1;
}

static int unknown_thread(struct checker *k, struct src_loc loc, const char *name)
{
	char known[256] = "";
	int i;

	for (i = 0; i < k->pol->nthreads; i++) {
		strncat(known, i ? ", " : "", sizeof(known) - strlen(known) - 1);
		strncat(known, k->pol->threads[i], sizeof(known) - strlen(known) - 1);
	}
	if (!k->pol->nthreads)
		return fail(k, loc,
			    "unknown thread '%s': no thread has been bound yet "
			    "(bind one with 'thread %s = wait any start')",
			    name, name);
	return fail(k, loc, "unknown thread '%s'; threads bound so far: %s", name, known);
}

/* A C++ name as cctrace shows it (bank::Account::deposit) that stands for
 * more than one function: say which, by the symbols a schedule can give
 * instead.  n: how many; symbols and signatures: the first of them. */
#define OVERLOADS_SHOWN 4
static int overloaded(struct checker *k, const struct expr *e, const char *name, int n,
		      const char *const *symbols, const char *const *signatures)
{
	char list[1024] = "";
	int i;

	for (i = 0; i < n && i < OVERLOADS_SHOWN; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s (%s)",
			 i ? ", " : "", symbols[i], signatures[i]);
	return fail(k, e->loc, "'%s' names %d functions; give the one you mean by its symbol: %s%s",
		    name, n, list, n > OVERLOADS_SHOWN ? ", ..." : "");
}

/* How many names a list in a message gives at most: "did you mean one
 * of", "names N functions". */
#define NAMES_SHOWN 8

/* names[0..shown) as a schedule writes them ("worker<int>" quoted),
 * joined by ", ", and how many more there are (of total), into buf. */
static void name_list(char *buf, size_t len, const char *const *names, size_t shown, size_t total)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < shown; i++)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 lang_is_plain_name(names[i]) ? "%s%s" : "%s\"%s\"", i ? ", " : "",
			 names[i]);
	if (total > shown)
		snprintf(buf + strlen(buf), len - strlen(buf), ", and %zu more", total - shown);
}

static int function_symbol(struct checker *k, const struct expr *e, const char *name,
			   const char **symbol);

/* name given without its outer scopes (Account::withdraw for
 * bank::Account::withdraw), as gdb's `break` takes it: the one function
 * whose shown name ends so, or an error that lists them.  1 when none
 * does, or name is a function inlined everywhere under that very name. */
static int suffix_symbol(struct checker *k, const struct expr *e, const char *name,
			 const char **symbol)
{
	const char *shown[NAMES_SHOWN];
	char list[1024];
	size_t n;

	if (sym_inline_sites(k->syms, name, NULL, 0) > 0)
		return 1;
	n = sym_qualified_suffix(k->syms, name, shown, NAMES_SHOWN);
	if (n == 1)
		return function_symbol(k, e, shown[0], symbol);
	if (n == 0)
		return 1;
	name_list(list, sizeof(list), shown, n < NAMES_SHOWN ? n : NAMES_SHOWN, n);
	return fail(k, e->loc,
		    "'%s' names %zu functions, in other scopes: %s; give the one you "
		    "mean with its scopes",
		    name, n, list);
}

/* The symbol of the function name stands for: itself, the one a C++
 * name as shown stands for (sym_qualified), or the one it ends the shown
 * name of (suffix_symbol).  0 and *symbol; 1 when it names nothing; -1
 * after an error that says why not. */
static int function_symbol(struct checker *k, const struct expr *e, const char *name,
			   const char **symbol)
{
	const char *symbols[OVERLOADS_SHOWN], *signatures[OVERLOADS_SHOWN];
	uint64_t addr;
	int n;

	*symbol = name;
	/* as sym_function_named: a library's static function yields to the
	 * program's C++ function shown by the same name */
	if (sym_function(k->syms, name, &addr) == 0 &&
	    !sym_function_is_library_static(k->syms, name))
		return 0;
	n = sym_qualified(k->syms, name, symbols, signatures, OVERLOADS_SHOWN);
	if (n > 1)
		return overloaded(k, e, name, n, symbols, signatures);
	if (n == 0 && sym_function(k->syms, name, &addr) == 0)
		return 0;
	if (n == 0)
		return suffix_symbol(k, e, name, symbol);
	*symbol = symbols[0];
	return 0;
}

static int by_address(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* "2 copies: in a5 and heavy.constprop.0": the functions the copies of
 * name are in, in address order, at most three named. */
static void copies_text(struct checker *k, const char *name, char *buf, size_t len)
{
	size_t n = sym_inline_sites(k->syms, name, NULL, 0), i, named = 0, used;
	uint64_t *sites = calloc(n ? n : 1, sizeof(*sites));
	const char *shown[3];
	struct sym_loc loc;

	used = (size_t)snprintf(buf, len, "%zu cop%s", n, n == 1 ? "y" : "ies");
	if (!sites)
		return;
	sym_inline_sites(k->syms, name, sites, n);
	qsort(sites, n, sizeof(*sites), by_address);
	for (i = 0; i < n && named < 3; i++) {
		size_t j;

		if (sym_describe_function(k->syms, sites[i], &loc) < 0 || !loc.func)
			continue;
		for (j = 0; j < named && strcmp(shown[j], loc.pretty ? loc.pretty : loc.func); j++)
			;
		if (j == named)
			shown[named++] = loc.pretty ? loc.pretty : loc.func;
	}
	for (i = 0; i < named && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0		  ? ": in "
					 : i + 1 == named ? " and "
							  : ", ",
					 shown[i]);
	free(sites);
}

/* F has a symbol, and is inlined too: only enter(F) sees the copies. */
static void also_inlined(struct checker *k, const struct expr *e, const char *name)
{
	char where[512];

	/* enter(F) stops at the copies: only the others are asked about */
	if ((e->kind == E_EVENT && strcmp(e->atom->name, "enter") == 0) ||
	    sym_inline_sites(k->syms, name, NULL, 0) == 0)
		return;
	copies_text(k, name, where, sizeof(where));
	warn(k, e->loc,
	     "'%s' is also inlined or copied by the compiler (%s), where no call or return of "
	     "it is seen; enter(%s) stops there too",
	     name, where, name);
}

/* F, with no symbol of its own, is inlined wherever it is called: enter(F)
 * stops at its copies; nothing else about F can be seen. */
static int inlined_only(struct checker *k, const struct expr *e, const char *name)
{
	char where[512];

	if (e->kind == E_EVENT && strcmp(e->atom->name, "enter") == 0)
		return intern(&k->pol->funcs, &k->pol->nfuncs, name);
	copies_text(k, name, where, sizeof(where));
	return fail(k, e->loc,
		    "'%s' has no symbol of its own: the compiler inlined it, or copied it under "
		    "other names (%s), and no call or return of it is seen there: enter(%s) stops "
		    "at its copies, at(FILE:LINE) at a line of it",
		    name, where, name);
}

/* A template named without its arguments (worker for worker<int> and
 * worker<double>): every instance suggested, up to NAMES_SHOWN of them.
 * True when it was so, after the error. */
static bool template_instances(struct checker *k, const struct expr *e, const char *name)
{
	const char *shown[NAMES_SHOWN];
	char list[1024];
	size_t n = sym_template_instances(k->syms, name, shown, NAMES_SHOWN);

	if (n == 0)
		return false;
	name_list(list, sizeof(list), shown, n < NAMES_SHOWN ? n : NAMES_SHOWN, n);
	if (n == 1)
		fail(k, e->loc, "no function '%s'; did you mean %s (quoted)?", name, list);
	else
		fail(k, e->loc, "no function '%s'; did you mean one of %s (quoted)?", name, list);
	return true;
}

static int resolve_function(struct checker *k, const struct expr *e, const char *name)
{
	const char *near, *symbol;
	char why[1024];
	int found = function_symbol(k, e, name, &symbol);

	/* The engine gets the symbol: what it compares stacks and PLT stubs
	 * with.  The schedule keeps the name as written. */
	if (found == 0) {
		also_inlined(k, e, name);
		return intern(&k->pol->funcs, &k->pol->nfuncs, symbol);
	}
	if (found < 0)
		return -1;
	if (sym_inline_sites(k->syms, name, NULL, 0) > 0)
		return inlined_only(k, e, name);
	/* A deleted or stripped executable hides every name of its own:
	 * that, not a spelling, is the news (and a "did you mean" from a
	 * library would mislead). */
	if (sym_exe_problem(k->syms, why, sizeof(why)) == 0)
		return fail(k, e->loc, "no function '%s' in the program or its libraries: %s", name,
			    why);
	if (template_instances(k, e, name))
		return -1;
	near = sym_suggest_function(k->syms, name);
	if (near && !lang_is_plain_name(near))
		return fail(k, e->loc, "no function '%s'; did you mean \"%s\" (quoted)?", name,
			    near);
	if (near)
		return fail(k, e->loc, "no function '%s'; did you mean '%s'?", name, near);
	return fail(k, e->loc, "no function '%s' in the program or its libraries", name);
}

int lang_func_offset(struct sym_space *syms, const char *text, uint64_t *addr)
{
	size_t n;
	uint64_t offset;
	char func[1024];

	if (!lang_at_offset(text, &n, &offset) || n >= sizeof(func))
		return -1;
	memcpy(func, text, n);
	func[n] = '\0';
	if (sym_function_named(syms, func, addr) == 0 && *addr) {
		*addr += offset;
		return 0;
	}
	/* at(MODULE+0xOFFSET): code no function covers */
	return sym_module_named(syms, func, offset, addr);
}

/* at(FILE:LINE) with no code: is FILE unknown, or which lines near LINE
 * have code? */
static int no_code_at(struct checker *k, const struct expr *e)
{
	int before, after;

	if (sym_line_neighbours(k->syms, e->name, (int)e->ival, &before, &after) < 0)
		return fail(k, e->loc,
			    "no code at %s:%ld: no source file '%s' in the program's debugging "
			    "information (built without -g, or another name?)",
			    e->name, (long)e->ival, e->name);
	if (before && after)
		return fail(k, e->loc,
			    "no code at %s:%ld: the nearest lines with code are %d and %d", e->name,
			    (long)e->ival, before, after);
	if (before)
		return fail(k, e->loc, "no code at %s:%ld: the last line with code is %d", e->name,
			    (long)e->ival, before);
	return fail(k, e->loc, "no code at %s:%ld: the first line with code is %d", e->name,
		    (long)e->ival, after);
}

/* What the engine finds at(FUNC+0xOFFSET) by: "SYMBOL+0xOFFSET", the
 * symbol of the function FUNC stands for (as it gets enter(F)'s), or the
 * text itself for a module's offset.  NULL after an error. */
static char *offset_key(struct checker *k, const struct expr *e)
{
	size_t n;
	uint64_t offset;
	const char *symbol;
	char *func, *key = NULL;
	int found;

	if (!lang_at_offset(e->name, &n, &offset) || !(func = strndup(e->name, n)))
		return NULL;
	found = function_symbol(k, e, func, &symbol);
	if (found == 0 && asprintf(&key, "%s%s", symbol, e->name + n) < 0)
		key = NULL;
	else if (found > 0)
		key = strdup(e->name);
	free(func);
	return key;
}

static int resolve_location(struct checker *k, struct expr *e)
{
	uint64_t addr;
	size_t n = 0;
	char *key;
	struct at_loc *grown;
	int i;

	if (e->ival == 0) { /* at(FUNC+0xOFFSET) */
		key = offset_key(k, e);
		if (!key)
			return -1;
		if (lang_func_offset(k->syms, key, &addr) < 0) {
			uint64_t offset;

			free(key);
			lang_at_offset(e->name, &n, &offset);
			return fail(k, e->loc,
				    "no function or module '%.*s' in the program or its libraries "
				    "(or the offset is outside it)",
				    (int)n, e->name);
		}
	} else if (sym_line(k->syms, e->name, (int)e->ival, &addr, 1, &n) < 0 || n == 0) {
		return no_code_at(k, e);
	} else if (!(key = strdup(e->name))) {
		return -1;
	}
	for (i = 0; i < k->pol->nlocs; i++)
		if (strcmp(k->pol->locs[i].file, key) == 0 && k->pol->locs[i].line == e->ival) {
			free(key);
			return i;
		}
	grown = realloc(k->pol->locs, sizeof(*grown) * (size_t)(k->pol->nlocs + 1));
	if (!grown) {
		free(key);
		return -1;
	}
	k->pol->locs = grown;
	grown[k->pol->nlocs] = (struct at_loc){key, (int)e->ival};
	return k->pol->nlocs++;
}

static int local_index(struct checker *k, const char *name)
{
	int i;

	for (i = 0; i < k->pol->nlocals; i++)
		if (strcmp(k->pol->locals[i], name) == 0)
			return i;
	return -1;
}

const char *const event_field_names[NFIELDS] = {"addr", "size",	  "value", "func", "line",
						"arg1", "arg2",	  "arg3",  "arg4", "arg5",
						"arg6", "retval", "caller"};

static int event_field_index(const char *name)
{
	int i;

	for (i = 0; i < NFIELDS; i++)
		if (strcmp(event_field_names[i], name) == 0)
			return i;
	return -1;
}

static int resolve_name(struct checker *k, struct expr *e)
{
	struct sym_var var;
	const char *near;
	uint64_t addr;

	e->slot = local_index(k, e->name);
	if (e->slot >= 0) {
		e->ref = REF_LOCAL;
		return 0;
	}
	if (thread_index(k, e->name) >= 0) {
		e->ref = REF_THREAD;
		return 0;
	}
	/* In a predicate the event's fields shadow program globals. */
	if (k->in_predicate && (e->slot = event_field_index(e->name)) >= 0) {
		e->ref = REF_FIELD;
		return 0;
	}
	if (sym_variable(k->syms, e->name, &var) == 0) {
		e->ref = REF_VAR;
		return 0;
	}
	/* A global wins over a same-named local: schedules name globals. */
	if (sym_variable_scope(k->syms, e->name, NULL) >= SYM_SCOPE_TLS) {
		e->ref = REF_VAR_AT;
		return 0;
	}
	if (sym_enumerator(k->syms, e->name, &e->enum_value) == 0) {
		e->ref = REF_ENUM;
		return 0;
	}
	/* Elsewhere a call field is the last wait's or run's event's, unless
	 * the program has a variable of that name. */
	if ((e->slot = event_field_index(e->name)) >= FIELD_ARG1) {
		e->ref = REF_FIELD;
		return 0;
	}
	if (sym_function(k->syms, e->name, &addr) == 0) { /* func == withdraw */
		e->ref = REF_FUNC;
		return 0;
	}
	near = sym_suggest_variable(k->syms, e->name);
	if (near)
		return fail(k, e->loc, "no variable '%s'; did you mean '%s'?", e->name, near);
	return fail(k, e->loc, "no variable or enumerator '%s' in the program", e->name);
}

static int check_watch(struct checker *k, struct expr *e)
{
	struct eval_ctx c = {
	    .syms = k->syms, .sched = k->pol->sched, .err = k->err, .errlen = k->errlen};
	uint64_t addr, size;
	char text[128];
	int i;

	if (eval_lvalue(&c, e->lhs, &addr, &size) < 0)
		return -1;
	expr_format(e->lhs, text, sizeof(text));
	e->slot = intern(&k->pol->watched, &k->pol->nwatched, text);
	/* What the 4 debug registers cannot take (a fifth variable, a
	 * struct) is matched by decoding the running threads' instructions
	 * instead; the user sees no limit, only a slower run. */
	e->ival = WATCH_BY_DEBUG_REGISTER;
	if (size != 1 && size != 2 && size != 4 && size != 8) {
		e->ival = WATCH_BY_DECODING;
		return 0;
	}
	for (i = 0; i < k->watches; i++)
		if (strcmp(k->watch_text[i], text) == 0)
			return 0;
	if (k->watches == MAX_WATCH_PER_WAIT) {
		e->ival = WATCH_BY_DECODING;
		return 0;
	}
	snprintf(k->watch_text[k->watches++], sizeof(k->watch_text[0]), "%s", text);
	return 0;
}

static int check_expr(struct checker *k, struct expr *e);

/* The operands of a chain of binary operations, in source order so that the
 * first error reported is the leftmost: iterating along the chain, whose
 * length only the file bounds (ast.h). */
static int check_chain(struct checker *k, struct expr *e)
{
	struct expr *b = expr_chain_bottom(e);

	if (check_expr(k, b->lhs) < 0)
		return -1;
	for (;; b = b->up) {
		assert(b); /* the spine leads back up to e (ast.h) */
		if (check_expr(k, b->rhs) < 0)
			return -1;
		if (b == e)
			return 0;
	}
}

/* The values of choose(...) are checked like any expression, but may not be
 * events: a predicate's events are found (and their breakpoints planted) by
 * walks that take choose as a value, not as a part of the predicate. */
static int check_choose(struct checker *k, struct expr *e)
{
	bool in_choose = k->in_choose;
	int i, rc = 0;

	k->in_choose = true;
	if (e->nargs == 0)
		rc = check_expr(k, e->lhs) < 0 || check_expr(k, e->rhs) < 0 ? -1 : 0;
	for (i = 0; rc == 0 && i < e->nargs; i++)
		rc = check_expr(k, e->args[i]);
	k->in_choose = in_choose;
	return rc;
}

static int check_children(struct checker *k, struct expr *e)
{
	if (e->kind == E_BINARY)
		return check_chain(k, e);
	if (e->kind == E_CHOOSE)
		return check_choose(k, e);
	if (e->lhs && check_expr(k, e->lhs) < 0)
		return -1;
	if (e->rhs && check_expr(k, e->rhs) < 0)
		return -1;
	return 0;
}

static int check_event(struct checker *k, struct expr *e)
{
	char text[128];

	if (k->in_choose) {
		expr_format(e, text, sizeof(text));
		return fail(k, e->loc,
			    "choose(...) picks among values; the event '%s' cannot be one of them",
			    text);
	}
	if (!k->in_predicate) {
		expr_format(e, text, sizeof(text));
		return fail(k, e->loc, "the event '%s' can only be used after 'until' or 'wait'",
			    text);
	}
	assert(e->atom);
	switch (e->atom->arg) {
	case ATOM_ARG_FUNCTION:
		e->slot = e->name ? resolve_function(k, e, e->name) : -1;
		return e->name && e->slot < 0 ? -1 : 0;
	case ATOM_ARG_LOCATION:
		e->slot = resolve_location(k, e);
		return e->slot < 0 ? -1 : 0;
	case ATOM_ARG_LVALUE:
		if (!e->lhs)
			return 0;
		if (check_children(k, e) < 0)
			return -1;
		return check_watch(k, e);
	case ATOM_ARG_NONE:
	case ATOM_ARG_SIGNAL:
	case ATOM_ARG_NAME: /* resolved by the parser, through the atom's row */
		return 0;
	}
	return 0;
}

static int check_expr(struct checker *k, struct expr *e)
{
	switch (e->kind) {
	case E_NAME:
		return resolve_name(k, e);
	case E_ENDED:
	case E_PROC:
		if (thread_index(k, e->name) < 0)
			return unknown_thread(k, e->loc, e->name);
		return 0;
	case E_IN:
		if (!e->name && !k->in_predicate)
			return fail(
			    k, e->loc,
			    "in(%s) names no thread, so it can only be used in a "
			    "predicate (after 'until' or 'wait'); elsewhere write in(T, %s)",
			    e->func, e->func);
		if (e->name && thread_index(k, e->name) < 0)
			return unknown_thread(k, e->loc, e->name);
		e->slot = resolve_function(k, e, e->func);
		return e->slot < 0 ? -1 : 0;
	case E_EVENT:
		return check_event(k, e);
	case E_INT:
	case E_UNARY:
	case E_BINARY:
	case E_MEMBER:
	case E_ARROW:
	case E_INDEX:
	case E_CHOOSE:
		return check_children(k, e);
	}
	return 0;
}

/* Names must resolve, then the whole expression must type-check. */
static int check_typed(struct checker *k, struct expr *e)
{
	struct eval_ctx c = {
	    .syms = k->syms, .sched = k->pol->sched, .err = k->err, .errlen = k->errlen};
	int64_t ignored;

	if (check_expr(k, e) < 0)
		return -1;
	return eval_int(&c, e, &ignored);
}

static int check_predicate(struct checker *k, struct expr *pred)
{
	int rc;

	if (!expr_has_event(pred))
		return fail(k, pred->loc,
			    "this predicate has no event to wait for; add one such "
			    "as enter(F), at(FILE:LINE), write(VAR) or exit");
	k->in_predicate = true;
	k->watches = 0;
	rc = check_typed(k, pred);
	k->in_predicate = false;
	return rc;
}

static int check_thread_list(struct checker *k, struct stmt *s)
{
	int i;

	for (i = 0; i < s->n_names; i++)
		if (thread_index(k, s->names[i]) < 0)
			return unknown_thread(k, s->name_locs[i], s->names[i]);
	return 0;
}

static int check_block(struct checker *k, struct stmt *s);

static int check_choose_thread(struct checker *k, struct stmt *s)
{
	int i;

	for (i = 0; i < s->nchoices; i++)
		if (thread_index(k, s->choices[i]) < 0)
			return unknown_thread(k, s->choice_locs[i], s->choices[i]);
	if (thread_index(k, s->names[0]) >= 0)
		return 0;
	return intern(&k->pol->threads, &k->pol->nthreads, s->names[0]) < 0 ? -1 : 0;
}

static int check_wait(struct checker *k, struct stmt *s)
{
	int i;

	if (s->count < 1)
		return fail(k, s->loc, "'wait' needs a count of at least 1");
	if (s->n_names && s->n_names != s->count)
		return fail(k, s->loc, "%d thread name%s for %ld thread%s", s->n_names,
			    s->n_names == 1 ? "" : "s", (long)s->count, s->count == 1 ? "" : "s");
	if (check_predicate(k, s->pred) < 0)
		return -1;
	for (i = 0; i < s->n_names; i++) {
		if (thread_index(k, s->names[i]) >= 0)
			continue; /* rebinding in a loop is fine */
		if (intern(&k->pol->threads, &k->pol->nthreads, s->names[i]) < 0)
			return -1;
	}
	return 0;
}

static int check_stmt(struct checker *k, struct stmt *s)
{
	switch (s->kind) {
	case S_TIMEOUT:
		return 0;
	case S_WAIT:
		return check_wait(k, s);
	case S_RUN:
		if (check_thread_list(k, s) < 0)
			return -1;
		return check_predicate(k, s->pred);
	case S_IF:
		if (check_typed(k, s->cond) < 0 || check_block(k, s->body) < 0)
			return -1;
		return check_block(k, s->else_body);
	case S_WHILE:
		if (check_typed(k, s->cond) < 0)
			return -1;
		return check_block(k, s->body);
	case S_REPEAT:
		return check_block(k, s->body);
	case S_SERIAL:
		if (s != k->first)
			return fail(k, s->loc,
				    "serial must be the schedule's first statement (it serializes "
				    "the whole run, from the program's first instruction)");
		return 0;
	case S_ASSERT:
		return check_typed(k, s->cond);
	case S_RELEASE:
		return s->all ? 0 : check_thread_list(k, s);
	case S_STEP:
	case S_NEXT:
	case S_FINISH:
	case S_HOLD:
		return check_thread_list(k, s);
	case S_BIND:
		if (thread_index(k, s->names[0]) >= 0)
			return 0;
		return intern(&k->pol->threads, &k->pol->nthreads, s->names[0]) < 0 ? -1 : 0;
	case S_CHOOSE_THREAD:
		return check_choose_thread(k, s);
	case S_ASSUME:
		return check_typed(k, s->cond);
	case S_LET:
		if (check_typed(k, s->cond) < 0)
			return -1;
		return intern(&k->pol->locals, &k->pol->nlocals, s->names[0]) < 0 ? -1 : 0;
	case S_FOR:
		if (check_typed(k, s->lo) < 0 || check_typed(k, s->hi) < 0 ||
		    intern(&k->pol->locals, &k->pol->nlocals, s->names[0]) < 0)
			return -1;
		return check_block(k, s->body);
	}
	return 0;
}

static int check_block(struct checker *k, struct stmt *s)
{
	for (; s; s = s->next)
		if (check_stmt(k, s) < 0)
			return -1;
	return 0;
}

int lang_check(struct policy *pol, struct sym_space *syms, char *err, size_t errlen)
{
	return lang_check_block(pol, pol->sched, syms, err, errlen);
}

int lang_check_block(struct policy *pol, struct schedule *sched, struct sym_space *syms, char *err,
		     size_t errlen)
{
	struct schedule *saved = pol->sched;
	struct checker k = {
	    .pol = pol, .syms = syms, .err = err, .errlen = errlen, .first = sched->body};
	int rc;

	/* Names found here extend pol's tables, so that statements checked
	 * one at a time (the shell) share thread variables and points. */
	pol->sched = sched;
	rc = check_block(&k, sched->body);
	pol->sched = saved;
	return rc;
}
