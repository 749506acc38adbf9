/*
 * Typestate mode (cctrace typestate, 2ndStrike): on the three samples of
 * typestate bugs (a descriptor read after another thread closed it, a
 * mutex destroyed while another thread locks it, a heap block freed while
 * another thread uses it) the profile finds the candidate, the
 * re-execution manifests it, and the bug-N.sched it writes replays 10 of
 * 10 times with `cctrace run --expect bug`; the correctly synchronised
 * controls (--fixed: join before destroy or free) give no candidate at
 * all; the model parser reports mistakes as file:line:col; a user's model
 * file is used as the built-in ones are; the history prunes what failed
 * before.  tests/test_pbzip2.c is the real pbzip2 0.9.4.
 */
#include "harness.h"
#include "search/search.h"

#include <sys/stat.h>

TestSuite(typestate, .fini = h_cleanup, .timeout = 240);

/* `cctrace typestate ARGS -o DIR -- PROG...` */
static struct h_result typestate(const char *dir, const char *const *args, int nargs,
				 const char *const *prog)
{
	const char *argv[32];
	int n = 0, i;

	argv[n++] = h_cctrace();
	argv[n++] = "typestate";
	for (i = 0; i < nargs; i++)
		argv[n++] = args[i];
	argv[n++] = "-o";
	argv[n++] = dir;
	argv[n++] = "--";
	for (i = 0; prog[i]; i++)
		argv[n++] = prog[i];
	argv[n] = NULL;
	cr_assert(n < 32);
	return h_run(argv, 200);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* The bug is manifested, its report names both calls, and its schedule
 * replays 10 of 10 times.  Its `# run:` line, run as written, exits 1 as
 * explore's and test's do: the bug is a failure (it carried --expect bug,
 * which made it 0). */
static void expect_bug(const char *dir, struct h_result *r, const char *limit, const char *transit,
		       const char *state)
{
	char *txt;

	cr_assert_eq(r->code, 1, "exit %d\n%s", r->code, r->err);
	cr_assert(strstr(r->err, "manifested"), "%s", r->err);
	cr_assert(exists(h_fmt("%s/bug-1.sched", dir)), "%s", r->err);
	txt = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert_not_null(txt);
	cr_assert(strstr(txt, h_fmt("%s on", limit)), "%s", txt);
	cr_assert(strstr(txt, h_fmt("in state %s", state)), "%s", txt);
	cr_assert(strstr(txt, h_fmt("%s(", transit)), "%s", txt);
	cr_assert(strstr(txt, "call stack:"), "%s", txt);
	cr_assert_eq(h_bug_replays(h_run_line(h_fmt("%s/bug-1.sched", dir)), 10), 10);
	cr_expect_eq(system(h_fmt("%s run -q %s >/dev/null 2>&1", h_cctrace(),
				  h_run_line(h_fmt("%s/bug-1.sched", dir)))),
		     1 << 8, "the run line as written");
	h_free(txt);
}

Test(typestate, fdclose_read_after_close)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "file"};
	struct h_result r =
	    typestate(dir, args, 2, (const char *const[]){"samples/fdclose/fdclose", NULL});
	char *txt;

	expect_bug(dir, &r, "read", "close", "CLOSED");
	/* The call itself saw it: read() failed with EBADF. */
	txt = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(strstr(txt, ".errno = 9"), "%s", txt);
	h_free(txt);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A violation the profile itself saw, with an order no model knows (an
 * atomic flag), on a descriptor from open(): found, and replayed (it was
 * "0 candidates", then "not manifested"). */
Test(typestate, a_violation_the_profile_saw_in_a_flagged_order)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "file", "--timeout", "2s"};
	struct h_result r =
	    typestate(dir, args, 4, (const char *const[]){"tests/fixtures/tsafter", "a b", NULL});

	expect_bug(dir, &r, "write", "close", "CLOSED");
	/* the attempt its report cites is kept */
	cr_expect(exists(h_fmt("%s/attempt-1.sched", dir)));
	/* the replay line is for a shell: an argument with a space quoted */
	cr_expect(strstr(h_run_line(h_fmt("%s/bug-1.sched", dir)), "tsafter 'a b'"), "%s",
		  h_run_line(h_fmt("%s/bug-1.sched", dir)));
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A program that ends in a bug in the profile run itself, with no
 * candidate, has a bug: exit 1, said so (it was "0 bugs", exit 0). */
