/* KubeSchedulerConfiguration reader: a profile's `plugins`
 * (sched_config_internal.h; the design note is sched_config_load.c's), over
 * the one plugin table (workers/plugin_table.h): names, extension points,
 * kept points, scores and kube's default weights are its rows, nothing
 * here.
 *
 * Cost: O(points * (entries + rows)) per profile; entries per list are at
 * most SET_ENTRIES_MAX. */
#include "ingest/sched_config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A profile's `plugins` holds one {enabled, disabled} set per extension
 * point, multiPoint among them. What runs where follows kube-scheduler:
 * 1. mergePluginSet (apis/config/v1/default_plugins.go) merges each set
 *    into the defaults, which are all in multiPoint: `disabled` drops
 *    defaults by name ("*": all), an `enabled` entry naming a default
 *    replaces it in place, other enabled entries are appended.
 * 2. expandMultiPointPlugins (framework/runtime/framework.go) then gives
 *    each point its own enabled plugins, plus every multiPoint plugin that
 *    implements the point and that the point does not disable (its
 *    disabled "*" skips the expansion); a plugin enabled at the point
 *    itself overrides its multiPoint entry.
 * 3. getScoreWeights: a score plugin's weight is its score entry's, else
 *    its multiPoint entry's; 0 or none is 1.
 * Then shmsched's own rule: the plugins it implements as filters, and
 * those that stand for what it always does (scheduling gates, the queue
 * sort, the binder), must stay enabled: disabling one is refused, since
 * shmsched cannot place without it. Plugins it does not run (volumes,
 * claims, preemption) may be disabled: for the pods shmsched places that
 * changes nothing. */

/* Removed from the v1 API (validation.go, invalidPluginsByVersion). */
const char *const scfg_plugins_removed[] = {
	"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits", NULL,
};


/* A row of plugin_table (workers/plugin_table.h), PLUGIN_ALL or
 * PLUGIN_UNKNOWN. */
int scfg_plugin_entry_lookup(const char *name, size_t len)
{
	if (len == 1 && name[0] == '*')
		return PLUGIN_ALL;
	int i = plugin_lookup(name, len);
	return i >= 0 ? i : PLUGIN_UNKNOWN;
}

static bool implements(int plugin, enum plugin_ext p)
{
	return plugin >= 0 && (plugin_table[plugin].points & PLUGIN_BIT(p)) != 0;
}

/* The path of a list entry (plugins.<point>.<list>[i].name), pushed onto
 * the decoder's; undone by pop_entry(). */
struct entry_mark {
	size_t path_len;
	unsigned depth;
};

static struct entry_mark push_entry(struct dec *d, const struct plugins_in *in,
				    enum plugin_ext p, bool enabled,
				    const struct plugin_entry *e)
{
	struct entry_mark mk = {d->in.path_len, d->depth};
	const char *list = enabled ? "enabled" : "disabled";
	scfg_push_key(d, scfg_key_anchor(in->obj, plugin_ext_names[p]), plugin_ext_names[p]);
	scfg_push_key(d, scfg_key_anchor(in->set[p].obj, list), list);
	scfg_push_index(d, e->elem, e->index);
	scfg_push_key(d, scfg_key_anchor(e->elem, "name"), "name");
	return mk;
}

static void pop_entry(struct dec *d, struct entry_mark mk)
{
	json_in_pop(&d->in, mk.path_len);
	d->depth = mk.depth;
}

