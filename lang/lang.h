/*
 * lang: the schedule language.  Text in, a checked tree out, and an
 * evaluator for its expressions; nothing here runs or traces a program.
 *
 * Takes: a schedule's text (schedule_parse, schedule_load), the table of
 * event atoms the engine defines (struct atom_table: lang knows how an
 * atom's argument is written, not which atoms exist or what they mean),
 * and, to check and evaluate, the program's symbols (symbols.h).  To read
 * the target, the evaluator calls back through struct eval_ctx: memory
 * through read_memory, a thread's registers through thread_view, event
 * atoms and thread conditions through their hooks.  All target handles
 * are opaque pointers; lang includes no tracer header.
 *
 * Guarantees: a schedule that parses and checks (lang_check) has every name
 * resolved (functions, source lines, variables, enumerators, threads) and
 * every expression typed, so that a running schedule fails only on what
 * the target does (a pointer that does not point anywhere, a thread not
 * held); the printer (expr_format, schedule_dump) writes text that parses
 * back to the same tree.
 *
 * Errors: the first error stops the parse or the check, and is reported as
 * one complete message in the caller's buffer, "path:line:col: error: what"
 * with the source line and a caret under the place (schedule_diag formats
 * later stages' errors the same way).  Functions return -1 or NULL then.
 * Only a failing allocation is reported without a position.
 *
 * Depth: a chain of binary operators is as deep as it is long, and only the
 * size of the file bounds that, so every walk over an expression iterates
 * along a chain's left spine and recurses into the other operands only,
 * whose depth the parser bounds (ast.h).  A schedule of any size cannot
 * overflow the stack; a new walk must keep that rule (expr_operands does).
 *
 * Memory: schedule_parse returns a tree the caller frees with schedule_free;
 * every node, string and array in it belongs to the schedule.  An atom
 * expression points at a row of the atom table, which must outlive it.
 * struct policy's tables are the caller's (engine_free frees them).  The
 * evaluator allocates nothing.
 */
#ifndef CCTRACE_LANG_H
#define CCTRACE_LANG_H

#include "lang/ast.h"
#include "symbols/symbols.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_WATCH_PER_WAIT 4

/* How a read(X)/write(X) atom is matched (its expr->ival, set by the checker). */
#define WATCH_BY_DEBUG_REGISTER 0
#define WATCH_BY_DECODING	1
#define DEFAULT_TIMEOUT_MS	10000

enum name_ref {
	REF_NONE,
	REF_THREAD,
	REF_VAR, /* a global or static: one address */
	REF_ENUM,
	REF_LOCAL, /* a let/for variable of the schedule */
	REF_FIELD,
	REF_FUNC,
	REF_VAR_AT, /* a local, parameter or __thread variable: its address depends on
		     * the thread and where it is stopped */
};

/* Fields of the event at hand, usable in predicates (expr->slot of a
 * REF_FIELD name).  The call fields (FIELD_ARG1 on: the argument
 * registers at a function's entry, its return value at its return, the
 * return address of the call) may also be used outside predicates, where
 * they are those of the event that ended the last wait or run (typestate
 * schedules assert on a call's result). */
enum event_field {
	FIELD_ADDR,
	FIELD_SIZE,
	FIELD_VALUE,
	FIELD_FUNC,
	FIELD_LINE,
	FIELD_ARG1,
	FIELD_ARG2,
	FIELD_ARG3,
	FIELD_ARG4,
	FIELD_ARG5,
	FIELD_ARG6,
	FIELD_RETVAL,
	FIELD_CALLER,
	NFIELDS
};
extern const char *const event_field_names[NFIELDS];

/* Names the checker collected; expr->slot indexes these. */
struct policy {
	struct schedule *sched;
	char **funcs; /* enter/return/in functions */
	int nfuncs;
	struct at_loc {
		char *file;
		int line;
	} * locs;
	int nlocs;
	char **threads; /* thread variables, in declaration order */
	char **locals;	/* let and for variables (expr->slot of a REF_LOCAL name) */
	char **watched; /* read/write lvalues by text (expr->slot of a read/write atom) */
	int nwatched;
	int nlocals;
	int nthreads;
	/* What the checker found doubtful but not wrong, as printable
	 * diagnostics ("sched.txt:3:13: warning: ..."), for the command to
	 * show before it runs; NULL if none. */
	char *warnings;
};

