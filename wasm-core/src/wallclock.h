/* wallclock.h — the host's time, for the figures that say how long the core
 * itself took (a run, a balance, a crash walk) and for the CLI's progress
 * and timeouts. Never the model's time: that is the virtual clock of
 * sched.h. */
#ifndef BTRFSLAB_WALLCLOCK_H
#define BTRFSLAB_WALLCLOCK_H
#include <time.h>

static inline struct timespec wallclock_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

/* Milliseconds from t0 to now. */
static inline double wallclock_ms_since(const struct timespec *t0)
{
	struct timespec t1 = wallclock_now();
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Seconds of CPU the process has used (a run's time bound: a busy machine
 * does not make a run fail sooner). */
static inline double cpuclock_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Seconds on the monotonic clock (a progress line's, a server's uptime). */
static inline double wallclock_s(void)
{
	struct timespec t = wallclock_now();
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
#endif
