/*
 * shell.c: `cctrace shell`, hold, step and schedule threads by hand.
 *
 *   cctrace shell [OPTIONS] PID
 *   cctrace shell [OPTIONS] -- PROGRAM [ARGS...]
 *
 * Design.  The shell is a thin face over the policy session API
 * (policy/policy.h): it launches or attaches a program, which then sits
 * with every thread held, and reads commands one line at a time.  Every
 * command that moves threads is a schedule statement, and is handed to
 * engine_session_exec() as text (only `bind T = p1.t3` is rewritten, to
 * `thread T = p1.t3`); the session records the statements that moved
 * threads, so `save FILE` writes a schedule that `cctrace run` replays.
 * Looking commands (threads, bt, print, list, info) and the user's
 * breakpoints and watchpoints call the matching session functions.
 *
 * Commands are a table: a name, the kind of argument it takes (which is
 * also what Tab completes after it), a handler, a one-line summary and a
 * `help CMD` text.  Dispatch is strcmp on the first word.
 *
 * Input.  On a terminal the line is edited with libedit: emacs keys,
 * history kept in $CCTRACE_HISTORY or ~/.cctrace_history (loaded at start,
 * saved after every command), and Tab bound to our own completer, which
 * looks at the words before the cursor to decide between commands, thread
 * names, functions, variables and predicate words.  Anywhere else stdin is
 * read with getline(), without prompt or banner, so a pipe can drive the
 * shell.  `#` comments and blank lines are ignored.
 *
 * Output.  Scheduling events are printed to stdout as they happen (the
 * session's trace FILE is stdout, so they interleave in order with command
 * output); diagnostics go to stderr, "error: " first.  A failed command is
 * reported and the shell goes on, or with --exit-on-error exits 3.
 * Colour is used only when stdout is a terminal and NO_COLOR is unset.
 *
 * Ctrl-C.  Once the session exists, SIGINT is the tracer's: its handler
 * notes it and cuts short a wait in progress, so a Ctrl-C during run, wait
 * or continue makes the session hold the threads and fail the command with
 * "interrupted"; the shell prints that and prompts again.  At the prompt
 * the terminal's ISIG is turned off in libedit's edit mode and ^C is a key
 * bound to "drop this line".  A SIGINT that arrives between commands (e.g.
 * typed during `print`) stays noted; the session forgets it before every
 * command so that it cannot interrupt the next one.  A launched program
 * has a process group of its own, so none of this reaches it; if it reads
 * the terminal it gets it while a command runs, and the keys typed then
 * still come to cctrace (tracer/terminal.c).
 */
#include "cli/shell.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "lang/lang.h"
#include "symbols/symbols.h"

#include <ctype.h>
#include <errno.h>
#include <histedit.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#define ERRLEN	     4096
#define MAX_NAMES    16	 /* thread names shown after a moving command */
#define LIST_CONTEXT 5	 /* `list` shows this many lines before and after */
#define MAX_LISTED   200 /* completion candidates listed before giving up */
#define HISTORY_SIZE 1000
#define PROMPT_TEXT  "(cctrace) "
#define COLOR_RESET  "\033[0m"
#define COLOR_BOLD   "\033[1m"
#define COLOR_DIM    "\033[2m"
#define COLOR_RED    "\033[31m"
#define COLOR_GREEN  "\033[32m"
#define COLOR_YELLOW "\033[33m"
#define COLOR_BLUE   "\033[34m"
#define COLOR_CYAN   "\033[36m"
#define COLOR_PROMPT "\033[1;34m"

struct shell {
	struct engine_session *s;
	struct engine_options opt;
	bool attached;		 /* attached to a pid (else launched) */
	bool tty;		 /* stdin is a terminal: libedit, prompt, banner */
	bool color;		 /* colour on stdout */
	bool err_color;		 /* colour on stderr */
	bool exit_on_error;	 /* --exit-on-error */
	bool over;		 /* the program is gone, or stopped at a bug */
	bool can_look;		 /* ...alive, held where the bug left it */
	bool done;		 /* quit, detach */
	bool detach;		 /* detach: let a launched program run on */
	bool cancel_line;	 /* ^C at the prompt: drop the line */
	int ended_by;		 /* the signal that ends the session (SIGTERM...), 0 */
	char prog_dir[PATH_MAX]; /* directory of the program's executable */
	char prompt[64];
	EditLine *el;
	History *hist;
	char hist_path[PATH_MAX];
};

static int read_key(EditLine *el, wchar_t *wc);

/* What a command's argument is, and so what Tab completes after it. */
enum arg_kind {
	ARG_NONE,
	ARG_COMMAND,
	ARG_THREAD,
	ARG_FUNC,
	ARG_VAR,
	ARG_PRED,
	ARG_INFO,
};

struct command {
	const char *name;
	const char *section; /* starts a section of `help` */
	enum arg_kind arg;
	bool after_over; /* still useful once the program is gone */
	int (*fn)(struct shell *sh, const char *args, const char *line);
	const char *summary;
	const char *help; /* syntax, example, and the statement it maps to */
};

static int cmd_help(struct shell *sh, const char *args, const char *line);

/* ------------------------------------------------------------ output */

static const char *color(const struct shell *sh, const char *code)
{
	return sh->color ? code : "";
}

static const char *err_color(const struct shell *sh, const char *code)
{
	return sh->err_color ? code : "";
}

/* Is msg already a diagnostic that names itself ("file:1:2: error: ...")? */
static bool is_diagnostic(const char *msg)
{
	return strstr(msg, "error:") != NULL || strncmp(msg, "cctrace", 7) == 0;
}

/* Report a failed command on stderr; always returns -1. */
__attribute__((format(printf, 2, 3))) static int fail(struct shell *sh, const char *fmt, ...)
{
	char msg[ERRLEN];
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	len = strlen(msg);
	while (len > 0 && msg[len - 1] == '\n')
		msg[--len] = 0;
	fflush(stdout);
	if (sh->tty && strstr(msg, "interrupted"))
		fputc('\n', stderr); /* after the ^C the terminal echoed */
	if (is_diagnostic(msg))
		fprintf(stderr, "%s\n", msg);
	else
		fprintf(stderr, "%serror:%s %s\n", err_color(sh, COLOR_RED),
			err_color(sh, COLOR_RESET), msg[0] ? msg : "failed");
	return -1;
}

static void program_gone(struct shell *sh, const char *why)
{
	if (why && *why)
		printf("%s\n", why);
	sh->over = true;
	/* a deadlock leaves it alive, held as it stands: worth a look */
	sh->can_look = engine_session_program_alive(sh->s);
	if (sh->can_look)
		printf("%sthe program stopped at the bug:%s threads, bt, list and print still "
		       "look at it; save, help and quit remain\n",
		       color(sh, COLOR_YELLOW), color(sh, COLOR_RESET));
	else
		printf("%sthe program is gone:%s only save, help and quit remain useful\n",
		       color(sh, COLOR_YELLOW), color(sh, COLOR_RESET));
}

/* What may still be done with a program held at its bug. */
static bool looks_only(const char *command)
{
	static const char *const looking[] = {"threads", "bt", "list", "print", "info"};
	size_t i;

	for (i = 0; i < sizeof(looking) / sizeof(looking[0]); i++)
		if (strcmp(command, looking[i]) == 0)
			return true;
	return false;
}

/* Turn a session result into a command result. */
static int session_result(struct shell *sh, enum session_result r, const char *err)
{
	if (r == SESSION_OK)
		return 0;
	if (r == SESSION_OVER) {
		program_gone(sh, err);
		return 0;
	}
	if (!err[0]) /* its report said why already */
		return -1;
	return fail(sh, "%s", err);
}

/* ---------------------------------------------------------- strings */

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static bool is_word_char(int c)
{
	return isalnum(c) || c == '_' || c == '.';
}

