/*
 * abi.h: the x86-64 Linux ABI as a traced program has it, named once.
 *
 * Numbers that cctrace reads from or writes into a traced program (the
 * system call in orig_rax, a futex's command and word, a pthread mutex's
 * owner, a restart code in rax) come from here and nowhere else, not from
 * the build machine's headers: syscall_table.h is the kernel's list kept
 * in the tree, the futex values are the kernel's stable ABI
 * (include/uapi/linux/futex.h) and the mutex layout glibc's (struct
 * __pthread_mutex_s), which has not changed on x86-64 since 2.3.  System
 * calls cctrace makes for itself (pidfd_open, kcmp) use <sys/syscall.h>,
 * as any program does.  Reached through tracer/tracer.h.
 */
#ifndef CCTRACE_TRACER_ABI_H
#define CCTRACE_TRACER_ABI_H

/* TR_SYS_read = 0, TR_SYS_futex = 202, ... */
enum tr_sysno {
#define SYSCALL(nr, name) TR_SYS_##name = nr,
#include "tracer/syscall_table.h"
#undef SYSCALL
};

/* futex(uaddr, op, val, ...): the command is op's low bits, without
 * FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256). */
#define TR_FUTEX_CMD_MASK 0x7fu
enum tr_futex_cmd {
	TR_FUTEX_WAIT = 0,
	TR_FUTEX_WAKE = 1,
	TR_FUTEX_REQUEUE = 3,
	TR_FUTEX_CMP_REQUEUE = 4,
	TR_FUTEX_WAKE_OP = 5,
	TR_FUTEX_LOCK_PI = 6,
	TR_FUTEX_WAIT_BITSET = 9,
	TR_FUTEX_WAKE_BITSET = 10,
	TR_FUTEX_LOCK_PI2 = 13,
};
/* A PI or robust futex word (and a thread's clear_child_tid, which a
 * join waits on) holds the owner's tid, under the FUTEX_WAITERS and
 * FUTEX_OWNER_DIED bits. */
#define TR_FUTEX_TID_MASK 0x3fffffffu
/* ...which the kernel sets, clearing the tid, on a robust futex its owner
 * held as it died: the next lock takes it (EOWNERDEAD). */
#define TR_FUTEX_OWNER_DIED 0x40000000u

/* glibc's pthread_mutex_t: the futex word __lock first (0 unlocked, 1
 * locked, 2 locked with waiters), the owner's tid __owner at offset 8. */
enum { TR_MUTEX_LOCKED = 1, TR_MUTEX_CONTENDED = 2, TR_MUTEX_OWNER_OFFSET = 8 };

/* clone(2)'s flag for a child that shares its parent's memory: a thread
 * (or a vfork), not a new process with a copy of it. */
#define TR_CLONE_VM 0x100u

/* The length of a `syscall` instruction (0f 05): a thread stopped in or at
 * a system call stands just past it. */
#define TR_SYSCALL_INSN_LEN 2

/* The kernel's own restart codes, negated in rax of a thread stopped
 * inside a system call that it will restart when resumed. */
enum {
	TR_ERESTARTSYS = 512,
	TR_ERESTARTNOINTR = 513,
	TR_ERESTARTNOHAND = 514,
	TR_ERESTART_RESTARTBLOCK = 516,
};
/* ...and errors a traced program's system calls answer: an interrupted
 * epoll_wait or sigwaitinfo (EINTR, at once instead of a restart code), a timed wait
 * whose time ran out (ETIMEDOUT), any call at its entry stop (ENOSYS,
 * until it is made) */
enum { TR_EINTR = 4, TR_ENOSYS = 38, TR_ETIMEDOUT = 110 };

#endif
