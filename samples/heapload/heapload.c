/*
 * heapload: a heap block freed while another thread still reads it with a
 * plain load: no call takes the block, so only the memory model's `deref`
 * (the stepper's loads and stores) sees the use.  In the style of
 * 2ndStrike's Mozilla-ptr bug.
 *
 * main fills a table and hands it to a summing thread.  The thread sums the
 * values, says it is done (a flag under a global mutex), and then reads the
 * table's `verbose` field once more.  main polls the flag every millisecond,
 * frees the table as soon as the sum is done, and only then joins: nothing
 * orders the thread's last load before the free.  Normally the thread gets
 * there first, so a plain run prints "ok"; when the free wins, the load reads
 * freed memory, which (the field being past the allocator's free-list words)
 * still holds its old value: nothing visible happens, which is why the
 * model's own check is the evidence.  With --fixed main joins first: the
 * correctly synchronised control.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NVALUES 64

struct table {
	int n;
	int values[NVALUES];
	int verbose; /* past the first 16 bytes, which free() overwrites */
};

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static bool done;
static long total;

static void *summer(void *arg)
{
	struct table *t = arg;
	long sum = 0;
	int i;

	for (i = 0; i < t->n; i++)
		sum += t->values[i];
	pthread_mutex_lock(&done_lock);
	total = sum;
	done = true;
	pthread_mutex_unlock(&done_lock);
	if (t->verbose) /* BUG: main may have freed the table already */
		printf("summed %d values\n", NVALUES);
	return NULL;
}

static bool summed(void)
{
	bool d;

	pthread_mutex_lock(&done_lock);
	d = done;
	pthread_mutex_unlock(&done_lock);
	return d;
}

int main(int argc, char **argv)
{
	bool fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	struct timespec tick = {0, 1000 * 1000};
	struct table *t = malloc(sizeof(*t));
	pthread_t th;
	int i;

	if (!t)
		return 1;
	t->n = NVALUES;
	t->verbose = 0;
	for (i = 0; i < NVALUES; i++)
		t->values[i] = i;
	if (pthread_create(&th, NULL, summer, t) != 0)
		return 1;
	if (fixed)
		pthread_join(th, NULL);
	while (!summed())
		nanosleep(&tick, NULL);
	free(t);
	if (!fixed)
		pthread_join(th, NULL);
	printf("ok: sum %ld\n", total);
	return 0;
}
