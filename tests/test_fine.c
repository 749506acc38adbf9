/*
 * test_fine.c: instruction-level events on real traced programs.
 *
 * tests/fixtures/fine runs, in one worker thread, a loop over memory, a
 * recursion, a tail call, a call through the PLT, writes to five
 * variables and a close().  The tests drive that thread with bare
 * read/write, call(F), return(F), syscall(NAME), in(F) and the event
 * fields, and check each event against what the fixture's code does.
 *
 * The stepper decodes ahead and stops only where something can happen;
 * --single-step makes the same events out of one trap per instruction.
 * For every sample and for the fixture, both must report the same events
 * (thread, event text, pc, address, value) in the same order.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define FINE "tests/fixtures/fine"

static struct h_result run_sched(const char *name, const char *text, const char *mode,
				 const char *prog, const char *arg)
{
	const char *argv[] = {h_cctrace(), "run", "--timeout", "5s", h_temp_sched(name, text),
			      "--",	   prog,  arg,	       NULL};
	const char *argv_mode[] = {
	    h_cctrace(), "run", mode, "--timeout", "5s", h_temp_sched(name, text),
	    "--",	 prog,	arg,  NULL};

	return h_run(mode ? argv_mode : argv, 120);
}

/* The n-th event record (0-based) of the JSON trace at path, or fail: the
 * header record comes first (docs/json.md). */
static const char *json_line(const char *path, int n)
{
	char *text = h_read_file(path, NULL), *line = text;
	int i;

	cr_assert_not_null(text, "no JSON trace at %s", path);
	for (i = 0; i < n + 1 && line; i++) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	cr_assert(line && *line, "no line %d in the JSON trace:\n%s", n, text);
	line = h_fmt("%.*s", (int)strcspn(line, "\n"), line);
	free(text);
	return line;
}

/* The value the access of JSON trace line n saw, as "0x..". */
static const char *json_value(const char *path, int n)
{
	char buf[64];

	cr_assert(h_json_field(json_line(path, n), "value", buf, sizeof(buf)), "no value in %s",
		  json_line(path, n));
	return h_fmt("%s", buf);
}

/* The trace line of the n-th event (0-based), or fail. */
static const char *trace_line(const char *err, int n)
{
	const char *line = err;
	int seen = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (h_is_trace_line(line, len) && seen++ == n)
			return h_fmt("%.*s", (int)len, line);
		line = nl ? nl + 1 : NULL;
	}
	cr_assert_fail("no trace line %d in:\n%s", n, err);
	return NULL;
}

Test(fine, bare_read_and_write_interleave_inside_one_statement)
{
	const char *argv[] = {h_cctrace(),	     "run", "samples/stats/lost-hit.sched", "--",
			      "samples/stats/stats", NULL};
	struct h_result r;
	int i;

	for (i = 0; i < 10; i++) {
		r = h_run(argv, 60);
		cr_assert_eq(r.code, 1, "run %d: expected the bug (exit 1):\n%s", i, r.err);
		cr_assert(strstr(r.err, "srv->stats.count = 1"), "run %d:\n%s", i, r.err);
		cr_assert(strstr(r.out, "BUG: 1 hits recorded, 2 expected"), "run %d: %s", i,
			  r.out);
		/* A and B each read 0 and write 1, at the same address. */
		cr_assert(strstr(trace_line(r.err, 2), " read 0x"), "%s", r.err);
		cr_assert(strstr(trace_line(r.err, 3), "= 0 "), "%s", r.err);
		cr_assert(strstr(trace_line(r.err, 4), " write 0x"), "%s", r.err);
		cr_assert(strstr(trace_line(r.err, 5), "= 0x1 "), "%s", r.err);
		h_result_free(&r);
	}
}

Test(fine, stack_accesses_are_left_out_unless_asked_for)
{
	const char *text = "thread A = wait any enter(record_hit)\n"
			   "run A until read || write\n";
	struct h_result r = run_sched("stack.sched", text, NULL, "samples/stats/stats", "1");

	cr_assert_eq(r.code, 0, "%s", r.err);
	/* The first non-stack access of record_hit reads s->stats.count... */
	cr_expect(strstr(trace_line(r.err, 1), "read 0x5555"), "%s", r.err);
	h_result_free(&r);
	r = run_sched("stack.sched", text, "--include-stack", "samples/stats/stats", "1");
	cr_assert_eq(r.code, 0, "%s", r.err);
	/* ...but its first access at all is push rbp, a write to the stack. */
	cr_expect(strstr(trace_line(r.err, 1), "write 0x7ff"), "%s", r.err);
	h_result_free(&r);
}

