/* bio.h — the device model of a timed run: bios queued to a device with a
 * queue depth, each serviced in its transfer time (the bandwidth is shared:
 * transfers go one after another) plus a latency that overlaps with other
 * requests', a seek on a disk, flushes that wait for the writes before them
 * (costs.h holds the profiles). Each bio is a BIO_SUBMIT and a BIO_DONE event. */
#ifndef BTRFSLAB_BIO_H
#define BTRFSLAB_BIO_H
#include "sched.h"
#include "costs.h"

struct bio_dev;
/* Called at a bio's completion (the clock at its time). */
typedef int (*bio_end_fn)(struct sched *s, void *arg, u64 arg2);

struct bio_dev *bio_dev_create(struct sched *s, const struct btrfs_device_profile *p);
void bio_dev_destroy(struct bio_dev *d);
/* Queues a bio; fn(s, arg, arg2) runs when it completes. Returns its id (> 0) or 0 on ENOMEM. */
u64 bio_submit(struct bio_dev *d, int task, int op, u64 logical, u64 bytes, bio_end_fn fn, void *arg, u64 arg2);
/* Bios queued or in flight. */
int bio_busy(const struct bio_dev *d);

struct bio_stats {
	u64 bios[BIO_OP_COUNT], bytes[BIO_OP_COUNT];
	u64 busy_ns; /* time with at least one bio in flight */
};
const struct bio_stats *bio_dev_stats(const struct bio_dev *d);
#endif
