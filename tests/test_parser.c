/*
 * Tests for the schedule parser (lang/lexer.c, lang/parse.c, lang/print.c).
 *
 * Success cases check the tree shape directly (kinds, names, counts,
 * locations) and through expr_format, which prints binary operations fully
 * parenthesised so precedence is visible, and schedule_dump, which prints
 * only the parentheses needed and must parse back.  Error cases check the
 * whole first line of the diagnostic and that the source line and caret
 * lines match it.
 *
 * Size and depth: chains of 45,000 operands go through the whole pipeline
 * (parse, check against the offline symbols of tests/fixtures/symfix,
 * print, free, and `cctrace run` on samples/bank), and nesting past the
 * limits is an error with a caret.
 */
#include "engine/engine.h"
#include "lang/lang.h"
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH "t.sched"

/* An atom's name, or "in" for in(...): what a test expects an expression to be. */
static const char *kind_name(const struct expr *e)
{
	if (e->kind == E_IN)
		return "in";
	cr_assert_eq(e->kind, E_EVENT);
	return e->atom->name;
}

static struct schedule *parse_ok(const char *text)
{
	char err[2048];
	struct schedule *s = schedule_parse(PATH, text, engine_atoms(), err, sizeof(err));
	cr_assert(s != NULL, "unexpected parse error for <<%s>>:\n%s", text, err);
	cr_assert_str_eq(err, "");
	return s;
}

static char *dump(const struct schedule *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	schedule_dump(s, f);
	fclose(f);
	return buf;
}

/* Parses text, dumps it, compares; then checks the dump parses back to itself. */
static void dumps_as(const char *text, const char *expected)
{
	struct schedule *s = parse_ok(text);
	char *out = dump(s);
	cr_assert_str_eq(out, expected, "for <<%s>>", text);
	struct schedule *again = parse_ok(out);
	char *out2 = dump(again);
	cr_assert_str_eq(out2, out, "dump does not round-trip");
	free(out2);
	schedule_free(again);
	free(out);
	schedule_free(s);
}

/* The predicate or condition of the only statement of "assert EXPR". */
static void expr_is(const char *expr, const char *expected)
{
	char text[512], buf[512];
	snprintf(text, sizeof(text), "assert %s\n", expr);
	struct schedule *s = parse_ok(text);
	cr_assert_eq(s->body->kind, S_ASSERT);
	expr_format(s->body->cond, buf, sizeof(buf));
	cr_assert_str_eq(buf, expected, "for <<%s>>", expr);
	schedule_free(s);
}

/* Checks a diagnostic: first line exactly, then the source line of the
 * position named in it, then a caret under that column (tabs mirrored). */
static void check_diag(const char *text, const char *err, const char *first)
{
	size_t flen = strlen(first);
	cr_assert(strncmp(err, first, flen) == 0 && err[flen] == '\n',
		  "for <<%s>>\nexpected: %s\n     got: %s", text, first, err);
	int line = 0, col = 0;
	const char *p = strchr(err, ':');
	cr_assert(p && sscanf(p, ":%d:%d:", &line, &col) == 2, "no position in %s", first);
	const char *src = text;
	for (int i = 1; i < line; i++) {
		src = strchr(src, '\n');
		cr_assert(src, "line %d beyond text", line);
		src++;
	}
	size_t slen = strcspn(src, "\n");
	if (slen && src[slen - 1] == '\r')
		slen--;
	char expect[1024];
	int n = snprintf(expect, sizeof(expect), "    %.*s\n    ", (int)slen, src);
	for (int i = 0; i < col - 1; i++)
		expect[n++] = (size_t)i < slen && src[i] == '\t' ? '\t' : ' ';
	strcpy(expect + n, "^\n");
	cr_assert_str_eq(err + flen + 1, expect, "source/caret lines for <<%s>>", text);
}

static void fails(const char *text, const char *first)
{
	char err[2048];
	struct schedule *s = schedule_parse(PATH, text, engine_atoms(), err, sizeof(err));
	cr_assert(s == NULL, "<<%s>> parsed but should fail with %s", text, first);
	check_diag(text, err, first);
}

/* ---- statements ------------------------------------------------------- */

Test(parser, empty_schedules)
{
	const char *texts[] = {"", "\n\n", "# just a comment\n", "  ;;  \n ; # x", "\t\r\n"};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct schedule *s = parse_ok(texts[i]);
		cr_assert_null(s->body);
		cr_assert_null(s->run_comment);
		cr_assert_str_eq(s->path, PATH);
		cr_assert_str_eq(s->text, texts[i]);
		schedule_free(s);
	}
}

Test(parser, full_example)
{
	const char *text =
	    "# run: cctrace run samples/bank/lost-update.sched -- samples/bank/bank\n"
	    "timeout 2s\n"
	    "thread A, B = wait 2 distinct enter(withdraw)\n"
	    "thread M = wait any start\n"
	    "wait any enter(init)\n"
	    "run A, B until enter(audit)\n"
	    "run A until write(balance)\n"
	    "run B until at(bank.c:41)\n"
	    "run A until return(withdraw) || exit\n"
	    "run A until read(acct->balance) && balance < 0\n"
	    "if (balance != 100) { run A until exit } else { run B until exit }\n"
	    "while (!ended(A)) { run A until enter(step) }\n"
	    "while (in(A, withdraw)) { run A until exit }\n"
	    "repeat 1000 { run T until enter(hook) }\n"
	    "assert balance == 80\n"
	    "assert accounts[1].balance >= 0 && p->next == 0\n"
	    "release all\n"
	    "release A, B\n"
	    "run A until signal\n"
	    "run A until signal(SIGSEGV)\n";
	dumps_as(text, "timeout 2000ms\n"
		       "thread A, B = wait 2 distinct enter(withdraw)\n"
		       "thread M = wait any start\n"
		       "wait any enter(init)\n"
		       "run A, B until enter(audit)\n"
		       "run A until write(balance)\n"
		       "run B until at(bank.c:41)\n"
		       "run A until return(withdraw) || exit\n"
		       "run A until read(acct->balance) && balance < 0\n"
		       "if (balance != 100) {\n"
		       "        run A until exit\n"
		       "} else {\n"
		       "        run B until exit\n"
		       "}\n"
		       "while (!ended(A)) {\n"
		       "        run A until enter(step)\n"
		       "}\n"
		       "while (in(A, withdraw)) {\n"
		       "        run A until exit\n"
		       "}\n"
		       "repeat 1000 {\n"
		       "        run T until enter(hook)\n"
		       "}\n"
		       "assert balance == 80\n"
		       "assert accounts[1].balance >= 0 && p->next == 0\n"
		       "release all\n"
		       "release A, B\n"
		       "run A until signal\n"
		       "run A until signal(SIGSEGV)\n");
	struct schedule *s = parse_ok(text);
	cr_assert_str_eq(s->run_comment,
			 "cctrace run samples/bank/lost-update.sched -- samples/bank/bank");
	schedule_free(s);
}

Test(parser, timeout_units)
{
	struct schedule *s = parse_ok("timeout 500ms\ntimeout 2s\ntimeout 1m\ntimeout 0s\n");
	const struct stmt *t = s->body;
	int64_t want[] = {500, 2000, 60000, 0};
	for (int i = 0; i < 4; i++, t = t->next) {
		cr_assert_eq(t->kind, S_TIMEOUT);
		cr_assert_eq(t->timeout_ms, want[i]);
		cr_assert_eq(t->loc.line, i + 1);
		cr_assert_eq(t->loc.col, 1);
	}
	cr_assert_null(t);
	schedule_free(s);
}

/* Hours and decimals, exact to the millisecond, printed back in ms. */
Test(parser, timeout_hours_and_decimals)
{
	struct schedule *s = parse_ok("timeout 1h\ntimeout 1.5s\ntimeout 0.25m\ntimeout "
				      "0.5h\ntimeout 2.000s\n");
	const struct stmt *t = s->body;
	int64_t want[] = {3600000, 1500, 15000, 1800000, 2000};
	for (int i = 0; i < 5; i++, t = t->next) {
		cr_assert_eq(t->kind, S_TIMEOUT);
		cr_assert_eq(t->timeout_ms, want[i], "line %d: %lld ms", i + 1,
			     (long long)t->timeout_ms);
	}
	cr_assert_null(t);
	schedule_free(s);
	dumps_as("timeout 1.5s\n", "timeout 1500ms\n");
	/* `1.5` without a unit is no number (the lexer leaves 1 '.' 5). */
	fails("timeout 1.5\n",
	      "t.sched:1:9: error: 'timeout' needs a unit: '1.5ms', '1.5s', '1.5m' or '1.5h'");
	fails("timeout 1.5x\n", "t.sched:1:9: error: bad duration '1.5x': use ms, s, m or h");
	/* a number run into a name is no duration, outside a timeout */
	fails("assert 12abc == 0\n",
	      "t.sched:1:8: error: bad number '12abc' (a name cannot begin with a digit)");
	/* its unit is there, its fraction not: no "add a unit, '1.s'" */
	fails(
	    "timeout 1.s\n",
	    "t.sched:1:9: error: bad duration '1.s': a point needs a digit after it, e.g. '1.5s'");
	fails("timeout 0.5ms\n",
	      "t.sched:1:9: error: bad duration '0.5ms': finer than a millisecond");
	fails("timeout 0.0001s\n",
	      "t.sched:1:9: error: bad duration '0.0001s': finer than a millisecond");
	fails("timeout 99999999999999999999h\n", "t.sched:1:9: error: duration too large");
}

/* The command line's reading is the same grammar, with seconds for a bare number. */
Test(parser, duration_grammar_for_the_command_line)
{
	static const struct {
		const char *text;
		int64_t ms;
	} ok[] = {{"500ms", 500}, {"2", 2000},	   {"1.5", 1500}, {"1.5s", 1500},
		  {"2m", 120000}, {"1h", 3600000}, {"0.001s", 1}, {"0", 0}};
	static const char *const bad[] = {"",
					  "5x",
					  "1.5x",
					  "-1s",
					  "s",
					  ".5s",
					  "1.s",
					  "0.5ms",
					  "1e3ms",
					  " 1s",
					  "99999999999999999999"};
	char err[128];
	int64_t ms;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_expect_eq(
		    lang_parse_duration(ok[i].text, strlen(ok[i].text), "s", &ms, err, sizeof(err)),
		    0, "'%s': %s", ok[i].text, err);
		cr_expect_eq(ms, ok[i].ms, "'%s' is %lld ms", ok[i].text, (long long)ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		cr_expect_eq(
		    lang_parse_duration(bad[i], strlen(bad[i]), "s", &ms, err, sizeof(err)), -1,
		    "'%s' was accepted", bad[i]);
		cr_expect(strstr(err, "duration"), "'%s': no message: %s", bad[i], err);
	}
	/* Without a bare unit (the language), a bare number is refused. */
	cr_expect_eq(lang_parse_duration("2", 1, NULL, &ms, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "bad duration '2': use ms, s, m or h");
	/* The text need not end at len. */
	cr_expect_eq(lang_parse_duration("3sx", 2, NULL, &ms, NULL, 0), 0);
	cr_expect_eq(ms, 3000);
}

/* Every signal glibc names is accepted as signal(SIGNAME) and printed back
 * as that name; real-time signals, which glibc does not name, by number. */
Test(parser, every_signal_name)
{
	int named = 0;
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		char text[64], want[64];
		if (abbrev) {
			snprintf(text, sizeof(text), "run A until signal(SIG%s)\n", abbrev);
			named++;
		} else {
			snprintf(text, sizeof(text), "run A until signal(%d)\n", sig);
		}
		struct schedule *s = parse_ok(text);
		cr_assert_str_eq(kind_name(s->body->pred), "signal");
		cr_expect_eq(s->body->pred->ival, sig, "%s", text);
		schedule_free(s);
		if (abbrev)
			snprintf(want, sizeof(want), "run A until signal(SIG%s)\n", abbrev);
		else
			snprintf(want, sizeof(want), "run A until signal(%d)\n", sig);
		dumps_as(text, want);
	}
	cr_expect_geq(named, 31, "glibc named only %d signals", named);
	/* Linux aliases glibc's one-name-per-number leaves out. */
	const char *alias[] = {"SIGIO", "SIGIOT", "SIGCLD"};
	int num[] = {SIGIO, SIGIOT, SIGCHLD};
	for (int i = 0; i < 3; i++) {
		char text[64];
		snprintf(text, sizeof(text), "run A until signal(%s)\n", alias[i]);
		struct schedule *s = parse_ok(text);
		cr_expect_eq(s->body->pred->ival, num[i], "%s", alias[i]);
		schedule_free(s);
	}
	fails("run A until signal(SIG)\n", "t.sched:1:20: error: unknown signal 'SIG': use a "
					   "name such as SIGSEGV or a number 1-64");
	fails("run A until signal(segv)\n", "t.sched:1:20: error: unknown signal 'segv': use a "
					    "name such as SIGSEGV or a number 1-64");
}

Test(parser, thread_wait)
{
	struct schedule *s = parse_ok("thread A, B = wait 2 distinct enter(withdraw)\n");
	const struct stmt *w = s->body;
	cr_assert_eq(w->kind, S_WAIT);
	cr_assert_eq(w->n_names, 2);
	cr_assert_str_eq(w->names[0], "A");
	cr_assert_str_eq(w->names[1], "B");
	cr_assert_eq(w->name_locs[0].line, 1);
	cr_assert_eq(w->name_locs[0].col, 8);
	cr_assert_eq(w->name_locs[1].col, 11);
	cr_assert_eq(w->count, 2);
	cr_assert(w->distinct);
	cr_assert_eq(w->loc.col, 1);
	cr_assert_str_eq(kind_name(w->pred), "enter");
	cr_assert_str_eq(w->pred->name, "withdraw");
	cr_assert_eq(w->pred->loc.col, 31);
	cr_assert_null(w->next);
	schedule_free(s);
}

Test(parser, wait_forms)
{
	struct schedule *s = parse_ok("thread M = wait any start\n"
				      "wait any enter(init)\n"
				      "wait 1 exit\n"
				      "wait 3 distinct start\n"
				      "thread X = wait 1 distinct start\n");
	const struct stmt *w = s->body;
	cr_assert_eq(w->kind, S_WAIT);
	cr_assert_eq(w->n_names, 1);
	cr_assert_str_eq(w->names[0], "M");
	cr_assert_eq(w->count, 1);
	cr_assert(!w->distinct);
	cr_assert_str_eq(kind_name(w->pred), "start");
	w = w->next;
	cr_assert_eq(w->kind, S_WAIT);
	cr_assert_eq(w->n_names, 0);
	cr_assert_null(w->names);
	cr_assert_eq(w->count, 1);
	cr_assert_eq(w->loc.line, 2);
	cr_assert_str_eq(kind_name(w->pred), "enter");
	cr_assert_str_eq(w->pred->name, "init");
	w = w->next;
	cr_assert_eq(w->count, 1);
	cr_assert(!w->distinct);
	cr_assert_str_eq(kind_name(w->pred), "exit");
	w = w->next;
	cr_assert_eq(w->count, 3);
	cr_assert(w->distinct);
	cr_assert_eq(w->n_names, 0);
	w = w->next;
	cr_assert_eq(w->count, 1);
	cr_assert(w->distinct);
	cr_assert_eq(w->n_names, 1);
	schedule_free(s);
}

