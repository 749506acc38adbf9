/*
 * tsmodel.c: typestate models as data (docs/typestate.md).
 *
 * 2ndStrike's state machines (its Figure 2) are a few lines each, and an
 * application's own API (a connection that must be opened before it is
 * used, a handle released by one call) is the same shape: so models are a
 * small line-based text, the three built-in ones are written in it, and a
 * user's file goes through the same parser, with errors as file:line:col.
 *
 *   model NAME
 *   states S1 S2 ...              the first is nothing special; see initial
 *   initial S                     the state of an object first met by a limit
 *   owned S ...                   these states belong to the thread whose
 *                                 transit made them (a held lock): a limit
 *                                 allowed in S is allowed only to that thread;
 *                                 another thread's call is forbidden, or with
 *                                 `waits` allowed (it waits for the owner)
 *   object int | pointer          ints: the low 32 bits of the register
 *   ignore V ...                  values that are never objects (-1, 0)
 *   transit F(OBJ) -> S [entry] [size A] [ok E]
 *                                 F moves OBJ to S (at F's return) if E (a
 *                                 schedule expression over retval and errno)
 *                                 holds there: a failed close or destroy
 *                                 moves nothing; with size (argN or
 *                                 argN*argM), OBJ is a block of that many
 *                                 bytes, and a limit on an address inside it
 *                                 is on the block (&job->lock); with entry,
 *                                 at F's entry (an unlock: another thread
 *                                 may take the lock before F returns)
 *   limit F(OBJ) in S ... [waits] [ok E]
 *                                 F is allowed only in these states; E, a
 *                                 schedule expression over retval and
 *                                 errno, is true when the call succeeded
 *   deref S ...                   a load or store inside one of the model's
 *                                 blocks (a sized transit's object) is
 *                                 allowed only in these states: the profile
 *                                 decodes the accesses of the threads that
 *                                 share a block (an operation named
 *                                 TS_DEREF_FUNC, made by no call)
 *   OBJ = ret | argN | argN[K]    argN[K]: int element K of the array argN
 *                                 points to, read at the return (pipe)
 *
 * `#` starts a comment.  A function may appear in several lines (close is
 * both a transit and a limit).
 */
#include "engine/engine.h"
#include "lang/lang.h"
#include "search/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* (retval & 0xffffffff): C functions returning int leave rax's upper half
 * undefined. */
#define TS_FAILED_INT "(retval & 0xffffffff) == 0xffffffff"

static const char builtin_file[] =
    "# A file descriptor: open (or socket, dup, pipe, accept...) -> OPEN, close -> CLOSED;\n"
    "# reads, writes and the like only while OPEN.\n"
    "model file\n"
    "states OPEN CLOSED\n"
    "initial OPEN\n"
    "object int\n"
    "ignore -1\n"
    "transit open(ret) -> OPEN\n"
    "transit open64(ret) -> OPEN\n"
    "transit openat(ret) -> OPEN\n"
    "transit creat(ret) -> OPEN\n"
    "transit socket(ret) -> OPEN\n"
    "transit accept(ret) -> OPEN\n"
    "transit accept4(ret) -> OPEN\n"
    "transit dup(ret) -> OPEN\n"
    "transit dup2(ret) -> OPEN\n"
    "transit dup3(ret) -> OPEN\n"
    "transit pipe(arg1[0]) -> OPEN\n"
    "transit pipe(arg1[1]) -> OPEN\n"
    "transit pipe2(arg1[0]) -> OPEN\n"
    "transit pipe2(arg1[1]) -> OPEN\n"
    "transit eventfd(ret) -> OPEN\n"
    "transit epoll_create1(ret) -> OPEN\n"
    "transit close(arg1) -> CLOSED ok (retval & 0xffffffff) == 0\n"
    "limit close(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit read(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit write(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit pread(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit pwrite(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit readv(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit writev(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit recv(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit recvfrom(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit recvmsg(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit send(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit sendto(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit sendmsg(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit fstat(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit lseek(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit fsync(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n"
    "limit ftruncate(arg1) in OPEN ok !(" TS_FAILED_INT " && errno == 9)\n";

