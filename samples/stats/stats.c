/*
 * stats: a server's hit counter, bumped without a lock by every worker.
 *
 *     s->stats.count = s->stats.count + 1;
 *
 * is a load, an add and a store.  Two workers that both load before either
 * stores lose one hit.  The window is three instructions wide, so ordinary
 * runs almost never show it; there is no function boundary, source line or
 * variable of its own around it to stop at, only the two memory accesses,
 * which is what `run T until read` / `write` stop at.
 *
 * usage: stats [HITS_PER_WORKER]   (exit status 1 if a hit was lost)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct stats {
	long count;
	long bytes;
};

struct server {
	const char *name;
	struct stats stats;
};

struct server *srv;

static void record_hit(struct server *s, long bytes)
{
	s->stats.count = s->stats.count + 1;
	s->stats.bytes += bytes;
}

static void *worker(void *arg)
{
	long i, hits = *(long *)arg;

	for (i = 0; i < hits; i++)
		record_hit(srv, 100);
	return NULL;
}

int main(int argc, char **argv)
{
	long hits = argc > 1 ? atol(argv[1]) : 1;
	pthread_t a, b;

	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return 2;
	srv->name = "example";
	pthread_create(&a, NULL, worker, &hits);
	pthread_create(&b, NULL, worker, &hits);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%s: %ld hits recorded, %ld expected\n", srv->stats.count == 2 * hits ? "ok" : "BUG",
	       srv->stats.count, 2 * hits);
	return srv->stats.count == 2 * hits ? 0 : 1;
}
