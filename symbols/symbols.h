/*
 * symbols: names, source lines, variables, types and stacks of a target.
 *
 * A sym_space is one address space seen through its ELF files: the
 * executable and every shared library.  It is built either offline from a
 * program path (before launch, so that a misspelt name is reported before
 * anything runs) or from a live pid (every ELF file in /proc/PID/maps, with
 * its load bias, so addresses are run-time addresses).  Lookups go through
 * libdwfl (elfutils) for symbol tables, line tables and DWARF types, and
 * stacks are unwound with libunwind-ptrace.
 *
 * Every string and sym_type handed out is owned by the space and lives until
 * sym_close().  Functions return 0 on success and -1 when the thing does not
 * exist; they never print.
 */
#ifndef CCTRACE_SYMBOLS_H
#define CCTRACE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sym_space;
struct sym_type;

/* Offline view of PROG and the shared libraries it needs (DT_NEEDED,
 * searched along RUNPATH/RPATH, LD_LIBRARY_PATH and the system directories).
 * Addresses in this view are link-time addresses and are only good for
 * checking that names exist and for variable sizes and types. */
struct sym_space *sym_open_program(const char *path, char *err, size_t errlen);

/* Live view of process pid.  Addresses are run-time addresses. */
struct sym_space *sym_open_pid(pid_t pid, char *err, size_t errlen);

/* Re-read /proc/PID/maps of a live view (after exec or dlopen). */
int sym_refresh(struct sym_space *space);

void sym_close(struct sym_space *space);

/* Entry address of a function or object symbol.  The executable's own
 * definition wins over a library's; defined symbols only. */
int sym_function(struct sym_space *space, const char *name, uint64_t *addr);

/* The closest known function (or variable) name to a misspelt one, by edit
 * distance, for "did you mean" messages.  NULL when nothing is close. */
const char *sym_suggest_function(struct sym_space *space, const char *name);
const char *sym_suggest_variable(struct sym_space *space, const char *name);

/* Call cb for every function (kind 0) or global variable (kind 1) name
 * that starts with prefix, for completion; a name may come more than once. */
void sym_each_name(struct sym_space *space, int kind, const char *prefix,
		   void (*cb)(const char *name, void *ctx), void *ctx);

/* Addresses where source line FILE:LINE begins (is_stmt rows that start the
 * line; a line may have several, e.g. an inlined or unrolled copy).  FILE
 * may be a basename or a path suffix.  Fills up to max, sets *n to the
 * number found.  -1 when the file is unknown or the line has no code. */
int sym_line(struct sym_space *space, const char *file, int line, uint64_t *addrs, size_t max,
	     size_t *n);

struct sym_loc {
	const char *func;     /* NULL if no symbol covers the address */
	uint64_t func_offset; /* addr - function start */
	const char *file;     /* basename of the source file, NULL if no line info */
	int line;	      /* 0 if no line info */
	const char *module;   /* basename of the ELF file */
	const char *path;     /* the source file as DWARF names it (for listing) */
};

/* Function and source line of an address. Always fills *out (with NULLs
 * where nothing is known); returns -1 if no module covers addr. */
int sym_describe(struct sym_space *space, uint64_t addr, struct sym_loc *out);

/* Module, function and offset only (file and line left empty): reads no
 * debug information, so it stays cheap for libraries whose DWARF is large
 * or compressed. */
int sym_describe_function(struct sym_space *space, uint64_t addr, struct sym_loc *out);

/* The function a PLT stub at addr jumps to ("foo" for foo@plt); the name
 * is owned by the space.  -1 if addr is not a PLT stub. */
int sym_plt_function(struct sym_space *space, uint64_t addr, const char **name);

/* --- variables and types (DWARF) --- */

enum sym_type_kind {
	SYM_T_VOID,
	SYM_T_BOOL,
	SYM_T_SIGNED, /* signed integer, char included when signed */
	SYM_T_UNSIGNED,
	SYM_T_FLOAT,
	SYM_T_POINTER,
	SYM_T_ARRAY,
	SYM_T_STRUCT, /* struct or union */
	SYM_T_ENUM,
	SYM_T_FUNCTION,
};

struct sym_var {
	uint64_t addr;
	const struct sym_type *type;
};

/* A global or file-static variable with a static address (DW_OP_addr). */
int sym_variable(struct sym_space *space, const char *name, struct sym_var *out);

/* The value of an enumerator constant declared anywhere in the program. */
int sym_enumerator(struct sym_space *space, const char *name, int64_t *value);

/* Typedefs and cv-qualifiers are looked through by every accessor below. */
enum sym_type_kind sym_type_kind(const struct sym_type *type);
uint64_t sym_type_size(const struct sym_type *type);
const char *sym_type_name(const struct sym_type *type); /* "struct account", "int *" */
/* Pointee of a pointer, element of an array; NULL otherwise (or void *). */
const struct sym_type *sym_type_target(const struct sym_type *type);
/* Elements of an array, 0 if unknown. */
uint64_t sym_type_count(const struct sym_type *type);
/* Member of a struct/union by name; sets *offset (bytes from its start). */
const struct sym_type *sym_type_member(const struct sym_type *type, const char *name,
				       uint64_t *offset);

/* --- stacks (libunwind-ptrace) --- */

struct sym_frame {
	uint64_t pc;	    /* frame 0: the current pc; outer frames: the return address */
	uint64_t sp;	    /* the stack pointer in that frame */
	struct sym_loc loc; /* function and module of pc (outer frames: of pc - 1, the
			     * call); file and line are left to sym_describe */
};

/* Unwind thread tid, which must be in a ptrace stop.  Returns the number of
 * frames stored (at most max), or -1. */
int sym_backtrace(struct sym_space *space, pid_t tid, struct sym_frame *frames, int max);

#endif
