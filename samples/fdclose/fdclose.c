/*
 * fdclose: use after close, a typestate violation on a file descriptor.
 *
 * A descriptor goes open -> closed, and read() is legal only while it is
 * open.  Here the reader thread reads a pipe until end of file, and the
 * owner thread closes the read end as soon as it has been told that the
 * whole message arrived.  But after receiving the message the reader still
 * makes one more read() to see end of file, and nothing orders that read
 * before the owner's close().  Normally the reader gets there first (the
 * owner has to be woken up), so ordinary runs print "ok".  When the close()
 * wins, the read() fails with EBADF, and the reader reports the BUG and
 * aborts.  (In a real program the number may already belong to a file
 * opened in between, and the read() would silently consume someone else's
 * data.)  samples/fdclose/use-after-close.sched forces that order.
 *
 * --raw: the owner closes by a raw system call, syscall(SYS_close, fd),
 * which libc's close() never sees (typestate's file model sees it through
 * libc's syscall()).  --inline: by a `syscall` instruction of its own, which
 * no libc function sees (typestate's file model sees it by system-call
 * stops).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char message[] = "hello, reader\n";
#define TOTAL ((int)sizeof(message) - 1)

static int fd;		 /* read end of the pipe */
static bool raw;	 /* --raw */
static bool inline_insn; /* --inline */
static int received;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;

static void *reader(void *arg)
{
	char buf[64];
	ssize_t n;

	(void)arg;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			printf("BUG: read() on a closed descriptor %d: %s\n", fd, strerror(errno));
			fflush(stdout);
			abort();
		}
		pthread_mutex_lock(&lock);
		received += (int)n;
		pthread_cond_signal(&arrived);
		pthread_mutex_unlock(&lock);
	}
	printf("ok: read %d bytes, then end of file\n", received);
	return NULL;
}

/* Has the whole message arrived? */
__attribute__((noinline)) bool message_complete(void)
{
	bool done;

	pthread_mutex_lock(&lock);
	done = received == TOTAL;
	pthread_mutex_unlock(&lock);
	return done;
}

/* close(fd) by a syscall instruction of its own: no libc function. */
__attribute__((noinline)) static long inline_close(int d)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_close), "D"((long)d)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The owner of the descriptor: closes it once the message is in.  It waits
 * to be told, but also looks again every 10 ms on its own. */
static void *owner(void *arg)
{
	(void)arg;
	while (!message_complete()) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 10 * 1000 * 1000;
		if (until.tv_nsec >= 1000 * 1000 * 1000) {
			until.tv_sec++;
			until.tv_nsec -= 1000 * 1000 * 1000;
		}
		pthread_mutex_lock(&lock);
		if (received < TOTAL)
			pthread_cond_timedwait(&arrived, &lock, &until);
		pthread_mutex_unlock(&lock);
	}
	if (inline_insn)
		inline_close(fd); /* the same, past libc altogether */
	else if (raw)
		syscall(SYS_close, fd); /* the same, past libc's close() */
	else
		close(fd); /* BUG: the reader may still be about to read() */
	return NULL;
}

int main(int argc, char **argv)
{
	int p[2];
	pthread_t r, c;

	if (pipe(p) < 0) {
		perror("pipe");
		return 1;
	}
	/* The whole message, then end of file: main is done with the pipe
	 * before either thread starts. */
	if (write(p[1], message, TOTAL) != TOTAL) {
		perror("write");
		return 1;
	}
	close(p[1]);
	fd = p[0];
	raw = argc > 1 && strcmp(argv[1], "--raw") == 0;
	inline_insn = argc > 1 && strcmp(argv[1], "--inline") == 0;
	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&c, NULL, owner, NULL);
	pthread_join(r, NULL);
	pthread_join(c, NULL);
	return 0;
}