/* Remove a trailing "# comment" (outside '...') and surrounding blanks. */
static char *trim_line(char *line)
{
	bool quoted = false;
	char *p, *end;

	for (p = line; *p; p++) {
		if (*p == '\'' && (p == line || p[-1] != '\\'))
			quoted = !quoted;
		else if (*p == '#' && !quoted && (p == line || isspace((unsigned char)p[-1]))) {
			*p = 0;
			break;
		}
	}
	line = (char *)skip_space(line);
	end = line + strlen(line);
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = 0;
	return line;
}

/* Copy the leading identifier of p into word; returns what follows it. */
static const char *first_word(const char *p, char *word, size_t len)
{
	size_t n = 0;

	p = skip_space(p);
	while ((isalnum((unsigned char)*p) || *p == '_') && n + 1 < len)
		word[n++] = *p++;
	word[n] = 0;
	return p;
}

/* ------------------------------------------------------- threads */

/* Every thread of the session (to free), *n of them. */
static struct session_thread *all_threads(struct shell *sh, int *n)
{
	struct session_thread *t = NULL, *bigger;
	int cap = 64;

	for (;;) {
		bigger = realloc(t, (size_t)cap * sizeof(*t));
		if (!bigger) {
			free(t);
			*n = 0;
			return NULL;
		}
		t = bigger;
		*n = engine_session_threads(sh->s, t, cap);
		if (*n <= cap)
			return t;
		cap = *n;
	}
}

static const char *state_color(const struct shell *sh, const char *state)
{
	if (strncmp(state, "held", 4) == 0)
		return color(sh, COLOR_GREEN);
	if (strncmp(state, "exited", 6) == 0)
		return color(sh, COLOR_DIM);
	return color(sh, COLOR_YELLOW);
}

static void format_where(const struct session_thread *t, char *buf, size_t len)
{
	if (t->file[0] && t->line > 0)
		snprintf(buf, len, "%s:%d", t->file, t->line);
	else
		snprintf(buf, len, "%s", t->file[0] ? t->file : "-");
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

struct widths {
	int name, var, tid, pid, state, func, where;
};

static struct widths table_widths(const struct session_thread *t, int n)
{
	struct widths w = {4, 3, 3, 3, 5, 8, 5};
	char where[96], num[16];
	int i;

	for (i = 0; i < n; i++) {
		format_where(&t[i], where, sizeof(where));
		w.name = max_int(w.name, (int)strlen(t[i].name));
		w.var = max_int(w.var, (int)strlen(t[i].var));
		w.tid = max_int(w.tid, snprintf(num, sizeof(num), "%d", (int)t[i].tid));
		w.pid = max_int(w.pid, snprintf(num, sizeof(num), "%d", (int)t[i].pid));
		w.state = max_int(w.state, (int)strlen(t[i].state));
		w.func = max_int(w.func, (int)strlen(t[i].func));
		w.where = max_int(w.where, (int)strlen(where));
	}
	return w;
}

static void print_thread_row(struct shell *sh, const struct session_thread *t,
			     const struct widths *w)
{
	char where[96];

	format_where(t, where, sizeof(where));
	printf("%-*s  %s%-*s%s  %-*d  %-*d  %s%-*s%s  %-*s  %-*s  %s\n", w->name, t->name,
	       color(sh, COLOR_BOLD), w->var, t->var[0] ? t->var : "-", color(sh, COLOR_RESET),
	       w->tid, (int)t->tid, w->pid, (int)t->pid, state_color(sh, t->state), w->state,
	       t->state, color(sh, COLOR_RESET), w->func, t->func[0] ? t->func : "-", w->where,
	       where, t->last_event[0] ? t->last_event : "-");
}

static int cmd_threads(struct shell *sh, const char *args, const char *line)
{
	struct session_thread *t;
	struct widths w;
	int n, i;

	(void)line;
	if (*args)
		return fail(sh, "threads takes no argument (bt T or list T for one)");
	t = all_threads(sh, &n);
	if (!t)
		return fail(sh, "out of memory");
	w = table_widths(t, n);
	printf("%s%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s%s\n", color(sh, COLOR_BOLD), w.name,
	       "NAME", w.var, "VAR", w.tid, "TID", w.pid, "PID", w.state, "STATE", w.func,
	       "FUNCTION", w.where, "WHERE", "LAST EVENT", color(sh, COLOR_RESET));
	for (i = 0; i < n; i++)
		print_thread_row(sh, &t[i], &w);
	free(t);
	return 0;
}

/*
 * The thread names a statement names: after `thread` up to `=`, after
 * run/step/next/finish/hold up to `until` or a number, after `bind` up to
 * `=`.  Fills names, returns how many.
 */
static int statement_names(const char *line, char names[][32], int max)
{
	char word[32];
	const char *p = first_word(line, word, sizeof(word));
	int n = 0;

	if (strcmp(word, "wait") == 0 || strcmp(word, "release") == 0)
		return 0;
	for (;;) {
		p = first_word(p, names[n], sizeof(names[n]));
		if (!names[n][0] || strcmp(names[n], "until") == 0 ||
		    isdigit((unsigned char)names[n][0]))
			break;
		if (++n == max)
			break;
		p = skip_space(p);
		if (*p != ',')
			break;
		p++;
	}
	return n;
}

/* Is name one of vars, the names a thread has ("A,B")? */
static bool among_vars(const char *vars, const char *name)
{
	size_t len = strlen(name);

	for (;;) {
		if (strncmp(vars, name, len) == 0 && (vars[len] == ',' || vars[len] == '\0'))
			return true;
		vars = strchr(vars, ',');
		if (!vars)
			return false;
		vars++;
	}
}

/* After a statement that moved threads: one line per thread it named. */
static void show_named(struct shell *sh, const char *line)
{
	char names[MAX_NAMES][32], where[96];
	struct session_thread *t;
	int nn = statement_names(line, names, MAX_NAMES), n, i, j;

	if (nn == 0)
		return;
	t = all_threads(sh, &n);
	for (i = 0; t && i < nn; i++)
		for (j = 0; j < n; j++) {
			if (!among_vars(t[j].var, names[i]) && strcmp(t[j].name, names[i]) != 0)
				continue;
			format_where(&t[j], where, sizeof(where));
			printf("%s%s%s (%s) %s%s%s in %s at %s\n", color(sh, COLOR_BOLD),
			       among_vars(t[j].var, names[i]) || !t[j].var[0] ? names[i] : t[j].var,
			       color(sh, COLOR_RESET), t[j].name, state_color(sh, t[j].state),
			       t[j].state, color(sh, COLOR_RESET), t[j].func[0] ? t[j].func : "?",
			       where);
			break;
		}
	free(t);
}

/* ---------------------------------------------------------- looking */

static int need_arg(struct shell *sh, const char *args, const char *usage)
{
	if (*args)
		return 0;
	return fail(sh, "usage: %s", usage);
}

/* A command's THREAD, or when none is given the current one (that of the
 * last event, as gdb's), into buf; -1 with the usage if there is none. */
static const char *thread_arg(struct shell *sh, const char *args, char *buf, size_t len,
			      const char *usage)
{
	if (*args)
		return args;
	switch (engine_session_current_thread(sh->s, buf, len)) {
	case 0:
		return buf;
	case 1:
		fail(sh, "usage: %s (the current thread, %s, has exited: name another)", usage,
		     buf);
		return NULL;
	default:
		fail(sh, "usage: %s (no thread has stopped at an event yet to be the current one)",
		     usage);
		return NULL;
	}
}

static int cmd_bt(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "", current[64];

	(void)line;
	args = thread_arg(sh, args, current, sizeof(current), "bt [THREAD]");
	if (!args)
		return -1;
	if (engine_session_backtrace(sh->s, args, stdout, err, sizeof(err)) < 0)
		return fail(sh, "%s", err);
	return 0;
}

static bool is_stable_name(const char *text, size_t len);
static int exec_text(struct shell *sh, const char *text);

/* Is name one of names, "A,p1_t3" (every name a thread was given)? */
static bool among_names(const char *names, const char *name)
{
	size_t len = strlen(name);

	for (; *names; names += strcspn(names, ",") + (names[strcspn(names, ",")] == ','))
		if (strncmp(names, name, len) == 0 && (names[len] == ',' || !names[len]))
			return true;
	return false;
}

/*
 * The schedule variable of the thread named `stable` (p1.t3), into var:
 * its first one, or (own_name) p1_t3, which is as long as the stable name,
 * so that what is checked has the columns of what was typed.  A thread
 * without it is bound first (`thread p1_t3 = p1.t3` holds it where it is,
 * and is recorded, so that `save` writes a schedule the language reads).
 */
static int bind_stable(struct shell *sh, const char *stable, bool own_name, char *var, size_t len)
{
	struct session_thread *t;
	char text[128], own[64];
	bool named;
	int n, i;

	snprintf(own, sizeof(own), "%s", stable);
	own[strcspn(own, ".")] = '_';
	t = all_threads(sh, &n);
	for (i = 0; i < n && strcmp(t[i].name, stable) != 0; i++)
		;
	if (i == n) {
		free(t);
		return fail(sh, "no thread %s; threads lists them", stable);
	}
	named = own_name ? among_names(t[i].var, own) : t[i].var[0] != '\0';
	if (named && !own_name)
		snprintf(var, len, "%.*s", (int)strcspn(t[i].var, ","), t[i].var);
	else
		snprintf(var, len, "%s", own);
	free(t);
	if (named)
		return 0;
	snprintf(text, sizeof(text), "thread %s = %s", var, stable);
	return exec_text(sh, text);
}

/* expr with each stable name before a '.' (p1.t3.x) made the thread's
 * variable (bound first if it has none), as the language reads T.x;
 * malloc'd, NULL after saying why. */
static char *variables_for_stable_names(struct shell *sh, const char *expr)
{
	size_t len = strlen(expr), used = 0, i = 0, word;
	char *out = malloc(len * 4 + 64), var[64], stable[32];

	if (!out) {
		fail(sh, "out of memory");
		return NULL;
	}
	while (i < len) {
		bool starts = i == 0 || !(isalnum((unsigned char)expr[i - 1]) ||
					  expr[i - 1] == '_' || expr[i - 1] == '.');

		word = strspn(expr + i, "pt.0123456789");
		while (word > 0 && expr[i + word - 1] == '.')
			word--; /* p1.t3 of p1.t3.x */
		if (starts && word < sizeof(stable) && expr[i + word] == '.' &&
		    is_stable_name(expr + i, word)) {
			snprintf(stable, sizeof(stable), "%.*s", (int)word, expr + i);
			if (bind_stable(sh, stable, true, var, sizeof(var)) < 0) {
				free(out);
				return NULL;
			}
			used += (size_t)snprintf(out + used, len * 4 + 64 - used, "%s", var);
			i += word;
			continue;
		}
		out[used++] = expr[i++];
	}
	out[used] = '\0';
	return out;
}

static int cmd_print(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "", *expr;
	int rc;

	(void)line;
	if (need_arg(sh, args, "print EXPR") < 0)
		return -1;
	expr = variables_for_stable_names(sh, args);
	if (!expr)
		return -1;
	rc = engine_session_print(sh->s, expr, args, stdout, err, sizeof(err));
	free(expr);
	if (rc < 0)
		return fail(sh, "%s", err);
	return 0;
}

static FILE *try_open(const char *dir, const char *path, char *found, size_t len)
{
	FILE *f;

	if (dir && *dir)
		snprintf(found, len, "%s/%s", dir, path);
	else
		snprintf(found, len, "%s", path);
	f = fopen(found, "r");
	return f;
}

/*
 * The source file DWARF names as path: as is, then relative to the
 * program's directory, then by basename there and in the current one.
 */
static FILE *open_source(struct shell *sh, const char *path, char *found, size_t len)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	FILE *f = try_open(NULL, path, found, len);

	if (!f && path[0] != '/')
		f = try_open(sh->prog_dir, path, found, len);
	if (!f)
		f = try_open(sh->prog_dir, base, found, len);
	if (!f)
		f = try_open(".", base, found, len);
	return f;
}

