/*
 * fuzz_schedule: a libFuzzer target for the schedule parser, checker and
 * printer (`make fuzz`; see tests/fuzz/run).
 *
 * Each input is a schedule text.  It is parsed; a failure must come with a
 * complete diagnostic (file:line:col, message, source line, caret).  A
 * schedule that parses is printed (schedule_dump), and the printout must
 * parse back and print the same: the printer and the parser agree; every
 * expression is also formatted the way messages do it (expr_format), into a
 * buffer of ample size and a small one, which must hold a terminated prefix
 * of the whole text and return its length.  Then it
 * is checked against the symbols of a program, read offline from its ELF
 * file and DWARF, the way `cctrace run` checks before it launches anything:
 * no process is needed, so the checker runs whole, names, types, functions
 * and source lines included (the program is tests/fixtures/symfix, or
 * $CCTRACE_FUZZ_PROGRAM).  A failed check must say why.  Everything is
 * freed, so LeakSanitizer sees every leak.  Any violated property aborts,
 * which libFuzzer reports as a crash with the input that caused it.
 */
#include "engine/engine.h"
#include "lang/lang.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sym_space *syms;

static void fuzz_fail(const char *what, const char *text, const char *detail)
{
	fprintf(stderr, "fuzz_schedule: %s\n--- input ---\n%s\n--- detail ---\n%s\n", what, text,
		detail);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *program = getenv("CCTRACE_FUZZ_PROGRAM");
	char err[1024];

	(void)argc;
	(void)argv;
	if (!program)
		program = "tests/fixtures/symfix";
	syms = sym_open_program(program, err, sizeof(err));
	if (!syms) {
		fprintf(stderr, "fuzz_schedule: %s (build it with make fixtures)\n", err);
		exit(1);
	}
	return 0;
}

static char *dump(const struct schedule *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	schedule_dump(s, f);
	fclose(f);
	return buf;
}

/* "PATH:LINE:COL: error: ..." then the source line and a caret line. */
static void check_diagnostic(const char *text, const char *err)
{
	size_t len = strlen(err);
	int line, col;

	if (sscanf(err, "fuzz.sched:%d:%d: error: ", &line, &col) != 2 || line < 1 || col < 1)
		fuzz_fail("a diagnostic without a position", text, err);
	if (len < 2 || strcmp(err + len - 2, "^\n") != 0)
		fuzz_fail("a diagnostic without a caret line", text, err);
}

/* The printout parses back to a tree that prints the same. */
static void check_round_trip(const char *text, const struct schedule *s)
{
	char err[2048];
	char *out = dump(s), *again_out;
	struct schedule *again =
	    schedule_parse("fuzz.sched", out, engine_atoms(), err, sizeof(err));

	if (!again)
		fuzz_fail("the printout does not parse", text, err);
	again_out = dump(again);
	if (strcmp(out, again_out) != 0)
		fuzz_fail("the printout prints differently once parsed", out, again_out);
	free(again_out);
	schedule_free(again);
	free(out);
}

static void check_format(const char *text, const struct expr *e, size_t small)
{
	static char whole[1 << 16];
	char part[64];
	size_t n = expr_format(e, whole, sizeof(whole)), m;

	if (n != strlen(whole))
		fuzz_fail("expr_format returns a wrong length", text, whole);
	m = expr_format(e, part, small);
	if (m != strlen(part) || m > small - 1 || strncmp(part, whole, m) != 0 ||
	    (n < small && m != n))
		fuzz_fail("expr_format truncates wrongly", text, part);
}

/* Every expression of the statements (the parser bounds their depth). */
static void check_formats(const char *text, const struct stmt *st, size_t small)
{
	for (; st; st = st->next) {
		const struct expr *exprs[] = {st->pred, st->cond, st->lo, st->hi};
		for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
			if (exprs[i])
				check_format(text, exprs[i], small);
		check_formats(text, st->body, small);
		check_formats(text, st->else_body, small);
	}
}

static void check_schedule(const char *text, struct schedule *s)
{
	struct policy *pol = calloc(1, sizeof(*pol));
	char err[4096] = "";

	if (!pol)
		abort();
	pol->sched = s;
	if (lang_check(pol, syms, err, sizeof(err)) < 0)
		check_diagnostic(text, err);
	else if (err[0])
		fuzz_fail("a schedule that checks leaves a message", text, err);
	engine_free(pol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char err[2048];
	struct schedule *s;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	s = schedule_parse("fuzz.sched", text, engine_atoms(), err, sizeof(err));
	if (!s) {
		check_diagnostic(text, err);
	} else {
		if (err[0])
			fuzz_fail("a schedule that parses leaves a message", text, err);
		check_round_trip(text, s);
		check_formats(text, s->body, 1 + size % 64);
		check_schedule(text, s);
	}
	free(text);
	return 0;
}
