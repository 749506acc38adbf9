/*
 * text.c: a file's whole text, as the search reads its own files back
 * (a worker's bug-N.txt, a profile's log, a typestate model file).  One
 * reader, where typestate.c, tsmodel.c and jobs.c each had their own.
 */
#include "search/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
