/*
 * heapuse: a heap block freed while another thread still uses it, a
 * typestate violation on memory (live -> freed, then used), in the style of
 * 2ndStrike's MySQL-ptr and Mozilla-ptr bugs.
 *
 * A job is malloc'd with its mutex inside it (not at its start: the memory
 * model sees a call on &job->lock as a use of the block that holds it).  The worker does STEPS
 * steps of it under the job's mutex, then takes the mutex once more to record that it is done. main
 * polls the job every 10 ms and frees it as soon as every step is done, and only then joins the
 * worker: nothing orders the worker's last use of the job before the free.  Normally the worker
 * gets there first, so a plain run prints "ok"; when the free wins, the worker locks a mutex in
 * freed memory (the allocator's free list now lives in its first bytes): nothing visible may happen
 * at once, which is why the memory model's own check, not a crash, is the evidence.  With --fixed
 * main joins the worker first: the correctly synchronised control.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 3

struct job {
	int steps;
	bool done;
	pthread_mutex_t lock; /* inside the block: &job->lock is not the block's start */
};

static void *worker(void *arg)
{
	struct job *job = arg;
	int i;

	for (i = 0; i < STEPS; i++) {
		pthread_mutex_lock(&job->lock);
		job->steps++;
		pthread_mutex_unlock(&job->lock);
	}
	pthread_mutex_lock(&job->lock); /* BUG: main may have freed the job already */
	job->done = true;
	pthread_mutex_unlock(&job->lock);
	return NULL;
}

static int steps_now(struct job *job)
{
	int n;

	pthread_mutex_lock(&job->lock);
	n = job->steps;
	pthread_mutex_unlock(&job->lock);
	return n;
}

int main(int argc, char **argv)
{
	bool fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
	struct timespec tick = {0, 10 * 1000 * 1000};
	struct job *job = calloc(1, sizeof(*job));
	pthread_t w;

	if (!job)
		return 1;
	pthread_mutex_init(&job->lock, NULL);
	pthread_create(&w, NULL, worker, job);
	while (steps_now(job) < STEPS)
		nanosleep(&tick, NULL);
	if (fixed)
		pthread_join(w, NULL);
	free(job);
	if (!fixed)
		pthread_join(w, NULL);
	printf("ok: %d steps\n", STEPS);
	return 0;
}