Test(parser, run)
{
	struct schedule *s = parse_ok("run A, B until enter(audit)\n  run  C until exit");
	const struct stmt *r = s->body;
	cr_assert_eq(r->kind, S_RUN);
	cr_assert_eq(r->n_names, 2);
	cr_assert_str_eq(r->names[0], "A");
	cr_assert_str_eq(r->names[1], "B");
	cr_assert_eq(r->name_locs[0].col, 5);
	cr_assert_eq(r->name_locs[1].col, 8);
	cr_assert_str_eq(kind_name(r->pred), "enter");
	cr_assert_str_eq(r->pred->name, "audit");
	cr_assert_eq(r->pred->loc.col, 16);
	r = r->next;
	cr_assert_eq(r->kind, S_RUN);
	cr_assert_eq(r->loc.line, 2);
	cr_assert_eq(r->loc.col, 3);
	cr_assert_eq(r->name_locs[0].line, 2);
	cr_assert_eq(r->name_locs[0].col, 8);
	cr_assert_str_eq(kind_name(r->pred), "exit");
	cr_assert_eq(r->pred->loc.col, 16);
	schedule_free(s);
}

Test(parser, at_locations)
{
	struct schedule *s = parse_ok("run B until at(bank.c:41)\n"
				      "run B until at( src/x/bank.c:7 )\n"
				      "run B until at(my-file.v2.c:123456)\n"
				      "run B until at(C:/w/a.c:9)\n");
	const struct stmt *r = s->body;
	const char *files[] = {"bank.c", "src/x/bank.c", "my-file.v2.c", "C:/w/a.c"};
	int64_t lines[] = {41, 7, 123456, 9};
	for (int i = 0; i < 4; i++, r = r->next) {
		cr_assert_str_eq(kind_name(r->pred), "at");
		cr_assert_str_eq(r->pred->name, files[i]);
		cr_assert_eq(r->pred->ival, lines[i]);
		cr_assert_eq(r->pred->loc.col, 13);
	}
	schedule_free(s);
}

Test(parser, events)
{
	struct schedule *s = parse_ok("run A until return(withdraw) || exit\n"
				      "run A until read(acct->balance) && balance < 0\n"
				      "run A until signal\n"
				      "run A until signal(SIGSEGV)\n"
				      "run A until signal(9)\n"
				      "run A until signal(SIGABRT) || signal(SIGBUS)\n"
				      "run A until write(*p) || write(a[2].x) || read(s.f)\n");
	const struct stmt *r = s->body;
	const struct expr *e = r->pred;
	cr_assert_eq(e->kind, E_BINARY);
	cr_assert_eq(e->op, T_OROR);
	cr_assert_str_eq(kind_name(e->lhs), "return");
	cr_assert_str_eq(e->lhs->name, "withdraw");
	cr_assert_str_eq(kind_name(e->rhs), "exit");
	cr_assert_eq(e->loc.col, 13);
	cr_assert_eq(e->rhs->loc.col, 33);
	r = r->next;
	e = r->pred;
	cr_assert_eq(e->op, T_ANDAND);
	cr_assert_str_eq(kind_name(e->lhs), "read");
	cr_assert_eq(e->lhs->lhs->kind, E_ARROW);
	cr_assert_str_eq(e->lhs->lhs->name, "balance");
	cr_assert_str_eq(e->lhs->lhs->lhs->name, "acct");
	cr_assert_eq(e->rhs->kind, E_BINARY);
	cr_assert_eq(e->rhs->op, '<');
	cr_assert_eq(e->rhs->lhs->kind, E_NAME);
	cr_assert_eq(e->rhs->rhs->kind, E_INT);
	cr_assert_eq(e->rhs->rhs->ival, 0);
	r = r->next;
	cr_assert_str_eq(kind_name(r->pred), "signal");
	cr_assert_eq(r->pred->ival, 0);
	r = r->next;
	cr_assert_str_eq(kind_name(r->pred), "signal");
	cr_assert_eq(r->pred->ival, SIGSEGV);
	r = r->next;
	cr_assert_eq(r->pred->ival, 9);
	r = r->next;
	cr_assert_eq(r->pred->lhs->ival, SIGABRT);
	cr_assert_eq(r->pred->rhs->ival, SIGBUS);
	char buf[256];
	expr_format(r->next->pred, buf, sizeof(buf));
	cr_assert_str_eq(buf, "(write(*p) || write(a[2].x)) || read(s.f)");
	schedule_free(s);
}

/* read, write, call and syscall alone are instruction-level events. */
static void pred_is(const char *text, const char *expected, const char *first)
{
	struct schedule *s = parse_ok(text);
	const struct expr *e = s->body->pred;
	char buf[256];

	expr_format(e, buf, sizeof(buf));
	cr_assert_str_eq(buf, expected, "for <<%s>>", text);
	while (e->kind == E_BINARY)
		e = e->lhs;
	cr_assert_str_eq(kind_name(e), first, "for <<%s>>", text);
	schedule_free(s);
}

Test(parser, instruction_events)
{
	struct schedule *s;

	pred_is("run A until read || write\n", "read || write", "read");
	pred_is("run A until write && addr == &x && value > 2\n",
		"(write && (addr == &x)) && (value > 2)", "write");
	pred_is("run A until call\n", "call", "call");
	pred_is("run A until call(getpid) || return(f)\n", "call(getpid) || return(f)", "call");
	pred_is("run A until syscall(futex) || syscall\n", "syscall(futex) || syscall", "syscall");
	pred_is("run A until in(js_GC) && read(rt->state)\n", "in(js_GC) && read(rt->state)", "in");
	pred_is("run A until read && in(T, f)\n", "read && in(T, f)", "read");
	s = parse_ok("run A until syscall(close)\n");
	cr_assert_eq(s->body->pred->ival, 3, "close is system call 3 on x86-64");
	schedule_free(s);
	s = parse_ok("run A until syscall\n");
	cr_assert_eq(s->body->pred->ival, -1);
	cr_assert_null(s->body->pred->name);
	schedule_free(s);
	s = parse_ok("run A until in(f)\n");
	cr_assert_null(s->body->pred->name);
	cr_assert_str_eq(s->body->pred->func, "f");
	schedule_free(s);
}

/* Every atom of the engine's table parses, with its argument and, where it
 * may go without, bare, and prints back as written. */
Test(parser, every_atom_parses_and_prints_back)
{
	const struct atom_table *t = engine_atoms();
	char text[128], pred[96];

	cr_assert_geq(t->n, 13);
	for (size_t i = 0; i < t->n; i++) {
		const struct atom_syntax *a = atom_table_row(t, i);
		static const char *const args[] = {
		    [ATOM_ARG_NONE] = "",
		    [ATOM_ARG_FUNCTION] = "(f)",
		    [ATOM_ARG_LOCATION] = "(bank.c:41)",
		    [ATOM_ARG_LVALUE] = "(a[2].x)",
		    [ATOM_ARG_SIGNAL] = "(SIGSEGV)",
		    [ATOM_ARG_NAME] = "(futex)",
		};

		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(atom_table_row(t, j)->name, a->name);
		snprintf(pred, sizeof(pred), "%s%s", a->name, args[a->arg]);
		snprintf(text, sizeof(text), "run A until %s || exit\n", pred);
		strcat(pred, " || exit");
		pred_is(text, pred, a->name);
		if (a->arg == ATOM_ARG_NONE || !a->arg_optional)
			continue;
		snprintf(text, sizeof(text), "run A until %s\n", a->name);
		pred_is(text, a->name, a->name);
	}
}

/* The parser knows the atoms it is handed, and no others. */
Test(parser, atoms_come_from_the_table)
{
	static const struct atom_syntax tick = {"tick", ATOM_ARG_NONE};
	const struct atom_table only_tick = {&tick, sizeof(tick), 1};
	char err[512];
	struct schedule *s =
	    schedule_parse(PATH, "run A until tick && start\n", &only_tick, err, sizeof(err));

	cr_assert_not_null(s, "%s", err);
	cr_assert_eq(s->body->pred->lhs->kind, E_EVENT);
	cr_assert_eq(s->body->pred->lhs->atom, &tick);
	cr_assert_eq(s->body->pred->rhs->kind, E_NAME, "start is no atom here");
	schedule_free(s);
	cr_assert_null(
	    schedule_parse(PATH, "run A until enter(f)\n", &only_tick, err, sizeof(err)));
	cr_assert(strstr(err, "unknown event or condition 'enter(...)'"), "%s", err);
}

Test(parser, conditions)
{
	struct schedule *s = parse_ok("while (!ended(A)) { run A until enter(step) }\n"
				      "while (in(A, withdraw)) { run A until exit }\n");
	const struct stmt *w = s->body;
	cr_assert_eq(w->kind, S_WHILE);
	cr_assert_eq(w->cond->kind, E_UNARY);
	cr_assert_eq(w->cond->op, '!');
	cr_assert_eq(w->cond->loc.col, 8);
	cr_assert_eq(w->cond->lhs->kind, E_ENDED);
	cr_assert_str_eq(w->cond->lhs->name, "A");
	cr_assert_eq(w->cond->lhs->loc.col, 9);
	cr_assert_eq(w->body->kind, S_RUN);
	cr_assert_eq(w->body->loc.col, 21);
	cr_assert_null(w->body->next);
	w = w->next;
	cr_assert_eq(w->cond->kind, E_IN);
	cr_assert_str_eq(w->cond->name, "A");
	cr_assert_str_eq(w->cond->func, "withdraw");
	cr_assert_str_eq(kind_name(w->body->pred), "exit");
	schedule_free(s);
}

Test(parser, if_else_chains)
{
	struct schedule *s = parse_ok("if (x) {\n"
				      "  run A until exit\n"
				      "} else if (y) {\n"
				      "  run B until exit\n"
				      "  run C until exit\n"
				      "} else {\n"
				      "}\n"
				      "if (z) { }\n");
	const struct stmt *i = s->body;
	cr_assert_eq(i->kind, S_IF);
	cr_assert_str_eq(i->cond->name, "x");
	cr_assert_eq(i->body->kind, S_RUN);
	cr_assert_null(i->body->next);
	const struct stmt *e = i->else_body;
	cr_assert_eq(e->kind, S_IF);
	cr_assert_eq(e->loc.line, 3);
	cr_assert_eq(e->loc.col, 8);
	cr_assert_null(e->next);
	cr_assert_str_eq(e->cond->name, "y");
	cr_assert_str_eq(e->body->names[0], "B");
	cr_assert_str_eq(e->body->next->names[0], "C");
	cr_assert_null(e->else_body); /* `else { }` is empty */
	i = i->next;
	cr_assert_eq(i->kind, S_IF);
	cr_assert_eq(i->loc.line, 8);
	cr_assert_null(i->body);
	cr_assert_null(i->else_body);
	cr_assert_null(i->next);
	schedule_free(s);
}

Test(parser, newlines_before_braces_and_else)
{
	dumps_as("if (x)\n{\n run A until exit\n}\n\nelse\n{\n run B until exit }\n"
		 "while (y)\n\n{ }\nrepeat 2\n{}\nif (a) {}\nelse\nif (b) {}\n",
		 "if (x) {\n"
		 "        run A until exit\n"
		 "} else {\n"
		 "        run B until exit\n"
		 "}\n"
		 "while (y) {\n"
		 "}\n"
		 "repeat 2 {\n"
		 "}\n"
		 "if (a) {\n"
		 "} else {\n"
		 "        if (b) {\n"
		 "        }\n"
		 "}\n");
}

Test(parser, if_without_else_keeps_following_statement)
{
	dumps_as("if (x) { run A until exit }\n\n\nrun B until exit\n",
		 "if (x) {\n        run A until exit\n}\nrun B until exit\n");
	dumps_as("if (x) { run A until exit }; run B until exit",
		 "if (x) {\n        run A until exit\n}\nrun B until exit\n");
}

Test(parser, repeat_assert_release)
{
	struct schedule *s = parse_ok("repeat 1000 { run T until enter(hook) }\n"
				      "assert balance == 80\n"
				      "release all\n"
				      "release A, B\n");
	const struct stmt *r = s->body;
	cr_assert_eq(r->kind, S_REPEAT);
	cr_assert_eq(r->count, 1000);
	cr_assert_eq(r->body->kind, S_RUN);
	r = r->next;
	cr_assert_eq(r->kind, S_ASSERT);
	cr_assert_eq(r->cond->op, T_EQ);
	cr_assert_eq(r->cond->loc.col, 8);
	r = r->next;
	cr_assert_eq(r->kind, S_RELEASE);
	cr_assert(r->all);
	cr_assert_eq(r->n_names, 0);
	r = r->next;
	cr_assert_eq(r->kind, S_RELEASE);
	cr_assert(!r->all);
	cr_assert_eq(r->n_names, 2);
	cr_assert_str_eq(r->names[1], "B");
	cr_assert_eq(r->name_locs[1].line, 4);
	cr_assert_eq(r->name_locs[1].col, 12);
	schedule_free(s);
}

Test(parser, separators_and_comments)
{
	dumps_as("run A until exit; run B until exit # c ; run C until exit\n"
		 ";;\n"
		 "if (a) { run A until exit; run B until exit }  # trailing\n"
		 "assert (a ||\n"
		 "        b) && c[1 +\n"
		 "  2]   # comment inside parens\n",
		 "run A until exit\n"
		 "run B until exit\n"
		 "if (a) {\n"
		 "        run A until exit\n"
		 "        run B until exit\n"
		 "}\n"
		 "assert (a || b) && c[1 + 2]\n");
	struct schedule *s = parse_ok("assert (a ||\n        b) && c\nrun A until exit\n");
	cr_assert_eq(s->body->cond->rhs->loc.line, 2);
	cr_assert_eq(s->body->cond->rhs->loc.col, 15);
	cr_assert_eq(s->body->next->loc.line, 3);
	schedule_free(s);
}

Test(parser, crlf_and_tabs)
{
	struct schedule *s = parse_ok("run A until exit\r\n\trun B until\texit\r\n");
	cr_assert_eq(s->body->next->loc.line, 2);
	cr_assert_eq(s->body->next->loc.col, 2);
	cr_assert_eq(s->body->next->pred->loc.col, 14);
	schedule_free(s);
}

Test(parser, soft_keywords_as_names)
{
	/* start/exit/signal are events only in expressions; function names may be
	 * keywords; enter/in/at without '(' are plain names. */
	struct schedule *s = parse_ok("thread start, signal = wait 2 distinct enter(wait)\n"
				      "run start until return(run) || in(signal, until)\n"
				      "assert in + at + enter == 0\n");
	cr_assert_str_eq(s->body->names[0], "start");
	cr_assert_str_eq(s->body->pred->name, "wait");
	cr_assert_str_eq(s->body->next->pred->lhs->name, "run");
	cr_assert_str_eq(s->body->next->pred->rhs->func, "until");
	char buf[128];
	expr_format(s->body->next->next->cond, buf, sizeof(buf));
	cr_assert_str_eq(buf, "((in + at) + enter) == 0");
	schedule_free(s);
}

