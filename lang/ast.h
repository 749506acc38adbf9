/*
 * ast: the parsed form of a schedule file (internal to policy/).
 *
 * The parser (parse.c) turns text into this tree and reports syntax errors;
 * the checker (check.c) resolves names against the program's symbols; the
 * interpreter (interp.c) walks it.  Every node carries the source position
 * it came from so that any later stage can point a caret at it.
 *
 * Predicates and conditions share one expression type.  Event atoms
 * (E_EV_*) may appear only in the predicate of `run ... until` and `wait`;
 * the checker enforces that.
 *
 * Depth: a chain of left-associative binary operators (a + b + c, a || b ||
 * c) is a left-deep tree, ((a + b) + c), as deep as the chain is long, and
 * only the size of the file bounds that.  Every other path through a tree is
 * bounded by the parser (parentheses, unary operators, ... : MAX_NESTING in
 * parse.c), and so is each statement's depth.  So every walk over an
 * expression iterates along the left spine of a chain (->lhs downwards,
 * ->up back) and recurses only into the other operands: a schedule of any
 * size cannot overflow the stack.
 */
#ifndef CCTRACE_POLICY_AST_H
#define CCTRACE_POLICY_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct src_loc {
	int line; /* 1-based */
	int col;  /* 1-based, in bytes */
};

enum expr_kind {
	/* values */
	E_INT,	  /* ival */
	E_NAME,	  /* name: a schedule thread variable, program variable or enumerator */
	E_UNARY,  /* op in {'-', '!', '~', '*' (deref), '&' (address-of)}, lhs */
	E_BINARY, /* op is a token kind (T_OROR, T_EQ, '+', ...), lhs, rhs */
	E_MEMBER, /* lhs.name */
	E_ARROW,  /* lhs->name */
	E_INDEX,  /* lhs[rhs] */
	E_CHOOSE, /* choose(a, b, c): args[0..nargs); choose(lo..hi): nargs 0, lhs..rhs.
		   * The oracle of `cctrace explore` picks one value per run.  op is
		   * '*' when the parser made it for `while (*)` (args 1, 0). */
	/* thread conditions */
	E_ENDED, /* ended(name) */
	E_IN,	 /* in(name, func) : thread `name` has `func` on its stack;
		  * in(func): the thread of the event at hand (name NULL) */
	E_PROC,	 /* proc(name): the pid of the process of thread `name` (a value) */
	/* event atoms */
	E_EV_START,   /* start */
	E_EV_EXIT,    /* exit */
	E_EV_ENTER,   /* enter(func) */
	E_EV_RETURN,  /* return(func) */
	E_EV_AT,      /* at(file:line) */
	E_EV_READ,    /* read(lhs)  lhs is an lvalue expression; bare `read`: lhs NULL,
		       * any instruction that reads memory (not the stack) */
	E_EV_WRITE,   /* write(lhs), bare `write` */
	E_EV_SIGNAL,  /* signal, or signal(SIGNAME) with ival = signal number */
	E_EV_BLOCKED, /* blocked: the thread sleeps in the kernel (a lock another thread holds) */
	E_EV_CALL,    /* call, call(func): about to execute a call instruction (to func) */
	E_EV_SYSCALL, /* syscall, syscall(NAME): about to make a system call; ival = its
		       * number, -1 for any; name = NAME */
	E_EV_FORK,    /* fork: the thread has just created a process (fork, vfork, clone) */
	E_EV_EXEC,    /* exec: the thread's process has just executed a new program */
};

struct expr {
	enum expr_kind kind;
	struct src_loc loc;
	int op;	      /* E_UNARY, E_BINARY */
	int64_t ival; /* E_INT; E_EV_SIGNAL (0 = any); E_EV_AT line */
	char *name;   /* E_NAME, member, thread of E_ENDED/E_IN/E_PROC, func, file of E_EV_AT */
	char *func;   /* E_IN: the function */
	struct expr *lhs, *rhs;
	struct expr *up;    /* the E_BINARY whose lhs this is (set by the parser; a tree
			     * built by hand must set it where a binary operation is the
			     * lhs of another), else NULL */
	struct expr **args; /* E_CHOOSE */
	int nargs;
	/* filled in by the checker */
	int slot;	    /* index into the run's resolved tables (threads, points, watches) */
	int ref;	    /* E_NAME: what the name denotes (enum name_ref in policy/internal.h) */
	int64_t enum_value; /* E_NAME that is an enumerator */
};