Test(typestate, a_bug_in_the_profile_run_is_no_clean_result)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "2s"};
	struct h_result r =
	    typestate(dir, args, 4, (const char *const[]){"tests/fixtures/tsforeign", NULL});

	cr_expect_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "but the program ended in a bug in the profile run itself"), "%s",
		  r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

Test(typestate, lock_destroyed_while_locked)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "2s", "--runs", "2"};
	struct h_result r =
	    typestate(dir, args, 6, (const char *const[]){"samples/lockdestroy/lockdestroy", NULL});
	char *txt;

	expect_bug(dir, &r, "pthread_mutex_lock", "pthread_mutex_destroy", "INVALID");
	/* glibc's answer for a destroyed mutex, EINVAL, failed the model's ok. */
	txt = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(strstr(txt, "!= 22"), "%s", txt);
	h_free(txt);
	h_result_free(&r);
	h_remove_tree(dir);
}

Test(typestate, heap_freed_while_used)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "memory", "--timeout", "2s", "--runs", "2"};
	struct h_result r =
	    typestate(dir, args, 6, (const char *const[]){"samples/heapuse/heapuse", NULL});

	expect_bug(dir, &r, "pthread_mutex_lock", "free", "FREED");
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A use after free by a plain load: no call takes the block, so only the
 * stepping profile (the memory model's deref) sees it; the re-execution
 * holds the load at its instruction until main has freed the block, and
 * the model's own check (the thread touched the freed block) is the
 * evidence.  The control (--fixed: join before free) is stepped too and
 * gives no candidate. */
Test(typestate, heap_read_after_free_by_plain_load)
{
	char *dir = h_temp_dir(), *fixed_dir = h_temp_dir();
	const char *args[] = {"--model", "memory", "--timeout", "2s", "--runs", "1"};
	struct h_result r =
	    typestate(dir, args, 6, (const char *const[]){"samples/heapload/heapload", NULL});
	struct h_result c =
	    typestate(fixed_dir, args, 6,
		      (const char *const[]){"samples/heapload/heapload", "--fixed", NULL});
	char *txt;

	cr_assert(strstr(r.err, "stepping profile: 1 shared block, 1 thread decoded"), "%s", r.err);
	expect_bug(dir, &r, TS_DEREF_FUNC, "free", "FREED");
	txt = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(strstr(txt, "4-byte load"), "%s", txt);
	cr_assert(strstr(txt, "at summer+0x"), "%s", txt);
	h_free(txt);
	cr_assert_eq(c.code, 0, "exit %d\n%s", c.code, c.err);
	cr_assert(strstr(c.err, "stepping profile: 1 shared block"), "%s", c.err);
	cr_assert(strstr(c.err, " 0 candidates"), "%s", c.err);
	h_result_free(&r);
	h_result_free(&c);
	h_remove_tree(dir);
	h_remove_tree(fixed_dir);
}

/* Lock pairing: a mutex is HELD by the thread that locked it.  The worker
 * says "done" before its unlock; re-executed with the unlock held, main's
 * destroy meets a held mutex and glibc answers EBUSY. */
Test(typestate, lock_destroyed_while_held)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "2s", "--runs", "2"};
	struct h_result r =
	    typestate(dir, args, 6, (const char *const[]){"samples/lockheld/lockheld", NULL});
	char *txt;

	expect_bug(dir, &r, "pthread_mutex_destroy", "pthread_mutex_unlock", "HELD");
	txt = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(strstr(txt, "!= 16"), "%s", txt);		/* EBUSY failed the model's ok */
	cr_assert(strstr(txt, "\n  retval = 16\n"), "%s", txt); /* and the value says so */
	cr_assert(strstr(txt, "held by p1.t2"), "%s", txt);
	h_free(txt);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A close made by a raw system call, syscall(SYS_close, fd), which libc's
 * close() never sees: the profile taps libc's syscall() too (the file
 * model names system calls), and the re-execution holds the reader until
 * that call has closed the descriptor. */