/* ---- stepping statements (recorded by the shell) ----------------------- */

Test(parser, stepping_statements)
{
	struct schedule *s = parse_ok("step A\n"
				      "  step B 3\n"
				      "next A\n"
				      "finish  B\n"
				      "hold A, B\n"
				      "thread T = p1.t3\n"
				      "step T 0x10; step T 1000000\n");
	const struct stmt *t = s->body;
	cr_assert_eq(t->kind, S_STEP);
	cr_assert_eq(t->loc.line, 1);
	cr_assert_eq(t->loc.col, 1);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "A");
	cr_assert_eq(t->name_locs[0].line, 1);
	cr_assert_eq(t->name_locs[0].col, 6);
	cr_assert_eq(t->count, 1);
	cr_assert_null(t->pred);
	cr_assert_null(t->target);
	t = t->next;
	cr_assert_eq(t->kind, S_STEP);
	cr_assert_eq(t->loc.line, 2);
	cr_assert_eq(t->loc.col, 3);
	cr_assert_str_eq(t->names[0], "B");
	cr_assert_eq(t->name_locs[0].col, 8);
	cr_assert_eq(t->count, 3);
	t = t->next;
	cr_assert_eq(t->kind, S_NEXT);
	cr_assert_eq(t->loc.line, 3);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "A");
	cr_assert_eq(t->name_locs[0].col, 6);
	t = t->next;
	cr_assert_eq(t->kind, S_FINISH);
	cr_assert_eq(t->loc.line, 4);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "B");
	cr_assert_eq(t->name_locs[0].line, 4);
	cr_assert_eq(t->name_locs[0].col, 9);
	t = t->next;
	cr_assert_eq(t->kind, S_HOLD);
	cr_assert(!t->all);
	cr_assert_eq(t->n_names, 2);
	cr_assert_str_eq(t->names[0], "A");
	cr_assert_str_eq(t->names[1], "B");
	cr_assert_eq(t->name_locs[0].col, 6);
	cr_assert_eq(t->name_locs[1].line, 5);
	cr_assert_eq(t->name_locs[1].col, 9);
	t = t->next;
	cr_assert_eq(t->kind, S_BIND);
	cr_assert_eq(t->loc.line, 6);
	cr_assert_eq(t->loc.col, 1);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "T");
	cr_assert_eq(t->name_locs[0].col, 8);
	cr_assert_str_eq(t->target, "p1.t3");
	cr_assert_null(t->pred);
	t = t->next;
	cr_assert_eq(t->kind, S_STEP);
	cr_assert_eq(t->count, 16);
	cr_assert_eq(t->next->kind, S_STEP);
	cr_assert_eq(t->next->count, 1000000);
	cr_assert_eq(t->next->loc.col, 14);
	cr_assert_null(t->next->next);
	schedule_free(s);
}

Test(parser, bind_thread_names)
{
	const char *targets[] = {"p1.t1", "p12.t345", "p2.t10", "p9.t9"};
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "thread Worker_2 = %s # c\n", targets[i]);
		struct schedule *s = parse_ok(text);
		cr_assert_eq(s->body->kind, S_BIND);
		cr_assert_str_eq(s->body->names[0], "Worker_2");
		cr_assert_str_eq(s->body->target, targets[i]);
		schedule_free(s);
	}
	/* a bind inside a block, and a wait still works after it */
	struct schedule *s = parse_ok("if (x) {\n\tthread T = p1.t2; step T\n}\n"
				      "thread U = wait any enter(f)\n");
	cr_assert_eq(s->body->body->kind, S_BIND);
	cr_assert_eq(s->body->body->name_locs[0].col, 9);
	cr_assert_str_eq(s->body->body->target, "p1.t2");
	cr_assert_eq(s->body->body->next->kind, S_STEP);
	cr_assert_eq(s->body->next->kind, S_WAIT);
	cr_assert_null(s->body->next->target);
	schedule_free(s);
}

Test(parser, stepping_dump_round_trips)
{
	dumps_as("step A 1\nstep A 3\nnext A\nfinish A\nhold A, B\nhold C\nthread T = p1.t3\n"
		 "while (!ended(T)) { next T; step T 2 }\n",
		 "step A\n"
		 "step A 3\n"
		 "next A\n"
		 "finish A\n"
		 "hold A, B\n"
		 "hold C\n"
		 "thread T = p1.t3\n"
		 "while (!ended(T)) {\n"
		 "        next T\n"
		 "        step T 2\n"
		 "}\n");
}

Test(parser, stepping_words_as_function_and_field_names)
{
	/* step, next, finish and hold are keywords like run and wait: still
	 * fine as function names and as fields. */
	struct schedule *s =
	    parse_ok("run A until enter(step) || return(next) || in(A, finish) || enter(hold)\n"
		     "assert p->next == q.step + r.finish - s->hold\n");
	char buf[256];
	expr_format(s->body->pred, buf, sizeof(buf));
	cr_assert_str_eq(buf, "((enter(step) || return(next)) || in(A, finish)) || enter(hold)");
	expr_format(s->body->next->cond, buf, sizeof(buf));
	cr_assert_str_eq(buf, "p->next == ((q.step + r.finish) - s->hold)");
	schedule_free(s);
}

