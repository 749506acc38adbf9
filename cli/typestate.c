/*
 * typestate.c: `cctrace typestate [--model M] [--runs N] [--out DIR] --
 * PROGRAM ARGS`: the options into struct typestate_options, and the exit
 * code from the number of bugs manifested.  The method is
 * search/typestate.c's.
 */
#include "cli/typestate.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int typestate_main(struct cli_args *a)
{
	struct typestate_options o = {
	    .models = a->models,
	    .out_dir = a->out_path,
	    .runs = (int)a->eo.max_runs,
	    .attempt_ms = a->opt.timeout_ms,
	    .ignore_history = a->ignore_history,
	    .lock_order = a->lock_order,
	    .instances = (int)a->instances,
	    .report = stderr,
	    .driver = a->opt.driver,
	    .max_ms = a->eo.max_ms,
	};
	char err[1024];
	int bugs;

	if (a->noperands)
		return cli_usage_error("typestate", "unexpected operand '%s'", a->operands[0]);
	if (!a->program || !a->program[0])
		return cli_usage_error("typestate",
				       "no program: cctrace typestate -- PROGRAM [ARGS...]");
	bugs = typestate_run(a->program, &o, err, sizeof(err));
	free(a->models_joined);
	a->models_joined = NULL;
	if (engine_stop_signal()) { /* Ctrl-C, SIGTERM: 128 + the signal, as elsewhere */
		fprintf(stderr, "cctrace typestate: error: interrupted by %s\n",
			sigabbrev_np(engine_stop_signal()));
		return 128 + engine_stop_signal();
	}
	if (bugs < 0) {
		fprintf(stderr, "cctrace typestate: %s\n", err);
		return EXIT_ERROR;
	}
	return bugs > 0 ? EXIT_BUG : EXIT_COMPLETED;
}
