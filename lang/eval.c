/*
 * eval.c: expressions over the target's memory.
 *
 * One evaluator serves two masters.  The checker runs it with no process:
 * every name, member, index and dereference is typed through DWARF and
 * nothing is read, so type errors surface before launch.  The interpreter
 * runs it on a live process, where lvalues are read through the caller's
 * read_memory callback: lang knows nothing of how a target is traced.
 * Values are either rvalues (a 64-bit integer) or lvalues (an address and
 * a DWARF type); an lvalue becomes an rvalue when an operator needs its
 * contents.  Event atoms and thread conditions are delegated to hooks.
 */
#include "lang/lang.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(struct eval_ctx *c, const struct expr *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Running on a live target, not checking: memory can be read. */
static bool live(const struct eval_ctx *c)
{
	assert(!c->target || c->read_memory);
	return c->target != NULL;
}

static int fail(struct eval_ctx *c, const struct expr *e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->sched)
		schedule_diag(c->sched, e->loc, c->err, c->errlen, "%s", msg);
	else
		snprintf(c->err, c->errlen, "%s", msg);
	return -1;
}

int64_t eval_bits(uint64_t raw, unsigned shift, unsigned bits, const struct sym_type *type)
{
	uint64_t sign;

	raw >>= shift;
	if (bits >= 64)
		return (int64_t)raw;
	raw &= (1ull << bits) - 1;
	if (!sym_type_is_signed(type))
		return (int64_t)raw;
	sign = 1ull << (bits - 1);
	return (int64_t)((raw ^ sign) - sign);
}

/* Load an lvalue of scalar type as a 64-bit integer, sign-extending where
 * the type is signed; a bitfield is its bits of the bytes it spans. */
static int load(struct eval_ctx *c, const struct expr *e, const struct value *v, int64_t *out)
{
	uint64_t size = sym_type_size(v->type), raw = 0;
	unsigned bits = v->bit_size ? v->bit_size : (unsigned)size * 8;
	char what[96];

	if (v->unknown) {
		*out = 0;
		return 0;
	}
	if (!sym_type_is_integer(v->type)) {
		const char *type = sym_type_name(v->type);

		expr_format(e, what, sizeof(what));
		return fail(c, e, "'%s' is %s %s, not an integer", what,
			    strchr("aeiouAEIOU", type[0]) && type[0] ? "an" : "a", type);
	}
	if (v->bit_size)
		size = (v->bit_offset + v->bit_size + 7) / 8;
	if (size == 0 || size > 8)
		return fail(c, e, "cannot read a %lu-byte %s as a number", (unsigned long)size,
			    sym_type_name(v->type));
	if (!live(c)) {
		*out = 0;
		return 0;
	}
	if (v->preread)
		raw = (uint64_t)v->i;
	else if (c->read_memory(v->target ? v->target : c->target, v->addr, &raw, size) < 0)
		return fail(c, e, "cannot read %lu bytes at %#lx in the target",
			    (unsigned long)size, (unsigned long)v->addr);
	*out = eval_bits(raw, v->bit_offset, bits, v->type);
	return 0;
}

static int rvalue(struct eval_ctx *c, const struct expr *e, struct value *v)
{
	int64_t i;

	if (!v->lvalue)
		return 0;
	if (load(c, e, v, &i) < 0)
		return -1;
	v->lvalue = false;
	v->i = i;
	return 0;
}

/* Variable name as the held thread of view sees it where it stopped: its
 * locals and parameters, its __thread variables, then globals. */
static int variable_in(struct eval_ctx *c, const struct expr *e, const char *name,
		       const struct sym_thread_view *view, const char *thread_name,
		       struct value *out)
{
	struct sym_var var;
	char why[256];

	if (sym_variable_at(c->syms, name, view, &var, why, sizeof(why)) < 0)
		return fail(c, e, "%s (in %s)", why, thread_name);
	/* A register holds a scalar whole; an aggregate's members it cannot
	 * be asked for by address. */
	if (var.no_address && !sym_type_is_integer(var.type))
		return fail(c, e, "%s (in %s)", why, thread_name);
	*out = (struct value){.lvalue = true,
			      .addr = var.addr,
			      .type = var.type,
			      .target = view->ctx,
			      .preread = var.value_known,
			      .no_address = var.no_address,
			      .i = (int64_t)var.value};
	return 0;
}

