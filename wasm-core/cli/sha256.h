/* sha256.h — SHA-256 (FIPS 180-4), for file contents the kernel shows. */
#ifndef BTRFSLAB_SHA256_H
#define BTRFSLAB_SHA256_H
#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* The digest as 64 hex digits and a NUL; s is spent. */
void sha256_hex(struct sha256 *s, char out[65]);
#endif