/* The same in a static executable, which has no .eh_frame_hdr for
 * libunwind: its guessed stack pointers matched no frame, and the
 * outermost return(fact) was never seen. */
static void expect_returns(const char *prog);

Test(fine, return_holds_for_recursion_and_tail_calls)
{
	expect_returns(FINE);
	expect_returns("tests/fixtures/fine-static");
}

static void expect_returns(const char *prog)
{
	struct h_result r = run_sched("ret.sched",
				      "thread A = wait any enter(fact)\n"
				      "repeat 4 {\n"
				      "  run A until return(fact)\n"
				      "  assert in(A, fact)\n"
				      "}\n"
				      "run A until return(fact)\n"
				      "assert !in(A, fact)\n"
				      "run A until enter(tail_caller)\n"
				      "run A until return(tail_caller)\n"
				      "assert !in(A, tail_callee) && where->y == 21\n",
				      NULL, prog, NULL);
	int i;

	cr_assert_eq(r.code, 0, "%s", r.err);
	for (i = 1; i <= 4; i++)
		cr_expect(strstr(trace_line(r.err, i), "return(fact)") &&
			      strstr(trace_line(r.err, i), " fact "),
			  "an inner return is in fact:\n%s", r.err);
	cr_expect(strstr(trace_line(r.err, 5), " worker "), "the outer one in worker:\n%s", r.err);
	/* tail_caller jumped to tail_callee, whose ret returned for both. */
	cr_expect(strstr(trace_line(r.err, 7), "return(tail_caller)") &&
		      strstr(trace_line(r.err, 7), " worker "),
		  "%s", r.err);
	cr_expect(strstr(r.out, "fact=120 tail=42"), "%s", r.out);
	h_result_free(&r);
}

Test(fine, call_events_name_the_callee_direct_or_through_the_plt)
{
	struct h_result r = run_sched("call.sched",
				      "thread A = wait any enter(worker)\n"
				      "run A until call\n"
				      "run A until call(fact)\n"
				      "run A until call(getpid)\n",
				      NULL, FINE, NULL);

	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "call -> mix"), "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 2), "call(fact) -> fact"), "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 3), "call(getpid) -> getpid@plt"), "%s", r.err);
	h_result_free(&r);
}

/* Held at the system call's entry, the descriptor is still open. */
static void expect_held_before_close(const char *mode)
{
	struct h_result r = run_sched("close.sched",
				      "thread A = wait any enter(five)\n"
				      "run A until syscall(close) || call(printf)\n"
				      "run A until syscall\n",
				      mode, FINE, NULL);

	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "syscall(close)"), "%s: %s", mode, r.err);
	/* The next system call is printf's write, after close returned. */
	cr_expect(strstr(trace_line(r.err, 2), "syscall write") ||
		      strstr(trace_line(r.err, 2), "syscall fstat") ||
		      strstr(trace_line(r.err, 2), "syscall newfstatat"),
		  "%s: %s", mode, r.err);
	h_result_free(&r);
}

Test(fine, syscall_events_stop_before_the_call)
{
	struct h_result r = run_sched("sys.sched",
				      "thread A = wait any enter(five)\n"
				      "run A until syscall(close)\n",
				      NULL, FINE, NULL);

	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "syscall(close)"), "%s", r.err);
	h_result_free(&r);
	expect_held_before_close(NULL);
	expect_held_before_close("--single-step");
	/* Parked on the call to close() by the stepper, the next wait on
	 * system call stops must still see close's own entry. */
	r = run_sched("callclose.sched",
		      "thread A = wait any enter(five)\n"
		      "run A until call(close)\n"
		      "run A until syscall(close)\n",
		      NULL, FINE, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 2), "syscall(close)"), "%s", r.err);
	h_result_free(&r);
}

Test(fine, more_variables_than_debug_registers)
{
	char *json = h_fmt("%s.json", h_temp_sched("five.json", ""));
	struct h_result r =
	    run_sched("five.sched",
		      "thread A = wait any enter(five)\n"
		      "repeat 5 {\n"
		      "  run A until write(v1) || write(v2) || write(v3) || write(v4) "
		      "|| write(v5)\n"
		      "}\n"
		      "run A until write(origin)\n",
		      h_fmt("--trace-json=%s", json), FINE, NULL);
	int i;

	cr_assert_eq(r.code, 0, "%s", r.err);
	for (i = 1; i <= 5; i++) {
		cr_expect(strstr(trace_line(r.err, i), h_fmt("write(v%d) ", i)), "event %d:\n%s", i,
			  r.err);
		cr_expect_str_eq(json_value(json, i), h_fmt("0x%d", i), "event %d", i);
	}
	/* origin is 16 bytes: watched by decoding; where->x is inside it. */
	cr_expect(strstr(trace_line(r.err, 6), "write(origin)"), "%s", r.err);
	cr_expect_str_eq(json_value(json, 6), "0x7");
	h_result_free(&r);
}