/* A lock call that did not meet a destroyed mutex (EINVAL), nor deadlock
 * on itself (EDEADLK), nor unlock another's (EPERM). */
#define LOCK_OK                                                                                    \
	"((retval & 0xffffffff) != 22 && (retval & 0xffffffff) != 35 && (retval & 0xffffffff) != " \
	"1)"

static const char builtin_lock[] =
    "# A mutex: pthread_mutex_init -> READY, pthread_mutex_destroy -> INVALID, a lock\n"
    "# -> HELD by the locking thread, its unlock -> READY; a condition wait releases\n"
    "# it at entry and has it HELD again at return.  Locking while READY (or while\n"
    "# another thread holds it: the call waits), unlocking only by the thread that\n"
    "# holds it, destroying only while READY; waiting on a condition with it unless\n"
    "# INVALID (whether the caller holds it is not checked).\n"
    "# glibc answers EINVAL (22) for a destroyed mutex, EBUSY (16) to destroying a\n"
    "# held one, EDEADLK (35) and EPERM (1) to error-checking mutexes' misuse.\n"
    "model lock\n"
    "states READY HELD INVALID\n"
    "initial READY\n"
    "owned HELD\n"
    "object pointer\n"
    "ignore 0\n"
    "transit pthread_mutex_init(arg1) -> READY ok (retval & 0xffffffff) == 0\n"
    "transit pthread_mutex_destroy(arg1) -> INVALID ok (retval & 0xffffffff) == 0\n"
    "transit pthread_mutex_lock(arg1) -> HELD ok (retval & 0xffffffff) == 0\n"
    "transit pthread_mutex_trylock(arg1) -> HELD ok (retval & 0xffffffff) == 0\n"
    "transit pthread_mutex_timedlock(arg1) -> HELD ok (retval & 0xffffffff) == 0\n"
    "transit pthread_mutex_unlock(arg1) -> READY entry\n"
    "transit pthread_cond_wait(arg2) -> READY entry\n"
    "transit pthread_cond_timedwait(arg2) -> READY entry\n"
    "transit pthread_cond_wait(arg2) -> HELD\n"
    "transit pthread_cond_timedwait(arg2) -> HELD\n"
    "limit pthread_mutex_lock(arg1) in READY waits ok " LOCK_OK "\n"
    "limit pthread_mutex_trylock(arg1) in READY HELD waits ok " LOCK_OK "\n"
    "limit pthread_mutex_timedlock(arg1) in READY waits ok " LOCK_OK "\n"
    "limit pthread_mutex_unlock(arg1) in HELD ok " LOCK_OK "\n"
    "limit pthread_cond_wait(arg2) in READY HELD waits ok " LOCK_OK "\n"
    "limit pthread_cond_timedwait(arg2) in READY HELD waits ok " LOCK_OK "\n"
    "limit pthread_mutex_destroy(arg1) in READY ok (retval & 0xffffffff) != 16\n";