Test(parser, run_comment)
{
	struct {
		const char *text, *want;
	} cases[] = {
	    {"# run: cctrace run x.sched -- ./x a b  \t\nrun A until exit\n",
	     "cctrace run x.sched -- ./x a b"},
	    {"#run:   y\n", "y"},
	    {"# run: z", "z"},
	    {"# run:\n", NULL},
	    {"\n# run: x\n", NULL},
	    {"# running\n", NULL},
	    {" # run: x\n", NULL},
	    {"# rerun: x\n", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct schedule *s = parse_ok(cases[i].text);
		if (cases[i].want)
			cr_assert_str_eq(s->run_comment, cases[i].want);
		else
			cr_assert_null(s->run_comment, "case %zu", i);
		schedule_free(s);
	}
}

/* ---- expressions ------------------------------------------------------ */

Test(parser, precedence)
{
	expr_is("a || b && !c", "a || (b && !c)");
	expr_is("a && b || c", "(a && b) || c");
	expr_is("a | b ^ c & d", "a | (b ^ (c & d))");
	expr_is("a & b == c", "a & (b == c)");
	expr_is("a == b < c", "a == (b < c)");
	expr_is("a != b >= c", "a != (b >= c)");
	expr_is("a < b << 1", "a < (b << 1)");
	expr_is("a <= b >> 1", "a <= (b >> 1)");
	expr_is("a << 1 + 2", "a << (1 + 2)");
	expr_is("a + b * c - d / e % f", "(a + (b * c)) - ((d / e) % f)");
	expr_is("a - b - c", "(a - b) - c");
	expr_is("a || b || c", "(a || b) || c");
	expr_is("-a * b", "-a * b");
	expr_is("!a == b", "!a == b");
	expr_is("(a || b) && c", "(a || b) && c");
	expr_is("((a))", "a");
	expr_is("~x & 0xff", "~x & 255");
	expr_is("*p->x", "*p->x");
	expr_is("&a[1]", "&a[1]");
	expr_is("*(p->x)", "*p->x");
	expr_is("(*p)->x", "(*p)->x");
	expr_is("- -a", "-(-a)");
	expr_is("!!a", "!(!a)");
	expr_is("&*&a", "&(*(&a))");
	expr_is("(*p).f", "(*p).f");
	expr_is("a.b.c->d[1][2]", "a.b.c->d[1][2]");
	expr_is("a[i + 1].f", "a[i + 1].f");
	expr_is("a > b > c", "(a > b) > c");
}

Test(parser, precedence_tree_shape)
{
	struct schedule *s = parse_ok("assert a || b && !c");
	const struct expr *e = s->body->cond;
	cr_assert_eq(e->kind, E_BINARY);
	cr_assert_eq(e->op, T_OROR);
	cr_assert_eq(e->loc.col, 8);
	cr_assert_eq(e->lhs->kind, E_NAME);
	cr_assert_str_eq(e->lhs->name, "a");
	cr_assert_eq(e->rhs->kind, E_BINARY);
	cr_assert_eq(e->rhs->op, T_ANDAND);
	cr_assert_eq(e->rhs->loc.col, 13);
	cr_assert_str_eq(e->rhs->lhs->name, "b");
	cr_assert_eq(e->rhs->rhs->kind, E_UNARY);
	cr_assert_eq(e->rhs->rhs->op, '!');
	cr_assert_eq(e->rhs->rhs->loc.col, 18);
	cr_assert_str_eq(e->rhs->rhs->lhs->name, "c");
	cr_assert_eq(e->rhs->rhs->lhs->loc.col, 19);
	cr_assert_eq(e->slot, -1);
	schedule_free(s);
}

Test(parser, postfix_shape)
{
	struct schedule *s = parse_ok("assert accounts[1].balance >= 0 && p->next == 0");
	const struct expr *e = s->body->cond;
	cr_assert_eq(e->op, T_ANDAND);
	const struct expr *ge = e->lhs;
	cr_assert_eq(ge->op, T_GE);
	const struct expr *m = ge->lhs;
	cr_assert_eq(m->kind, E_MEMBER);
	cr_assert_str_eq(m->name, "balance");
	cr_assert_eq(m->loc.col, 8);
	cr_assert_eq(m->lhs->kind, E_INDEX);
	cr_assert_str_eq(m->lhs->lhs->name, "accounts");
	cr_assert_eq(m->lhs->rhs->ival, 1);
	const struct expr *a = e->rhs->lhs;
	cr_assert_eq(a->kind, E_ARROW);
	cr_assert_str_eq(a->name, "next");
	cr_assert_str_eq(a->lhs->name, "p");
	cr_assert_eq(a->loc.col, 36);
	schedule_free(s);
}

Test(parser, unary_binds_looser_than_postfix)
{
	struct schedule *s = parse_ok("assert *p->x + &a[1]");
	const struct expr *e = s->body->cond;
	cr_assert_eq(e->lhs->kind, E_UNARY);
	cr_assert_eq(e->lhs->op, '*');
	cr_assert_eq(e->lhs->lhs->kind, E_ARROW);
	cr_assert_eq(e->rhs->kind, E_UNARY);
	cr_assert_eq(e->rhs->op, '&');
	cr_assert_eq(e->rhs->lhs->kind, E_INDEX);
	cr_assert_eq(e->rhs->loc.col, 16);
	cr_assert_eq(e->rhs->lhs->loc.col, 17);
	schedule_free(s);
}

Test(parser, unary_ops)
{
	struct schedule *s = parse_ok("assert -a + ~b + *c + &d + !e");
	int ops[] = {'!', '&', '*', '~', '-'};
	const struct expr *e = s->body->cond;
	for (int i = 0; i < 4; i++, e = e->lhs) {
		cr_assert_eq(e->op, '+');
		cr_assert_eq(e->rhs->kind, E_UNARY);
		cr_assert_eq(e->rhs->op, ops[i]);
	}
	cr_assert_eq(e->kind, E_UNARY);
	cr_assert_eq(e->op, '-');
	schedule_free(s);
}

Test(parser, literals)
{
	expr_is("0", "0");
	expr_is("42", "42");
	expr_is("0x1F + 0Xa", "31 + 10");
	expr_is("'a'", "97");
	expr_is("'\\n' + '\\0' + '\\\\' + '\\''", "((10 + 0) + 92) + 39");
	expr_is("'\\x41'", "65");
	expr_is("true || false", "1 || 0");
	expr_is("9223372036854775807", "9223372036854775807");
	expr_is("0x7fffffffffffffff", "9223372036854775807");
	expr_is("0xffffffffffffffff", "0xffffffffffffffff");
	expr_is("0x8000000000000000 + -1", "0x8000000000000000 + -1");
	expr_is("'#'", "35");
}

Test(parser, expr_format_truncates)
{
	struct schedule *s = parse_ok("assert alpha + beta");
	char buf[8];
	size_t n = expr_format(s->body->cond, buf, sizeof(buf));
	cr_assert_str_eq(buf, "alpha +");
	cr_assert_eq(n, 7);
	cr_assert_eq(expr_format(s->body->cond, buf, 1), 0);
	cr_assert_str_eq(buf, "");
	schedule_free(s);
}

/* ---- search: choose, while (*), assume, let, for ------------------------ */

Test(parser, choose_values)
{
	struct schedule *s = parse_ok("assert choose(a, b + 1, 3) == 1\n"
				      "assert choose(true, false)\n"
				      "assert choose(\n  1,\n  2)\n");
	const struct expr *c = s->body->cond->lhs;
	cr_assert_eq(c->kind, E_CHOOSE);
	cr_assert_eq(c->loc.line, 1);
	cr_assert_eq(c->loc.col, 8);
	cr_assert_eq(c->nargs, 3);
	cr_assert_null(c->lhs);
	cr_assert_null(c->rhs);
	cr_assert_eq(c->op, 0);
	cr_assert_eq(c->args[0]->kind, E_NAME);
	cr_assert_str_eq(c->args[0]->name, "a");
	cr_assert_eq(c->args[0]->loc.col, 15);
	cr_assert_eq(c->args[1]->kind, E_BINARY);
	cr_assert_eq(c->args[1]->op, '+');
	cr_assert_eq(c->args[2]->kind, E_INT);
	cr_assert_eq(c->args[2]->ival, 3);
	cr_assert_eq(c->args[2]->loc.col, 25);
	c = s->body->next->cond;
	cr_assert_eq(c->kind, E_CHOOSE);
	cr_assert_eq(c->nargs, 2);
	cr_assert_eq(c->args[0]->kind, E_INT);
	cr_assert_eq(c->args[0]->ival, 1);
	cr_assert_eq(c->args[1]->ival, 0);
	c = s->body->next->next->cond;
	cr_assert_eq(c->nargs, 2);
	cr_assert_eq(c->args[1]->loc.line, 5);
	schedule_free(s);
	expr_is("choose(a, b + 1, 3) == 1", "choose(a, b + 1, 3) == 1");
	expr_is("choose(true, false)", "choose(1, 0)");
	expr_is("!choose(x || y, *p)", "!choose(x || y, *p)");
	expr_is("choose(choose(1, 2), 3) * 2", "choose(choose(1, 2), 3) * 2");
}

Test(parser, choose_range)
{
	struct schedule *s = parse_ok("let k = choose(1..4)\nlet j = choose(a + 1 .. n*2)\n");
	const struct expr *c = s->body->cond;
	cr_assert_eq(c->kind, E_CHOOSE);
	cr_assert_eq(c->nargs, 0);
	cr_assert_null(c->args);
	cr_assert_eq(c->loc.col, 9);
	cr_assert_eq(c->lhs->kind, E_INT);
	cr_assert_eq(c->lhs->ival, 1);
	cr_assert_eq(c->lhs->loc.col, 16);
	cr_assert_eq(c->rhs->kind, E_INT);
	cr_assert_eq(c->rhs->ival, 4);
	cr_assert_eq(c->rhs->loc.col, 19);
	c = s->body->next->cond;
	cr_assert_eq(c->nargs, 0);
	cr_assert_eq(c->lhs->kind, E_BINARY);
	cr_assert_eq(c->rhs->kind, E_BINARY);
	schedule_free(s);
	expr_is("choose(1..4)", "choose(1..4)");
	expr_is("choose(0..0x10)", "choose(0..16)");
	expr_is("choose('a'..'z')", "choose(97..122)");
	expr_is("choose(-1..n - 1)", "choose(-1..n - 1)");
	expr_is("choose(a.b..c->d[2])", "choose(a.b..c->d[2])");
}

Test(parser, dotdot_does_not_break_dots)
{
	/* member access, thread names and numbers still lex as before */
	expr_is("a.b.c + s->x.y", "a.b.c + s->x.y");
	struct schedule *s = parse_ok("thread T = p1.t3\nassert x == 1\n");
	cr_assert_eq(s->body->kind, S_BIND);
	cr_assert_str_eq(s->body->target, "p1.t3");
	schedule_free(s);
	s = parse_ok("for i in 0..9 { }\n");
	cr_assert_eq(s->body->lo->ival, 0);
	cr_assert_eq(s->body->hi->ival, 9);
	schedule_free(s);
}

/* C++ names as cctrace shows them: identifiers joined by "::", a
 * destructor's "::~"; in at(...) with an offset too.  A single colon is
 * still a file:line, and a "::" that joins nothing is no name. */
Test(parser, qualified_cxx_names)
{
	dumps_as("run B until enter(bank::Account::deposit) || return(ns::C::~C)\n",
		 "run B until enter(bank::Account::deposit) || return(ns::C::~C)\n");
	dumps_as("run B until at(bank::Account::deposit+0x2e)\n",
		 "run B until at(bank::Account::deposit+0x2e)\n");
	dumps_as("run B until at(bank.cpp:41)\n", "run B until at(bank.cpp:41)\n");
	fails("run B until enter(bank::)\n",
	      "t.sched:1:23: error: expected ')' to close '(' at 1:18, found ':'");
	fails("run B until enter(~C)\n", "t.sched:1:19: error: enter(...) expects a function name, "
					 "found '~'");
}

/* A name no identifier spells (a template, a lambda, an operator) in
 * at(...) is quoted as in enter(...), the offset after the closing
 * quote; the printer writes it back so, and leaves an identifier or a
 * module's file name (libstdc++.so.6, with a '+' of its own) raw. */
Test(parser, quoted_names_in_at)
{
	struct schedule *s = parse_ok("run B until at(\"main::{lambda()#1}::operator()\"+0x61)\n");
	size_t n;
	uint64_t offset;

	cr_assert_str_eq(s->body->pred->name, "main::{lambda()#1}::operator()+0x61");
	cr_assert_eq(s->body->pred->ival, 0);
	cr_assert(lang_at_offset(s->body->pred->name, &n, &offset));
	cr_expect_eq(n, strlen("main::{lambda()#1}::operator()"));
	cr_expect_eq(offset, 0x61);
	schedule_free(s);
	dumps_as("run B until at(\"main::{lambda()#1}::operator()\"+0x61)\n",
		 "run B until at(\"main::{lambda()#1}::operator()\"+0x61)\n");
	dumps_as("run B until at( \"std::vector<int, std::allocator<int> >::size\"+0xc )\n",
		 "run B until at(\"std::vector<int, std::allocator<int> >::size\"+0xc)\n");
	dumps_as("run B until at(\"bank::operator+\"+0x4) || at(\"worker\"+0x8)\n",
		 "run B until at(\"bank::operator+\"+0x4) || at(worker+0x8)\n");
	dumps_as("run B until at(libstdc++.so.6+0x9a0b0)\n",
		 "run B until at(libstdc++.so.6+0x9a0b0)\n");
	dumps_as("run B until at(worker<int>+0x1c)\n", "run B until at(\"worker<int>\"+0x1c)\n");
}

Test(parser_errors, quoted_names_in_at)
{
	fails("run B until at(\"worker<int>+0x1c\")\n",
	      "t.sched:1:28: error: the offset goes after the closing quote: "
	      "at(\"worker<int>\"+0x1c)");
	fails("run B until at(\"worker<int>\")\n",
	      "t.sched:1:29: error: a quoted name in at(...) takes an offset, "
	      "at(\"worker<int>\"+0xOFFSET); enter(\"worker<int>\") is its first instruction");
	fails("run B until at(\"worker<int>\"+0xg)\n",
	      "t.sched:1:29: error: a quoted name in at(...) takes an offset, "
	      "at(\"worker<int>\"+0xOFFSET); enter(\"worker<int>\") is its first instruction");
	fails("run B until at(\"worker<int>+0x1c)\n",
	      "t.sched:1:16: error: unterminated quoted name");
	fails("run B until at(\"\"+0x1c)\n", "t.sched:1:16: error: empty quoted name");
	/* unquoted, it is read up to a blank or the first ')' */
	fails("run B until at(std::vector<int, std::allocator<int> >::size+0xc)\n",
	      "t.sched:1:16: error: expected a file:line location inside at(...), found "
	      "'std::vector<int,'; a name no identifier spells (a template, a lambda, an operator) "
	      "is written in double quotes: at(\"std::vector<int, std::allocator<int> "
	      ">::size\"+0xc)");
	fails("run B until at(main::{lambda()#1}::operator())\n",
	      "t.sched:1:16: error: expected a file:line location inside at(...), found "
	      "'main::{lambda('; a name no identifier spells (a template, a lambda, an operator) "
	      "is written in double quotes: at(\"main::{lambda()#1}::operator()\"+0xOFFSET)");
}

/* A template's name unquoted is cut at its '<': the error says how to
 * quote it, in enter(...) as in in(T, F). */
Test(parser_errors, unquoted_cxx_names)
{
	fails("thread A = wait any enter(worker<int>)\n",
	      "t.sched:1:33: error: expected ')' to close '(' at 1:26, found '<'; a name no "
	      "identifier spells (a template, a lambda, an operator) is written in double quotes: "
	      "enter(\"worker<int>\")");
	fails("run A until return(std::vector<int, std::allocator<int> >::push_back)\n",
	      "t.sched:1:31: error: expected ')' to close '(' at 1:19, found '<'; a name no "
	      "identifier spells (a template, a lambda, an operator) is written in double quotes: "
	      "return(\"std::vector<int, std::allocator<int> >::push_back\")");
	fails("assert in(A, main::{lambda()#1}::operator())\n",
	      "t.sched:1:18: error: expected ')' to close '(' at 1:10, found ':'; a name no "
	      "identifier spells (a template, a lambda, an operator) is written in double quotes: "
	      "in(A, \"main::{lambda()#1}::operator()\")");
	fails("assert in(worker<int>)\n",
	      "t.sched:1:17: error: expected ')' to close '(' at 1:10, found '<'; a name no "
	      "identifier spells (a template, a lambda, an operator) is written in double quotes: "
	      "in(\"worker<int>\")");
	/* a quoted name is whole: what follows it is another mistake */
	fails("thread A = wait any enter(\"worker\"<int>)\n",
	      "t.sched:1:35: error: expected ')' to close '(' at 1:26, found '<'");
}

Test(parser, choose_is_a_name_unless_called)
{
	struct schedule *s = parse_ok("assert choose + 1 == 2\n"
				      "thread choose = wait any start\n"
				      "run choose until enter(choose)\n");
	cr_assert_eq(s->body->cond->lhs->lhs->kind, E_NAME);
	cr_assert_str_eq(s->body->cond->lhs->lhs->name, "choose");
	cr_assert_eq(s->body->next->kind, S_WAIT);
	cr_assert_str_eq(s->body->next->names[0], "choose");
	cr_assert_str_eq(s->body->next->next->pred->name, "choose");
	schedule_free(s);
}

Test(parser, while_star)
{
	struct schedule *s = parse_ok("while (*) { run A until exit }\n"
				      "while ( *\n ) {}\n"
				      "while (*p) {}\n"
				      "while (* p) {}\n"
				      "while (choose(true, false)) {}\n");
	const struct stmt *w = s->body;
	cr_assert_eq(w->kind, S_WHILE);
	const struct expr *c = w->cond;
	cr_assert_eq(c->kind, E_CHOOSE);
	cr_assert_eq(c->op, '*');
	cr_assert_eq(c->loc.line, 1);
	cr_assert_eq(c->loc.col, 8);
	cr_assert_eq(c->nargs, 2);
	cr_assert_eq(c->args[0]->kind, E_INT);
	cr_assert_eq(c->args[0]->ival, 1);
	cr_assert_eq(c->args[0]->loc.col, 8);
	cr_assert_eq(c->args[1]->kind, E_INT);
	cr_assert_eq(c->args[1]->ival, 0);
	cr_assert_eq(c->args[1]->loc.col, 8);
	cr_assert_eq(w->body->kind, S_RUN);
	w = w->next;
	cr_assert_eq(w->cond->kind, E_CHOOSE);
	cr_assert_eq(w->cond->loc.col, 9);
	cr_assert_null(w->body);
	w = w->next;
	cr_assert_eq(w->cond->kind, E_UNARY); /* a dereference */
	cr_assert_eq(w->cond->op, '*');
	w = w->next;
	cr_assert_eq(w->cond->kind, E_UNARY);
	w = w->next;
	cr_assert_eq(w->cond->kind, E_CHOOSE);
	cr_assert_eq(w->cond->op, 0);
	cr_assert_eq(w->cond->nargs, 2);
	char buf[64];
	expr_format(s->body->cond, buf, sizeof(buf));
	cr_assert_str_eq(buf, "choose(1, 0)");
	schedule_free(s);
}

Test(parser, choose_thread)
{
	struct schedule *s = parse_ok("thread A, B, C = wait 3 distinct enter(f)\n"
				      "thread T = choose(A, B, C)\n"
				      "thread U = choose(\n"
				      "\tA,\n"
				      "\tB) # two\n");
	const struct stmt *t = s->body->next;
	cr_assert_eq(t->kind, S_CHOOSE_THREAD);
	cr_assert_eq(t->loc.line, 2);
	cr_assert_eq(t->loc.col, 1);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "T");
	cr_assert_eq(t->name_locs[0].line, 2);
	cr_assert_eq(t->name_locs[0].col, 8);
	cr_assert_eq(t->nchoices, 3);
	cr_assert_str_eq(t->choices[0], "A");
	cr_assert_str_eq(t->choices[1], "B");
	cr_assert_str_eq(t->choices[2], "C");
	cr_assert_eq(t->choice_locs[0].col, 19);
	cr_assert_eq(t->choice_locs[1].col, 22);
	cr_assert_eq(t->choice_locs[2].col, 25);
	cr_assert_null(t->pred);
	cr_assert_null(t->target);
	t = t->next;
	cr_assert_eq(t->kind, S_CHOOSE_THREAD);
	cr_assert_eq(t->nchoices, 2);
	cr_assert_eq(t->choice_locs[0].line, 4);
	cr_assert_eq(t->choice_locs[0].col, 2);
	cr_assert_eq(t->choice_locs[1].line, 5);
	cr_assert_null(t->next);
	schedule_free(s);
}

Test(parser, assume)
{
	struct schedule *s = parse_ok("assume(x > 1)\nassume x && !ended(A)\nassume (a) || b\n");
	const struct stmt *t = s->body;
	cr_assert_eq(t->kind, S_ASSUME);
	cr_assert_eq(t->cond->kind, E_BINARY);
	cr_assert_eq(t->cond->op, '>');
	cr_assert_eq(t->cond->loc.col, 8);
	t = t->next;
	cr_assert_eq(t->kind, S_ASSUME);
	cr_assert_eq(t->loc.line, 2);
	cr_assert_eq(t->cond->op, T_ANDAND);
	t = t->next;
	cr_assert_eq(t->cond->op, T_OROR);
	schedule_free(s);
}

Test(parser, let)
{
	struct schedule *s = parse_ok("let x = 3\nlet  k = choose(1..4) * 2\nlet x = x + 1\n");
	const struct stmt *t = s->body;
	cr_assert_eq(t->kind, S_LET);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "x");
	cr_assert_eq(t->name_locs[0].col, 5);
	cr_assert_eq(t->cond->kind, E_INT);
	cr_assert_eq(t->cond->ival, 3);
	t = t->next;
	cr_assert_eq(t->kind, S_LET);
	cr_assert_str_eq(t->names[0], "k");
	cr_assert_eq(t->name_locs[0].col, 6);
	cr_assert_eq(t->cond->kind, E_BINARY);
	cr_assert_eq(t->cond->lhs->kind, E_CHOOSE);
	t = t->next;
	cr_assert_eq(t->kind, S_LET); /* re-let of the same name assigns */
	cr_assert_str_eq(t->names[0], "x");
	schedule_free(s);
}

Test(parser, for_loops)
{
	struct schedule *s = parse_ok("for i in 1..3 { run A until enter(f) }\n"
				      "for j in n..n + k\n{\n  for i in 0..j { }\n}\n"
				      "for in in 1..2 { }\n");
	const struct stmt *t = s->body;
	cr_assert_eq(t->kind, S_FOR);
	cr_assert_eq(t->n_names, 1);
	cr_assert_str_eq(t->names[0], "i");
	cr_assert_eq(t->name_locs[0].col, 5);
	cr_assert_eq(t->lo->kind, E_INT);
	cr_assert_eq(t->lo->ival, 1);
	cr_assert_eq(t->lo->loc.col, 10);
	cr_assert_eq(t->hi->ival, 3);
	cr_assert_eq(t->hi->loc.col, 13);
	cr_assert_null(t->cond);
	cr_assert_eq(t->body->kind, S_RUN);
	t = t->next;
	cr_assert_eq(t->kind, S_FOR);
	cr_assert_eq(t->lo->kind, E_NAME);
	cr_assert_eq(t->hi->kind, E_BINARY);
	cr_assert_eq(t->body->kind, S_FOR);
	cr_assert_eq(t->body->loc.line, 4);
	cr_assert_null(t->body->body);
	t = t->next;
	cr_assert_str_eq(t->names[0], "in"); /* `in` is a keyword only after `for X` */
	schedule_free(s);
}

Test(parser, search_dump_round_trips)
{
	dumps_as("thread A, B = wait 2 distinct enter(f)\n"
		 "thread T = choose(A,B)\n"
		 "while (*) { run T until enter(g) }\n"
		 "while (choose(true, false)) { run T until exit }\n"
		 "assume(x > 1)\n"
		 "assume x\n"
		 "let k = choose(1..4)\n"
		 "let v = choose(a, b + 1, c)\n"
		 "for i in 1..k*2 { for j in choose(0..1)..i { step A } }\n",
		 "thread A, B = wait 2 distinct enter(f)\n"
		 "thread T = choose(A, B)\n"
		 "while (*) {\n"
		 "        run T until enter(g)\n"
		 "}\n"
		 "while (choose(1, 0)) {\n"
		 "        run T until exit\n"
		 "}\n"
		 "assume x > 1\n"
		 "assume x\n"
		 "let k = choose(1..4)\n"
		 "let v = choose(a, b + 1, c)\n"
		 "for i in 1..k * 2 {\n"
		 "        for j in choose(0..1)..i {\n"
		 "                step A\n"
		 "        }\n"
		 "}\n");
}

