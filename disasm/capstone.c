/*
 * capstone: the per-thread capstone handle and its decode cache.
 *
 * A csh is not safe to share between threads, and opening one costs far more
 * than decoding an instruction.  So each thread lazily opens its own handle
 * (x86-64, detail on) together with a few cs_insn buffers that
 * cs_disasm_iter refills, and a pthread key closes them when the thread
 * exits.  The main thread's set is simply left to process exit.
 *
 * A decode with detail costs about as much as a ptrace round trip, and a
 * stepper decodes the same few instructions again and again: a scan stops
 * at one, then dis_matches, dis_accesses and dis_next_pc look at it, and a
 * loop brings it back.  So the buffers form a small direct-mapped cache
 * keyed by address; a slot is reused only if the bytes it decoded are the
 * ones asked about now (same bytes at the same address decode the same),
 * so changed code, or an int3 in the caller's copy, simply misses.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "disasm/internal.h"

#define CACHE_SLOTS 16 /* a power of two */

struct cached {
	cs_insn *insn;
	uint64_t addr;		     /* insn holds the decode of bytes at addr */
	uint8_t bytes[DIS_MAX_INSN]; /* its first size bytes */
	uint16_t size;		     /* 0: nothing reusable */
};

struct dis_cs {
	csh handle;
	struct cached slots[CACHE_SLOTS];
};

static __thread struct dis_cs *tls_cs;
static pthread_key_t cs_key;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_release(void *p)
{
	struct dis_cs *cs = p;

	for (int i = 0; i < CACHE_SLOTS; i++)
		if (cs->slots[i].insn)
			cs_free(cs->slots[i].insn, 1);
	cs_close(&cs->handle);
	free(cs);
}

static void cs_make_key(void)
{
	pthread_key_create(&cs_key, cs_release);
}

static struct dis_cs *cs_open_thread(void)
{
	struct dis_cs *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs->handle) != CS_ERR_OK)
		goto err_free;
	if (cs_option(cs->handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		goto err_close;
	for (int i = 0; i < CACHE_SLOTS; i++) {
		cs->slots[i].insn = cs_malloc(cs->handle);
		if (!cs->slots[i].insn)
			goto err_release;
	}
	pthread_once(&cs_once, cs_make_key);
	pthread_setspecific(cs_key, cs);
	return cs;

err_release:
	cs_release(cs); /* closes the handle and frees cs */
	return NULL;
err_close:
	cs_close(&cs->handle);
err_free:
	free(cs);
	return NULL;
}

static struct cached *slot_for(struct dis_cs *cs, uint64_t addr)
{
	return &cs->slots[(addr * 0x9e3779b97f4a7c15ull) >> 60 & (CACHE_SLOTS - 1)];
}

static bool holds(const struct cached *c, const uint8_t *code, size_t n, uint64_t addr)
{
	return c->size && c->addr == addr && n >= c->size && memcmp(c->bytes, code, c->size) == 0;
}

const cs_insn *dis_cs_decode(const uint8_t *code, size_t n, uint64_t addr)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	struct cached *c;

	if (!tls_cs)
		tls_cs = cs_open_thread();
	if (!tls_cs)
		return NULL;
	c = slot_for(tls_cs, addr);
	if (holds(c, code, n, addr))
		return c->insn;
	c->size = 0;
	if (!cs_disasm_iter(tls_cs->handle, &p, &n, &a, c->insn))
		return NULL;
	if (c->insn->size <= DIS_MAX_INSN) {
		c->addr = addr;
		c->size = c->insn->size;
		memcpy(c->bytes, code, c->size);
	}
	return c->insn;
}