/* Only its type, while checking. */
static int variable_type(struct eval_ctx *c, const struct expr *e, const char *name,
			 struct value *out)
{
	const struct sym_type *type = NULL;
	struct sym_var var;

	if (sym_variable_varies(c->syms, name)) {
		*out = (struct value){.lvalue = true, .unknown = true};
		return 0;
	}
	if (sym_variable_scope(c->syms, name, &type) == SYM_SCOPE_NONE) {
		if (sym_variable(c->syms, name, &var) < 0)
			return fail(c, e, "no variable '%s' in the program", name);
		type = var.type;
	}
	*out = (struct value){.lvalue = true, .addr = 0, .type = type};
	return 0;
}

/* A local, parameter or __thread variable, in the thread of the event. */
static int eval_thread_variable(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	struct sym_thread_view view;
	const char *name;

	if (!live(c))
		return variable_type(c, e, e->name, out);
	if (!c->thread || c->thread_view(c->hook, c->thread, &view, &name) < 0)
		return fail(
		    c, e,
		    "'%s' is a local or thread-local variable: it has an address only "
		    "in a given thread; write T.%s for thread T's, or use it in a predicate",
		    e->name, e->name);
	return variable_in(c, e, e->name, &view, name, out);
}

/* T.var: var as the held thread bound to T sees it. */
static int eval_thread_member(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	struct sym_thread_view view;
	const char *name;
	void *th;

	if (!live(c))
		return variable_type(c, e, e->name, out);
	th = c->thread_of ? c->thread_of(c->hook, e->lhs->name) : NULL;
	if (!th || c->thread_view(c->hook, th, &view, &name) < 0)
		return fail(c, e, "%s.%s: thread %s is %s", e->lhs->name, e->name, e->lhs->name,
			    th ? "running or gone" : "not bound");
	return variable_in(c, e, e->name, &view, name, out);
}

/* Along lhs by iteration, as every walk here (ast.h). */
bool expr_is_thread_relative(const struct expr *e)
{
	for (; e; e = e->lhs) {
		if (e->kind == E_NAME)
			return e->ref == REF_VAR_AT;
		if (expr_is_thread_relative(e->rhs))
			return true;
	}
	return false;
}

static int eval_name(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	struct sym_var var;
	int rc;

	switch (e->ref) {
	case REF_ENUM:
		*out = (struct value){.i = e->enum_value};
		return 0;
	case REF_LOCAL:
		*out = (struct value){.i = c->locals ? c->locals[e->slot] : 0};
		return 0;
	case REF_THREAD:
		return fail(c, e, "'%s' is a thread; use it in ended(%s), in(%s, F) or run",
			    e->name, e->name, e->name);
	case REF_FIELD:
		*out = (struct value){0};
		if (!c->event_field)
			return 0;
		rc = c->event_field(c->hook, c->event, (enum event_field)e->slot, &out->i);
		if (rc > 0)
			return fail(c, e,
				    "'%s' is a field of the event at hand: outside a predicate, of "
				    "the event that ended the last wait or run, and none has yet",
				    e->name);
		return rc;
	case REF_FUNC:
		*out = (struct value){0};
		if (c->syms && sym_function(c->syms, e->name, &var.addr) == 0)
			out->i = (int64_t)var.addr;
		return 0;
	default:
		break;
	}
	if (e->ref == REF_VAR_AT)
		return eval_thread_variable(c, e, out);
	if (!c->syms || sym_variable(c->syms, e->name, &var) < 0)
		return fail(c, e, "no variable '%s' in the program", e->name);
	*out = (struct value){.lvalue = true, .addr = var.addr, .type = var.type};
	return 0;
}

