/*
 * input.c: every run of a search reads the same standard input.
 *
 * A search runs the program hundreds of times, each run (launched, or
 * forked from a template) with cctrace's standard input as its own: the
 * same open file, whose offset the runs share.  The first run would read
 * `cctrace test -- prog < input` to its end, and every later one would
 * find nothing and fail in its own way: a false bug.
 *
 * So, once, before any run: a regular file is rewound to where it stood
 * before each run; anything else that is not a terminal (a pipe, a socket,
 * /dev/null) is read to its end into a memory file that replaces cctrace's
 * standard input, and is rewound the same way.  A terminal is left alone:
 * its runs share it as a person would.  Parallel jobs each open the file
 * again (engine_input_private), for an offset of their own.
 */
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* More would be a stream that never ends (`yes | cctrace test ...`). */
#define INPUT_MAX (1L << 30)

static bool rewinding;
static off_t input_start;

/* Standard input copied to a memory file, which becomes fd 0. */
static int copy_to_memory(char *err, size_t errlen)
{
	char buf[65536];
	long total = 0;
	ssize_t n;
	int fd = memfd_create("cctrace-stdin", MFD_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "cannot keep standard input: memfd_create: %s",
			 strerror(errno));
		return -1;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(fd, buf, (size_t)n) != n) {
			snprintf(err, errlen, "cannot keep standard input: %s", strerror(errno));
			goto fail;
		}
		total += n;
		if (total > INPUT_MAX) {
			snprintf(
			    err, errlen,
			    "standard input is longer than %ld MiB: every run reads it from the "
			    "start, so give it as a file (< FILE), which is not copied",
			    INPUT_MAX >> 20);
			goto fail;
		}
	}
	if (dup2(fd, STDIN_FILENO) < 0) { /* dup2 clears close-on-exec: runs get it */
		snprintf(err, errlen, "cannot keep standard input: %s", strerror(errno));
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

int engine_input_prepare(char *err, size_t errlen)
{
	struct stat st;

	if (rewinding || isatty(STDIN_FILENO) || fstat(STDIN_FILENO, &st) < 0)
		return 0; /* a terminal, or no standard input at all */
	input_start = S_ISREG(st.st_mode) ? lseek(STDIN_FILENO, 0, SEEK_CUR) : -1;
	if (input_start < 0) {
		if (copy_to_memory(err, errlen) < 0)
			return -1;
		input_start = 0;
	}
	rewinding = true;
	return 0;
}

int engine_input_private(void)
{
	int fd;

	if (!rewinding)
		return 0;
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
	if (rewinding)
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