Test(parser_errors, choose)
{
	fails("assert choose(1)\n",
	      "t.sched:1:8: error: choose needs at least two values or a range LO..HI");
	fails("assert choose()\n",
	      "t.sched:1:8: error: choose needs at least two values or a range LO..HI");
	fails("let k = choose(true)\n",
	      "t.sched:1:9: error: choose needs at least two values or a range LO..HI");
	fails("assert choose(1..2, 3)\n", "t.sched:1:19: error: a range is choose's only "
					  "argument: 'choose(LO..HI)', found ','");
	fails("assert choose(1, 2..3)\n", "t.sched:1:19: error: a range is choose's only "
					  "argument: 'choose(LO..HI)', found '..'");
	fails("assert choose(1 2)\n",
	      "t.sched:1:17: error: expected ')' to close '(' at 1:14, found '2'");
	fails("assert choose(1,)\n", "t.sched:1:17: error: expected an expression, found ')'");
	fails("assert choose(1..)\n", "t.sched:1:18: error: expected an expression, found ')'");
	fails("assert choose(..2)\n", "t.sched:1:15: error: expected an expression, found '..'");
	fails("assert choose(1, 2\n",
	      "t.sched:1:19: error: expected ')' to close '(' at 1:14, found end of file");
	fails("assert a..b\n",
	      "t.sched:1:9: error: expected end of 'assert' statement, found '..'");
	fails("assert a...b\n",
	      "t.sched:1:9: error: expected end of 'assert' statement, found '..'");
	fails(
	    "assert chose(1, 2)\n",
	    "t.sched:1:8: error: unknown event or condition 'chose(...)'; did you mean 'choose'?");
	fails("choose(1, 2)\n", "t.sched:1:1: error: unknown statement 'choose'");
	fails("thread T = p1..t3\n",
	      "t.sched:1:12: error: expected 'wait' or a thread name such as p1.t3 after '='");
}

Test(parser_errors, while_star)
{
	fails("while (*) x\n",
	      "t.sched:1:11: error: expected '{' to open the body of 'while', found 'x'");
	fails("while (* x\n",
	      "t.sched:1:11: error: expected ')' to close '(' at 1:7, found end of file");
	fails("while (**) {}\n", "t.sched:1:10: error: expected an expression, found ')'");
	fails("if (*) {}\n", "t.sched:1:6: error: expected an expression, found ')'");
	fails(
	    "while (*) {} x\n",
	    "t.sched:1:14: error: expected a new line or ';' after the '}' of 'while', found 'x'");
}

Test(parser_errors, choose_thread)
{
	fails("thread A, B = choose(C, D)\n",
	      "t.sched:1:11: error: a choice binds one thread: 'thread T = choose(A, B)'");
	fails("thread T = choose(A)\n", "t.sched:1:12: error: choose needs at least two threads");
	fails("thread T = choose()\n", "t.sched:1:12: error: choose needs at least two threads");
	fails("thread T = choose(1..3)\n",
	      "t.sched:1:19: error: choose(...) of threads takes thread names, found '1'");
	fails("thread T = choose(true, false)\n",
	      "t.sched:1:19: error: choose(...) of threads takes thread names, found 'true'");
	fails("thread T = choose(A, all)\n",
	      "t.sched:1:22: error: choose(...) of threads takes thread names, found 'all'");
	fails("thread T = choose(A, )\n",
	      "t.sched:1:22: error: choose(...) of threads takes thread names, found ')'");
	fails("thread T = choose(A, B, A)\n", "t.sched:1:25: error: thread 'A' is listed twice");
	fails("thread T = choose(A B)\n",
	      "t.sched:1:21: error: expected ')' to close '(' at 1:18, found 'B'");
	fails("thread T = choose(A.x, B)\n",
	      "t.sched:1:20: error: expected ')' to close '(' at 1:18, found '.'");
	fails("thread T = choose\n", "t.sched:1:18: error: expected '(' after 'choose': 'thread "
				     "T = choose(A, B)', found end of line");
	fails("thread T = choose(A, B) x\n",
	      "t.sched:1:25: error: expected end of 'thread' statement, found 'x'");
}

Test(parser_errors, assume_let_for)
{
	fails("assume\n",
	      "t.sched:1:7: error: expected a condition after 'assume', found end of line");
	fails("assume x = 1\n", "t.sched:1:10: error: '=' is assignment; use '==' to compare");
	fails("assume(x) y\n",
	      "t.sched:1:11: error: expected end of 'assume' statement, found 'y'");
	fails("let = 3\n",
	      "t.sched:1:5: error: 'let' needs a variable name: 'let x = EXPR', found '='");
	fails("let run = 3\n",
	      "t.sched:1:5: error: 'let' needs a variable name: 'let x = EXPR', found 'run'");
	fails("let x 3\n", "t.sched:1:7: error: expected '=' after 'let x', found '3'");
	fails("let x == 3\n", "t.sched:1:7: error: expected '=' after 'let x', found '=='");
	fails("let x =\n", "t.sched:1:8: error: expected a value after '=', found end of line");
	fails("let x = y = 2\n", "t.sched:1:11: error: '=' is assignment; use '==' to compare");
	fails("let x = 1 2\n", "t.sched:1:11: error: expected end of 'let' statement, found '2'");
	fails("x = 1\n", "t.sched:1:1: error: unknown statement 'x'; to give it a value write "
			 "'let x = ...'");
	fails("lett x = 1\n", "t.sched:1:1: error: unknown statement 'lett'; did you mean 'let'?");
	fails("asume x\n", "t.sched:1:1: error: unknown statement 'asume'; did you mean 'assume'?");
	fails("for 3 in 1..2 { }\n", "t.sched:1:5: error: 'for' needs a variable name: 'for i in "
				     "LO..HI { ... }', found '3'");
	fails("for i 1..2 { }\n",
	      "t.sched:1:7: error: expected 'in' after the loop variable, found '1'");
	fails("for i = 1..2 { }\n",
	      "t.sched:1:7: error: expected 'in' after the loop variable, found '='");
	fails("for i in { }\n", "t.sched:1:10: error: expected LO..HI range, found '{'");
	fails("for i in\n", "t.sched:1:9: error: expected LO..HI range, found end of line");
	fails("for i in 3 { }\n", "t.sched:1:12: error: expected LO..HI range, found '{'");
	fails("for i in 1.. { }\n", "t.sched:1:14: error: expected LO..HI range, found '{'");
	fails("for i in ..3 { }\n", "t.sched:1:10: error: expected LO..HI range, found '..'");
	fails("for i in 1..3\n",
	      "t.sched:1:14: error: expected '{' to open the body of 'for', found end of file");
	fails("for i in 1..3 run A until exit\n",
	      "t.sched:1:15: error: expected '{' to open the body of 'for', found 'run'");
	fails("for i in 1..3 { } x\n",
	      "t.sched:1:19: error: expected a new line or ';' after the '}' of 'for', found 'x'");
	fails("assert for\n", "t.sched:1:8: error: expected an expression, found keyword 'for'");
	fails("assert let + 1\n",
	      "t.sched:1:8: error: expected an expression, found keyword 'let'");
	fails("run assume until exit\n",
	      "t.sched:1:5: error: thread list expects a name, found 'assume'");
	fails("in x\n", "t.sched:1:1: error: unknown statement 'in'; did you mean 'if'?");
}

/* ---- errors ----------------------------------------------------------- */

Test(parser_errors, lexical)
{
	fails("run A until x == 0x\n", "t.sched:1:18: error: bad hex literal '0x'");
	fails("assert 0x1g\n", "t.sched:1:8: error: bad hex literal '0x1g'");
	fails("assert 99999999999999999999\n", "t.sched:1:8: error: integer literal too large");
	fails("assert 9223372036854775808\n", "t.sched:1:8: error: integer literal too large");
	fails("assert 0x10000000000000000\n", "t.sched:1:8: error: integer literal too large");
	fails("assert x == 010\n",
	      "t.sched:1:13: error: leading zero in '010': octal is not supported");
	fails("timeout 2x\n", "t.sched:1:9: error: bad duration '2x': use ms, s, m or h");
	fails("timeout 5sec\n", "t.sched:1:9: error: bad duration '5sec': use ms, s, m or h");
	fails("timeout 9999999999999999m\n", "t.sched:1:9: error: duration too large");
	fails("assert c == ''\n", "t.sched:1:13: error: empty character literal");
	fails("assert c == 'a\n", "t.sched:1:13: error: unterminated character literal");
	fails("assert c == 'ab'\n", "t.sched:1:13: error: unterminated character literal");
	fails("assert c == '", "t.sched:1:13: error: unterminated character literal");
	fails("assert c == '\\q'\n",
	      "t.sched:1:14: error: unknown escape '\\q' in character literal");
	fails("run A until @x\n", "t.sched:1:13: error: unexpected character '@'");
	fails("run A until $\n", "t.sched:1:13: error: unexpected character '$'");
	/* ...but inside a name, as GNU C and clang's lambdas have it */
	dumps_as("run A until enter(_ZZ4mainENK3$_1clEi)\n",
		 "run A until enter(_ZZ4mainENK3$_1clEi)\n");
	fails("run A until \x01\n", "t.sched:1:13: error: unexpected byte 0x01");
	fails("run A\xc3\xa9 until exit\n", "t.sched:1:6: error: unexpected byte 0xc3");
}

Test(parser_errors, at_location)
{
	fails("run B until at()\n",
	      "t.sched:1:16: error: expected a file:line location inside at(...)");
	fails("run B until at(bank.c)\n", "t.sched:1:16: error: expected a file:line location "
					  "inside at(...), found 'bank.c'");
	fails("run B until at(:41)\n", "t.sched:1:16: error: expected a file:line location "
				       "inside at(...), found ':41'");
	fails("run B until at(bank.c:)\n", "t.sched:1:16: error: expected a file:line location "
					   "inside at(...), found 'bank.c:'");
	fails("run B until at(bank.c:4x)\n", "t.sched:1:16: error: expected a file:line "
					     "location inside at(...), found 'bank.c:4x'");
	fails("run B until at(bank.c : 41)\n", "t.sched:1:16: error: expected a file:line "
					       "location inside at(...), found 'bank.c'");
	fails("run B until at(bank.c:0)\n", "t.sched:1:23: error: line numbers start at 1");
	fails("run B until at(bank.c:99999999999)\n", "t.sched:1:23: error: line number too large");
	fails("run B until at(bank.c:4 x)\n",
	      "t.sched:1:25: error: expected ')' to close '(' at 1:15, found 'x'");
	fails("run B until at(bank.c:4", "t.sched:1:24: error: expected ')' to close '(' at "
					 "1:15, found end of file");
}

Test(parser_errors, brackets)
{
	fails("if (x { run A until exit }\n",
	      "t.sched:1:7: error: expected ')' to close '(' at 1:4, found '{'");
	fails("assert (a + b\n\n",
	      "t.sched:1:14: error: expected ')' to close '(' at 1:8, found end of file");
	fails("assert a[1 + 2 == 3\nrun A until exit\n",
	      "t.sched:2:1: error: expected ']' to close '[' at 1:9, found 'run'");
	fails("run A until enter(f\n",
	      "t.sched:1:20: error: expected ')' to close '(' at 1:18, found end of file");
	fails("assert x)\n", "t.sched:1:9: error: expected end of 'assert' statement, found ')'");
}

Test(parser_errors, event_arguments)
{
	fails("run A until enter(5)\n",
	      "t.sched:1:19: error: enter(...) expects a function name, found '5'");
	fails("run A until return()\n",
	      "t.sched:1:20: error: return(...) expects a function name, found ')'");
	fails("run A until enter(a, b)\n",
	      "t.sched:1:20: error: expected ')' to close '(' at 1:18, found ','");
	fails("run A until read(a + 1)\n", "t.sched:1:18: error: read(...) needs a variable, "
					   "field, array element or *pointer to watch");
	fails("run A until write(3)\n", "t.sched:1:19: error: write(...) needs a variable, "
					"field, array element or *pointer to watch");
	fails("run A until read()\n", "t.sched:1:18: error: expected an expression, found ')'");
	fails("while (ended(3)) {}\n",
	      "t.sched:1:14: error: ended(...) expects a thread name, found '3'");
	fails("while (ended(all)) {}\n",
	      "t.sched:1:14: error: ended(...) expects a thread name, found 'all'");
	fails("while (in(A f)) {}\n", "t.sched:1:13: error: expected ',' between the thread and "
				      "the function in in(T, F), found 'f'");
	fails("while (in(, f)) {}\n",
	      "t.sched:1:11: error: in(...) expects a thread or function name, found ','");
	fails("run A until syscall(fuutex)\n",
	      "t.sched:1:21: error: unknown system call 'fuutex'; did you mean 'futex'?");
	fails("run A until syscall(xyzzyq)\n",
	      "t.sched:1:21: error: unknown system call 'xyzzyq' (names are those of x86-64 "
	      "Linux, e.g. futex, read, write, close, accept)");
	fails("wait any exec(foo)\n", "t.sched:1:14: error: 'exec' takes no argument");
	fails("run A until syscall()\n", "t.sched:1:21: error: syscall(...) expects a system call "
					 "name, e.g. futex, found ')'");
	fails("run A until call(3)\n",
	      "t.sched:1:18: error: call(...) expects a function name, found '3'");
	fails("while (in(A, )) {}\n",
	      "t.sched:1:14: error: in(...) expects a function name after ',', found ')'");
	fails("run A until signal(SIGFOO)\n", "t.sched:1:20: error: unknown signal 'SIGFOO': use "
					      "a name such as SIGSEGV or a number 1-64");
	fails("run A until signal(99)\n", "t.sched:1:20: error: unknown signal '99': use a name "
					  "such as SIGSEGV or a number 1-64");
	fails("run A until signal()\n", "t.sched:1:20: error: signal(...) expects a signal name "
					"such as SIGSEGV, found ')'");
	fails("run A until signal(SIGSEGV\n", "t.sched:1:27: error: expected ')' to close '(' at "
					      "1:19, found end of file");
}

Test(parser_errors, unknown_calls)
{
	fails("run A until entr(f)\n",
	      "t.sched:1:13: error: unknown event or condition 'entr(...)'; did you mean 'enter'?");
	fails(
	    "run A until wirte(x)\n",
	    "t.sched:1:13: error: unknown event or condition 'wirte(...)'; did you mean 'write'?");
	fails("while (ende(A)) {}\n",
	      "t.sched:1:8: error: unknown event or condition 'ende(...)'; did you mean 'ended'?");
	fails("assert strlen(s) == 0\n",
	      "t.sched:1:8: error: unknown event or condition 'strlen(...)': function calls are "
	      "not supported; events are enter, return, at, read, write, call, syscall, signal, "
	      "conditions ended, in, and proc(T)");
}

