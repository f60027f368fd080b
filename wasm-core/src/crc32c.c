/* crc32c.c — CRC-32C: the SSE 4.2 instruction where there is one, else
 * slicing-by-16 (slicing-by-8 on big-endian machines); tables built once on
 * first use. */
#include "crc32c.h"
#include <string.h>

static uint32_t table[16][256];
static int table_ready;

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 16; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
	table_ready = 1;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* SSE 4.2 has a CRC-32C instruction: 8 bytes a step. Chosen at run time. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
static int have_hw = -1;
#endif

uint32_t crc32c_raw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (have_hw < 0)
		have_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (have_hw)
		return crc32c_hw(crc, p, len);
#endif
	if (!table_ready)
		crc32c_init();
	while (len && ((uintptr_t)p & 7)) {
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* slicing-by-16 with word loads (WebAssembly has no CRC instruction) */
	while (len >= 16) {
		uint32_t w[4];
		memcpy(w, p, 16);
		uint32_t a = crc ^ w[0], b = w[1], c = w[2], d = w[3];
		crc = table[15][a & 0xff] ^ table[14][(a >> 8) & 0xff] ^ table[13][(a >> 16) & 0xff] ^ table[12][a >> 24] ^
		      table[11][b & 0xff] ^ table[10][(b >> 8) & 0xff] ^ table[9][(b >> 16) & 0xff] ^ table[8][b >> 24] ^
		      table[7][c & 0xff] ^ table[6][(c >> 8) & 0xff] ^ table[5][(c >> 16) & 0xff] ^ table[4][c >> 24] ^
		      table[3][d & 0xff] ^ table[2][(d >> 8) & 0xff] ^ table[1][(d >> 16) & 0xff] ^ table[0][d >> 24];
		p += 16;
		len -= 16;
	}
#endif
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24));
		uint32_t hi = (uint32_t)p[4] | ((uint32_t)p[5] << 8) | ((uint32_t)p[6] << 16) | ((uint32_t)p[7] << 24);
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		      table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint64_t btrfs_extref_hash(uint64_t parent_objectid, const char *name, size_t len)
{
	return crc32c_raw((uint32_t)parent_objectid, name, len);
}
