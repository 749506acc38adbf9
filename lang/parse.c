/*
 * parse: schedule text -> struct schedule (see ast.h and
 * docs/schedule-language.md for the grammar).
 *
 * Design: a hand-written recursive descent parser with one token of
 * lookahead pulled from the lexer on demand (the lexer must not run ahead,
 * because at(FILE:LINE) switches it into a raw mode).  Statements are parsed
 * by one function each; expressions by precedence climbing over the C binary
 * operators, then unary, postfix and primary (which also parses event atoms
 * and thread conditions, and choose(...)).  `while (*)` is recognised by
 * peeking two tokens past the '(' on a copy of the lexer, and becomes
 * while (choose(1, 0)) with op '*' on the choose so that it prints back as
 * written.
 *
 * Errors: the first error wins.  perr() formats the complete diagnostic
 * (message, source line, caret) into the caller's buffer and marks the parser
 * failed; from then on advance() only returns T_EOF so every loop ends, and
 * every parse function returns NULL after freeing what it built.  Each node
 * records the position of its first token.
 *
 * Diagnostics are formatted, and trees printed back, by print.c.
 */
#include "lang/internal.h"
#include "symbols/symbols.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Depth limits, which bound the recursion of every walk over the tree (see
 * ast.h).  An expression level is a parenthesised, bracketed or argument
 * sub-expression, a unary operator or a postfix .x, ->x or [i]; chains of
 * binary operators do not nest (a + b + ... + z is one level however long).
 * A statement level is a block, or an `else if`, which nests the next `if`. */
#define MAX_NESTING 256
#define MAX_BLOCKS  100

struct parser {
	struct lexer lx;
	struct token tok;
	const char *path, *text;
	const struct atom_table *atoms; /* the event atoms there are */
	char *err;
	size_t errlen;
	bool failed;
	int nesting;	  /* expression depth (levels, see MAX_NESTING) */
	int stmt_nesting; /* statement depth */
};

static void perr(struct parser *p, struct src_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void perr(struct parser *p, struct src_loc loc, const char *fmt, ...)
{
	va_list ap;
	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	lang_diag_v(p->path, p->text, loc, p->err, p->errlen, fmt, ap);
	va_end(ap);
}

/* ---- tokens ----------------------------------------------------------- */

/* Reserved words.  `choose` is not one: it is special only before '(' (a
 * program may have a variable called choose), and `in` only after `for X`. */
static const char *const keywords[] = {
    "thread", "wait",	"any",	  "distinct", "run",	"until",   "if",   "else",
    "while",  "repeat", "assert", "release",  "all",	"timeout", "true", "false",
    "step",   "next",	"finish", "hold",     "assume", "let",	   "for",
};

/* For "did you mean" on statements.  Not `for`: it is too close to common
 * short words (`foo = ...` should get the hint about binding threads). */
static const char *const stmt_keywords[] = {
    "thread",  "wait", "run",  "if",	 "while", "repeat", "assert", "release",
    "timeout", "step", "next", "finish", "hold",  "assume", "let",    "serial",
};

static void advance(struct parser *p)
{
	if (p->failed) {
		p->tok.kind = T_EOF;
		return;
	}
	p->tok = lexer_next(&p->lx);
	if (p->tok.kind == T_ERROR) {
		perr(p, p->tok.loc, "%s", p->lx.msg);
		p->tok.kind = T_EOF;
	}
}

static bool tok_is(const struct token *t, const char *word)
{
	return t->kind == T_IDENT && t->len == strlen(word) && !memcmp(t->text, word, t->len);
}

static bool is_keyword(const struct token *t)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (tok_is(t, keywords[i]))
			return true;
	return false;
}

/* 'text' or "end of line": for "found X" in messages. */
static const char *found(struct parser *p)
{
	static _Thread_local char buf[64];
	token_describe(&p->tok, buf, sizeof(buf));
	return buf;
}

static bool at_stmt_end(const struct parser *p)
{
	int k = p->tok.kind;
	return k == T_NEWLINE || k == ';' || k == '}' || k == T_EOF;
}

static void skip_newlines(struct parser *p)
{
	while (p->tok.kind == T_NEWLINE)
		advance(p);
}

/* The closest word within a small edit distance, or NULL. */
static const char *suggest(const struct token *t, const char *const *words, size_t n)
{
	const char *best = NULL;
	unsigned best_d = t->len <= 3 ? 2 : 3;
	for (size_t i = 0; i < n; i++) {
		unsigned d = sym_edit_distance(t->text, t->len, words[i], strlen(words[i]));
		if (d < best_d && d < t->len) {
			best_d = d;
			best = words[i];
		}
	}
	return best;
}

static char *tok_strdup(struct parser *p, const struct token *t)
{
	char *s = strndup(t->text, t->len);
	if (!s)
		perr(p, t->loc, "out of memory");
	return s;
}

/* Consumes a closing ')' or ']' matching the opener at `open`. */
static bool expect_close(struct parser *p, int kind, struct src_loc open)
{
	if (p->tok.kind == kind) {
		advance(p);
		return true;
	}
	perr(p, p->tok.loc, "expected '%c' to close '%c' at %d:%d, found %s", kind,
	     kind == ')' ? '(' : '[', open.line, open.col, found(p));
	return false;
}

/* The text of a C++ name that the lexer read only the start of, from
 * start up to the ')' that closes its atom (`worker<int>`,
 * `std::vector<int, std::allocator<int> >::push_back`, `Acc::operator()`):
 * its length, 0 past a line or MAX_QUOTED characters. */
#define MAX_QUOTED 200
static size_t name_text(const char *start)
{
	size_t n = 0;
	int depth = 0;

	while (start[n] && start[n] != '\n' && n < MAX_QUOTED && (start[n] != ')' || depth > 0)) {
		depth += start[n] == '(' ? 1 : start[n] == ')' ? -1 : 0;
		n++;
	}
	while (n > 0 && (start[n - 1] == ' ' || start[n - 1] == '\t'))
		n--;
	return start[n] == '\0' || start[n] == '\n' || n >= MAX_QUOTED ? 0 : n;
}

/* After a function's name in WORD(NAME or in(T, NAME: does the name go
 * on with a template's arguments, an operator's or a lambda's brackets?
 * It was meant as a C++ name as shown, and the error says how to quote
 * it.  name: where it starts in the text. */
static bool name_goes_on(struct parser *p, struct src_loc open, const char *word,
			 const char *thread, const char *name)
{
	int k = p->tok.kind;
	size_t n;

	/* a lambda's scope follows a "::" (main::{lambda()#1}) */
	bool scope = k == ':' && p->tok.text[1] == ':' && strchr("<({[", p->tok.text[2]);

	/* a quoted name said what it is: what follows is no part of it */
	if (k <= 0 || k >= 128 || !(strchr("<({[", k) || scope) || name[-1] == '"' ||
	    !(n = name_text(name)))
		return false;
	perr(p, p->tok.loc,
	     "expected ')' to close '(' at %d:%d, found %s; a name no identifier spells (a "
	     "template, a lambda, an operator) is written in double quotes: %s(%s%s\"%.*s\")",
	     open.line, open.col, found(p), word, thread ? thread : "", thread ? ", " : "", (int)n,
	     name);
	return true;
}

