/*
 * print.c: everything lang writes for people: diagnostics with a caret
 * (schedule_diag, and the parser's through lang_diag_v), expressions as
 * C-like text (expr_format, for traces and messages) and whole schedules
 * (schedule_dump, which parses back to the same tree).
 *
 * Text goes through one small sink (struct outbuf) that writes into a
 * caller's buffer, truncating, or to a FILE, so that the same printer
 * serves messages and dumps.  Like every walk over a tree, the printer
 * iterates along chains of binary operations (ast.h).
 */
#include "lang/internal.h"

#include <assert.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- diagnostics ------------------------------------------------------ */

/* Text into buf[len] (truncated, always terminated), or to file if set. */
struct outbuf {
	char *buf;
	size_t len, used;
	FILE *file;
	bool minimal;	       /* expressions with only the parentheses they need */
	const int64_t *locals; /* let/for variables' values, printed for their names */
};

static void out_printf(struct outbuf *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void out_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	if (o->file) {
		va_start(ap, fmt);
		vfprintf(o->file, fmt, ap);
		va_end(ap);
		return;
	}
	if (o->used >= o->len)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used = o->used + (size_t)n < o->len ? o->used + (size_t)n : o->len;
}

/* Finds line `line` (1-based) of text; returns its start and sets *len. */
static const char *find_line(const char *text, int line, size_t *len)
{
	const char *s = text;
	for (int i = 1; i < line && s; i++) {
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	if (!s)
		return NULL;
	*len = strcspn(s, "\n");
	if (*len > 0 && s[*len - 1] == '\r')
		(*len)--;
	return s;
}

/* A source line longer than this is shown as an excerpt of this many bytes
 * around the caret, "..." marking what is left out, so that the caret line
 * fits in the caller's buffer however long the line (a generated schedule
 * may have a 100,000-byte condition). */
#define DIAG_WIDTH 160

void lang_diag_v(const char *path, const char *text, struct src_loc loc, char *buf, size_t len,
		 const char *fmt, va_list ap)
{
	struct outbuf o = {buf, len, 0, NULL};
	char msg[512];
	size_t llen = 0, start = 0, end, col = loc.col > 0 ? (size_t)loc.col - 1 : 0;
	if (!buf || !len)
		return;
	buf[0] = '\0';
	vsnprintf(msg, sizeof(msg), fmt, ap);
	out_printf(&o, "%s:%d:%d: error: %s\n", path, loc.line, loc.col, msg);
	const char *src = text ? find_line(text, loc.line, &llen) : NULL;
	if (!src)
		return;
	if (llen > DIAG_WIDTH && col > DIAG_WIDTH / 2)
		start = col - DIAG_WIDTH / 2 < llen - DIAG_WIDTH ? col - DIAG_WIDTH / 2
								 : llen - DIAG_WIDTH;
	end = llen - start > DIAG_WIDTH ? start + DIAG_WIDTH : llen;
	out_printf(&o, "    %s%.*s%s\n    %s", start ? "..." : "", (int)(end - start), src + start,
		   end < llen ? "..." : "", start ? "   " : "");
	for (size_t i = start; i < col; i++)
		out_printf(&o, "%c", i < llen && src[i] == '\t' ? '\t' : ' ');
	out_printf(&o, "^\n");
}

const char *lang_diag_error_word(const char *text)
{
	const char *word = strstr(text, ": error: ");
	int line, col, used = 0;
	const char *p;

	if (!word)
		return NULL;
	/* back to the second colon before it: ":LINE:COL" */
	for (p = word - 1; p > text && *p != ':'; p--)
		;
	for (p = p > text ? p - 1 : p; p > text && *p != ':'; p--)
		;
	if (p > text && sscanf(p, ":%d:%d%n", &line, &col, &used) == 2 && p + used == word)
		return word;
	return NULL;
}

void schedule_diag(const struct schedule *s, struct src_loc loc, char *buf, size_t len,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lang_diag_v(s->path, s->text, loc, buf, len, fmt, ap);
	va_end(ap);
}

/* ---- pretty-printing -------------------------------------------------- */

static void fmt_expr(struct outbuf *o, const struct expr *e, bool top);

static const char *op_text(int op)
{
	static char one[2];
	switch (op) {
	case T_OROR:
		return "||";
	case T_ANDAND:
		return "&&";
	case T_EQ:
		return "==";
	case T_NE:
		return "!=";
	case T_LE:
		return "<=";
	case T_GE:
		return ">=";
	case T_SHL:
		return "<<";
	case T_SHR:
		return ">>";
	default:
		one[0] = (char)op;
		one[1] = '\0';
		return one;
	}
}

/* The operand of a unary operator (of) or of a postfix one (of NULL). */
static void fmt_operand(struct outbuf *o, const struct expr *e, const struct expr *of)
{
	bool wrap = e->kind == E_BINARY || (e->kind == E_UNARY && !(o->minimal && of));
	if (wrap)
		out_printf(o, "(");
	else if (e->kind == E_UNARY && e->op == of->op && (e->op == '-' || e->op == '&'))
		out_printf(o, " "); /* - -a, & &a: not the tokens -- and && */
	fmt_expr(o, e, true);
	if (wrap)
		out_printf(o, ")");
}

/* A function's name, quoted when no identifier spells it. */
static void fmt_function(struct outbuf *o, const char *name)
{
	out_printf(o, lang_is_plain_name(name) ? "%s" : "\"%s\"", name);
}

/* The argument of at(FUNC+0xOFFSET), as lang_at_text writes it. */
static void fmt_at_offset(struct outbuf *o, const char *text)
{
	size_t len = strlen(text) + 16;
	char *buf = malloc(len);

	if (!buf)
		return;
	lang_at_text(buf, len, text);
	out_printf(o, "%s", buf + 2); /* after "at" */
	free(buf);
}

/* An atom prints as written; bare, when its argument is optional and absent. */
static void fmt_atom(struct outbuf *o, const struct expr *e)
{
	out_printf(o, "%s", e->atom->name);
	switch (e->atom->arg) {
	case ATOM_ARG_NONE:
		break;
	case ATOM_ARG_FUNCTION:
		if (e->name) {
			out_printf(o, "(");
			fmt_function(o, e->name);
			out_printf(o, ")");
		}
		break;
	case ATOM_ARG_NAME:
		if (e->name)
			out_printf(o, "(%s)", e->name);
		break;
	case ATOM_ARG_LOCATION:
		if (e->ival == 0) /* at(FUNC+0xOFFSET), quoted as need be */
			fmt_at_offset(o, e->name);
		else
			out_printf(o, "(%s:%lld)", e->name, (long long)e->ival);
		break;
	case ATOM_ARG_LVALUE:
		if (e->lhs) {
			out_printf(o, "(");
			fmt_expr(o, e->lhs, true);
			out_printf(o, ")");
		}
		break;
	case ATOM_ARG_SIGNAL:
		if (e->ival != 0 && sigabbrev_np((int)e->ival))
			out_printf(o, "(SIG%s)", sigabbrev_np((int)e->ival));
		else if (e->ival != 0)
			out_printf(o, "(%lld)", (long long)e->ival);
		break;
	}
}

/* Whether a binary operation b below e on the spine of a chain is wrapped in
 * parentheses: always, fully parenthesised; with minimal ones, when it binds
 * less tightly than the operation it is the left operand of. */
static bool spine_wrapped(const struct outbuf *o, const struct expr *b)
{
	return !o->minimal || lang_binary_prec(b->op) < lang_binary_prec(b->up->op);
}

/* And a right operand: binary operators associate to the left. */
static bool rhs_wrapped(const struct outbuf *o, const struct expr *b)
{
	return b->rhs->kind == E_BINARY &&
	       (!o->minimal || lang_binary_prec(b->rhs->op) <= lang_binary_prec(b->op));
}

/* A chain of binary operations, along its spine (see ast.h); the wrapped
 * operations are nested on the left, so their '(' all come first:
 * ((a + b) + c).  top: e itself is not wrapped. */
static void fmt_chain(struct outbuf *o, const struct expr *e, bool top)
{
	const struct expr *b;
	if (!top)
		out_printf(o, "(");
	for (b = e->lhs; b->kind == E_BINARY; b = b->lhs)
		if (spine_wrapped(o, b))
			out_printf(o, "(");
	b = expr_chain_bottom(e);
	fmt_expr(o, b->lhs, true);
	for (;; b = b->up) {
		assert(b); /* the spine leads back up to e (ast.h) */
		out_printf(o, " %s ", op_text(b->op));
		fmt_expr(o, b->rhs, !rhs_wrapped(o, b));
		if (b == e)
			break;
		if (spine_wrapped(o, b))
			out_printf(o, ")");
	}
	if (!top)
		out_printf(o, ")");
}

static void fmt_expr(struct outbuf *o, const struct expr *e, bool top)
{
	switch (e->kind) {
	case E_INT: /* negative values only come from hex literals */
		out_printf(o, e->ival < 0 ? "0x%llx" : "%lld", (long long)e->ival);
		break;
	case E_NAME:
		if (o->locals && e->ref == REF_LOCAL)
			out_printf(o, o->locals[e->slot] < 0 ? "0x%llx" : "%lld",
				   (long long)o->locals[e->slot]);
		else
			out_printf(o, "%s", e->name);
		break;
	case E_UNARY:
		out_printf(o, "%c", e->op);
		fmt_operand(o, e->lhs, e);
		break;
	case E_BINARY:
		fmt_chain(o, e, top);
		break;
	case E_MEMBER:
	case E_ARROW:
		fmt_operand(o, e->lhs, NULL);
		out_printf(o, "%s%s", e->kind == E_MEMBER ? "." : "->", e->name);
		break;
	case E_INDEX:
		fmt_operand(o, e->lhs, NULL);
		out_printf(o, "[");
		fmt_expr(o, e->rhs, true);
		out_printf(o, "]");
		break;
	case E_CHOOSE:
		out_printf(o, "choose(");
		if (e->nargs == 0) {
			fmt_expr(o, e->lhs, true);
			out_printf(o, "..");
			fmt_expr(o, e->rhs, true);
		}
		for (int i = 0; i < e->nargs; i++) {
			out_printf(o, i ? ", " : "");
			fmt_expr(o, e->args[i], true);
		}
		out_printf(o, ")");
		break;
	case E_ENDED:
		out_printf(o, "ended(%s)", e->name);
		break;
	case E_IN:
		out_printf(o, "in(");
		if (e->name)
			out_printf(o, "%s, ", e->name);
		fmt_function(o, e->func);
		out_printf(o, ")");
		break;
	case E_PROC:
		out_printf(o, "proc(%s)", e->name);
		break;
	case E_EVENT:
		fmt_atom(o, e);
		break;
	}
}

size_t expr_format_bound(const struct expr *e, const int64_t *locals, char *buf, size_t len)
{
	struct outbuf o = {buf, len, 0, NULL, false, locals};
	if (!buf || !len)
		return 0;
	buf[0] = '\0';
	fmt_expr(&o, e, true);
	return o.used < len ? o.used : len - 1;
}

size_t expr_format(const struct expr *e, char *buf, size_t len)
{
	return expr_format_bound(e, NULL, buf, len);
}

static void dump_stmts(FILE *out, const struct stmt *s, int depth);

static void dump_names(FILE *out, const struct stmt *s)
{
	for (int i = 0; i < s->n_names; i++)
		fprintf(out, "%s%s", i ? ", " : "", s->names[i]);
}

/* Whole, however long, and with only the parentheses the source needed: the
 * dump must parse back, and fully parenthesised a chain a + b + ... + z
 * would nest as deep as it is long. */
static void dump_expr(FILE *out, const struct expr *e)
{
	struct outbuf o = {.file = out, .minimal = true};
	fmt_expr(&o, e, true);
}

static void dump_block(FILE *out, const struct stmt *body, int depth)
{
	fprintf(out, "{\n");
	dump_stmts(out, body, depth + 1);
	fprintf(out, "%*s}", depth * 8, "");
}

static void dump_wait(FILE *out, const struct stmt *s)
{
	if (s->n_names) {
		fprintf(out, "thread ");
		dump_names(out, s);
		fprintf(out, " = ");
	}
	if (s->distinct)
		fprintf(out, "wait %lld distinct %s", (long long)s->count,
			s->processes ? "processes " : "");
	else if (s->count == 1)
		fprintf(out, "wait any ");
	else
		fprintf(out, "wait %lld ", (long long)s->count);
	dump_expr(out, s->pred);
}

static void dump_stmt(FILE *out, const struct stmt *s, int depth)
{
	switch (s->kind) {
	case S_TIMEOUT:
		fprintf(out, "timeout %lldms", (long long)s->timeout_ms);
		break;
	case S_WAIT:
		dump_wait(out, s);
		break;
	case S_RUN:
		fprintf(out, "run ");
		dump_names(out, s);
		fprintf(out, " until ");
		dump_expr(out, s->pred);
		break;
	case S_IF:
	case S_WHILE:
		fprintf(out, "%s (", s->kind == S_IF ? "if" : "while");
		if (s->cond->kind == E_CHOOSE && s->cond->op == '*')
			fprintf(out, "*");
		else
			dump_expr(out, s->cond);
		fprintf(out, ") ");
		dump_block(out, s->body, depth);
		if (s->else_body) {
			fprintf(out, " else ");
			dump_block(out, s->else_body, depth);
		}
		break;
	case S_REPEAT:
		fprintf(out, "repeat %lld ", (long long)s->count);
		dump_block(out, s->body, depth);
		break;
	case S_ASSERT:
		fprintf(out, "assert ");
		dump_expr(out, s->cond);
		break;
	case S_RELEASE:
		fprintf(out, "release ");
		if (s->all)
			fprintf(out, "all");
		dump_names(out, s);
		break;
	case S_STEP:
		fprintf(out, "step %s", s->names[0]);
		if (s->count != 1)
			fprintf(out, " %lld", (long long)s->count);
		break;
	case S_NEXT:
	case S_FINISH:
	case S_HOLD:
		fprintf(out, "%s ", lang_stmt_word(s));
		dump_names(out, s);
		break;
	case S_BIND:
		fprintf(out, "thread %s = %s", s->names[0], s->target);
		break;
	case S_SERIAL:
		fprintf(out, "serial");
		break;
	case S_CHOOSE_THREAD:
		fprintf(out, "thread %s = choose(", s->names[0]);
		for (int i = 0; i < s->nchoices; i++)
			fprintf(out, "%s%s", i ? ", " : "", s->choices[i]);
		fprintf(out, ")");
		break;
	case S_ASSUME:
		fprintf(out, "assume ");
		dump_expr(out, s->cond);
		break;
	case S_LET:
		fprintf(out, "let %s = ", s->names[0]);
		dump_expr(out, s->cond);
		break;
	case S_FOR:
		fprintf(out, "for %s in ", s->names[0]);
		dump_expr(out, s->lo);
		fprintf(out, "..");
		dump_expr(out, s->hi);
		fprintf(out, " ");
		dump_block(out, s->body, depth);
		break;
	}
}

static void dump_stmts(FILE *out, const struct stmt *s, int depth)
{
	for (; s; s = s->next) {
		fprintf(out, "%*s", depth * 8, "");
		dump_stmt(out, s, depth);
		fprintf(out, "\n");
	}
}

void schedule_dump(const struct schedule *s, FILE *out)
{
	dump_stmts(out, s->body, 0);
}