static const char builtin_memory[] =
    "# A heap block: malloc, calloc, realloc, new -> LIVE; free, realloc's old block,\n"
    "# delete -> FREED.  Uses through calls (free again, locking a mutex in it,\n"
    "# handing it to a function of the program's own model) only while LIVE.\n"
    "model memory\n"
    "states LIVE FREED\n"
    "initial LIVE\n"
    "object pointer\n"
    "ignore 0\n"
    "transit malloc(ret) -> LIVE size arg1\n"
    "transit calloc(ret) -> LIVE size arg1*arg2\n"
    "transit realloc(arg1) -> FREED ok retval != 0\n"
    "transit realloc(ret) -> LIVE size arg2 ok retval != 0\n"
    "transit _Znwm(ret) -> LIVE size arg1\n"
    "transit _Znam(ret) -> LIVE size arg1\n"
    "transit free(arg1) -> FREED\n"
    "transit _ZdlPv(arg1) -> FREED\n"
    "transit _ZdlPvm(arg1) -> FREED\n"
    "transit _ZdaPv(arg1) -> FREED\n"
    "limit free(arg1) in LIVE\n"
    "limit realloc(arg1) in LIVE\n"
    "limit _ZdlPv(arg1) in LIVE\n"
    "limit _ZdlPvm(arg1) in LIVE\n"
    "limit _ZdaPv(arg1) in LIVE\n"
    "limit pthread_mutex_lock(arg1) in LIVE\n"
    "limit pthread_mutex_unlock(arg1) in LIVE\n"
    "limit pthread_cond_wait(arg1) in LIVE\n"
    "limit pthread_cond_timedwait(arg1) in LIVE\n"
    "limit pthread_cond_signal(arg1) in LIVE\n"
    "limit pthread_cond_broadcast(arg1) in LIVE\n"
    "# A plain load or store inside a block, by a thread that shares it.\n"
    "deref LIVE\n";

static const struct {
	const char *name, *text;
} builtins[] = {{"file", builtin_file}, {"lock", builtin_lock}, {"memory", builtin_memory}};

const char *ts_builtin_text(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return builtins[i].text;
	return NULL;
}

/* --- the parser --- */

struct tsp {
	struct ts_models *ms;
	struct ts_model *cur;
	const char *path;
	const char *line_start, *p; /* the line, and where we are in it */
	int line;
	char *err;
	size_t errlen;
};

