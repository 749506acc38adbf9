/*
 * peek.c: print, in hex, the byte at a symbol's address in a live process.
 *
 *   peek PID SYMBOL_VALUE [FILE]
 *
 * SYMBOL_VALUE is nm's (hex); for a position-independent executable the
 * load address (the executable's mapping at file offset 0) is added.  With
 * FILE, the symbol is in the first mapped file whose path contains FILE
 * (a library: "libc.so") instead of the executable.
 * bench/run uses it to see that cctrace attach has planted its int3.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[64], line[512], exe[512], name[512];
	unsigned long lo, off, base = 0, sym;
	unsigned char byte;
	ssize_t n;
	FILE *maps;
	int fd;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: peek PID SYMBOL_VALUE [FILE]\n");
		return 2;
	}
	sym = strtoul(argv[2], NULL, 16);
	snprintf(path, sizeof(path), "/proc/%s/exe", argv[1]);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return 1;
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/%s/maps", argv[1]);
	maps = fopen(path, "r");
	if (!maps)
		return 1;
	while (fgets(line, sizeof(line), maps)) {
		name[0] = 0;
		if (sscanf(line, "%lx-%*x %*s %lx %*s %*d %511s", &lo, &off, name) == 3 &&
		    off == 0 &&
		    (argc == 4 ? strstr(name, argv[3]) != NULL : strcmp(name, exe) == 0) &&
		    (!base || lo < base))
			base = lo;
	}
	fclose(maps);
	if (sym >= base)
		base = 0; /* not a PIE: the symbol value is the address */
	snprintf(path, sizeof(path), "/proc/%s/mem", argv[1]);
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, &byte, 1, (off_t)(base + sym)) != 1)
		return 1;
	printf("%02x\n", byte);
	return 0;
}
