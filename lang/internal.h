/*
 * Declarations shared by the files of lang/ and no one else: the lexer,
 * and what the parser and the printer (print.c) both need.
 *
 * lexer: splits schedule text into tokens.
 *
 * Token kinds are the ones declared in ast.h (single characters use their
 * ASCII value) plus T_ERROR below.  The lexer never allocates: a token points
 * into the source text.  It is pulled one token at a time by the parser, so
 * the parser can switch it into the raw mode needed for at(FILE:LINE).
 */
#ifndef CCTRACE_LANG_INTERNAL_H
#define CCTRACE_LANG_INTERNAL_H

#include "lang/lang.h"

#include <stdarg.h>

/* A lexical error; the message is in lexer.msg, the position in token.loc. */
enum { T_ERROR = 300 };

struct token {
	int kind;
	struct src_loc loc;
	const char *text; /* points into the source; not NUL-terminated */
	size_t len;
	int64_t ival; /* T_INT value; T_DURATION in milliseconds */
};

struct lexer {
	const char *src;
	size_t pos;
	int line;
	size_t line_start; /* offset of the first byte of the current line */
	int depth;	   /* open '(' and '[': newlines inside them are skipped */
	char msg[512];	   /* the message of the last T_ERROR */
};

void lexer_init(struct lexer *lx, const char *src);
struct token lexer_next(struct lexer *lx);

/*
 * Raw mode for at(FILE:LINE): called right after the '(' was returned,
 * reads "FILE:LINE" up to the next ')' or blank.  On success fills *file
 * (text = the file name) and *line (ival = the line) and returns true; on
 * error fills lx->msg, sets *file's loc to the error position, returns false.
 * at(FUNC+0xOFFSET) and at("NAME"+0xOFFSET): *file is the function (the
 * text between the quotes), *line the "+0xOFFSET" text with ival 0.
 */
bool lexer_location(struct lexer *lx, struct token *file, struct token *line);

/* Writes a short human description of a token: 'text', end of line, ... */
void token_describe(const struct token *t, char *buf, size_t len);

/* --- parse.c --- */
/* Binding strength of binary operator token kind (1 for ||, 10 for *); 0 if
 * it is none. */
int lang_binary_prec(int kind);
/* The word a statement of this kind begins with ("wait", "thread"). */
const char *lang_stmt_word(const struct stmt *s);

/* --- print.c --- */
/* schedule_diag for a text being parsed, before there is a schedule. */
void lang_diag_v(const char *path, const char *text, struct src_loc loc, char *buf, size_t len,
		 const char *fmt, va_list ap);

#endif