Test(fine, event_fields_and_in)
{
	struct h_result r = run_sched(
	    "fields.sched",
	    "thread A = wait any enter(worker)\n"
	    "run A until write && addr == &v3 && size == 8 && value == 3 && func == five\n"
	    "run A until write && in(tail_callee)\n",
	    NULL, FINE, NULL);

	cr_assert_eq(r.code, 2, "the second wait cannot happen after five: %s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "= 0x3 ") && strstr(trace_line(r.err, 1), " five "),
		  "%s", r.err);
	cr_expect(strstr(r.err, "unrealizable"), "%s", r.err);
	h_result_free(&r);
	r = run_sched("fields.sched",
		      "thread A = wait any enter(worker)\n"
		      "run A until write && in(tail_callee) && line > 0\n",
		      NULL, FINE, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "= 0x15 ") &&
		      strstr(trace_line(r.err, 1), " tail_callee "),
		  "where->y = 21 in tail_callee: %s", r.err);
	h_result_free(&r);
}

/* --- the stepper against single-stepping ---------------------------- */

/* Cuts line from the first from to the following to (kept). */
static void cut(char *line, const char *from, const char *to)
{
	char *at = strstr(line, from), *end;

	if (at && (end = strstr(at + strlen(from), to)))
		memmove(at, end, strlen(end) + 1);
}

/* One JSON trace line without what differs between two runs: the time,
 * the tid, and the values read and written, which include the tid (the
 * owner pthread_mutex_lock stores) and the stack protector's random canary.
 * What is compared is which instruction made which access where, in what
 * order. */
static void stabilise(char *line)
{
	cut(line, "\"ms\":", "\"thread\"");
	cut(line, "\"tid\":", "\"event\"");
	cut(line, " = 0", "\",\"pc\"");
	cut(line, ",\"value\":", "}");
}

/* The event records after the first skip ones (the waits that bound
 * threads, in whatever order the threads came). */
static char *stable_events(const char *json, int skip)
{
	char *out = h_fmt("%s", ""), line[4096];
	const char *at = json;

	while (at && *at) {
		const char *nl = strchr(at, '\n');
		size_t len = nl ? (size_t)(nl - at) : strlen(at);

		snprintf(line, sizeof(line), "%.*s", (int)len, at);
		at = nl ? nl + 1 : NULL;
		if (!strstr(line, "{\"type\":\"event\",") || skip-- > 0)
			continue;
		stabilise(line);
		out = h_fmt("%s%s\n", out, line);
	}
	return out;
}

static char *events_with(const char *mode, const char *sched, int skip, const char *prog,
			 const char *arg, int *code)
{
	char json[] = "/tmp/cctrace-fine-XXXXXX";
	int fd = mkstemp(json);
	const char *argv[] = {h_cctrace(), "run", "-q", "--timeout", "20s", "--trace-json",
			      json,	   sched, "--", prog,	     arg,   NULL};
	const char *argv_mode[] = {
	    h_cctrace(), "run", mode, "-q", "--timeout", "20s", "--trace-json",
	    json,	 sched, "--", prog, arg,	 NULL};
	struct h_result r;
	char *text, *events;

	cr_assert(fd >= 0);
	close(fd);
	r = h_run(mode ? argv_mode : argv, 240);
	*code = r.code;
	h_result_free(&r);
	text = h_read_file(json, NULL);
	unlink(json);
	events = stable_events(text ? text : "", skip);
	free(text);
	return events;
}

/* bind holds every thread but the walker W in a known place, so that what W
 * reads does not depend on how far the others got. */