static int eval_member(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	const struct sym_type *member;
	unsigned bit_offset, bit_size;
	struct value base;
	uint64_t offset;

	if (e->kind == E_MEMBER && e->lhs->kind == E_NAME && e->lhs->ref == REF_THREAD)
		return eval_thread_member(c, e, out);
	if (eval_value(c, e->lhs, &base) < 0)
		return -1;
	if (base.unknown) {
		*out = base;
		return 0;
	}
	if (e->kind == E_ARROW) {
		if (!base.type || sym_type_kind(base.type) != SYM_T_POINTER)
			return fail(c, e, "'->' needs a pointer to a struct; use '.' on a struct");
		if (rvalue(c, e->lhs, &base) < 0)
			return -1;
		base = (struct value){.lvalue = true,
				      .addr = (uint64_t)base.i,
				      .type = sym_type_target(base.type),
				      .target = base.target};
		if (!base.type)
			return fail(c, e, "cannot follow a void pointer");
	} else if (!base.lvalue) {
		return fail(c, e, "'.' needs a struct");
	}
	if (sym_type_kind(base.type) != SYM_T_STRUCT)
		return fail(c, e, "'%s' is not a struct or union", sym_type_name(base.type));
	member = sym_type_member_bits(base.type, e->name, &offset, &bit_offset, &bit_size);
	if (!member)
		return fail(c, e, "%s has no member '%s'", sym_type_name(base.type), e->name);
	*out = (struct value){.lvalue = true,
			      .addr = base.addr + offset,
			      .type = member,
			      .target = base.target,
			      .bit_offset = (uint8_t)bit_offset,
			      .bit_size = (uint8_t)bit_size};
	return 0;
}

static int eval_index(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	struct value base;
	const struct sym_type *elem;
	int64_t index;

	if (eval_value(c, e->lhs, &base) < 0 || eval_int(c, e->rhs, &index) < 0)
		return -1;
	if (base.unknown) {
		*out = base;
		return 0;
	}
	if (!base.type)
		return fail(c, e, "cannot index a plain number");
	if (sym_type_kind(base.type) == SYM_T_ARRAY) {
		uint64_t count = sym_type_count(base.type);

		if (live(c) && count && (index < 0 || (uint64_t)index >= count))
			return fail(c, e, "index %ld is outside [0, %lu)", (long)index,
				    (unsigned long)count);
	} else if (sym_type_kind(base.type) == SYM_T_POINTER) {
		if (rvalue(c, e->lhs, &base) < 0)
			return -1;
		base.addr = (uint64_t)base.i;
	} else {
		return fail(c, e, "cannot index a %s", sym_type_name(base.type));
	}
	elem = sym_type_target(base.type);
	if (!elem)
		return fail(c, e, "cannot index through void");
	*out = (struct value){.lvalue = true,
			      .addr = base.addr + (uint64_t)index * sym_type_size(elem),
			      .type = elem,
			      .target = base.target};
	return 0;
}

static int eval_unary(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	struct value v;

	if (eval_value(c, e->lhs, &v) < 0)
		return -1;
	if (e->op == '&') {
		if (!v.lvalue)
			return fail(c, e, "'&' needs a variable");
		if (v.no_address)
			return fail(c, e, "'&': it lives in a register here, not in memory");
		if (v.bit_size)
			return fail(c, e, "'&' of a bitfield, which has no address of its own");
		*out = (struct value){
		    .i = (int64_t)v.addr, .type = sym_type_pointer_to(v.type), .target = v.target};
		return 0;
	}
	if (e->op == '*') {
		if (v.unknown) {
			*out = v;
			return 0;
		}
		/* an array is its first element, as in C */
		if (v.lvalue && sym_type_kind(v.type) == SYM_T_ARRAY && sym_type_target(v.type)) {
			*out = (struct value){.lvalue = true,
					      .addr = v.addr,
					      .type = sym_type_target(v.type),
					      .target = v.target};
			return 0;
		}
		if (!v.type || sym_type_kind(v.type) != SYM_T_POINTER || !sym_type_target(v.type))
			return fail(c, e, "'*' needs a typed pointer");
		if (rvalue(c, e->lhs, &v) < 0)
			return -1;
		*out = (struct value){.lvalue = true,
				      .addr = (uint64_t)v.i,
				      .type = sym_type_target(v.type),
				      .target = v.target};
		return 0;
	}
	if (rvalue(c, e->lhs, &v) < 0)
		return -1;
	*out = (struct value){.i = e->op == '-' ? -v.i : e->op == '!' ? !v.i : ~v.i};
	return 0;
}

