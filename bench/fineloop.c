/*
 * fineloop.c: the programs the fine-grained rows of the benchmark drive.
 *
 *   fineloop mix N    a thread runs mix(): N iterations of an 8-instruction
 *                     loop, one load and one store of a global table per
 *                     iteration (one instruction in four touches memory)
 *   fineloop tick N   a thread calls tick() N times; tick writes `ticks`
 *
 * Both are written in assembly so that the instruction counts are exactly
 * what the table in bench/fine says, whatever the compiler.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long table[64];
long ticks;

void mix(long *tab, long n);
void tick(void);

__asm__(".text\n"
	".globl mix\n"
	".type mix, @function\n"
	"mix:\n"
	"\txor %ecx, %ecx\n"
	"1:\n"
	"\tmov (%rdi,%rcx,8), %rax\n" /* load */
	"\tadd %rcx, %rax\n"
	"\timul $3, %rax, %rax\n"
	"\tmov %rax, 8(%rdi,%rcx,8)\n" /* store */
	"\tadd $1, %rcx\n"
	"\tand $31, %rcx\n"
	"\tsub $1, %rsi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size mix, .-mix\n"
	".globl tick\n"
	".type tick, @function\n"
	"tick:\n"
	"\tnop\n"
	"\taddq $1, ticks(%rip)\n"
	"\tret\n"
	".size tick, .-tick\n");

static long count;
static int ticking;

static void *worker(void *arg)
{
	long i;

	(void)arg;
	if (ticking)
		for (i = 0; i < count; i++)
			tick();
	else
		mix(table, count);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3 || (strcmp(argv[1], "mix") != 0 && strcmp(argv[1], "tick") != 0)) {
		fprintf(stderr, "usage: fineloop mix|tick N\n");
		return 2;
	}
	ticking = strcmp(argv[1], "tick") == 0;
	count = atol(argv[2]);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	printf("%ld %ld\n", table[1], ticks);
	return 0;
}