static void expect_same_events(const char *bind, int bound, int steps, const char *prog,
			       const char *arg)
{
	char *sched = h_temp_sched(
	    "walk.sched", h_fmt("%s"
				"for i in 0..%d {\n"
				"  if (!ended(W)) {\n"
				"    run W until read || write || call || syscall || exit\n"
				"  }\n"
				"}\n",
				bind, steps));
	int code_decoded, code_stepped;
	char *decoded = events_with(NULL, sched, bound, prog, arg, &code_decoded);
	char *stepped = events_with("--single-step", sched, bound, prog, arg, &code_stepped);

	cr_expect_eq(code_decoded, code_stepped, "%s: outcomes differ", prog);
	cr_expect_gt(h_count_lines(decoded, "\"event\""), 20, "%s: too few events:\n%s", prog,
		     decoded);
	if (strcmp(decoded, stepped) != 0) {
		size_t k = 0, line = 0;

		while (decoded[k] && decoded[k] == stepped[k])
			k++;
		while (k > 0 && decoded[k - 1] != '\n')
			k--;
		for (size_t j = 0; j < k; j++)
			line += decoded[j] == '\n';
		cr_expect_fail("%s: the stepper and single-stepping disagree at event %zu:\n"
			       "decoded:  %.300s\nstepped:  %.300s",
			       prog, line + 1, decoded + k, stepped + k);
	}
}

Test(fine, stepper_equals_single_stepping_on_every_sample, .timeout = 300)
{
	expect_same_events("thread A, B = wait 2 distinct enter(record_hit)\nthread W = p1.t2\n", 2,
			   400, "samples/stats/stats", "3");
	expect_same_events("thread A, B = wait 2 distinct enter(withdraw)\nthread W = p1.t2\n", 2,
			   400, "samples/bank/bank", NULL);
	expect_same_events("thread A, B = wait 2 distinct enter(work)\nthread W = p1.t2\n", 2, 400,
			   "samples/bbuf/bbuf", NULL);
	/* One wait holds both: a wait for the owner after the reader's would
	 * let the owner pass enter(owner) while only enter(reader) is armed.
	 * The reader is created first: p1.t2. */
	expect_same_events("thread R, C = wait 2 distinct enter(reader) || enter(owner)\n"
			   "thread W = p1.t2\n",
			   2, 4000 /* to its end: released early, W races C's close() */,
			   "samples/fdclose/fdclose", NULL);
	expect_same_events("thread A, B, C = wait 3 distinct enter(worker)\nthread W = p1.t2\n", 3,
			   400, "samples/bbuf2/bbuf2", NULL);
	expect_same_events("thread W = wait any enter(worker)\n", 1, 400, FINE, "5");
}

/* read(X)/write(X) on locals, parameters and __thread variables: X's place
 * in the thread the `run` moves, by watchpoint or, past four, by decoding. */
Test(fine, locals_parameters_and_thread_locals)
{
	char *json = h_fmt("%s.json", h_temp_sched("locals.json", "")), addr[64];
	struct h_result r = run_sched("locals.sched",
				      "thread A = wait any enter(worker)\n"
				      "run A until write(f)\n"
				      "assert A.f == 120 && A.tls_count == 0\n"
				      "run A until write(t) && value == 42\n"
				      "run A until write(tls_count) && value == 9\n"
				      "assert A.tls_count == 9\n",
				      NULL, FINE, NULL);

	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "write(f)") &&
		      strstr(trace_line(r.err, 1), " worker "),
		  "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 3), "write(tls_count)") &&
		      strstr(trace_line(r.err, 3), " five "),
		  "%s", r.err);
	h_result_free(&r);
	r = run_sched("locals5.sched",
		      "thread A = wait any enter(worker)\n"
		      "run A until write(f) || write(v1) || write(v2) || write(v3) || write(v4)\n"
		      "run A until write(n) && value == 21\n",
		      h_fmt("--trace-json=%s", json), FINE, NULL);
	cr_assert_eq(r.code, 3, "n is fact's, not in scope in worker: %s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "write(f)"), "%s", r.err);
	cr_expect(h_json_field(json_line(json, 1), "addr", addr, sizeof(addr)) &&
		      strncmp(addr, "0x7ff", 5) == 0 && strcmp(json_value(json, 1), "0x78") == 0,
		  "f = 120, on the stack, found by decoding: %s", json_line(json, 1));
	cr_expect(strstr(r.err, "no variable 'n' in scope at worker"), "%s", r.err);
	h_result_free(&r);
	r = run_sched("localwait.sched", "wait any write(f)\n", NULL, FINE, NULL);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "'f' names a local or thread-local variable"), "%s", r.err);
	h_result_free(&r);
}

/* p is a struct P * in one function and a struct Q * in another, slot an
 * int local and a global array: the check before launch cannot type them,
 * so each is typed where the thread stops.  It had refused A.p->b by the
 * first declaration the DWARF index met ("struct P has no member 'b'"). */
