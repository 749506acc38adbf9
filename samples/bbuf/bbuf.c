/*
 * bbuf: check-then-act on a bounded buffer's count.
 *
 * Workers share a bounded buffer of jobs.  try_take() looks at the count
 * without the lock ("nothing queued, don't bother locking") and only then
 * locks and takes the job at the head.  The check and the act are two
 * steps: if another worker takes the last job in between, this one takes
 * from an empty buffer, gets the NULL left in the emptied slot, and crashes
 * on it with SIGSEGV (and the count goes negative).
 *
 * main queues a single job for two idle workers that leave a barrier
 * together.  The one the barrier lets go first takes the job and finds the
 * buffer empty on its second look long before the other has woken up, so
 * ordinary runs print "ok".  samples/bbuf/take-empty.sched stops both
 * workers between check and act and crashes one every time.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define CAP 4

struct job {
	int id;
	long result;
};

struct bbuf {
	pthread_mutex_t lock;
	struct job *slots[CAP];
	int head, count;
};

struct bbuf queue = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_barrier_t start;

/* Producer side: correct, everything under the lock. */
static int put(struct bbuf *q, struct job *job)
{
	int ok = 0;

	pthread_mutex_lock(&q->lock);
	if (q->count < CAP) {
		q->slots[(q->head + q->count) % CAP] = job;
		q->count++;
		ok = 1;
	}
	pthread_mutex_unlock(&q->lock);
	return ok;
}

/* Takes the job at the head into *job; false if the buffer is empty. */
__attribute__((noinline)) bool try_take(struct bbuf *q, struct job **job)
{
	if (q->count == 0) /* check, without the lock ... */
		return false;
	pthread_mutex_lock(&q->lock); /* <- at(bbuf.c:58): act.  BUG: count may be 0 now */
	*job = q->slots[q->head];
	q->slots[q->head] = NULL;
	q->head = (q->head + 1) % CAP;
	q->count--;
	pthread_mutex_unlock(&q->lock);
	return true;
}

/* Runs jobs until the buffer is empty; returns how many. */
__attribute__((noinline)) int work(void)
{
	struct job *job;
	int done = 0;

	while (try_take(&queue, &job)) {
		job->result = 2L * job->id; /* <- SIGSEGV: the NULL from an emptied slot */
		done++;
	}
	return done;
}

static void *worker(void *arg)
{
	int *done = arg;

	pthread_barrier_wait(&start);
	*done = work();
	return NULL;
}

int main(void)
{
	static struct job job = {.id = 1};
	pthread_t a, b;
	int done_a = 0, done_b = 0;

	put(&queue, &job);
	pthread_barrier_init(&start, NULL, 2);
	pthread_create(&a, NULL, worker, &done_a);
	pthread_create(&b, NULL, worker, &done_b);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (done_a + done_b != 1 || queue.count != 0) {
		printf("BUG: took %d jobs from a buffer that held 1 (count = %d)\n",
		       done_a + done_b, queue.count);
		abort();
	}
	printf("ok: one job, taken once\n");
	return 0;
}
