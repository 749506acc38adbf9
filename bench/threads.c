/*
 * bench/threads.c: a process with N threads for timing `cctrace attach`.
 *
 *   threads N    starts N-1 threads that block reading a pipe, prints
 *                "ready", and ends (with all of them) at end of file on
 *                stdin.
 *
 * The threads sleep in the kernel, as a server's idle workers do: attaching
 * has to interrupt each of them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int never[2];

static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	while (read(never[0], &c, 1) < 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0, i;
	pthread_attr_t attr;
	pthread_t t;
	char c;

	if (n < 1 || n > 4096 || pipe(never) != 0) {
		fprintf(stderr, "usage: threads N (1..4096)\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (i = 1; i < n; i++)
		if (pthread_create(&t, &attr, sleeper, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
