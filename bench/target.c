/*
 * target.c: the program every column of the benchmark drives.
 *
 *   target N              a worker thread calls hook() N times, then the
 *                         main thread calls cold_function() once
 *   target calib MS       prints how many spin iterations take about MS ms
 *   target spin FIFO T I  T threads spin I iterations of CPU-bound work each,
 *                         after one byte arrives on FIFO, then the main
 *                         thread calls cold_function(); prints the work's
 *                         wall time in ns
 *
 * hook and cold_function are written in assembly so that their first
 * instruction is a 1-byte nop: a tracer that plants an int3 there and just
 * continues (bench/floor.c) skips nothing that matters.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void hook(void);
void cold_function(void);

__asm__(".text\n"
	".globl hook\n"
	".type hook, @function\n"
	"hook:\n"
	"\tnop\n"
	"\tret\n"
	".size hook, .-hook\n"
	".globl cold_function\n"
	".type cold_function, @function\n"
	"cold_function:\n"
	"\tnop\n"
	"\tret\n"
	".size cold_function, .-cold_function\n");

static long n_calls;
static long spin_iters;
static volatile uint64_t sink;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *caller(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < n_calls; i++)
		hook();
	return NULL;
}

/* CPU-bound work with no call in it: an xorshift chain. */
static void *spinner(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 2654435761u + 1;
	long i;

	for (i = 0; i < spin_iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink += x;
	return NULL;
}

static int run_threads(void *(*fn)(void *), int n)
{
	pthread_t th[64];
	int i;

	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fn, (void *)(uintptr_t)(i + 1)) != 0) {
			fprintf(stderr, "target: pthread_create failed\n");
			return -1;
		}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* Iterations of spinner() that take about ms milliseconds here. */
static long calibrate(long ms)
{
	int64_t t0;
	long it = 1 << 20;

	for (;;) {
		spin_iters = it;
		t0 = now_ns();
		spinner((void *)1);
		if (now_ns() - t0 > 50 * 1000000)
			break;
		it *= 2;
	}
	return (long)((double)it * (double)ms * 1e6 / (double)(now_ns() - t0));
}

static int spin(const char *fifo, int threads, long iters)
{
	char c;
	int fd;
	int64_t t0, t1;

	if (threads < 1 || threads > 64 || iters < 1) {
		fprintf(stderr, "target: bad spin arguments\n");
		return 2;
	}
	spin_iters = iters;
	fd = open(fifo, O_RDONLY);
	if (fd < 0 || read(fd, &c, 1) != 1) {
		perror("target: fifo");
		return 2;
	}
	close(fd);
	t0 = now_ns();
	if (run_threads(spinner, threads) < 0)
		return 2;
	t1 = now_ns();
	cold_function();
	printf("%lld\n", (long long)(t1 - t0));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "calib") == 0) {
		printf("%ld\n", calibrate(atol(argv[2])));
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "spin") == 0)
		return spin(argv[2], atoi(argv[3]), atol(argv[4]));
	if (argc != 2) {
		fprintf(stderr,
			"usage: target N | target calib MS | target spin FIFO THREADS ITERS\n");
		return 2;
	}
	n_calls = atol(argv[1]);
	if (run_threads(caller, 1) < 0)
		return 2;
	cold_function();
	return 0;
}
