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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct sym_space;
struct sym_type;

/* Offline view of PROG and the shared libraries it needs (DT_NEEDED,
 * searched along RUNPATH/RPATH, LD_LIBRARY_PATH and the system directories).
 * Addresses in this view are link-time addresses and are only good for
 * checking that names exist and for variable sizes and types. */
struct sym_space *sym_open_program(const char *path, char *err, size_t errlen);

/* Live view of process pid.  Addresses are run-time addresses. */
struct sym_space *sym_open_pid(pid_t pid, char *err, size_t errlen);

/* Why the executable's own names cannot be found, for a "no function"
 * message: it was deleted after the process started (a live view), or it
 * has no symbol table and no debug symbols were found (stripped).  Writes
 * the reason into buf and returns 0, or returns -1 when neither applies.
 * (A 32-bit or non-x86-64 program is refused by the open functions.) */
int sym_exe_problem(struct sym_space *space, char *buf, size_t len);

/* Re-read /proc/PID/maps of a live view (after exec or dlopen). */
int sym_refresh(struct sym_space *space);

void sym_close(struct sym_space *space);

/* Edit distance (Levenshtein with adjacent swaps counting 1) between A[0..LA)
 * and B[0..LB), for every "did you mean" in cctrace; UINT_MAX if out of
 * memory.  Needs no space: it lives here because symbols/ is the lowest
 * module that cli/ and policy/ both use. */
unsigned sym_edit_distance(const char *a, size_t la, const char *b, size_t lb);

/* Entry address of a function or object symbol.  The executable's own
 * definition wins over a library's; defined symbols only. */
int sym_function(struct sym_space *space, const char *name, uint64_t *addr);

/* Is the definition sym_function finds for name a library's static
 * (local) function?  A C++ function of the program that is shown by that
 * name wins over it. */
bool sym_function_is_library_static(struct sym_space *space, const char *name);

/* The functions a C++ name as shown (sym_loc.pretty: qualified, without
 * parameters, "bank::Account::deposit", or a global function's "adjust")
 * stands for: every overload, each function once however many symbols
 * alias it.  Up to max of their symbols go into symbols[], and their whole
 * demangled names, parameters and all, into signatures[] (if not NULL);
 * returns how many there are, 0 for a name that names none. */
int sym_qualified(struct sym_space *space, const char *qualified, const char **symbols,
		  const char **signatures, size_t max);

/* The shown names that end with name at a scope's boundary, name itself
 * left out (`bank::Account::withdraw` for `Account::withdraw`, as gdb's
 * `break Account::withdraw` finds it): one per function, sorted, up to max
 * into shown[]; returns how many there are. */
size_t sym_qualified_suffix(struct sym_space *space, const char *name, const char **shown,
			    size_t max);

/* The shown names of a template's instances that name gives without
 * their template arguments (`worker` for `worker<int>` and
 * `worker<double>`, `Counter::add` for `tally::Counter<long>::add`): as
 * sym_qualified_suffix. */
size_t sym_template_instances(struct sym_space *space, const char *name, const char **shown,
			      size_t max);

/* sym_function, or else the one function a C++ name as shown stands for
 * (sym_qualified): how a schedule's names are found.  -1: none, or
 * overloads. */
int sym_function_named(struct sym_space *space, const char *name, uint64_t *addr);

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
 * may be a basename or a path suffix.  Fills up to max and sets *n to the
 * number found, which may be more: ask again with room for them all.  -1
 * when the file is unknown or the line has no code. */
int sym_line(struct sym_space *space, const char *file, int line, uint64_t *addrs, size_t max,
	     size_t *n);
/* Why sym_line found nothing: -1 if no compile unit has code from FILE;
 * else 0, with the nearest lines of FILE before and after LINE that have
 * code (0 where there is none). */
int sym_line_neighbours(struct sym_space *space, const char *file, int line, int *before,
			int *after);