static void print_source(struct shell *sh, FILE *f, int line)
{
	char *text = NULL;
	size_t cap = 0;
	ssize_t got;
	int n = 0;

	while ((got = getline(&text, &cap, f)) >= 0) {
		if (++n < line - LIST_CONTEXT)
			continue;
		if (n > line + LIST_CONTEXT)
			break;
		if (got > 0 && text[got - 1] == '\n')
			text[got - 1] = 0;
		if (n == line)
			printf("%s=> %4d  %s%s\n", color(sh, COLOR_GREEN), n, text,
			       color(sh, COLOR_RESET));
		else
			printf("   %4d  %s\n", n, text);
	}
	free(text);
}

static int cmd_list(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "", path[PATH_MAX] = "", found[2 * PATH_MAX + 2], current[64];
	int at = 0;
	FILE *f;

	(void)line;
	args = thread_arg(sh, args, current, sizeof(current), "list [THREAD]");
	if (!args)
		return -1;
	if (engine_session_where(sh->s, args, path, sizeof(path), &at, err, sizeof(err)) < 0)
		return fail(sh, "%s", err);
	if (!path[0] || at <= 0)
		return fail(sh, "%s: no source line information here", args);
	f = open_source(sh, path, found, sizeof(found));
	if (!f)
		return fail(sh, "source file %s not found (looked in ., %s)", path,
			    sh->prog_dir[0] ? sh->prog_dir : "the program's directory");
	printf("%s%s:%d%s\n", color(sh, COLOR_CYAN), found, at, color(sh, COLOR_RESET));
	print_source(sh, f, at);
	fclose(f);
	return 0;
}

static int cmd_info(struct shell *sh, const char *args, const char *line)
{
	char word[32];

	(void)line;
	first_word(args, word, sizeof(word));
	if (word[0] && strncmp("breakpoints", word, strlen(word)) == 0)
		engine_session_list_points(sh->s, false, stdout);
	else if (word[0] && strncmp("watchpoints", word, strlen(word)) == 0)
		engine_session_list_points(sh->s, true, stdout);
	else if (word[0] && strncmp("threads", word, strlen(word)) == 0)
		return cmd_threads(sh, "", line);
	else
		return fail(sh, "usage: info breakpoints | info watchpoints | info threads");
	return 0;
}

static int cmd_echo(struct shell *sh, const char *args, const char *line)
{
	(void)sh;
	(void)line;
	printf("%s\n", args);
	return 0;
}

/* ------------------------------------------------ binding and moving */

static int exec_text(struct shell *sh, const char *text)
{
	char err[ERRLEN] = "";
	enum session_result r = engine_session_exec(sh->s, text, err, sizeof(err));

	if (session_result(sh, r, err) < 0)
		return -1;
	if (r == SESSION_OK)
		show_named(sh, text);
	return 0;
}

/* wait, thread, run, step, next, finish, release, hold, timeout, assert... */
static int cmd_statement(struct shell *sh, const char *args, const char *line)
{
	(void)args;
	return exec_text(sh, line);
}

/* Is text[0..len) a stable thread name, pN.tM? */
static bool is_stable_name(const char *text, size_t len)
{
	size_t i = 1;

	if (len < 4 || text[0] != 'p' || !isdigit((unsigned char)text[1]))
		return false;
	while (i < len && isdigit((unsigned char)text[i]))
		i++;
	if (i + 2 > len || text[i] != '.' || text[i + 1] != 't')
		return false;
	for (i += 2; i < len && isdigit((unsigned char)text[i]); i++)
		;
	return i == len && isdigit((unsigned char)text[len - 1]);
}

