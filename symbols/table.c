/*
 * Small containers for the symbols module: an arena, a string map and
 * growing arrays.
 *
 * Everything a sym_space hands out (strings, sym_type objects, index
 * entries) lives until sym_close, so there is no point in freeing things one
 * by one: they are bump-allocated from 64 KiB chunks and the chunks are freed
 * together.  Allocations larger than a chunk get a chunk of their own.
 *
 * The string map is a plain open-addressing table with linear probing and
 * FNV-1a hashing.  Keys are not copied: they are names owned by libdw or by
 * the arena, which outlive the map.  There is no deletion; a map is thrown
 * away as a whole.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

#define CHUNK_SIZE (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

static struct arena_chunk *chunk_new(size_t cap)
{
	struct arena_chunk *c = malloc(sizeof(*c) + cap);

	if (!c)
		return NULL;
	c->used = 0;
	c->cap = cap;
	return c;
}

void *symi_arena_alloc(struct symi_arena *a, size_t size)
{
	struct arena_chunk *c = a->head;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < size) {
		c = chunk_new(size > CHUNK_SIZE ? size : CHUNK_SIZE);
		if (!c)
			return NULL;
		c->next = a->head;
		a->head = c;
	}
	p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

char *symi_arena_strdup(struct symi_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = symi_arena_alloc(a, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

void symi_arena_free(struct symi_arena *a)
{
	struct arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

static size_t str_hash(const char *s)
{
	size_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct strmap_ent *slot_for(struct strmap_ent *slots, size_t cap, const char *key)
{
	size_t i = str_hash(key) & (cap - 1);

	while (slots[i].key && strcmp(slots[i].key, key) != 0)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

void *symi_strmap_get(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	return slot_for(m->slots, m->cap, key)->val;
}

static int strmap_resize(struct strmap *m, size_t cap)
{
	struct strmap_ent *slots = calloc(cap, sizeof(*slots));
	size_t i;

	if (!slots)
		return -1;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			*slot_for(slots, cap, m->slots[i].key) = m->slots[i];
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

static int strmap_grow(struct strmap *m)
{
	return strmap_resize(m, m->cap ? m->cap * 2 : 256);
}

int symi_strmap_reserve(struct strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 256;

	while (n * 2 > cap)
		cap *= 2;
	return cap > m->cap ? strmap_resize(m, cap) : 0;
}

/* Insert or replace. */
int symi_strmap_put(struct strmap *m, const char *key, void *val)
{
	struct strmap_ent *e;

	if ((m->len + 1) * 2 > m->cap && strmap_grow(m) < 0)
		return -1;
	e = slot_for(m->slots, m->cap, key);
	if (!e->key) {
		e->key = key;
		m->len++;
	}
	e->val = val;
	return 0;
}

void symi_strmap_free(struct strmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

int symi_reserve(void *items, size_t *cap, size_t n, size_t size)
{
	void **p = items;
	size_t grown_cap;
	void *grown;

	if (n < *cap)
		return 0;
	grown_cap = *cap ? *cap * 2 : 8;
	grown = realloc(*p, size * grown_cap);
	if (!grown)
		return -1;
	*p = grown;
	*cap = grown_cap;
	return 0;
}
