/* PriorityClasses and a pod's priority: see priority.h. A linear table:
 * classes are few (a cluster has a handful), and lookups happen when a
 * template or a file is read, never per pod. */
#include "ingest/priority.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

static const struct {
	const char *name;
	int32_t value;
} system_classes[] = {
	{"system-cluster-critical", PRIORITY_SYSTEM_CLUSTER_CRITICAL},
	{"system-node-critical", PRIORITY_SYSTEM_NODE_CRITICAL},
};

int priority_classes_init(struct priority_classes *t, struct intern *strings)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < 2; i++) {
		uint32_t id;
		int rc = intern_add_str(strings, system_classes[i].name, &id);
		if (rc < 0)
			return rc;
		t->c[t->n++] = (struct k8s_priority_class){
			.name = id, .value = system_classes[i].value};
	}
	return 0;
}

const struct k8s_priority_class *priority_classes_find(const struct priority_classes *t,
						       uint32_t name)
{
	for (uint32_t i = 0; name != 0 && i < t->n; i++)
		if (t->c[i].name == name)
			return &t->c[i];
	return NULL;
}

static bool is_system(const struct priority_classes *t, uint32_t name)
{
	/* The first two entries are the system classes (init). */
	return t->n >= 2 && (t->c[0].name == name || t->c[1].name == name);
}

int priority_classes_put(struct priority_classes *t, const struct intern *strings,
			 const struct k8s_priority_class *pc, char *err,
			 size_t err_len)
{
	const char *name = intern_str(strings, pc->name);
	if (is_system(t, pc->name))
		return errmsg_rc(-EINVAL, err, err_len, "PriorityClass %s: a system "
				 "class, which cannot be declared", name);
	if (strncmp(name, "system-", 7) == 0)
		return errmsg_rc(-EINVAL, err, err_len, "PriorityClass %s: the "
				 "prefix \"system-\" is reserved", name);
	if (pc->value > PRIORITY_HIGHEST_USER)
		return errmsg_rc(-EINVAL, err, err_len, "PriorityClass %s: value "
				 "%d: at most %d (HighestUserDefinablePriority)",
				 name, pc->value, PRIORITY_HIGHEST_USER);
	struct k8s_priority_class *same = NULL;
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->c[i].name == pc->name)
			same = &t->c[i];
		else if (pc->global_default && t->c[i].global_default)
			return errmsg_rc(-EINVAL, err, err_len, "PriorityClass %s: "
					 "globalDefault, but %s is already the "
					 "default; only one can be", name,
					 intern_str(strings, t->c[i].name));
	}
	if (same != NULL) {
		if (same->value != pc->value)
			return errmsg_rc(-EINVAL, err, err_len, "PriorityClass %s: "
					 "value %d: may not change (it is %d)", name,
					 pc->value, same->value);
		*same = *pc;
		return 0;
	}
	if (t->n == PRIORITY_CLASSES_MAX)
		return errmsg_rc(-ENOSPC, err, err_len, "PriorityClass %s: %u "
				 "classes already, the most kept", name,
				 PRIORITY_CLASSES_MAX);
	t->c[t->n++] = *pc;
	return 0;
}

int priority_resolve(const struct priority_classes *t, const struct intern *strings,
		     struct pod_spec *pod, bool lenient, char *err, size_t err_len)
{
	const struct k8s_priority_class *pc = NULL;
	if (pod->priority_class != 0) {
		pc = priority_classes_find(t, pod->priority_class);
		if (pc == NULL && !lenient)
			return errmsg_rc(-EINVAL, err, err_len, "spec.priorityClassName: "
					 "no PriorityClass with name %s was found",
					 intern_str(strings, pod->priority_class));
	} else {
		for (uint32_t i = 0; i < t->n && pc == NULL; i++)
			if (t->c[i].global_default)
				pc = &t->c[i];
		if (pc != NULL)
			pod->priority_class = pc->name;
	}
	bool given = pod->priority_flags & POD_PRIORITY_GIVEN;
	if (lenient && given)
		return 0; /* admitted already: as its API server said */
	int32_t value = pc != NULL ? pc->value : 0;
	if (given && pod->priority != value)
		return errmsg_rc(-EINVAL, err, err_len, "spec.priority: the integer "
				 "value of priority (%d) must not be provided in pod "
				 "spec; priority admission controller computed %d "
				 "from the given PriorityClass name", pod->priority,
				 value);
	pod->priority = value;
	if (pc == NULL)
		return 0;
	bool never = pod->priority_flags & POD_PREEMPT_NEVER;
	if (!lenient && (pod->priority_flags & POD_PREEMPTION_GIVEN) &&
	    never != pc->preempt_never)
		return errmsg_rc(-EINVAL, err, err_len, "spec.preemptionPolicy: the "
				 "string value of PreemptionPolicy (%s) must not be "
				 "provided in pod spec; priority admission controller "
				 "computed %s from the given PriorityClass name",
				 never ? "Never" : "PreemptLowerPriority",
				 pc->preempt_never ? "Never" : "PreemptLowerPriority");
	if (pc->preempt_never)
		pod->priority_flags |= POD_PREEMPT_NEVER;
	else
		pod->priority_flags &= (uint8_t)~POD_PREEMPT_NEVER;
	return 0;
}

