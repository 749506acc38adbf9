/*
 * lexer: schedule text -> tokens.
 *
 * Design: a pull lexer over a NUL-terminated buffer.  lexer_next() skips
 * blanks and `#` comments and returns one token that points into the source
 * (no allocation, nothing to free).  Newlines end statements, so they are
 * tokens (T_NEWLINE) except inside '(' or '[' where the lexer counts the
 * nesting depth and skips them, which lets long conditions wrap.
 *
 * Numbers: decimal, 0x hex and 'c' character literals are T_INT; a decimal
 * (with a fraction or not) immediately followed by ms, s, m or h is a
 * T_DURATION in milliseconds, read by lang_parse_duration, the grammar the
 * command line uses too.  Any other letters glued to a number are an error
 * rather than two tokens, so `2x` is reported as a bad duration and not as
 * "2" followed by "x".  There are no fractional numbers, so a '.' after
 * digits is only read as a decimal point when a unit follows (`1.5s`).
 *
 * `..` (T_DOTDOT, for ranges) is one token; a single '.' stays member access,
 * and a number stops at a '.' unless digits and a unit follow, so `1..4` is
 * 1 .. 4 and `p1.t3` is still p1 '.' t3.
 *
 * at(...) is read raw (lexer_location): FILE:LINE, FUNC+0xOFFSET, and
 * "NAME"+0xOFFSET for a C++ name no identifier spells, quoted as enter()
 * takes it.  How such a name is written back (lang_is_plain_name,
 * lang_at_text) is decided here too, by what this lexer reads: the
 * printer and the writer of bug schedules ask, and agree with it.
 *
 * Errors are returned as a T_ERROR token carrying the position; the message
 * is left in lx->msg for the parser to turn into a diagnostic.  The lexer
 * knows nothing about keywords: they are identifiers to it.
 */
#include "lang/internal.h"
#include "lang/lang.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lexer_init(struct lexer *lx, const char *src)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = src;
	lx->line = 1;
}

static struct src_loc loc_at(const struct lexer *lx, size_t pos)
{
	struct src_loc l = {lx->line, (int)(pos - lx->line_start) + 1};
	return l;
}

static struct token make(const struct lexer *lx, int kind, size_t start)
{
	struct token t = {0};
	t.kind = kind;
	t.loc = loc_at(lx, start);
	t.text = lx->src + start;
	t.len = lx->pos - start;
	return t;
}

static struct token lex_error(struct lexer *lx, size_t start, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static struct token lex_error(struct lexer *lx, size_t start, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(lx->msg, sizeof(lx->msg), fmt, ap);
	va_end(ap);
	return make(lx, T_ERROR, start);
}

static bool is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

/* '$' as GNU C allows it after the first character: clang names a lambda
 * _ZZ4mainENK3$_1clEi. */
static bool is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

/* How many characters of a C++ qualifier's "::" (or a destructor's "::~")
 * join the identifier before s to the one after it; 0: none.  So
 * `enter(bank::Account::deposit)` is one name, as cctrace shows it. */
static size_t qualifier_at(const char *s)
{
	if (s[0] != ':' || s[1] != ':')
		return 0;
	if (is_ident_start((unsigned char)s[2]))
		return 2;
	return s[2] == '~' && is_ident_start((unsigned char)s[3]) ? 3 : 0;
}

/* Skips blanks and comments, but not the newline that ends a comment. */
static void skip_blanks(struct lexer *lx)
{
	const char *s = lx->src;
	for (;;) {
		char c = s[lx->pos];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			lx->pos++;
		} else if (c == '#') {
			while (s[lx->pos] && s[lx->pos] != '\n')
				lx->pos++;
		} else if (c == '\n' && lx->depth > 0) {
			lx->pos++;
			lx->line++;
			lx->line_start = lx->pos;
		} else {
			return;
		}
	}
}

