/*
 * input.c: every run of a search reads the same standard input.
 *
 * A search runs the program hundreds of times, each run (launched, or
 * forked from a template) with cctrace's standard input as its own: the
 * same open file, whose offset the runs share.  The first run would read
 * `cctrace test -- prog < input` to its end, and every later one would
 * find nothing and fail in its own way: a false bug.
 *
 * So, once, before any run:
 *   - a regular file is rewound before each run to where it stood;
 *   - a pipe or socket is replaced, as cctrace's standard input, by a
 *     memory file that holds what the pipe has given so far, rewound the
 *     same way.  The pipe is read only as far as it can be without
 *     waiting (poll), before each run: cctrace may be started by a tool
 *     that keeps a pipe open and never writes to it (a test runner, a CI
 *     agent), and must not wait for it.  A pipe whose writer is still
 *     writing when a run starts gives that run what it wrote so far;
 *   - anything else (a terminal, /dev/null) is left alone: its runs share
 *     it as they would without cctrace.
 * Parallel jobs each open the memory file or the regular file again
 * (engine_input_private), for an offset of their own; the pipe is read by
 * the search's first process alone, before the jobs start.
 */
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* More would be a stream that never ends (`yes | cctrace test ...`). */
#define INPUT_MAX (1L << 30)

static bool rewinding;	  /* standard input is rewound before each run */
static off_t input_start; /* to here */
static int pipe_fd = -1;  /* the pipe it came from, until its end */
static off_t kept;	  /* bytes of the pipe in the memory file */

/* What the pipe has for us without waiting, appended to the memory file
 * (standard input).  -1 when it is longer than INPUT_MAX. */
static int drain_pipe(void)
{
	struct pollfd pfd = {.fd = pipe_fd, .events = POLLIN};
	char buf[65536];
	ssize_t n;

	while (pipe_fd >= 0 && poll(&pfd, 1, 0) > 0) {
		n = read(pipe_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* its end (or an error, which ends it too) */
			close(pipe_fd);
			pipe_fd = -1;
			break;
		}
		if (kept + n > INPUT_MAX || pwrite(STDIN_FILENO, buf, (size_t)n, kept) != n) {
			close(pipe_fd);
			pipe_fd = -1;
			return -1;
		}
		kept += n;
	}
	return 0;
}

/* Standard input, a pipe, becomes a memory file fed from it. */
static int keep_pipe(char *err, size_t errlen)
{
	int memfd = memfd_create("cctrace-stdin", MFD_CLOEXEC);

	if (memfd < 0) {
		snprintf(err, errlen, "cannot keep standard input: memfd_create: %s",
			 strerror(errno));
		return -1;
	}
	pipe_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	/* dup2 clears close-on-exec: the runs get it as their fd 0 */
	if (pipe_fd < 0 || dup2(memfd, STDIN_FILENO) < 0) {
		snprintf(err, errlen, "cannot keep standard input: %s", strerror(errno));
		if (pipe_fd >= 0)
			close(pipe_fd);
		pipe_fd = -1;
		close(memfd);
		return -1;
	}
	close(memfd);
	if (drain_pipe() < 0) {
		snprintf(
		    err, errlen,
		    "standard input is longer than %ld MiB: every run reads it from the start, "
		    "so give it as a file (< FILE), which is not copied",
		    INPUT_MAX >> 20);
		return -1;
	}
	return 0;
}

int engine_input_prepare(char *err, size_t errlen)
{
	struct stat st;

	if (rewinding || fstat(STDIN_FILENO, &st) < 0)
		return 0; /* kept already, or no standard input at all */
	if (S_ISREG(st.st_mode)) {
		input_start = lseek(STDIN_FILENO, 0, SEEK_CUR);
		rewinding = input_start >= 0;
		return 0;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return 0;
	if (keep_pipe(err, errlen) < 0)
		return -1;
	input_start = 0;
	rewinding = true;
	return 0;
}

int engine_input_private(void)
{
	int fd;

	if (!rewinding)
		return 0;
	if (pipe_fd >= 0) { /* the first process reads the pipe, for all */
		close(pipe_fd);
		pipe_fd = -1;
	}
	fd = open("/proc/self/fd/0", O_RDONLY);
	if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

void engine_input_rewind(void)
{
	if (!rewinding)
		return;
	if (drain_pipe() < 0)
		fprintf(stderr,
			"cctrace: standard input is longer than %ld MiB: the runs read its "
			"first %ld MiB\n",
			INPUT_MAX >> 20, INPUT_MAX >> 20);
	(void)lseek(STDIN_FILENO, input_start, SEEK_SET);
}

bool engine_input_kept(void)
{
	return rewinding;
}

int engine_input_save(const char *path)
{
	char buf[65536];
	ssize_t n;
	off_t at = input_start;
	int out, rc = 0;

	if (!rewinding)
		return 0;
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -1;
	while ((n = pread(STDIN_FILENO, buf, sizeof(buf), at)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
		at += n;
	}
	if (n < 0)
		rc = -1;
	return close(out) < 0 ? -1 : rc;
}