Test(parser_errors, expressions)
{
	fails("run A until until\n",
	      "t.sched:1:13: error: expected an expression, found keyword 'until'");
	fails("assert any\n", "t.sched:1:8: error: expected an expression, found keyword 'any'");
	fails("run A until return\n",
	      "t.sched:1:13: error: 'return' needs a function: 'return(F)'");
	fails("run A until return || exit\n",
	      "t.sched:1:13: error: 'return' needs a function: 'return(F)'");
	fails("assert x < 2s\n",
	      "t.sched:1:12: error: a duration such as '2s' is only allowed after 'timeout'");
	fails("assert x + \n", "t.sched:1:12: error: expected an expression, found end of line");
	fails("assert x +", "t.sched:1:11: error: expected an expression, found end of file");
	fails("assert x + }\n", "t.sched:1:12: error: expected an expression, found '}'");
	fails("assert a.\n",
	      "t.sched:1:10: error: expected a field name after '.', found end of line");
	fails("assert a->3\n", "t.sched:1:11: error: expected a field name after '->', found '3'");
	fails("assert a = 1\n", "t.sched:1:10: error: '=' is assignment; use '==' to compare");
	fails("if (a = 1) {}\n", "t.sched:1:7: error: '=' is assignment; use '==' to compare");
	fails("run A until\n", "t.sched:1:12: error: expected a predicate after 'until', found end "
			       "of line");
	fails("run A until ; run B until exit\n",
	      "t.sched:1:13: error: expected a predicate after 'until', found ';'");
	fails("wait any\n",
	      "t.sched:1:9: error: expected a predicate after 'wait', found end of line");
	fails("assert\n",
	      "t.sched:1:7: error: expected a condition after 'assert', found end of line");
	fails("run A until exit exit\n",
	      "t.sched:1:18: error: expected end of 'run' statement, found 'exit'");
	fails("run A until enter(f) foo\n",
	      "t.sched:1:22: error: expected end of 'run' statement, found 'foo'");
	fails("run A until start.x\n",
	      "t.sched:1:18: error: expected end of 'run' statement, found '.'");
	fails("assert a b\n", "t.sched:1:10: error: expected end of 'assert' statement, found 'b'");
}

/* n copies of c; like h_fmt's, the strings live as long as the test. */
static char *repeat_str(const char *c, int n)
{
	size_t len = strlen(c);
	char *buf = malloc(len * (size_t)n + 1), *kept;
	cr_assert_not_null(buf);
	for (int i = 0; i < n; i++)
		memcpy(buf + len * (size_t)i, c, len);
	buf[len * (size_t)n] = '\0';
	kept = h_fmt("%s", buf);
	free(buf);
	return kept;
}