static int decode_plugin_entry(struct dec *d, json_t *e, bool enabling,
			       struct plugin_entry *out)
{
	static const char *const keys[] = {"name", "weight", NULL};
	char vb[SHOW_LEN];
	int rc = scfg_need_object(d, e);
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, e, keys);
	const char *name;
	size_t len;
	rc = scfg_get_name(d, e, "a plugin name", &name, &len);
	if (rc != 0)
		return rc;
	/* The v1 type's weight is an int32; shmsched bounds it further. */
	int64_t weight = 0;
	json_t *w = json_object_get(e, "weight");
	if (scfg_present(w)) {
		size_t m = scfg_push_key(d, scfg_key_anchor(e, "weight"), "weight");
		scfg_failed(&walk, scfg_get_int(d, w, 0, WEIGHT_MAX, &weight));
		scfg_pop(d, m);
	}
	out->plugin = (int16_t)scfg_plugin_entry_lookup(name, len);
	out->weight = (int32_t)weight;
	out->elem = e;
	size_t m = scfg_push_key(d, scfg_key_anchor(e, "name"), "name");
	json_t *nv = json_object_get(e, "name");
	if (enabling && scfg_is_one_of(name, len, scfg_plugins_removed)) {
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "%s was invalid in version \"%s\" "
				   "(KubeSchedulerConfiguration is version \"%s\")",
				   scfg_show(nv, vb, sizeof(vb)), CONFIG_API_VERSION,
				   CONFIG_API_VERSION));
	} else if (enabling && out->plugin == PLUGIN_ALL) {
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "\"*\" may only be disabled"));
	} else if (enabling && out->plugin == PLUGIN_UNKNOWN) {
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "%s: no such plugin (shmsched has "
				   "kube-scheduler's in-tree plugins and GpuBestFit, "
				   "GpuFragmentation; out-of-tree plugins are not "
				   "supported)", scfg_show(nv, vb, sizeof(vb))));
	} else if (!enabling && out->plugin == PLUGIN_UNKNOWN &&
		   !scfg_is_one_of(name, len, scfg_plugins_removed)) {
		scfg_warn_at(d, "disables %s, which no plugin is named: no effect",
			scfg_show(nv, vb, sizeof(vb)));
	}
	scfg_pop(d, m);
	return walk;
}

static int decode_plugin_list(struct dec *d, json_t *list, bool enabling,
			      struct plugin_entry *out, unsigned *n_out)
{
	*n_out = 0;
	if (!scfg_present(list))
		return 0;
	int rc = scfg_need_array(d, list);
	if (rc != 0)
		return rc;
	if (json_array_size(list) > SET_ENTRIES_MAX)
		return scfg_fail(d, -ENOSPC, "%zu entries, at most %d",
			    json_array_size(list), SET_ENTRIES_MAX);
	size_t i;
	json_t *e;
	int walk = 0;
	json_array_foreach(list, i, e) {
		size_t m = scfg_push_index(d, e, i);
		struct plugin_entry *pe = &out[*n_out];
		rc = decode_plugin_entry(d, e, enabling, pe);
		scfg_pop(d, m);
		pe->index = (uint16_t)i;
		if (rc == 0)
			(*n_out)++;
		if (scfg_failed(&walk, rc))
			break;
	}
	return walk;
}

static int decode_plugin_set(struct dec *d, json_t *set, struct plugin_set *out)
{
	static const char *const keys[] = {"enabled", "disabled", NULL};
	memset(out, 0, sizeof(*out));
	if (!scfg_present(set))
		return 0;
	int rc = scfg_need_object(d, set);
	if (rc != 0)
		return rc;
	out->obj = set;
	int walk = scfg_only_known(d, set, keys);
	size_t m = scfg_push_key(d, scfg_key_anchor(set, "enabled"), "enabled");
	scfg_failed(&walk, decode_plugin_list(d, json_object_get(set, "enabled"), true,
					 out->enabled, &out->n_enabled));
	scfg_pop(d, m);
	m = scfg_push_key(d, scfg_key_anchor(set, "disabled"), "disabled");
	scfg_failed(&walk, decode_plugin_list(d, json_object_get(set, "disabled"), false,
					 out->disabled, &out->n_disabled));
	scfg_pop(d, m);
	return walk;
}

static const struct plugin_entry *disabled_by(const struct plugin_set *s,
					      int plugin)
{
	for (unsigned i = 0; i < s->n_disabled; i++)
		if (s->disabled[i].plugin == plugin ||
		    s->disabled[i].plugin == PLUGIN_ALL)
			return &s->disabled[i];
	return NULL;
}

static bool disables_all(const struct plugin_set *s)
{
	for (unsigned i = 0; i < s->n_disabled; i++)
		if (s->disabled[i].plugin == PLUGIN_ALL)
			return true;
	return false;
}

static bool disables(const struct plugin_set *s, int plugin)
{
	for (unsigned i = 0; i < s->n_disabled; i++)
		if (s->disabled[i].plugin == plugin)
			return true;
	return false;
}