struct sym_loc {
	const char *func; /* NULL if no symbol covers the address */
	/* func as a person reads it: a C++ name demangled, without its
	 * parameter list ("Account::deposit"); func itself for C; NULL with
	 * func.  Schedules and JSON keep func, which finds the symbol again. */
	const char *pretty;
	uint64_t func_offset; /* addr - function start */
	uint64_t func_size;   /* the symbol's size (st_size), 0 if it has none */
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

/* The name a schedule gives the function loc is in: its shown name when
 * that stands for this function alone (a template's or a lambda's too,
 * which the schedule quotes), else its symbol. */
const char *sym_schedule_name(struct sym_space *space, const struct sym_loc *loc);

/* Where the program's own code has function name (its symbol, or its
 * DWARF name in C) inlined: the entry of each copy, as many as fit in
 * sites[max] (NULL, 0: counted only).  Returns how many there are.
 * enter(F) stops there too; no return or call of F is seen there. */
size_t sym_inline_sites(struct sym_space *space, const char *name, uint64_t *sites, size_t max);

/* The inlined calls a live pc is in, innermost first: each copy's
 * function, and where its caller called it (the caller's line: for the
 * next copy out, or the real frame's function).  At most max; returns
 * how many.  The program's own modules only, as sym_inline_sites. */
struct sym_inline_frame {
	const char *func;
	const char *call_file; /* basename; NULL if unknown */
	int call_line;
};
int sym_inlined_frames(struct sym_space *space, uint64_t pc, struct sym_inline_frame *out, int max);

/* The function a PLT stub at addr jumps to ("foo" for foo@plt); the name
 * is owned by the space.  -1 if addr is not a PLT stub. */
int sym_plt_function(struct sym_space *space, uint64_t addr, const char **name);

/* An address no function covers (a stripped program's code, a PLT stub)
 * as a schedule names it, at(MODULE+0xOFFSET): the basename of the ELF
 * file it is in (owned by the space) and its offset there, the file's own
 * address, which no load address changes.  -1 if no module covers addr. */
int sym_module_offset(struct sym_space *space, uint64_t addr, const char **module,
		      uint64_t *offset);
/* ...and back: the address of offset in the module whose file's basename
 * is module; -1 if there is none, or offset is outside it. */
int sym_module_named(struct sym_space *space, const char *module, uint64_t offset, uint64_t *addr);

/* A statically linked executable's own code (symbols/static.c): the
 * address ranges its compile units cover, apart from the libc linked into
 * it, whose archive carries no debugging information; without debugging
 * information, the extents of the functions of its symbol table that no
 * member of glibc's or gcc's static archives it linked defines.  Sets
 * *ranges (owned by the space; in address order, apart) and *n, and
 * returns 0; -1 when the executable is dynamically linked (its libraries
 * are files of their own), or stripped: then all its text is its own. */
struct sym_range {
	uint64_t lo, hi;
};
int sym_static_own_code(struct sym_space *space, const struct sym_range **ranges, size_t *n);

/* Every module's executable sections (.init, .plt, .text, .fini...; a
 * module without section headers: its executable segments), in address
 * order: where a linear decode may start, as each begins with an
 * instruction and the gaps between them hold none (symbols/code.c).
 * Offline, each module's are at its link-time addresses, so two modules'
 * may overlap.  Sets *ranges (owned by the space, valid until its next
 * refresh) and *n; 0, or -1 when memory is exhausted. */
int sym_code_sections(struct sym_space *space, const struct sym_range **ranges, size_t *n);

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
	uint64_t addr; /* none when no_address */
	const struct sym_type *type;
	/* Where memory does not hold the value, value does: a variable that
	 * lives in a register here (no_address), or a parameter on its
	 * function's first instructions, whose slot at addr the prologue has
	 * not stored yet (sym_variable_at only). */
	bool value_known;
	bool no_address;
	uint64_t value;
};

/* A global or file-static variable with a static address (DW_OP_addr). */
int sym_variable(struct sym_space *space, const char *name, struct sym_var *out);

/* The registers and memory of one stopped thread, for location expressions. */
struct sym_thread_view {
	pid_t tid;
	const struct user_regs_struct *regs; /* <sys/user.h>; fs_base is the thread pointer */
	/* Read 8 bytes of target memory at addr (any alignment); 0 or -1. */
	int (*peek)(void *ctx, uint64_t addr, uint64_t *value);
	void *ctx;
	/* NULL, or the function whose inlined copy begins at the pc and is the
	 * innermost scope to look in: where copies nest (leaf inlined into mid
	 * at mid's first instruction), enter(mid) reads mid's variables */
	const char *inlined;
};

/* Resolve NAME as the thread sees it at regs->rip (a live view only), in C
 * scope order: a local or parameter of the innermost lexical block, inlined
 * subroutine or function that contains the pc (a block's variables count
 * from the block's first instruction, not from their declaration line; in
 * an inlined body, the caller's locals are not visible; a pc in a system
 * library such as libc has no locals here), then a variable of
 * the pc's compilation unit, then a thread-local variable (__thread) of the
 * executable, then a global (sym_variable), then a thread-local variable of
 * a library loaded at startup (DWARF, or the ELF STT_TLS symbol when there
 * is no DWARF).  Only the innermost frame is understood: regs must be the
 * thread's current registers.  On success *out gets the run-time address
 * and type, or where a register holds the variable, its value with
 * no_address, the reason left in err (e.g. "'count' lives in register rbx
 * at this point").  Returns 0; -1 when the name is not visible at that pc
 * or has neither address nor value there, with a one-line reason in err,
 * e.g. "no variable 'x' in scope at worker (fixture.c:12)". */
