#include "bio.h"
#include "array.h"
#include <stdlib.h>
#include <string.h>

struct bio {
	u64 id;
	int task, op;
	u64 logical, bytes;
	bio_end_fn fn;
	void *arg;
	u64 arg2;
	u64 started;
};

struct bio_dev {
	struct sched *s;
	const struct btrfs_device_profile *p;
	struct bio *queue; /* waiting for a slot, FIFO */
	size_t nq, capq, qhead;
	struct bio *inflight; /* started, by id */
	size_t ninflight, capinflight;
	u64 next_id, bus_free, writes_done, last_end, busy_since, barrier_until;
	struct bio_stats st;
};

struct bio_dev *bio_dev_create(struct sched *s, const struct btrfs_device_profile *p)
{
	struct bio_dev *d = calloc(1, sizeof(*d));
	if (d) {
		d->s = s;
		d->p = p;
		d->next_id = 1;
	}
	return d;
}

void bio_dev_destroy(struct bio_dev *d)
{
	if (d) {
		free(d->queue);
		free(d->inflight);
		free(d);
	}
}

int bio_busy(const struct bio_dev *d) { return (int)(d->ninflight + (d->nq - d->qhead)); }
const struct bio_stats *bio_dev_stats(const struct bio_dev *d) { return &d->st; }

static int complete(struct sched *s, void *arg, u64 id);

/* Starts b now: when it will complete. */
static int start(struct bio_dev *d, struct bio b)
{
	const struct btrfs_device_profile *p = d->p;
	u64 now = sched_now(d->s), done;
	/* the device's own variation, from the run's seeded stream */
	u64 jit = p->jitter_pct ? sched_random(d->s) % (2 * (u64)p->jitter_pct + 1) : 0; /* 0 .. 2*pct */
	if (b.op == BIO_FLUSH) {
		/* now and then a slow one (flush_tail_ppm in a million), drawn only where the profile has them */
		u64 ns = p->flush_tail_ppm && sched_random(d->s) % 1000000 < p->flush_tail_ppm ? p->flush_tail_ns : p->flush_ns;
		done = (d->writes_done > now ? d->writes_done : now) + ns * (100 - p->jitter_pct + jit) / 100;
		if (p->flush_barrier)
			d->barrier_until = done;
	} else {
		u64 xfer = b.bytes * 1000000000ULL / p->bandwidth, at = d->bus_free > now ? d->bus_free : now;
		if (p->idle_wake_ns && !d->ninflight && d->writes_done <= now)
			at += p->idle_wake_ns; /* the device's worker, asleep, woken for it */
		if (at < d->barrier_until)
			at = d->barrier_until; /* behind a flush */
		if (p->seek_ns && b.logical != d->last_end)
			at += p->seek_ns;
		d->bus_free = at + xfer;
		d->last_end = b.logical + b.bytes;
		done = d->bus_free + (p->write_latency_ns + (b.op == BIO_SUPER ? p->fua_ns : 0)) * (100 - p->jitter_pct + jit) / 100;
		if (b.op == BIO_SUPER && p->flush_barrier)
			d->barrier_until = done;
	}
	if (done > d->writes_done)
		d->writes_done = done;
	if (!d->ninflight)
		d->busy_since = now;
	b.started = now;
	if (array_room(&d->inflight, d->ninflight, &d->capinflight, sizeof(*d->inflight), 16))
		return BLAB_ENOMEM;
	d->inflight[d->ninflight++] = b;
	return sched_at(d->s, done - now, complete, d, b.id);
}

static int complete(struct sched *s, void *arg, u64 id)
{
	struct bio_dev *d = arg;
	size_t i = 0;
	while (i < d->ninflight && d->inflight[i].id != id)
		i++;
	if (i == d->ninflight)
		return 0;
	struct bio b = d->inflight[i];
	memmove(&d->inflight[i], &d->inflight[i + 1], (d->ninflight - i - 1) * sizeof(b));
	d->ninflight--;
	u64 now = sched_now(s);
	if (!d->ninflight)
		d->st.busy_ns += now - d->busy_since;
	d->st.bios[b.op]++;
	d->st.bytes[b.op] += b.bytes;
	struct btrfs_fs_info *fs = sched_fs(s);
	fs_trace(fs, (struct trace_event){.kind = TRACE_BIO_DONE, .a = b.id, .level = b.op, .bytenr = b.logical, .b = b.bytes,
					  .c = now - b.started});
	int ret = 0;
	if (d->qhead < d->nq) {
		struct bio next = d->queue[d->qhead++];
		if (d->qhead == d->nq)
			d->qhead = d->nq = 0;
		ret = start(d, next);
	}
	if (!ret && b.fn)
		ret = b.fn(s, b.arg, b.arg2);
	return ret;
}

u64 bio_submit(struct bio_dev *d, int task, int op, u64 logical, u64 bytes, bio_end_fn fn, void *arg, u64 arg2)
{
	struct bio b = {.id = d->next_id++, .task = task, .op = op, .logical = logical, .bytes = bytes, .fn = fn, .arg = arg,
			.arg2 = arg2};
	fs_trace(sched_fs(d->s), (struct trace_event){.kind = TRACE_BIO_SUBMIT, .a = b.id, .slot = task, .level = op,
						      .bytenr = logical, .b = bytes});
	if (d->ninflight < (size_t)d->p->queue_depth)
		return start(d, b) ? 0 : b.id;
	if (array_room(&d->queue, d->nq, &d->capq, sizeof(*d->queue), 16))
		return 0;
	d->queue[d->nq++] = b;
	return b.id;
}
