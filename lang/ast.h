/*
 * ast: the parsed form of a schedule file; part of lang.h, which includes it
 * (the functions over it are declared there).
 *
 * The parser (parse.c) turns text into this tree and reports syntax errors;
 * the checker (check.c) resolves names against the program's symbols; the
 * interpreter (interp.c) walks it.  Every node carries the source position
 * it came from so that any later stage can point a caret at it.
 *
 * Predicates and conditions share one expression type.  Event atoms
 * (E_EVENT) may appear only in the predicate of `run ... until` and `wait`;
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
#ifndef CCTRACE_LANG_AST_H
#define CCTRACE_LANG_AST_H

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
	/* event atoms: one kind, told apart by their row of the table of atoms
	 * the parser was given (atom) */
	E_EVENT,
};

/*
 * The syntax of an event atom, as a row of the table the parser is given
 * (the engine's table of atoms embeds one in each of its rows, and adds
 * what the atom means at run time: engine/atoms.c).  lang knows no atom by
 * name; it knows how each kind of argument is written, printed and checked.
 */
enum atom_arg {
	ATOM_ARG_NONE,	   /* start: the word alone (a '(' after it is an error) */
	ATOM_ARG_FUNCTION, /* enter(F): name = F; the checker sets slot to F's index in
			    * the function table (-1 for a bare `call`) */
	ATOM_ARG_LOCATION, /* at(FILE:LINE): name = FILE, ival = LINE; slot = its index */
	ATOM_ARG_LVALUE,   /* read(X): lhs = X; the checker sets slot (X's index among
			    * the watched lvalues) and ival (WATCH_BY_*) */
	ATOM_ARG_SIGNAL,   /* signal(SIGSEGV) or signal(11): ival = the number, 0 bare */
	ATOM_ARG_NAME,	   /* syscall(futex): name, ival = resolve(name), -1 bare */
};

struct atom_syntax {
	const char *name;
	enum atom_arg arg;
	/* The word alone is the atom too, meaning any such event (read,
	 * signal).  Without it, the word alone is a name (`enter` may be a
	 * program variable). */
	bool arg_optional;
	/* ATOM_ARG_NAME: what the argument is ("a system call name, e.g.
	 * futex"), and its number: >= 0, or -1 with a complete message (no
	 * position) in why. */
	const char *arg_what;
	int64_t (*resolve)(const char *name, char *why, size_t whylen);
};

/* The atoms a schedule may use: row i is at (const char *)first + i * stride,
 * so that a table whose rows embed a struct atom_syntax can be handed over
 * as it is. */
struct atom_table {
	const struct atom_syntax *first;
	size_t stride, n;
};

static inline const struct atom_syntax *atom_table_row(const struct atom_table *t, size_t i)
{
	return (const struct atom_syntax *)(const void *)((const char *)t->first + i * t->stride);
}

struct expr {
	enum expr_kind kind;
	const struct atom_syntax *atom; /* E_EVENT: which atom (a row of the parser's table) */
	struct src_loc loc;
	int op;	      /* E_UNARY, E_BINARY */
	int64_t ival; /* E_INT; E_EVENT: see enum atom_arg */
	char *name;   /* E_NAME, member, thread of E_ENDED/E_IN/E_PROC; E_EVENT: enum atom_arg */
	char *func;   /* E_IN: the function */
	struct expr *lhs, *rhs;
	struct expr *up;    /* the E_BINARY whose lhs this is (set by the parser; a tree
			     * built by hand must set it where a binary operation is the
			     * lhs of another), else NULL */
	struct expr **args; /* E_CHOOSE */
	int nargs;
	/* filled in by the checker */
	int slot;	    /* index into the run's resolved tables (threads, points, watches) */
	int ref;	    /* E_NAME: what the name denotes (enum name_ref in lang.h) */
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
	/* Serialized execution (cctrace test, engine/serial.c): */
	S_SERIAL, /* serial: from here on every thread, new ones included, is held unless a
		   * `run` (or a release) moves it; must come before any other statement
		   * that moves threads */
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

#endif
