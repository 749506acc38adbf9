/*
 * spawn: the floor of a restart, fork + exec + wait of a program N times.
 *
 *   spawn N PROGRAM [ARGS...]     prints the microseconds one run takes
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n, i;
	int status, devnull;

	if (argc < 3 || (n = atol(argv[1])) <= 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			devnull = open("/dev/null", 1);
			dup2(devnull, 1);
			execv(argv[2], argv + 2);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
			     1e3 / (double)n);
	return 0;
}
