/*
 * Variables, enumerators and types, from DWARF (libdw).
 *
 * Nothing is read at open time.  The first sym_variable, sym_enumerator or
 * sym_suggest_variable walks the executable's DWARF once and builds the
 * name indexes: CU-level variables whose DW_AT_location is a single
 * DW_OP_addr (globals and file statics; an external definition wins over a
 * static one of the same name), every enumerator, and for scope.c the
 * CU-level __thread variables (a location ending in DW_OP_form_tls_address)
 * and the locals and parameters of every function outside the system
 * libraries (first one met wins: only the name and a type matter there,
 * addresses need a stopped thread).  Libraries are
 * indexed the same way, but only when a name is missing from the executable
 * (a library without debug info costs nothing).  When no DWARF knows a
 * variable, its ELF object symbol is used and its type is synthesised: an
 * unsigned integer of the symbol's size when that is 1, 2, 4 or 8 bytes,
 * otherwise an array of that many unsigned chars.
 *
 * A sym_type wraps a DIE and is interned by (Dwarf, DIE offset, dim), so
 * asking for the same member a million times allocates one object.  "dim"
 * handles multi-dimensional arrays, which DWARF describes as one array DIE
 * with several subranges: the element type of int[2][3] is the same DIE
 * with dim 1.  Typedefs and cv-qualifiers are looked through everywhere,
 * except that a typedef naming an anonymous struct, union or enum gives
 * its name to sym_type_name.  Bit-field members report the offset of the
 * byte holding their first bit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

#define MAX_DEPTH 32

struct var_ent {
	Dwarf_Die die;
	uint64_t addr;
	size_t modrank;
	bool external;
	/* locals: another local of this name has a type of another shape
	 * (same_shape), so a check before launch cannot know its type */
	bool varies;
};

/* --- small DIE helpers --- */

static bool die_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute at;

	return dwarf_attr_integrate(die, DW_AT_type, &at) && dwarf_formref_die(&at, out);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;

	return dwarf_attr_integrate(die, DW_AT_name, &at) ? dwarf_formstring(&at) : NULL;
}

static bool die_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *v)
{
	Dwarf_Attribute at;

	return dwarf_attr_integrate(die, name, &at) && dwarf_formudata(&at, v) == 0;
}

static bool is_transparent(int tag)
{
	return tag == DW_TAG_typedef || tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

/* Look through typedefs and qualifiers; false if that ends at void. */
static bool strip(Dwarf_Die *die, Dwarf_Die *out)
{
	int depth = 0;

	*out = *die;
	while (is_transparent(dwarf_tag(out)) && depth++ < MAX_DEPTH)
		if (!die_type(out, out))
			return false;
	return dwarf_tag(out) != DW_TAG_unspecified_type;
}

/* --- the variable and enumerator index --- */

/* The static address of a DW_OP_addr (or DW_OP_addrx) location. */
static bool static_address(Dwarf_Die *var, Dwarf_Addr *addr)
{
	Dwarf_Attribute at, res;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(var, DW_AT_location, &at) || dwarf_getlocation(&at, &ops, &n) != 0 ||
	    n != 1)
		return false;
	if (ops[0].atom == DW_OP_addr) {
		*addr = ops[0].number;
		return true;
	}
	if (ops[0].atom != DW_OP_addrx && ops[0].atom != DW_OP_GNU_addr_index)
		return false;
	return dwarf_getlocation_attr(&at, ops, &res) == 0 && dwarf_formaddr(&res, addr) == 0;
}

/* A location that ends in DW_OP_form_tls_address: an offset in the module's TLS block. */
static bool tls_location(Dwarf_Die *var)
{
	Dwarf_Attribute at;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(var, DW_AT_location, &at) || dwarf_getlocation(&at, &ops, &n) != 0 || !n)
		return false;
	return ops[n - 1].atom == DW_OP_form_tls_address ||
	       ops[n - 1].atom == DW_OP_GNU_push_tls_address;
}

/* Do the types of variables A and B read alike: the same tags, names and
 * sizes along their DW_AT_type chains?  Two compilation units declare one
 * "struct P *" with two DIEs, which compare equal here. */
static bool same_shape(Dwarf_Die *a, Dwarf_Die *b)
{
	Dwarf_Die ta = *a, tb = *b;
	int i;

	for (i = 0; i < MAX_DEPTH; i++) {
		bool more_a = die_type(&ta, &ta), more_b = die_type(&tb, &tb);
		const char *na, *nb;

		if (more_a != more_b)
			return false;
		if (!more_a)
			return true;
		na = die_name(&ta);
		nb = die_name(&tb);
		if (dwarf_tag(&ta) != dwarf_tag(&tb) || (!na != !nb) || (na && strcmp(na, nb)) ||
		    dwarf_bytesize(&ta) != dwarf_bytesize(&tb))
			return false;
	}
	return true;
}

/* First wins: the executable's entries are indexed before the libraries'.
 * A later local of the same name only tells whether the name's type
 * varies from scope to scope. */