int sym_variable_at(struct sym_space *space, const char *name, const struct sym_thread_view *view,
		    struct sym_var *out, char *err, size_t errlen);

/* Offline check (before launch): is NAME a local/parameter of some function,
 * a TLS variable, or a global?  Locals of system libraries (libc, ld.so)
 * do not count.  When it is more than one: the executable's
 * locals, then its TLS, then globals, then libraries' locals and TLS.
 * *type (may be NULL) gets the type of the variable chosen (for a local,
 * the first one of that name the DWARF index met); NULL for NONE. */
enum sym_var_scope { SYM_SCOPE_NONE, SYM_SCOPE_GLOBAL, SYM_SCOPE_TLS, SYM_SCOPE_LOCAL };
enum sym_var_scope sym_variable_scope(struct sym_space *space, const char *name,
				      const struct sym_type **type);
/* Is NAME's type known only where a thread stops?  True when it is a local
 * or parameter of functions that declare it with types of different shapes
 * (p a struct P * here, a struct Q * there), or a local whose type differs
 * from a global's or TLS variable's of that name.  Such a name is typed at
 * run time alone. */
bool sym_variable_varies(struct sym_space *space, const char *name);

/* The value of an enumerator constant declared anywhere in the program. */
int sym_enumerator(struct sym_space *space, const char *name, int64_t *value);

/* Typedefs and cv-qualifiers are looked through by every accessor below. */
enum sym_type_kind sym_type_kind(const struct sym_type *type);
uint64_t sym_type_size(const struct sym_type *type);
const char *sym_type_name(const struct sym_type *type); /* "struct account", "int *" */
/* Pointee of a pointer, element of an array; NULL otherwise (or void *). */
const struct sym_type *sym_type_target(const struct sym_type *type);
/* The type "pointer to target", as '&' makes it (made once, owned by the
 * space); NULL for NULL. */
const struct sym_type *sym_type_pointer_to(const struct sym_type *target);
/* Elements of an array, 0 if unknown. */
uint64_t sym_type_count(const struct sym_type *type);
/* Member of a struct/union by name, a base class's included; sets *offset
 * (bytes from its start). */
const struct sym_type *sym_type_member(const struct sym_type *type, const char *name,
				       uint64_t *offset);
/* ...and where it is a bitfield, *bit_size bits from bit *bit_offset (0-7)
 * of the byte at *offset; *bit_size 0 for a whole member. */
const struct sym_type *sym_type_member_bits(const struct sym_type *type, const char *name,
					    uint64_t *offset, unsigned *bit_offset,
					    unsigned *bit_size);
/* The parts of a struct, union or class in declaration order: its base
 * classes (base, no name) and its members (not the static ones). */
struct sym_member {
	const char *name; /* NULL for a base class */
	const struct sym_type *type;
	uint64_t offset;	       /* bytes from the start */
	unsigned bit_offset, bit_size; /* a bitfield's bits; bit_size 0 for a whole one */
	bool base;
};
typedef int (*sym_member_fn)(void *ctx, const struct sym_member *m);
/* fn for each part until one returns non-zero, which is returned; 0. */
int sym_type_each_member(const struct sym_type *type, sym_member_fn fn, void *ctx);
/* The name of the enumerator of an enum type with this value; NULL. */
const char *sym_type_enumerator_name(const struct sym_type *type, int64_t value);
/* A bool, integer, enum or pointer: what reads as one integer. */
bool sym_type_is_integer(const struct sym_type *type);
/* A signed integer, or an enum whose underlying type is signed. */
bool sym_type_is_signed(const struct sym_type *type);
/* A C++ reference (& or &&): a pointer that the language follows itself. */
bool sym_type_is_reference(const struct sym_type *type);

/* --- stacks (libunwind-ptrace) --- */

struct sym_frame {
	uint64_t pc;	    /* frame 0: the current pc; outer frames: the return address */
	uint64_t sp;	    /* the stack pointer in that frame */
	struct sym_loc loc; /* function and module of pc (outer frames: of pc - 1, the
			     * call); file and line are left to sym_describe */
	bool exact;	    /* loc is pc's own (frame 0, a frame a signal interrupted) */
};

/* Unwind thread tid, which must be in a ptrace stop.  Returns the number of
 * frames stored (at most max), or -1. */
int sym_backtrace(struct sym_space *space, pid_t tid, struct sym_frame *frames, int max);

#endif