/* One plugin of the merged multiPoint list: a default or a custom entry. */
struct merged {
	int16_t plugin;
	int32_t weight;
	const struct plugin_entry *from; /* NULL: kube's default */
};

#define MERGED_MAX (PLUGIN_COUNT + SET_ENTRIES_MAX)

/* mergePluginSet for multiPoint: the defaults, each dropped if disabled
 * or replaced in place by a custom entry of its name (the last, as Go's
 * map keeps it), then the custom entries that replaced nothing. */
static unsigned merge_multi_point(const struct plugin_set *custom,
				  struct merged out[MERGED_MAX])
{
	bool replaced[SET_ENTRIES_MAX] = {false};
	unsigned n = 0;
	if (!disables_all(custom)) {
		for (int p = 0; p < PLUGIN_COUNT; p++) {
			if (plugin_table[p].weight == PLUGIN_NOT_DEFAULT || disables(custom, p))
				continue;
			struct merged m = {(int16_t)p, plugin_table[p].weight, NULL};
			for (unsigned i = custom->n_enabled; i-- > 0;)
				if (custom->enabled[i].plugin == p) {
					m.weight = custom->enabled[i].weight;
					m.from = &custom->enabled[i];
					replaced[i] = true;
					break;
				}
			out[n++] = m;
		}
	}
	for (unsigned i = 0; i < custom->n_enabled; i++)
		if (!replaced[i])
			out[n++] = (struct merged){custom->enabled[i].plugin,
						   custom->enabled[i].weight,
						   &custom->enabled[i]};
	return n;
}

/* What runs at each point, and each score's weight. */
struct plugins_out {
	bool on[PLUGIN_EXT_POINTS][PLUGIN_COUNT];
	int64_t weight[PLUGIN_COUNT]; /* score weight when on at PLUGIN_EXT_SCORE */
	const struct plugin_entry *weight_from[PLUGIN_COUNT]; /* NULL: a default */
	uint8_t weight_point[PLUGIN_COUNT]; /* the list weight_from is in */
};