static void expect_typed_where_stopped(const char *prog);

/* ...in gcc's build and in clang's, which has no .debug_aranges: libdw
 * found no compilation unit for any pc, so no local and no line. */
Test(fine, a_name_declared_with_two_types_is_typed_where_the_thread_stops_and_read_on_entry)
{
	expect_typed_where_stopped("tests/fixtures/localtypes");
	expect_typed_where_stopped("tests/fixtures/localtypes-clang");
}

static void expect_typed_where_stopped(const char *prog)
{
	struct h_result r = run_sched("q.sched",
				      "thread A = wait any enter(move_q)\n"
				      "run A until write(sink)\n"
				      "assert A.p->b == 6 && A.slot[3] == 4 && *slot == 1\n"
				      "run A until enter(move_p)\n"
				      "run A until write(sink)\n"
				      "assert A.p->x == 42 && A.slot == 42\n",
				      NULL, prog, NULL);

	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, " move_q ") && strstr(r.err, "localtypes.c:"), "no line:\n%s",
		  r.err);
	h_result_free(&r);
	/* On the first instruction, before the prologue stores them: read
	 * from their argument registers, not from their empty slots. */
	r = run_sched("entry.sched",
		      "thread A = wait any enter(move_q)\n"
		      "assert A.p->a == 5 && A.p->b == 0\n"
		      "run A until enter(mix)\n"
		      "assert A.k == -3 && A.out == &mixed && A.b.c == 30\n"
		      "run A until enter(spill)\n"
		      "assert A.a == 1 && A.e == 5 && A.g7 == 7 && A.g8 == 113 && A.g9 == -10\n",
		      NULL, prog, NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	r = run_sched("qtypo.sched",
		      "thread A = wait any enter(move_q)\n"
		      "run A until write(sink)\n"
		      "assert A.p->x == 6\n",
		      NULL, prog, NULL);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "qtypo.sched:3:8: struct Q has no member 'x'"), "%s", r.err);
	cr_expect(strstr(r.err, "write(sink)"), "refused only where A stopped:\n%s", r.err);
	h_result_free(&r);
	/* A local of one type is still checked before launch. */
	r = run_sched("qcheck.sched",
		      "thread A = wait any enter(worker)\n"
		      "run A until write(sink)\n"
		      "assert A.qv.c == 6\n",
		      NULL, prog, NULL);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "struct Q has no member 'c'") && !strstr(r.err, "enter(worker)"),
		  "%s", r.err);
	h_result_free(&r);
}

/* Bitfields are their bits (DWARF 5's data_bit_offset), an enum with a
 * negative enumerator is signed and an unsigned one's enumerator past
 * INT_MAX is not, and write(X)'s value is read as X is, a bitfield's as its
 * bits: each was read as raw or sign-extended bytes ("bits.b = 1585613"). */
Test(fine, bitfields_signed_enums_and_narrow_values_read_as_c_does)
{
	const char *text = "thread A = wait any enter(writer)\n"
			   "assert bits.a == 5 && bits.b == -7 && bits.c == 1 && bits.d == -1000\n"
			   "assert bits.wide == 0x12345678AB && bits.tail == 77\n"
			   "assert tint == COOL && tint < 0 && flag == HIGH_FLAG && HIGH_FLAG > 0\n"
			   "run A until write(narrow_int) && value == -1\n"
			   "run A until write(narrow_short) && value == -1\n"
			   "run A until write(narrow_char) && value == -2\n"
			   "run A until write(bits.b) && value == -16\n"
			   "assert bits.b == -16 && bits.a == 5 && bits.d == -1000\n";
	struct h_result r = run_sched("ctypes.sched", text, NULL, "tests/fixtures/ctypes", NULL);

	cr_expect_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	/* cur.b's value, of the 8-byte store that copies cur whole: its bytes
	 * (the decoding stepper gave the whole store's 0x100000001) */
	r = run_sched("copy.sched",
		      "thread W = wait any enter(writer)\n"
		      "run W until write(cur.b) && value == 1\n",
		      NULL, "tests/fixtures/sercopy", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
	/* a bitfield has no address of its own */
	r = run_sched("ctypes2.sched", "assert &bits.b != 0\n", NULL, "tests/fixtures/ctypes",
		      NULL);
	cr_expect_eq(r.code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "'&' of a bitfield"), "%s", r.err);
	h_result_free(&r);
}

