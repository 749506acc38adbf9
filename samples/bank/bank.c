/*
 * bank: a lost update, the classic atomicity violation.
 *
 * Two customers withdraw 10 and 20 from a shared balance of 100.  withdraw()
 * reads the balance into a local, checks it, and writes back the local minus
 * the amount.  Nothing makes the read and the write one step, so a thread
 * that reads, is preempted, and writes after the other thread's whole
 * withdrawal puts back a balance computed from a stale value: the other
 * withdrawal is lost.  The window is a handful of instructions and both
 * threads leave the barrier at slightly different times, so ordinary runs
 * practically never lose an update; samples/bank/lost-update.sched makes it
 * happen every time.
 *
 *   bank          one round; aborts with "BUG: lost update" if it happened
 *   bank --loop   a round every 100 ms forever, printing a BUG line for any
 *                 lost update, so that cctrace can attach to a running pid
 *                 and force one in a later round
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long balance = 100;

static pthread_barrier_t start;

__attribute__((noinline)) void withdraw(long amount)
{
	long b = balance; /* read the shared balance */

	if (b < amount) { /* the "work" between the read and the write */
		fprintf(stderr, "insufficient funds\n");
		return;
	}
	balance = b - amount; /* write back: loses any update made since the read */
}

static void *customer(void *arg)
{
	long amount = (long)arg;

	pthread_barrier_wait(&start);
	withdraw(amount);
	return NULL;
}

/* Two concurrent withdrawals from a fresh balance; returns the final balance. */
static long run_round(void)
{
	pthread_t a, b;

	balance = 100;
	pthread_barrier_init(&start, NULL, 2);
	pthread_create(&a, NULL, customer, (void *)10L);
	pthread_create(&b, NULL, customer, (void *)20L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_barrier_destroy(&start);
	return balance;
}

static __attribute__((noreturn)) void loop_forever(void)
{
	printf("bank: pid %d, one round every 100 ms\n", (int)getpid());
	fflush(stdout);
	for (unsigned long round = 1;; round++) {
		long final = run_round();

		if (final != 100 - 10 - 20) {
			printf("BUG: lost update in round %lu: balance = %ld (expected 70)\n",
			       round, final);
			fflush(stdout);
		}
		usleep(100 * 1000);
	}
}

int main(int argc, char **argv)
{
	long final;

	if (argc > 1 && strcmp(argv[1], "--loop") == 0)
		loop_forever();
	final = run_round();
	if (final != 100 - 10 - 20) {
		printf("BUG: lost update: balance = %ld (expected 70)\n", final);
		fflush(stdout);
		abort();
	}
	printf("ok: balance = %ld\n", final);
	return 0;
}