/* ---- expressions ------------------------------------------------------ */

static struct expr *parse_expr(struct parser *p);
static struct expr *parse_unary(struct parser *p);

static struct expr *new_expr(struct parser *p, enum expr_kind kind, struct src_loc loc)
{
	struct expr *e = calloc(1, sizeof(*e));
	if (!e) {
		perr(p, loc, "out of memory");
		return NULL;
	}
	e->kind = kind;
	e->loc = loc;
	e->slot = -1;
	return e;
}

/* Iterates along lhs, where a chain of binary operators is as deep as it is
 * long (see ast.h), and recurses into the rest, which the parser bounds. */
static void expr_free(struct expr *e)
{
	while (e) {
		struct expr *lhs = e->lhs;
		expr_free(e->rhs);
		for (int i = 0; i < e->nargs; i++)
			expr_free(e->args[i]);
		free(e->args);
		free(e->name);
		free(e->func);
		free(e);
		e = lhs;
	}
}

/* Enters one level of expression nesting (undone by p->nesting--, also on
 * failure); past MAX_NESTING it is an error at loc. */
static bool nest(struct parser *p, struct src_loc loc)
{
	if (++p->nesting <= MAX_NESTING)
		return true;
	perr(p, loc, "expression nested deeper than %d levels", MAX_NESTING);
	return false;
}

/* An identifier node (E_NAME and the like) whose name is the current token. */
static struct expr *name_expr(struct parser *p, enum expr_kind kind, struct src_loc loc)
{
	struct expr *e = new_expr(p, kind, loc);
	if (e && !(e->name = tok_strdup(p, &p->tok))) {
		free(e);
		return NULL;
	}
	return e;
}

/* Requires an identifier; `what` names it in the error ("enter(...) expects a
 * function name").  Keywords are accepted when any_word (function names such
 * as `wait` are legal). */
static char *expect_word(struct parser *p, const char *what, bool any_word)
{
	if (p->tok.kind != T_IDENT || (!any_word && is_keyword(&p->tok))) {
		perr(p, p->tok.loc, "%s, found %s", what, found(p));
		return NULL;
	}
	char *s = tok_strdup(p, &p->tok);
	advance(p);
	return s;
}

/*
 * Signal names come from glibc (sigabbrev_np, "SEGV" for SIGSEGV), looping
 * over every signal number, so every signal this libc names is accepted and
 * the printer writes the same names back.  glibc gives one name per number;
 * the Linux aliases it does not give (SIGIO is SIGPOLL, SIGIOT is SIGABRT,
 * SIGCLD is SIGCHLD) are the only names listed here.
 */
static int signal_number(const struct token *t)
{
	static const struct {
		const char *name;
		int num;
	} aliases[] = {{"IO", SIGIO}, {"IOT", SIGIOT}, {"CLD", SIGCHLD}};
	if (t->len <= 3 || memcmp(t->text, "SIG", 3) != 0)
		return 0;
	struct token abbrev = *t;
	abbrev.text += 3;
	abbrev.len -= 3;
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		const char *name = sigabbrev_np(sig);
		if (name && tok_is(&abbrev, name))
			return sig;
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (tok_is(&abbrev, aliases[i].name))
			return aliases[i].num;
	return 0;
}

/* signal(SIGNAME) / signal(N); the current token follows the '('. */
static bool parse_signal_arg(struct parser *p, struct expr *e)
{
	if (p->tok.kind == T_INT && p->tok.ival >= 1 && p->tok.ival <= SIGRTMAX) {
		e->ival = p->tok.ival;
	} else if (p->tok.kind == T_IDENT && (e->ival = signal_number(&p->tok)) != 0) {
		;
	} else if (p->tok.kind == T_IDENT || p->tok.kind == T_INT) {
		perr(p, p->tok.loc,
		     "unknown signal %s: use a name such as SIGSEGV or a number 1-%d", found(p),
		     SIGRTMAX);
		return false;
	} else {
		perr(p, p->tok.loc, "%s(...) expects a signal name such as SIGSEGV, found %s",
		     e->atom->name, found(p));
		return false;
	}
	advance(p);
	return true;
}

static bool is_lvalue(const struct expr *e)
{
	return e->kind == E_NAME || e->kind == E_MEMBER || e->kind == E_ARROW ||
	       e->kind == E_INDEX || (e->kind == E_UNARY && e->op == '*');
}

/* at(FILE:LINE), read in raw mode by the lexer; at(FUNC+0xOFFSET) and
 * at("NAME"+0xOFFSET) keep "FUNC+0xOFFSET" in e->name, the quotes left
 * out (lang_at_text puts them back). */
static bool parse_at_arg(struct parser *p, struct expr *e)
{
	struct token file, line;
	if (!lexer_location(&p->lx, &file, &line)) {
		perr(p, file.loc, "%s", p->lx.msg);
		return false;
	}
	e->ival = line.ival;
	if (line.ival == 0 && asprintf(&e->name, "%.*s%.*s", (int)file.len, file.text,
				       (int)line.len, line.text) < 0) {
		e->name = NULL;
		perr(p, file.loc, "out of memory");
	} else if (line.ival != 0) {
		e->name = tok_strdup(p, &file);
	}
	advance(p);
	return e->name != NULL;
}

/* read(LVALUE), write(LVALUE) */
static bool parse_access_arg(struct parser *p, struct expr *e, const char *what)
{
	e->lhs = parse_expr(p);
	if (!e->lhs)
		return false;
	if (!is_lvalue(e->lhs)) {
		perr(p, e->lhs->loc,
		     "%s(...) needs a variable, field, array element or *pointer to watch", what);
		return false;
	}
	return true;
}

/* in(T, F); open: where its '(' is. */
static bool parse_in_args(struct parser *p, struct expr *e, struct src_loc open)
{
	const char *name = p->tok.text;

	e->name = expect_word(p, "in(...) expects a thread or function name", true);
	if (!e->name || name_goes_on(p, open, "in", NULL, name))
		return false;
	if (p->tok.kind == ')') { /* in(F): the thread of the event */
		e->func = e->name;
		e->name = NULL;
		return true;
	}
	if (p->tok.kind != ',') {
		perr(p, p->tok.loc,
		     "expected ',' between the thread and the function in in(T, F), found %s",
		     found(p));
		return false;
	}
	advance(p);
	name = p->tok.text;
	e->func = expect_word(p, "in(...) expects a function name after ','", true);
	return e->func != NULL && !name_goes_on(p, open, "in", e->name, name);
}

/* syscall(NAME): the row of the atom resolves NAME (a system call of x86-64
 * Linux) to its number, so that lang needs no table of them. */
static bool parse_named_arg(struct parser *p, struct expr *e)
{
	struct token word = p->tok;
	char msg[160], why[256];

	assert(e->atom->resolve && e->atom->arg_what);
	snprintf(msg, sizeof(msg), "%s(...) expects %s", e->atom->name, e->atom->arg_what);
	e->name = expect_word(p, msg, true);
	if (!e->name)
		return false;
	e->ival = e->atom->resolve(e->name, why, sizeof(why));
	if (e->ival < 0) {
		perr(p, word.loc, "%s", why);
		return false;
	}
	return true;
}