/*
 * Parse a schedule.  On success returns a schedule (free with
 * schedule_free).  On a syntax error returns NULL and writes to err a
 * complete, printable diagnostic:
 *     sched.txt:3:17: error: expected 'until' after thread list
 *         run A, B untl enter(audit)
 *                  ^
 */
struct schedule *schedule_parse(const char *path, const char *text, const struct atom_table *atoms,
				char *err, size_t errlen);
/* Reads the file. */
struct schedule *schedule_load(const char *path, const struct atom_table *atoms, char *err,
			       size_t errlen);
void schedule_free(struct schedule *s);

/* In text made by schedule_diag ("FILE:LINE:COL: error: what"), where
 * ": error: " stands after the position; NULL when text is no such
 * diagnostic (cli prints those as they are, the engine's outcome line drops
 * the word its own "error:" already says). */
const char *lang_diag_error_word(const char *text);
/* Format "path:line:col: error: msg" plus the source line and a caret into
 * buf, the same way the parser does, for errors found by later stages. */
void schedule_diag(const struct schedule *s, struct src_loc loc, char *buf, size_t len,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Writes e as C-like text into buf (always NUL-terminated when len > 0):
 * nested binary operations are fully parenthesised, e.g. "a || (b && !c)",
 * events print as written ("enter(f)", "at(bank.c:41)").  Returns the length
 * written (truncated to len - 1).  For traces, messages and tests. */
size_t expr_format(const struct expr *e, char *buf, size_t len);
/* Does name read as one identifier ("withdraw", "bank::Account::get")?
 * Other names (C++ templates, lambdas, operators: "worker<long>") are
 * written in double quotes: enter("worker<long>"). */
bool lang_is_plain_name(const char *name);
/* at(FUNC+0xOFFSET)'s text "FUNC+0xOFFSET" (expr.name, at_loc.file with
 * line 0): the length of FUNC and the offset; false for a FILE:LINE's
 * file.  FUNC may have a '+' of its own (libstdc++.so.6, operator+). */
bool lang_at_offset(const char *text, size_t *funclen, uint64_t *offset);
/* "at(FUNC+0xOFFSET)" for that text as a schedule writes it, into
 * buf[len]: FUNC quoted, at("NAME"+0xOFFSET), unless it is an
 * identifier or a file's name (a module); the length, as expr_format. */
size_t lang_at_text(char *buf, size_t len, const char *text);
/* The same, with the values of the schedule's let and for variables
 * (locals[], as the evaluator has them) written in place of their names:
 * an exact schedule has no let or for left to bind them. */
size_t expr_format_bound(const struct expr *e, const int64_t *locals, char *buf, size_t len);

/* Pretty-prints the statements of s, one per line, blocks indented by 8
 * spaces, expressions with only the parentheses they need (never nested
 * deeper than written); the output parses back to the same tree.  For tests
 * and debugging. */
void schedule_dump(const struct schedule *s, FILE *out);

/* "s" after a count other than 1: "1 run", "2 runs". */
static inline const char *plural_s(long n)
{
	return n == 1 ? "" : "s";
}

/* --- vec.c --- */
/* Room for element n of the array *items (a T **) of capacity *cap:
 * 0, or -1 when memory is exhausted. */
int vec_reserve(void *items, int *cap, int n, size_t size);

/* --- check.c --- */
/* at(FUNC+0xOFFSET), or at(MODULE+0xOFFSET) for code no function covers
 * (sym_module_offset): the address in syms; -1 if neither is known. */
int lang_func_offset(struct sym_space *syms, const char *text, uint64_t *addr);
int lang_check(struct policy *pol, struct sym_space *syms, char *err, size_t errlen);
/* Check another schedule (a fragment typed in the shell) against pol's
 * tables, extending them. */
int lang_check_block(struct policy *pol, struct schedule *sched, struct sym_space *syms, char *err,
		     size_t errlen);

/* --- eval.c --- */
struct value {
	bool lvalue; /* addr/type name an object in target memory */
	int64_t i;   /* rvalue */
	uint64_t addr;
	const struct sym_type *type; /* NULL: a plain integer */
	/* lvalue: the target whose memory it is in, NULL: the eval_ctx's.
	 * T.var is in T's process, which a forked child makes another. */
	void *target;
	/* While checking: typed only where the thread stops (a local declared
	 * with different types, sym_variable_varies); what is made of it is
	 * unknown too, and checked at run time alone. */
	bool unknown;
	/* lvalue whose memory does not hold its value here, i does: a variable
	 * in a register (no_address too), a parameter its prologue has not
	 * stored yet (sym_var.value_known) */
	bool preread;
	bool no_address;
	/* a bitfield: bit_size bits from bit bit_offset of the byte at addr */
	uint8_t bit_offset, bit_size;
};

struct eval_ctx {
	struct sym_space *syms;
	/* The target whose memory lvalues name (opaque to lang), read through
	 * read_memory (0, or -1 if it cannot be read).  target NULL: checking,
	 * types only, nothing is read. */
	void *target;
	int (*read_memory)(void *target, uint64_t addr, void *buf, size_t len);
	/* The thread whose locals and __thread variables bare names mean
	 * (opaque; NULL: none). */
	void *thread;
	/* What sym_variable_at needs of a thread (opaque, from ->thread or
	 * thread_of) and its name for messages: 0, or -1 if it is not held
	 * (running or gone), so that it has no registers to read. */
	int (*thread_view)(void *hook, void *thread, struct sym_thread_view *view,
			   const char **name);
	/* The event a predicate is judged against (opaque: the engine's),
	 * handed to event_atom, thread_cond and event_field as it is; NULL
	 * outside a predicate.  The hooks may record in it what they found
	 * (which atom matched). */
	void *event;
	/* Event atoms and thread conditions are the interpreter's business. */
	int (*event_atom)(void *hook, void *event, const struct expr *e, bool *out);
	int (*thread_cond)(void *hook, void *event, const struct expr *e, bool *out);
	/* The thread a thread variable is bound to, for T.var (NULL if none). */
	void *(*thread_of)(void *hook, const char *name);
	/* A field of the event at hand (NULL while checking: typed as 0): 0,
	 * 1 when there is no event to read, -1 on an error. */
	int (*event_field)(void *hook, void *event, enum event_field field, int64_t *out);
	/* proc(T): -1 if T is not bound */
	int (*thread_value)(void *hook, const struct expr *e, int64_t *out);
	/* choose(...): which of n values; NULL picks the first */
	int (*choose)(void *hook, const struct expr *e, int n);
	int64_t *locals; /* values of let/for variables, NULL while checking */
	void *hook;
	const struct schedule *sched;
	char *err;
	size_t errlen;
};

int eval_value(struct eval_ctx *c, const struct expr *e, struct value *out);
int eval_int(struct eval_ctx *c, const struct expr *e, int64_t *out);
/* e's value written to out for a person (the shell's print): an integer
 * as eval_int gives it, a struct, union or array whole (show.c). */
int eval_show(struct eval_ctx *c, const struct expr *e, FILE *out);
/* Address and size of an lvalue expression (for watchpoints). */
int eval_lvalue(struct eval_ctx *c, const struct expr *e, uint64_t *addr, uint64_t *size);
/* BITS bits of RAW from bit SHIFT on, read as TYPE reads them: sign
 * extended where it is signed (how a variable, a bitfield, or its part of
 * a wider store is an integer). */
int64_t eval_bits(uint64_t raw, unsigned shift, unsigned bits, const struct sym_type *type);
bool expr_has_event(const struct expr *e);
/* Calls fn on the operands of e in source order (stopping at, and returning,
 * the first negative result): for a chain of binary operations, those of the
 * whole chain (a, b and c for a + b - c), iterating along it, since it may be
 * as long as the file (ast.h); for any other node, lhs then rhs.  A walk that
 * recurses through this cannot overflow the stack. */
int expr_operands(const struct expr *e, int (*fn)(const struct expr *operand, void *ctx),
		  void *ctx);
/* Does the expression name a local or __thread variable (REF_VAR_AT)? */
bool expr_is_thread_relative(const struct expr *e);

/*
 * The one grammar of durations, shared by the language and the command line:
 * DIGITS ['.' DIGITS] UNIT, UNIT one of ms, s, m, h ("500ms", "1.5s", "2h").
 * TEXT need not be NUL-terminated; err may be NULL.  A number without a unit takes BARE_UNIT
 * ("s" on the command line) or is refused if BARE_UNIT is NULL.  Returns 0
 * and sets *ms, or -1 with a message in err ("bad duration '2x': use ms, s,
 * m or h", "duration too large", "... finer than a millisecond").
 */
int lang_parse_duration(const char *text, size_t len, const char *bare_unit, int64_t *ms, char *err,
			size_t errlen);

#endif
