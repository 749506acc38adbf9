/*
 * lexer: splits schedule text into tokens (internal to policy/).
 *
 * Token kinds are the ones declared in ast.h (single characters use their
 * ASCII value) plus T_ERROR below.  The lexer never allocates: a token points
 * into the source text.  It is pulled one token at a time by the parser, so
 * the parser can switch it into the raw mode needed for at(FILE:LINE).
 */
#ifndef CCTRACE_POLICY_LEXER_H
#define CCTRACE_POLICY_LEXER_H

#include "lang/ast.h"

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
	char msg[160];	   /* the message of the last T_ERROR */
};

void lexer_init(struct lexer *lx, const char *src);
struct token lexer_next(struct lexer *lx);

/*
 * Raw mode for at(FILE:LINE): called right after the '(' was returned,
 * reads "FILE:LINE" up to the next ')' or blank.  On success fills *file
 * (text = the file name) and *line (ival = the line) and returns true; on
 * error fills lx->msg, sets *file's loc to the error position, returns false.
 */
bool lexer_location(struct lexer *lx, struct token *file, struct token *line);

/* Writes a short human description of a token: 'text', end of line, ... */
void token_describe(const struct token *t, char *buf, size_t len);

#endif
