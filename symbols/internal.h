/*
 * Declarations shared by the files of the symbols module.  Nothing here is
 * visible outside symbols/.
 *
 * A sym_space owns one Dwfl session (plus any sessions retired by
 * sym_refresh, kept so that strings and types handed out earlier stay
 * valid), an arena for everything it hands out, and a few lazily built
 * indexes: variables and enumerators by name, sym_type objects by DIE, and
 * a direct-mapped cache of sym_describe results.
 */
#ifndef CCTRACE_SYMBOLS_INTERNAL_H
#define CCTRACE_SYMBOLS_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>

#include "symbols/symbols.h"

/* --- arena: bump allocator, freed all at once by sym_close --- */

struct arena_chunk;

struct symi_arena {
	struct arena_chunk *head;
};

void *symi_arena_alloc(struct symi_arena *a, size_t size);
char *symi_arena_strdup(struct symi_arena *a, const char *s);
void symi_arena_free(struct symi_arena *a);

/* --- string map: open addressing, keys are not copied --- */

struct strmap_ent {
	const char *key;
	void *val;
};

struct strmap {
	struct strmap_ent *slots;
	size_t cap, len;
};

void *symi_strmap_get(const struct strmap *m, const char *key);
int symi_strmap_put(struct strmap *m, const char *key, void *val);
/* Room for n keys without growing: 0, or -1 when memory is exhausted. */
int symi_strmap_reserve(struct strmap *m, size_t n);
void symi_strmap_free(struct strmap *m);

/* Room for element n of the array *items (a T **) of capacity *cap,
 * doubled as needed: 0, or -1 when memory is exhausted. */
int symi_reserve(void *items, size_t *cap, size_t n, size_t size);

/* --- one ELF module of the space --- */

struct sym_mod {
	Dwfl_Module *mod;
	const char *name;     /* path as reported to dwfl */
	const char *base;     /* basename of name */
	Dwarf_Addr low, high; /* dwfl address range */
	bool is_exe;
	bool indexed;		       /* DWARF globals and enumerators indexed */
	struct plt_layout *plt_layout; /* plt.c's, read on first use */
};

/* --- sym_type: a DWARF type (or a synthetic one for ELF-only symbols) --- */

struct sym_type {
	Dwarf_Die die;	/* as referenced: may be a typedef or qualifier */
	Dwarf_Die real; /* die with typedefs and qualifiers looked through */
	Dwarf *dbg;	/* with off and dim: the interning key */
	Dwarf_Off off;
	bool has_die; /* false: synthetic type, see kind/size below */
	bool is_void; /* DW_AT_type absent or DW_TAG_unspecified_type */
	unsigned dim; /* arrays: index of the first subrange this covers */
	enum sym_type_kind kind;
	uint64_t size;
	uint64_t count;
	bool is_signed;			/* a signed integer, or an enum over one */
	bool is_reference;		/* C++ & or && (kind SYM_T_POINTER) */
	const struct sym_type *elem;	/* synthetic arrays and pointers only */
	const struct sym_type *pointer; /* sym_type_pointer_to's, made once */
	char *name;			/* built on first sym_type_name */
	struct sym_space *space;
};

struct type_map {
	struct sym_type **slots;
	size_t cap, len;
};

/* --- sym_describe cache --- */

#define DESC_CACHE_SIZE 4096

struct desc_ent {
	uint64_t addr;
	int rc;
	bool valid;
	struct sym_loc loc;
};

struct retired {
	Dwfl *dwfl;
	struct retired *next;
};

struct sym_space {
	Dwfl *dwfl;
	pid_t pid;	      /* 0 for an offline view */
	char *path;	      /* offline: the program */
	struct sym_mod *mods; /* the executable first */
	size_t nmods;
	struct retired *retired;
	struct symi_arena arena;

