/*
 * bench/trapcost: what the fault of one breakpoint costs on this host:
 * int3 (#BP, cctrace's in a program it launched) next to 0xce (an invalid
 * opcode, #UD: cctrace's in a process it attached to; tracer/breakpoint.c
 * says why), each taken N times in one run with a signal handler
 * that steps over it, no tracer involved.  Some hypervisors (KVM) trap
 * #UD in the guest, so the same stop costs more there than on bare metal.
 * Prints "int3 US 0xce US" (microseconds per fault and signal).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

static void step_over(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)si;
	if (sig == SIGILL) /* #UD leaves the pc on the byte; #BP after it */
		uc->uc_mcontext.gregs[REG_RIP] += 1;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_sigaction = step_over, .sa_flags = SA_SIGINFO};
	long n = argc > 1 ? atol(argv[1]) : 20000, i;
	double t0, t1, t2;

	if (n < 1 || sigaction(SIGILL, &sa, NULL) < 0 || sigaction(SIGTRAP, &sa, NULL) < 0)
		return 2;
	t0 = now_us();
	for (i = 0; i < n; i++)
		__asm__ volatile(".byte 0xcc");
	t1 = now_us();
	for (i = 0; i < n; i++)
		__asm__ volatile(".byte 0xce");
	t2 = now_us();
	printf("int3 %.2f 0xce %.2f\n", (t1 - t0) / (double)n, (t2 - t1) / (double)n);
	return 0;
}