Test(typestate, raw_syscall_close)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "file", "--timeout", "2s"};
	struct h_result r = typestate(
	    dir, args, 4, (const char *const[]){"samples/fdclose/fdclose", "--raw", NULL});
	char *profile = h_read_file(h_fmt("%s/profile.txt", dir), NULL);
	char *sched;

	cr_assert(strstr(profile, "close(0x3, ") && strstr(profile, " via syscall()"), "%s",
		  profile);
	expect_bug(dir, &r, "read", "close", "CLOSED");
	sched = h_read_file(h_fmt("%s/bug-1.sched", dir), NULL);
	cr_assert(strstr(sched, "enter(syscall) && arg1 == 3 && (arg2 & 0xffffffff) == 3"), "%s",
		  sched);
	cr_assert(strstr(sched, "fdclose --raw"), "%s", sched);
	h_free(sched);
	h_free(profile);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A close by a syscall instruction of the program's own (no libc
 * function): the file model names system calls, so the profile stops at
 * them too; the re-execution holds the close at its system-call stop and
 * steps it. */
Test(typestate, inline_syscall_close)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "file", "--timeout", "2s"};
	struct h_result r = typestate(
	    dir, args, 4, (const char *const[]){"samples/fdclose/fdclose", "--inline", NULL});
	char *profile = h_read_file(h_fmt("%s/profile.txt", dir), NULL);
	char *sched;

	cr_assert(strstr(profile, "close(0x3, ") && strstr(profile, " by a syscall instruction"),
		  "%s", profile);
	expect_bug(dir, &r, "read", "close", "CLOSED");
	sched = h_read_file(h_fmt("%s/bug-1.sched", dir), NULL);
	cr_assert(strstr(sched, "syscall(close) && (arg1 & 0xffffffff) == 3 && in(inline_close)"),
		  "%s", sched);
	cr_assert(strstr(sched, "the system call runs"), "%s", sched);
	h_free(sched);
	h_free(profile);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* Lock pairing within one thread: its own second unlock of a mutex it no
 * longer holds is a violation the profile observes; it is reported (held
 * at the first unlock, run to the second, nothing of its own between) with
 * a schedule that replays it.  The control unlocks once. */
Test(typestate, own_unlock_of_an_unlocked_mutex)
{
	char *dir = h_temp_dir(), *fixed_dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "2s"};
	struct h_result r =
	    typestate(dir, args, 4, (const char *const[]){"tests/fixtures/tsselfunlock", NULL});
	struct h_result c =
	    typestate(fixed_dir, args, 4,
		      (const char *const[]){"tests/fixtures/tsselfunlock", "--fixed", NULL});

	cr_assert(strstr(r.err, "candidate 1/1: own lock"), "%s", r.err);
	expect_bug(dir, &r, "pthread_mutex_unlock", "pthread_mutex_unlock", "READY");
	cr_assert_eq(c.code, 0, "exit %d\n%s", c.code, c.err);
	cr_assert(strstr(c.err, " 0 candidates"), "%s", c.err);
	h_result_free(&r);
	h_result_free(&c);
	h_remove_tree(dir);
	h_remove_tree(fixed_dir);
}

/* A transit that fails moves nothing: the helper's destroy of the mutex
 * main holds answers EBUSY, so main's later lock is no use of a destroyed
 * mutex (no pair with the destroy as a transit); the destroy of a held
 * lock itself is the bug found (main's unlock held until it). */
Test(typestate, failed_transit_moves_nothing)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "1s"};
	struct h_result r = typestate(
	    dir, args, 4, (const char *const[]){"samples/lockheld/lockheld", "--busy", NULL});
	char *cands = h_read_file(h_fmt("%s/candidates.txt", dir), NULL);
	char *profile = h_read_file(h_fmt("%s/profile.txt", dir), NULL);

	cr_assert_not_null(cands);
	cr_assert(strstr(profile, "return pthread_mutex_destroy") && strstr(profile, ") = 0x10\t"),
		  "the destroy did not fail with EBUSY:\n%s", profile);
	cr_assert(!strstr(cands, "pthread_mutex_destroy->INVALID"), "%s", cands);
	expect_bug(dir, &r, "pthread_mutex_destroy", "pthread_mutex_unlock", "HELD");
	h_free(cands);
	h_free(profile);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* ...but another order may let a failed transit succeed.  lockbusy's
 * destroy fails in every plain run (EBUSY: worker a holds the mutex), after
 * worker b's lock; held before that lock, b lets main destroy a free mutex,
 * and b's lock meets a destroyed one (EINVAL).  The profile's own order
 * gives no successful destroy to pair with, so only the failed one can
 * find it: the candidate the lockdestroy sample's profile gives when its
 * worker is descheduled between its last count and its last lock. */
