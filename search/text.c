/*
 * text.c: the search's own files: a file's whole text, as the search reads
 * them back (a worker's bug-N.txt, a profile's log, a typestate model
 * file), and the output directory they go in.  One reader, where
 * typestate.c, tsmodel.c and jobs.c each had their own.
 */
#include "search/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *search_read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &len, '\0', f) < 0) {
		free(text);
		text = strdup("");
	}
	fclose(f);
	return text;
}

/* mkdir -p: `--out results/today` in a fresh tree is made whole, as the
 * bug files' place, not refused for want of results/. */
int search_make_dir(const char *path, char *err, size_t errlen)
{
	char *copy, *slash;
	int rc = 0;

	if (!*path) {
		snprintf(err, errlen, "cannot create an output directory with no name");
		return -1;
	}
	copy = strdup(path);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* each parent in turn, cut at its slash; the one that fails is named */
	for (slash = strchr(copy + 1, '/'); slash && rc == 0; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		if (mkdir(copy, 0777) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", copy, strerror(errno));
			rc = -1;
		}
		*slash = '/';
	}
	if (rc == 0 && mkdir(copy, 0777) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", copy, strerror(errno));
		rc = -1;
	}
	free(copy);
	return rc;
}
