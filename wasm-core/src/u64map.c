#include "u64map.h"
#include <stdlib.h>

#define EMPTY UINT64_MAX

static size_t slot_of(u64 k, size_t cap) { return (size_t)((k * 0x9E3779B97F4A7C15ULL) >> 17) & (cap - 1); }

void u64map_init(struct u64map *m, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->vsize = vsize;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->max_val);
	m->keys = NULL;
	m->vals = NULL;
	m->max_val = NULL;
	m->cap = m->len = 0;
	m->has_max = 0;
}

int u64map_clone(struct u64map *dst, const struct u64map *src)
{
	u64map_init(dst, src->vsize);
	if (src->cap) {
		dst->keys = malloc(src->cap * sizeof(u64));
		dst->vals = malloc(src->cap * src->vsize);
		if (!dst->keys || !dst->vals) {
			u64map_free(dst);
			return -1;
		}
		memcpy(dst->keys, src->keys, src->cap * sizeof(u64));
		memcpy(dst->vals, src->vals, src->cap * src->vsize);
	}
	if (src->max_val) {
		if (!(dst->max_val = malloc(src->vsize))) {
			u64map_free(dst);
			return -1;
		}
		memcpy(dst->max_val, src->max_val, src->vsize);
	}
	dst->cap = src->cap;
	dst->len = src->len;
	dst->has_max = src->has_max;
	return 0;
}

void u64map_clear(struct u64map *m)
{
	if (m->keys)
		for (size_t i = 0; i < m->cap; i++)
			m->keys[i] = EMPTY;
	m->len = 0;
	m->has_max = 0;
}

void *u64map_get(const struct u64map *m, u64 key)
{
	if (key == EMPTY)
		return m->has_max ? m->max_val : NULL;
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals + i * m->vsize;
		if (m->keys[i] == EMPTY)
			return NULL;
	}
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	u64 *keys = malloc(cap * sizeof(u64));
	u8 *vals = calloc(cap, m->vsize);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		keys[i] = EMPTY;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == EMPTY)
			continue;
		size_t j = slot_of(m->keys[i], cap);
		while (keys[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		memcpy(vals + j * m->vsize, m->vals + i * m->vsize, m->vsize);
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

void *u64map_put(struct u64map *m, u64 key)
{
	void *v = u64map_get(m, key);
	if (v)
		return v;
	if (key == EMPTY) {
		if (!m->max_val && !(m->max_val = malloc(m->vsize ? m->vsize : 1)))
			return NULL;
		memset(m->max_val, 0, m->vsize);
		m->has_max = 1;
		m->len++;
		return m->max_val;
	}
	if ((m->len + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	size_t i = slot_of(key, m->cap);
	while (m->keys[i] != EMPTY)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	memset(m->vals + i * m->vsize, 0, m->vsize);
	m->len++;
	return m->vals + i * m->vsize;
}

int u64map_del(struct u64map *m, u64 key)
{
	if (key == EMPTY) {
		if (!m->has_max)
			return -1;
		m->has_max = 0;
		m->len--;
		return 0;
	}
	if (!m->cap)
		return -1;
	size_t i = slot_of(key, m->cap);
	while (m->keys[i] != key) {
		if (m->keys[i] == EMPTY)
			return -1;
		i = (i + 1) & (m->cap - 1);
	}
	/* backward-shift deletion keeps probe chains intact */
	for (;;) {
		size_t j = i;
		m->keys[i] = EMPTY;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (m->keys[j] == EMPTY) {
				m->len--;
				return 0;
			}
			size_t h = slot_of(m->keys[j], m->cap);
			/* move j back to i if its home is not in (i, j] */
			if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)))
				break;
		}
		m->keys[i] = m->keys[j];
		memcpy(m->vals + i * m->vsize, m->vals + j * m->vsize, m->vsize);
		i = j;
	}
}

int u64map_next(const struct u64map *m, size_t *i, u64 *key, void **val)
{
	for (; *i < m->cap; (*i)++) {
		if (m->keys[*i] != EMPTY) {
			*key = m->keys[*i];
			*val = m->vals + *i * m->vsize;
			(*i)++;
			return 1;
		}
	}
	if (*i == m->cap && m->has_max) { /* the key kept beside the table comes last */
		*key = EMPTY;
		*val = m->max_val;
		(*i)++;
		return 1;
	}
	return 0;
}