static void index_first(struct sym_space *s, struct strmap *map, size_t rank, Dwarf_Die *die,
			const char *name)
{
	struct var_ent *e;

	if (!name)
		return;
	e = symi_strmap_get(map, name);
	if (e) {
		if (map == &s->locals && !e->varies && !same_shape(&e->die, die))
			e->varies = true;
		return;
	}
	e = symi_arena_alloc(&s->arena, sizeof(*e));
	if (!e)
		return;
	e->die = *die;
	e->modrank = rank;
	symi_strmap_put(map, name, e);
}

static bool is_named_scope(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* SCOPE's name as a qualifier: "a::", "(anonymous namespace)::". */
static char *qualifier(const char *outer, Dwarf_Die *scope)
{
	const char *name = die_name(scope);
	char *q = NULL;

	if (asprintf(&q, "%s%s::", outer,
		     name				    ? name
		     : dwarf_tag(scope) == DW_TAG_namespace ? "(anonymous namespace)"
							    : "(anonymous)") < 0)
		return NULL;
	return q;
}

/* The qualified name of C++ variable DIE: one defined outside its
 * namespace or class names its declaration there (DW_AT_specification),
 * whose enclosing scopes qualify it (a::count, Acc::instances); one
 * defined inside has PREFIX.  To free; NULL when out of memory. */
static char *qualified_name(Dwarf_Die *die, const char *prefix, const char *name)
{
	Dwarf_Die spec, *scopes = NULL;
	Dwarf_Attribute at;
	char *q = strdup(prefix), *next;
	int n, i;

	if (q && dwarf_attr(die, DW_AT_specification, &at) && dwarf_formref_die(&at, &spec)) {
		n = dwarf_getscopes_die(&spec, &scopes);
		for (i = n - 1; i >= 1 && q; i--) {
			if (!is_named_scope(dwarf_tag(&scopes[i])))
				continue;
			next = qualifier(q, &scopes[i]);
			free(q);
			q = next;
		}
		free(scopes);
	}
	if (q && asprintf(&next, "%s%s", q, name) >= 0) {
		free(q);
		return next;
	}
	free(q);
	return NULL;
}

static void index_variable(struct sym_space *s, struct sym_mod *m, size_t rank, Dwarf_Die *die,
			   Dwarf_Addr bias, const char *prefix)
{
	const char *plain = die_name(die), *name;
	struct var_ent *old, *e;
	Dwarf_Addr a;
	bool ext;
	char *full;

	if (!plain)
		return;
	full = qualified_name(die, prefix, plain);
	name = full ? symi_arena_strdup(&s->arena, full) : NULL;
	free(full);
	if (!name)
		return;
	if (tls_location(die))
		index_first(s, &s->tls, rank, die, name);
	if (!static_address(die, &a))
		return;
	ext = dwarf_hasattr_integrate(die, DW_AT_external);
	old = symi_strmap_get(&s->vars, name);
	if (old && (old->modrank < rank || (old->modrank == rank && (old->external || !ext))))
		return;
	e = symi_arena_alloc(&s->arena, sizeof(*e));
	if (!e)
		return;
	e->die = *die;
	e->addr = symi_space_out_addr(s, m, a + bias);
	e->modrank = rank;
	e->external = ext;
	symi_strmap_put(&s->vars, name, e);
}

static bool enum_is_signed(Dwarf_Die *enumeration);

static void put_enumerator(struct sym_space *s, const char *name, int64_t v)
{
	int64_t *slot;

	if (symi_strmap_get(&s->enums, name))
		return;
	slot = symi_arena_alloc(&s->arena, sizeof(*slot));
	name = slot ? symi_arena_strdup(&s->arena, name) : NULL;
	if (!name)
		return;
	*slot = v;
	symi_strmap_put(&s->enums, name, slot);
}

/* TYPE's enumerators, under their plain names and their qualified ones
 * (ns::Light, and E8::HI for an enum class), read as the enum's underlying
 * type reads: gcc gives 0xF0000000u of an unsigned enum as a DW_FORM_data4
 * that a signed read takes for negative. */
static void index_enumerators(struct sym_space *s, Dwarf_Die *type, const char *prefix)
{
	bool is_signed = enum_is_signed(type), is_class = dwarf_hasattr(type, DW_AT_enum_class);
	const char *ename = die_name(type);
	Dwarf_Word size = 8, u;
	Dwarf_Attribute at;
	Dwarf_Sword v;
	Dwarf_Die c;
	char *q;

	die_udata(type, DW_AT_byte_size, &size);
	if (dwarf_child(type, &c) != 0)
		return;
	do {
		const char *name = die_name(&c);

		if (dwarf_tag(&c) != DW_TAG_enumerator || !name ||
		    !dwarf_attr(&c, DW_AT_const_value, &at))
			continue;
		if (is_signed ? dwarf_formsdata(&at, &v) != 0 : dwarf_formudata(&at, &u) != 0)
			continue;
		if (!is_signed)
			v = (Dwarf_Sword)(size < 8 ? u & ((1ull << (size * 8)) - 1) : u);
		put_enumerator(s, name, v);
		if ((*prefix || (is_class && ename)) &&
		    asprintf(&q, "%s%s%s%s", prefix, is_class && ename ? ename : "",
			     is_class && ename ? "::" : "", name) >= 0) {
			put_enumerator(s, q, v);
			free(q);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* Enumerators anywhere below DIE; globals and TLS outside functions (at CU
 * level, or in a namespace or class, qualified by PREFIX), locals and
 * parameters inside them (not those of a mere declaration). */
static void index_children(struct sym_space *s, struct sym_mod *m, size_t rank, Dwarf_Die *die,
			   Dwarf_Addr bias, int depth, const char *prefix, bool in_function)
{
	Dwarf_Die c;
	char *inner;

	if (depth > MAX_DEPTH || dwarf_child(die, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_variable && !in_function)
			index_variable(s, m, rank, &c, bias, prefix);
		else if (tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) {
			if (in_function && !symi_mod_is_system(m))
				index_first(s, &s->locals, rank, &c, die_name(&c));
		} else if (tag == DW_TAG_enumeration_type)
			index_enumerators(s, &c, in_function ? "" : prefix);
		else if (dwarf_haschildren(&c) > 0 && !dwarf_hasattr(&c, DW_AT_declaration)) {
			bool function = in_function || tag == DW_TAG_subprogram ||
					tag == DW_TAG_lexical_block ||
					tag == DW_TAG_inlined_subroutine;

			inner = is_named_scope(tag) && !in_function ? qualifier(prefix, &c) : NULL;
			index_children(s, m, rank, &c, bias, depth + 1, inner ? inner : prefix,
				       function);
			free(inner);
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static void index_module(struct sym_space *s, size_t rank)
{
	struct sym_mod *m = &s->mods[rank];
	Dwarf_Addr bias;
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;

	if (m->indexed)
		return;
	m->indexed = true;
	dw = dwfl_module_getdwarf(m->mod, &bias);
	if (!dw)
		return;
	while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0)
		if (dwarf_tag(&cudie) == DW_TAG_compile_unit)
			index_children(s, m, rank, &cudie, bias, 0, "", false);
}

void symi_ensure_index(struct sym_space *s, bool all)
{
	size_t i;

	if (!s->exe_indexed && s->nmods) {
		index_module(s, 0);
		s->exe_indexed = true;
	}
	if (all && !s->all_indexed) {
		for (i = 1; i < s->nmods; i++)
			index_module(s, i);
		s->all_indexed = true;
	}
}

/* --- sym_type construction --- */

static size_t type_hash(Dwarf *dbg, Dwarf_Off off, unsigned dim)
{
	uint64_t h = (uint64_t)(uintptr_t)dbg * 0x9e3779b97f4a7c15ull;

	h ^= off * 0xc2b2ae3d27d4eb4full + dim;
	return (size_t)(h ^ (h >> 29));
}

static struct sym_type **type_slot(struct sym_type **slots, size_t cap, Dwarf *dbg, Dwarf_Off off,
				   unsigned dim)
{
	size_t i = type_hash(dbg, off, dim) & (cap - 1);

	while (slots[i] && !(slots[i]->dbg == dbg && slots[i]->off == off && slots[i]->dim == dim))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int type_map_grow(struct type_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256, i;
	struct sym_type **slots = calloc(cap, sizeof(*slots));
	struct sym_type *t;

	if (!slots)
		return -1;
	for (i = 0; i < m->cap; i++)
		if ((t = m->slots[i]))
			*type_slot(slots, cap, t->dbg, t->off, t->dim) = t;
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

void symi_types_free(struct sym_space *s)
{
	free(s->types.slots);
	s->types.slots = NULL;
	s->types.cap = s->types.len = 0;
}

static struct sym_type *synthetic(struct sym_space *s, enum sym_type_kind kind, uint64_t size)
{
	struct sym_type *t = symi_arena_alloc(&s->arena, sizeof(*t));

	if (!t)
		return NULL;
	t->space = s;
	t->kind = kind;
	t->size = size;
	t->is_void = kind == SYM_T_VOID;
	return t;
}

static struct sym_type *void_type(struct sym_space *s)
{
	if (!s->void_type)
		s->void_type = synthetic(s, SYM_T_VOID, 0);
	return s->void_type;
}

static enum sym_type_kind base_kind(Dwarf_Die *die)
{
	Dwarf_Word enc = 0;

	die_udata(die, DW_AT_encoding, &enc);
	switch (enc) {
	case DW_ATE_boolean:
		return SYM_T_BOOL;
	case DW_ATE_float:
	case DW_ATE_complex_float:
		return SYM_T_FLOAT;
	case DW_ATE_signed:
	case DW_ATE_signed_char:
		return SYM_T_SIGNED;
	default:
		return SYM_T_UNSIGNED;
	}
}

static enum sym_type_kind die_kind(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_base_type:
		return base_kind(die);
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		return SYM_T_POINTER;
	case DW_TAG_array_type:
		return SYM_T_ARRAY;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		return SYM_T_STRUCT;
	case DW_TAG_enumeration_type:
		return SYM_T_ENUM;
	case DW_TAG_subroutine_type:
		return SYM_T_FUNCTION;
	default:
		return SYM_T_VOID;
	}
}

/* The DIM-th subrange of an array; false if there is none. */
static bool subrange(Dwarf_Die *array, unsigned dim, Dwarf_Die *out)
{
	unsigned i = 0;

	if (dwarf_child(array, out) != 0)
		return false;
	do {
		if (dwarf_tag(out) == DW_TAG_subrange_type && i++ == dim)
			return true;
	} while (dwarf_siblingof(out, out) == 0);
	return false;
}

static uint64_t subrange_count(Dwarf_Die *sr)
{
	Dwarf_Word count, upper, lower = 0;
	Dwarf_Attribute at;

	if (die_udata(sr, DW_AT_count, &count))
		return count;
	if (!dwarf_attr(sr, DW_AT_upper_bound, &at) || dwarf_formudata(&at, &upper) != 0)
		return 0;
	if (dwarf_whatform(&at) == DW_FORM_exprloc)
		return 0;
	die_udata(sr, DW_AT_lower_bound, &lower);
	return upper >= lower ? upper - lower + 1 : 0;
}

static const struct sym_type *type_get(struct sym_space *s, Dwarf_Die *die, unsigned dim);

/* Is enumeration ENUM's value signed: its underlying type's encoding, or
 * where none is given (older DWARF), a negative enumerator? */
static bool enum_is_signed(Dwarf_Die *enumeration)
{
	Dwarf_Die under, real, c;
	Dwarf_Attribute at;
	Dwarf_Sword v;

	if (die_type(enumeration, &under) && strip(&under, &real))
		return die_kind(&real) == SYM_T_SIGNED;
	if (dwarf_child(enumeration, &c) != 0)
		return false;
	do
		if (dwarf_tag(&c) == DW_TAG_enumerator && dwarf_attr(&c, DW_AT_const_value, &at) &&
		    dwarf_whatform(&at) == DW_FORM_sdata && dwarf_formsdata(&at, &v) == 0 && v < 0)
			return true;
	while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

static void type_fill(struct sym_type *t)
{
	Dwarf_Die sr;
	Dwarf_Word size = 0;
	const struct sym_type *elem;
	int tag;

	t->is_void = !strip(&t->die, &t->real);
	t->kind = t->is_void ? SYM_T_VOID : die_kind(&t->real);
	tag = t->is_void ? 0 : dwarf_tag(&t->real);
	t->is_reference = tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type;
	t->is_signed =
	    t->kind == SYM_T_SIGNED || (t->kind == SYM_T_ENUM && enum_is_signed(&t->real));
	if (t->kind == SYM_T_ARRAY) {
		t->count = subrange(&t->real, t->dim, &sr) ? subrange_count(&sr) : 0;
		elem = sym_type_target(t);
		t->size = elem ? t->count * sym_type_size(elem) : 0;
	} else if (t->kind != SYM_T_VOID && t->kind != SYM_T_FUNCTION &&
		   dwarf_aggregate_size(&t->real, &size) == 0) {
		t->size = size;
	}
}

static const struct sym_type *type_get(struct sym_space *s, Dwarf_Die *die, unsigned dim)
{
	Dwarf *dbg = dwarf_cu_getdwarf(die->cu);
	Dwarf_Off off = dwarf_dieoffset(die);
	struct sym_type **slot, *t;

	if (s->types.cap && *(slot = type_slot(s->types.slots, s->types.cap, dbg, off, dim)))
		return *slot;
	if ((s->types.len + 1) * 2 > s->types.cap && type_map_grow(&s->types) < 0)
		return NULL;
	t = symi_arena_alloc(&s->arena, sizeof(*t));
	if (!t)
		return NULL;
	t->space = s;
	t->has_die = true;
	t->die = *die;
	t->dbg = dbg;
	t->off = off;
	t->dim = dim;
	*type_slot(s->types.slots, s->types.cap, dbg, off, dim) = t;
	s->types.len++;
	type_fill(t);
	return t;
}

/* The type DIE refers to with DW_AT_type, void when it has none. */
static const struct sym_type *type_of(struct sym_space *s, Dwarf_Die *die)
{
	Dwarf_Die t;

	if (!die_type(die, &t))
		return void_type(s);
	return type_get(s, &t, 0);
}

const struct sym_type *symi_type_of(struct sym_space *s, Dwarf_Die *die)
{
	return type_of(s, die);
}

/* --- accessors --- */

enum sym_type_kind sym_type_kind(const struct sym_type *t)
{
	return t ? t->kind : SYM_T_VOID;
}

uint64_t sym_type_size(const struct sym_type *t)
{
	return t ? t->size : 0;
}

bool sym_type_is_integer(const struct sym_type *t)
{
	switch (sym_type_kind(t)) {
	case SYM_T_BOOL:
	case SYM_T_SIGNED:
	case SYM_T_UNSIGNED:
	case SYM_T_POINTER:
	case SYM_T_ENUM:
		return true;
	default:
		return false;
	}
}

bool sym_type_is_signed(const struct sym_type *t)
{
	return t && (t->has_die ? t->is_signed : t->kind == SYM_T_SIGNED);
}

bool sym_type_is_reference(const struct sym_type *t)
{
	return t && t->is_reference;
}

uint64_t sym_type_count(const struct sym_type *t)
{
	return t && t->kind == SYM_T_ARRAY ? t->count : 0;
}

const struct sym_type *sym_type_target(const struct sym_type *t)
{
	Dwarf_Die real, sr, target;

	if (!t || (t->kind != SYM_T_POINTER && t->kind != SYM_T_ARRAY))
		return NULL;
	if (!t->has_die)
		return t->elem;
	real = t->real;
	if (t->kind == SYM_T_ARRAY && subrange(&real, t->dim + 1, &sr))
		return type_get(t->space, &real, t->dim + 1);
	if (!die_type(&real, &target) || !strip(&target, &sr))
		return NULL; /* void * */
	return type_get(t->space, &target, 0);
}

/* Where member M starts, in bits from the start of its aggregate; *bits is
 * its width when it is a bitfield, else 0.  DWARF 5 gives a bitfield's
 * DW_AT_data_bit_offset; DWARF 4 its storage unit's byte offset and
 * DW_AT_bit_offset counted from that unit's most significant bit. */
bool symi_member_bit_offset(Dwarf_Die *m, uint64_t *at_bit, unsigned *bits)
{
	Dwarf_Attribute at;
	Dwarf_Word v, size = 0, unit, from_msb;
	Dwarf_Op *ops;
	size_t n;

	*at_bit = 0;
	*bits = die_udata(m, DW_AT_bit_size, &size) ? (unsigned)size : 0;
	if (die_udata(m, DW_AT_data_bit_offset, &v)) {
		*at_bit = v;
		return true;
	}
	if (dwarf_attr(m, DW_AT_data_member_location, &at)) {
		if (dwarf_formudata(&at, &v) == 0)
			*at_bit = v * 8;
		else if (dwarf_getlocation(&at, &ops, &n) == 0 && n == 1 &&
			 ops[0].atom == DW_OP_plus_uconst)
			*at_bit = ops[0].number * 8;
		else
			return false;
	}
	if (*bits && die_udata(m, DW_AT_bit_offset, &from_msb)) {
		if (!die_udata(m, DW_AT_byte_size, &unit)) {
			Dwarf_Die t;

			if (!die_type(m, &t) || dwarf_aggregate_size(&t, &unit) != 0)
				return false;
		}
		*at_bit += unit * 8 - from_msb - size;
	}
	return true; /* union members have no location */
}

/* A named member, or one inside an anonymous member or a base class
 * (DW_TAG_inheritance), at *at_bit. */
static const struct sym_type *find_member(struct sym_space *s, Dwarf_Die *agg, const char *name,
					  uint64_t *at_bit, unsigned *bits, int depth)
{
	Dwarf_Die c, t, real;
	const struct sym_type *found;
	const char *cname;
	uint64_t off, inner;
	int tag;

	if (depth > MAX_DEPTH || dwarf_child(agg, &c) != 0)
		return NULL;
	do {
		tag = dwarf_tag(&c);
		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) ||
		    !symi_member_bit_offset(&c, &off, bits))
			continue;
		cname = tag == DW_TAG_member ? die_name(&c) : NULL;
		if (cname && !strcmp(cname, name)) {
			*at_bit = off;
			return type_of(s, &c);
		}
		if (cname || !die_type(&c, &t) || !strip(&t, &real) ||
		    die_kind(&real) != SYM_T_STRUCT)
			continue;
		found = find_member(s, &real, name, &inner, bits, depth + 1);
		if (found) {
			*at_bit = off + inner;
			return found;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return NULL;
}

const struct sym_type *sym_type_member_bits(const struct sym_type *t, const char *name,
					    uint64_t *offset, unsigned *bit_offset,
					    unsigned *bit_size)
{
	Dwarf_Die real;
	uint64_t at_bit = 0;
	unsigned bits = 0;
	const struct sym_type *m;

	if (!t || !t->has_die || t->kind != SYM_T_STRUCT)
		return NULL;
	real = t->real;
	m = find_member(t->space, &real, name, &at_bit, &bits, 0);
	if (!m)
		return NULL;
	if (offset)
		*offset = at_bit / 8;
	if (bit_offset)
		*bit_offset = bits ? (unsigned)(at_bit % 8) : 0;
	if (bit_size)
		*bit_size = bits;
	return m;
}

const struct sym_type *sym_type_member(const struct sym_type *t, const char *name, uint64_t *offset)
{
	return sym_type_member_bits(t, name, offset, NULL, NULL);
}

int sym_type_each_member(const struct sym_type *t, sym_member_fn fn, void *ctx)
{
	Dwarf_Die c, real;
	int tag, rc;

	if (!t || !t->has_die || t->kind != SYM_T_STRUCT)
		return 0;
	real = t->real;
	if (dwarf_child(&real, &c) != 0)
		return 0;
	do {
		struct sym_member m = {0};
		uint64_t at_bit;

		tag = dwarf_tag(&c);
		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) ||
		    !symi_member_bit_offset(&c, &at_bit, &m.bit_size) ||
		    !(m.type = type_of(t->space, &c)))
			continue; /* a static member has no offset: it is no part */
		m.name = tag == DW_TAG_member ? die_name(&c) : NULL;
		m.base = tag == DW_TAG_inheritance;
		m.offset = at_bit / 8;
		m.bit_offset = m.bit_size ? (unsigned)(at_bit % 8) : 0;
		if ((rc = fn(ctx, &m)) != 0)
			return rc;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

const char *sym_type_enumerator_name(const struct sym_type *t, int64_t value)
{
	Dwarf_Attribute attr;
	Dwarf_Die c, real;
	Dwarf_Sword sv;
	Dwarf_Word uv;

	if (!t || !t->has_die || t->kind != SYM_T_ENUM)
		return NULL;
	real = t->real;
	if (dwarf_child(&real, &c) != 0)
		return NULL;
	do {
		if (dwarf_tag(&c) != DW_TAG_enumerator || !dwarf_attr(&c, DW_AT_const_value, &attr))
			continue;
		if (t->is_signed ? dwarf_formsdata(&attr, &sv) == 0 && sv == value
				 : dwarf_formudata(&attr, &uv) == 0 && (int64_t)uv == value)
			return die_name(&c);
	} while (dwarf_siblingof(&c, &c) == 0);
	return NULL;
}

/* --- names --- */

static char *decl_name(Dwarf_Die *die, bool has, unsigned dim, const char *inner, int depth);

/* "BASE" or "BASE INNER"; frees nothing. */
static char *join(const char *base, const char *inner)
{
	char *out = NULL;

	if (asprintf(&out, "%s%s%s", base, *inner ? " " : "", inner) < 0)
		return NULL;
	return out;
}

/* Wrap "*..." in parentheses before appending [] or (). */
static char *wrap(const char *inner, const char *suffix)
{
	char *out = NULL;
	bool paren = inner[0] == '*';

	if (asprintf(&out, "%s%s%s%s", paren ? "(" : "", inner, paren ? ")" : "", suffix) < 0)
		return NULL;
	return out;
}

static char *aggregate_name(Dwarf_Die *die, const char *inner)
{
	const char *kw = "", *name = die_name(die);
	char *base = NULL, *out;

	switch (dwarf_tag(die)) {
	case DW_TAG_structure_type:
		kw = "struct ";
		break;
	case DW_TAG_union_type:
		kw = "union ";
		break;
	case DW_TAG_enumeration_type:
		kw = "enum ";
		break;
	default:
		break;
	}
	if (asprintf(&base, "%s%s", kw, name ? name : "<anonymous>") < 0)
		return NULL;
	out = join(base, inner);
	free(base);
	return out;
}

static char *array_name(Dwarf_Die *die, unsigned dim, const char *inner, int depth)
{
	char dims[256] = "", *in, *out;
	size_t len = 0;
	Dwarf_Die sr, elem;
	uint64_t n;
	bool has;

	while (subrange(die, dim++, &sr) && len < sizeof(dims) - 32) {
		n = subrange_count(&sr);
		if (n)
			len += (size_t)snprintf(dims + len, sizeof(dims) - len, "[%llu]",
						(unsigned long long)n);
		else
			len += (size_t)snprintf(dims + len, sizeof(dims) - len, "[]");
	}
	in = wrap(inner, dims);
	if (!in)
		return NULL;
	has = die_type(die, &elem);
	out = decl_name(&elem, has, 0, in, depth + 1);
	free(in);
	return out;
}

static char *params_name(Dwarf_Die *fn, int depth)
{
	char *list = strdup(""), *p, *next;
	Dwarf_Die c, t;
	bool has;

	if (!list || dwarf_child(fn, &c) != 0)
		return list;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_formal_parameter) {
			has = die_type(&c, &t);
			p = decl_name(&t, has, 0, "", depth + 1);
		} else if (tag == DW_TAG_unspecified_parameters) {
			p = strdup("...");
		} else {
			continue;
		}
		next = NULL;
		if (p && asprintf(&next, "%s%s%s", list, *list ? ", " : "", p) < 0)
			next = NULL;
		free(p);
		free(list);
		list = next;
	} while (list && dwarf_siblingof(&c, &c) == 0);
	return list;
}

static char *function_name(Dwarf_Die *die, const char *inner, int depth)
{
	char *params = params_name(die, depth), *suffix = NULL, *in, *out;
	Dwarf_Die ret;
	bool has;

	if (!params)
		return NULL;
	if (asprintf(&suffix, "(%s)", *params ? params : "void") < 0)
		suffix = NULL;
	free(params);
	in = suffix ? wrap(inner, suffix) : NULL;
	free(suffix);
	if (!in)
		return NULL;
	has = die_type(die, &ret);
	out = decl_name(&ret, has, 0, in, depth + 1);
	free(in);
	return out;
}

/* gcc spells "long" as "long int"; use the short C spellings. */
static const char *short_base_name(const char *name)
{
	static const char *const map[][2] = {
	    {"short int", "short"},	    {"short unsigned int", "unsigned short"},
	    {"long int", "long"},	    {"long unsigned int", "unsigned long"},
	    {"long long int", "long long"}, {"long long unsigned int", "unsigned long long"},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(name, map[i][0]))
			return map[i][1];
	return name;
}

#define QUAL_CONST    1u
#define QUAL_VOLATILE 2u

/* Skip qualifiers and typedefs, except a typedef of an anonymous type;
 * the qualifiers seen on the way into *quals. */
static bool name_strip(Dwarf_Die *die, const char **tdname, unsigned *quals)
{
	Dwarf_Die next, real;

	*tdname = NULL;
	for (int i = 0; i < MAX_DEPTH && is_transparent(dwarf_tag(die)); i++) {
		if (dwarf_tag(die) == DW_TAG_const_type)
			*quals |= QUAL_CONST;
		else if (dwarf_tag(die) == DW_TAG_volatile_type)
			*quals |= QUAL_VOLATILE;
		if (!die_type(die, &next))
			return false;
		if (dwarf_tag(die) == DW_TAG_typedef && strip(&next, &real) &&
		    die_kind(&real) >= SYM_T_STRUCT && die_kind(&real) <= SYM_T_ENUM &&
		    !die_name(&real)) {
			*tdname = die_name(die);
			return true;
		}
		*die = next;
	}
	return dwarf_tag(die) != DW_TAG_unspecified_type;
}

/* name, which begins with its type's name, with the qualifiers written
 * before it ("const char *"); name is freed. */
static char *qualified(char *name, unsigned quals)
{
	char *out = NULL;

	if (!name || !quals)
		return name;
	if (asprintf(&out, "%s%s%s", quals & QUAL_CONST ? "const " : "",
		     quals & QUAL_VOLATILE ? "volatile " : "", name) < 0)
		out = NULL;
	free(name);
	return out;
}

/* C declaration of type DIE (void if !HAS) around declarator INNER.  A
 * qualifier of a pointer itself (char *const) is left out, as the value
 * shown is the same. */
static char *decl_name(Dwarf_Die *die, bool has, unsigned dim, const char *inner, int depth)
{
	Dwarf_Die d, target;
	const char *tdname, *name;
	unsigned quals = 0;
	char *in, *out;

	d = has ? *die : (Dwarf_Die){0};
	if (depth > MAX_DEPTH)
		return strdup("?");
	if (!has || !name_strip(&d, &tdname, &quals))
		return qualified(join("void", inner), quals);
	if (tdname)
		return qualified(join(tdname, inner), quals);
	switch (dwarf_tag(&d)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (asprintf(&in, "*%s", inner) < 0)
			return NULL;
		has = die_type(&d, &target);
		out = decl_name(&target, has, 0, in, depth + 1);
		free(in);
		return out;
	case DW_TAG_array_type:
		return array_name(&d, dim, inner, depth);
	case DW_TAG_subroutine_type:
		return function_name(&d, inner, depth);
	case DW_TAG_base_type:
		name = die_name(&d);
		return qualified(join(name ? short_base_name(name) : "?", inner), quals);
	default:
		return qualified(aggregate_name(&d, inner), quals);
	}
}

/* "int *"; "int **"; "int (*)[4]" for an array's, "void (**)(void)" for
 * a function pointer's, as C spells them. */
static char *pointer_name(const char *target)
{
	const char *bracket = strchr(target, '['), *fn = strstr(target, "(*");
	char *out = NULL;
	int len = bracket ? (int)(bracket - target) : (int)strlen(target);

	if (fn) { /* "void (*)(void)": one more star inside its parentheses */
		if (asprintf(&out, "%.*s*%s", (int)(fn - target + 2), target, fn + 2) < 0)
			return NULL;
		return out;
	}
	if (!bracket && len > 0 && target[len - 1] == '*') {
		if (asprintf(&out, "%s*", target) < 0)
			return NULL;
		return out;
	}

	while (len > 0 && target[len - 1] == ' ')
		len--;
	if (asprintf(&out, bracket ? "%.*s (*)%s" : "%.*s *", len, target, bracket ? bracket : "") <
	    0)
		return NULL;
	return out;
}

static char *synthetic_name(const struct sym_type *t)
{
	char *out = NULL;

	switch (t->kind) {
	case SYM_T_VOID:
		return strdup("void");
	case SYM_T_ARRAY:
		if (asprintf(&out, "unsigned char [%llu]", (unsigned long long)t->count) < 0)
			return NULL;
		return out;
	case SYM_T_POINTER:
		return pointer_name(sym_type_name(t->elem));
	default:
		break;
	}
	switch (t->size) {
	case 1:
		return strdup("unsigned char");
	case 2:
		return strdup("unsigned short");
	case 4:
		return strdup("unsigned int");
	default:
		return strdup("unsigned long");
	}
}

const char *sym_type_name(const struct sym_type *type)
{
	struct sym_type *t = (struct sym_type *)type;
	Dwarf_Die die;
	char *name;

	if (!t)
		return "void";
	if (t->name)
		return t->name;
	die = t->die;
	name = t->has_die ? decl_name(&die, true, t->dim, "", 0) : synthetic_name(t);
	if (!name)
		return "?";
	t->name = symi_arena_strdup(&t->space->arena, name);
	free(name);
	return t->name ? t->name : "?";
}

const struct sym_type *sym_type_pointer_to(const struct sym_type *target)
{
	struct sym_type *t = (struct sym_type *)target, *p;

	if (!t)
		return NULL;
	if (t->pointer)
		return t->pointer;
	p = synthetic(t->space, SYM_T_POINTER, sizeof(void *));
	if (p)
		p->elem = target;
	t->pointer = p;
	return p;
}

/* --- variables and enumerators --- */

const struct sym_type *symi_elf_object_type(struct sym_space *s, uint64_t size)
{
	struct sym_type *t;

	if (size == 1 || size == 2 || size == 4 || size == 8)
		return synthetic(s, SYM_T_UNSIGNED, size);
	t = synthetic(s, SYM_T_ARRAY, size);
	if (!t)
		return NULL;
	t->count = size;
	t->elem = synthetic(s, SYM_T_UNSIGNED, 1);
	return t;
}

struct obj_ctx {
	const char *name;
	bool found;
	GElf_Addr addr;
	uint64_t size;
};

static int object_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
		     void *arg)
{
	struct obj_ctx *c = arg;
	size_t n = strlen(c->name);

	(void)m;
	if (GELF_ST_TYPE(sym->st_info) != STT_OBJECT || strncmp(name, c->name, n) != 0)
		return 0;
	if (name[n] != '\0' && strncmp(name + n, "@@", 2) != 0)
		return 0;
	c->found = true;
	c->addr = addr;
	c->size = sym->st_size;
	return 1;
}

static int elf_variable(struct sym_space *s, const char *name, struct sym_var *out)
{
	struct obj_ctx c = {.name = name};
	size_t i;

	for (i = 0; i < s->nmods; i++) {
		symi_space_each_symbol(s, &s->mods[i], object_cb, &c);
		if (!c.found)
			continue;
		out->addr = symi_space_out_addr(s, &s->mods[i], c.addr);
		out->type = symi_elf_object_type(s, c.size);
		return out->type ? 0 : -1;
	}
	return -1;
}

int sym_variable(struct sym_space *s, const char *name, struct sym_var *out)
{
	struct var_ent *e;

	*out = (struct sym_var){0};
	symi_ensure_index(s, false);
	e = symi_strmap_get(&s->vars, name);
	if (!e) {
		symi_ensure_index(s, true);
		e = symi_strmap_get(&s->vars, name);
	}
	if (!e)
		return elf_variable(s, name, out);
	out->addr = e->addr;
	out->type = type_of(s, &e->die);
	return out->type ? 0 : -1;
}

int sym_enumerator(struct sym_space *s, const char *name, int64_t *value)
{
	int64_t *v;

	symi_ensure_index(s, false);
	v = symi_strmap_get(&s->enums, name);
	if (!v) {
		symi_ensure_index(s, true);
		v = symi_strmap_get(&s->enums, name);
	}
	if (!v)
		return -1;
	*value = *v;
	return 0;
}

struct vsuggest_ctx {
	const char *query;
	unsigned best_d;
	const char *best;
};

static int vsuggest_cb(struct sym_mod *m, const char *name, const GElf_Sym *sym, GElf_Addr addr,
		       void *arg)
{
	struct vsuggest_ctx *c = arg;

	(void)m;
	(void)addr;
	if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT)
		symi_suggest_consider(c->query, name, &c->best_d, &c->best);
	return 0;
}

const char *sym_suggest_variable(struct sym_space *s, const char *name)
{
	struct vsuggest_ctx c = {.query = name, .best_d = -1u};
	size_t i;

	symi_ensure_index(s, true);
	for (i = 0; i < s->vars.cap; i++)
		if (s->vars.slots[i].key)
			symi_suggest_consider(name, s->vars.slots[i].key, &c.best_d, &c.best);
	for (i = 0; i < s->nmods; i++)
		symi_space_each_symbol(s, &s->mods[i], vsuggest_cb, &c);
	return c.best ? symi_plain_name(s, c.best) : NULL;
}

/* The entry for NAME; with ALL false only the executable is indexed (its
 * entries are always indexed first, so they win), with ALL every module. */
static bool indexed_lookup(struct sym_space *s, struct strmap *map, const char *name, bool all,
			   Dwarf_Die *die, size_t *mod)
{
	struct var_ent *e;

	symi_ensure_index(s, all);
	e = symi_strmap_get(map, name);
	if (!e)
		return false;
	*die = e->die;
	*mod = e->modrank;
	return true;
}

bool symi_tls_variable(struct sym_space *s, const char *name, bool all, Dwarf_Die *die, size_t *mod)
{
	return indexed_lookup(s, &s->tls, name, all, die, mod);
}

bool symi_local_variable(struct sym_space *s, const char *name, bool all, Dwarf_Die *die,
			 size_t *mod)
{
	return indexed_lookup(s, &s->locals, name, all, die, mod);
}

bool sym_variable_varies(struct sym_space *s, const char *name)
{
	struct var_ent *local, *other;

	symi_ensure_index(s, false);
	local = symi_strmap_get(&s->locals, name);
	if (!local)
		return false;
	if (local->varies)
		return true;
	other = symi_strmap_get(&s->tls, name);
	if (!other)
		other = symi_strmap_get(&s->vars, name);
	return other && !same_shape(&local->die, &other->die);
}
