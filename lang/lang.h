/*
 * Private declarations shared by the files of policy/.
 */
#ifndef CCTRACE_POLICY_INTERNAL_H
#define CCTRACE_POLICY_INTERNAL_H

#include "lang/ast.h"
#include "symbols/symbols.h"

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
 * REF_FIELD name). */
enum event_field { FIELD_ADDR, FIELD_SIZE, FIELD_VALUE, FIELD_FUNC, FIELD_LINE, NFIELDS };
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
};

/* --- vec.c --- */
/* Room for element n of the array *items (a T **) of capacity *cap:
 * 0, or -1 when memory is exhausted. */
int vec_reserve(void *items, int *cap, int n, size_t size);

/* --- check.c --- */
int lang_check(struct policy *pol, struct sym_space *syms, char *err, size_t errlen);
/* Check another schedule (a fragment typed in the shell) against pol's
 * tables, extending them. */
int lang_check_block(struct policy *pol, struct schedule *sched, struct sym_space *syms,
		       char *err, size_t errlen);

/* --- eval.c --- */
struct value {
	bool lvalue; /* addr/type name an object in target memory */
	int64_t i;   /* rvalue */
	uint64_t addr;
	const struct sym_type *type; /* NULL: a plain integer */
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
	/* Event atoms and thread conditions are the interpreter's business. */
	int (*event_atom)(void *hook, const struct expr *e, bool *out);
	int (*thread_cond)(void *hook, const struct expr *e, bool *out);
	/* The thread a thread variable is bound to, for T.var (NULL if none). */
	void *(*thread_of)(void *hook, const char *name);
	/* A field of the event at hand (NULL while checking: typed as 0). */
	int (*event_field)(void *hook, enum event_field field, int64_t *out);
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
/* Address and size of an lvalue expression (for watchpoints). */
int eval_lvalue(struct eval_ctx *c, const struct expr *e, uint64_t *addr, uint64_t *size);
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
int lang_parse_duration(const char *text, size_t len, const char *bare_unit, int64_t *ms,
			  char *err, size_t errlen);

#endif
