/*
 * System tests against the unmodified, stripped Debian memcached
 * (/usr/bin/memcached, 8 worker threads, libevent).
 *
 * cctrace attaches to the running server and controls its workers through
 * breakpoints on the libevent and libc functions they call (event_add for a
 * new connection, sendmsg for a reply): the worker serving client A is held
 * at its reply until client B's reply has gone,
 * and the clients must see B's reply first.  Then cctrace detaches and the
 * server serves as before.  Under a steady load from another process
 * (tests/fixtures/mcload), 20 attach/schedule/detach cycles in a row must
 * cost the load not a single failed request.  Killing the server or a
 * client in the middle of a schedule must end cctrace cleanly with a clear
 * report, and in the second case leave the server serving.
 */
#include "memcached.h"

TestSuite(memcached, .fini = h_cleanup, .timeout = 90);

/*
 * A is the worker that takes client A's new connection: the first thread
 * to call read() once the breakpoints are in (a worker reads the
 * notification the dispatcher sends it, then the request; nothing else in
 * memcached reads, once the closes of earlier connections are served).
 * It registers the connection with libevent (event_add) and its reply
 * then waits until B's has gone.  A used to be
 * bound by event_add itself, which the main thread also calls, every
 * second, to re-arm its clock timer: when that tick came between the
 * breakpoints going in and client A's connection (a wide window on a
 * loaded machine, the more so as a tick that fell due while the attach
 * held every thread fires as soon as they run), A was the main thread,
 * which never calls sendmsg, and the test waited for its 10 s timeout.
 */
static const char order_sched[] = "timeout 10s\n"
				  "thread A = wait any enter(read)\n"
				  "run A until enter(event_add)\n"
				  "run A until enter(sendmsg)\n"
				  "thread B = wait any enter(sendmsg)\n"
				  "run B until return(sendmsg)\n"
				  "release all\n";

/*
 * The reply on fd (it must be want) and when the kernel received it
 * (SO_TIMESTAMPNS, set before the request was sent), in ns.  Comparing
 * these stamps gives the order in which the replies reached the clients,
 * however late the test reads them.
 */
static int64_t reply_stamp(int fd, const char *want)
{
	char buf[256], ctl[CMSG_SPACE(sizeof(struct timespec))];
	struct iovec iov = {buf, sizeof(buf) - 1};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	struct pollfd pfd = {fd, POLLIN, 0};
	struct cmsghdr *cm;
	ssize_t n;

	cr_assert_eq(poll(&pfd, 1, 10000), 1, "no reply (expected %s)", want);
	n = recvmsg(fd, &msg, 0);
	cr_assert(n > 0);
	buf[n] = 0;
	cr_assert(strncmp(buf, want, strlen(want)) == 0, "got %s, expected %s", buf, want);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		}
	cr_assert_fail("no receive timestamp");
	return 0;
}

static int stamped_dial(int port)
{
	int fd = mc_dial(port), one = 1;

	cr_assert(fd >= 0);
	cr_assert(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) == 0);
	return fd;
}

Test(memcached, reply_of_A_held_until_B_replied_then_detach_and_serve)
{
	char *sched = h_temp_sched("order.sched", order_sched);
	struct mc m;
	uint64_t bp;
	int round;

	mc_start(&m, MC_DEBIAN, 8);
	bp = h_symbol_addr(m.proc.pid, "libc.so", "read");
	for (round = 0; round < 3; round++) {
		struct h_proc cc;
		char *log = NULL, *rest;
		int64_t t_a, t_b;
		int a, b, code;

		/* A worker reading the end of an earlier connection would be A. */
		mc_wait_closes_served(m.port, 30000);
		cc = mc_attach(m.proc.pid, sched, false);
		h_wait_int3(m.proc.pid, bp, &cc, 30000);
		a = stamped_dial(m.port);
		mc_send(a, "get nosuchkey\r\n");
		/* B connects only once A's worker is held at its reply. */
		cr_assert(mc_await_line(cc.err, "enter(sendmsg)", &log, 10000),
			  "A's worker never reached sendmsg:\n%s", log);
		b = stamped_dial(m.port);
		mc_send(b, "version\r\n");
		rest = h_read_all(cc.err, 20);
		code = h_wait(cc.pid, 20, NULL);
		t_b = reply_stamp(b, "VERSION ");
		t_a = reply_stamp(a, "END\r\n");
		cr_expect_lt(t_b, t_a, "round %d: A's reply came %lld ns before B's:\n%s%s", round,
			     (long long)(t_b - t_a), log, rest);
		cr_expect_eq(code, 0, "round %d: cctrace exited %d:\n%s%s", round, code, log, rest);
		cr_expect(strstr(rest, "cctrace: completed:"), "%s%s", log, rest);
		cr_expect_eq(h_count_lines(h_fmt("%s%s", log, rest), "enter(sendmsg)"), 2, "%s%s",
			     log, rest);
		cr_expect_eq(h_count_lines(log, "enter(read)"), 1, "%s", log);
		cr_expect_eq(h_count_lines(log, "enter(event_add)"), 1, "%s", log);
		cr_expect_eq(h_count_lines(log, " p1.t1 "), 0, "the main thread was bound:\n%s",
			     log);
		h_free(rest);
		close(a);
		close(b);
		close(cc.err);
		mc_expect_untraced(m.proc.pid, "after the detach");
		mc_expect_serves(m.port, 200, "after the detach");
	}
	mc_stop(&m);
}