/* The end of file is reported just after the last non-blank byte, so that
 * "found end of file" points at real text rather than an empty last line. */
static struct token lex_eof(struct lexer *lx)
{
	size_t end = lx->pos;
	struct token t = {0};
	while (end > 0 && isspace((unsigned char)lx->src[end - 1]))
		end--;
	t.kind = T_EOF;
	t.text = lx->src + lx->pos;
	t.loc.line = 1;
	t.loc.col = 1;
	for (size_t i = 0; i < end; i++) {
		if (lx->src[i] == '\n') {
			t.loc.line++;
			t.loc.col = 1;
		} else {
			t.loc.col++;
		}
	}
	return t;
}

static struct token lex_hex(struct lexer *lx, size_t start)
{
	uint64_t v = 0;
	bool overflow = false, any = false;
	const char *s = lx->src;
	lx->pos = start + 2;
	while (isxdigit((unsigned char)s[lx->pos])) {
		int c = tolower((unsigned char)s[lx->pos++]);
		int d = isdigit(c) ? c - '0' : c - 'a' + 10;
		if (v > (UINT64_MAX >> 4))
			overflow = true;
		v = (v << 4) | (uint64_t)d;
		any = true;
	}
	if (!any || is_ident_char((unsigned char)s[lx->pos])) {
		while (is_ident_char((unsigned char)s[lx->pos]))
			lx->pos++;
		return lex_error(lx, start, "bad hex literal '%.*s'", (int)(lx->pos - start),
				 s + start);
	}
	if (overflow)
		return lex_error(lx, start, "integer literal too large");
	struct token t = make(lx, T_INT, start);
	t.ival = (int64_t)v; /* 0x8000000000000000 and up wrap, as in C */
	return t;
}

/* Is there a fraction with a unit, ".5s", at s?  Without a unit the '.' is
 * left alone, so `1.5` stays 1 '.' 5 as it always was. */
static bool decimal_duration_at(const char *s)
{
	if (s[0] != '.' || !isdigit((unsigned char)s[1]))
		return false;
	s++;
	while (isdigit((unsigned char)*s))
		s++;
	return is_ident_char((unsigned char)*s);
}

/* Is the word before start `timeout`? */
static bool after_timeout(const char *s, size_t start)
{
	size_t end = start;

	while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t'))
		end--;
	return end >= 7 && strncmp(s + end - 7, "timeout", 7) == 0 &&
	       (end == 7 || !is_ident_char((unsigned char)s[end - 8]));
}

/* DIGITS ['.' DIGITS] UNIT from start; lx->pos is past the integer part.
 * The grammar is lang_parse_duration's. */
static struct token lex_duration(struct lexer *lx, size_t start)
{
	const char *s = lx->src;
	char err[sizeof(lx->msg)];
	int64_t ms;

	if (s[lx->pos] == '.')
		for (lx->pos++; isdigit((unsigned char)s[lx->pos]);)
			lx->pos++;
	size_t unit = lx->pos;

	while (is_ident_char((unsigned char)s[lx->pos]))
		lx->pos++;
	/* 12abc is no duration gone wrong, whose unit would begin m, s or h,
	 * unless it follows `timeout`, where only a duration goes */
	if (!strchr("msh", s[unit]) && !after_timeout(s, start))
		return lex_error(lx, start, "bad number '%.*s' (a name cannot begin with a digit)",
				 (int)(lx->pos - start), s + start);
	if (lang_parse_duration(s + start, lx->pos - start, NULL, &ms, err, sizeof(err)) < 0)
		return lex_error(lx, start, "%s", err);
	struct token t = make(lx, T_DURATION, start);
	t.ival = ms;
	return t;
}

