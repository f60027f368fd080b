/* untar.c — seed 002's untar workload: see untar.h. */
#include "untar.h"
#include "splitmix.h"
#include <stdio.h>
#include <string.h>

/* Quantiles at i/256 (i = 0..256), in bytes: exp(8.6 + 0.9 z) clamped to
 * 64..65536, and 20480 (1 - u)^(-1/1.2) capped at 4 MiB (computed once with
 * Python's statistics.NormalDist; the ends held at the 0.0001 quantiles). */
static const u32 lognormal_q[257] = {191,496,617,707,782,848,908,964,1016,1065,1113,1158,1202,1244,1286,1326,1366,1404,1442,1479,1516,1552,1588,1624,1659,1693,1728,1762,1796,1829,1863,1896,1929,1962,1994,2027,2060,2092,2124,2156,2189,2221,2253,2285,2317,2349,2381,2413,2444,2476,2508,2540,2572,2604,2636,2668,2701,2733,2765,2797,2830,2862,2895,2927,2960,2993,3026,3059,3092,3125,3158,3192,3225,3259,3293,3327,3361,3395,3429,3464,3499,3533,3568,3603,3639,3674,3710,3746,3782,3818,3855,3891,3928,3965,4002,4040,4077,4115,4154,4192,4231,4269,4309,4348,4388,4427,4468,4508,4549,4590,4631,4673,4715,4757,4799,4842,4885,4929,4973,5017,5062,5106,5152,5197,5243,5290,5337,5384,5432,5480,5528,5577,5627,5676,5727,5778,5829,5881,5933,5986,6039,6093,6147,6202,6258,6314,6371,6428,6486,6545,6604,6664,6724,6786,6848,6910,6974,7038,7103,7169,7236,7303,7372,7441,7511,7582,7654,7727,7801,7876,7952,8030,8108,8187,8268,8350,8433,8517,8603,8690,8779,8868,8960,9053,9147,9243,9341,9441,9542,9646,9751,9858,9967,10078,10192,10308,10426,10547,10670,10796,10925,11056,11191,11329,11470,11614,11762,11914,12069,12229,12393,12562,12735,12913,13097,13286,13480,13681,13889,14103,14325,14555,14792,15039,15296,15562,15839,16128,16430,16746,17076,17423,17787,18170,18575,19004,19458,19942,20458,21011,21606,22248,22946,23709,24547,25476,26516,27692,29041,30614,32490,34793,37740,41756,47849,59520,65536};
static const u32 pareto_q[257] = {20480,20547,20614,20682,20751,20819,20889,20959,21029,21100,21171,21243,21316,21389,21463,21537,21612,21687,21763,21839,21916,21994,22072,22151,22231,22311,22392,22473,22555,22638,22722,22806,22891,22976,23062,23149,23237,23325,23414,23504,23595,23686,23779,23872,23965,24060,24155,24252,24349,24447,24546,24645,24746,24848,24950,25053,25158,25263,25369,25477,25585,25694,25804,25916,26028,26142,26256,26372,26489,26607,26726,26846,26968,27091,27215,27340,27466,27594,27723,27854,27986,28119,28253,28390,28527,28666,28806,28948,29092,29237,29384,29532,29682,29834,29987,30142,30299,30458,30618,30781,30945,31111,31280,31450,31622,31797,31973,32152,32333,32516,32702,32889,33080,33272,33467,33665,33865,34068,34274,34482,34693,34907,35124,35344,35567,35793,36023,36255,36491,36730,36973,37220,37470,37723,37981,38242,38508,38777,39051,39329,39611,39898,40189,40485,40786,41092,41403,41720,42041,42369,42701,43040,43385,43735,44092,44456,44826,45203,45587,45978,46377,46784,47198,47621,48051,48491,48940,49397,49865,50342,50829,51327,51836,52356,52887,53431,53987,54556,55138,55734,56345,56970,57611,58268,58941,59632,60341,61069,61817,62585,63374,64185,65020,65879,66763,67674,68613,69580,70579,71609,72673,73772,74909,76085,77303,78564,79871,81227,82635,84097,85618,87201,88849,90568,92361,94235,96194,98245,100395,102651,105021,107516,110145,112919,115852,118958,122254,125757,129489,133473,137737,142314,147238,152554,158311,164569,171398,178883,187127,196256,206425,217831,230722,245420,262349,282078,305396,333422,367808,411101,467452,544154,655360,832905,1167719,2080638,4194304};