/* "pre" + n copies of "x" + "post". */
static char *text_of(const char *pre, const char *x, int n, const char *post)
{
	return h_fmt("%s%s%s", pre, repeat_str(x, n), post);
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The error of a text that must not parse. */
static const char *parse_error(const char *text)
{
	static char err[2048];
	struct schedule *s = schedule_parse(PATH, text, engine_atoms(), err, sizeof(err));
	cr_assert_null(s, "parsed: %.80s...", text);
	return err;
}

/* A long line is shown as 160 bytes around the caret, "..." marking what is
 * left out: the diagnostic expected when the 160 bytes are all `fill`, the
 * caret in the middle. */
static const char *excerpt_diag(const char *first, char fill)
{
	char *dots = repeat_str((char[]){fill, 0}, 160);
	char *pad = repeat_str(" ", 80);
	return h_fmt("%s\n    ...%s...\n       %s^\n", first, dots, pad);
}

Test(parser_errors, nesting_limits)
{
	/* 1000 parentheses: the 257th level is the '(' at column 7 + 257. */
	const char *text = text_of("assert ", "(", 1000, text_of("x", ")", 1000, "\n"));
	cr_assert_str_eq(
	    parse_error(text),
	    excerpt_diag("t.sched:1:264: error: expression nested deeper than 256 levels", '('));
	/* Unary operators: the 256th '!' is the 257th level. */
	text = text_of("assert ", "!", 1000, "x\n");
	cr_assert_str_eq(
	    parse_error(text),
	    excerpt_diag("t.sched:1:263: error: expression nested deeper than 256 levels", '!'));
	/* Postfix steps: a.b.b.b... (the 256th '.', at offset 8 + 2 * 255). */
	text = text_of("assert a", ".b", 1000, "\n");
	const char *err = parse_error(text);
	cr_assert(
	    starts_with(err, "t.sched:1:519: error: expression nested deeper than 256 levels\n"),
	    "%s", err);
	cr_assert_eq(text[518], '.');
	/* Arguments: choose(choose(... */
	text = text_of("assert ", "choose(1, ", 1000, "\n");
	err = parse_error(text);
	cr_assert(strstr(err, ": error: expression nested deeper than 256 levels\n"), "%s", err);
	/* Brackets: a[a[a[... */
	text = text_of("assert ", "a[", 1000, "\n");
	err = parse_error(text);
	cr_assert(strstr(err, ": error: expression nested deeper than 256 levels\n"), "%s", err);
	/* Blocks, and else-if chains, which nest the next if. */
	text = text_of("", "if(x){", 300, "\n");
	err = parse_error(text);
	cr_assert(starts_with(err, "t.sched:1:601: error: statements nested deeper than 100 levels "
				   "(blocks, and each 'else if')\n"),
		  "%s", err);
	text = text_of("if (x) { }", " else if (x) { }", 150, "\n");
	err = parse_error(text);
	cr_assert(strstr(err, ": error: statements nested deeper than 100 levels"), "%s", err);
	/* Moderate nesting is fine, and so is nesting up to the limit. */
	schedule_free(parse_ok(text_of("assert ", "(", 50, text_of("x", ")", 50, "\n"))));
	schedule_free(parse_ok(text_of("assert ", "(", 255, text_of("x", ")", 255, "\n"))));
	schedule_free(parse_ok(text_of("assert ", "!", 255, "x\n")));
	schedule_free(parse_ok(text_of("if (x) { }", " else if (x) { }", 99, "\n")));
}

/* ---- size: long chains, deep nesting, through the whole pipeline -------- */

#define SYMFIX "tests/fixtures/symfix"
#define TERMS  45000

/* Checks a parsed schedule against symfix's offline symbols: the check the
 * CLI makes before it launches anything.  Returns the diagnostic, "" if
 * none; frees s. */
static const char *check_schedule(struct schedule *s)
{
	static char err[4096];
	struct sym_space *syms = sym_open_program(SYMFIX, err, sizeof(err));
	struct policy *pol = calloc(1, sizeof(*pol));

	cr_assert_not_null(syms, "%s (make fixtures)", err);
	cr_assert_not_null(pol);
	pol->sched = s;
	err[0] = '\0';
	int rc = lang_check(pol, syms, err, sizeof(err));
	cr_assert_eq(rc, err[0] ? -1 : 0, "rc %d with <<%s>>", rc, err);
	engine_free(pol);
	sym_close(syms);
	return err;
}

/* The chain "x OP x OP ... x" of n operands, fully parenthesised as
 * expr_format prints it: ((x OP x) OP x) ... */
static char *full_parens(const char *x, const char *op, int n)
{
	return h_fmt("%s%s%s %s %s", repeat_str("(", n - 2), x,
		     repeat_str(h_fmt(" %s %s)", op, x), n - 2), op, x);
}

/* `assert CHAIN` with n operands x joined by op: parsed left-deep with its
 * spine linked upwards, printed fully parenthesised by expr_format and as
 * written by schedule_dump (which parses back), checked, freed. */
static void long_chain(const char *x, const char *op, int opkind)
{
	char *joint = h_fmt(" %s %s", op, x);
	char *text = text_of(h_fmt("assert %s", x), joint, TERMS - 1, "\n");
	struct schedule *s = parse_ok(text);
	const struct expr *e = s->body->cond, *b;
	int n = 0;

	for (b = e; b->kind == E_BINARY; b = b->lhs, n++) {
		cr_assert_eq(b->op, opkind);
		cr_assert(b->lhs->up == b, "operation %d is not linked to its parent", n);
	}
	cr_assert_eq(n, TERMS - 1);
	cr_assert_null(e->up);
	cr_assert_eq(b->loc.col, 8);
	cr_assert_eq(expr_chain_bottom(e), b->up);

	size_t len = strlen(text) * 2;
	char *buf = malloc(len);
	cr_assert_not_null(buf);
	char *expect = full_parens(x, op, TERMS);
	cr_assert_eq(expr_format(e, buf, len), strlen(expect));
	cr_assert(strcmp(buf, expect) == 0, "%s chain formats as %.100s...", op, buf);
	char small[64];
	cr_assert_eq(expr_format(e, small, sizeof(small)), sizeof(small) - 1);
	cr_assert(strncmp(small, expect, sizeof(small) - 1) == 0);
	free(buf);

	char *out = dump(s);
	cr_assert(strcmp(out, text) == 0, "%s chain dumps as %.100s...", op, out);
	struct schedule *again = parse_ok(out);
	free(out);
	cr_assert_str_eq(check_schedule(again), "");
	cr_assert_str_eq(check_schedule(s), "");
}

Test(size, chains_of_45000_operands)
{
	long_chain("1", "+", '+');
	long_chain("counter", "||", T_OROR);
	long_chain("bank.id", "&&", T_ANDAND);
	long_chain("1", "==", T_EQ);
	long_chain("shade", "-", '-');
}

/* A predicate of 45,000 events, and the checker's first error is still the
 * leftmost, with a caret under it in an excerpt of the long line. */
Test(size, long_predicates_and_their_errors)
{
	char *text = text_of("wait any enter(worker)", " || enter(worker)", TERMS - 1, "\n");
	cr_assert_str_eq(check_schedule(parse_ok(text)), "");
	text = text_of("wait any enter(worker)", " || enter(worker)", TERMS - 1,
		       " || enter(wroker) || enter(nosuch)\n");
	size_t col = strlen(text) - strlen("enter(wroker) || enter(nosuch)\n") + 1;
	const char *err = check_schedule(parse_ok(text));
	/* The caret is 30 bytes from the end of the line: the excerpt is the
	 * line's last 160 bytes. */
	cr_assert_str_eq(err, h_fmt("t.sched:1:%zu: error: no function 'wroker'; did you mean "
				    "'worker'?\n    ...%.160s\n       %s^\n",
				    col, text + strlen(text) - 161, repeat_str(" ", 130)));
	/* And the same in an assert, where the names are variables. */
	text = text_of("assert counter", " + counter", TERMS - 1, " + countr\n");
	err = check_schedule(parse_ok(text));
	cr_assert(strstr(err, "error: no variable 'countr'; did you mean 'counter'?\n"), "%s", err);
}

/* The deepest expressions the parser accepts, in the shapes that cost the
 * walks the most stack: in each of 255 levels of parentheses (or 127 of
 * unary minus and parentheses), one operator of each of the 10 precedences,
 * each the right operand of the one before.  Parsed, checked (which
 * evaluates them), printed, parsed back, freed. */
static void deepest(const char *level, int levels)
{
	char *text = text_of("assert ", level, levels, text_of("1 + 1", ")", levels, "\n"));
	struct schedule *s = parse_ok(text);
	char *out = dump(s);
	cr_assert(strcmp(out, text) == 0, "dumps as %.200s", out);
	cr_assert_str_eq(check_schedule(parse_ok(out)), "");
	cr_assert_str_eq(check_schedule(s), "");
	free(out);
	text = text_of("wait any enter(worker) || ", level, levels,
		       text_of("1 + 1", ")", levels, "\n"));
	cr_assert_str_eq(check_schedule(parse_ok(text)), "");
	/* One level more is refused. */
	text = text_of("assert ", level, levels + 1, text_of("1 + 1", ")", levels + 1, "\n"));
	cr_assert(strstr(parse_error(text), "error: expression nested deeper than 256 levels\n"));
}

Test(size, deepest_nesting_through_the_pipeline)
{
	deepest("counter || 1 && 1 | 1 ^ 1 & 1 == 1 < 1 << 1 + 1 * (", 255);
	deepest("counter || 1 && 1 | 1 ^ 1 & 1 == 1 < 1 << 1 + 1 * -(", 127);
}

/* Found by tests/fuzz: a chain of 200 unary operators printed as *(*(*(...
 * nested twice as deep as it was written, and the printout did not parse. */
Test(size, unary_chains_print_within_the_limit)
{
	char *text = text_of("assert ", "*", 250, "bank_ptr\n");
	struct schedule *s = parse_ok(text);
	char *out = dump(s);
	cr_assert_str_eq(out, text);
	schedule_free(parse_ok(out));
	free(out);
	schedule_free(s);
	dumps_as("assert - -a + !!b + ~-c + &*p + -(-1 + 2)\n",
		 "assert - -a + !!b + ~-c + &*p + -(-1 + 2)\n");
	dumps_as("assert & &a\n", "assert & &a\n");
}

/* schedule_dump prints only the parentheses needed: what was written,
 * minus redundant ones, never more, so that the printout nests no deeper
 * than the text did. */
Test(size, dump_prints_needed_parentheses_only)
{
	dumps_as("assert a - (b - c) - d\n", "assert a - (b - c) - d\n");
	dumps_as("assert (a - b) - c\n", "assert a - b - c\n");
	dumps_as("assert a * (b + c) == (d || e) && !(f < g)\n",
		 "assert a * (b + c) == (d || e) && !(f < g)\n");
	dumps_as("assert ((a || b) && c) | d[(1 + 2) * 3]\n",
		 "assert ((a || b) && c) | d[(1 + 2) * 3]\n");
	dumps_as("assert (*p).x + (-a)[1] + (a + b).c\n", "assert (*p).x + (-a)[1] + (a + b).c\n");
	dumps_as("assert ((((a))))\n", "assert a\n");
}

/* The values of choose(...) are checked like any other expression (a let
 * variable, a thread condition), and may not be events. */
Test(size, choose_values_are_checked)
{
	cr_assert_str_eq(check_schedule(parse_ok("let i = 1\nassert choose(i, 2) >= 1\n")), "");
	cr_assert_str_eq(
	    check_schedule(parse_ok("assert choose(ended(Z), 1)\n")),
	    "t.sched:1:15: error: unknown thread 'Z': no thread has been bound yet (bind one "
	    "with 'thread Z = wait any start')\n"
	    "    assert choose(ended(Z), 1)\n"
	    "                  ^\n");
	cr_assert_str_eq(check_schedule(parse_ok("wait any exit || choose(enter(worker), 0)\n")),
			 "t.sched:1:25: error: choose(...) picks among values; the event "
			 "'enter(worker)' cannot be one of them\n"
			 "    wait any exit || choose(enter(worker), 0)\n"
			 "                            ^\n");
	cr_assert_str_eq(check_schedule(parse_ok("assert choose(1..countr)\n")),
			 "t.sched:1:18: error: no variable 'countr'; did you mean 'counter'?\n"
			 "    assert choose(1..countr)\n"
			 "                     ^\n");
}

/* `cctrace run` on samples/bank with 45,000-operand chains in a predicate
 * (wait, run ... until: breakpoints planted for the chain's events, the
 * predicate evaluated at each event) and in asserts evaluated on the live
 * program, passing and failing. */
static struct h_result run_bank(const char *text)
{
	char *path = h_temp_sched("chain.sched", text);
	return H_RUN(h_cctrace(), "run", path, "--", "samples/bank/bank");
}

Test(size, cctrace_runs_long_chains, .fini = h_cleanup, .timeout = 120)
{
	char *pred =
	    text_of("enter(withdraw)", " || enter(withdraw)", TERMS - 2, " || return(withdraw)");
	struct h_result r =
	    run_bank(h_fmt("timeout 10s\nthread A, B = wait 2 distinct %s\n"
			   "run A until return(withdraw)\nassert balance < 100\nrelease all\n",
			   pred));
	cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%.2000s", r.out, r.err);
	cr_assert(strstr(r.err, "cctrace: completed"), "%.2000s", r.err);
	cr_assert_eq(h_count_lines(r.err, "enter(withdraw)"), 2, "%.2000s", r.err);

	pred = text_of("return(withdraw)", " || return(withdraw)", TERMS - 1, "");
	h_result_free(&r);
	r = run_bank(h_fmt("timeout 10s\nthread A, B = wait 2 distinct enter(withdraw)\n"
			   "run A until %s\nassert balance < 100\nrelease all\n",
			   pred));
	cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%.2000s", r.out, r.err);
	cr_assert_eq(h_count_lines(r.err, "return(withdraw)"), 1, "%.2000s", r.err);

	/* Each is true only if every operand is evaluated, in order.  Both
	 * threads are held at the entry of withdraw: the balance is 100. */
	h_result_free(&r);
	r = run_bank(h_fmt("timeout 10s\nthread A, B = wait 2 distinct enter(withdraw)\n"
			   "assert %s == %d\nassert %s\nassert %s\nassert %s\nrelease all\n",
			   text_of("1", " + 1", TERMS - 1, ""), TERMS,
			   text_of("0", " || 0", TERMS - 2, " || balance == 100"),
			   text_of("balance == 100", " && 1", TERMS - 1, ""),
			   text_of("1", " == 1", TERMS - 1, "")));
	cr_assert_eq(r.code, 0, "stdout:\n%s\nstderr:\n%.2000s", r.out, r.err);
	cr_assert(strstr(r.err, "cctrace: completed"), "%.2000s", r.err);

	/* A failing one: the bug, the assertion's text, the variable's value. */
	h_result_free(&r);
	r = run_bank(h_fmt("timeout 10s\nthread A, B = wait 2 distinct enter(withdraw)\n"
			   "assert %s\nrelease all\n",
			   text_of("0", " || 0", TERMS - 2, " || balance != 100")));
	cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%.2000s", r.out, r.err);
	cr_assert(strstr(r.err, "cctrace: bug: assertion failed at "), "%.2000s", r.err);
	cr_assert(strstr(r.err, ":3:1: assert ((((((((((((((((((((((("), "%.2000s", r.err);
	cr_assert(strstr(r.err, "  balance = 100\n"), "%.2000s", r.err);
	h_result_free(&r);
}

Test(parser_errors, thread_lists)
{
	fails("run A,, B until exit\n",
	      "t.sched:1:7: error: thread list expects a name, found ','");
	fails("run , A until exit\n", "t.sched:1:5: error: thread list expects a name, found ','");
	fails("run until exit\n", "t.sched:1:5: error: thread list expects a name, found 'until'");
	fails("run A, until exit\n",
	      "t.sched:1:8: error: thread list expects a name, found 'until'");
	fails("run\n", "t.sched:1:4: error: thread list expects a name, found end of line");
	fails("release A,\n", "t.sched:1:11: error: thread list expects a name, found end of line");
	fails("run A, B, A until exit\n", "t.sched:1:11: error: thread 'A' is listed twice");
	fails("thread A, A = wait 2 distinct start\n",
	      "t.sched:1:11: error: thread 'A' is listed twice");
	fails("run A, B untl enter(audit)\n",
	      "t.sched:1:10: error: expected 'until' after thread list, found 'untl'");
	fails("run A B until exit\n",
	      "t.sched:1:7: error: expected 'until' after thread list, found 'B'");
	fails("run A\n",
	      "t.sched:1:6: error: expected 'until' after thread list, found end of line");
	fails("release\n",
	      "t.sched:1:8: error: 'release' needs threads: 'release A, B' or 'release all'");
	fails("release all, A\n",
	      "t.sched:1:12: error: expected end of 'release' statement, found ','");
}

Test(parser_errors, wait)
{
	fails("wait enter(x)\n", "t.sched:1:6: error: 'wait' needs a count: 'wait N distinct PRED' "
				 "or 'wait any PRED'");
	fails("thread A = wait\n", "t.sched:1:16: error: 'wait' needs a count: 'wait N distinct "
				   "PRED' or 'wait any PRED'");
	fails("wait 0 distinct start\n", "t.sched:1:6: error: 'wait' needs a count of at least 1");
	fails("wait 2 start\n", "t.sched:1:8: error: expected 'distinct' after 'wait 2': 'wait N "
				"distinct PRED', found 'start'");
	fails("wait any distinct start\n", "t.sched:1:10: error: 'wait any' waits for one thread: "
					   "drop 'distinct', or write 'wait N distinct PRED'");
	fails("thread A, B = wait any start\n",
	      "t.sched:1:20: error: the thread list has 2 names but 'wait' binds 1 thread");
	fails("thread A = wait 3 distinct start\n",
	      "t.sched:1:17: error: the thread list has 1 name but 'wait' binds 3 threads");
	fails("thread A wait any start\n",
	      "t.sched:1:10: error: expected '=' after thread list, found 'wait'");
	fails("thread A = run A until exit\n",
	      "t.sched:1:12: error: 'thread' declarations must have '= wait ...', found 'run'");
	fails("thread A =\n", "t.sched:1:11: error: 'thread' declarations must have '= wait ...', "
			      "found end of line");
	fails("thread = wait any start\n",
	      "t.sched:1:8: error: thread list expects a name, found '='");
}

Test(parser_errors, blocks)
{
	fails("if x { }\n", "t.sched:1:4: error: expected '(' after 'if', found 'x'");
	fails("while { }\n", "t.sched:1:7: error: expected '(' after 'while', found '{'");
	fails("if () { }\n",
	      "t.sched:1:5: error: expected a condition inside 'if (...)', found ')'");
	fails("while () { }\n",
	      "t.sched:1:8: error: expected a condition inside 'while (...)', found ')'");
	fails("if (x) run A until exit\n",
	      "t.sched:1:8: error: expected '{' to open the body of 'if', found 'run'");
	fails("if (x) { } else run A until exit\n",
	      "t.sched:1:17: error: expected '{' to open the body of 'else', found 'run'");
	fails("while (x)\n", "t.sched:1:10: error: expected '{' to open the body of 'while', found "
			     "end of file");
	fails("repeat 3 run A until exit\n",
	      "t.sched:1:10: error: expected '{' to open the body of 'repeat', found 'run'");
	fails("repeat { }\n",
	      "t.sched:1:8: error: 'repeat' needs a count: 'repeat N { ... }', found '{'");
	fails("repeat n { }\n",
	      "t.sched:1:8: error: 'repeat' needs a count: 'repeat N { ... }', found 'n'");
	fails("if (x) {\n  run A until exit\n",
	      "t.sched:2:19: error: unterminated block: '{' opened at 1:8 has no '}'");
	fails("run A until exit\nwhile (y) {\n\t\trepeat 2 { run A until exit }\n\n\n",
	      "t.sched:3:32: error: unterminated block: '{' opened at 2:11 has no '}'");
	fails("if (x) {", "t.sched:1:9: error: unterminated block: '{' opened at 1:8 has no '}'");
	fails("run A until exit\n}\n", "t.sched:2:1: error: '}' without a matching '{'");
	fails("if (x) { } }\n", "t.sched:1:12: error: '}' without a matching '{'");
	fails("if (x) { } run A until exit\n",
	      "t.sched:1:12: error: expected a new line or ';' after the '}' of 'if', found 'run'");
	fails(
	    "repeat 2 { } x\n",
	    "t.sched:1:14: error: expected a new line or ';' after the '}' of 'repeat', found 'x'");
	fails(
	    "if (x) { } else { } else { }\n",
	    "t.sched:1:21: error: expected a new line or ';' after the '}' of 'if', found 'else'");
}

Test(parser_errors, statements)
{
	fails("rn A until exit\n",
	      "t.sched:1:1: error: unknown statement 'rn'; did you mean 'run'?");
	fails("  wiat any start\n",
	      "t.sched:1:3: error: unknown statement 'wiat'; did you mean 'wait'?");
	fails("relase all\n",
	      "t.sched:1:1: error: unknown statement 'relase'; did you mean 'release'?");
	fails("timout 2s\n",
	      "t.sched:1:1: error: unknown statement 'timout'; did you mean 'timeout'?");
	fails("asert x\n", "t.sched:1:1: error: unknown statement 'asert'; did you mean 'assert'?");
	fails("whle (x) {}\n",
	      "t.sched:1:1: error: unknown statement 'whle'; did you mean 'while'?");
	fails("A = wait any start\n", "t.sched:1:1: error: unknown statement 'A'; to bind threads "
				      "write 'thread A = wait ...'");
	fails("foo, B = wait 2 distinct start\n", "t.sched:1:1: error: unknown statement 'foo'; "
						  "to bind threads write 'thread foo = wait ...'");
	fails("balance == 3\n", "t.sched:1:1: error: unknown statement 'balance'");
	fails("x\n", "t.sched:1:1: error: unknown statement 'x'");
	fails("else { }\n", "t.sched:1:1: error: 'else' without 'if'");
	fails("if (x) { }\nrun A until exit\nelse { }\n",
	      "t.sched:3:1: error: 'else' without 'if'");
	fails("until exit\n", "t.sched:1:1: error: expected a statement, found keyword 'until'");
	fails("distinct\n", "t.sched:1:1: error: expected a statement, found keyword 'distinct'");
	fails("(x)\n", "t.sched:1:1: error: expected a statement, found '('");
	fails("42\n", "t.sched:1:1: error: expected a statement, found '42'");
	fails(
	    "timeout\n",
	    "t.sched:1:8: error: 'timeout' needs a duration such as '2s' or '500ms', found end of "
	    "line");
	fails("timeout x\n", "t.sched:1:9: error: 'timeout' needs a duration such as '2s' or "
			     "'500ms', found 'x'");
	fails("timeout 2\n",
	      "t.sched:1:9: error: 'timeout' needs a unit: '2ms', '2s', '2m' or '2h'");
	fails("timeout 2s 3s\n",
	      "t.sched:1:12: error: expected end of 'timeout' statement, found '3s'");
}

Test(parser_errors, step_next_finish)
{
	fails("step\n", "t.sched:1:5: error: 'step' needs a thread name, found end of line");
	fails("step 3\n", "t.sched:1:6: error: 'step' needs a thread name, found '3'");
	fails("step all\n", "t.sched:1:6: error: 'step' needs a thread name, found 'all'");
	fails("step A 0\n",
	      "t.sched:1:8: error: 'step' takes a positive instruction count, found '0'");
	fails("step A x\n",
	      "t.sched:1:8: error: 'step' takes a positive instruction count, found 'x'");
	fails("step A -1\n",
	      "t.sched:1:8: error: 'step' takes a positive instruction count, found '-'");
	fails("step A 2s\n",
	      "t.sched:1:8: error: 'step' takes a positive instruction count, found '2s'");
	fails("step A 0xffffffffffffffff\n", "t.sched:1:8: error: 'step' takes a positive "
					     "instruction count, found '0xffffffffffffffff'");
	fails("step A 1000001\n", "t.sched:1:8: error: 'step' takes a positive instruction count "
				  "up to 1000000, found '1000001'");
	fails("step A, B\n", "t.sched:1:7: error: 'step' takes one thread, found ','");
	fails("step A 2 3\n", "t.sched:1:10: error: expected end of 'step' statement, found '3'");
	fails("next\n", "t.sched:1:5: error: 'next' needs a thread name, found end of line");
	fails("next until\n", "t.sched:1:6: error: 'next' needs a thread name, found 'until'");
	fails("next A, B\n", "t.sched:1:7: error: 'next' takes one thread, found ','");
	fails("next A 2\n", "t.sched:1:8: error: expected end of 'next' statement, found '2'");
	fails("finish\n", "t.sched:1:7: error: 'finish' needs a thread name, found end of line");
	fails("finish A, B\n", "t.sched:1:9: error: 'finish' takes one thread, found ','");
	fails("finish A B\n", "t.sched:1:10: error: expected end of 'finish' statement, found 'B'");
}

Test(parser_errors, hold)
{
	fails("hold\n", "t.sched:1:5: error: 'hold' needs thread names, found end of line");
	fails("hold all\n", "t.sched:1:6: error: 'hold' needs thread names, found 'all'");
	fails("hold ,A\n", "t.sched:1:6: error: 'hold' needs thread names, found ','");
	fails("hold A,\n", "t.sched:1:8: error: thread list expects a name, found end of line");
	fails("hold A, A\n", "t.sched:1:9: error: thread 'A' is listed twice");
	fails("hold A B\n", "t.sched:1:8: error: expected end of 'hold' statement, found 'B'");
}

Test(parser_errors, bind)
{
	const char *bad[] = {"p1.x",  "p1",    "p1 .t3",   "p1. t3", "p1.t3x", "p1.t3.4",
			     "p1.t",  "p1.3",  "p0.t1",	   "p1.t0",  "p01.t1", "p1.t02",
			     "P1.T3", "q1.t3", "p1.t3.t4", "pp1.t3", "p1_t3",  "a.b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[64];
		snprintf(text, sizeof(text), "thread T = %s\n", bad[i]);
		fails(text, "t.sched:1:12: error: expected 'wait' or a thread name such as p1.t3 "
			    "after '='");
	}
	/* words that do not look like a thread name keep the old message */
	fails("thread T = t3\n",
	      "t.sched:1:12: error: 'thread' declarations must have '= wait ...', found 't3'");
	fails("thread T = p\n",
	      "t.sched:1:12: error: 'thread' declarations must have '= wait ...', found 'p'");
	fails("thread T = 1.5\n",
	      "t.sched:1:12: error: 'thread' declarations must have '= wait ...', found '1'");
	fails("thread A, B = p1.t3\n",
	      "t.sched:1:11: error: a thread name binds one thread: 'thread A = p1.t3'");
	fails("thread X, Y, Z = p2.t7 # three\n",
	      "t.sched:1:11: error: a thread name binds one thread: 'thread X = p2.t7'");
	fails("thread T = p1.t3 x\n",
	      "t.sched:1:18: error: expected end of 'thread' statement, found 'x'");
	fails("thread T = p1.t3 wait any start\n",
	      "t.sched:1:18: error: expected end of 'thread' statement, found 'wait'");
	fails("thread step = p1.t3\n",
	      "t.sched:1:8: error: thread list expects a name, found 'step'");
}

Test(parser_errors, stepping_keywords)
{
	fails("stpe A\n", "t.sched:1:1: error: unknown statement 'stpe'; did you mean 'step'?");
	fails("nxt A\n", "t.sched:1:1: error: unknown statement 'nxt'; did you mean 'next'?");
	fails("finsh A\n", "t.sched:1:1: error: unknown statement 'finsh'; did you mean 'finish'?");
	fails("hodl A\n", "t.sched:1:1: error: unknown statement 'hodl'; did you mean 'hold'?");
	fails("assert next == 0\n",
	      "t.sched:1:8: error: expected an expression, found keyword 'next'");
	fails("run A until step\n",
	      "t.sched:1:13: error: expected an expression, found keyword 'step'");
	fails("assert ended(finish)\n",
	      "t.sched:1:14: error: ended(...) expects a thread name, found 'finish'");
	fails("run hold until exit\n",
	      "t.sched:1:5: error: thread list expects a name, found 'hold'");
	fails("thread A, next = wait 2 distinct start\n",
	      "t.sched:1:11: error: thread list expects a name, found 'next'");
}

Test(parser_errors, positions_on_later_lines_and_tabs)
{
	fails("timeout 1s\n\n# comment\n\trun A,\tB untl exit\n",
	      "t.sched:4:11: error: expected 'until' after thread list, found 'untl'");
	fails("if (a) {\n\twhile (b) {\n\t\trn A until exit\n\t}\n}\n",
	      "t.sched:3:3: error: unknown statement 'rn'; did you mean 'run'?");
	fails("run A until exit\r\nrun B untl exit\r\n",
	      "t.sched:2:7: error: expected 'until' after thread list, found 'untl'");
}

Test(parser_errors, long_token_is_shortened)
{
	fails("run A xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	      "t.sched:1:7: error: expected 'until' after thread list, found "
	      "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
}

Test(parser_errors, small_error_buffers)
{
	char err[16];
	cr_assert_null(schedule_parse(PATH, "rn A until exit", engine_atoms(), err, sizeof(err)));
	cr_assert_str_eq(err, "t.sched:1:1: er");
	cr_assert_null(schedule_parse(PATH, "rn A until exit", engine_atoms(), NULL, 0));
	cr_assert_null(schedule_parse(PATH, "rn A until exit", engine_atoms(), err, 0));
}

Test(parser_errors, first_error_wins)
{
	char err[2048];
	cr_assert_null(schedule_parse(PATH, "rn A\nfoo bar\n@", engine_atoms(), err, sizeof(err)));
	cr_assert_str_eq(err, "t.sched:1:1: error: unknown statement 'rn'; did you mean 'run'?\n"
			      "    rn A\n"
			      "    ^\n");
}

/* ---- schedule_diag ---------------------------------------------------- */

Test(parser, schedule_diag_format)
{
	struct schedule *s = parse_ok("timeout 1s\n\trun A,\tB until enter(nosuch)\n");
	char buf[512];
	const struct expr *e = s->body->next->pred;
	schedule_diag(s, e->loc, buf, sizeof(buf), "no function '%s' in %s", e->name, "./prog");
	cr_assert_str_eq(buf, "t.sched:2:17: error: no function 'nosuch' in ./prog\n"
			      "    \trun A,\tB until enter(nosuch)\n"
			      "    \t      \t        ^\n");
	check_diag(s->text, buf, "t.sched:2:17: error: no function 'nosuch' in ./prog");
	struct src_loc l = s->body->next->name_locs[1];
	schedule_diag(s, l, buf, sizeof(buf), "thread '%s' is not bound", "B");
	check_diag(s->text, buf, "t.sched:2:9: error: thread 'B' is not bound");
	/* A position past the end of the text still gives the first line. */
	struct src_loc far = {99, 3};
	schedule_diag(s, far, buf, sizeof(buf), "x");
	cr_assert_str_eq(buf, "t.sched:99:3: error: x\n");
	char tiny[10];
	schedule_diag(s, l, tiny, sizeof(tiny), "thread");
	cr_assert_str_eq(tiny, "t.sched:2");
	schedule_free(s);
}

/* ---- schedule_load ---------------------------------------------------- */

static char *write_temp(const char *text, size_t len)
{
	char *path = strdup("/tmp/test_parser_XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

Test(parser, load)
{
	char *path = write_temp("# run: cctrace run x -- ./y\nrun A until exit\n", 44);
	char err[512];
	struct schedule *s = schedule_load(path, engine_atoms(), err, sizeof(err));
	cr_assert(s, "%s", err);
	cr_assert_str_eq(s->path, path);
	cr_assert_str_eq(s->run_comment, "cctrace run x -- ./y");
	cr_assert_eq(s->body->kind, S_RUN);
	cr_assert_eq(s->body->loc.line, 2);
	schedule_free(s);
	unlink(path);
	free(path);
}

Test(parser, load_errors)
{
	char err[512];
	cr_assert_null(schedule_load("/nonexistent/x.sched", engine_atoms(), err, sizeof(err)));
	cr_assert_str_eq(err,
			 "/nonexistent/x.sched: cannot read schedule: No such file or directory\n");
	cr_assert_null(schedule_load("/tmp", engine_atoms(), err, sizeof(err)));
	cr_assert_str_eq(err, "/tmp: cannot read schedule: Is a directory\n");
	char *path = write_temp("run A\0 until exit\n", 18);
	cr_assert_null(schedule_load(path, engine_atoms(), err, sizeof(err)));
	char want[256];
	snprintf(want, sizeof(want), "%s: cannot read schedule: file contains a NUL byte\n", path);
	cr_assert_str_eq(err, want);
	unlink(path);
	free(path);
	path = write_temp("run A untl exit\n", 16);
	cr_assert_null(schedule_load(path, engine_atoms(), err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "%s:1:7: error: expected 'until' after thread list, found 'untl'\n"
		 "    run A untl exit\n"
		 "          ^\n",
		 path);
	cr_assert_str_eq(err, want);
	unlink(path);
	free(path);
}

/* ---- robustness ------------------------------------------------------- */

static const char *const corpus[] = {
    "# run: cctrace run samples/bank/lost-update.sched -- samples/bank/bank\n"
    "timeout 2s\n"
    "thread A, B = wait 2 distinct enter(withdraw)\n"
    "run A, B until enter(audit)\n"
    "run B until at(bank.c:41)\n"
    "run A until read(acct->balance) && balance < 0\n"
    "if (balance != 100) { run A until exit } else if (x) { release A } else { run B "
    "until exit }\n"
    "while (!ended(A) && in(B, withdraw)) {\n"
    "\trun A until return(withdraw) || signal(SIGSEGV) || signal\n"
    "}\n"
    "repeat 10 { run A until write(a[1].b) }\n"
    "assert accounts[1].balance >= 0 && p->next == 0x10 && c == 'x'\n"
    "release all\n",
    "thread M = wait any start; wait any enter(init)\n"
    "assert (a ||\n  b) && -~!*&x[(1 + 2) * 3 % 4 << 5 >> 6 | 7 ^ 8 & 9] != true\n"
    "release A, B  # done\n",
    "if (a)\n{\n}\n\nelse\n{\n  run A until exit ; run B until exit\n}\n",
    "thread T = p1.t3\nstep T\nstep T 25\nnext T; finish T\n"
    "while (in(T, work)) { step T 3 }\nhold T, U\n",
    "thread A, B = wait 2 distinct enter(f)\nthread T = choose(A, B)\n"
    "while (*) { run T until enter(g) || exit }\nassume(x > 1); assume y\n"
    "let k = choose(1..4)\nfor i in 0..k - 1 { let v = choose(a, b, c.d) }\n",
};

static void parse_prefixes(const char *text)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	char err[1024];
	for (size_t n = 0; n <= len; n++) {
		memcpy(buf, text, n);
		buf[n] = '\0';
		struct schedule *s = schedule_parse(PATH, buf, engine_atoms(), err, sizeof(err));
		if (s) {
			cr_assert_str_eq(err, "");
			schedule_free(s);
			continue;
		}
		cr_assert(strncmp(err, PATH ":", strlen(PATH) + 1) == 0, "prefix %zu: %s", n, err);
		cr_assert(strstr(err, ": error: "), "prefix %zu: %s", n, err);
		cr_assert(strchr(err, '^'), "prefix %zu has no caret: %s", n, err);
		int line, col;
		cr_assert_eq(sscanf(err, PATH ":%d:%d:", &line, &col), 2);
		cr_assert(line >= 1 && col >= 1);
	}
	free(buf);
}

Test(parser, every_prefix)
{
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
		parse_prefixes(corpus[i]);
}

Test(parser, every_single_byte_mutation)
{
	/* Replace each byte of a schedule by a few troublesome characters. */
	const char *text = corpus[0];
	const char subs[] = "(){}[],;:#'\n\\@0x";
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	char err[1024];
	for (size_t i = 0; i < len; i++) {
		for (size_t j = 0; subs[j]; j++) {
			memcpy(buf, text, len + 1);
			buf[i] = subs[j];
			struct schedule *s =
			    schedule_parse(PATH, buf, engine_atoms(), err, sizeof(err));
			if (s)
				schedule_free(s);
			else
				cr_assert(strncmp(err, PATH ":", strlen(PATH) + 1) == 0, "%s", err);
		}
	}
	free(buf);
}

Test(parser, corpus_round_trips)
{
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		struct schedule *s = parse_ok(corpus[i]);
		char *out = dump(s);
		struct schedule *again = parse_ok(out);
		char *out2 = dump(again);
		cr_assert_str_eq(out, out2);
		free(out);
		free(out2);
		schedule_free(s);
		schedule_free(again);
	}
}

/* ---- processes: fork, exec, proc(T), wait N distinct processes --------- */

Test(parser, process_events)
{
	struct schedule *s = parse_ok("thread P = wait 1 distinct fork\n"
				      "thread A, B = wait 2 distinct processes enter(work)\n"
				      "run A until exec || exit\n"
				      "assert proc(A) != proc(B)\n");
	const struct stmt *w = s->body;
	cr_assert_str_eq(kind_name(w->pred), "fork");
	cr_assert(!w->processes);
	w = w->next;
	cr_assert_eq(w->kind, S_WAIT);
	cr_assert(w->distinct);
	cr_assert(w->processes);
	cr_assert_eq(w->count, 2);
	cr_assert_str_eq(kind_name(w->pred), "enter");
	cr_assert_str_eq(w->pred->name, "work");
	w = w->next;
	cr_assert_str_eq(kind_name(w->pred->lhs), "exec");
	w = w->next;
	cr_assert_eq(w->cond->lhs->kind, E_PROC);
	cr_assert_str_eq(w->cond->lhs->name, "A");
	cr_assert_eq(w->cond->lhs->loc.col, 8);
	schedule_free(s);
	expr_is("proc(A) == proc(B) && fork", "(proc(A) == proc(B)) && fork");
	dumps_as("thread A, B = wait 2 distinct processes enter(f) || exec\n"
		 "assert proc(A) != 7\n",
		 "thread A, B = wait 2 distinct processes enter(f) || exec\n"
		 "assert proc(A) != 7\n");
}

Test(parser, process_words_as_function_names)
{
	/* `fork` and `exec` are events only on their own: enter(fork) is libc's. */
	struct schedule *s = parse_ok("run A until enter(fork) || return(exec)\n");

	cr_assert_str_eq(kind_name(s->body->pred->lhs), "enter");
	cr_assert_str_eq(s->body->pred->lhs->name, "fork");
	cr_assert_str_eq(s->body->pred->rhs->name, "exec");
	schedule_free(s);
}

Test(parser_errors, process_events)
{
	fails("assert proc() == 1\n",
	      "t.sched:1:13: error: proc(...) expects a thread name, found ')'");
	fails("assert proc(3) == 1\n",
	      "t.sched:1:13: error: proc(...) expects a thread name, found '3'");
	fails("assert proc(A, B) == 1\n",
	      "t.sched:1:14: error: expected ')' to close '(' at 1:12, found ','");
	fails("thread A, B = wait 2 distinct processes\n",
	      "t.sched:1:40: error: expected a predicate after 'wait', found end of line");
	fails("run A until prc(A)\n",
	      "t.sched:1:13: error: unknown event or condition 'prc(...)'; did you mean 'proc'?");
}

/* The deepest schedule the parser accepts, run: an assert at the deepest
 * expression nesting in the costliest shape (evaluated with its short
 * circuits, then walked whole to print its variables when it fails), inside
 * 99 levels of blocks, after a wait whose predicate is as deep. */
Test(size, cctrace_runs_the_deepest_schedule, .fini = h_cleanup, .timeout = 120)
{
	const char *level = "0 || 0 && 1 | 1 ^ 1 & 1 == 1 < 1 << 1 + 1 * (";
	char *deep = text_of("", level, 255, text_of("balance", ")", 255, ""));
	char *pred = text_of("enter(withdraw) || ", level, 255, text_of("exit", ")", 255, ""));
	struct h_result r =
	    run_bank(h_fmt("timeout 10s\nthread A, B = wait 2 distinct %s\n"
			   "%sassert %s\n%srelease all\n",
			   pred, repeat_str("if (1) {\n", 98), deep, repeat_str("}\n", 98)));

	cr_assert_eq(r.code, 1, "stdout:\n%s\nstderr:\n%.2000s", r.out, r.err);
	cr_assert(strstr(r.err, "cctrace: bug: assertion failed at "), "%.2000s", r.err);
	cr_assert(strstr(r.err, ":101:1: assert 0 || (0 && (1 | (1 ^ (1 & (1 == (1 < (1 << (1 + "
				"(1 * (0 || (0 && "),
		  "%.2000s", r.err);
	cr_assert(strstr(r.err, "  balance = 100\n"), "%.2000s", r.err);
	cr_assert_eq(h_count_lines(r.err, "enter(withdraw)"), 2, "%.2000s", r.err);
	h_result_free(&r);
}

/* A function name no identifier spells is written in double quotes, and
 * printed back so; a plain one is printed bare even when quoted. */
Test(names, quoted_function_names)
{
	expr_is("enter(\"worker<long>\")", "enter(\"worker<long>\")");
	expr_is("in(A, \"main::{lambda()#1}::operator()\")",
		"in(A, \"main::{lambda()#1}::operator()\")");
	expr_is("return(\"withdraw\")", "return(withdraw)");
	expr_is("enter(\"operator==\") || exit", "enter(\"operator==\") || exit");
	fails("wait any enter(\"worker<long>)\n", "t.sched:1:16: error: unterminated quoted name");
	fails("wait any enter(\"\")\n", "t.sched:1:16: error: empty quoted name");
}