/* step, next and finish move one thread: with none named, the current. */
static bool is_one_thread_move(const char *word)
{
	return !strcmp(word, "step") || !strcmp(word, "next") || !strcmp(word, "finish");
}

/* run, step, next, finish, release, hold of a stable thread name (p1.t3):
 * the language takes variables, so the thread is named by its variable
 * (bound first if it has none).  The names are those before `until`. */
static int cmd_move(struct shell *sh, const char *args, const char *line)
{
	const char *until = strstr(line, " until "), *end = until ? until : line + strlen(line);
	const char *at = line + strcspn(line, " \t");
	char text[ERRLEN], var[64], current[64], *whole = NULL;
	size_t used = (size_t)(at - line);
	int rc;

	/* step, next, finish with no thread: the current one */
	if (!*args && strcspn(line, " \t") == strlen(line) && is_one_thread_move(line)) {
		snprintf(text, sizeof(text), "%s [THREAD]", line);
		if (!thread_arg(sh, args, current, sizeof(current), text))
			return -1;
		if (asprintf(&whole, "%s %s", line, current) < 0)
			return fail(sh, "out of memory");
		rc = cmd_move(sh, current, whole);
		free(whole);
		return rc;
	}
	if (!*args)
		return fail(sh, "usage: %.*s THREAD...%s", (int)strcspn(line, " \t"), line,
			    strncmp(line, "run", 3) == 0       ? " until EVENT"
			    : strncmp(line, "release", 7) == 0 ? " | release all"
							       : "");
	if (used >= sizeof(text))
		return exec_text(sh, line);
	memcpy(text, line, used);
	while (at < end) {
		size_t gap = strspn(at, " \t,"), word;

		word = strcspn(at + gap, " \t,");
		if (at + gap + word > end)
			word = (size_t)(end - at - gap);
		if (used + gap >= sizeof(text))
			return exec_text(sh, line);
		memcpy(text + used, at, gap);
		used += gap;
		at += gap;
		if (is_stable_name(at, word)) {
			char stable[32];

			snprintf(stable, sizeof(stable), "%.*s", (int)word, at);
			if (bind_stable(sh, stable, false, var, sizeof(var)) < 0)
				return -1;
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s", var);
		} else {
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%.*s",
						 (int)word, at);
		}
		if (used >= sizeof(text))
			return exec_text(sh, line);
		at += word;
	}
	snprintf(text + used, sizeof(text) - used, "%s", end);
	return exec_text(sh, text);
}

/* bind T = p1.t3  ->  thread T = p1.t3 */
static int cmd_bind(struct shell *sh, const char *args, const char *line)
{
	char *text = NULL;
	int rc;

	(void)line;
	if (!strchr(args, '='))
		return fail(sh, "usage: bind NAME = p1.t3");
	if (asprintf(&text, "thread %s", args) < 0)
		return fail(sh, "out of memory");
	rc = exec_text(sh, text);
	free(text);
	return rc;
}

static int cmd_continue(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "";

	(void)line;
	if (*args)
		return fail(sh, "continue takes no argument");
	return session_result(sh, engine_session_continue(sh->s, err, sizeof(err)), err);
}

/* --------------------------------------------------------- watching */

static int cmd_break(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "";
	int n;

	(void)line;
	if (need_arg(sh, args, "break FUNCTION | break FILE:LINE") < 0)
		return -1;
	n = engine_session_break(sh->s, args, err, sizeof(err));
	if (n < 0)
		return fail(sh, "%s", err);
	printf("breakpoint %d at %s\n", n, args);
	return 0;
}

static int cmd_watch(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "";
	int n;

	(void)line;
	if (need_arg(sh, args, "watch EXPR") < 0)
		return -1;
	n = engine_session_watch(sh->s, args, err, sizeof(err));
	if (n < 0)
		return fail(sh, "%s", err);
	printf("watchpoint %d on %s\n", n, args);
	return 0;
}

static int cmd_delete(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "", *end;
	long n;

	(void)line;
	errno = 0;
	n = strtol(args, &end, 10);
	if (!*args || errno || *skip_space(end) || n <= 0 || n > INT_MAX)
		return fail(sh, "usage: delete N (a number from info breakpoints)");
	if (engine_session_delete(sh->s, (int)n, err, sizeof(err)) < 0)
		return fail(sh, "%s", err);
	printf("deleted %ld\n", n);
	return 0;
}

/* ------------------------------------------------- saving and leaving */

static int cmd_save(struct shell *sh, const char *args, const char *line)
{
	char err[ERRLEN] = "";
	struct stat st;

	(void)line;
	if (need_arg(sh, args, "save FILE") < 0)
		return -1;
	/* `save prog` replaced the program with the schedule */
	if (stat(args, &st) == 0 && (!S_ISREG(st.st_mode) || (st.st_mode & 0111)))
		return fail(sh, "%s is %s, not a schedule to write over", args,
			    S_ISDIR(st.st_mode) ? "a directory" : "an executable file or a device");
	if (engine_session_save(sh->s, args, err, sizeof(err)) < 0)
		return fail(sh, "%s", err);
	printf("saved %s\n", args);
	return 0;
}

static int cmd_quit(struct shell *sh, const char *args, const char *line)
{
	(void)line;
	if (*args)
		return fail(sh, "quit takes no argument");
	sh->done = true;
	return 0;
}

static int cmd_detach(struct shell *sh, const char *args, const char *line)
{
	(void)line;
	if (*args)
		return fail(sh, "detach takes no argument");
	sh->done = true;
	sh->detach = true;
	return 0;
}

/* ------------------------------------------------------------ table */