/* Stores of unusual shapes, under debug registers and the stepper alike
 * (the sw pass runs this too): each is reported as the watched variable's
 * part of it.  The registers missed a rep stos in the middle of its run,
 * and named a slot's address for an instruction resumed from a
 * breakpoint; the stepper gave the whole store's address, size and
 * bytes, missed maskmovdqu's store through rdi and fxsave's past its
 * first 8 bytes, and took bts's write to bits[1] for one to bits[0]. */
Test(fine, unusual_stores_are_the_watched_variables_part)
{
	const char *text =
	    "thread A = wait any enter(stores)\n"
	    "run A until write(buf[20]) && addr == &buf[20] && size == 1 && value == 0x43\n"
	    "run A until write(d4[1]) && addr == &d4[1] && size == 4 && value == 0x21212121\n"
	    "run A until write(area[100]) && addr == &area[100] && size == 1\n"
	    "run A until write(bits[1]) && addr == &bits[1] && value == 0x40\n"
	    "run A until write(quad.d) && addr == &quad.d && size == 4 && value == 4\n"
	    "run A until return(stores)\n";
	struct h_result r = run_sched("stores.sched", text, NULL, "tests/fixtures/stores", NULL);

	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.err, "write(buf[20])") && strstr(r.err, "stores.c:"), "%s", r.err);
	h_result_free(&r);
	/* the bts writes bits[1] alone: the first write of the two is quad's */
	r = run_sched("bts.sched",
		      "thread A = wait any enter(stores)\n"
		      "run A until write(bits[0]) || write(quad.d)\n"
		      "assert quad.d == 4\n",
		      NULL, "tests/fixtures/stores", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	h_result_free(&r);
}

/* ChooseThread at every load and store: explore finds the lost hit
 * without being told the interleaving, and its schedule replays it. */
Test(fine, explore_finds_the_lost_hit_at_instruction_level, .timeout = 240)
{
	char dir[] = "/tmp/cctrace-fine-XXXXXX";
	const char *argv[] = {h_cctrace(),
			      "explore",
			      "samples/stats/lost-hit.search",
			      "--fail-on-exit",
			      "--strategy",
			      "dfs",
			      "--out",
			      dir,
			      "--",
			      "samples/stats/stats",
			      NULL};
	struct h_result r;
	char *text;
	int i;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 200);
	cr_assert_eq(r.code, 1, "explore did not find the bug:\n%s", r.err);
	h_result_free(&r);
	/* Minimised to A's load and B's load: dropping B's would leave B free
	 * to load after A's store, which the serial-end replays rule out. */
	text = h_read_file(h_fmt("%s/bug-1.sched", dir), NULL);
	cr_assert_not_null(text);
	cr_expect_eq(h_count_lines(text, " until "), 2, "%s", text);
	free(text);
	for (i = 0; i < 10; i++) {
		const char *replay[] = {h_cctrace(),
					"run",
					"-q",
					"--fail-on-exit",
					"--expect",
					"bug",
					h_fmt("%s/bug-1.sched", dir),
					"--",
					"samples/stats/stats",
					NULL};

		r = h_run(replay, 30);
		cr_expect_eq(r.code, 0, "replay %d: %s", i, r.err);
		cr_expect(strstr(r.out, "BUG: 1 hits recorded"), "replay %d: %s", i, r.out);
		h_result_free(&r);
	}
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

/* Held at a breakpoint on a line that starts with a call, `next` must see
 * the call under the int3 and run over it, not step into mix(). */
Test(fine, next_over_a_call_under_a_breakpoint)
{
	struct h_result r = run_sched("nextcall.sched",
				      "thread A = wait any at(fine.c:71)\n"
				      "next A\n",
				      NULL, FINE, NULL);

	cr_assert_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 0), "fine.c:71"), "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), " worker ") &&
		      strstr(trace_line(r.err, 1), "fine.c:72"),
		  "next stepped into the call: %s", r.err);
	h_result_free(&r);
}

/* A system call's arg4 is the kernel's fourth argument (r10), not a
 * function call's (rcx): pread's offset. */
Test(fine, syscall_arg4_is_the_kernels_fourth)
{
	struct h_result r = run_sched("arg4.sched",
				      "thread A = wait any enter(go)\n"
				      "run A until syscall(pread64) && arg4 == 4242\n",
				      NULL, "tests/fixtures/sysargs", NULL);

	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(trace_line(r.err, 1), "syscall(pread64)"), "%s", r.err);
	h_result_free(&r);
}