/* lo..hi, both included */
static int between(u64 *x, int lo, int hi) { return lo + (int)(splitmix64(x) % (u64)(hi - lo + 1)); }

static u64 quantile(const u32 *q, u64 u)
{
	u64 i = u >> 56, frac = (u >> 24) & 0xFFFFFFFFULL;
	return q[i] + (((u64)(q[i + 1] - q[i]) * frac) >> 32);
}

u64 untar_file_size(u64 *rng)
{
	u64 pick = splitmix64(rng) % 100;
	return quantile(pick < 92 ? lognormal_q : pareto_q, splitmix64(rng));
}

void untar_init(struct untar_gen *g, const char *base, u64 seed, u64 max_files, u64 max_bytes)
{
	memset(g, 0, sizeof(*g));
	g->rng = seed * 0x2545F4914F6CDD1DULL + 1;
	g->max_files = max_files;
	g->max_bytes = max_bytes;
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	if (n > UNTAR_PATH_MAX - 64)
		n = UNTAR_PATH_MAX - 64; /* (the caller checks the base's length) */
	memcpy(g->path, base, n);
	g->len = g->base_len = n;
	g->path[n] = 0;
}

static int full(const struct untar_gen *g) { return g->files >= g->max_files || g->bytes >= g->max_bytes; }

static void path_set(struct untar_gen *g, size_t at, const char *fmt, int v)
{
	snprintf(g->path + at, UNTAR_PATH_MAX - at, fmt, v);
	g->len = strlen(g->path);
}

/* Enters a new directory (its name already in g->path): a frame with its counts. */
static int enter(struct untar_gen *g)
{
	struct untar_frame *f = &g->f[g->depth++];
	f->len = g->len;
	f->nfiles = between(&g->rng, 2, 30);
	f->nsub = g->depth - 1 < UNTAR_MAX_DEPTH - 1 ? between(&g->rng, 1, 5) : 0;
	f->i = f->j = 0;
	g->dirs++;
	return UNTAR_MKDIR;
}

void untar_set_chunk(struct untar_gen *g, u64 chunk) { g->chunk = chunk; }

int untar_next(struct untar_gen *g, u64 *off, u64 *len)
{
	if (g->pending_write) {
		/* the path is still the file's */
		u64 left = g->write_len - g->write_off, n = g->chunk && g->chunk < left ? g->chunk : left;
		*off = g->write_off;
		*len = n;
		g->write_off += n;
		if (g->write_off >= g->write_len)
			g->pending_write = 0;
		return UNTAR_WRITE;
	}
	for (;;) {
		if (!g->depth) {
			if (!g->src_made) {
				g->src_made = 1;
				path_set(g, g->base_len, "/src%.0d", 0);
				g->dirs++;
				return UNTAR_MKDIR;
			}
			if (full(g))
				return UNTAR_END;
			path_set(g, g->base_len + 4, "/m%03d", (int)g->top++);
			return enter(g);
		}
		struct untar_frame *f = &g->f[g->depth - 1];
		if (full(g)) {
			g->depth = 0;
			continue;
		}
		if (f->i < f->nfiles) {
			path_set(g, f->len, "/f%03d.c", f->i++);
			u64 n = untar_file_size(&g->rng);
			g->files++;
			g->bytes += n;
			g->pending_write = n > 0;
			g->write_len = n;
			g->write_off = 0;
			return UNTAR_CREATE;
		}
		if (f->j < f->nsub) {
			path_set(g, f->len, "/d%02d", f->j++);
			return enter(g);
		}
		g->depth--;
	}
}