/* Appends e to the arguments of choose node c; frees e on failure. */
static bool add_arg(struct parser *p, struct expr *c, struct expr *e)
{
	struct expr **args = realloc(c->args, (size_t)(c->nargs + 1) * sizeof(*args));
	if (!args) {
		perr(p, e->loc, "out of memory");
		expr_free(e);
		return false;
	}
	c->args = args;
	c->args[c->nargs++] = e;
	return true;
}

/* choose(E1, E2, ...) or choose(LO..HI); the current token is the '('. */
static struct expr *parse_choose(struct parser *p, const struct token *word)
{
	struct src_loc open = p->tok.loc;
	struct expr *c = new_expr(p, E_CHOOSE, word->loc), *e;
	if (!c)
		return NULL;
	advance(p);
	if (p->tok.kind == ')')
		goto too_few;
	if (!(e = parse_expr(p)))
		goto fail;
	if (p->tok.kind == T_DOTDOT) {
		c->lhs = e;
		advance(p);
		if (!(c->rhs = parse_expr(p)))
			goto fail;
		if (p->tok.kind == ',' || p->tok.kind == T_DOTDOT)
			goto range_alone;
		if (!expect_close(p, ')', open))
			goto fail;
		return c;
	}
	if (!add_arg(p, c, e))
		goto fail;
	while (p->tok.kind == ',') {
		advance(p);
		if (!(e = parse_expr(p)) || !add_arg(p, c, e))
			goto fail;
	}
	if (p->tok.kind == T_DOTDOT)
		goto range_alone;
	if (p->tok.kind == ')' && c->nargs < 2)
		goto too_few;
	if (!expect_close(p, ')', open))
		goto fail;
	return c;
range_alone:
	perr(p, p->tok.loc, "a range is choose's only argument: 'choose(LO..HI)', found %s",
	     found(p));
	goto fail;
too_few:
	perr(p, word->loc, "choose needs at least two values or a range LO..HI");
fail:
	expr_free(c);
	return NULL;
}

/* The row of the atom called word, or NULL. */
static const struct atom_syntax *atom_named(const struct parser *p, const struct token *word)
{
	for (size_t i = 0; i < p->atoms->n; i++) {
		const struct atom_syntax *a = atom_table_row(p->atoms, i);

		if (tok_is(word, a->name))
			return a;
	}
	return NULL;
}

/* The argument of atom e; the current token follows the '(' (except for
 * at(...), whose argument the lexer reads in raw mode from the '('). */
static bool parse_atom_arg(struct parser *p, struct expr *e)
{
	char msg[64];

	switch (e->atom->arg) {
	case ATOM_ARG_NONE:
		break;
	case ATOM_ARG_FUNCTION:
		snprintf(msg, sizeof(msg), "%s(...) expects a function name", e->atom->name);
		e->name = expect_word(p, msg, true);
		return e->name != NULL;
	case ATOM_ARG_LOCATION:
		return parse_at_arg(p, e);
	case ATOM_ARG_LVALUE:
		return parse_access_arg(p, e, e->atom->name);
	case ATOM_ARG_SIGNAL:
		return parse_signal_arg(p, e);
	case ATOM_ARG_NAME:
		return parse_named_arg(p, e);
	}
	assert(!"an atom without an argument has no '('");
	return false;
}

/* Event atom a, whose word was the previous token. */
static struct expr *parse_atom(struct parser *p, const struct atom_syntax *a,
			       const struct token *word)
{
	struct expr *e = new_expr(p, E_EVENT, word->loc);
	struct src_loc open = p->tok.loc;
	const char *name;

	if (!e)
		return NULL;
	e->atom = a;
	e->ival = a->arg == ATOM_ARG_NAME ? -1 : 0; /* bare: any system call */
	if (a->arg == ATOM_ARG_NONE && p->tok.kind == '(') {
		perr(p, p->tok.loc, "'%s' takes no argument", a->name);
		expr_free(e);
		return NULL;
	}
	if (a->arg == ATOM_ARG_NONE || p->tok.kind != '(')
		return e;
	if (a->arg != ATOM_ARG_LOCATION)
		advance(p);
	name = p->tok.text;
	if (parse_atom_arg(p, e) &&
	    !(a->arg == ATOM_ARG_FUNCTION && name_goes_on(p, open, a->name, NULL, name)) &&
	    expect_close(p, ')', open))
		return e;
	expr_free(e);
	return NULL;
}

/* "WORD(...) is not ...": the atoms that take an argument, then the
 * conditions, which are the only calls there are. */
static void unknown_call(struct parser *p, const struct token *word)
{
	static const char *const conditions[] = {"ended", "in", "choose", "proc"};
	const char *words[64], *hint;
	char events[256] = "";
	size_t n = 0, i;

	for (i = 0; i < p->atoms->n; i++) {
		const struct atom_syntax *a = atom_table_row(p->atoms, i);

		if (a->arg == ATOM_ARG_NONE)
			continue;
		if (n < sizeof(words) / sizeof(words[0]) - 4)
			words[n++] = a->name;
		snprintf(events + strlen(events), sizeof(events) - strlen(events), "%s, ", a->name);
	}
	for (i = 0; i < sizeof(conditions) / sizeof(conditions[0]); i++)
		words[n++] = conditions[i];
	hint = suggest(word, words, n);
	if (hint)
		perr(p, word->loc, "unknown event or condition '%.*s(...)'; did you mean '%s'?",
		     (int)word->len, word->text, hint);
	else
		perr(p, word->loc,
		     "unknown event or condition '%.*s(...)': function calls are not "
		     "supported; events are %sconditions ended, in, and proc(T)",
		     (int)word->len, word->text, events);
}

/* WORD(...): a condition; the current token is the '('. */
static struct expr *parse_call(struct parser *p, const struct token *word)
{
	static const struct {
		const char *word;
		enum expr_kind kind;
	} calls[] = {{"ended", E_ENDED}, {"in", E_IN}, {"proc", E_PROC}};
	size_t i = 0, n = sizeof(calls) / sizeof(calls[0]);
	if (tok_is(word, "choose"))
		return parse_choose(p, word);
	while (i < n && !tok_is(word, calls[i].word))
		i++;
	if (i == n) {
		unknown_call(p, word);
		return NULL;
	}
	struct src_loc open = p->tok.loc;
	struct expr *e = new_expr(p, calls[i].kind, word->loc);
	bool ok = false;
	if (!e)
		return NULL;
	advance(p);
	if (e->kind == E_ENDED)
		ok = (e->name = expect_word(p, "ended(...) expects a thread name", false));
	else if (e->kind == E_PROC)
		ok = (e->name = expect_word(p, "proc(...) expects a thread name", false));
	else
		ok = parse_in_args(p, e, open);
	if (!ok || !expect_close(p, ')', open))
		goto fail;
	return e;
fail:
	expr_free(e);
	return NULL;
}