static const struct command commands[] = {
    {"threads", "Looking", ARG_NONE, false, cmd_threads, "table of threads: name, state, where",
     "  threads\n"
     "Columns: NAME (p1.t3, stable across runs), VAR (schedule variable), TID, PID,\n"
     "STATE (held, running, blocked in SYSCALL, exited), FUNCTION, WHERE (file:line)\n"
     "and LAST EVENT.  Not a statement; nothing is recorded.\n"},
    {"bt", NULL, ARG_THREAD, false, cmd_bt, "backtrace of a held thread",
     "  bt [THREAD]\n"
     "  e.g. bt A    or    bt p1.t2\n"
     "Without THREAD, the current thread: the one the last event stopped (as\n"
     "gdb's).  Not a statement; nothing is recorded.\n"},
    {"print", NULL, ARG_VAR, false, cmd_print, "evaluate an expression in the program",
     "  print EXPR\n"
     "  e.g. print balance    print accounts[1].balance    print ended(A)\n"
     "The schedule language's expressions (docs/schedule-language.md, section 4).\n"
     "Not recorded; `assert EXPR` is the statement that checks one.\n"},
    {"list", NULL, ARG_THREAD, false, cmd_list, "source lines around a thread's line",
     "  list [THREAD]\n"
     "  e.g. list A\n"
     "Shows the lines around where THREAD (default: the current thread) is\n"
     "held, => marking it.  The file is\n"
     "looked for as DWARF names it, then next to the program and in the current\n"
     "directory.  Not recorded.\n"},
    {"info", NULL, ARG_INFO, false, cmd_info, "info breakpoints | watchpoints | threads",
     "  info breakpoints\n"
     "  info watchpoints\n"
     "  info threads\n"
     "Lists the numbered points `continue` stops at, or the threads (as\n"
     "`threads`).  Not recorded.\n"},
    {"wait", "Binding", ARG_PRED, false, cmd_statement, "let free threads run until PRED",
     "  wait any PRED\n"
     "  wait N distinct PRED\n"
     "  e.g. wait any enter(init)\n"
     "Free threads run until one (N distinct) of them produces an event matching\n"
     "PRED; without names nothing is bound.  The statement itself is recorded.\n"},
    {"thread", NULL, ARG_PRED, false, cmd_statement, "bind names to the threads a wait finds",
     "  thread A, B = wait 2 distinct PRED\n"
     "  e.g. thread A, B = wait 2 distinct enter(withdraw)\n"
     "The threads found are held and named A, B in the order they got there.\n"
     "The statement itself is recorded.\n"},
    {"bind", NULL, ARG_THREAD, false, cmd_bind, "name a thread by its stable name",
     "  bind NAME = p1.t3\n"
     "  e.g. bind M = p1.t1\n"
     "Holds the thread where it is.  Recorded as `thread NAME = p1.t3`.\n"},
    {"run", "Moving", ARG_THREAD, false, cmd_move, "run threads until PRED",
     "  run T[, U...] until PRED\n"
     "  e.g. run A until read(balance)    run B until return(withdraw) || exit\n"
     "       run A until write && addr == &counter    run B until syscall(futex)\n"
     "Each named thread runs until its own first event matching PRED, then is held.\n"
     "The statement itself is recorded.\n"},
    {"step", NULL, ARG_THREAD, false, cmd_move, "execute N machine instructions",
     "  step [T [N]]\n"
     "  e.g. step B 3\n"
     "T executes N instructions (default 1, at most 1000000) and is held.\n"
     "Without T, the current thread: the one the last event stopped.\n"
     "Recorded as `step T N`.\n"},
    {"next", NULL, ARG_THREAD, false, cmd_move, "run to the next source line",
     "  next [T]\n"
     "  e.g. next A\n"
     "T runs until it is on another line of the same function, or has returned.\n"
     "Without T, the current thread.  Recorded as `next T`.\n"},
    {"finish", NULL, ARG_THREAD, false, cmd_move, "run until the function returns",
     "  finish [T]\n"
     "  e.g. finish A\n"
     "T runs until the function it is in returns to its caller.  Without T, the\n"
     "current thread.  Recorded as `finish T`.\n"},
    {"release", NULL, ARG_THREAD, false, cmd_move, "unbind threads and let them run",
     "  release T[, U...]\n"
     "  release all\n"
     "The threads run freely from now on.  The statement itself is recorded.\n"},
    {"hold", NULL, ARG_THREAD, false, cmd_move, "stop bound threads where they are",
     "  hold T[, U...]\n"
     "  e.g. hold A\n"
     "Interrupts bound threads that run freely.  Recorded as `hold T`.\n"},
    {"continue", NULL, ARG_NONE, false, cmd_continue, "let everything run to a breakpoint",
     "  continue\n"
     "Every thread runs until one reaches a breakpoint or watchpoint (it is held\n"
     "and reported) or Ctrl-C (all are held); bound threads are held again where\n"
     "they are.  Interactive only: not recorded, so `save` replays only statements.\n"},
    {"timeout", NULL, ARG_NONE, false, cmd_statement, "time limit of later waits and runs",
     "  timeout D\n"
     "  e.g. timeout 30s\n"
     "The statement itself is recorded.\n"},
    {"assert", NULL, ARG_PRED, false, cmd_statement, "check a condition now",
     "  assert EXPR\n"
     "  e.g. assert balance == 70\n"
     "A false assertion fails the command (the session goes on) and shows the\n"
     "values read; it is recorded as a failed statement (`# failed: assert ...`).\n"
     "A true one is recorded as itself.\n"},
    {"break", "Watching", ARG_FUNC, false, cmd_break, "breakpoint for continue",
     "  break FUNCTION\n"
     "  break FILE:LINE\n"
     "  e.g. break withdraw    break bank.c:37\n"
     "`continue` holds the first thread that gets there.  Like enter(F)/at(F:L)\n"
     "in a predicate; not recorded.\n"},
    {"watch", NULL, ARG_VAR, false, cmd_watch, "watchpoint for continue",
     "  watch EXPR\n"
     "  e.g. watch balance\n"
     "`continue` holds the first thread that writes the lvalue.  Like write(V)\n"
     "in a predicate; not recorded.\n"},
    {"delete", NULL, ARG_NONE, false, cmd_delete, "delete breakpoint or watchpoint N",
     "  delete N\n"
     "  e.g. delete 1\n"
     "N is the number `break`, `watch` and `info` show.\n"},
    {"save", "Saving", ARG_NONE, true, cmd_save, "write the session as a schedule file",
     "  save FILE\n"
     "  e.g. save lost-update.sched\n"
     "Writes the statements that moved threads (wait, thread, run, step, next,\n"
     "finish, release, hold, timeout, assert) as a schedule whose first line is\n"
     "the `# run:` command that replays it: cctrace run FILE -- PROGRAM.\n"},
    {"detach", "Leaving", ARG_NONE, true, cmd_detach, "let every thread go and leave",
     "  detach\n"
     "Every thread is released and detached, with the code and debug registers\n"
     "restored; the program, attached or launched, keeps running by itself.\n"},
    {"quit", NULL, ARG_NONE, true, cmd_quit, "end the session (also Ctrl-D)",
     "  quit\n"
     "An attached process is detached and keeps running; a launched program is\n"
     "killed.  The exit code is 0 (3 after an error with --exit-on-error).\n"},
    {"help", "Other", ARG_COMMAND, true, cmd_help, "this list, or help CMD",
     "  help\n"
     "  help CMD\n"},
    {"echo", NULL, ARG_NONE, true, cmd_echo, "print the rest of the line",
     "  echo TEXT\n"
     "Handy to mark places in the output of a script.\n"},
};

static const size_t ncommands = sizeof(commands) / sizeof(commands[0]);

/* ------------------------------------------------------------- help */

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ncommands; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static const char *command_name_at(size_t i)
{
	return commands[i].name;
}

static const char *closest_command(const char *word)
{
	return cli_nearest_name(word, ncommands, command_name_at);
}

static void help_all(struct shell *sh)
{
	size_t i;

	for (i = 0; i < ncommands; i++) {
		if (commands[i].section)
			printf("%s%s%s\n", color(sh, COLOR_BOLD), commands[i].section,
			       color(sh, COLOR_RESET));
		printf("  %-10s %s\n", commands[i].name, commands[i].summary);
	}
	printf("\n'help CMD' gives the syntax, an example and the schedule statement.\n"
	       "Tab completes commands, threads, functions and variables.  Ctrl-C while\n"
	       "threads run holds them and returns here; at the prompt it drops the line.\n"
	       "Ctrl-D or quit leaves.\n");
}

static int cmd_help(struct shell *sh, const char *args, const char *line)
{
	const struct command *c;
	char word[32];

	(void)line;
	first_word(args, word, sizeof(word));
	if (!word[0]) {
		help_all(sh);
		return 0;
	}
	c = find_command(word);
	if (!c && closest_command(word))
		return fail(sh, "no command '%s'; did you mean '%s'? ('help' lists them)", word,
			    closest_command(word));
	if (!c)
		return fail(sh, "no command '%s'; 'help' lists them", word);
	printf("%s%s%s: %s\n%s", color(sh, COLOR_BOLD), c->name, color(sh, COLOR_RESET), c->summary,
	       c->help);
	return 0;
}

/* ---------------------------------------------------------- dispatch */

static int dispatch(struct shell *sh, const char *line)
{
	const struct command *c;
	const char *rest, *hint;
	char word[32];

	rest = first_word(line, word, sizeof(word));
	c = word[0] ? find_command(word) : NULL;
	if (!c) {
		hint = word[0] ? closest_command(word) : NULL;
		if (hint)
			return fail(sh,
				    "unknown command '%s'; did you mean '%s'? ('help' lists them)",
				    word, hint);
		return fail(sh, "unknown command '%s' ('help' lists them)", word[0] ? word : line);
	}
	if (sh->over && !c->after_over && !(sh->can_look && looks_only(c->name)))
		return fail(sh, sh->can_look
				    ? "the program stopped at the bug: only threads, bt, "
				      "list, print, save, help and quit remain useful"
				    : "the program is gone: only save, help and quit remain "
				      "useful");
	return c->fn(sh, skip_space(rest), line);
}