static int plugin_error(struct dec *d, const struct plugins_in *in,
			enum plugin_ext p, bool enabled,
			const struct plugin_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* An error at a list entry (plugins.<p>.<list>[i].name), or at `plugins`
 * itself when `e` is NULL. */
static int plugin_error(struct dec *d, const struct plugins_in *in,
			enum plugin_ext p, bool enabled,
			const struct plugin_entry *e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (e == NULL)
		return scfg_fail(d, -EINVAL, "%s", msg);
	struct entry_mark mk = push_entry(d, in, p, enabled, e);
	int rc = scfg_fail(d, -EINVAL, "%s", msg);
	pop_entry(d, mk);
	return rc;
}

/* Steps 1-3 above for one profile. */
static int expand_plugins(struct dec *d, const struct plugins_in *in,
			  struct plugins_out *out)
{
	struct merged multi[MERGED_MAX];
	unsigned n_multi = merge_multi_point(&in->set[PLUGIN_EXT_MULTI_POINT], multi);
	int walk = 0;
	memset(out, 0, sizeof(*out));

	/* A plugin twice in multiPoint is registered twice (framework.go:
	 * "already registered"), whatever point it would reach first. */
	for (unsigned i = 0; i < n_multi; i++)
		for (unsigned j = 0; j < i; j++)
			if (multi[j].plugin == multi[i].plugin && multi[i].from) {
				scfg_failed(&walk, plugin_error(
					d, in, PLUGIN_EXT_MULTI_POINT, true, multi[i].from,
					"plugin \"%s\" already registered in multiPoint",
					plugin_table[multi[i].plugin].name));
				break;
			}

	for (int p = PLUGIN_EXT_MULTI_POINT + 1; p < PLUGIN_EXT_POINTS; p++) {
		const struct plugin_set *s = &in->set[p];
		/* updatePluginList: the point's own entries. */
		for (unsigned i = 0; i < s->n_enabled; i++) {
			const struct plugin_entry *e = &s->enabled[i];
			if (!implements(e->plugin, (enum plugin_ext)p)) {
				scfg_failed(&walk, plugin_error(
					d, in, (enum plugin_ext)p, true, e,
					"plugin \"%s\" does not extend %s",
					plugin_table[e->plugin].name, plugin_ext_types[p]));
				continue;
			}
			if (out->on[p][e->plugin]) {
				scfg_failed(&walk, plugin_error(
					d, in, (enum plugin_ext)p, true, e,
					"plugin \"%s\" already registered as \"%s\"",
					plugin_table[e->plugin].name, plugin_ext_types[p]));
				continue;
			}
			out->on[p][e->plugin] = true;
		}
		/* expandMultiPointPlugins. */
		if (disables_all(s))
			continue;
		for (unsigned i = 0; i < n_multi; i++) {
			int pl = multi[i].plugin;
			if (implements(pl, (enum plugin_ext)p) && !disables(s, pl))
				out->on[p][pl] = true;
		}
	}

	/* getScoreWeights: the score entry's weight, else multiPoint's. */
	for (int pl = 0; pl < PLUGIN_COUNT; pl++) {
		if (!out->on[PLUGIN_EXT_SCORE][pl])
			continue;
		const struct plugin_set *s = &in->set[PLUGIN_EXT_SCORE];
		bool found = false;
		for (unsigned i = 0; i < s->n_enabled && !found; i++)
			if (s->enabled[i].plugin == pl) {
				out->weight[pl] = s->enabled[i].weight;
				out->weight_from[pl] = &s->enabled[i];
				out->weight_point[pl] = PLUGIN_EXT_SCORE;
				found = true;
			}
		for (unsigned i = 0; i < n_multi && !found; i++)
			if (multi[i].plugin == pl) {
				out->weight[pl] = multi[i].weight;
				out->weight_from[pl] = multi[i].from;
				out->weight_point[pl] = PLUGIN_EXT_MULTI_POINT;
				found = true;
			}
		if (out->weight[pl] == 0)
			out->weight[pl] = 1;
	}
	return walk;
}

/* The entry that turned `plugin` off at `p`: the point's own disabled
 * entry, else multiPoint's. */
static const struct plugin_entry *turned_off(const struct plugins_in *in,
					     enum plugin_ext p, int plugin,
					     enum plugin_ext *where)
{
	const struct plugin_entry *e = disabled_by(&in->set[p], plugin);
	*where = p;
	if (e == NULL) {
		e = disabled_by(&in->set[PLUGIN_EXT_MULTI_POINT], plugin);
		*where = PLUGIN_EXT_MULTI_POINT;
	}
	return e;
}

/* shmsched's rule over the expansion (see above), and the weights into
 * `sc`. */
static int apply_plugins(struct dec *d, const struct plugins_in *in,
			 const struct plugins_out *out, struct score_config *sc)
{
	/* A plugin turned off where shmsched runs it: by which entry, at
	 * which point. One message per entry and point names them all. */
	struct off {
		const struct plugin_entry *e; /* NULL: none (cannot happen) */
		uint8_t where, point;
		int16_t plugin;
		bool done;
	} off[PLUGIN_COUNT * PLUGIN_EXT_POINTS];
	unsigned n_off = 0;
	int walk = 0;
	for (int pl = 0; pl < PLUGIN_COUNT; pl++) {
		const struct plugin_info *info = &plugin_table[pl];
		const struct plugin_entry *reported = NULL;
		for (int p = PLUGIN_EXT_MULTI_POINT + 1; p < PLUGIN_EXT_POINTS; p++) {
			bool must = (info->keep & PLUGIN_BIT(p)) != 0;
			/* A score runs on its PreScore's state. */
			if (p == PLUGIN_EXT_PRE_SCORE && info->score >= 0 &&
			    implements(pl, PLUGIN_EXT_PRE_SCORE) && out->on[PLUGIN_EXT_SCORE][pl])
				must = true;
			if (!must || out->on[p][pl])
				continue;
			enum plugin_ext where;
			const struct plugin_entry *e =
				turned_off(in, (enum plugin_ext)p, pl, &where);
			if (e != NULL && e == reported)
				continue; /* once per plugin and entry */
			reported = e;
			off[n_off++] = (struct off){e, (uint8_t)where, (uint8_t)p,
						    (int16_t)pl, false};
		}
		if (info->fixed_weight && out->on[PLUGIN_EXT_SCORE][pl] &&
		    out->weight[pl] != info->weight) {
			scfg_failed(&walk, plugin_error(
				d, in, (enum plugin_ext)out->weight_point[pl], true,
				out->weight_from[pl], "%s with weight %lld: shmsched "
				"does not compute this score (only its default weight "
				"%d, or disabling it, is accepted)", info->name,
				(long long)out->weight[pl], info->weight));
		}
		int64_t *w = score_config_weight(sc, info->score);
		if (w != NULL)
			*w = out->on[PLUGIN_EXT_SCORE][pl] ? out->weight[pl] : 0;
	}
	for (unsigned i = 0; i < n_off; i++) {
		if (off[i].done)
			continue;
		char names[512];
		size_t pos = 0;
		unsigned n = 0;
		names[0] = '\0';
		for (unsigned j = i; j < n_off; j++)
			if (!off[j].done && off[j].e == off[i].e &&
			    off[j].point == off[i].point) {
				scfg_appendf(names, sizeof(names), &pos, "%s%s", n ? ", " : "",
					plugin_table[off[j].plugin].name);
				off[j].done = true;
				n++;
			}
		if (off[i].point == PLUGIN_EXT_PRE_SCORE)
			scfg_failed(&walk, plugin_error(
				d, in, (enum plugin_ext)off[i].where, false, off[i].e,
				"disables %s at preScore while %s score runs: not "
				"supported by shmsched", names, n > 1 ? "their" : "its"));
		else
			scfg_failed(&walk, plugin_error(
				d, in, (enum plugin_ext)off[i].where, false, off[i].e,
				"disables %s at %s: shmsched always runs %s there "
				"(turning %s off is not supported)", names,
				plugin_ext_names[off[i].point], n > 1 ? "them" : "it",
				n > 1 ? "one" : "it"));
	}
	return walk;
}

/* The queue sort set as written, for validateCommonQueueSort: every
 * profile's must be the same. */
static void queue_sort_signature(const struct plugin_set *s, char *buf,
				 size_t len)
{
	size_t pos = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < s->n_enabled; i++)
		scfg_appendf(buf, len, &pos, "+%d/%d", s->enabled[i].plugin,
			(int)s->enabled[i].weight);
	for (unsigned i = 0; i < s->n_disabled; i++)
		scfg_appendf(buf, len, &pos, "-%d", s->disabled[i].plugin);
}

