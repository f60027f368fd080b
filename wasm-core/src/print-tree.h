/* print-tree.h — trees as text, in the format of btrfs-progs'
 * `btrfs inspect-internal dump-tree` (header and item lines identical, so
 * the two can be diffed), and as JSON for the UI. Output goes to a growable
 * string buffer. */
#ifndef BTRFSLAB_PRINT_TREE_H
#define BTRFSLAB_PRINT_TREE_H
#include "fs.h"
#include <stddef.h>

struct strbuf {
	char *s;
	size_t len, cap;
	int oom;
};
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct strbuf *b);
/* Appends n bytes of s as a JSON string (quoted, escaped; bytes outside
 * printable ASCII as \u00XX). */
void sb_json_string(struct strbuf *b, const char *s, size_t n);

/* Names as dump-tree prints them. */
const char *btrfs_key_type_name(u8 type, char *buf, size_t n);
/* The i-th objectid dump-tree prints by name (ROOT_TREE, TREE_LOG, ...):
 * 1 with *id and *name set, 0 past the last. */
int btrfs_objectid_name_at(size_t i, u64 *id, const char **name);
void btrfs_format_key(const struct btrfs_key *k, char *buf, size_t n);

/* The whole dump of dump-tree; tree_id 0 means every tree, else one tree. */
int btrfs_dump_tree_text(struct btrfs_fs_info *fs, u64 tree_id, struct strbuf *out);
/* Every tree as JSON: {"trees":[{"id":"5","name":"fs","blocks":[...]}]},
 * 64-bit values as decimal strings. */
int btrfs_dump_tree_json(struct btrfs_fs_info *fs, struct strbuf *out);
/* The same for one tree in full (tree_id; 0 for all), the others listed
 * with their block counts but no blocks; with max_leaf_entries > 0, leaves
 * of more items list only their first and last (level of detail). */
int btrfs_dump_tree_json_opts(struct btrfs_fs_info *fs, struct strbuf *out, u64 tree_id, int max_leaf_entries);
#endif