static int handle_line(struct shell *sh, char *raw)
{
	char *line = trim_line(raw);

	if (!*line)
		return 0;
	return dispatch(sh, line);
}

/* -------------------------------------------------------- completion */

struct candidates {
	char **v;
	int n, cap;
};

static void add_candidate(const char *name, void *ctx)
{
	struct candidates *c = ctx;
	char **bigger;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		bigger = realloc(c->v, (size_t)c->cap * sizeof(*c->v));
		if (!bigger)
			return;
		c->v = bigger;
	}
	c->v[c->n] = strdup(name);
	if (c->v[c->n])
		c->n++;
}

/* Functions and variables, without versioned symbols (read@GLIBC_2.2.5)
 * and compiler-made statics (bad_key_err.0), which no one can type. */
static void add_symbol(const char *name, void *ctx)
{
	if (!strpbrk(name, "@."))
		add_candidate(name, ctx);
}

static void add_if_prefix(struct candidates *c, const char *name, const char *prefix)
{
	if (strncmp(name, prefix, strlen(prefix)) == 0)
		add_candidate(name, c);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_unique(struct candidates *c)
{
	int i, n = 0;

	if (c->n == 0)
		return;
	qsort(c->v, (size_t)c->n, sizeof(*c->v), compare_strings);
	for (i = 1; i < c->n; i++) {
		if (strcmp(c->v[i], c->v[n]) == 0)
			free(c->v[i]);
		else
			c->v[++n] = c->v[i];
	}
	c->n = n + 1;
}

static void free_candidates(struct candidates *c)
{
	int i;

	for (i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
}

/* "enter(" for an atom that takes an argument, "signal" too where the word
 * alone is the atom. */
static void add_atom_words(struct candidates *c, const char *prefix)
{
	const struct atom_table *atoms = engine_atoms();
	char word[64];
	size_t i;

	for (i = 0; i < atoms->n; i++) {
		const struct atom_syntax *a = atom_table_row(atoms, i);

		if (a->arg == ATOM_ARG_NONE || a->arg_optional)
			add_if_prefix(c, a->name, prefix);
		if (a->arg != ATOM_ARG_NONE) {
			snprintf(word, sizeof(word), "%s(", a->name);
			add_if_prefix(c, word, prefix);
		}
	}
}

/* The argument kind of the atom called fn, or -1 if fn is not one. */
static int atom_arg_of(const char *fn)
{
	const struct atom_table *atoms = engine_atoms();
	size_t i;

	for (i = 0; i < atoms->n; i++)
		if (strcmp(atom_table_row(atoms, i)->name, fn) == 0)
			return (int)atom_table_row(atoms, i)->arg;
	return -1;
}

static void collect(struct shell *sh, enum arg_kind kind, const char *prefix, struct candidates *c)
{
	/* The language's own words; the event atoms come from the engine's
	 * table, so a new atom completes without a change here. */
	static const char *const pred_words[] = {
	    "ended(", "in(",   "any",  "distinct", "until", "wait",
	    "all",    "proc(", "addr", "value",	   "size",  "line",
	};
	size_t i;

	switch (kind) {
	case ARG_COMMAND:
		for (i = 0; i < ncommands; i++)
			add_if_prefix(c, commands[i].name, prefix);
		break;
	case ARG_INFO:
		add_if_prefix(c, "breakpoints", prefix);
		add_if_prefix(c, "watchpoints", prefix);
		add_if_prefix(c, "threads", prefix);
		break;
	case ARG_THREAD:
		engine_session_names(sh->s, 0, prefix, add_candidate, c);
		break;
	case ARG_FUNC:
		engine_session_names(sh->s, 1, prefix, add_symbol, c);
		break;
	case ARG_PRED:
		for (i = 0; i < sizeof(pred_words) / sizeof(pred_words[0]); i++)
			add_if_prefix(c, pred_words[i], prefix);
		add_atom_words(c, prefix);
		engine_session_names(sh->s, 2, prefix, add_symbol, c);
		break;
	case ARG_VAR:
		engine_session_names(sh->s, 2, prefix, add_symbol, c);
		break;
	case ARG_NONE:
		break;
	}
}

/* The identifier just before position end of text (e.g. "enter" in "enter("). */
static void word_before(const char *text, size_t end, char *word, size_t len)
{
	size_t start = end;

	while (start > 0 && is_word_char((unsigned char)text[start - 1]))
		start--;
	snprintf(word, len, "%.*s", (int)(end - start), text + start);
}

/* Index of the unclosed '(' before ws in text, or -1. */
static long open_paren(const char *text, size_t ws)
{
	int depth = 0;
	size_t i;

	for (i = ws; i-- > 0;) {
		if (text[i] == ')')
			depth++;
		else if (text[i] == '(' && depth-- == 0)
			return (long)i;
	}
	return -1;
}

/* Kind of name wanted inside an unclosed "f(" before the word at ws. */
static bool in_call(const char *text, size_t ws, enum arg_kind *kind)
{
	long open = open_paren(text, ws);
	char fn[32];

	if (open < 0)
		return false;
	word_before(text, (size_t)open, fn, sizeof(fn));
	if (atom_arg_of(fn) == ATOM_ARG_FUNCTION)
		*kind = ARG_FUNC;
	else if (atom_arg_of(fn) == ATOM_ARG_LVALUE)
		*kind = ARG_VAR;
	else if (strcmp(fn, "ended") == 0)
		*kind = ARG_THREAD;
	else if (strcmp(fn, "in") == 0)
		*kind = memchr(text + open, ',', ws - (size_t)open) ? ARG_FUNC : ARG_THREAD;
	else
		return false;
	return true;
}

static bool has_word(const char *text, size_t len, const char *word)
{
	size_t wl = strlen(word), i;

	for (i = 0; i + wl <= len; i++)
		if (strncmp(text + i, word, wl) == 0 && (i == 0 || !is_word_char(text[i - 1])) &&
		    (i + wl == len || !is_word_char(text[i + wl])))
			return true;
	return false;
}

/* What to complete at word start ws of text, from the words before it. */
static enum arg_kind context_kind(const char *text, size_t ws)
{
	const struct command *c;
	enum arg_kind kind;
	char cmd[32];

	if (*skip_space(text) == 0 || skip_space(text) == text + ws)
		return ARG_COMMAND;
	if (in_call(text, ws, &kind))
		return kind;
	first_word(text, cmd, sizeof(cmd));
	c = find_command(cmd);
	if (!c)
		return ARG_NONE;
	if (strcmp(cmd, "run") == 0 && has_word(text, ws, "until"))
		return ARG_PRED;
	if (strcmp(cmd, "thread") == 0)
		return memchr(text, '=', ws) ? ARG_PRED : ARG_NONE;
	return c->arg;
}

static int terminal_columns(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Print the candidates in columns under the line being edited. */
static void list_candidates(const struct candidates *c)
{
	int width = 0, cols, i;

	printf("\n");
	if (c->n > MAX_LISTED) {
		printf("%d possibilities; type more of the name\n", c->n);
		fflush(stdout);
		return;
	}
	for (i = 0; i < c->n; i++)
		width = max_int(width, (int)strlen(c->v[i]) + 2);
	cols = max_int(1, terminal_columns() / width);
	for (i = 0; i < c->n; i++)
		printf("%-*s%s", width, c->v[i],
		       (i % cols == cols - 1 || i == c->n - 1) ? "\n" : "");
	fflush(stdout);
}

static size_t common_prefix(const struct candidates *c)
{
	size_t n = strlen(c->v[0]);
	int i;

	for (i = 1; i < c->n; i++) {
		size_t k = 0;

		while (k < n && c->v[i][k] == c->v[0][k])
			k++;
		n = k;
	}
	return n;
}

/* What to type after a complete name: ")" closes enter(F), read(V)...; a
 * name before a ")" already there gets nothing. */
static const char *name_end(const LineInfo *li, bool in_parens)
{
	if (li->cursor < li->lastchar && *li->cursor == ')')
		return "";
	return in_parens ? ")" : " ";
}

/* Insert what the candidates agree on; list them when that is nothing. */
static unsigned char apply_candidates(EditLine *el, struct candidates *c, size_t wlen,
				      bool in_parens)
{
	size_t lcp;
	char buf[256];

	if (c->n == 0)
		return CC_ERROR;
	lcp = common_prefix(c);
	if (lcp > wlen) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(lcp - wlen), c->v[0] + wlen);
		el_insertstr(el, buf);
	}
	if (c->n == 1) {
		size_t len = strlen(c->v[0]);

		if (len > 0 && c->v[0][len - 1] != '(')
			el_insertstr(el, name_end(el_line(el), in_parens));
		return CC_REFRESH;
	}
	if (lcp > wlen)
		return CC_REFRESH;
	list_candidates(c);
	return CC_REDISPLAY;
}

static unsigned char key_complete(EditLine *el, int ch)
{
	const LineInfo *li = el_line(el);
	struct candidates c = {0};
	struct shell *sh = NULL;
	size_t cur = (size_t)(li->cursor - li->buffer), ws = cur;
	enum arg_kind kind;
	unsigned char ret;
	char *text;

	(void)ch;
	el_get(el, EL_CLIENTDATA, &sh);
	if (!sh)
		return CC_ERROR;
	text = strndup(li->buffer, cur);
	if (!text)
		return CC_ERROR;
	/* a word may be C++'s bank::Acc */
	while (ws > 0 && (is_word_char((unsigned char)text[ws - 1]) ||
			  (ws >= 2 && text[ws - 1] == ':' && text[ws - 2] == ':')))
		ws -= text[ws - 1] == ':' ? 2 : 1;
	collect(sh, context_kind(text, ws), text + ws, &c);
	sort_unique(&c);
	ret = apply_candidates(el, &c, cur - ws, in_call(text, ws, &kind));
	free_candidates(&c);
	free(text);
	return ret;
}

/* ^C at the prompt: show it, drop the line, prompt again. */
static unsigned char key_interrupt(EditLine *el, int ch)
{
	const LineInfo *li = el_line(el);
	struct shell *sh = NULL;

	(void)ch;
	el_get(el, EL_CLIENTDATA, &sh);
	if (sh)
		sh->cancel_line = true;
	el_cursor(el, (int)(li->lastchar - li->cursor));
	fputs("^C\n", stdout);
	fflush(stdout);
	return CC_NEWLINE;
}

/* ------------------------------------------------------------- input */

static char *prompt(EditLine *el)
{
	struct shell *sh = NULL;

	el_get(el, EL_CLIENTDATA, &sh);
	return sh ? sh->prompt : (char *)PROMPT_TEXT;
}

static void history_file(struct shell *sh)
{
	const char *env = getenv("CCTRACE_HISTORY"), *home = getenv("HOME");

	struct stat st;

	if (env && *env)
		snprintf(sh->hist_path, sizeof(sh->hist_path), "%s", env);
	else if (home && *home)
		snprintf(sh->hist_path, sizeof(sh->hist_path), "%s/.cctrace_history", home);
	else
		sh->hist_path[0] = 0;
	/* libedit makes the file private when it saves; never do that to a
	 * device such as /dev/null: only regular files (or new ones) keep
	 * history. */
	if (sh->hist_path[0] && stat(sh->hist_path, &st) == 0 && !S_ISREG(st.st_mode))
		sh->hist_path[0] = 0;
}

static void editor_init(struct shell *sh, const char *argv0)
{
	HistEvent ev;

	sh->hist = history_init();
	history(sh->hist, &ev, H_SETSIZE, HISTORY_SIZE);
	history(sh->hist, &ev, H_SETUNIQUE, 1);
	history_file(sh);
	if (sh->hist_path[0])
		history(sh->hist, &ev, H_LOAD, sh->hist_path);
	if (sh->color)
		snprintf(sh->prompt, sizeof(sh->prompt), "\1%s\1%s\1%s\1", COLOR_PROMPT,
			 "(cctrace)", COLOR_RESET);
	snprintf(sh->prompt + strlen(sh->prompt), sizeof(sh->prompt) - strlen(sh->prompt), "%s",
		 sh->color ? " " : PROMPT_TEXT);
	sh->el = el_init(argv0, stdin, stdout, stderr);
	el_set(sh->el, EL_CLIENTDATA, sh);
	el_set(sh->el, EL_GETCFN, read_key);
	el_set(sh->el, EL_EDITOR, "emacs");
	el_set(sh->el, EL_SIGNAL, 1);
	el_set(sh->el, EL_PROMPT_ESC, prompt, '\1');
	el_set(sh->el, EL_HIST, history, sh->hist);
	/* el_wset: el_set's narrow EL_ADDFN copies the names and never frees them */
	el_wset(sh->el, EL_ADDFN, L"cctrace-complete", L"complete a name", key_complete);
	el_wset(sh->el, EL_ADDFN, L"cctrace-interrupt", L"drop the line", key_interrupt);
	el_set(sh->el, EL_SETTY, "-d", "-isig", NULL);
	el_source(sh->el, NULL);
	el_set(sh->el, EL_BIND, "^I", "cctrace-complete", NULL);
	el_set(sh->el, EL_BIND, "^C", "cctrace-interrupt", NULL);
}

static void editor_end(struct shell *sh)
{
	if (sh->el)
		el_end(sh->el);
	if (sh->hist)
		history_end(sh->hist);
}

static void remember(struct shell *sh, const char *line)
{
	HistEvent ev;
	char *copy = strdup(line), *t;

	if (!copy)
		return;
	t = trim_line(copy);
	if (*t) {
		history(sh->hist, &ev, H_ENTER, line);
		if (sh->hist_path[0])
			history(sh->hist, &ev, H_SAVE, sh->hist_path);
	}
	free(copy);
}

/* Has a signal come that ends the session?  Any that would end cctrace
 * (SIGTERM, SIGHUP, SIGQUIT...), and Ctrl-C too when no one types the
 * commands; at a terminal Ctrl-C only drops the line, as in gdb. */
static bool ends_session(struct shell *sh)
{
	int sig = engine_stop_signal();

	if (sig && (sig != SIGINT || !sh->tty))
		sh->ended_by = sig;
	return sh->ended_by != 0;
}

/* How often the free threads' stops are served while a line is awaited:
 * a free thread that stops (a new thread, a signal) waits at most this. */
#define IDLE_POLL_MS 20

/* While the prompt waits: the free threads run on (engine_session_idle).
 * A program that ended meanwhile is said at once. */
static void serve_free_threads(struct shell *sh)
{
	char err[1024];
	enum session_result r;

	if (sh->over)
		return;
	r = engine_session_idle(sh->s, 1, err, sizeof(err)); /* 0 would reap nothing */
	if (r != SESSION_OK) {
		fputc('\n', stdout);
		session_result(sh, r, err);
		fflush(stdout);
	}
}

/* Waits until fd has input, serving the free threads meanwhile: 1, or
 * -1 with errno (EINTR: a signal came). */
static int await_input(struct shell *sh, int fd)
{
	struct pollfd in = {fd, POLLIN, 0};
	int n;

	/* once before the line too: commands that keep coming (a script)
	 * leave no idle time between them */
	serve_free_threads(sh);
	for (;;) {
		/* a signal that came while the free threads were served, not
		 * in poll, interrupts nothing: the session ended all the same
		 * (and the poll is finite, so one between this check and the
		 * poll is seen at the next turn) */
		if (ends_session(sh)) {
			errno = EINTR;
			return -1;
		}
		n = poll(&in, 1, IDLE_POLL_MS);
		if (n != 0)
			break;
		serve_free_threads(sh);
	}
	return n > 0 ? 1 : -1;
}

/* libedit's reading of a character (EL_GETCFN), as its own does it, but
 * serving the free threads while no key comes. */
static int read_key(EditLine *el, wchar_t *wc)
{
	static mbstate_t state;
	struct shell *sh = NULL;
	char byte;
	ssize_t got;
	size_t k;

	el_get(el, EL_CLIENTDATA, &sh);
	for (;;) {
		if (await_input(sh, STDIN_FILENO) < 0)
			return -1; /* EINTR: libedit and read_tty_line take it */
		got = read(STDIN_FILENO, &byte, 1);
		if (got <= 0)
			return (int)got;
		k = mbrtowc(wc, &byte, 1, &state);
		if (k == (size_t)-2)
			continue;      /* more of a multibyte character */
		if (k == (size_t)-1) { /* not one: the byte itself */
			memset(&state, 0, sizeof(state));
			*wc = (wchar_t)(unsigned char)byte;
		}
		return 1;
	}
}

/* The next line typed at the prompt (to free), NULL at end of input. */
static char *read_tty_line(struct shell *sh)
{
	const char *got;
	char *line;
	int count;

	for (;;) {
		sh->cancel_line = false;
		got = el_gets(sh->el, &count);
		/* ^C on an empty line ends el_gets with nothing read, which
		 * is how it says end of input too: the flag tells them apart. */
		if (ends_session(sh))
			return NULL;
		if (sh->cancel_line || (!got && count < 0 && errno == EINTR))
			continue;
		if (!got) {
			printf("\n");
			return NULL;
		}
		line = strdup(got);
		if (line) {
			line[strcspn(line, "\n")] = 0;
			remember(sh, line);
		}
		return line;
	}
}

/* Commands from a pipe: stdin is unbuffered (shell_init), so a line is
 * waited for with poll, which a signal ends whatever SA_RESTART says. */
static char *read_pipe_line(struct shell *sh)
{
	char *line = NULL;
	size_t cap = 0;

	while (await_input(sh, STDIN_FILENO) < 0)
		if (errno != EINTR || ends_session(sh))
			return NULL;
	if (getline(&line, &cap, stdin) < 0) {
		free(line);
		return NULL;
	}
	line[strcspn(line, "\n")] = 0;
	return line;
}

/* ----------------------------------------------------------- startup */

struct args {
	char **argv; /* program to launch, or NULL */
	pid_t pid;   /* process to attach, or 0 */
};

/* PID, or -- PROGRAM [ARGS...] */
static int parse_operands(const struct cli_args *c, struct args *a)
{
	char *end;
	long pid;

	if (c->program && c->program[0] && c->noperands == 0) {
		a->argv = c->program;
		return 0;
	}
	if (!c->program && c->noperands == 1) {
		errno = 0;
		pid = strtol(c->operands[0], &end, 10);
		if (!errno && !*end && pid > 0 && pid <= 0x3fffffff) {
			a->pid = (pid_t)pid;
			return 0;
		}
		cli_usage_error(
		    "shell", "'%s' is not a process id (to launch a program: cctrace shell -- %s)",
		    c->operands[0], c->operands[0]);
		return -1;
	}
	cli_usage_error("shell", "expected PID or -- PROGRAM [ARGS...]");
	return -1;
}

/* The directory of pid's executable, where `list` looks for sources. */
static void program_dir(struct shell *sh, pid_t pid)
{
	char link[64], *slash;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, sh->prog_dir, sizeof(sh->prog_dir) - 1);
	sh->prog_dir[n > 0 ? n : 0] = 0;
	slash = strrchr(sh->prog_dir, '/');
	if (slash)
		*slash = 0;
}