Test(typestate, failed_transit_may_succeed_in_another_order)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "2s"};
	struct h_result r =
	    typestate(dir, args, 4, (const char *const[]){"tests/fixtures/lockbusy", NULL});
	char *profile = h_read_file(h_fmt("%s/profile.txt", dir), NULL), *txt = NULL;
	int n;

	cr_assert_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_assert(strstr(profile, "return pthread_mutex_destroy") && strstr(profile, ") = 0x10\t"),
		  "the destroy did not fail with EBUSY:\n%s", profile);
	for (n = 1; h_free(txt), (txt = h_read_file(h_fmt("%s/bug-%d.txt", dir, n), NULL)); n++)
		if (strstr(txt, "failed in that state") && strstr(txt, "called from worker_b"))
			break;
	cr_assert_not_null(txt, "no bug held worker b's lock before the failed destroy:\n%s",
			   r.err);
	cr_assert(strstr(txt, "pthread_mutex_lock on 0x"), "%s", txt);
	cr_assert(strstr(txt, "in state INVALID"), "%s", txt);
	cr_assert(strstr(txt, "!= 22"), "%s", txt); /* the lock itself answered EINVAL */
	cr_assert_eq(h_bug_replays(h_run_line(h_fmt("%s/bug-%d.sched", dir, n)), 10), 10);
	h_free(txt);
	h_free(profile);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* One candidate, three instances from two call stacks (path_a twice,
 * path_b once; an unseen atomic flag keeps every attempt from
 * manifesting): re-executed once per instance that matters, the latest of
 * each stack then the first, each matched by its instance number; with
 * --instances 1 only the latest. */
Test(typestate, instances_per_call_stack)
{
	static const char *const prog[] = {"tests/fixtures/tsinstances", NULL};
	char *dir = h_temp_dir(), *one = h_fmt("%s/one", dir);
	const char *args[] = {"--model", "memory", "--timeout", "1s", "--runs", "1"};
	const char *args1[] = {"--model", "memory", "--timeout",   "1s",
			       "--runs",  "1",	    "--instances", "1"};
	struct h_result r = typestate(dir, args, 6, prog), r1;
	char *a[3];
	int i;

	cr_assert_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	a[0] = h_read_file(h_fmt("%s/attempt-1.sched", dir), NULL);
	a[1] = h_read_file(h_fmt("%s/attempt-1.2.sched", dir), NULL);
	a[2] = h_read_file(h_fmt("%s/attempt-1.3.sched", dir), NULL);
	for (i = 0; i < 3; i++)
		cr_assert_not_null(a[i], "attempt %d missing:\n%s", i + 1, r.err);
	cr_assert(strstr(a[0], "\nrepeat 2 {"), "%s", a[0]); /* path_b's */
	cr_assert(strstr(a[1], "\nrepeat 1 {"), "%s", a[1]); /* path_a's latest */
	cr_assert(!strstr(a[2], "\nrepeat "), "%s", a[2]);   /* the first */
	cr_assert(!exists(h_fmt("%s/attempt-1.4.sched", dir)));
	r1 = typestate(one, args1, 8, prog);
	cr_assert_eq(r1.code, 0, "exit %d\n%s", r1.code, r1.err);
	cr_assert(exists(h_fmt("%s/attempt-1.sched", one)));
	cr_assert(!exists(h_fmt("%s/attempt-1.2.sched", one)));
	for (i = 0; i < 3; i++)
		h_free(a[i]);
	h_result_free(&r);
	h_result_free(&r1);
	h_remove_tree(dir);
}

