/*
 * lockheld: lock/unlock pairing on a mutex (typestate's lock model: a lock
 * is HELD by the thread that took it).
 *
 * Default: a worker takes the job mutex, says "done" through a condition
 * variable while still holding it, and only then unlocks it; main, woken
 * by "done", destroys the job mutex.  Nothing orders the worker's unlock
 * before the destroy, so the destroy can meet a held mutex: glibc answers
 * EBUSY, main reports the BUG and aborts.  Ordinary runs print "ok": main
 * waits 20 ms more before the destroy, and the worker unlocks at once.
 *
 * --fixed: the worker unlocks before saying "done" (the control).
 *
 * --busy: a helper thread destroys the mutex while main holds it, which
 * fails with EBUSY (reported, not fatal: the destroy of a held lock is
 * there in every run); main, told by an atomic flag typestate cannot see,
 * then unlocks it and locks it again.  The failed destroy must not count
 * as one: main's later lock is no use of a destroyed mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t job = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t say = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t said = PTHREAD_COND_INITIALIZER;
static bool done, fixed;
static atomic_int tried;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&job);
	if (fixed)
		pthread_mutex_unlock(&job);
	pthread_mutex_lock(&say);
	done = true;
	pthread_cond_signal(&said);
	pthread_mutex_unlock(&say);
	if (!fixed)
		pthread_mutex_unlock(&job); /* BUG: main may destroy it first */
	return NULL;
}

static int pairing(void)
{
	struct timespec settle = {0, 20 * 1000 * 1000};
	pthread_t w;
	int rc;

	pthread_create(&w, NULL, worker, NULL);
	pthread_mutex_lock(&say);
	while (!done)
		pthread_cond_wait(&said, &say);
	pthread_mutex_unlock(&say);
	nanosleep(&settle, NULL); /* the worker has long unlocked by now: usually */
	rc = pthread_mutex_destroy(&job);
	if (rc != 0) {
		printf("BUG: pthread_mutex_destroy of a held mutex: %s\n", strerror(rc));
		fflush(stdout);
		abort();
	}
	pthread_join(w, NULL);
	printf("ok\n");
	return 0;
}

static void *destroyer(void *arg)
{
	int rc = pthread_mutex_destroy(&job);

	(void)arg;
	printf("destroy of a held mutex: %s\n", rc == EBUSY ? "EBUSY, as expected" : strerror(rc));
	atomic_store(&tried, 1);
	return NULL;
}

static int busy(void)
{
	struct timespec tick = {0, 1000 * 1000};
	pthread_t d;

	pthread_mutex_lock(&job);
	pthread_create(&d, NULL, destroyer, NULL);
	while (!atomic_load(&tried))
		nanosleep(&tick, NULL);
	pthread_mutex_unlock(&job);
	pthread_mutex_lock(&job); /* the mutex is still READY: its destroy failed */
	pthread_mutex_unlock(&job);
	pthread_join(d, NULL);
	printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--busy") == 0)
		return busy();
	fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	return pairing();
}