static int fail_at(struct tsp *t, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(struct tsp *t, const char *at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(t->err, t->errlen, "%s:%d:%d: error: %s", t->path, t->line,
		 (int)(at - t->line_start) + 1, msg);
	return -1;
}

/* "... '(' at 1:9 ..." in a message of the parser, of the text it was
 * given, as the model file's line:column. */
static void mention_in_model(const struct tsp *t, const char *at, char *msg, size_t len,
			     int prefix_len)
{
	char *mention = strstr(msg, " at 1:"), *end, rest[512];
	long col;

	if (!mention)
		return;
	col = strtol(mention + 6, &end, 10) - prefix_len;
	snprintf(rest, sizeof(rest), "%s", end);
	snprintf(mention, len - (size_t)(mention - msg), " at %d:%d%s", t->line,
		 (int)(at - t->line_start) + (int)col, rest);
}

/* An ok condition is read as the schedule language reads it, here, where
 * its error can point into the model file: it was met only after the
 * profile, and said of a generated schedule.  (Names are the program's,
 * checked once its symbols are read.) */
static int check_ok_syntax(struct tsp *t, const char *at, const char *ok)
{
	static const char prefix[] = "assert ";
	char *text = NULL, err[1024], msg[512];
	struct schedule *sched;
	int col = 0;

	if (asprintf(&text, "%s%s\n", prefix, ok) < 0)
		return fail_at(t, at, "out of memory");
	sched = schedule_parse("ok", text, engine_atoms(), err, sizeof(err));
	free(text);
	if (sched) {
		schedule_free(sched);
		return 0;
	}
	/* "ok:1:COL: error: MSG\n..." */
	if (sscanf(err, "ok:%*d:%d: error: %511[^\n]", &col, msg) != 2)
		return fail_at(t, at, "%s", err);
	col -= (int)sizeof(prefix) - 1;
	mention_in_model(t, at, msg, sizeof(msg), (int)sizeof(prefix) - 1);
	return fail_at(t, at + (col > 1 ? col - 1 : 0), "%s", msg);
}

static void skip_blanks(struct tsp *t)
{
	while (*t->p == ' ' || *t->p == '\t')
		t->p++;
}

static bool at_end(struct tsp *t)
{
	skip_blanks(t);
	return *t->p == '\n' || *t->p == '\0' || *t->p == '#';
}

/* An identifier (letters, digits, _); NULL with an error if none. */
static char *word(struct tsp *t, const char *what)
{
	const char *s;

	skip_blanks(t);
	s = t->p;
	while (isalnum((unsigned char)*t->p) || *t->p == '_')
		t->p++;
	if (t->p == s) {
		fail_at(t, s, "expected %s", what);
		return NULL;
	}
	return strndup(s, (size_t)(t->p - s));
}

static bool expect_char(struct tsp *t, char c)
{
	skip_blanks(t);
	if (*t->p != c) {
		fail_at(t, t->p, "expected '%c'", c);
		return false;
	}
	t->p++;
	return true;
}

static int grow(void **a, int n, size_t size)
{
	void *g = realloc(*a, size * (size_t)(n + 1));

	if (!g)
		return -1;
	*a = g;
	return 0;
}

static int state_index(const struct ts_model *m, const char *name)
{
	int i;

	for (i = 0; i < m->nstates; i++)
		if (strcmp(m->states[i], name) == 0)
			return i;
	return -1;
}

/* A state name that the model declared. */
static int parse_state(struct tsp *t)
{
	const char *at;
	char *name;
	int s;

	skip_blanks(t);
	at = t->p;
	name = word(t, "a state");
	if (!name)
		return -1;
	s = state_index(t->cur, name);
	if (s < 0)
		fail_at(t, at, "unknown state '%s' (declare it with 'states')", name);
	free(name);
	return s;
}

static int parse_object(struct tsp *t, struct ts_object *o)
{
	const char *at;
	char *w;
	int rc = 0;

	skip_blanks(t);
	at = t->p;
	w = word(t, "ret or argN");
	if (!w)
		return -1;
	if (strcmp(w, "ret") == 0) {
		*o = (struct ts_object){TS_RET, 0, -1};
	} else if (strncmp(w, "arg", 3) == 0 && w[3] >= '1' && w[3] <= '6' && !w[4]) {
		*o = (struct ts_object){TS_ARG, w[3] - '0', -1};
	} else {
		rc = fail_at(t, at, "expected ret or arg1..arg6, found '%s'", w);
	}
	free(w);
	if (rc < 0 || *t->p != '[')
		return rc;
	t->p++;
	if (o->where != TS_ARG || !isdigit((unsigned char)*t->p))
		return fail_at(t, t->p, "expected an element number: argN[K]");
	o->index = (int)strtol(t->p, (char **)&t->p, 10);
	return expect_char(t, ']') ? 0 : -1;
}

/* An argument register's number: "argN" at t->p, N in 1..6; 0 if none. */
static int arg_number(struct tsp *t)
{
	int n;

	if (strncmp(t->p, "arg", 3) != 0 || t->p[3] < '1' || t->p[3] > '6' ||
	    isalnum((unsigned char)t->p[4]))
		return 0;
	n = t->p[3] - '0';
	t->p += 4;
	return n;
}

/* [size argN[*argM]] after a transit's state. */
static int parse_size(struct tsp *t, struct ts_op *op)
{
	const char *at;

	skip_blanks(t);
	at = t->p;
	if (strncmp(t->p, "size", 4) != 0 || isalnum((unsigned char)t->p[4]))
		return 0;
	t->p += 4;
	skip_blanks(t);
	if (op->obj.where != TS_RET)
		return fail_at(t, at,
			       "only a transit of its return value (a new block) has a size");
	if (!(op->size_args[0] = arg_number(t)))
		return fail_at(t, t->p, "expected argN or argN*argM after 'size'");
	skip_blanks(t);
	if (*t->p != '*')
		return 0;
	t->p++;
	skip_blanks(t);
	if (!(op->size_args[1] = arg_number(t)))
		return fail_at(t, t->p, "expected argM after '*'");
	return 0;
}

/* [ok EXPR] at the end of an operation's line. */
static int parse_ok(struct tsp *t, struct ts_op *op)
{
	const char *e;

	skip_blanks(t);
	if (at_end(t) || strncmp(t->p, "ok", 2) != 0 || isalnum((unsigned char)t->p[2]))
		return 0;
	t->p += 2;
	skip_blanks(t);
	e = t->p;
	while (*t->p && *t->p != '\n' && *t->p != '#')
		t->p++;
	if (t->p == e)
		return fail_at(t, e, "expected an expression after 'ok'");
	op->ok = strndup(e, (size_t)(t->p - e));
	if (!op->ok)
		return fail_at(t, e, "out of memory");
	return check_ok_syntax(t, e, op->ok);
}

static int parse_op(struct tsp *t, bool transit)
{
	struct ts_model *m = t->cur;
	struct ts_op op = {.line = t->line};
	int s;

	if (grow((void **)&m->ops, m->nops, sizeof(*m->ops)) < 0)
		return fail_at(t, t->p, "out of memory");
	op.func = word(t, "a function name");
	if (!op.func)
		return -1;
	op.transit = transit;
	if (!expect_char(t, '(') || parse_object(t, &op.obj) < 0 || !expect_char(t, ')'))
		goto fail;
	skip_blanks(t);
	if (transit) {
		if (strncmp(t->p, "->", 2) != 0) {
			fail_at(t, t->p, "expected '->' and the state %s moves its object to",
				op.func);
			goto fail;
		}
		t->p += 2;
		if ((op.to = parse_state(t)) < 0)
			goto fail;
		skip_blanks(t);
		if (strncmp(t->p, "entry", 5) == 0 && !isalnum((unsigned char)t->p[5])) {
			op.at_entry = true;
			t->p += 5;
		}
		if (parse_size(t, &op) < 0 || parse_ok(t, &op) < 0)
			goto fail;
		if (op.at_entry && (op.ok || op.obj.where != TS_ARG || op.obj.index >= 0)) {
			fail_at(t, t->p,
				"a transit at entry has its object in an argument, and no ok");
			goto fail;
		}
	} else {
		if (strncmp(t->p, "in", 2) != 0 || isalnum((unsigned char)t->p[2])) {
			fail_at(t, t->p, "expected 'in' and the states %s is allowed in", op.func);
			goto fail;
		}
		t->p += 2;
		do {
			if ((s = parse_state(t)) < 0)
				goto fail;
			op.allowed |= 1u << s;
			skip_blanks(t);
		} while (!at_end(t) && strncmp(t->p, "ok", 2) != 0 &&
			 strncmp(t->p, "waits", 5) != 0);
		if (strncmp(t->p, "waits", 5) == 0 && !isalnum((unsigned char)t->p[5])) {
			op.waits = true;
			t->p += 5;
		}
		if (parse_ok(t, &op) < 0)
			goto fail;
	}
	if (!at_end(t)) {
		fail_at(t, t->p, "unexpected text after the operation");
		goto fail;
	}
	m->ops[m->nops++] = op;
	return 0;
fail:
	free(op.func);
	free(op.ok);
	return -1;
}

static int parse_states(struct tsp *t)
{
	struct ts_model *m = t->cur;

	while (!at_end(t)) {
		const char *at = t->p;
		char *s = word(t, "a state name");

		if (!s)
			return -1;
		if (state_index(m, s) >= 0) {
			free(s);
			return fail_at(t, at, "state declared twice");
		}
		if (m->nstates == 32 || grow((void **)&m->states, m->nstates, sizeof(char *)) < 0) {
			free(s);
			return fail_at(t, at, "a model has at most 32 states");
		}
		m->states[m->nstates++] = s;
	}
	return m->nstates ? 0 : fail_at(t, t->p, "expected state names");
}

static int parse_owned(struct tsp *t)
{
	int s;

	while (!at_end(t)) {
		if ((s = parse_state(t)) < 0)
			return -1;
		t->cur->owned |= 1u << s;
	}
	return t->cur->owned ? 0 : fail_at(t, t->p, "expected state names");
}

/* `deref S ...`: a limit on the block an access is inside, made by no
 * call (the stepper's loads and stores). */
static int parse_deref(struct tsp *t)
{
	struct ts_model *m = t->cur;
	struct ts_op op = {.obj = {TS_ARG, 1, -1}, .line = t->line};
	const char *at;
	int s;

	skip_blanks(t);
	at = t->p;

	while (!at_end(t)) {
		if ((s = parse_state(t)) < 0)
			return -1;
		op.allowed |= 1u << s;
	}
	if (!op.allowed)
		return fail_at(t, t->p, "expected state names");
	for (s = 0; s < m->nops; s++)
		if (strcmp(m->ops[s].func, TS_DEREF_FUNC) == 0)
			return fail_at(t, at, "deref given twice");
	if (grow((void **)&m->ops, m->nops, sizeof(*m->ops)) < 0 ||
	    !(op.func = strdup(TS_DEREF_FUNC)))
		return fail_at(t, at, "out of memory");
	m->ops[m->nops++] = op;
	return 0;
}

static int parse_ignore(struct tsp *t)
{
	struct ts_model *m = t->cur;

	while (!at_end(t)) {
		char *end;
		long long v = strtoll(t->p, &end, 0);

		if (end == t->p)
			return fail_at(t, t->p, "expected a number");
		if (grow((void **)&m->ignore, m->nignore, sizeof(*m->ignore)) < 0)
			return fail_at(t, t->p, "out of memory");
		m->ignore[m->nignore++] = v;
		t->p = end;
	}
	return 0;
}

static int parse_model_head(struct tsp *t)
{
	struct ts_models *ms = t->ms;
	struct ts_model *m;

	if (grow((void **)&ms->m, ms->n, sizeof(*ms->m)) < 0)
		return fail_at(t, t->p, "out of memory");
	m = &ms->m[ms->n];
	memset(m, 0, sizeof(*m));
	m->name = word(t, "the model's name");
	if (!m->name)
		return -1;
	m->source = strdup(t->path);
	ms->n++;
	t->cur = m;
	return 0;
}

static int parse_line(struct tsp *t)
{
	const char *at;
	char *kw;
	int rc = 0;

	if (at_end(t))
		return 0;
	at = t->p;
	kw = word(t, "a keyword");
	if (!kw)
		return -1;
	if (strcmp(kw, "model") == 0) {
		rc = parse_model_head(t);
	} else if (!t->cur) {
		rc = fail_at(t, at, "expected 'model NAME' first");
	} else if (strcmp(kw, "states") == 0) {
		rc = parse_states(t);
	} else if (strcmp(kw, "initial") == 0) {
		rc = (t->cur->initial = parse_state(t)) < 0 ? -1 : 0;
	} else if (strcmp(kw, "object") == 0) {
		char *k = word(t, "int or pointer");

		if (k && strcmp(k, "int") && strcmp(k, "pointer"))
			rc = fail_at(t, at, "object is 'int' or 'pointer', not '%s'", k);
		t->cur->int_objects = k && strcmp(k, "int") == 0;
		rc = k ? rc : -1;
		free(k);
	} else if (strcmp(kw, "ignore") == 0) {
		rc = parse_ignore(t);
	} else if (strcmp(kw, "owned") == 0) {
		rc = parse_owned(t);
	} else if (strcmp(kw, "deref") == 0) {
		rc = t->cur->nstates ? parse_deref(t)
				     : fail_at(t, at, "declare the states before deref");
	} else if (strcmp(kw, "transit") == 0 || strcmp(kw, "limit") == 0) {
		if (!t->cur->nstates)
			rc = fail_at(t, at, "declare the states before the operations");
		else
			rc = parse_op(t, kw[0] == 't');
	} else {
		rc = fail_at(t, at,
			     "unknown keyword '%s' (model, states, initial, object, "
			     "ignore, owned, transit, limit, deref)",
			     kw);
	}
	free(kw);
	if (rc == 0 && !at_end(t))
		rc = fail_at(t, t->p, "unexpected text");
	return rc;
}

int ts_models_parse(struct ts_models *ms, const char *text, const char *path, char *err,
		    size_t errlen)
{
	struct tsp t = {ms, NULL, path, text, text, 1, err, errlen};
	int first = ms->n;

	while (*t.p) {
		t.line_start = t.p;
		if (parse_line(&t) < 0)
			return -1;
		while (*t.p && *t.p != '\n')
			t.p++;
		if (*t.p)
			t.p++;
		t.line++;
	}
	if (ms->n == first) {
		snprintf(err, errlen, "%s:1:1: error: no 'model NAME' in the file", path);
		return -1;
	}
	for (; first < ms->n; first++)
		if (ms->m[first].nops == 0) {
			snprintf(err, errlen, "%s: error: model '%s' has no transit or limit", path,
				 ms->m[first].name);
			return -1;
		}
	return 0;
}

int ts_models_builtin(struct ts_models *ms, const char *name, char *err, size_t errlen)
{
	const char *text = ts_builtin_text(name);

	if (!text) {
		snprintf(err, errlen, "no built-in model '%s' (file, lock, memory; or a file)",
			 name);
		return -1;
	}
	return ts_models_parse(ms, text, name, err, errlen);
}

static char *read_text(const char *path, char *err, size_t errlen)
{
	char *text = search_read_text(path);

	if (!text)
		snprintf(err, errlen, "cannot open model file '%s': %s", path, strerror(errno));
	return text;
}

/* A model file (a path, or a name ending in .ts), or a built-in model. */
static int load_one(struct ts_models *ms, const char *name, char *err, size_t errlen)
{
	size_t len = strlen(name);
	char *text;
	int rc;

	if (!strchr(name, '/') && !(len > 3 && strcmp(name + len - 3, ".ts") == 0))
		return ts_models_builtin(ms, name, err, errlen);
	text = read_text(name, err, errlen);
	if (!text)
		return -1;
	rc = ts_models_parse(ms, text, name, err, errlen);
	free(text);
	return rc;
}

int ts_models_load(struct ts_models *ms, const char *spec, char *err, size_t errlen)
{
	char *copy = strdup(spec), *name, *at;
	int rc = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* comma-separated, each a built-in model or a file; none empty */
	for (name = copy; rc == 0; name = at + 1) {
		at = strchrnul(name, ',');
		if (at == name) {
			snprintf(err, errlen,
				 "--model '%s' names no model%s: give file, lock, memory or a "
				 "FILE.ts, separated by commas",
				 spec, *spec ? " between two commas" : "");
			rc = -1;
			break;
		}
		if (*at == '\0') {
			rc = load_one(ms, name, err, errlen);
			break;
		}
		*at = '\0';
		rc = load_one(ms, name, err, errlen);
	}
	free(copy);
	return rc;
}

void ts_models_free(struct ts_models *ms)
{
	int i, j;

	for (i = 0; i < ms->n; i++) {
		struct ts_model *m = &ms->m[i];

		for (j = 0; j < m->nstates; j++)
			free(m->states[j]);
		for (j = 0; j < m->nops; j++) {
			free(m->ops[j].func);
			free(m->ops[j].ok);
		}
		free(m->states);
		free(m->ops);
		free(m->ignore);
		free(m->name);
		free(m->source);
	}
	free(ms->m);
	ms->m = NULL;
	ms->n = 0;
}