/* An identifier in expression position. */
static struct expr *parse_word(struct parser *p)
{
	struct token word = p->tok;
	if (tok_is(&word, "true") || tok_is(&word, "false")) {
		struct expr *e = new_expr(p, E_INT, word.loc);
		if (e)
			e->ival = tok_is(&word, "true");
		advance(p);
		return e;
	}
	if (is_keyword(&word)) {
		perr(p, word.loc, "expected an expression, found keyword %s", found(p));
		return NULL;
	}
	struct expr *e = name_expr(p, E_NAME, word.loc);
	if (!e)
		return NULL;
	advance(p);
	/* The word of an atom whose argument is required is, without one, a
	 * name: `enter` may be a program's variable. */
	const struct atom_syntax *a = atom_named(p, &word);
	if (a && (a->arg == ATOM_ARG_NONE || a->arg_optional || p->tok.kind == '(')) {
		expr_free(e);
		return parse_atom(p, a, &word);
	}
	if (p->tok.kind == '(') {
		expr_free(e);
		return parse_call(p, &word);
	}
	if (tok_is(&word, "return")) {
		perr(p, word.loc, "'return' needs a function: 'return(F)'");
		expr_free(e);
		return NULL;
	}
	return e;
}

static struct expr *parse_primary(struct parser *p)
{
	struct token t = p->tok;
	if (t.kind == T_INT) {
		struct expr *e = new_expr(p, E_INT, t.loc);
		if (e)
			e->ival = t.ival;
		advance(p);
		return e;
	}
	if (t.kind == T_IDENT)
		return parse_word(p);
	if (t.kind == '(') {
		advance(p);
		struct expr *e = parse_expr(p);
		if (e && !expect_close(p, ')', t.loc)) {
			expr_free(e);
			return NULL;
		}
		return e;
	}
	if (t.kind == T_DURATION)
		perr(p, t.loc, "a duration such as %s is only allowed after 'timeout'", found(p));
	else
		perr(p, t.loc, "expected an expression, found %s", found(p));
	return NULL;
}

/* One postfix step (.name, ->name, [index]) applied to *lhs. */
static bool parse_postfix_step(struct parser *p, struct expr **lhs)
{
	struct token op = p->tok;
	struct expr *e = new_expr(p,
				  op.kind == '['   ? E_INDEX
				  : op.kind == '.' ? E_MEMBER
						   : E_ARROW,
				  (*lhs)->loc);
	if (!e)
		return false;
	e->lhs = *lhs;
	*lhs = e;
	advance(p);
	if (op.kind == '[') {
		e->rhs = parse_expr(p);
		return e->rhs && expect_close(p, ']', op.loc);
	}
	e->name = expect_word(p,
			      op.kind == '.' ? "expected a field name after '.'"
					     : "expected a field name after '->'",
			      true);
	return e->name != NULL;
}

/* Each step is a level of nesting: a.b.c is a left-deep tree, walked by
 * recursion. */
static struct expr *parse_postfix(struct parser *p)
{
	struct expr *e = parse_primary(p);
	int steps = 0;
	if (!e || e->kind > E_INDEX) /* no postfix on conditions and events */
		return e;
	while (p->tok.kind == '.' || p->tok.kind == T_ARROW || p->tok.kind == '[') {
		steps++;
		if (!nest(p, p->tok.loc) || !parse_postfix_step(p, &e)) {
			expr_free(e);
			e = NULL;
			break;
		}
	}
	p->nesting -= steps;
	return e;
}

static struct expr *parse_unary(struct parser *p)
{
	struct token op = p->tok;
	if (op.kind != '-' && op.kind != '!' && op.kind != '~' && op.kind != '*' && op.kind != '&')
		return parse_postfix(p);
	struct expr *e = NULL;
	if (nest(p, op.loc))
		e = new_expr(p, E_UNARY, op.loc);
	if (e) {
		e->op = op.kind;
		advance(p);
		e->lhs = parse_unary(p);
		if (!e->lhs) {
			free(e);
			e = NULL;
		}
	}
	p->nesting--;
	return e;
}

int lang_binary_prec(int kind)
{
	switch (kind) {
	case T_OROR:
		return 1;
	case T_ANDAND:
		return 2;
	case '|':
		return 3;
	case '^':
		return 4;
	case '&':
		return 5;
	case T_EQ:
	case T_NE:
		return 6;
	case '<':
	case '>':
	case T_LE:
	case T_GE:
		return 7;
	case T_SHL:
	case T_SHR:
		return 8;
	case '+':
	case '-':
		return 9;
	case '*':
	case '/':
	case '%':
		return 10;
	default:
		return 0;
	}
}

/* Precedence climbing.  A chain of operators is built by the loop, left-deep
 * ((a + b) + c), and linked upwards (->up) for walks that iterate along it;
 * the recursion for a right operand is bounded by the number of precedence
 * levels, since each one climbs at least one. */
static struct expr *parse_binary(struct parser *p, int min_prec)
{
	struct expr *lhs = parse_unary(p);
	if (!lhs)
		goto fail;
	for (;;) {
		int prec = lang_binary_prec(p->tok.kind);
		if (p->tok.kind == '=') {
			perr(p, p->tok.loc, "'=' is assignment; use '==' to compare");
			goto fail;
		}
		if (prec == 0 || prec < min_prec)
			break;
		struct expr *e = new_expr(p, E_BINARY, lhs->loc);
		if (!e)
			goto fail;
		e->op = p->tok.kind;
		e->lhs = lhs;
		lhs->up = e;
		lhs = e;
		advance(p);
		if (!(e->rhs = parse_binary(p, prec + 1)))
			goto fail;
	}
	return lhs;
fail:
	expr_free(lhs);
	return NULL;
}

/* A whole expression, and a level of nesting: every parenthesised,
 * bracketed or argument sub-expression comes through here. */
static struct expr *parse_expr(struct parser *p)
{
	struct expr *e = NULL;
	if (nest(p, p->tok.loc))
		e = parse_binary(p, 1);
	p->nesting--;
	return e;
}

/* A predicate or condition that must be present: `what` says after what. */
static struct expr *parse_required_expr(struct parser *p, const char *what)
{
	if (at_stmt_end(p)) {
		perr(p, p->tok.loc, "expected %s, found %s", what, found(p));
		return NULL;
	}
	return parse_expr(p);
}

/* ---- statements ------------------------------------------------------- */

static struct stmt *parse_stmts(struct parser *p, bool in_block, struct src_loc open);

static void stmt_free(struct stmt *s)
{
	while (s) {
		struct stmt *next = s->next;
		for (int i = 0; i < s->n_names; i++)
			free(s->names[i]);
		free(s->names);
		free(s->name_locs);
		expr_free(s->pred);
		expr_free(s->cond);
		free(s->target);
		for (int i = 0; i < s->nchoices; i++)
			free(s->choices[i]);
		free(s->choices);
		free(s->choice_locs);
		expr_free(s->lo);
		expr_free(s->hi);
		stmt_free(s->body);
		stmt_free(s->else_body);
		free(s);
		s = next;
	}
}

static struct stmt *new_stmt(struct parser *p, enum stmt_kind kind)
{
	struct stmt *s = calloc(1, sizeof(*s));
	if (!s) {
		perr(p, p->tok.loc, "out of memory");
		return NULL;
	}
	s->kind = kind;
	s->loc = p->tok.loc;
	return s;
}

