/*
 * mem.c: target memory through /proc/PID/mem.
 *
 * One descriptor per process, opened at attach.  pread/pwrite on it work
 * while other threads run, and the kernel lets a tracer write to read-only
 * text mappings through it (FOLL_FORCE), which is how int3 bytes are
 * planted without PTRACE_POKETEXT's word-at-a-time dance.
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <stdio.h>
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

FILE *tr_open_maps(struct tr_process *p, char *path, size_t len)
{
	proc_path(p, "maps", path, len);
	return fopen(path, "r");
}

int tr_mem_open(struct tr_process *p)
{
	char path[64];

	if (p->mem_fd >= 0)
		close(p->mem_fd);
	proc_path(p, "mem", path, sizeof(path));
	p->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	return p->mem_fd < 0 ? -1 : 0;
}

int tracer_read(struct tr_process *p, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (p->mem_fd < 0)
		return -1;
	n = pread(p->mem_fd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -1;
}

int tracer_write(struct tr_process *p, uint64_t addr, const void *buf, size_t len)
{
	ssize_t n;

	if (p->mem_fd < 0)
		return -1;
	n = pwrite(p->mem_fd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : -1;
}

int tr_peek_fn(void *proc, uint64_t addr, uint64_t *value)
{
	return tracer_read(proc, addr, value, sizeof(*value));
}

int tr_poke_fn(void *proc, uint64_t addr, uint64_t value)
{
	return tracer_write(proc, addr, &value, sizeof(value));
}