/* Starts mcload on the server with conns connections; returns once every
 * connection has had a reply. */
static struct h_proc start_load(int port, int conns)
{
	const char *argv[] = {MC_LOAD, h_fmt("%d", port), h_fmt("%d", conns), NULL};
	struct h_proc load;
	char line[64];

	cr_assert(access(MC_LOAD, X_OK) == 0, MC_LOAD " is not built (make fixtures)");
	load = h_spawn(argv, true, true, false);
	cr_assert(h_read_line(load.out, line, sizeof(line), 15000) && strcmp(line, "ready") == 0,
		  "mcload did not start");
	return load;
}

/* Ends mcload; returns its failed requests, *requests the total. */
static long stop_load(struct h_proc *load, long *requests)
{
	long failed = -1;
	char *out;

	close(load->in);
	load->in = -1;
	out = h_read_all(load->out, 20);
	cr_assert_eq(h_wait(load->pid, 20, NULL), 0, "mcload failed:\n%s", out);
	cr_assert(sscanf(out, "requests %ld failed %ld", requests, &failed) == 2, "mcload said %s",
		  out);
	h_free(out);
	close(load->out);
	return failed;
}

Test(memcached, twenty_attach_detach_cycles_under_load_lose_no_request)
{
	char *sched = h_temp_sched("load.sched", "timeout 5s\n"
						 "thread A, B = wait 2 distinct enter(sendmsg)\n"
						 "run A until return(sendmsg)\n"
						 "run B until return(sendmsg)\n"
						 "run A until enter(sendmsg)\n"
						 "release all\n");
	struct h_proc load;
	struct mc m;
	long requests = 0, failed;
	int i;

	mc_start(&m, MC_DEBIAN, 8);
	load = start_load(m.port, 4);
	for (i = 0; i < 20; i++) {
		struct h_result r =
		    H_RUN(h_cctrace(), "attach", "-q", h_fmt("%d", (int)m.proc.pid), sched);

		cr_assert_eq(r.code, 0, "cycle %d: cctrace attach exited %d:\n%s", i, r.code,
			     r.err);
		cr_assert(strstr(r.err, "cctrace: completed:"), "cycle %d:\n%s", i, r.err);
		h_result_free(&r);
	}
	mc_expect_untraced(m.proc.pid, "after 20 cycles");
	failed = stop_load(&load, &requests);
	cr_expect_eq(failed, 0, "the load generator saw %ld failed requests of %ld", failed,
		     requests);
	cr_expect_gt(requests, 1000, "only %ld requests ran under load", requests);
	mc_expect_serves(m.port, 100, "after the load");
	mc_stop(&m);
}

/* The server is killed while the schedule waits for a second thread, and
 * while it runs the first one towards its next reply.  In the second case
 * the report names the thread ("p1.t3 was killed by KILL before reaching")
 * or the program, whichever end cctrace sees first. */
Test(memcached, server_killed_in_the_middle_of_a_schedule)
{
	static const char *const scheds[] = {"timeout 20s\n"
					     "thread A = wait any enter(sendmsg)\n"
					     "thread B = wait any enter(sendmsg)\n"
					     "release all\n",
					     "timeout 20s\n"
					     "thread A = wait any enter(sendmsg)\n"
					     "run A until enter(sendmsg)\n"
					     "release all\n"};
	size_t k;

	for (k = 0; k < sizeof(scheds) / sizeof(scheds[0]); k++) {
		struct h_proc cc;
		struct mc m;
		char *log = NULL, *rest;
		int a, code;

		mc_start(&m, MC_DEBIAN, 8);
		cc = mc_attach(m.proc.pid, h_temp_sched("kill.sched", scheds[k]), false);
		h_wait_int3(m.proc.pid, h_symbol_addr(m.proc.pid, "libc.so", "sendmsg"), &cc,
			    30000);
		a = mc_dial(m.port);
		cr_assert(a >= 0);
		mc_send(a, "version\r\n");
		cr_assert(mc_await_line(cc.err, "enter(sendmsg)", &log, 10000), "%s", log);
		kill(m.proc.pid, SIGKILL);
		rest = h_read_all(cc.err, 20);
		code = h_wait(cc.pid, 20, NULL);
		cr_expect_eq(code, 2, "case %zu: cctrace exited %d:\n%s%s", k, code, log, rest);
		cr_expect(strstr(rest, "cctrace: unrealizable: ") &&
			      strstr(rest, " was killed by KILL ") &&
			      strstr(rest, "kill.sched:3:1"),
			  "case %zu:\n%s%s", k, log, rest);
		cr_expect_eq(h_wait(m.proc.pid, 10, NULL), 128 + SIGKILL);
		h_free(rest);
		close(a);
		close(cc.err);
	}
}