static int arith(struct eval_ctx *c, const struct expr *e, int64_t a, int64_t b, int64_t *r)
{
	switch (e->op) {
	case '+':
		*r = (int64_t)((uint64_t)a + (uint64_t)b);
		return 0;
	case '-':
		*r = (int64_t)((uint64_t)a - (uint64_t)b);
		return 0;
	case '*':
		*r = (int64_t)((uint64_t)a * (uint64_t)b);
		return 0;
	case '/':
	case '%':
		if (b == 0)
			return live(c) ? fail(c, e, "division by zero") : (*r = 0, 0);
		if (a == INT64_MIN && b == -1)
			return fail(c, e, "division overflows");
		*r = e->op == '/' ? a / b : a % b;
		return 0;
	case '&':
		*r = a & b;
		return 0;
	case '|':
		*r = a | b;
		return 0;
	case '^':
		*r = a ^ b;
		return 0;
	case T_SHL:
		*r = (b < 0 || b > 63) ? 0 : (int64_t)((uint64_t)a << b);
		return 0;
	case T_SHR:
		/* gcc shifts signed values arithmetically, as C users expect */
		// cppcheck-suppress shiftTooManyBitsSigned
		*r = (b < 0 || b > 63) ? 0 : a >> b;
		return 0;
	case T_EQ:
		*r = a == b;
		return 0;
	case T_NE:
		*r = a != b;
		return 0;
	case '<':
		*r = a < b;
		return 0;
	case '>':
		*r = a > b;
		return 0;
	case T_LE:
		*r = a <= b;
		return 0;
	case T_GE:
		*r = a >= b;
		return 0;
	default:
		return fail(c, e, "unknown operator");
	}
}

/* *acc = *acc OP rhs for the operation e. */
static int eval_step(struct eval_ctx *c, const struct expr *e, int64_t *acc)
{
	int64_t b;

	/* && and || short-circuit, but checking must still see both sides. */
	if (live(c) && e->op == T_ANDAND && !*acc)
		return *acc = 0, 0;
	if (live(c) && e->op == T_OROR && *acc)
		return *acc = 1, 0;
	if (eval_int(c, e->rhs, &b) < 0)
		return -1;
	if (e->op == T_ANDAND || e->op == T_OROR) {
		*acc = e->op == T_ANDAND ? (*acc && b) : (*acc || b);
		return 0;
	}
	return arith(c, e, *acc, b, acc);
}

/* A chain a + b - c, parsed ((a + b) - c), is folded left to right along
 * its spine (ast.h) rather than by recursion: same order, same short
 * circuits, any length. */
static int eval_binary(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	const struct expr *b = expr_chain_bottom(e);
	int64_t acc;

	if (eval_int(c, b->lhs, &acc) < 0)
		return -1;
	for (;; b = b->up) {
		assert(b); /* the spine leads back up to e (ast.h) */
		if (eval_step(c, b, &acc) < 0)
			return -1;
		if (b == e)
			break;
	}
	*out = (struct value){.i = acc};
	return 0;
}

/* proc(T): checking, any integer; running, the pid of T's process. */
static int eval_proc(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	int64_t pid = 0;

	if (c->thread_value && c->thread_value(c->hook, e, &pid) < 0)
		return fail(c, e,
			    "proc(%s): %s names no thread (not bound yet, or let go by a release)",
			    e->name, e->name);
	*out = (struct value){.i = pid};
	return 0;
}

static int eval_hooked(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	bool b = false;
	int rc;

	if (e->kind == E_PROC)
		return eval_proc(c, e, out);
	if (e->kind == E_ENDED || e->kind == E_IN)
		rc = c->thread_cond ? c->thread_cond(c->hook, c->event, e, &b) : 0;
	else
		rc = c->event_atom ? c->event_atom(c->hook, c->event, e, &b) : 0;
	if (rc < 0)
		return -1;
	*out = (struct value){.i = b};
	return 0;
}

#define CHOOSE_MAX 4096

/* The oracle picks one of the values; checking types every candidate. */
static int eval_choose(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	int64_t lo, hi, v;
	int i, k;

	if (e->nargs == 0) {
		if (eval_int(c, e->lhs, &lo) < 0 || eval_int(c, e->rhs, &hi) < 0)
			return -1;
		if (live(c) && (hi < lo || hi - lo >= CHOOSE_MAX))
			return fail(c, e, "choose(%ld..%ld) needs LO <= HI and at most %d values",
				    (long)lo, (long)hi, CHOOSE_MAX);
		k = c->choose && hi >= lo ? c->choose(c->hook, e, (int)(hi - lo + 1)) : 0;
		assert(k >= 0 && (hi < lo || k <= hi - lo)); /* the oracle picks one of them */
		*out = (struct value){.i = lo + k};
		return 0;
	}
	if (!live(c)) {
		for (i = 0; i < e->nargs; i++)
			if (eval_int(c, e->args[i], &v) < 0)
				return -1;
		*out = (struct value){.i = 0};
		return 0;
	}
	k = c->choose ? c->choose(c->hook, e, e->nargs) : 0;
	assert(k >= 0 && k < e->nargs);
	if (eval_int(c, e->args[k], &v) < 0)
		return -1;
	*out = (struct value){.i = v};
	return 0;
}

