/*
 * syscalls.c: system call names, both ways, for syscall(NAME) in schedules
 * and for reports of what a blocked thread waits in.
 *
 * The table is the kernel's own list (syscall_table.h), so every name a
 * user may type is known and a misspelt one can be caught before the
 * program starts.
 */
#include "tracer/tracer.h"

#include <string.h>

static const struct syscall_row {
	long nr;
	const char *name;
} syscall_rows[] = {
#define SYSCALL(nr, name) {nr, #name},
#include "tracer/syscall_table.h"
#undef SYSCALL
};

#define NROWS (sizeof(syscall_rows) / sizeof(syscall_rows[0]))

long tracer_syscall_number(const char *name)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (strcmp(syscall_rows[i].name, name) == 0)
			return syscall_rows[i].nr;
	return -1;
}

const char *tracer_syscall_name(long nr)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (syscall_rows[i].nr == nr)
			return syscall_rows[i].name;
	return NULL;
}

void tracer_each_syscall(void (*cb)(const char *name, void *ctx), void *ctx)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		cb(syscall_rows[i].name, ctx);
}