	struct strmap vars;   /* name -> struct var_ent */
	struct strmap enums;  /* name -> int64_t */
	struct strmap tls;    /* name -> struct var_ent: CU-level __thread variables */
	struct strmap locals; /* name -> struct var_ent: first local or parameter so named */
	struct strmap plain;  /* "name@@VER" -> "name" */
	struct strmap funcs;  /* sym_function's index: plain name -> struct func_ent */
	bool funcs_indexed;
	struct strmap aliases; /* public_alias's answers: name -> struct alias_ent */
	struct strmap inlined; /* inline.c: name -> struct inline_ent, once asked */
	/* demangle.c: mangled name -> the name shown (both in the arena; the
	 * same whatever the modules, so kept across resets) */
	struct strmap pretty;
	/* demangle.c: shown name -> struct qual_ent, every C++ function */
	struct strmap qualified;
	bool qualified_indexed;
	bool exe_indexed, all_indexed;

	struct type_map types;
	struct sym_type *void_type;
	struct desc_ent *desc; /* DESC_CACHE_SIZE entries */

	/* static.c: a static executable's own code; known 1, none -1, unread 0 */
	struct sym_range *own_code;
	size_t nown_code;
	int own_code_known;

	/* code.c: every module's executable sections, in address order */
	struct sym_range *code;
	size_t ncode;
	bool code_known;

	void *unw_as; /* unw_addr_space_t, created on first backtrace */
	/* unwind.c: the executable has no .eh_frame_hdr (0: not looked yet,
	 * 1: it has, -1: it has not), and the Dwfl libdw's unwinder was
	 * attached to for it */
	int exe_eh_hdr;
	Dwfl *unwind_dwfl;
	struct thread_db *thread_db; /* libthread_db agent, created on first library TLS */
};

/* linked.c: names of a static executable that the system's static
 * archives define.  names maps each name the executable defines to
 * SYMI_NAME_DEFINED; those defined by an archive member the executable
 * linked whole become SYMI_NAME_SYSTEM, and the member's file name
 * without extension (a local symbol's STT_FILE) goes into stems.  0, or
 * -1 when memory is exhausted. */
enum { SYMI_NAME_DEFINED = 1, SYMI_NAME_SYSTEM = 2 };
int symi_mark_linked_members(struct symi_arena *arena, struct strmap *names, struct strmap *stems);
/* demangle.c: the name shown for symbol name: demangled, without its
 * parameter list, for a C++ name; name itself otherwise (and when out of
 * memory). */
const char *symi_pretty_name(struct sym_space *s, const char *name);
/* The name a schedule would give symbol name: a mangled one (not of
 * another version: no '@') as shown, NULL when a schedule cannot hold
 * that (a template's, an operator's); any other name itself. */
/* The name a symbol is shown by: demangled, parameters left out. */
const char *symi_shown_name_of(struct sym_space *s, const char *name);
const char *symi_writable_name_of(struct sym_space *s, const char *name);
/* name without its directory and last extension, in the arena */
char *symi_file_stem(struct symi_arena *a, const char *name);

/* static.c: qsort's order of struct sym_range, by lo */
int symi_range_by_lo(const void *a, const void *b);

/* exe.c */
/* -1 with a message naming the file as `shown` if path is an ELF file
 * that is not x86-64 (32-bit, another machine); 0 otherwise. */
int symi_check_elf_kind(const char *path, const char *shown, char *err, size_t errlen);

/* space.c */
int symi_space_load_modules(struct sym_space *s);
Dwarf_Addr symi_mod_elf_bias(const struct sym_mod *m);
/* Is die (a function, or a copy of one through its abstract origin) the
 * function a schedule names name: its symbol, its shown C++ name (the name
 * of a C++ function with no symbol of its own), or in C its name?
 * (inline.c) */
bool symi_die_named(struct sym_space *s, Dwarf_Die *die, const char *name);
/* The module of s that is mod; NULL if none. */
struct sym_mod *symi_mod_of(struct sym_space *s, Dwfl_Module *mod);
bool symi_mod_is_system(const struct sym_mod *m);
uint64_t symi_space_out_addr(const struct sym_space *s, const struct sym_mod *m, Dwarf_Addr a);
void symi_space_reset_caches(struct sym_space *s);

/* lookup.c */
const char *symi_plain_name(struct sym_space *s, const char *name);

bool symi_suggest_consider(const char *query, const char *cand, unsigned *best_d,
			   const char **best);
