/* GPU fragmentation: see frag_internal.h. Cost: frag_amount O(shapes +
 * GPUs); frag_growth one frag_amount per distinct free value a sharing pod
 * could take, plus one; frag_reservation O(1) but once per mix. */
#include "workers/frag_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void frag_counter_init(struct frag_counter *c)
{
	memset(c, 0, sizeof(*c));
	c->next_refresh = FRAG_FIRST_REFRESH;
}

static void shape_of(const struct pod_spec *pod, struct frag_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->cpu_milli = pod->nonzero_cpu_milli;
	s->num_gpu = pod->num_gpu;
	s->gpu_milli = pod->num_gpu ? pod->gpu_milli : 0;
	s->n_models = pod->num_gpu ? pod->n_gpu_models : 0;
	for (unsigned i = 0; i < s->n_models; i++)
		s->models[i] = pod->gpu_models[i];
}

static uint64_t shape_hash(const struct frag_shape *s)
{
	/* FNV-1a over the bytes; shapes are zero-filled, so equal shapes hash
	 * equal. Never 0 (the empty mark). */
	const unsigned char *b = (const unsigned char *)s;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < sizeof(*s); i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h ? h : 1;
}

bool frag_counter_add(struct frag_counter *c, const struct pod_spec *pod)
{
	struct frag_shape s;
	shape_of(pod, &s);
	uint64_t h = shape_hash(&s);
	uint32_t i = (uint32_t)h & (FRAG_COUNT_SLOTS - 1);
	c->pods++;
	for (;; i = (i + 1) & (FRAG_COUNT_SLOTS - 1)) {
		struct frag_count *e = &c->slot[i];
		if (e->hash == h && memcmp(&e->shape, &s, sizeof(s)) == 0) {
			e->count++;
			break;
		}
		if (e->hash == 0) {
			/* Half full at most, so probes stay short; past that a
			 * new shape is not counted (it is rare by then). */
			if (c->n_shapes >= FRAG_COUNT_SLOTS / 2) {
				c->dropped++;
				break;
			}
			*e = (struct frag_count){.hash = h, .shape = s, .count = 1};
			c->n_shapes++;
			break;
		}
	}
	if (c->pods < c->next_refresh)
		return false;
	uint64_t step = c->next_refresh; /* next at 2x */
	c->next_refresh += step < FRAG_MAX_INTERVAL ? step : FRAG_MAX_INTERVAL;
	return true;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct frag_count *x = *(const struct frag_count *const *)a;
	const struct frag_count *y = *(const struct frag_count *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	/* A fixed order for equal counts, so a build is reproducible. */
	return memcmp(&x->shape, &y->shape, sizeof(x->shape));
}

static void mix_from(struct frag_mix *m, const struct frag_counter *c,
		     unsigned max_shapes)
{
	const struct frag_count *all[FRAG_COUNT_SLOTS];
	unsigned n = 0;
	uint64_t total = 0;
	for (unsigned i = 0; i < FRAG_COUNT_SLOTS; i++)
		if (c->slot[i].hash != 0) {
			all[n++] = &c->slot[i];
			total += c->slot[i].count;
		}
	qsort(all, n, sizeof(all[0]), by_count_desc);
	m->n = 0;
	m->total = 0;
	/* Take shapes while what is taken is below the cover: the one that
	 * crosses it is included (the paper's rule). */
	if (max_shapes == 0 || max_shapes > FRAG_MAX_TYPES)
		max_shapes = FRAG_MAX_TYPES;
	for (unsigned i = 0; i < n && m->n < max_shapes &&
			     m->total * 1000 < total * FRAG_COVER_PERMILLE; i++) {
		m->shape[m->n] = all[i]->shape;
		m->weight[m->n] = all[i]->count;
		m->total += all[i]->count;
		m->n++;
	}
	/* CPU-only shapes out to one weight; GPU shapes by gpu_milli
	 * (insertion sort: at most FRAG_MAX_TYPES, once per build). */
	unsigned g = 0;
	m->cpu_only_weight = 0;
	for (unsigned i = 0; i < m->n; i++) {
		if (m->shape[i].num_gpu == 0) {
			m->cpu_only_weight += m->weight[i];
			continue;
		}
		struct frag_shape sh = m->shape[i];
		uint32_t w = m->weight[i];
		unsigned j = g++;
		for (; j > 0 && m->shape[j - 1].gpu_milli > sh.gpu_milli; j--) {
			m->shape[j] = m->shape[j - 1];
			m->weight[j] = m->weight[j - 1];
		}
		m->shape[j] = sh;
		m->weight[j] = w;
	}
	m->n = g;
}

/* Whether two mixes have the same shapes in the same order and weights
 * within FRAG_KEEP_PERMILLE of each other in L1 distance (as shares). */
static bool mix_close(const struct frag_mix *a, const struct frag_mix *b)
{
	if (a->n != b->n || a->total == 0 || b->total == 0)
		return false;
	double dist = fabs((double)a->cpu_only_weight / (double)a->total -
			   (double)b->cpu_only_weight / (double)b->total);
	for (unsigned t = 0; t < a->n; t++) {
		if (memcmp(&a->shape[t], &b->shape[t], sizeof(a->shape[t])) != 0)
			return false;
		dist += fabs((double)a->weight[t] / (double)a->total -
			     (double)b->weight[t] / (double)b->total);
	}
	return dist * 1000 < FRAG_KEEP_PERMILLE;
}

bool frag_mix_build(struct frag_mix *m, const struct frag_counter *c,
		    unsigned max_shapes, bool cpu_limited)
{
	static_assert(sizeof(struct frag_mix) < 16384, "a mix fits the stack");
	struct frag_mix next;
	mix_from(&next, c, max_shapes);
	next.cpu_limited = cpu_limited;
	for (unsigned t = 0; t < next.n; t++) {
		const struct frag_shape *s = &next.shape[t];
		next.share_inv[t] = s->num_gpu == 1 && s->gpu_milli < GPU_MILLI_PER_DEVICE &&
				    s->gpu_milli > 0 && s->cpu_milli > 0
			? ((UINT64_C(1) << 32) + s->gpu_milli - 1) / s->gpu_milli : 0;
	}
	if (m->epoch > 0 && m->cpu_limited == cpu_limited && mix_close(m, &next))
		return false;
	next.epoch = m->epoch + 1;
	*m = next;
	return true;
}

static bool shape_model_ok(const struct frag_shape *s, const struct node_devices *d)
{
	if (s->n_models == 0)
		return true;
	for (unsigned i = 0; i < s->n_models; i++)
		if (s->models[i] == d->gpu_model)
			return true;
	return false;
}

/* The cpu-limited measure of a sharing shape (frag_internal.h) on a node
 * whose devices, sorted, hold sorted[j..G) at least its milli and whose
 * cpu may hold fewer of its pods than they do. */
static int64_t cpu_limited_frag(const struct frag_shape *s, uint64_t inv,
				const uint16_t *sorted, unsigned G, unsigned j,
				int64_t cpu_left, int64_t left, int64_t below)
{
	/* One walk from the most free device: place pods until the cpu's
	 * cap is used; the cpu limits them if a device (or a pod) is left
	 * over then. */
	int64_t k = cpu_left / s->cpu_milli, whole = 0, own = 0;
	unsigned g = G;
	for (; g > j && k > 0; g--) {
		int64_t pods = (int64_t)((sorted[g - 1] * inv) >> 32);
		int64_t take = pods < k ? pods : k;
		whole += sorted[g - 1];
		own += take * s->gpu_milli;
		k -= take;
		if (k == 0 && (pods > take || g - 1 > j))
			return left - (FRAG_CPU_WHOLE_QUARTERS * whole +
				       (4 - FRAG_CPU_WHOLE_QUARTERS) * own) / 4;
	}
	return below; /* the cpu holds every pod the devices do */
}

int64_t frag_amount(const struct frag_mix *m, const struct node_devices *d,
		    int64_t cpu_left, const uint16_t gpu_free[NODE_MAX_GPUS])
{
	unsigned G = d->n_gpus;
	uint16_t sorted[NODE_MAX_GPUS];
	int64_t left = 0;
	for (unsigned g = 0; g < G; g++) {
		uint16_t f = gpu_free[g];
		left += f;
		unsigned j = g;
		for (; j > 0 && sorted[j - 1] > f; j--)
			sorted[j] = sorted[j - 1];
		sorted[j] = f;
	}
	if (left == 0)
		return 0;
	/* A CPU-only shape can use no GPU: all of them are fragments to it. */
	int64_t sum = (int64_t)m->cpu_only_weight * left;
	unsigned j = 0;     /* sorted[0..j) hold less than the shape asks */
	int64_t below = 0;  /* their sum */
	bool limited = m->cpu_limited;
	for (unsigned t = 0; t < m->n; t++) {
		const struct frag_shape *s = &m->shape[t];
		while (j < G && sorted[j] < s->gpu_milli)
			below += sorted[j++];
		bool fits = cpu_left >= s->cpu_milli && G - j >= s->num_gpu &&
			    shape_model_ok(s, d);
		int64_t frag = fits ? below : left;
		/* cpu_left / cpu >= left / milli: the cpu holds at least as
		 * many pods as the free milli could (no division). */
		if (fits && limited && m->share_inv[t] != 0 &&
		    cpu_left * s->gpu_milli < left * s->cpu_milli)
			frag = cpu_limited_frag(s, m->share_inv[t], sorted, G, j,
						cpu_left, left, below);
		sum += (int64_t)m->weight[t] * frag;
	}
	return sum;
}

int64_t frag_growth(const struct frag_mix *m, const struct node_devices *d,
		    int64_t cpu_left, const struct device_view *v, int64_t before,
		    const struct pod_spec *pod, int *gpu)
{
	*gpu = -1;
	int64_t cpu_after = cpu_left - pod->request.v[RES_CPU];
	uint16_t after[NODE_MAX_GPUS];
	memcpy(after, v->gpu_free, sizeof(after));
	if (pod->num_gpu == 0)
		return frag_amount(m, d, cpu_after, after) - before;
	if (pod->gpu_milli >= GPU_MILLI_PER_DEVICE) {
		unsigned need = pod->num_gpu;
		for (unsigned g = 0; g < d->n_gpus && need > 0; g++)
			if (after[g] == GPU_MILLI_PER_DEVICE) {
				after[g] = 0;
				need--;
			}
		return frag_amount(m, d, cpu_after, after) - before;
	}
	/* A sharing pod: every device it fits on, once per distinct free
	 * value (equal values give equal results; the lowest index wins). */
	int64_t best = INT64_MAX;
	for (unsigned g = 0; g < d->n_gpus; g++) {
		uint16_t f = v->gpu_free[g];
		if (f < pod->gpu_milli)
			continue;
		bool seen = false;
		for (unsigned h = 0; h < g && !seen; h++)
			seen = v->gpu_free[h] == f;
		if (seen)
			continue;
		after[g] = (uint16_t)(f - pod->gpu_milli);
		int64_t growth = frag_amount(m, d, cpu_after, after) - before;
		after[g] = f;
		if (growth < best) {
			best = growth;
			*gpu = (int)g;
		}
	}
	return best == INT64_MAX ? 0 : best;
}

void frag_models_reset(struct frag_models *fm)
{
	memset(fm, 0, sizeof(*fm));
}

void frag_models_add(struct frag_models *fm, uint32_t model, unsigned n_gpus)
{
	if (model == 0 || n_gpus == 0)
		return;
	unsigned k = 0;
	while (k < fm->n && fm->model[k] != model)
		k++;
	if (k == FRAG_MAX_MODELS)
		return;
	if (k == fm->n) {
		fm->model[fm->n++] = model;
		fm->capacity[k] = 0;
	}
	fm->capacity[k] += (int64_t)n_gpus * GPU_MILLI_PER_DEVICE;
	fm->mix_epoch = 0;
}

/* Pressure per model from the mix (frag_internal.h). */
static void models_pressure(struct frag_models *fm, const struct frag_mix *m)
{
	double need[FRAG_MAX_MODELS] = {0}, demand = 0, cluster = 0;
	for (unsigned i = 0; i < fm->n; i++)
		cluster += (double)fm->capacity[i];
	for (unsigned t = 0; t < m->n; t++) {
		const struct frag_shape *s = &m->shape[t];
		double d = (double)m->weight[t] * s->num_gpu * s->gpu_milli;
		demand += d;
		if (s->n_models == 0)
			continue;
		/* Split over the models it accepts, by their capacity. */
		double accepted = 0;
		for (unsigned k = 0; k < s->n_models; k++)
			for (unsigned i = 0; i < fm->n; i++)
				if (fm->model[i] == s->models[k])
					accepted += (double)fm->capacity[i];
		if (accepted <= 0)
			continue; /* no node can take it: no model is pressed */
		for (unsigned k = 0; k < s->n_models; k++)
			for (unsigned i = 0; i < fm->n; i++)
				if (fm->model[i] == s->models[k])
					need[i] += d * (double)fm->capacity[i] / accepted;
	}
	/* Below FRAG_PRESSURE_FREE of its capacity a model is not pressed;
	 * above, the pressure grows from 0 so that a model its bound pods
	 * need whole (share 1) is pressed 1. */
	const double free_share = FRAG_PRESSURE_FREE_PERMILLE / 1000.0;
	bool pressed = false;
	for (unsigned i = 0; i < fm->n; i++) {
		double share = demand > 0 && fm->capacity[i] > 0
			? need[i] * cluster / (demand * (double)fm->capacity[i]) : 0;
		double p = share > free_share ? (share - free_share) / (1 - free_share) : 0;
		fm->pressure_permille[i] = (int64_t)(1000.0 * p + 0.5);
		pressed |= fm->pressure_permille[i] > 0;
	}
	fm->pressed = pressed;
	fm->mix_epoch = m->epoch + 1;
}

int64_t frag_reservation(struct frag_models *fm, const struct frag_mix *m,
			 uint32_t model, const struct pod_spec *pod, int32_t percent)
{
	if (percent <= 0 || pod->num_gpu == 0)
		return 0;
	if (fm->mix_epoch != m->epoch + 1)
		models_pressure(fm, m);
	for (unsigned i = 0; fm->pressed && i < fm->n; i++) {
		if (fm->model[i] != model)
			continue;
		/* In double: the mix total of an engine that has counted for
		 * long times the rest can pass 2^63. Bounded as growth is. */
		double extra = (double)m->total * percent / 100.0 * pod->num_gpu *
			       pod->gpu_milli * (double)fm->pressure_permille[i] / 1000.0;
		return extra < 0x1p60 ? (int64_t)extra : INT64_C(1) << 60;
	}
	return 0;
}