static bool add_name(struct parser *p, struct stmt *s)
{
	for (int i = 0; i < s->n_names; i++) {
		if (strlen(s->names[i]) == p->tok.len &&
		    !memcmp(s->names[i], p->tok.text, p->tok.len)) {
			perr(p, p->tok.loc, "thread '%s' is listed twice", s->names[i]);
			return false;
		}
	}
	char **names = realloc(s->names, (size_t)(s->n_names + 1) * sizeof(*names));
	if (names)
		s->names = names;
	struct src_loc *locs = realloc(s->name_locs, (size_t)(s->n_names + 1) * sizeof(*locs));
	if (locs)
		s->name_locs = locs;
	if (!names || !locs) {
		perr(p, p->tok.loc, "out of memory");
		return false;
	}
	if (!(s->names[s->n_names] = tok_strdup(p, &p->tok)))
		return false;
	s->name_locs[s->n_names++] = p->tok.loc;
	advance(p);
	return true;
}

/* NAME {, NAME} */
static bool parse_names(struct parser *p, struct stmt *s)
{
	for (;;) {
		if (p->tok.kind != T_IDENT || is_keyword(&p->tok)) {
			perr(p, p->tok.loc, "thread list expects a name, found %s", found(p));
			return false;
		}
		if (!add_name(p, s))
			return false;
		if (p->tok.kind != ',')
			return true;
		advance(p);
	}
}

/* After `wait`: N distinct PRED | any PRED. */
static bool parse_wait_rest(struct parser *p, struct stmt *s)
{
	struct token count = p->tok;
	if (count.kind == T_INT) {
		if (count.ival < 1) {
			perr(p, count.loc, "'wait' needs a count of at least 1");
			return false;
		}
		s->count = count.ival;
		advance(p);
		s->distinct = tok_is(&p->tok, "distinct");
		if (s->distinct) {
			advance(p);
			s->processes = tok_is(&p->tok, "processes");
			if (s->processes)
				advance(p);
		} else if (s->count > 1) {
			perr(p, p->tok.loc,
			     "expected 'distinct' after 'wait %lld': 'wait N distinct PRED', found "
			     "%s",
			     (long long)s->count, found(p));
			return false;
		}
	} else if (tok_is(&count, "any")) {
		s->count = 1;
		advance(p);
		if (tok_is(&p->tok, "distinct")) {
			perr(p, p->tok.loc,
			     "'wait any' waits for one thread: drop 'distinct', or "
			     "write 'wait N distinct PRED'");
			return false;
		}
	} else {
		perr(p, count.loc,
		     "'wait' needs a count: 'wait N distinct PRED' or 'wait any PRED'");
		return false;
	}
	if (s->n_names > 0 && s->n_names != s->count) {
		perr(p, count.loc, "the thread list has %d name%s but 'wait' binds %lld thread%s",
		     s->n_names, s->n_names == 1 ? "" : "s", (long long)s->count,
		     s->count == 1 ? "" : "s");
		return false;
	}
	s->pred = parse_required_expr(p, "a predicate after 'wait'");
	return s->pred != NULL;
}

static bool is_ident_char_or_dot(char c)
{
	return c == '.' || c == '_' || isalnum((unsigned char)c);
}

/* The source text from token t on that a thread name could span: letters,
 * digits, '_' and '.', with no blanks (the lexer splits p1.t3 into three
 * tokens: p1 '.' t3). */
static size_t thread_name_len(const struct token *t)
{
	size_t n = 0;
	while (is_ident_char_or_dot(t->text[n]))
		n++;
	return n;
}

/* After "thread NAMES =": a word glued to a '.', or one such as p1, is meant
 * as a stable thread name (p1.t3) rather than as a misspelt 'wait'. */
static bool looks_like_thread_name(const struct token *t)
{
	size_t n = thread_name_len(t);
	return memchr(t->text, '.', n) ||
	       (t->len >= 2 && t->text[0] == 'p' && t->text[1] >= '0' && t->text[1] <= '9');
}

