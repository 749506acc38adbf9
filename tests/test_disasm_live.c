/*
 * test_disasm_live: the disasm module against what a real CPU does.
 *
 * A forked child runs a workload through libc (qsort with a callback, so
 * indirect calls; snprintf; glibc's AVX/EVEX string functions; rep string
 * ops; a thread-local counter through fs; a locked add) while the parent
 * single-steps it with raw ptrace.  At every instruction the parent checks:
 *  - dis_next_pc() predicts the rip the CPU lands on after the step;
 *  - every address dis_accesses() computes is mapped in the child (a wrong
 *    base, index, segment or rip origin lands in unmapped memory);
 *  - the decode-ahead contract: when dis_scan() from a pc says the first
 *    instruction that may access non-stack memory (or branch) is k bytes
 *    ahead, the CPU runs straight to pc + k and nothing it runs before
 *    then accesses non-stack memory, and an instruction that does access
 *    it is always one a scan from there stops at.
 * This is the property a decode-ahead stepper relies on to report the same
 * events as single-stepping.
 *
 * Two things the CPU does that a stepper must know about are accepted here:
 * a single-stepped rep string op traps after each iteration with rip
 * unchanged, and glibc's AVX-512 string functions (chosen when the CPU has
 * AVX512VL/BW) use instructions capstone 4 cannot decode (kmovd, vpcmpub,
 * vptestnmb): those must be VEX/EVEX-encoded, and scans must stop at them.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "disasm/disasm.h"

#define MAX_STEPS  400000
#define SCAN_BYTES 128

static __thread long tls_counter;
static long global_sum;

static int compare_longs(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static void __attribute__((noinline)) workload(void)
{
	long arr[48];
	char text[128], big[2048], copy[2048];

	for (int i = 0; i < 48; i++)
		arr[i] = (i * 7919) % 48;
	qsort(arr, 48, sizeof(arr[0]), compare_longs);
	snprintf(text, sizeof(text), "%ld-%s", arr[5], "fine-grained");
	global_sum += (long)strlen(text);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(copy, big, sizeof(big));
	global_sum += (long)strlen(copy);
	for (int i = 0; i < 50; i++)
		tls_counter += i;
	__atomic_fetch_add(&global_sum, tls_counter, __ATOMIC_SEQ_CST);
	__asm__ volatile("cld; rep movsb"
			 : "+S"((const char *){big}), "+D"((char *){copy}),
			   "+c"((unsigned long){64})
			 :
			 : "memory");
}

static pid_t start_child(void)
{
	pid_t pid = fork();
	int status;

	cr_assert_neq(pid, -1);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		workload();
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSTOPPED(status));
	return pid;
}

static int child_peek(void *ctx, uint64_t addr, uint64_t *value)
{
	pid_t pid = *(pid_t *)ctx;
	long word;

	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
	if (errno)
		return -1;
	*value = (uint64_t)word;
	return 0;
}

/* Up to n bytes of the child at addr; fewer where a mapping ends. */
static size_t child_read(pid_t pid, uint64_t addr, uint8_t *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)addr, n};
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	while (got < 0 && n > 1) { /* crosses into an unmapped page */
		n = 4096 - (addr & 4095) < n ? 4096 - (addr & 4095) : n / 2;
		local.iov_len = remote.iov_len = n;
		got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	}
	return got < 0 ? 0 : (size_t)got;
}

struct stats {
	long steps, kinds[DIS_TRAP + 1], accesses, fs_accesses, scans_ahead, scan_skipped;
	long rep_iterations, undecodable;
};

/* A scan in progress: the CPU must run straight to stop without a match. */
struct pending {
	bool active;
	uint64_t from, stop, expect;
};

static void check_accesses(pid_t pid, const struct dis_insn *insn, const uint8_t *code,
			   const struct user_regs_struct *regs, struct stats *st)
{
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n = dis_accesses(insn, code, regs, acc, DIS_MAX_ACCESSES);
	uint64_t word;

	cr_assert_geq(n, 0, "%#lx %s: no accesses computed", (unsigned long)insn->addr, insn->text);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(child_peek(&pid, acc[i].addr, &word), 0,
			     "%#lx %s: access #%d at %#lx is not mapped", (unsigned long)insn->addr,
			     insn->text, i, (unsigned long)acc[i].addr);
		if (regs->fs_base && acc[i].addr + 0x10000 - regs->fs_base < 0x20000)
			st->fs_accesses++;
	}
	st->accesses += n;
}

