/*
 * stderr.c: the program's standard error, read for a sanitizer's report.
 *
 * Why.  AddressSanitizer, ThreadSanitizer and UndefinedBehaviorSanitizer
 * report on the program's stderr, and UBSan (and TSan, by default) lets
 * the program go on and exit 0: a bug that only its text shows.  With
 * engine_options.sanitizer_bugs the launched program's stderr is an
 * unlinked temporary file instead of cctrace's (a file, not a pipe: a pipe
 * nobody reads while the threads are held would fill and block the
 * program, which serialized execution would take for a deadlock).  When
 * the program has ended the file is searched for a report, then copied to
 * cctrace's stderr, so the user sees what the program said, in one piece.
 *
 * LeakSanitizer cannot work under ptrace: at the program's exit it stops
 * the threads with ptrace itself, fails ("LeakSanitizer has encountered a
 * fatal error ... does not work under ptrace") and makes the program exit
 * 1, which a search took for a bug in its first run of any program built
 * with -fsanitize=address.  So the leak check of a program cctrace
 * launches is off (detect_leaks=0 added to $ASAN_OPTIONS and
 * $LSAN_OPTIONS), unless the user's options name it.
 */
#include "engine/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of each report the sanitizers print. */
static const char *const markers[] = {
    "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",	 "WARNING: ThreadSanitizer",
    "ERROR: ThreadSanitizer",  "ERROR: MemorySanitizer", "runtime error:",
};

static void leak_check_off(const char *var)
{
	const char *old = getenv(var);
	char *both = NULL;

	if (!old || !*old) {
		setenv(var, "detect_leaks=0", 1);
		return;
	}
	if (strstr(old, "detect_leaks"))
		return; /* the user's say */
	if (asprintf(&both, "%s:detect_leaks=0", old) >= 0)
		setenv(var, both, 1);
	free(both);
}

int launch_traced(struct tracer *t, char *const argv[], char *err, size_t errlen)
{
	static bool env_set;

	if (!env_set) {
		env_set = true;
		leak_check_off("ASAN_OPTIONS");
		leak_check_off("LSAN_OPTIONS");
	}
	return tracer_launch(t, argv, err, errlen);
}

int stderr_capture_begin(int *saved)
{
	FILE *f = tmpfile();
	int fd;

	*saved = -1;
	if (!f)
		return -1;
	fd = dup(fileno(f));
	fclose(f);
	if (fd < 0)
		return -1;
	fflush(stderr);
	*saved = dup(STDERR_FILENO);
	if (*saved < 0 || dup2(fd, STDERR_FILENO) < 0) {
		close(fd);
		if (*saved >= 0)
			close(*saved);
		*saved = -1;
		return -1;
	}
	return fd;
}

void stderr_capture_end(int saved)
{
	if (saved < 0)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
}

/* The whole file, NUL-terminated (malloc'd), or NULL. */
static char *slurp(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *text;
	ssize_t got;

	if (size < 0 || !(text = malloc((size_t)size + 1)))
		return NULL;
	got = pread(fd, text, (size_t)size, 0);
	text[got > 0 ? got : 0] = '\0';
	return text;
}

bool stderr_sanitizer_report(int fd, char *line, size_t len)
{
	char *text = fd >= 0 ? slurp(fd) : NULL, *at = NULL;
	size_t i;

	for (i = 0; text && i < sizeof(markers) / sizeof(markers[0]); i++) {
		char *hit = strstr(text, markers[i]);

		if (hit && (!at || hit < at))
			at = hit;
	}
	if (at) {
		while (at > text && at[-1] != '\n')
			at--;
		snprintf(line, len, "%.*s", (int)strcspn(at, "\n"), at);
	}
	free(text);
	return at != NULL;
}

void stderr_forward(int fd)
{
	char *text;

	if (fd < 0)
		return;
	text = slurp(fd);
	if (text)
		fputs(text, stderr);
	free(text);
	close(fd);
}

char *stderr_tail(int fd, size_t max)
{
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	off_t from = size > (off_t)max ? size - (off_t)max : 0;
	char *text, *start;
	ssize_t got;

	/* the end alone: a search reads it after every run */
	if (size <= 0 || !(text = malloc((size_t)(size - from) + 1)))
		return NULL;
	got = pread(fd, text, (size_t)(size - from), from);
	text[got > 0 ? got : 0] = '\0';
	start = text;
	/* cut inside a line: from the next one (one byte before says) */
	if (from > 0) {
		char before = 0;

		if (pread(fd, &before, 1, from - 1) == 1 && before != '\n') {
			char *nl = strchr(text, '\n');

			start = nl && nl[1] ? nl + 1 : text;
		}
	}
	if (start != text)
		memmove(text, start, strlen(start) + 1);
	if (!*text) {
		free(text);
		return NULL;
	}
	return text;
}
