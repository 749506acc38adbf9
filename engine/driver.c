/*
 * driver.c: the client that drives a server under test (--driver CMD).
 *
 * CONCURRIT's TestStart/TestEnd: the driver is started once the program is
 * under control and the run ends when it exits, its exit status being the
 * verdict.  It is an ordinary child of cctrace, with the signals the tracer
 * blocks unblocked again; the tracer is told its pid so that reaping it
 * becomes an event rather than a mystery.
 */
#include "engine/internal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t run_start_driver(struct run *r, const char *cmd, bool quiet)
{
	sigset_t none;
	int devnull;
	pid_t pid;

	if (!cmd)
		return 0;
	pid = fork();
	if (pid > 0) {
		tracer_watch_child(r->t, pid);
		r->has_driver = true;
	}
	if (pid != 0)
		return pid;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* A run may end before the driver does (a crash, an infeasible run);
	 * its complaints about the vanished server are noise then. */
	devnull = quiet ? open("/dev/null", O_WRONLY) : -1;
	if (devnull >= 0) {
		dup2(devnull, 1);
		dup2(devnull, 2);
		close(devnull);
	}
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

void run_stop_driver(pid_t pid)
{
	int status;

	if (pid <= 0 || waitpid(pid, &status, WNOHANG) != 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
}