static void banner(struct shell *sh, const struct args *a)
{
	struct session_thread *t;
	int n;

	t = all_threads(sh, &n);
	if (t && n > 0)
		program_dir(sh, t[0].pid);
	if (sh->tty)
		printf("cctrace shell: %s %s (pid %d), %d thread%s held.  'help' lists the "
		       "commands, Tab completes, Ctrl-D quits.\n",
		       a->argv ? "launched" : "attached to", a->argv ? a->argv[0] : "process",
		       t && n > 0 ? (int)t[0].pid : (int)a->pid, n, n == 1 ? "" : "s");
	free(t);
}

static int start_session(struct shell *sh, const struct args *a)
{
	char err[ERRLEN] = "";

	if (a->argv)
		sh->s = engine_session_launch(a->argv, &sh->opt, err, sizeof(err));
	else
		sh->s = engine_session_attach(a->pid, &sh->opt, err, sizeof(err));
	if (!sh->s) {
		fprintf(stderr, "cctrace shell: error: %s\n",
			err[0] ? err : "cannot start the session");
		return -1;
	}
	sh->attached = !a->argv;
	return 0;
}

static void shell_init(struct shell *sh, const struct cli_args *c)
{
	/* https://no-color.org: set and not empty */
	const char *no_color = getenv("NO_COLOR");
	bool colour_allowed = !no_color || !no_color[0];

	memset(sh, 0, sizeof(*sh));
	sh->opt = c->opt;
	sh->exit_on_error = c->exit_on_error;
	sh->tty = isatty(STDIN_FILENO);
	if (!sh->tty)
		setvbuf(stdin, NULL, _IONBF, 0);
	sh->color = colour_allowed && isatty(STDOUT_FILENO);
	sh->err_color = colour_allowed && isatty(STDERR_FILENO);
}