static int decode_plugins(struct dec *d, json_t *plugins, struct plugins_in *in)
{
	memset(in, 0, sizeof(*in));
	if (!scfg_present(plugins))
		return 0;
	int rc = scfg_need_object(d, plugins);
	if (rc != 0)
		return rc;
	in->obj = plugins;
	const char *key;
	json_t *val;
	int walk = 0;
	json_object_foreach(plugins, key, val) {
		int p = 0;
		while (p < PLUGIN_EXT_POINTS && strcmp(plugin_ext_names[p], key) != 0)
			p++;
		size_t m = scfg_push_key(d, key, key);
		rc = p < PLUGIN_EXT_POINTS ? decode_plugin_set(d, val, &in->set[p])
				    : scfg_unknown_field(d, key);
		scfg_pop(d, m);
		if (scfg_failed(&walk, rc))
			break;
	}
	return walk;
}

/* A profile's `plugins`, at the decoder's path: read, merged with kube's
 * defaults, expanded to every point, and the score weights written into
 * `sc`; the queue sort set's signature into `queue_sig` (`len` bytes).
 * `in` is the caller's scratch (large: keep it off the stack). */
int scfg_profile_plugins(struct dec *d, json_t *plugins, struct plugins_in *in,
			 struct score_config *sc, char *queue_sig, size_t len)
{
	int rc = decode_plugins(d, plugins, in);
	if (rc == 0) {
		struct plugins_out out;
		rc = expand_plugins(d, in, &out);
		if (rc == 0)
			rc = apply_plugins(d, in, &out, sc);
		queue_sort_signature(&in->set[PLUGIN_EXT_QUEUE_SORT], queue_sig, len);
	}
	return rc;
}