int priority_loader_visit(void *arg, const struct k8s_priority_class *pc,
			  char *err, size_t err_len)
{
	struct priority_loader *l = arg;
	return priority_classes_put(l->classes, l->strings, pc, err, err_len);
}

static int skip_node(void *arg, const struct node_spec *node, char *err,
		     size_t err_len)
{
	(void)arg, (void)node, (void)err, (void)err_len;
	return 0;
}

static int skip_pod(void *arg, const struct pod_spec *pod,
		    const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	(void)arg, (void)pod, (void)meta, (void)err, (void)err_len;
	return 0;
}

int gang_table_put(struct gang_table *t, const struct intern *strings,
		   const struct k8s_pod_group *pg, char *err, size_t err_len)
{
	if (pg->min_member > GANG_MIN_MAX)
		return errmsg_rc(-EINVAL, err, err_len, "PodGroup %s: minMember %u: "
				 "at most %u", intern_str(strings, pg->name),
				 pg->min_member, GANG_MIN_MAX);
	for (uint32_t i = 0; i < t->n; i++)
		if (t->g[i].name == pg->name) {
			t->g[i] = *pg;
			return 0;
		}
	if (t->n == GANG_TABLE_MAX)
		return errmsg_rc(-ENOSPC, err, err_len, "PodGroup %s: %u PodGroups "
				 "already, the most kept", intern_str(strings, pg->name),
				 GANG_TABLE_MAX);
	t->g[t->n++] = *pg;
	return 0;
}

int gang_resolve(const struct gang_table *t, const struct intern *strings,
		 struct pod_spec *pod, char *err, size_t err_len)
{
	if (pod->gang == 0)
		return 0;
	for (uint32_t i = 0; t != NULL && i < t->n; i++)
		if (t->g[i].name == pod->gang) {
			pod->gang_min = t->g[i].min_member;
			pod->gang_timeout_s = t->g[i].timeout_s ? t->g[i].timeout_s
								: GANG_TIMEOUT_DEFAULT_S;
			return 0;
		}
	return errmsg_rc(-EINVAL, err, err_len, "metadata.labels: "
			 "scheduling.x-k8s.io/pod-group: no PodGroup %s was declared",
			 intern_str(strings, pod->gang));
}

int priority_loader_visit_group(void *arg, const struct k8s_pod_group *pg,
				char *err, size_t err_len)
{
	struct priority_loader *l = arg;
	return l->gangs != NULL ? gang_table_put(l->gangs, l->strings, pg, err, err_len)
				: 0;
}

int priority_load_file(const char *path, struct priority_classes *t,
		       struct gang_table *gangs, struct intern *strings, char *err,
		       size_t err_len)
{
	/* A cluster file's pods carry anything (k8s_ctx.cluster_file), and
	 * their resources are the cluster loader's concern: a private table
	 * of names, so nothing here registers one. */
	static struct res_names res;
	res_names_init(&res);
	struct k8s_ctx kc = {.strings = strings, .res = &res, .cluster_file = true};
	struct priority_loader l = {t, strings, gangs};
	struct k8s_visitor v = {.arg = &l, .node = skip_node, .pod = skip_pod,
				.priority_class = priority_loader_visit,
				.pod_group = priority_loader_visit_group};
	return k8s_load_file(path, &kc, &v, err, err_len);
}
