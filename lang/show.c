/*
 * show.c: a value as the shell's `print` writes it, aggregates included.
 *
 * An integer is what eval_int gives; a struct, union, class or array is
 * read from the target and written as gdb writes it, `{a = 1, b = {x =
 * 2}, <Base> = {...}}` and `{1, 2, 3}`, a char array as the string it
 * holds, a pointer in hex, an enum by its enumerator's name, a float or a
 * double as a number.  Memory is read a scalar at a time, as it is
 * shown.  Output is bounded, and says where it stops: at most
 * SHOW_ELEMENTS elements of an array, SHOW_DEPTH levels of nesting and
 * SHOW_SCALARS values in all.
 */
#include "lang/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOW_ELEMENTS 100
#define SHOW_DEPTH    8
#define SHOW_SCALARS  2000

struct show {
	struct eval_ctx *c;
	void *target;
	FILE *out;
	int depth;
	int left; /* scalars still to show */
};

static void show_object(struct show *sh, const struct sym_type *t, uint64_t addr);

static int read_target(struct show *sh, uint64_t addr, void *buf, size_t len)
{
	return sh->c->read_memory(sh->target, addr, buf, len);
}

/* A scalar of t's size at addr (at most 8 bytes), as the type reads. */
static bool read_scalar(struct show *sh, const struct sym_type *t, uint64_t addr,
			unsigned bit_offset, unsigned bit_size, int64_t *out)
{
	uint64_t raw = 0, size = sym_type_size(t);
	unsigned bits = bit_size ? bit_size : (unsigned)size * 8;
	size_t len = bit_size ? (bit_offset + bit_size + 7) / 8 : size;

	if (size == 0 || size > 8 || len > 8 || read_target(sh, addr, &raw, len) < 0)
		return false;
	*out = eval_bits(raw, bit_offset, bits, t);
	return true;
}

static void show_char(FILE *out, int ch)
{
	if (ch == '\\' || ch == '"')
		fprintf(out, "\\%c", ch);
	else if (ch >= 0x20 && ch < 0x7f)
		fputc(ch, out);
	else if (ch == '\n')
		fputs("\\n", out);
	else if (ch == '\t')
		fputs("\\t", out);
	else
		fprintf(out, "\\%03o", ch & 0xff);
}

static void show_float(struct show *sh, const struct sym_type *t, uint64_t addr)
{
	float f;
	double d;

	if (sym_type_size(t) == 4 && read_target(sh, addr, &f, 4) == 0)
		fprintf(sh->out, "%g", f);
	else if (sym_type_size(t) == 8 && read_target(sh, addr, &d, 8) == 0)
		fprintf(sh->out, "%g", d);
	else
		fprintf(sh->out, "<%s>", sym_type_name(t));
}

static void show_scalar(struct show *sh, const struct sym_type *t, uint64_t addr,
			unsigned bit_offset, unsigned bit_size)
{
	const char *name;
	int64_t v;

	if (!read_scalar(sh, t, addr, bit_offset, bit_size, &v)) {
		fprintf(sh->out, "<unreadable at %#lx>", (unsigned long)addr);
		return;
	}
	switch (sym_type_kind(t)) {
	case SYM_T_BOOL:
		fputs(v ? "true" : "false", sh->out);
		break;
	case SYM_T_POINTER:
		fprintf(sh->out, "%#lx", (unsigned long)v);
		break;
	case SYM_T_ENUM:
		name = sym_type_enumerator_name(t, v);
		if (name)
			fputs(name, sh->out);
		else
			fprintf(sh->out, "%ld", (long)v);
		break;
	default:
		fprintf(sh->out, "%ld", (long)v);
		if (sym_type_size(t) == 1 && !bit_size) {
			fputs(" '", sh->out);
			show_char(sh->out, (int)v);
			fputc('\'', sh->out);
		}
		break;
	}
}

/* A char array: the string up to its first NUL, its size at most. */
static void show_string(struct show *sh, uint64_t addr, uint64_t n)
{
	char buf[SHOW_ELEMENTS];
	uint64_t i, len = n < sizeof(buf) ? n : sizeof(buf);

	if (read_target(sh, addr, buf, len) < 0) {
		fprintf(sh->out, "<unreadable at %#lx>", (unsigned long)addr);
		return;
	}
	fputc('"', sh->out);
	for (i = 0; i < len && buf[i]; i++)
		show_char(sh->out, buf[i]);
	fputc('"', sh->out);
	if (i == len && len < n)
		fputs("...", sh->out);
}

/* " \"text\"": what a char pointer points to, up to its NUL, read a piece
 * at a time (a string near the end of a mapping is not unreadable), at
 * most SHOW_ELEMENTS characters; nothing if it cannot be read. */
static void show_c_string(struct show *sh, uint64_t addr)
{
	char text[SHOW_ELEMENTS + 1];
	size_t len = 0, i;
	bool ended = false;

	while (len < SHOW_ELEMENTS && !ended) {
		char piece[16];

		if (read_target(sh, addr + len, piece, sizeof(piece)) < 0)
			break;
		for (i = 0; i < sizeof(piece) && len < SHOW_ELEMENTS && !ended; i++)
			ended = (text[len++] = piece[i]) == '\0';
	}
	if (!len)
		return;
	fputs(" \"", sh->out);
	for (i = 0; i < len && text[i]; i++)
		show_char(sh->out, text[i]);
	fputc('"', sh->out);
	if (!ended)
		fputs("...", sh->out);
}