/* Join before destroy or free: happens-before orders every use first. */
Test(typestate, synchronised_controls_report_nothing)
{
	static const char *const progs[][3] = {
	    {"samples/lockdestroy/lockdestroy", "--fixed", NULL},
	    {"samples/heapuse/heapuse", "--fixed", NULL},
	    {"samples/lockheld/lockheld", "--fixed", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char *dir = h_temp_dir();
		const char *args[] = {"--model", "file,lock,memory", "--timeout", "2s"};
		struct h_result r = typestate(dir, args, 4, progs[i]);

		cr_assert_eq(r.code, 0, "%s: exit %d\n%s", progs[i][0], r.code, r.err);
		cr_assert(strstr(r.err, " 0 candidates"), "%s: %s", progs[i][0], r.err);
		cr_assert(!exists(h_fmt("%s/bug-1.sched", dir)));
		h_result_free(&r);
		h_remove_tree(dir);
	}
}

/* A user's model file: the lock model's destroy-then-lock, as an
 * application would write it for its own API. */
Test(typestate, user_model_file)
{
	char *dir = h_temp_dir();
	char *model = h_fmt("%s/mutex.ts", dir);
	const char *args[] = {"--model", model, "--timeout", "2s", "--runs", "2"};
	struct h_result r;

	h_write_file(model,
		     "# my own mutex model\n"
		     "model mymutex\n"
		     "states USABLE GONE\n"
		     "initial USABLE\n"
		     "object pointer\n"
		     "ignore 0\n"
		     "transit pthread_mutex_destroy(arg1) -> GONE\n"
		     "limit pthread_mutex_lock(arg1) in USABLE ok (retval & 0xffffffff) == 0\n");
	r = typestate(dir, args, 6, (const char *const[]){"samples/lockdestroy/lockdestroy", NULL});
	expect_bug(dir, &r, "pthread_mutex_lock", "pthread_mutex_destroy", "GONE");
	h_result_free(&r);
	h_remove_tree(dir);
}

/* "typestate: C candidates, P pruned by the history, R re-executed" */
static void summary(const char *err, int *cands, int *pruned, int *tried)
{
	const char *p = strstr(err, " pruned by the history");

	cr_assert_not_null(p, "%s", err);
	while (p > err && p[-1] != '\n')
		p--;
	cr_assert_eq(sscanf(p, "typestate: %d candidate%*[s], %d pruned by the history, %d", cands,
			    pruned, tried) == 3 ||
			 sscanf(p, "typestate: %d candidate, %d pruned by the history, %d", cands,
				pruned, tried) == 3,
		     true, "%s", p);
}

/* Candidates that failed are remembered in DIR/typestate-history and not
 * tried again, unless --ignore-history.  (The loop's locks of heapuse
 * cannot be held while main frees the job: they fail every time.) */
Test(typestate, history_prunes_failed_candidates)
{
	char *dir = h_temp_dir();
	/* the lock model: no stepping profile, whose keys' outer frames unwind
	 * differently from the call profile's (docs/typestate.md) */
	const char *args[] = {"--model", "lock", "--timeout", "1s"};
	const char *again[] = {"--model", "lock", "--timeout", "1s", "--ignore-history"};
	const char *const prog[] = {"samples/lockdestroy/lockdestroy", NULL};
	struct h_result r = typestate(dir, args, 4, prog);
	char *history;
	int cands, pruned, tried;

	summary(r.err, &cands, &pruned, &tried);
	cr_assert_eq(pruned, 0, "%s", r.err);
	history = h_read_file(h_fmt("%s/typestate-history", dir), NULL);
	cr_assert_not_null(history, "%s", r.err);
	cr_assert_gt(h_count_lines(history, "lock "), 0, "no failed candidate:\n%s", r.err);
	h_result_free(&r);

	r = typestate(dir, args, 4, prog);
	summary(r.err, &cands, &pruned, &tried);
	cr_assert_gt(pruned, 0, "%s", r.err);
	cr_assert_eq(tried, cands - pruned, "%s", r.err);
	h_result_free(&r);

	r = typestate(dir, again, 5, prog);
	summary(r.err, &cands, &pruned, &tried);
	cr_assert_eq(pruned, 0, "%s", r.err);
	cr_assert_eq(tried, cands, "%s", r.err);
	h_result_free(&r);
	h_free(history);
	h_remove_tree(dir);
}

/* --- the model parser, in process --- */

static void expect_parse_error(const char *text, const char *where, const char *what)
{
	struct ts_models ms = {0};
	char err[512];

	cr_assert_eq(ts_models_parse(&ms, text, "m.ts", err, sizeof(err)), -1, "accepted:\n%s",
		     text);
	cr_assert(strstr(err, where), "'%s' lacks '%s'", err, where);
	cr_assert(strstr(err, what), "'%s' lacks '%s'", err, what);
	ts_models_free(&ms);
}

Test(typestate, model_parse_errors_have_positions)
{
	expect_parse_error("states A\n", "m.ts:1:1:", "expected 'model NAME' first");
	expect_parse_error("model m\nstates A B\ntransit f(arg1) -> C\n",
			   "m.ts:3:20:", "unknown state 'C'");
	expect_parse_error("model m\nstates A\ntransit f(arg7) -> A\n",
			   "m.ts:3:11:", "expected ret or arg1..arg6");
	expect_parse_error("model m\nstates A\nlimit f(arg1) A\n", "m.ts:3:15:", "expected 'in'");
	expect_parse_error("model m\nstates A\ntransit f(arg1) A\n", "m.ts:3:17:", "expected '->'");
	expect_parse_error("model m\nstates A\nfrobnicate\n",
			   "m.ts:3:1:", "unknown keyword 'frobnicate'");
	expect_parse_error("model m\nstates A A\n", "m.ts:2:10:", "state declared twice");
	expect_parse_error("model m\nstates A\n", "m.ts", "has no transit or limit");
	expect_parse_error("model m\nstates A\nlimit f(arg1) in A ok\n",
			   "m.ts:3:22:", "expected an expression after 'ok'");
	expect_parse_error("model m\nstates A\ntransit f(arg1) -> A size arg2\n",
			   "m.ts:3:22:", "only a transit of its return value");
	expect_parse_error("model m\nstates A\ntransit f(ret) -> A size arg2*x\n",
			   "m.ts:3:31:", "expected argM after '*'");
	expect_parse_error("model m\nstates A\nowned B\n", "m.ts:3:7:", "unknown state 'B'");
	expect_parse_error(
	    "model m\nstates A\ntransit f(arg1) -> A entry ok retval == 0\n",
	    "m.ts:3:", "a transit at entry has its object in an argument, and no ok");
	expect_parse_error("model m\nstates A\ntransit f(arg1) -> A ok\n",
			   "m.ts:3:24:", "expected an expression after 'ok'");
	expect_parse_error("model m\nderef A\n", "m.ts:2:1:", "declare the states before deref");
	expect_parse_error("model m\nstates A\nderef B\n", "m.ts:3:7:", "unknown state 'B'");
	expect_parse_error("model m\nstates A\nderef\n", "m.ts:3:", "expected state names");
	expect_parse_error("model m\nstates A\nderef A\nderef A\n",
			   "m.ts:4:7:", "deref given twice");
	/* an ok's syntax is the language's, said here, not of a generated
	 * schedule after the profile */
	expect_parse_error("model m\nstates A\nlimit f(arg1) in A ok retval ==\n",
			   "m.ts:3:32:", "expected an expression, found end of line");
	expect_parse_error("model m\nstates A\ntransit f(arg1) -> A ok ((retval\n",
			   "m.ts:3:33:", "expected ')' to close '(' at 3:26");
}

/* The lock model's words: owned states, limits that wait for the owner,
 * transits at entry and transits with an ok condition. */
Test(typestate, model_parse_owned_waits_entry_ok)
{
	static const char text[] = "model m\n"
				   "states FREE HELD\n"
				   "owned HELD\n"
				   "object pointer\n"
				   "transit take(arg1) -> HELD ok retval == 0\n"
				   "transit give(arg1) -> FREE entry\n"
				   "limit take(arg1) in FREE waits ok retval != 22\n"
				   "limit give(arg1) in HELD\n";
	struct ts_models ms = {0};
	char err[512];
	const struct ts_model *m;

	cr_assert_eq(ts_models_parse(&ms, text, "m.ts", err, sizeof(err)), 0, "%s", err);
	m = &ms.m[0];
	cr_assert_eq(m->owned, 2u);
	cr_assert_eq(m->nops, 4);
	cr_assert(m->ops[0].transit && !m->ops[0].at_entry);
	cr_assert_str_eq(m->ops[0].ok, "retval == 0");
	cr_assert(m->ops[1].transit && m->ops[1].at_entry && !m->ops[1].ok);
	cr_assert(m->ops[2].waits && m->ops[2].allowed == 1u);
	cr_assert_str_eq(m->ops[2].ok, "retval != 22");
	cr_assert(!m->ops[3].waits && m->ops[3].allowed == 2u);
	ts_models_free(&ms);
}

Test(typestate, model_parse_builtins_and_objects)
{
	struct ts_models ms = {0};
	char err[512];
	int i, pipes = 0, derefs = 0;

	cr_assert_eq(ts_models_load(&ms, "file,lock,memory", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ms.n, 3);
	cr_assert_str_eq(ms.m[0].name, "file");
	cr_assert(ms.m[0].int_objects);
	cr_assert(!ms.m[1].int_objects);
	for (i = 0; i < ms.m[0].nops; i++)
		if (strcmp(ms.m[0].ops[i].func, "pipe") == 0) {
			cr_assert_eq(ms.m[0].ops[i].obj.where, TS_ARG);
			cr_assert_eq(ms.m[0].ops[i].obj.arg, 1);
			cr_assert_eq(ms.m[0].ops[i].obj.index, pipes);
			pipes++;
		}
	cr_assert_eq(pipes, 2);
	for (i = 0; i < ms.m[2].nops; i++) {
		if (strcmp(ms.m[2].ops[i].func, "calloc") == 0) {
			cr_assert_eq(ms.m[2].ops[i].size_args[0], 1);
			cr_assert_eq(ms.m[2].ops[i].size_args[1], 2);
		}
		/* deref LIVE: a load or store in a block, a limit in LIVE only */
		if (strcmp(ms.m[2].ops[i].func, TS_DEREF_FUNC) == 0)
			derefs += !ms.m[2].ops[i].transit && ms.m[2].ops[i].allowed == 1u;
	}
	cr_assert_eq(derefs, 1);
	ts_models_free(&ms);
	cr_assert_eq(ts_models_load(&ms, "file,nosuch", err, sizeof(err)), -1);
	cr_assert(strstr(err, "no built-in model 'nosuch'"), "%s", err);
	ts_models_free(&ms);
	/* no model at all is an error, not a run that can find nothing */
	cr_assert_eq(ts_models_load(&ms, "", err, sizeof(err)), -1);
	cr_assert(strstr(err, "names no model"), "%s", err);
	ts_models_free(&ms);
	cr_assert_eq(ts_models_load(&ms, "lock,,file", err, sizeof(err)), -1);
	cr_assert(strstr(err, "names no model between two commas"), "%s", err);
	ts_models_free(&ms);
}

/* A program that hangs is seen to hang by the plain run, which waited a
 * minute for its end (and the profile another): the double lock is
 * found all the same. */
Test(typestate, a_hung_program_is_seen_to_hang)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--model", "lock", "--timeout", "2s"};
	struct h_result r =
	    typestate(dir, args, 4, (const char *const[]){"tests/fixtures/tsrelock", NULL});

	cr_expect_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "the program alone hung"), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* An output "directory" that is a file is refused before the program
 * runs (it ran the plain run and the profile first). */
Test(typestate, an_output_file_is_no_directory)
{
	char *dir = h_temp_dir(), *file = h_fmt("%s/afile", dir);
	const char *args[] = {"--model", "file"};
	struct h_result r;

	h_write_file(file, "");
	r = typestate(file, args, 2, (const char *const[]){"samples/fdclose/fdclose", NULL});
	cr_expect_eq(r.code, 3, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "is a file, not a directory") && !strstr(r.err, "profile"), "%s",
		  r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A built-in model and a model file together, by a comma or two --model
 * options (the second replaced the first; the comma made one file name). */
Test(typestate, built_in_models_and_files_add_up)
{
	char *dir = h_temp_dir(), *model = h_fmt("%s/mine.ts", dir);
	struct ts_models ms = {0};
	char err[512];

	h_write_file(model, "model mine\nstates A B\ninitial A\nobject int\n"
			    "transit close(arg1) -> B\nlimit read(arg1) in A\n");
	cr_assert_eq(ts_models_load(&ms, h_fmt("lock,%s", model), err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(ms.n, 2);
	cr_assert_str_eq(ms.m[0].name, "lock");
	cr_assert_str_eq(ms.m[1].name, "mine");
	ts_models_free(&ms);
	h_remove_tree(dir);
}

/* --- pbzip2 0.9.4, 2ndStrike's pbzip2-lck --- */

/* A server is profiled with its client: --driver ends each run, as in
 * `cctrace test`, and no plain run waits for a client that never comes.
 * counterd's profile sees its connection threads (the driver opens four
 * connections); before, typestate had no --driver, and a server's plain
 * run and profile each waited a minute for nothing. */
Test(typestate, a_server_is_profiled_with_its_driver)
{
	char *dir = h_temp_dir(), *port = h_fmt("%s/port", dir);
	const char *args[] = {"--driver", h_fmt("tests/schedules/counterd-driver.sh %s", port)};
	const char *prog[] = {"tests/fixtures/counterd", port, NULL};
	struct h_result r = typestate(h_fmt("%s/out", dir), args, 2, prog);
	const char *line = strstr(r.err, "typestate: profile: ");
	int calls = 0, threads = 0;

	cr_expect_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_assert(line &&
		      sscanf(line, "typestate: profile: %d calls of %*d functions in %d threads",
			     &calls, &threads) == 2,
		  "%s", r.err);
	cr_expect_geq(threads, 3, "the connections' threads were not profiled:\n%s", r.err);
	cr_expect(strstr(line, "until the driver ended"), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* --time bounds the whole, and a profile it cut short with nothing to
 * re-execute is an error, never "0 bugs". */
Test(typestate, time_that_ends_the_profile_is_an_error_not_0_bugs)
{
	char *dir = h_temp_dir();
	const char *args[] = {"--time", "1ms"};
	const char *prog[] = {"samples/fdclose/fdclose", NULL};
	struct h_result r = typestate(dir, args, 2, prog);

	cr_expect_eq(r.code, 3, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "--time ran out during the profile") &&
		      strstr(r.err, "nothing was tested"),
		  "%s", r.err);
	cr_expect(!strstr(r.err, "0 bugs"), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* A model whose functions the program does not have finds nothing: a
 * warning names them, and with no other model it is an error, not a
 * search that reports 0 candidates and exits 0. */
Test(typestate, model_of_functions_the_program_lacks)
{
	char *dir = h_temp_dir();
	char *model = h_fmt("%s/conn.ts", dir);
	const char *alone[] = {"--model", model};
	const char *with_file[] = {"--model", h_fmt("file,%s", model), "--timeout", "2s"};
	const char *prog[] = {"samples/fdclose/fdclose", NULL};
	struct h_result r;

	h_write_file(model, "model conn\n"
			    "states ALIVE RELEASED\n"
			    "initial ALIVE\n"
			    "object pointer\n"
			    "transit conn_release(arg1) -> RELEASED\n"
			    "limit conn_send(arg1) in ALIVE\n"
			    "limit conn_release(arg1) in ALIVE\n");
	r = typestate(dir, alone, 2, prog);
	cr_expect_eq(r.code, 3, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, h_fmt("typestate: warning: model conn (%s) names no function of "
				      "samples/fdclose/fdclose or its libraries (conn_release, "
				      "conn_send): it can find nothing\n",
				      model)) &&
		      strstr(r.err, "no model names a function of samples/fdclose/fdclose or its "
				    "libraries: nothing to test"),
		  "%s", r.err);
	cr_expect(!strstr(r.err, "candidate"), "%s", r.err);
	h_result_free(&r);
	/* beside a model that applies, the search goes on */
	r = typestate(dir, with_file, 4, prog);
	cr_expect_eq(r.code, 1, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, "typestate: warning: model conn"), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}

/* Ctrl-C ends typestate as it ends every command: 130 and "interrupted by
 * INT" (it said "interrupted" and exited 3).  shellfix never ends, so the
 * profile is still running when the signal comes. */
Test(typestate, ctrl_c_exits_130)
{
	char *dir = h_temp_dir();
	const char *argv[] = {h_cctrace(), "typestate", "-o", dir, "--", "tests/fixtures/shellfix",
			      NULL};
	struct h_proc c = h_spawn(argv, false, false, true);
	int64_t deadline = h_now_ms() + 20000;
	char path[64], kids[64] = "";
	char *err;
	int code;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)c.pid, (int)c.pid);
	while (!kids[0] && h_now_ms() < deadline) {
		FILE *f = fopen(path, "r");

		if (f && !fgets(kids, sizeof(kids), f))
			kids[0] = 0;
		if (f)
			fclose(f);
		if (!kids[0])
			h_pace();
	}
	cr_assert(kids[0], "typestate never launched its program");
	cr_assert_eq(kill(c.pid, SIGINT), 0);
	err = h_read_all(c.err, 30);
	code = h_wait(c.pid, 30, NULL);
	cr_expect_eq(code, 130, "exit %d:\n%s", code, err);
	cr_expect(strstr(err, "interrupted by INT"), "%s", err);
	free(err);
	h_remove_tree(dir);
}

/* A recursive mutex is locked again by its owner: no model's object (a
 * count-less lock model reported its inner unlocks as bugs). */
Test(typestate, a_recursive_mutex_is_no_false_bug)
{
	char *dir = h_temp_dir();
	const char *prog[] = {"tests/fixtures/tsrecursive", NULL};
	struct h_result r = typestate(dir, NULL, 0, prog);

	cr_expect_eq(r.code, 0, "exit %d\n%s", r.code, r.err);
	cr_expect(strstr(r.err, " 0 bugs"), "%s", r.err);
	h_result_free(&r);
	h_remove_tree(dir);
}