/* A C++ reference names the object it refers to: its pointer is loaded
 * and followed wherever a name, member or element has a reference type. */
static int through_reference(struct eval_ctx *c, const struct expr *e, struct value *v)
{
	const struct sym_type *target;

	if (!v->lvalue || v->unknown || !sym_type_is_reference(v->type))
		return 0;
	target = sym_type_target(v->type);
	if (!target || rvalue(c, e, v) < 0)
		return target ? -1 : 0;
	*v = (struct value){
	    .lvalue = true, .addr = (uint64_t)v->i, .type = target, .target = v->target};
	return 0;
}

static int eval_place(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	int rc;

	switch (e->kind) {
	case E_NAME:
		rc = eval_name(c, e, out);
		break;
	case E_MEMBER:
	case E_ARROW:
		rc = eval_member(c, e, out);
		break;
	default:
		rc = eval_index(c, e, out);
		break;
	}
	return rc < 0 ? -1 : through_reference(c, e, out);
}

int eval_value(struct eval_ctx *c, const struct expr *e, struct value *out)
{
	switch (e->kind) {
	case E_CHOOSE:
		return eval_choose(c, e, out);
	case E_INT:
		*out = (struct value){.i = e->ival};
		return 0;
	case E_NAME:
	case E_MEMBER:
	case E_ARROW:
	case E_INDEX:
		return eval_place(c, e, out);
	case E_UNARY:
		return eval_unary(c, e, out);
	case E_BINARY:
		return eval_binary(c, e, out);
	case E_ENDED:
	case E_IN:
	case E_PROC:
	case E_EVENT:
		return eval_hooked(c, e, out);
	}
	return fail(c, e, "unknown expression"); /* not reached: -Wswitch */
}

int eval_int(struct eval_ctx *c, const struct expr *e, int64_t *out)
{
	struct value v;

	if (eval_value(c, e, &v) < 0 || rvalue(c, e, &v) < 0)
		return -1;
	*out = v.i;
	return 0;
}

/* A bitfield is watched through the smallest aligned 1, 2, 4 or 8 bytes
 * that hold its bits (a debug register takes no other); bits that span
 * more are watched as their bytes, by decoding. */
static void bitfield_window(const struct value *v, uint64_t *addr, uint64_t *size)
{
	uint64_t bytes = (v->bit_offset + v->bit_size + 7u) / 8, s;

	for (s = 1; s <= 8; s *= 2)
		if (v->addr % s + bytes <= s) {
			*addr = v->addr - v->addr % s;
			*size = s;
			return;
		}
	*addr = v->addr;
	*size = bytes;
}

int eval_lvalue(struct eval_ctx *c, const struct expr *e, uint64_t *addr, uint64_t *size)
{
	struct value v;

	if (eval_value(c, e, &v) < 0)
		return -1;
	if (!v.lvalue)
		return fail(c, e, "a watchpoint needs a variable, a member or an element");
	if (v.no_address)
		return fail(c, e, "cannot watch it: it lives in a register here, not in memory");
	*addr = v.addr;
	*size = sym_type_size(v.type);
	if (v.bit_size)
		bitfield_window(&v, addr, size);
	return 0;
}

bool expr_has_event(const struct expr *e)
{
	for (; e; e = e->lhs) {
		if (e->kind == E_EVENT)
			return true;
		if (expr_has_event(e->rhs))
			return true;
	}
	return false;
}

int expr_operands(const struct expr *e, int (*fn)(const struct expr *operand, void *ctx), void *ctx)
{
	const struct expr *b;

	if (e->kind != E_BINARY) {
		if (e->lhs && fn(e->lhs, ctx) < 0)
			return -1;
		return e->rhs ? fn(e->rhs, ctx) : 0;
	}
	b = expr_chain_bottom(e);
	if (fn(b->lhs, ctx) < 0)
		return -1;
	for (;; b = b->up) {
		assert(b); /* the spine leads back up to e (ast.h) */
		if (fn(b->rhs, ctx) < 0)
			return -1;
		if (b == e)
			return 0;
	}
}
