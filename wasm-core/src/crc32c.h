/* crc32c.h — CRC-32C (Castagnoli), as btrfs uses it for block checksums and
 * for directory name hashes. */
#ifndef BTRFSLAB_CRC32C_H
#define BTRFSLAB_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/* Raw update: no inversion in or out. crc32c_raw(~0u, ...) ^ ~0u is the
 * standard CRC-32C of the data. */
uint32_t crc32c_raw(uint32_t crc, const void *data, size_t len);

/* The standard CRC-32C of data (what btrfs stores in a csum field). */
static inline uint32_t crc32c(const void *data, size_t len) { return ~crc32c_raw(~0u, data, len); }

/* btrfs_name_hash: the key offset of a DIR_ITEM for this name. */
static inline uint64_t btrfs_name_hash(const char *name, size_t len) { return crc32c_raw(~1u, name, len); }

/* The key offset of an INODE_EXTREF: crc32c seeded with the parent objectid. */
uint64_t btrfs_extref_hash(uint64_t parent_objectid, const char *name, size_t len);
#endif
