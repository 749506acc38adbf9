/*
 * terminal.c: who owns the controlling terminal while cctrace drives a
 * program it launched.
 *
 * A program launched in cctrace's process group gets every Ctrl-C typed
 * at the terminal, as cctrace does: the shell's `wait` interrupted by
 * Ctrl-C left a SIGINT on its way to the program, and the next command
 * delivered it ("killed by INT").  So a program launched with own_pgrp
 * runs in a process group of its own (launch.c) and the terminal's keys
 * are cctrace's.
 *
 * gdb goes further: the inferior gets the terminal's foreground whenever
 * it runs, and Ctrl-C reaches gdb as a SIGINT stop of the inferior.  That
 * relies on the program taking SIGINT through ordinary delivery, which a
 * program that blocks it in every thread and takes it with sigwait() or a
 * signalfd (a common server design) does not: Ctrl-C would never reach
 * cctrace and would end the program instead.  Here cctrace keeps the
 * foreground, and hands it over only to a program that asks for it: a
 * read of the terminal (or a change of its modes) from the background
 * makes the kernel send SIGTTIN (SIGTTOU) to the program's group, which
 * cctrace sees as a signal-delivery stop; it gives the group the
 * foreground, suppresses the signal, and the interrupted system call is
 * restarted and succeeds.  Most programs never touch the terminal and
 * Ctrl-C is then cctrace's alone, however they handle signals.  While a
 * program has the foreground, the keys the terminal turns into signals
 * (Ctrl-C, Ctrl-\, Ctrl-Z) go to the program's group: a stop for one of
 * them that the kernel sent (si_code SI_KERNEL, which kill() cannot fake)
 * is raised in cctrace instead and never delivered, so they act as if
 * cctrace had had the terminal.  The caller takes the terminal back before
 * reading it (the shell's prompt) and at the end, as gdb does; the
 * program's terminal modes are kept for its next turn and cctrace's put
 * back.
 *
 * A thread of the program may be asleep in a read of the terminal when
 * cctrace takes it back: the kernel checks the foreground only as a read
 * starts, so it would go on reading and eat what is typed at the prompt.
 * Each such thread (seen in /proc/PID/task/TID/syscall) is interrupted
 * (PTRACE_INTERRUPT, resumed silently at the next wait): its read is
 * restarted, finds itself in the background, and stops with SIGTTIN
 * until the next command gives the terminal back; one runnable, which
 * may be on its way into such a sleep, is watched until it sleeps, for a
 * moment (interrupt_readers).  Threads in other system calls are left
 * alone, as an interrupt can make some of them (epoll_wait) fail with
 * EINTR.
 *
 * A process that is not in the foreground must not call tcsetpgrp or
 * tcsetattr, nor write to a terminal with TOSTOP set, without SIGTTOU
 * stopping it; cctrace keeps SIGTTOU blocked while the program has the
 * terminal (its children unblock every signal before exec).  There is one
 * controlling terminal per process, so its state is kept here, not in a
 * tracer.
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

static pid_t given_to; /* the group we gave the foreground to, 0 if none */
static struct termios our_modes, their_modes;
static bool have_their_modes;
static sigset_t mask_before; /* cctrace's signal mask before SIGTTOU was blocked */

static pid_t program_pgrp(struct tracer *t)
{
	struct tr_process *p = t->processes;

	return t->opt.own_pgrp && p && p->launched ? p->pid : 0;
}

static int open_terminal(void)
{
	return open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
}

/* Give pgrp the foreground, if it is cctrace's to give. */
static int give(int fd, pid_t pgrp)
{
	sigset_t ttou;

	if (tcgetpgrp(fd) == pgrp)
		return 0; /* a second process of the group asked too */
	if (tcgetpgrp(fd) != getpgrp() || tcgetattr(fd, &our_modes) < 0)
		return -1; /* cctrace is in the background itself */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &mask_before);
	if (have_their_modes)
		tcsetattr(fd, TCSADRAIN, &their_modes);
	if (tcsetpgrp(fd, pgrp) < 0) {
		tcsetattr(fd, TCSADRAIN, &our_modes);
		sigprocmask(SIG_SETMASK, &mask_before, NULL);
		return -1;
	}
	given_to = pgrp;
	return 0;
}

static bool sent_by_terminal(struct tr_thread *th)
{
	siginfo_t si;

	return ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) == 0 && si.si_code == SI_KERNEL;
}

bool tr_terminal_stop(struct tr_thread *th, int sig)
{
	pid_t pgrp = program_pgrp(th->proc->tracer);
	int fd;

	if (!pgrp ||
	    (sig != SIGINT && sig != SIGQUIT && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU))
		return false;
	if (getpgid(th->proc->pid) != pgrp || !sent_by_terminal(th))
		return false;
	if ((sig == SIGTTIN || sig == SIGTTOU) && th->proc->tracer->prompt_reads) {
		th->pending_signal = 0;
		tr_set(th, TF_TTY_WAIT); /* tracer_terminal_prompt resumes it */
		return true;
	}
	if (sig == SIGTTIN || sig == SIGTTOU) {
		fd = open_terminal();
		if (fd < 0)
			return false;
		if (give(fd, pgrp) < 0) {
			close(fd);
			return false; /* it stops, as any job in the background would */
		}
		close(fd);
	} else {
		raise(sig);
	}
	tr_continue(th, tr_has(th, TF_STEPPING) ? PTRACE_SINGLESTEP : PTRACE_CONT);
	return true;
}

