/*
 * lockdestroy: a mutex destroyed while another thread still uses it, a
 * typestate violation on a lock (ready -> invalid, then lock), in the style
 * of pbzip2's (2ndStrike, ASPLOS'11, Table 1: pbzip2-lck).
 *
 * The worker counts ITEMS items under the mutex, then takes it once more
 * to say it has finished.  main polls the count every 10 ms and, once it
 * is complete, destroys the mutex, and only then joins the worker: nothing
 * orders the worker's last lock before the destroy.  Normally the worker's
 * last lock follows its last count at once while main is still asleep, so
 * a plain run prints "ok".  When the destroy wins, glibc's
 * pthread_mutex_lock() answers EINVAL, and the worker reports the BUG and
 * aborts.  With --fixed main joins the worker before destroying the mutex:
 * the correctly synchronised control.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITEMS 3

static pthread_mutex_t lock;
static int counted;
static bool finished;

static void must_lock(const char *why)
{
	int rc = pthread_mutex_lock(&lock);

	if (rc != 0) {
		printf("BUG: pthread_mutex_lock (%s) on a destroyed mutex: %s\n", why,
		       strerror(rc));
		fflush(stdout);
		abort();
	}
}

static void *worker(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ITEMS; i++) {
		must_lock("count");
		counted++;
		pthread_mutex_unlock(&lock);
	}
	must_lock("finish"); /* BUG: main may have destroyed the mutex already */
	finished = true;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int count_now(void)
{
	int n;

	must_lock("poll");
	n = counted;
	pthread_mutex_unlock(&lock);
	return n;
}

int main(int argc, char **argv)
{
	bool fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	struct timespec tick = {0, 10 * 1000 * 1000};
	pthread_t w;

	pthread_mutex_init(&lock, NULL);
	pthread_create(&w, NULL, worker, NULL);
	while (count_now() < ITEMS)
		nanosleep(&tick, NULL);
	if (fixed)
		pthread_join(w, NULL);
	pthread_mutex_destroy(&lock);
	if (!fixed)
		pthread_join(w, NULL);
	printf("ok: %d items, worker %s\n", counted, finished ? "finished" : "did not finish");
	return 0;
}
