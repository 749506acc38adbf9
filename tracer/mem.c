/*
 * mem.c: target memory through /proc/PID/mem.
 *
 * One descriptor per process, opened when the process joins the tables (a
 * forked child opens its own at its fork event) and opened again at every
 * exec: the descriptor is bound to the address space that was current when
 * it was opened, not to the pid, so the old one would keep reaching the
 * old program (or nothing, once it is freed).  A vfork child has no memory
 * of its own until it executes a program: its descriptor reaches its
 * parent's, so between that exec and our decoding of its event it is not
 * used at all.  pread/pwrite on it work
 * while other threads run, and the kernel lets a tracer write to read-only
 * text mappings through it (FOLL_FORCE), which is how int3 bytes are
 * planted without PTRACE_POKETEXT's word-at-a-time dance.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* /proc/PID/WHAT, or /proc/PID/task/TID/WHAT of a live traced thread when
 * there is one: the main thread of a process may have ended (pthread_exit),
 * and its maps and mem read empty while the others run on. */
static void proc_path(struct tr_process *p, const char *what, char *path, size_t len)
{
	struct tr_thread *th;

	snprintf(path, len, "/proc/%d/%s", p->pid, what);
	for (th = p->tracer->threads; th; th = th->next)
		if (th->proc == p && th->state != TR_EXITED && th->tid != p->pid) {
			snprintf(path, len, "/proc/%d/task/%d/%s", p->pid, th->tid, what);
			return;
		}
}

/* path opened, if it has anything to read. */
static FILE *open_nonempty(const char *path)
{
	FILE *f = fopen(path, "r");
	int c;

	if (!f)
		return NULL;
	c = fgetc(f);
	if (c == EOF) {
		fclose(f);
		return NULL;
	}
	ungetc(c, f);
	return f;
}

/* Not proc_path: the thread it names may be ending while the tables still
 * think it runs (its exit not reaped yet), and its maps are then gone or
 * empty.  The process's own first, then each thread's, until one reads. */
FILE *tr_open_maps(struct tr_process *p, char *path, size_t len)
{
	struct tr_thread *th;
	FILE *f;

	snprintf(path, len, "/proc/%d/maps", p->pid);
	f = open_nonempty(path);
	for (th = p->tracer->threads; th && !f; th = th->next)
		if (th->proc == p && th->state != TR_EXITED && th->tid != p->pid) {
			snprintf(path, len, "/proc/%d/task/%d/maps", p->pid, th->tid);
			f = open_nonempty(path);
		}
	return f;
}

int tr_mem_open(struct tr_process *p)
{
	char path[64];

	if (p->mem_fd >= 0)
		close(p->mem_fd);
	proc_path(p, "mem", path, sizeof(path));
	p->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	p->mem_errno = p->mem_fd < 0 ? errno : 0;
	return p->mem_fd < 0 ? -1 : 0;
}

bool tr_shares_mm(pid_t child, pid_t pid)
{
	enum { KCMP_VM = 1 };
	long order = syscall(SYS_kcmp, child, pid, KCMP_VM, 0, 0);

	return order != 1 && order != 2; /* 0: the same; -1: cannot tell */
}

/* A vfork child that has executed a program, its exec event not decoded
 * yet: its descriptor still reaches its parent's memory, which must not
 * be written as if it were the child's. */
static bool exec_pending(struct tr_process *p)
{
	if (!p->shares_mm || tr_shares_mm(p->pid, p->parent_pid))
		return false;
	errno = ESRCH;
	return true;
}

bool tr_mem_usable(struct tr_process *p)
{
	return p->mem_fd >= 0 && !exec_pending(p);
}

/* errno for a transfer of n bytes out of len, so that a caller's message
 * names the cause rather than whatever errno held before. */
static int transfer_result(ssize_t n, size_t len)
{
	if (n == (ssize_t)len)
		return 0;
	if (n == 0)
		errno = ESRCH; /* the address space is gone: the process exited */
	else if (n > 0)
		errno = EFAULT; /* ran into an unmapped page */
	return -1;
}

int tracer_read(struct tr_process *p, uint64_t addr, void *buf, size_t len)
{
	if (exec_pending(p))
		return -1;
	if (p->mem_fd < 0) {
		errno = p->mem_errno ? p->mem_errno : ESRCH;
		return -1;
	}
	return transfer_result(pread(p->mem_fd, buf, len, (off_t)addr), len);
}

int tracer_write(struct tr_process *p, uint64_t addr, const void *buf, size_t len)
{
	if (exec_pending(p))
		return -1;
	if (p->mem_fd < 0) {
		errno = p->mem_errno ? p->mem_errno : ESRCH;
		return -1;
	}
	return transfer_result(pwrite(p->mem_fd, buf, len, (off_t)addr), len);
}

int tr_peek_fn(void *proc, uint64_t addr, uint64_t *value)
{
	return tracer_read(proc, addr, value, sizeof(*value));
}

int tr_poke_fn(void *proc, uint64_t addr, uint64_t value)
{
	return tracer_write(proc, addr, &value, sizeof(value));
}

/* The first copy of bytes in [lo, hi) read through mem, 0 if none. */
static uint64_t scan_range(int mem, uint64_t lo, uint64_t hi, const void *bytes, size_t len)
{
	uint8_t buf[65536];
	uint64_t at;

	for (at = lo; at < hi; at += sizeof(buf) - (len - 1)) {
		size_t n = hi - at < sizeof(buf) ? hi - at : sizeof(buf);
		uint8_t *hit;

		if (pread(mem, buf, n, (off_t)at) != (ssize_t)n)
			return 0;
		hit = memmem(buf, n, bytes, len);
		if (hit)
			return at + (uint64_t)(hit - buf);
	}
	return 0;
}

uint64_t tr_find_in_code(FILE *maps, int mem, tr_keep_mapping_fn keep, void *ctx, const void *bytes,
			 size_t len)
{
	char line[512];
	uint64_t found = 0;

	assert(len > 0 && len < 65536);
	while (!found && fgets(line, sizeof(line), maps)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[2] != 'x')
			continue;
		if (keep(line, lo, hi, ctx))
			found = scan_range(mem, lo, hi, bytes, len);
	}
	return found;
}
