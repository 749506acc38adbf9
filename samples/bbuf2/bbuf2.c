/*
 * bbuf2: CONCURRIT's bounded-buffer benchmark (bbuf, from the Inspect
 * suite; paper 000, Table 1) with its injected bug ERR1.
 *
 * The buffer is the classic one: a ring of max_size slots with one kept
 * free (head == rear is empty, rear + 1 == head is full), a mutex, the
 * not_full / not_empty condition variables and counts of the waiting
 * producers and consumers, so that a put or a get signals only when
 * someone waits.  ERR1 opens a window in get: after the emptiness check
 * the consumer drops the lock and takes it again (CONCURRIT put its
 * concurritAtPc(1) control point there).  A consumer that saw the last
 * item and lost it to another consumer in the window takes from an empty
 * buffer: it gets the empty slot's NULL, and head runs past rear.
 *
 *   bbuf2 [PRODUCERS CONSUMERS ITEMS]
 *
 * PRODUCERS threads put ITEMS items each, CONSUMERS threads take their
 * share.  CONCURRIT's test ran 2 2 4; the default, 1 2 2 (one producer of
 * two items, two consumers of one), makes ERR1 a bug that needs exactly two
 * preemptions: the producer must be preempted between its two puts (or
 * both items are there for the two consumers), and the consumer that saw
 * the one item must be preempted in the window (a consumer that blocks or
 * ends frees the others at no cost).  A consumer that takes nothing
 * prints "BUG: ..." and aborts; ordinary runs print "ok".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct bbuf {
	pthread_mutex_t mutex;
	pthread_cond_t not_full, not_empty;
	size_t head, rear, max_size;
	size_t p_wait, c_wait; /* producers and consumers waiting */
	void **slots;
};

struct role {
	int puts, gets; /* a producer puts, a consumer gets */
	int taken;
};

static struct bbuf buf;
static struct role roles[16];
static int next_ticket;

static int check(int status, const char *what)
{
	if (status != 0) {
		fprintf(stderr, "bbuf2: %s failed (%d)\n", what, status);
		exit(2);
	}
	return 0;
}

static void bbuf_init(struct bbuf *b, size_t max_size)
{
	check(pthread_mutex_init(&b->mutex, NULL), "pthread_mutex_init");
	check(pthread_cond_init(&b->not_full, NULL), "pthread_cond_init");
	check(pthread_cond_init(&b->not_empty, NULL), "pthread_cond_init");
	b->head = b->rear = b->p_wait = b->c_wait = 0;
	b->max_size = max_size;
	b->slots = calloc(max_size, sizeof(*b->slots));
	if (!b->slots)
		check(-1, "calloc");
}

__attribute__((noinline)) void bbuf_put(struct bbuf *b, void *item)
{
	check(pthread_mutex_lock(&b->mutex), "lock");
	if ((b->rear + 1) % b->max_size == b->head) {
		b->p_wait++;
		while ((b->rear + 1) % b->max_size == b->head)
			check(pthread_cond_wait(&b->not_full, &b->mutex), "wait");
		b->p_wait--;
	}
	b->slots[b->rear] = item;
	b->rear = (b->rear + 1) % b->max_size;
	if (b->c_wait > 0)
		check(pthread_cond_signal(&b->not_empty), "signal");
	check(pthread_mutex_unlock(&b->mutex), "unlock");
}

__attribute__((noinline)) void *bbuf_get(struct bbuf *b)
{
	void *item;

	check(pthread_mutex_lock(&b->mutex), "lock");
	if (b->head == b->rear) {
		b->c_wait++;
		while (b->head == b->rear)
			check(pthread_cond_wait(&b->not_empty, &b->mutex), "wait");
		b->c_wait--;
	}
	/* ERR1: the lock is dropped between the check and the take */
	check(pthread_mutex_unlock(&b->mutex), "unlock");
	check(pthread_mutex_lock(&b->mutex), "lock"); /* <- at(bbuf2.c:97): AtPc(1) */
	item = b->slots[b->head];
	b->slots[b->head] = NULL;
	b->head = (b->head + 1) % b->max_size;
	if (b->p_wait > 0)
		check(pthread_cond_signal(&b->not_full), "signal");
	check(pthread_mutex_unlock(&b->mutex), "unlock");
	return item;
}

/*
 * Every thread of the test runs this.  A thread takes its role from a
 * ticket as it starts, producers first: the threads are alike until then,
 * so which one produces follows from the order a schedule runs them in,
 * not from the order the kernel happened to start them.
 */
__attribute__((noinline)) void worker(void)
{
	static int items[64];
	int id = __atomic_fetch_add(&next_ticket, 1, __ATOMIC_SEQ_CST), i;
	struct role *r = &roles[id];

	for (i = 0; i < r->puts; i++)
		bbuf_put(&buf, &items[(id * 8 + i) % 64]);
	for (i = 0; i < r->gets; i++) {
		if (!bbuf_get(&buf)) {
			printf("BUG: thread %d took from an empty buffer\n", id);
			fflush(stdout);
			abort();
		}
		r->taken++;
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	worker();
	return NULL;
}

static int arg_or(int argc, char **argv, int i, int fallback)
{
	int v = argc > i ? atoi(argv[i]) : fallback;

	if (v < 1 || v > 8) {
		fprintf(stderr, "usage: bbuf2 [PRODUCERS CONSUMERS ITEMS], each 1..8\n");
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	int producers = arg_or(argc, argv, 1, 1), consumers = arg_or(argc, argv, 2, 2);
	int items = arg_or(argc, argv, 3, 2), total = producers * items, n = producers + consumers;
	pthread_t threads[16];
	int i, taken = 0;

	if (total % consumers) {
		fprintf(stderr, "bbuf2: %d items do not share out among %d consumers\n", total,
			consumers);
		return 2;
	}
	bbuf_init(&buf, 3); /* CONCURRIT's size: two items at most */
	for (i = 0; i < n; i++) {
		if (i < producers)
			roles[i].puts = items;
		else
			roles[i].gets = total / consumers;
	}
	for (i = 0; i < n; i++)
		check(pthread_create(&threads[i], NULL, thread_main, NULL), "pthread_create");
	for (i = 0; i < n; i++) {
		check(pthread_join(threads[i], NULL), "pthread_join");
		taken += roles[i].taken;
	}
	printf("ok: %d items put, %d taken\n", total, taken);
	return 0;
}