/* Read and run commands until quit or end of input; the exit code. */
static int command_loop(struct shell *sh)
{
	char *line;
	int rc;

	while (!sh->done) {
		fflush(stdout);
		line = sh->tty ? read_tty_line(sh) : read_pipe_line(sh);
		if (!line)
			break;
		rc = handle_line(sh, line);
		free(line);
		if (ends_session(sh)) /* it came while the command ran */
			break;
		if (rc < 0 && sh->exit_on_error)
			return EXIT_ERROR;
	}
	return 0;
}

int shell_main(struct cli_args *c)
{
	struct shell sh;
	struct args a = {NULL, 0};
	bool alive;
	int rc;

	shell_init(&sh, c);
	if (parse_operands(c, &a) < 0)
		return EXIT_ERROR;
	engine_note_watchpoints(NULL, &sh.opt, c->watch_why); /* `watch` is a command away */
	if (start_session(&sh, &a) < 0)
		return EXIT_ERROR;
	banner(&sh, &a);
	if (sh.tty)
		editor_init(&sh, "cctrace");
	rc = command_loop(&sh);
	fflush(stdout);
	alive = !sh.ended_by && engine_session_program_alive(sh.s);
	if (sh.detach)
		engine_session_detach(sh.s);
	else
		engine_session_end(sh.s);
	editor_end(&sh);
	/* said as attach says it: what became of the program */
	if (alive)
		fprintf(stderr, "cctrace shell: %s\n",
			sh.detach || sh.attached ? "detached, and the process keeps running"
						 : "the program was killed");
	if (sh.ended_by) {
		fprintf(stderr, "cctrace: error: interrupted by %s; %s\n",
			sigabbrev_np(sh.ended_by),
			sh.attached ? "detached, and the process keeps running"
				    : "the program was killed");
		return 128 + sh.ended_by;
	}
	return rc;
}