enum stmt_kind {
	S_TIMEOUT, /* timeout_ms */
	S_WAIT,	   /* [thread A, B =] wait N distinct PRED | wait any PRED */
	S_RUN,	   /* run A, B until PRED */
	S_IF,	   /* if (cond) {body} [else {else_body}] ; else if chains nest an S_IF */
	S_WHILE,   /* while (cond) {body} ; while (*): cond is E_CHOOSE(1, 0) */
	S_REPEAT,  /* repeat N {body} */
	S_ASSERT,  /* assert cond */
	S_RELEASE, /* release all | release A, B */
	/* Statements the interactive shell records (also valid in files): */
	S_STEP,	  /* step A [N]: A executes N machine instructions (count; default 1) */
	S_NEXT,	  /* next A: A runs until it is on another source line of the same
		   * function, or has returned from it */
	S_FINISH, /* finish A: A runs until the function it is in returns */
	S_HOLD,	  /* hold A, B: stop bound threads that run freely, where they are */
	S_BIND,	  /* thread T = p1.t3: bind the thread with that stable name, holding
		   * it where it is (names[0] = T, target = "p1.t3") */
	/* Search (cctrace explore): */
	S_CHOOSE_THREAD, /* thread T = choose(A, B, C): names[0] = T, choices[] = A, B, C */
	S_ASSUME,	 /* assume(cond) or assume cond: a false one ends the run as infeasible */
	S_LET,		 /* let x = EXPR: a schedule integer variable (names[0], cond = EXPR) */
	S_FOR,		 /* for i in LO..HI { body }: names[0] = i, lo/hi inclusive */
};

struct stmt {
	enum stmt_kind kind;
	struct src_loc loc;
	struct stmt *next;
	/* S_WAIT binds names[0..n_names) (may be 0); S_RUN and S_RELEASE use them */
	char **names;
	struct src_loc *name_locs;
	int n_names;
	bool all;	    /* release all */
	int64_t count;	    /* S_WAIT: N (1 for `any`); S_REPEAT: N */
	bool distinct;	    /* S_WAIT: `distinct` was written */
	bool processes;	    /* S_WAIT: `distinct processes`: one thread per process */
	int64_t timeout_ms; /* S_TIMEOUT */
	struct expr *pred;  /* S_WAIT, S_RUN: the until/wait predicate */
	struct expr *cond;  /* S_IF, S_WHILE, S_ASSERT, S_ASSUME; S_LET: the value */
	struct stmt *body, *else_body;
	char *target;	/* S_BIND: the thread's stable name, "p1.t3" */
	char **choices; /* S_CHOOSE_THREAD: the thread variables to choose among */
	struct src_loc *choice_locs;
	int nchoices;
	struct expr *lo, *hi; /* S_FOR */
};

struct schedule {
	char *path; /* as given by the user */
	char *text; /* the whole file, NUL-terminated */
	struct stmt *body;
	char *run_comment; /* text after "# run:" on the first line, or NULL */
};

/* The lowest operation of the chain that e (an E_BINARY) heads: for
 * a + b - c, parsed ((a + b) - c), the node (a + b).  Its lhs is the chain's
 * first operand; from it, ->up leads back to e through every operation in
 * source order.  Const in, non-const out, like strchr. */
static inline struct expr *expr_chain_bottom(const struct expr *e)
{
	while (e->lhs->kind == E_BINARY)
		e = e->lhs;
	return (struct expr *)e;
}

/* Token kinds beyond single characters (single-character tokens use their
 * ASCII value: '(' ')' '{' '}' ',' ';' '.' '[' ']' '+' '-' '*' '/' '%' '<' '>'
 * '!' '~' '&' '|' '^' '=' ':' ). */
enum {
	T_EOF = 256,
	T_NEWLINE,
	T_IDENT,
	T_INT,
	T_DURATION, /* 2s, 500ms, 1m : value in milliseconds */
	T_OROR,
	T_ANDAND,
	T_EQ,
	T_NE,
	T_LE,
	T_GE,
	T_SHL,
	T_SHR,
	T_ARROW,
	T_DOTDOT, /* ".." in choose(LO..HI) and for i in LO..HI */
};

/*
 * Parse a schedule.  On success returns a schedule (free with
 * schedule_free).  On a syntax error returns NULL and writes to err a
 * complete, printable diagnostic:
 *     sched.txt:3:17: error: expected 'until' after thread list
 *         run A, B untl enter(audit)
 *                  ^
 */
struct schedule *schedule_parse(const char *path, const char *text, char *err, size_t errlen);
struct schedule *schedule_load(const char *path, char *err, size_t errlen); /* reads the file */
void schedule_free(struct schedule *s);

/* Format "path:line:col: error: msg" plus the source line and a caret into
 * buf, the same way the parser does, for errors found by later stages. */
void schedule_diag(const struct schedule *s, struct src_loc loc, char *buf, size_t len,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Writes e as C-like text into buf (always NUL-terminated when len > 0):
 * nested binary operations are fully parenthesised, e.g. "a || (b && !c)",
 * events print as written ("enter(f)", "at(bank.c:41)").  Returns the length
 * written (truncated to len - 1).  For traces, messages and tests. */
size_t expr_format(const struct expr *e, char *buf, size_t len);

/* Pretty-prints the statements of s, one per line, blocks indented by 8
 * spaces, expressions with only the parentheses they need (never nested
 * deeper than written); the output parses back to the same tree.  For tests
 * and debugging. */
void schedule_dump(const struct schedule *s, FILE *out);

#endif