Test(memcached, client_killed_in_the_middle_of_a_schedule)
{
	char *sched = h_temp_sched("client.sched", "timeout 2s\n"
						   "thread A = wait any enter(sendmsg)\n"
						   "thread B = wait any enter(sendmsg)\n"
						   "release all\n");
	struct h_proc cc, client;
	struct mc m;
	char *log = NULL, *rest;
	int code;

	mc_start(&m, MC_DEBIAN, 8);
	cc = mc_attach(m.proc.pid, sched, false);
	h_wait_int3(m.proc.pid, h_symbol_addr(m.proc.pid, "libc.so", "sendmsg"), &cc, 30000);
	{
		/* A client process whose reply is held, killed while it waits. */
		const char *argv[] = {MC_LOAD, h_fmt("%d", m.port), "1", NULL};

		client = h_spawn(argv, true, true, false);
	}
	cr_assert(mc_await_line(cc.err, "enter(sendmsg)", &log, 10000), "%s", log);
	kill(client.pid, SIGKILL);
	cr_expect_eq(h_wait(client.pid, 10, NULL), 128 + SIGKILL);
	rest = h_read_all(cc.err, 20);
	code = h_wait(cc.pid, 20, NULL);
	cr_expect_eq(code, 2, "cctrace exited %d:\n%s%s", code, log, rest);
	cr_expect(strstr(rest, "cctrace: unrealizable:") && strstr(rest, "within 2000 ms") &&
		      strstr(rest, "where the threads were") && strstr(rest, "client.sched:3:"),
		  "no clear timeout report:\n%s%s", log, rest);
	h_free(rest);
	close(cc.err);
	close(client.out);
	mc_expect_untraced(m.proc.pid, "after the timeout");
	mc_expect_serves(m.port, 100, "after the killed client");
	mc_stop(&m);
}

/*
 * Regression: a worker back in epoll_wait waits for its client, not for a
 * thread cctrace holds.  The blocked-thread detection used to call it a
 * deadlock (a bug, exit 1) within milliseconds, ending every schedule
 * whose next request had not arrived yet.  Now a late request is simply
 * served, and with no request the statement ends at its timeout.
 */
Test(memcached, a_worker_idle_in_epoll_wait_is_waiting_not_deadlocked)
{
	static const char *const scheds[] = {"timeout 10s\n"
					     "thread A = wait any enter(sendmsg)\n"
					     "run A until enter(sendmsg)\n"
					     "release all\n",
					     "timeout 10s\n"
					     "thread A = wait any enter(sendmsg)\n"
					     "timeout 500ms\n"
					     "run A until enter(sendmsg)\n"
					     "release all\n"};
	struct mc m;
	uint64_t bp;
	int late;

	mc_start(&m, MC_DEBIAN, 8);
	bp = h_symbol_addr(m.proc.pid, "libc.so", "sendmsg");
	for (late = 1; late >= 0; late--) {
		struct h_proc cc =
		    mc_attach(m.proc.pid, h_temp_sched("idle.sched", scheds[!late]), false);
		char *log = NULL, *rest, *reply;
		int a, code;

		h_wait_int3(m.proc.pid, bp, &cc, 30000);
		a = mc_dial(m.port);
		cr_assert(a >= 0);
		mc_send(a, "version\r\n");
		cr_assert(mc_await_line(cc.err, "enter(sendmsg)", &log, 10000), "%s", log);
		reply = mc_recv_until(a, "\r\n", 10000);
		cr_assert(reply && strncmp(reply, "VERSION ", 8) == 0, "%s", log);
		if (late) /* the worker is back in epoll_wait, or soon will be */
			mc_send(a, "version\r\n");
		rest = h_read_all(cc.err, 20);
		code = h_wait(cc.pid, 20, NULL);
		cr_expect(!strstr(rest, "deadlock"), "%s%s", log, rest);
		if (late) {
			cr_expect_eq(code, 0, "%s%s", log, rest);
			cr_expect(mc_recv_until(a, "\r\n", 10000), "no reply to the late request");
		} else {
			cr_expect_eq(code, 2, "%s%s", log, rest);
			cr_expect(strstr(rest, "cctrace: unrealizable:") &&
				      strstr(rest, "within 500 ms"),
				  "%s%s", log, rest);
		}
		h_free(rest);
		close(a);
		close(cc.err);
		mc_expect_untraced(m.proc.pid, "after the schedule");
	}
	mc_expect_serves(m.port, 100, "after the schedules");
	mc_stop(&m);
}
