/* The KubeSchedulerConfiguration reader's private header
 * (ingest/sched_config.h is the public one): the decoder's state and the
 * helpers its files share. Five files, one stage or mechanism each; they
 * call one way, each only the files listed below it here (a reader reads
 * them bottom-up):
 *
 *   sched_config_load.c     profiles, the rest of the v1 type, the entry
 *                           points (the design note is at its head);
 *   sched_config_args.c     `pluginConfig`: each plugin's args;
 *   sched_config_plugins.c  a profile's `plugins`: kube's merge with the
 *                           default profile and the multiPoint expansion,
 *                           over the one plugin table (workers/plugin_table.h);
 *   sched_config_yaml.c     the bytes to one jansson tree (YAML or JSON),
 *                           with the line of each node for messages;
 *   sched_config_dec.c      the decoder: messages, typed access to the
 *                           tree's values.
 *
 * Every function here takes the decoder (struct dec) and reports through
 * scfg_fail() at the decoder's current path: push a key or index, decode,
 * pop. A walk over siblings folds each result with scfg_failed() so one
 * load reports up to SCHED_CONFIG_ERRORS_MAX errors. */
#ifndef SHMSCHED_INGEST_SCHED_CONFIG_INTERNAL_H
#define SHMSCHED_INGEST_SCHED_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/base.h"
#include "ingest/sched_config.h"
#include "shm/shm.h"
#include "workers/workers.h"

#define CONFIG_API_VERSION "kubescheduler.config.k8s.io/v1"
#define CONFIG_KIND "KubeSchedulerConfiguration"
#define SCHED_CONFIG_FILE_MAX (1u << 20)
#define YAML_DEPTH_MAX 64
#define FIELD_DEPTH_MAX 16
#define SHOW_LEN 96
#define WEIGHT_MAX 100

/* ---- messages (sched_config_dec.c) -------------------------------------- */

/* The line of each YAML node, keyed by address (sched_config_yaml.c
 * records, scfg_fail() looks up). */
struct line_mark {
	const void *at; /* a json_t, or a key's storage inside its object */
	unsigned line;
};

struct line_table {
	struct line_mark *v;
	size_t n, cap;
};

/* The decoder's state: where it is in the tree, for messages. */
struct dec {
	/* The path and the error lines (base/json_in.h): source the file's
	 * name, max_lines SCHED_CONFIG_ERRORS_MAX (the rest counted in
	 * in.n_dropped), line set from the anchors below when one is known. */
	struct json_in in;
	const struct line_table *lines;
	struct res_names *res;
	struct intern *strings; /* where args' strings go (may be NULL) */
	/* What each step of the path was read from, to find its line. */
	const void *anchor[FIELD_DEPTH_MAX];
	unsigned depth;
};

/* Best effort: a failed allocation only loses a line number. */
void scfg_lines_add(struct line_table *t, const void *at, unsigned line);

/* Appends to buf[*pos..len), truncating; *pos stays below len. */
__attribute__((format(printf, 4, 5)))
void scfg_appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...);

/* Folds one step's result into a walk's: the walk's result is its first
 * error, and the walk goes on with the next sibling (the error's message
 * is written) unless memory ran out. True: stop. */
bool scfg_failed(int *walk_rc, int rc);

/* An error at a known input line (parsing). Returns rc. */
__attribute__((format(printf, 4, 5)))
int scfg_fail_line(struct dec *d, unsigned line, int rc, const char *fmt, ...);

/* An error at the decoder's current path, with its line. Returns rc. */
__attribute__((format(printf, 3, 4)))
int scfg_fail(struct dec *d, int rc, const char *fmt, ...);

/* A warning at the decoder's current path, with its line: a field
 * accepted with no effect, a name that means nothing. */
__attribute__((format(printf, 2, 3)))
void scfg_warn_at(struct dec *d, const char *fmt, ...);

/* A key the v1 type does not have, named as kube-scheduler names it. */
int scfg_unknown_field(struct dec *d, const char *key);

/* A value as JSON text, shortened to `len`, for messages. */
const char *scfg_show(const json_t *v, char *buf, size_t len);

/* Push a key (with the anchor its line is recorded under) or an index on
 * the decoder's path; scfg_pop() takes the returned length back. */
size_t scfg_push_key(struct dec *d, const void *anchor, const char *key);
size_t scfg_push_index(struct dec *d, const json_t *elem, size_t i);
void scfg_pop(struct dec *d, size_t old);

/* ---- values (sched_config_dec.c) ---------------------------------------- */

bool scfg_present(const json_t *v);                 /* given and not null */
bool scfg_str_is(const json_t *v, const char *lit); /* the string `lit` */
/* The key's storage in `obj` (its line's anchor), or NULL. */
const char *scfg_key_anchor(json_t *obj, const char *key);
int scfg_not_supported(struct dec *d);
int scfg_need_object(struct dec *d, const json_t *v);
int scfg_need_array(struct dec *d, const json_t *v);
int scfg_need_string(struct dec *d, const json_t *v);
/* Every member of `obj` whose key is not in `known` (NULL-terminated) is
 * an unknown field. */
int scfg_only_known(struct dec *d, json_t *obj, const char *const *known);
int scfg_get_int(struct dec *d, const json_t *v, int64_t lo, int64_t hi,
		 int64_t *out);