void tracer_terminal_prompt(struct tracer *t, bool reading)
{
	struct tr_thread *th;

	t->prompt_reads = reading;
	if (reading)
		return;
	for (th = t->threads; th; th = th->next)
		if (tr_has(th, TF_TTY_WAIT)) {
			tr_clear(th, TF_TTY_WAIT);
			/* its read starts again, and stops again for the
			 * terminal, which it is given then */
			if (th->state == TR_HELD)
				tr_continue(th, PTRACE_CONT);
		}
}

/* cctrace's controlling terminal (tty_nr of /proc/self/stat), 0 if none. */
static dev_t controlling_terminal(void)
{
	char line[1024], *p;
	unsigned long tty = 0;
	FILE *f = fopen("/proc/self/stat", "r");

	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %lu", &tty) != 1)
		return 0;
	return makedev((tty >> 8) & 0xfff, (tty & 0xff) | ((tty >> 12) & 0xfff00));
}

enum tty_reader { NOT_READING, READING, RUNNABLE };

/* Is thread tid of pid asleep in a read of the terminal tty, or runnable
 * (on a CPU or waiting for one: /proc cannot say which system call, if
 * any, it is in)? */
static enum tty_reader tty_reader_state(pid_t pid, pid_t tid, dev_t tty)
{
	char path[64], word[16];
	long nr;
	unsigned long long fd;
	struct stat st;
	bool in_read;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return NOT_READING;
	if (fscanf(f, "%15s", word) == 1 && strcmp(word, "running") == 0) {
		fclose(f);
		return RUNNABLE;
	}
	in_read = sscanf(word, "%ld", &nr) == 1 && fscanf(f, " %llx", &fd) == 1 &&
		  (nr == TR_SYS_read || nr == TR_SYS_readv || nr == TR_SYS_pread64 ||
		   nr == TR_SYS_preadv || nr == TR_SYS_preadv2);
	fclose(f);
	if (!in_read)
		return NOT_READING;
	snprintf(path, sizeof(path), "/proc/%d/fd/%llu", pid, fd);
	return stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
		       (st.st_rdev == tty || st.st_rdev == makedev(5, 0)) /* or /dev/tty */
		   ? READING
		   : NOT_READING;
}

/* How long a runnable thread is watched for falling asleep in a read. */
#define READER_SETTLE_MS 50

/* Interrupts the program's threads asleep in a read of tty; true if one
 * is runnable and might be on its way into such a sleep. */
static bool interrupt_sleeping_readers(struct tracer *t, pid_t pgrp, dev_t tty)
{
	struct tr_thread *th;
	bool runnable = false;

	for (th = t->threads; th; th = th->next) {
		if (th->state != TR_RUNNING || tr_has(th, TF_LISTENING) ||
		    tr_has(th, TF_INTERRUPTING) || tr_has(th, TF_EXITING) ||
		    getpgid(th->proc->pid) != pgrp)
			continue;
		switch (tty_reader_state(th->proc->pid, th->tid, tty)) {
		case READING:
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0) {
				tr_set(th, TF_INTERRUPTING);
				tr_clear(th, TF_REPORT_INTERRUPT);
			}
			break;
		case RUNNABLE:
			runnable = true;
			break;
		case NOT_READING:
			break;
		}
	}
	return runnable;
}

/*
 * Stop the program's reads of the terminal that started while it had it.
 * A runnable thread may be inside a read that passed the kernel's
 * foreground check before the terminal was taken and has not gone to
 * sleep yet (a thread just resumed into the read it asked the terminal
 * for): asleep a moment later, it would read the prompt's line from the
 * background (the shell's terminal test lost its `quit` so, 3 runs in
 * about 50).  Such threads are looked at again until they sleep or
 * READER_SETTLE_MS pass; one still runnable then is most likely
 * computing, and a read it starts later meets the background and stops
 * with SIGTTIN.  Best effort: a reader kept from a CPU for longer on a
 * busy host still slips through.  The wait is paid only when the program
 * had the terminal and a thread of it is runnable.
 */
static void interrupt_readers(struct tracer *t, pid_t pgrp)
{
	dev_t tty = controlling_terminal();
	int64_t until = tracer_now_ms() + READER_SETTLE_MS;

	if (!tty)
		return;
	while (interrupt_sleeping_readers(t, pgrp, tty) && tracer_now_ms() < until)
		usleep(200);
}

void tracer_terminal_take(struct tracer *t)
{
	int fd;

	if (!given_to || given_to != program_pgrp(t))
		return;
	fd = open_terminal();
	if (fd >= 0 && tcgetpgrp(fd) == given_to) {
		have_their_modes = tcgetattr(fd, &their_modes) == 0;
		tcsetpgrp(fd, getpgrp());
		tcsetattr(fd, TCSADRAIN, &our_modes);
		interrupt_readers(t, given_to);
	}
	if (fd >= 0)
		close(fd);
	given_to = 0;
	if (!sigismember(&mask_before, SIGTTOU)) {
		sigset_t ttou;

		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_UNBLOCK, &ttou, NULL);
	}
}