static void show_array(struct show *sh, const struct sym_type *t, uint64_t addr)
{
	const struct sym_type *elem = sym_type_target(t);
	uint64_t n = sym_type_count(t), size = elem ? sym_type_size(elem) : 0, i;

	if (!elem || !size) {
		fprintf(sh->out, "<%s>", sym_type_name(t));
		return;
	}
	if (size == 1 && sym_type_is_integer(elem) && sym_type_kind(elem) != SYM_T_BOOL &&
	    sym_type_kind(elem) != SYM_T_ENUM) {
		show_string(sh, addr, n);
		return;
	}
	fputc('{', sh->out);
	for (i = 0; i < n && i < SHOW_ELEMENTS; i++) {
		fputs(i ? ", " : "", sh->out);
		show_object(sh, elem, addr + i * size);
	}
	if (i < n)
		fprintf(sh->out, ", ... (%lu elements)", (unsigned long)n);
	fputc('}', sh->out);
}

/* "struct Base" as C++ names a base class: "Base". */
static const char *without_keyword(const char *name)
{
	static const char *const keywords[] = {"struct ", "class ", "union "};
	size_t i;

	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strncmp(name, keywords[i], strlen(keywords[i])) == 0)
			return name + strlen(keywords[i]);
	return name;
}

struct member_walk {
	struct show *sh;
	uint64_t addr;
	int n;
};

static int show_member(void *ctx, const struct sym_member *m)
{
	struct member_walk *w = ctx;
	struct show *sh = w->sh;

	fputs(w->n++ ? ", " : "", sh->out);
	if (m->base)
		fprintf(sh->out, "<%s> = ", without_keyword(sym_type_name(m->type)));
	else
		fprintf(sh->out, "%s = ", m->name ? m->name : "<anonymous>");
	if (m->bit_size)
		show_scalar(sh, m->type, w->addr + m->offset, m->bit_offset, m->bit_size);
	else
		show_object(sh, m->type, w->addr + m->offset);
	return 0;
}

static void show_struct(struct show *sh, const struct sym_type *t, uint64_t addr)
{
	struct member_walk w = {sh, addr, 0};

	fputc('{', sh->out);
	sym_type_each_member(t, show_member, &w);
	fputc('}', sh->out);
}

static void show_object(struct show *sh, const struct sym_type *t, uint64_t addr)
{
	enum sym_type_kind kind = sym_type_kind(t);

	if (sh->left <= 0 ||
	    (sh->depth >= SHOW_DEPTH && (kind == SYM_T_STRUCT || kind == SYM_T_ARRAY))) {
		fputs("...", sh->out);
		return;
	}
	sh->left--;
	sh->depth++;
	switch (kind) {
	case SYM_T_STRUCT:
		show_struct(sh, t, addr);
		break;
	case SYM_T_ARRAY:
		show_array(sh, t, addr);
		break;
	case SYM_T_FLOAT:
		show_float(sh, t, addr);
		break;
	case SYM_T_VOID:
	case SYM_T_FUNCTION:
		fprintf(sh->out, "<%s at %#lx>", sym_type_name(t), (unsigned long)addr);
		break;
	default:
		show_scalar(sh, t, addr, 0, 0);
		break;
	}
	sh->depth--;
}

int eval_show(struct eval_ctx *c, const struct expr *e, FILE *out)
{
	struct show sh = {c, NULL, out, 0, SHOW_SCALARS};
	struct value v;
	int64_t i;

	if (eval_value(c, e, &v) < 0)
		return -1;
	/* a function's name is its address, said to be one: a stripped
	 * program's variable may share a library function's name (acct) */
	if (e->kind == E_NAME && e->ref == REF_FUNC) {
		struct sym_loc loc = {0};

		if (c->syms)
			sym_describe_function(c->syms, (uint64_t)v.i, &loc);
		fprintf(out, "{function} %#lx <%s>%s%s", (unsigned long)v.i, e->name,
			loc.module ? " in " : "", loc.module ? loc.module : "");
		return 0;
	}
	if (!v.lvalue || v.preread || v.no_address || v.bit_size || !v.type ||
	    sym_type_is_integer(v.type)) {
		if (eval_int(c, e, &i) < 0)
			return -1;
		/* an enum by its enumerator, as gdb shows it */
		if (v.type && sym_type_kind(v.type) == SYM_T_ENUM &&
		    sym_type_enumerator_name(v.type, i)) {
			fputs(sym_type_enumerator_name(v.type, i), out);
			return 0;
		}
		/* a pointer with its type, as gdb shows it; a char's, with the
		 * string it points to */
		if (v.type && sym_type_kind(v.type) == SYM_T_POINTER) {
			const struct sym_type *to = sym_type_target(v.type);

			fprintf(out, "(%s) %#lx", sym_type_name(v.type), (unsigned long)i);
			if (i && to && sym_type_size(to) == 1 && sym_type_is_integer(to) &&
			    sym_type_kind(to) != SYM_T_BOOL) {
				sh.target = v.target ? v.target : c->target;
				show_c_string(&sh, (uint64_t)i);
			}
			return 0;
		}
		fprintf(out, "%ld", (long)i);
		if (i < 0 || i > 9)
			fprintf(out, " (%#lx)", (unsigned long)i);
		return 0;
	}
	sh.target = v.target ? v.target : c->target;
	show_object(&sh, v.type, v.addr);
	return 0;
}