/* The decode-ahead contract, checked at the instruction about to run. */
static void check_scan(const struct dis_insn *insn, const uint8_t *code, size_t n,
		       const struct user_regs_struct *regs, struct pending *p, struct stats *st)
{
	struct dis_insn stop;
	bool matches = dis_matches(insn, code, regs, DIS_WANT_MEM);
	long k;

	if (p->active) {
		cr_assert_eq(insn->addr, p->expect,
			     "scan from %#lx: left straight-line code at %#lx",
			     (unsigned long)p->from, (unsigned long)insn->addr);
		if (insn->addr == p->stop) {
			p->active = false;
		} else {
			cr_assert(!matches, "scan from %#lx skipped %#lx %s",
				  (unsigned long)p->from, (unsigned long)insn->addr, insn->text);
			p->expect = insn->addr + insn->len;
			st->scan_skipped++;
			return;
		}
	}
	k = dis_scan(code, n, insn->addr, DIS_WANT_MEM, &stop);
	if (insn->kind == DIS_INVALID) {
		cr_assert_eq(k, -1, "%#lx: a scan from undecodable bytes",
			     (unsigned long)insn->addr);
		return;
	}
	cr_assert_geq(k, 0, "%#lx: scan failed", (unsigned long)insn->addr);
	if (stop.kind == DIS_INVALID) /* ran off the bytes read: nothing to check */
		return;
	if (matches)
		cr_assert_eq(k, 0, "%#lx %s matches but a scan from it goes on",
			     (unsigned long)insn->addr, insn->text);
	if (k > 0) {
		*p = (struct pending){true, insn->addr, insn->addr + (uint64_t)k,
				      insn->addr + insn->len};
		st->scans_ahead++;
	}
}

/* Bytes capstone 4 cannot decode must be one of the AVX-512 era encodings. */
static void check_undecodable(const uint8_t *code, uint64_t pc, struct stats *st)
{
	cr_assert(code[0] == 0x62 || code[0] == 0xc4 || code[0] == 0xc5,
		  "%#lx does not decode: %02x %02x %02x %02x %02x %02x", (unsigned long)pc, code[0],
		  code[1], code[2], code[3], code[4], code[5]);
	st->undecodable++;
}

/* Single-step once; false when the child has exited. */
static bool single_step(pid_t pid, struct user_regs_struct *after)
{
	int status;

	cr_assert_eq(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status))
		return false;
	cr_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP, "status %#x", status);
	cr_assert_eq(ptrace(PTRACE_GETREGS, pid, NULL, after), 0);
	return true;
}

static void check_next_pc(pid_t pid, const struct dis_insn *insn, const uint8_t *code,
			  const struct user_regs_struct *regs, const struct user_regs_struct *after,
			  struct stats *st)
{
	uint64_t next = 0;

	if (insn->kind == DIS_INVALID || insn->kind == DIS_TRAP)
		return;
	cr_assert_eq(dis_next_pc(insn, code, regs, child_peek, &pid, &next), 0,
		     "%#lx %s: no next pc", (unsigned long)insn->addr, insn->text);
	if ((insn->flags & DIS_F_STRING) && after->rip == insn->addr && after->rcx < regs->rcx) {
		st->rep_iterations++; /* one iteration of a rep op done, more to go */
		return;
	}
	cr_assert_eq(after->rip, next, "%#lx %s: went to %#lx, predicted %#lx",
		     (unsigned long)insn->addr, insn->text, (unsigned long)after->rip,
		     (unsigned long)next);
}

static bool step_one(pid_t pid, struct pending *p, struct stats *st)
{
	struct user_regs_struct regs, after;
	uint8_t code[SCAN_BYTES];
	struct dis_insn insn;
	size_t n;

	cr_assert_eq(ptrace(PTRACE_GETREGS, pid, NULL, &regs), 0);
	n = child_read(pid, regs.rip, code, sizeof(code));
	cr_assert_gt(n, 0);
	if (dis_decode(code, n, regs.rip, &insn) < 0)
		check_undecodable(code, regs.rip, st);
	else
		check_accesses(pid, &insn, code, &regs, st);
	st->kinds[insn.kind]++;
	check_scan(&insn, code, n, &regs, p, st);
	if (!single_step(pid, &after))
		return false;
	check_next_pc(pid, &insn, code, &regs, &after, st);
	st->steps++;
	return true;
}

Test(live, single_stepped_workload, .timeout = 120)
{
	pid_t pid = start_child();
	struct pending pending = {0};
	struct stats st = {0};
	int status;

	while (st.steps < MAX_STEPS && step_one(pid, &pending, &st))
		;
	if (st.steps >= MAX_STEPS) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		cr_assert_fail("the workload did not finish in %d steps", MAX_STEPS);
	}
	cr_log_info("%ld steps, %ld accesses, %ld scans ahead skipping %ld instructions, %ld rep "
		    "iterations, %ld undecodable",
		    st.steps, st.accesses, st.scans_ahead, st.scan_skipped, st.rep_iterations,
		    st.undecodable);
	/* the workload exercised what it was written for */
	cr_expect_gt(st.kinds[DIS_CALL], 10);
	cr_expect_gt(st.kinds[DIS_RET], 10);
	cr_expect_gt(st.kinds[DIS_INDIRECT], 10, "qsort's callback and PLT jumps");
	cr_expect_gt(st.kinds[DIS_JCC], 100);
	cr_expect_gt(st.kinds[DIS_SYSCALL], 0, "_exit");
	cr_expect_gt(st.fs_accesses, 0, "the __thread counter and the stack protector");
	cr_expect_gt(st.scan_skipped, 100);
	cr_expect_gt(st.rep_iterations, 10, "the rep movsb of 64 bytes");
}