typedef int (*symtab_cb)(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
			 void *arg);
int symi_space_each_symbol(struct sym_space *s, struct sym_mod *m, symtab_cb cb, void *arg);

/* types.c */
void symi_types_free(struct sym_space *s);
/* The type DIE refers to with DW_AT_type (void when none). */
const struct sym_type *symi_type_of(struct sym_space *s, Dwarf_Die *die);
/* An unsigned integer (or byte array) type of SIZE bytes, for ELF-only symbols. */
const struct sym_type *symi_elf_object_type(struct sym_space *s, uint64_t size);
/* Build the DWARF name indexes (executable only, or every module). */
void symi_ensure_index(struct sym_space *s, bool all);
/* A CU-level __thread variable, or some function's local or parameter (the
 * first the index met), by name: its DIE and the index of its module.  ALL
 * false indexes and searches the executable only (its entries win anyway). */
bool symi_tls_variable(struct sym_space *s, const char *name, bool all, Dwarf_Die *die,
		       size_t *mod);
bool symi_local_variable(struct sym_space *s, const char *name, bool all, Dwarf_Die *die,
			 size_t *mod);

/* locexpr.c */
/* Everything the location expression of one variable may refer to. */
struct symi_eval {
	struct sym_space *s;
	struct sym_mod *m; /* module of the variable (TLS, DW_OP_addr) */
	Dwarf_Addr bias;   /* of m's DWARF */
	const struct sym_thread_view *view;
	Dwarf_Die *func; /* the concrete DW_TAG_subprogram around the pc, for the frame base */
	const char *name;
	char *err;
	size_t errlen;
};

/* types.c: where member (or base class) M of an aggregate starts, in bits
 * from the aggregate's start; *bits its width if it is a bitfield, else 0.
 * False when its place is an expression not worked out. */
bool symi_member_bit_offset(Dwarf_Die *m, uint64_t *at_bit, unsigned *bits);
/* lookup.c: the CU of ADDR in MOD, found by .debug_aranges or else by
 * each CU's ranges (clang writes no aranges); *bias as dwfl's. */
Dwarf_Die *symi_addrdie(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias);
/* Run-time address of variable DIE VAR; -1 with "'name' <why>" in c->err. */
int symi_variable_address(struct symi_eval *c, Dwarf_Die *var, uint64_t *addr);
/* ...or, where a register holds it or it is computed, its value
 * (out->no_address and value_known, the reason it has no address in
 * c->err): -1 only when it has neither. */
int symi_variable_location(struct symi_eval *c, Dwarf_Die *var, struct sym_var *out);
/* locexpr.c: frame 0's canonical frame address, from the CFI at its pc. */
int symi_frame_cfa(struct symi_eval *c, uint64_t *cfa);
/* entry.c: is the DWARF address PC in FUNC before the end of its prologue
 * (the first line-table row after its entry)?  *end is that row's. */
bool symi_prologue_end(Dwarf_Die *func, Dwarf_Addr pc, Dwarf_Addr *end);
/* entry.c: 1 with *value when VAR is a parameter of c->func that the pc is
 * before the prologue's store of (its value is in its argument register);
 * 0 when memory holds it; -1 when it is not stored yet and its register
 * is not worked out (the reason in c->err). */
int symi_entry_parameter(struct symi_eval *c, Dwarf_Die *var, uint64_t *value);
/* Start of module M's TLS block in the thread; the reason names the variable. */
int symi_eval_tls_base(struct symi_eval *c, struct sym_mod *m, uint64_t *base);
/* Sets c->err to "'name' " followed by FMT; returns -1. */
int symi_eval_fail(struct symi_eval *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* tls.c */
/* Start of module M's TLS block in the thread VIEW shows; -1 with a reason. */
int symi_tls_block(struct sym_space *s, struct sym_mod *m, const struct sym_thread_view *view,
		   uint64_t *base, char *err, size_t errlen);
void symi_tls_free(struct sym_space *s);

/* unwind.c */
void symi_unwind_flush(struct sym_space *s);
void symi_unwind_free(struct sym_space *s);

#endif