int scfg_get_bool(struct dec *d, const json_t *v, bool *out);
/* obj[key] must be the string `want`. */
int scfg_expect_const(struct dec *d, json_t *obj, const char *key,
		      const char *want);
/* A {name: ..., ...} entry's name: a non-empty string without NUL. */
int scfg_get_name(struct dec *d, json_t *obj, const char *what,
		  const char **name, size_t *len);
bool scfg_is_type_key(const char *key); /* apiVersion or kind */
/* A plugin's args: a mapping whose apiVersion and kind, when given, are
 * v1's and `kind`. */
int scfg_check_args(struct dec *d, json_t *args, const char *kind);
/* apimachinery's IsQualifiedName (a label key). */
bool scfg_is_qualified_name(const char *s, size_t n);
/* A string interned into the load's table. */
int scfg_intern_value(struct dec *d, const json_t *v, uint32_t *id);

/* Whether `n` bytes at `s` are one of `words` (NULL-terminated). */
bool scfg_is_one_of(const char *s, size_t n, const char *const *words);

/* ---- the tree (sched_config_yaml.c) ------------------------------------- */

/* The bytes as one tree: JSON when they start with '{' (YAML if JSON
 * fails and YAML reads them), YAML otherwise; *root NULL for an empty
 * document. Lines go to `lines`. */
int scfg_parse_tree(struct dec *d, struct line_table *lines, const char *buf,
		    size_t len, json_t **root);

/* ---- plugins (sched_config_plugins.c) ----------------------------------- */

#define PLUGIN_ALL (-2)     /* "*" in a disabled list */
#define PLUGIN_UNKNOWN (-1)

/* One entry of an enabled or disabled list, as read. */
#define SET_ENTRIES_MAX 64

struct plugin_entry {
	int16_t plugin;  /* index into plugin_table, PLUGIN_ALL or PLUGIN_UNKNOWN */
	int32_t weight;  /* 0: none */
	json_t *elem;    /* the entry, for messages */
	uint16_t index;  /* its position in the list */
};

struct plugin_set {
	json_t *obj;               /* the {enabled, disabled} mapping, or NULL */
	unsigned n_enabled, n_disabled;
	struct plugin_entry enabled[SET_ENTRIES_MAX];
	struct plugin_entry disabled[SET_ENTRIES_MAX];
};

struct plugins_in {
	json_t *obj; /* the profile's `plugins`, or NULL */
	struct plugin_set set[PLUGIN_EXT_POINTS];
};

/* Removed from the v1 API (validation.go, invalidPluginsByVersion). */
extern const char *const scfg_plugins_removed[];

/* A row of plugin_table, PLUGIN_ALL ("*") or PLUGIN_UNKNOWN. */
int scfg_plugin_entry_lookup(const char *name, size_t len);

/* A profile's `plugins`, at the decoder's path: read, merged with kube's
 * defaults, expanded to every point, and the score weights written into
 * `sc`; the queue sort set's signature into `queue_sig` (`len` bytes).
 * `in` is the caller's scratch (large: keep it off the stack). */
int scfg_profile_plugins(struct dec *d, json_t *plugins, struct plugins_in *in,
			 struct score_config *sc, char *queue_sig, size_t len);

/* ---- pluginConfig (sched_config_args.c) --------------------------------- */

/* cpu and memory, weight 1 each: the resources' default. */
void scfg_default_resources(struct res_weight *out, uint8_t *n);

/* The args table (sched_config_args.c): one entry per plugin whose args
 * shmsched reads, each a list of fields as nginx's ngx_command_t lists a
 * module's directives: a field's name, its setter, and where its value
 * goes (an offset into struct score_config). */

/* arg_field.offset of a field that is validated and not kept. */
#define ARG_NO_STORE SIZE_MAX

struct arg_field;

typedef int (*arg_set_fn)(struct dec *d, json_t *v, const struct arg_field *f,
			  struct score_config *sc);

struct arg_field {
	const char *name;
	arg_set_fn set;
	size_t offset;  /* into struct score_config, or ARG_NO_STORE */
	int64_t lo, hi; /* an integer's bounds */
	bool always;    /* read when absent too (its setter gives the default) */
};

struct args_kind {
	const char *plugin; /* plugin_table's name */
	const char *kind;   /* the args type, as `kind` spells it */
	const struct arg_field *fields; /* ended by a NULL name */
	/* Or, instead of fields, a decoder of the whole args. */
	int (*decode)(struct dec *d, json_t *args, struct score_config *sc);
	/* After the fields, with the walk's result so far: checks across
	 * fields; returns the walk's new result. Optional. */
	int (*post)(struct dec *d, json_t *args, int walk);
	/* A plugin shmsched does not run: the warning once its args pass. */
	const char *no_effect;
};

/* Ended by a NULL plugin. */
extern const struct args_kind scfg_args_table[];

/* The entry of the plugin named by `len` bytes at `name`, or NULL. */
const struct args_kind *scfg_args_of(const char *name, size_t len);

/* One plugin's args (a present value at the decoder's path) into `sc`. */
int scfg_decode_args(struct dec *d, json_t *args, const struct args_kind *k,
		     struct score_config *sc);

/* A profile's pluginConfig list, each plugin's args into `sc`. */
int scfg_decode_plugin_config(struct dec *d, json_t *list,
			      struct score_config *sc);

#endif