/* A positive decimal without leading zeros at s; returns its length or 0. */
static size_t index_len(const char *s, size_t max)
{
	size_t n = 0;
	if (max == 0 || s[0] < '1' || s[0] > '9')
		return 0;
	while (n < max && s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

/* pN.tM with N, M positive and without leading zeros, as the tracer names
 * threads (tracer/task.c). */
static bool valid_thread_name(const char *s, size_t len)
{
	size_t i = 0, n;
	if (len < 1 || s[i++] != 'p' || !(n = index_len(s + i, len - i)))
		return false;
	i += n;
	if (i + 2 > len || s[i] != '.' || s[i + 1] != 't')
		return false;
	i += 2;
	n = index_len(s + i, len - i);
	return n && i + n == len;
}

/* thread T = p1.t3 ; the current token is the first part of the name. */
static bool parse_bind(struct parser *p, struct stmt *s)
{
	struct token name = p->tok;
	size_t len = thread_name_len(&name);
	if (!valid_thread_name(name.text, len)) {
		perr(p, name.loc, "expected 'wait' or a thread name such as p1.t3 after '='");
		return false;
	}
	if (s->n_names != 1) {
		perr(p, s->name_locs[1], "a thread name binds one thread: 'thread %s = %.*s'",
		     s->names[0], (int)len, name.text);
		return false;
	}
	s->kind = S_BIND;
	if (!(s->target = strndup(name.text, len))) {
		perr(p, name.loc, "out of memory");
		return false;
	}
	for (int i = 0; i < 3; i++) /* pN '.' tM */
		advance(p);
	return true;
}

/* One thread variable of thread T = choose(A, B, C). */
static bool add_choice(struct parser *p, struct stmt *s)
{
	if (p->tok.kind != T_IDENT || is_keyword(&p->tok)) {
		perr(p, p->tok.loc, "choose(...) of threads takes thread names, found %s",
		     found(p));
		return false;
	}
	for (int i = 0; i < s->nchoices; i++) {
		if (strlen(s->choices[i]) == p->tok.len &&
		    !memcmp(s->choices[i], p->tok.text, p->tok.len)) {
			perr(p, p->tok.loc, "thread '%s' is listed twice", s->choices[i]);
			return false;
		}
	}
	char **names = realloc(s->choices, (size_t)(s->nchoices + 1) * sizeof(*names));
	if (names)
		s->choices = names;
	struct src_loc *locs = realloc(s->choice_locs, (size_t)(s->nchoices + 1) * sizeof(*locs));
	if (locs)
		s->choice_locs = locs;
	if (!names || !locs) {
		perr(p, p->tok.loc, "out of memory");
		return false;
	}
	if (!(s->choices[s->nchoices] = tok_strdup(p, &p->tok)))
		return false;
	s->choice_locs[s->nchoices++] = p->tok.loc;
	advance(p);
	return true;
}

/* thread T = choose(A, B, C) ; the current token is `choose`. */
static bool parse_choose_thread(struct parser *p, struct stmt *s)
{
	struct src_loc word = p->tok.loc;
	advance(p);
	if (p->tok.kind != '(') {
		perr(p, p->tok.loc,
		     "expected '(' after 'choose': 'thread T = choose(A, B)', found %s", found(p));
		return false;
	}
	if (s->n_names != 1) {
		perr(p, s->name_locs[1], "a choice binds one thread: 'thread T = choose(A, B)'");
		return false;
	}
	s->kind = S_CHOOSE_THREAD;
	struct src_loc open = p->tok.loc;
	advance(p);
	while (p->tok.kind != ')' || s->nchoices > 0) {
		if (!add_choice(p, s))
			return false;
		if (p->tok.kind != ',')
			break;
		advance(p);
	}
	if (p->tok.kind == ')' && s->nchoices < 2) {
		perr(p, word, "choose needs at least two threads");
		return false;
	}
	return expect_close(p, ')', open);
}

static bool parse_thread(struct parser *p, struct stmt *s)
{
	advance(p);
	if (!parse_names(p, s))
		return false;
	if (p->tok.kind != '=') {
		perr(p, p->tok.loc, "expected '=' after thread list, found %s", found(p));
		return false;
	}
	advance(p);
	if (tok_is(&p->tok, "choose"))
		return parse_choose_thread(p, s);
	if (!tok_is(&p->tok, "wait") && p->tok.kind == T_IDENT && looks_like_thread_name(&p->tok))
		return parse_bind(p, s);
	if (!tok_is(&p->tok, "wait")) {
		static const char *const binders[] = {"wait", "choose"};
		const char *hint = p->tok.kind == T_IDENT ? suggest(&p->tok, binders, 2) : NULL;

		if (hint)
			perr(p, p->tok.loc,
			     "'thread' declarations must have '= wait ...', found %s; "
			     "did you mean '%s'?",
			     found(p), hint);
		else
			perr(p, p->tok.loc,
			     "'thread' declarations must have '= wait ...', found %s", found(p));
		return false;
	}
	advance(p);
	return parse_wait_rest(p, s);
}

static bool parse_run(struct parser *p, struct stmt *s)
{
	advance(p);
	if (!parse_names(p, s))
		return false;
	if (!tok_is(&p->tok, "until")) {
		perr(p, p->tok.loc, "expected 'until' after thread list, found %s", found(p));
		return false;
	}
	advance(p);
	s->pred = parse_required_expr(p, "a predicate after 'until'");
	return s->pred != NULL;
}

/* { stmts } ; newlines before the '{' are allowed. */
static bool parse_block(struct parser *p, struct stmt **body, const char *owner)
{
	skip_newlines(p);
	if (p->tok.kind != '{') {
		perr(p, p->tok.loc, "expected '{' to open the body of '%s', found %s", owner,
		     found(p));
		return false;
	}
	struct src_loc open = p->tok.loc;
	advance(p);
	*body = parse_stmts(p, true, open);
	if (p->failed)
		return false;
	advance(p); /* the '}' */
	return true;
}

/* ( cond ) */
static bool parse_paren_cond(struct parser *p, struct stmt *s, const char *owner)
{
	if (p->tok.kind != '(') {
		perr(p, p->tok.loc, "expected '(' after '%s', found %s", owner, found(p));
		return false;
	}
	struct src_loc open = p->tok.loc;
	advance(p);
	if (p->tok.kind == ')') {
		perr(p, p->tok.loc, "expected a condition inside '%s (...)', found ')'", owner);
		return false;
	}
	s->cond = parse_expr(p);
	return s->cond && expect_close(p, ')', open);
}

/* True if the next non-newline token is `else`; consumes the newlines only
 * then, so that the statement terminator is still there otherwise. */
static bool else_follows(struct parser *p)
{
	if (tok_is(&p->tok, "else"))
		return true;
	if (p->tok.kind != T_NEWLINE)
		return false;
	struct lexer copy = p->lx;
	struct token t = lexer_next(&copy);
	while (t.kind == T_NEWLINE)
		t = lexer_next(&copy);
	if (!tok_is(&t, "else"))
		return false;
	p->lx = copy;
	p->tok = t;
	return true;
}

/* Is the token after the current one `wait` (x = wait ...: a binding
 * that lacks its `thread`)? */
static bool next_is_wait(struct parser *p)
{
	struct lexer copy = p->lx;
	struct token t = lexer_next(&copy);

	return tok_is(&t, "wait");
}

static struct stmt *parse_stmt(struct parser *p);

static bool parse_if(struct parser *p, struct stmt *s)
{
	advance(p);
	if (!parse_paren_cond(p, s, "if") || !parse_block(p, &s->body, "if"))
		return false;
	if (!else_follows(p))
		return true;
	advance(p);
	skip_newlines(p);
	if (tok_is(&p->tok, "if")) {
		s->else_body = parse_stmt(p);
		return s->else_body != NULL;
	}
	return parse_block(p, &s->else_body, "else");
}

/* True if the current token is the '(' of `(*)`. */
static bool star_follows(const struct parser *p)
{
	struct lexer copy = p->lx;
	if (p->tok.kind != '(' || lexer_next(&copy).kind != '*')
		return false;
	return lexer_next(&copy).kind == ')';
}

/* `(*)` is `(choose(true, false))`, marked with op '*' so that it prints back
 * the way it was written. */
static bool parse_star_cond(struct parser *p, struct stmt *s)
{
	advance(p); /* '(' */
	struct src_loc star = p->tok.loc;
	if (!(s->cond = new_expr(p, E_CHOOSE, star)))
		return false;
	s->cond->op = '*';
	for (int v = 1; v >= 0; v--) {
		struct expr *e = new_expr(p, E_INT, star);
		if (!e)
			return false;
		e->ival = v;
		if (!add_arg(p, s->cond, e))
			return false;
	}
	advance(p); /* '*' */
	advance(p); /* ')' */
	return true;
}

static bool parse_while(struct parser *p, struct stmt *s)
{
	advance(p);
	if (star_follows(p)) {
		if (!parse_star_cond(p, s))
			return false;
	} else if (!parse_paren_cond(p, s, "while")) {
		return false;
	}
	return parse_block(p, &s->body, "while");
}

static bool parse_repeat(struct parser *p, struct stmt *s)
{
	advance(p);
	if (p->tok.kind != T_INT) {
		perr(p, p->tok.loc, "'repeat' needs a count: 'repeat N { ... }', found %s",
		     found(p));
		return false;
	}
	s->count = p->tok.ival;
	advance(p);
	return parse_block(p, &s->body, "repeat");
}

/* assert C, assume C (also written assume(C): a parenthesised C). */
static bool parse_assert(struct parser *p, struct stmt *s)
{
	char what[64];
	snprintf(what, sizeof(what), "a condition after '%s'", lang_stmt_word(s));
	advance(p);
	s->cond = parse_required_expr(p, what);
	return s->cond != NULL;
}

/* The variable of let and for. */
static bool parse_var(struct parser *p, struct stmt *s, const char *usage)
{
	if (p->tok.kind != T_IDENT || is_keyword(&p->tok)) {
		perr(p, p->tok.loc, "'%s' needs a variable name: '%s', found %s", lang_stmt_word(s),
		     usage, found(p));
		return false;
	}
	return add_name(p, s);
}

/* let x = EXPR */
static bool parse_let(struct parser *p, struct stmt *s)
{
	advance(p);
	if (!parse_var(p, s, "let x = EXPR"))
		return false;
	if (p->tok.kind != '=') {
		perr(p, p->tok.loc, "expected '=' after 'let %s', found %s", s->names[0], found(p));
		return false;
	}
	advance(p);
	s->cond = parse_required_expr(p, "a value after '='");
	return s->cond != NULL;
}

/* One bound of LO..HI; stops before `..` and before the '{' of the body. */
static struct expr *parse_bound(struct parser *p)
{
	if (at_stmt_end(p) || p->tok.kind == '{' || p->tok.kind == T_DOTDOT) {
		perr(p, p->tok.loc, "expected LO..HI range, found %s", found(p));
		return NULL;
	}
	return parse_expr(p);
}

/* for i in LO..HI { body } */
static bool parse_for(struct parser *p, struct stmt *s)
{
	advance(p);
	if (!parse_var(p, s, "for i in LO..HI { ... }"))
		return false;
	if (!tok_is(&p->tok, "in")) {
		perr(p, p->tok.loc, "expected 'in' after the loop variable, found %s", found(p));
		return false;
	}
	advance(p);
	if (!(s->lo = parse_bound(p)))
		return false;
	if (p->tok.kind != T_DOTDOT) {
		perr(p, p->tok.loc, "expected LO..HI range, found %s", found(p));
		return false;
	}
	advance(p);
	if (!(s->hi = parse_bound(p)))
		return false;
	return parse_block(p, &s->body, "for");
}

static bool parse_release(struct parser *p, struct stmt *s)
{
	advance(p);
	if (tok_is(&p->tok, "all")) {
		s->all = true;
		advance(p);
		return true;
	}
	if (at_stmt_end(p)) {
		perr(p, p->tok.loc, "'release' needs threads: 'release A, B' or 'release all'");
		return false;
	}
	return parse_names(p, s);
}

/* The one thread of step, next and finish. */
static bool parse_one_thread(struct parser *p, struct stmt *s)
{
	advance(p);
	if (p->tok.kind != T_IDENT || is_keyword(&p->tok)) {
		perr(p, p->tok.loc, "'%s' needs a thread name, found %s", lang_stmt_word(s),
		     found(p));
		return false;
	}
	if (!add_name(p, s))
		return false;
	if (p->tok.kind == ',') {
		perr(p, p->tok.loc, "'%s' takes one thread, found ','", lang_stmt_word(s));
		return false;
	}
	return true;
}

#define MAX_STEP 1000000

/* step A [N] */
static bool parse_step(struct parser *p, struct stmt *s)
{
	if (!parse_one_thread(p, s))
		return false;
	s->count = 1;
	if (at_stmt_end(p))
		return true;
	if (p->tok.kind == T_INT && p->tok.ival > MAX_STEP) {
		perr(p, p->tok.loc, "'step' takes a positive instruction count up to %d, found %s",
		     MAX_STEP, found(p));
		return false;
	}
	if (p->tok.kind != T_INT || p->tok.ival < 1) {
		perr(p, p->tok.loc, "'step' takes a positive instruction count, found %s",
		     found(p));
		return false;
	}
	s->count = p->tok.ival;
	advance(p);
	return true;
}

/* next A, finish A */
static bool parse_next_finish(struct parser *p, struct stmt *s)
{
	return parse_one_thread(p, s);
}

/* hold A, B */
static bool parse_hold(struct parser *p, struct stmt *s)
{
	advance(p);
	if (p->tok.kind != T_IDENT || is_keyword(&p->tok)) {
		perr(p, p->tok.loc, "'hold' needs thread names, found %s", found(p));
		return false;
	}
	return parse_names(p, s);
}

/* serial: a bare word */
static bool parse_serial(struct parser *p, struct stmt *s)
{
	(void)s;
	advance(p);
	return true;
}

static bool parse_timeout(struct parser *p, struct stmt *s)
{
	advance(p);
	if (p->tok.kind == T_INT) {
		/* the number as written, with a fraction the lexer left as 1 '.' 5 */
		int n = (int)(p->tok.len + strspn(p->tok.text + p->tok.len, ".0123456789"));
		const char *t = p->tok.text;

		if (t[n - 1] == '.') { /* "1.s": its unit is there, its fraction is not */
			perr(p, p->tok.loc,
			     "bad duration '%.*s%.*s': a point needs a digit after it, e.g. "
			     "'%.*s5s'",
			     n, t, (int)strspn(t + n, "mshMSH"), t + n, n, t);
			return false;
		}
		perr(p, p->tok.loc, "'timeout' needs a unit: '%.*sms', '%.*ss', '%.*sm' or '%.*sh'",
		     n, t, n, t, n, t, n, t);
		return false;
	}
	if (p->tok.kind != T_DURATION) {
		perr(p, p->tok.loc, "'timeout' needs a duration such as '2s' or '500ms', found %s",
		     found(p));
		return false;
	}
	s->timeout_ms = p->tok.ival;
	advance(p);
	return true;
}

static const struct {
	const char *word;
	enum stmt_kind kind;
	bool (*parse)(struct parser *, struct stmt *);
} stmt_table[] = {
    {"thread", S_WAIT, parse_thread},
    {"run", S_RUN, parse_run},
    {"if", S_IF, parse_if},
    {"while", S_WHILE, parse_while},
    {"repeat", S_REPEAT, parse_repeat},
    {"assert", S_ASSERT, parse_assert},
    {"release", S_RELEASE, parse_release},
    {"timeout", S_TIMEOUT, parse_timeout},
    {"step", S_STEP, parse_step},
    {"next", S_NEXT, parse_next_finish},
    {"finish", S_FINISH, parse_next_finish},
    {"hold", S_HOLD, parse_hold},
    {"assume", S_ASSUME, parse_assert},
    {"let", S_LET, parse_let},
    {"for", S_FOR, parse_for},
    {"serial", S_SERIAL, parse_serial},
};

static void unknown_stmt(struct parser *p)
{
	struct token word = p->tok;
	if (word.kind != T_IDENT) {
		perr(p, word.loc, "expected a statement, found %s", found(p));
		return;
	}
	if (tok_is(&word, "else")) {
		perr(p, word.loc, "'else' without 'if'");
		return;
	}
	if (is_keyword(&word)) {
		perr(p, word.loc, "expected a statement, found keyword %s", found(p));
		return;
	}
	const char *hint =
	    suggest(&word, stmt_keywords, sizeof(stmt_keywords) / sizeof(stmt_keywords[0]));
	if (hint) {
		perr(p, word.loc, "unknown statement '%.*s'; did you mean '%s'?", (int)word.len,
		     word.text, hint);
		return;
	}
	advance(p);
	if (p->tok.kind == '=' && !next_is_wait(p))
		perr(p, word.loc,
		     "unknown statement '%.*s'; to give it a value write 'let %.*s = ...'",
		     (int)word.len, word.text, (int)word.len, word.text);
	else if (p->tok.kind == '=' || p->tok.kind == ',')
		perr(p, word.loc,
		     "unknown statement '%.*s'; to bind threads write 'thread %.*s = wait ...'",
		     (int)word.len, word.text, (int)word.len, word.text);
	else
		perr(p, word.loc, "unknown statement '%.*s'", (int)word.len, word.text);
}

static struct stmt *parse_stmt(struct parser *p)
{
	size_t i = 0, n = sizeof(stmt_table) / sizeof(stmt_table[0]);
	struct stmt *s = NULL;
	if (++p->stmt_nesting > MAX_BLOCKS) {
		perr(p, p->tok.loc,
		     "statements nested deeper than %d levels (blocks, and each 'else if')",
		     MAX_BLOCKS);
		goto out;
	}
	if (tok_is(&p->tok, "wait")) {
		if ((s = new_stmt(p, S_WAIT))) {
			advance(p);
			if (!parse_wait_rest(p, s))
				goto fail;
		}
		goto out;
	}
	while (i < n && !tok_is(&p->tok, stmt_table[i].word))
		i++;
	if (i == n) {
		unknown_stmt(p);
		goto out;
	}
	if ((s = new_stmt(p, stmt_table[i].kind)) && !stmt_table[i].parse(p, s))
		goto fail;
	goto out;
fail:
	stmt_free(s);
	s = NULL;
out:
	p->stmt_nesting--;
	return s;
}

const char *lang_stmt_word(const struct stmt *s)
{
	static const char *const words[] = {
	    [S_TIMEOUT] = "timeout", [S_WAIT] = "wait",
	    [S_RUN] = "run",	     [S_IF] = "if",
	    [S_WHILE] = "while",     [S_REPEAT] = "repeat",
	    [S_ASSERT] = "assert",   [S_RELEASE] = "release",
	    [S_STEP] = "step",	     [S_NEXT] = "next",
	    [S_FINISH] = "finish",   [S_HOLD] = "hold",
	    [S_BIND] = "thread",     [S_CHOOSE_THREAD] = "thread",
	    [S_ASSUME] = "assume",   [S_LET] = "let",
	    [S_FOR] = "for",	     [S_SERIAL] = "serial",
	};
	return words[s->kind];
}

/* After a statement: newline, ';', '}' or end of file. */
static bool stmt_end(struct parser *p, const struct stmt *s)
{
	if (at_stmt_end(p))
		return true;
	if (s->kind == S_IF || s->kind == S_WHILE || s->kind == S_REPEAT || s->kind == S_FOR)
		perr(p, p->tok.loc, "expected a new line or ';' after the '}' of '%s', found %s",
		     lang_stmt_word(s), found(p));
	else
		perr(p, p->tok.loc, "expected end of '%s' statement, found %s", lang_stmt_word(s),
		     found(p));
	return false;
}

/* Statements up to '}' (in_block, left as the current token) or EOF. */
static struct stmt *parse_stmts(struct parser *p, bool in_block, struct src_loc open)
{
	struct stmt *head = NULL, **tail = &head;
	for (;;) {
		while (p->tok.kind == T_NEWLINE || p->tok.kind == ';')
			advance(p);
		if (p->failed)
			goto fail;
		if (p->tok.kind == T_EOF && in_block) {
			perr(p, p->tok.loc, "unterminated block: '{' opened at %d:%d has no '}'",
			     open.line, open.col);
			goto fail;
		}
		if (p->tok.kind == T_EOF || (p->tok.kind == '}' && in_block))
			return head;
		if (p->tok.kind == '}') {
			perr(p, p->tok.loc, "'}' without a matching '{'");
			goto fail;
		}
		struct stmt *s = parse_stmt(p);
		if (!s)
			goto fail;
		*tail = s;
		tail = &s->next;
		if (!stmt_end(p, s))
			goto fail;
	}
fail:
	stmt_free(head);
	return NULL;
}

/* ---- entry points ----------------------------------------------------- */

/* "# run: ARGS" on the first line -> "ARGS" (trimmed), else NULL. */
static char *run_comment(const char *text)
{
	const char *s = text;
	if (*s++ != '#')
		return NULL;
	s += strspn(s, " \t");
	if (strncmp(s, "run:", 4) != 0)
		return NULL;
	s += 4;
	s += strspn(s, " \t");
	size_t len = strcspn(s, "\n");
	while (len > 0 && strchr(" \t\r", s[len - 1]))
		len--;
	return len ? strndup(s, len) : NULL;
}

void schedule_free(struct schedule *s)
{
	if (!s)
		return;
	stmt_free(s->body);
	free(s->path);
	free(s->text);
	free(s->run_comment);
	free(s);
}

struct schedule *schedule_parse(const char *path, const char *text, const struct atom_table *atoms,
				char *err, size_t errlen)
{
	struct parser p = {
	    .path = path, .text = text, .atoms = atoms, .err = err, .errlen = errlen};
	struct src_loc none = {1, 1};
	struct schedule *s = calloc(1, sizeof(*s));
	assert(path && text && atoms);
	if (err && errlen)
		err[0] = '\0';
	if (!s || !(s->path = strdup(path)) || !(s->text = strdup(text))) {
		perr(&p, none, "out of memory");
		goto fail;
	}
	p.text = s->text;
	lexer_init(&p.lx, s->text);
	advance(&p);
	s->body = parse_stmts(&p, false, none);
	if (p.failed)
		goto fail;
	s->run_comment = run_comment(s->text);
	return s;
fail:
	schedule_free(s);
	return NULL;
}

/* The largest schedule read: far beyond any written by hand or saved by
 * the shell or a search, and small enough that reading /dev/zero or a
 * wrong file by mistake ends at once instead of growing memory. */
#define SCHEDULE_MAX_BYTES (16u << 20)

/* Reads a whole file; NULL with errno set on failure (EINVAL: a NUL byte,
 * EFBIG: longer than SCHEDULE_MAX_BYTES, found while reading). */
static char *read_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0, n, total = 0;
	char chunk[4096];
	int saved = 0;
	FILE *mem = NULL, *f = fopen(path, "r");
	if (!f)
		return NULL;
	if (!(mem = open_memstream(&buf, &len)))
		goto fail;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		total += n;
		if (total > SCHEDULE_MAX_BYTES || memchr(chunk, 0, n)) {
			errno = total > SCHEDULE_MAX_BYTES ? EFBIG : EINVAL;
			goto fail;
		}
		fwrite(chunk, 1, n, mem);
	}
	if (ferror(f))
		goto fail;
	if (fclose(mem) != 0) {
		mem = NULL;
		goto fail;
	}
	mem = NULL;
	fclose(f);
	return buf;
fail:
	saved = errno ? errno : EIO;
	if (mem)
		fclose(mem);
	free(buf);
	fclose(f);
	errno = saved;
	return NULL;
}

struct schedule *schedule_load(const char *path, const struct atom_table *atoms, char *err,
			       size_t errlen)
{
	char *text = read_file(path);
	if (!text) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read schedule: %s\n", path,
				 errno == EINVAL  ? "file contains a NUL byte"
				 : errno == EFBIG ? "it is longer than 16 MiB, the limit for a "
						    "schedule (is it the right file?)"
						  : strerror(errno));
		return NULL;
	}
	/* a UTF-8 byte order mark, which some Windows editors write first */
	static const char bom[] = "\xef\xbb\xbf";
	if (strncmp(text, bom, strlen(bom)) == 0)
		memmove(text, text + strlen(bom), strlen(text + strlen(bom)) + 1);
	struct schedule *s = schedule_parse(path, text, atoms, err, errlen);
	free(text);
	return s;
}
