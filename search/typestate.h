/*
 * search/typestate.h: typestate mode, 2ndStrike's method (Gao et al.,
 * ASPLOS'11) on unmodified binaries: `cctrace typestate`.
 *
 * Contract.  A model (tsmodel.c) is data: states, the functions that move
 * an object to a state (OP-transit) and the functions allowed only in some
 * states (OP-limit), each naming which argument or return value is the
 * object.  typestate_run() profiles one ordinary run of the program with
 * the models' functions tapped (engine run_hooks.tap), builds happens-
 * before from the synchronisation it saw, forms candidate pairs
 * (OP-transit in one thread, OP-limit in another, same object, reversal
 * violates the model, not ordered by happens-before), ranks them, drops
 * those the history says failed before, and re-executes the program once
 * per candidate under a generated schedule that holds the preceding
 * event's thread until the subsequent event has happened.  A bug is
 * reported only when that run ends in outcome bug: the call's own failure
 * (the model's `ok` condition false at its return, e.g. EBADF), a crash, an
 * abort, or the model's check that the limited operation ran on the object
 * in a state that forbids it.  Each bug gets bug-N.txt (the violation, the
 * object, both events with thread, place and stack) and bug-N.sched, which
 * `cctrace run --expect bug` replays.
 */
#ifndef CCTRACE_SEARCH_TYPESTATE_H
#define CCTRACE_SEARCH_TYPESTATE_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Where an operation finds its object: the return value, an argument
 * register, or element `index` of the int array an argument points to
 * (read at the return: pipe(fds)). */
enum ts_where { TS_RET, TS_ARG };
struct ts_object {
	enum ts_where where;
	int arg;   /* TS_ARG: 1..6 */
	int index; /* TS_ARG: -1 for the register itself, else an int array element */
};

struct ts_op {
	char *func;
	struct ts_object obj;
	bool transit;	  /* moves the object to `to` */
	int to;		  /* transit: the state */
	unsigned allowed; /* limit: bit s set if allowed in state s; 0: not a limit */
	char *ok;	  /* limit: schedule expression true when the call succeeded; NULL */
	/* transit of a block (its object the return value): its size is
	 * argument size_args[0], times size_args[1] if not 0; 0: no size */
	int size_args[2];
	int line; /* in the model's text */
};

struct ts_model {
	char *name;
	char *source; /* file name or "built-in" */
	char **states;
	int nstates;
	int initial;	  /* the state of an object first met by a limit */
	bool int_objects; /* objects are C ints (descriptors): the low 32 bits */
	int64_t *ignore;  /* values that are never objects (-1, NULL) */
	int nignore;
	struct ts_op *ops;
	int nops;
};

struct ts_models {
	struct ts_model *m;
	int n;
};

/* Parse a model file's text (one or more `model NAME` sections) into ms.
 * 0, or -1 with "path:line:col: error: ..." in err. */
int ts_models_parse(struct ts_models *ms, const char *text, const char *path, char *err,
		    size_t errlen);
/* The built-in models "file", "lock", "memory". */
int ts_models_builtin(struct ts_models *ms, const char *name, char *err, size_t errlen);
/* A --model argument: a comma-separated list of built-in names, or a file. */
int ts_models_load(struct ts_models *ms, const char *spec, char *err, size_t errlen);
void ts_models_free(struct ts_models *ms);
/* The text of a built-in model, NULL if unknown (docs, tests). */
const char *ts_builtin_text(const char *name);

struct typestate_options {
	const char *models;  /* --model; NULL: file,lock,memory */
	const char *out_dir; /* --out; NULL: typestate-out */
	int runs;	     /* --runs: most candidates re-executed; 0: all */
	int64_t attempt_ms;  /* limit of one re-execution's waits; 0: 5 s */
	bool ignore_history; /* --ignore-history */
	bool lock_order;     /* mutex unlock->lock edges are happens-before too */
	FILE *report;	     /* progress and results (stderr) */
	FILE *trace;	     /* --trace: re-executions' traces; NULL */
};

/* Find and manifest typestate bugs in argv.  Returns the number of bugs
 * manifested (>= 0), or -1 with err. */
int typestate_run(char *const argv[], const struct typestate_options *o, char *err, size_t errlen);

#endif