static struct token lex_number(struct lexer *lx, size_t start)
{
	const char *s = lx->src;
	if (s[start] == '0' && (s[start + 1] == 'x' || s[start + 1] == 'X'))
		return lex_hex(lx, start);
	int64_t v = 0;
	bool overflow = false;
	while (isdigit((unsigned char)s[lx->pos])) {
		int d = s[lx->pos++] - '0';
		if (v > (INT64_MAX - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (is_ident_char((unsigned char)s[lx->pos]) || decimal_duration_at(s + lx->pos))
		return lex_duration(lx, start);
	if (s[start] == '0' && lx->pos - start > 1)
		return lex_error(lx, start, "leading zero in '%.*s': octal is not supported",
				 (int)(lx->pos - start), s + start);
	if (overflow)
		return lex_error(lx, start, "integer literal too large");
	struct token t = make(lx, T_INT, start);
	t.ival = v;
	return t;
}

/* Decodes the escape after a backslash at s[*i]; -1 if unknown. */
static int char_escape(const char *s, size_t *i)
{
	static const char from[] = "ntr0\\'\"abfv";
	static const char to[] = "\n\t\r\0\\'\"\a\b\f\v";
	char c = s[*i];
	const char *p = c ? strchr(from, c) : NULL;
	if (p) {
		(*i)++;
		return (unsigned char)to[p - from];
	}
	if (c == 'x' && isxdigit((unsigned char)s[*i + 1])) {
		int v = 0;
		(*i)++;
		for (int n = 0; n < 2 && isxdigit((unsigned char)s[*i]); n++, (*i)++) {
			int d = tolower((unsigned char)s[*i]);
			v = v * 16 + (isdigit(d) ? d - '0' : d - 'a' + 10);
		}
		return v;
	}
	return -1;
}

bool lang_is_plain_name(const char *name)
{
	struct lexer lx;
	struct token t;

	lexer_init(&lx, name);
	t = lexer_next(&lx);
	return t.kind == T_IDENT && t.text == name && t.len == strlen(name) && t.len > 0;
}

/* "worker<long>", "main::{lambda()#1}::operator()": a name as a trace
 * shows it, which no identifier spells (C++ templates, lambdas,
 * operators): an identifier token of the text between the quotes. */
static struct token lex_quoted_name(struct lexer *lx, size_t start)
{
	const char *s = lx->src;
	size_t end = start + 1;
	struct token t;

	while (s[end] && s[end] != '"' && s[end] != '\n')
		end++;
	if (s[end] != '"') {
		lx->pos = end;
		return lex_error(lx, start, "unterminated quoted name");
	}
	if (end == start + 1) {
		lx->pos = end + 1;
		return lex_error(lx, start, "empty quoted name");
	}
	lx->pos = end + 1;
	t = make(lx, T_IDENT, start);
	t.text = s + start + 1;
	t.len = end - start - 1;
	return t;
}

static struct token lex_char(struct lexer *lx, size_t start)
{
	const char *s = lx->src;
	size_t i = start + 1;
	int v;
	if (s[i] == '\'') {
		lx->pos = i + 1;
		return lex_error(lx, start, "empty character literal");
	}
	if (s[i] == '\0' || s[i] == '\n')
		return lex_error(lx, start, "unterminated character literal");
	if (s[i] == '\\') {
		i++;
		v = char_escape(s, &i);
		if (v < 0) {
			lx->pos = i;
			return lex_error(lx, i - 1, "unknown escape '\\%c' in character literal",
					 isprint((unsigned char)s[i]) ? s[i] : '?');
		}
	} else {
		v = (unsigned char)s[i++];
	}
	if (s[i] != '\'')
		return lex_error(lx, start, "unterminated character literal");
	lx->pos = i + 1;
	struct token t = make(lx, T_INT, start);
	t.ival = v;
	return t;
}

static int two_char_op(char a, char b)
{
	static const struct {
		char a, b;
		int kind;
	} ops[] = {
	    {'|', '|', T_OROR},	 {'&', '&', T_ANDAND}, {'=', '=', T_EQ},  {'!', '=', T_NE},
	    {'<', '=', T_LE},	 {'>', '=', T_GE},     {'<', '<', T_SHL}, {'>', '>', T_SHR},
	    {'-', '>', T_ARROW}, {'.', '.', T_DOTDOT},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].a == a && ops[i].b == b)
			return ops[i].kind;
	return 0;
}

static struct token lex_punct(struct lexer *lx, size_t start)
{
	const char *s = lx->src;
	int kind = two_char_op(s[start], s[start + 1]);
	if (kind) {
		lx->pos = start + 2;
		return make(lx, kind, start);
	}
	unsigned char c = (unsigned char)s[start];
	lx->pos = start + 1;
	if (!strchr("(){},;.[]+-*/%<>!~&|^=:", c)) {
		if (isprint(c))
			return lex_error(lx, start, "unexpected character '%c'", c);
		return lex_error(lx, start, "unexpected byte 0x%02x", c);
	}
	if (c == '(' || c == '[')
		lx->depth++;
	else if ((c == ')' || c == ']') && lx->depth > 0)
		lx->depth--;
	return make(lx, c, start);
}

struct token lexer_next(struct lexer *lx)
{
	skip_blanks(lx);
	size_t start = lx->pos;
	unsigned char c = (unsigned char)lx->src[start];
	if (c == '\0')
		return lex_eof(lx);
	if (c == '\n') {
		struct token t;
		lx->pos++;
		t = make(lx, T_NEWLINE, start);
		lx->line++;
		lx->line_start = lx->pos;
		return t;
	}
	if (is_ident_start(c)) {
		for (;;) {
			while (is_ident_char((unsigned char)lx->src[lx->pos]))
				lx->pos++;
			if (!qualifier_at(lx->src + lx->pos))
				break;
			lx->pos += qualifier_at(lx->src + lx->pos);
		}
		return make(lx, T_IDENT, start);
	}
	if (isdigit(c))
		return lex_number(lx, start);
	if (c == '\'')
		return lex_char(lx, start);
	if (c == '"')
		return lex_quoted_name(lx, start);
	return lex_punct(lx, start);
}

/* Where the offset of at(FUNC+0xOFFSET) begins in text[0..len): the last
 * "+0x" that only hex digits follow, to the end (a module's name may have
 * a '+' of its own, libstdc++.so.6); len when there is none. */
static size_t offset_start(const char *text, size_t len)
{
	static const char hex[] = "0123456789abcdefABCDEF";
	size_t i;

	for (i = len; i-- > 0;) {
		if (text[i] != '+' || i + 3 >= len || text[i + 1] != '0' ||
		    tolower((unsigned char)text[i + 2]) != 'x')
			continue;
		/* the last "+0x" is the offset's if only hex digits follow */
		return strspn(text + i + 3, hex) >= len - i - 3 ? i : len;
	}
	return len;
}

bool lang_at_offset(const char *text, size_t *funclen, uint64_t *offset)
{
	size_t len = strlen(text), n = offset_start(text, len);

	if (n == 0 || n == len)
		return false;
	*funclen = n;
	*offset = strtoull(text + n + 3, NULL, 16);
	return true;
}

/* Can at(...) read name raw: an identifier, or a file's name (a module,
 * libstdc++.so.6)?  Anything else (a blank, a bracket, a colon) is
 * quoted. */
static bool raw_function(const char *name, size_t len)
{
	char *copy = strndup(name, len);
	bool plain = copy && lang_is_plain_name(copy);

	free(copy);
	if (plain)
		return true;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.+-$", name[i]))
			return false;
	return len > 0;
}

size_t lang_at_text(char *buf, size_t len, const char *text)
{
	size_t n = offset_start(text, strlen(text));
	int w;

	if (n == 0 || !text[n] || raw_function(text, n))
		w = snprintf(buf, len, "at(%s)", text);
	else
		w = snprintf(buf, len, "at(\"%.*s\"%s)", (int)n, text, text + n);
	return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len ? len - 1 : 0;
}

/* The text of at(...)'s argument from start, as far as its brackets go
 * (`main::{lambda()#1}::operator()+0x4`, `std::vector<int, A>::size+0xc`):
 * its length, for a hint to quote it. */
static size_t balanced_text(const char *s, size_t start)
{
	size_t end = start;
	int depth = 0;

	while (s[end] && s[end] != '\n' && (s[end] != ')' || depth > 0)) {
		if (s[end] == '(')
			depth++;
		else if (s[end] == ')')
			depth--;
		end++;
	}
	while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
		end--;
	return end - start;
}

#define QUOTE_HINT                                                                                 \
	"; a name no identifier spells (a template, a lambda, an operator) is written in double "  \
	"quotes: "

/* "; ... written in double quotes: at("NAME"+0xOFF)" after the message,
 * when the raw text at start is a C++ name no identifier spells. */
static void quote_hint(struct lexer *lx, size_t start, size_t raw_len)
{
	const char *s = lx->src + start;
	size_t len = balanced_text(lx->src, start), n = offset_start(s, len);
	size_t used = strlen(lx->msg);

	if (!memchr(s, '<', raw_len) && !memchr(s, '{', raw_len) && !memchr(s, '(', raw_len))
		return;
	if (n < len)
		snprintf(lx->msg + used, sizeof(lx->msg) - used, QUOTE_HINT "at(\"%.*s\"%.*s)",
			 (int)n, s, (int)(len - n), s + n);
	else /* no offset was given: say where it goes */
		snprintf(lx->msg + used, sizeof(lx->msg) - used, QUOTE_HINT "at(\"%.*s\"+0xOFFSET)",
			 (int)len, s);
}

static bool location_error(struct lexer *lx, struct token *file, size_t at, const char *what,
			   size_t len)
{
	file->loc = loc_at(lx, at);
	if (len)
		snprintf(lx->msg, sizeof(lx->msg),
			 "expected a file:line location inside at(...), found '%.*s'", (int)len,
			 what);
	else
		snprintf(lx->msg, sizeof(lx->msg), "expected a file:line location inside at(...)");
	if (len)
		quote_hint(lx, at, len);
	return false;
}

/* at(FUNC+0xOFFSET): *file the function (or module), *line the offset's
 * text, with ival 0; the lexer goes on at end. */
static bool offset_tokens(struct lexer *lx, struct token *file, struct token *line, size_t func,
			  size_t funclen, size_t plus, size_t end)
{
	const char *s = lx->src;

	*file = (struct token){.kind = T_IDENT, .loc = loc_at(lx, func), .text = s + func};
	file->len = funclen;
	*line = (struct token){.kind = T_INT, .loc = loc_at(lx, plus), .text = s + plus};
	line->len = end - plus;
	line->ival = 0;
	lx->pos = end;
	return true;
}

/* An error of at("NAME"...) at start, the opening quote. */
static bool quoted_error(struct lexer *lx, struct token *file, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool quoted_error(struct lexer *lx, struct token *file, size_t at, const char *fmt, ...)
{
	va_list ap;

	file->loc = loc_at(lx, at);
	va_start(ap, fmt);
	vsnprintf(lx->msg, sizeof(lx->msg), fmt, ap);
	va_end(ap);
	return false;
}

/* at("NAME"+0xOFFSET): a function's name as a trace shows it, which no
 * identifier spells, quoted as enter("NAME") has it; the offset follows
 * the closing quote. */
static bool location_quoted(struct lexer *lx, struct token *file, struct token *line)
{
	const char *s = lx->src;
	size_t start = lx->pos, close = start + 1, end, n;

	while (s[close] && s[close] != '"' && s[close] != '\n')
		close++;
	if (s[close] != '"')
		return quoted_error(lx, file, start, "unterminated quoted name");
	n = offset_start(s + start + 1, close - start - 1);
	if (close == start + 1)
		return quoted_error(lx, file, start, "empty quoted name");
	if (n > 0 && n < close - start - 1)
		return quoted_error(lx, file, start + 1 + n,
				    "the offset goes after the closing quote: at(\"%.*s\"%.*s)",
				    (int)n, s + start + 1, (int)(close - start - 1 - n),
				    s + start + 1 + n);
	end = close + 1;
	while (s[end] && !strchr(")\n \t\r", s[end]))
		end++;
	if (end == close + 1 || offset_start(s + close + 1, end - close - 1) != 0)
		return quoted_error(
		    lx, file, close + 1,
		    "a quoted name in at(...) takes an offset, at(\"%.*s\"+0xOFFSET); "
		    "enter(\"%.*s\") is its first instruction",
		    (int)(close - start - 1), s + start + 1, (int)(close - start - 1),
		    s + start + 1);
	return offset_tokens(lx, file, line, start + 1, close - start - 1, close + 1, end);
}

/* FILE:LINE's line number, s[from..end): 0 and *v; 1 when it is no
 * number; -1 when it is too large (the error made). */
static int line_number(struct lexer *lx, struct token *file, size_t from, size_t end, int64_t *v)
{
	const char *s = lx->src;

	*v = 0;
	for (size_t i = from; i < end; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 1;
		*v = *v * 10 + (s[i] - '0');
		if (*v > 1000000000) {
			file->loc = loc_at(lx, from);
			snprintf(lx->msg, sizeof(lx->msg), "line number too large");
			return -1;
		}
	}
	return 0;
}

bool lexer_location(struct lexer *lx, struct token *file, struct token *line)
{
	const char *s = lx->src;
	while (s[lx->pos] == ' ' || s[lx->pos] == '\t')
		lx->pos++;
	if (s[lx->pos] == '"')
		return location_quoted(lx, file, line);
	size_t start = lx->pos, end = start, colon = 0, plus;
	while (s[end] && !strchr(")\n \t\r", s[end])) {
		if (end > start && qualifier_at(s + end)) { /* bank::Account::deposit+0x2e */
			end += qualifier_at(s + end);
			continue;
		}
		if (s[end++] == ':')
			colon = end - 1;
	}
	size_t len = end - start;
	/* at(FUNC+0xOFFSET): one instruction, for the steps `cctrace test`
	 * writes (an access in the middle of a line) */
	plus = start + offset_start(s + start, len);
	if (!colon && plus > start && plus < end)
		return offset_tokens(lx, file, line, start, plus - start, plus, end);
	if (colon <= start || colon + 1 == end)
		return location_error(lx, file, start, s + start, len);
	int64_t v;
	int bad = line_number(lx, file, colon + 1, end, &v);
	if (bad)
		return bad < 0 ? false : location_error(lx, file, start, s + start, len);
	if (v == 0) {
		file->loc = loc_at(lx, colon + 1);
		snprintf(lx->msg, sizeof(lx->msg), "line numbers start at 1");
		return false;
	}
	*file = (struct token){.kind = T_IDENT, .loc = loc_at(lx, start), .text = s + start};
	file->len = colon - start;
	*line = (struct token){.kind = T_INT, .loc = loc_at(lx, colon + 1), .text = s + colon + 1};
	line->len = end - colon - 1;
	line->ival = v;
	lx->pos = end;
	return true;
}

void token_describe(const struct token *t, char *buf, size_t len)
{
	if (t->kind == T_EOF)
		snprintf(buf, len, "end of file");
	else if (t->kind == T_NEWLINE)
		snprintf(buf, len, "end of line");
	else if (t->len > 40)
		snprintf(buf, len, "'%.37s...'", t->text);
	else
		snprintf(buf, len, "'%.*s'", (int)t->len, t->text);
}
