/* OP_EVALUATE (ingest/control_ops.h): one of the caller's templates
 * filtered and scored against every node, nothing placed, for the HTTP
 * gateway's extender verbs and its ?explain=true. It runs on the engine of
 * producers_set_evaluator() (the daemon's own profile, every node scored),
 * on the control thread under the producers' lock: that thread is the
 * snapshots' writer, so the snapshot it reads cannot be reclaimed under
 * it. The answer (JSON: the feasible nodes with their scores, the filtered
 * ones with their reasons, and with quotas what the pod's ClusterQueue
 * has left: producers_set_quota_explainer) goes back in a sealed memfd: on a big cluster it
 * outgrows a control message. Calls producers.c (prod_registered).
 * Cost: every node filtered and scored once, and an answer linear in the
 * nodes.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "ingest/control_server.h"
#include "base/base.h"
#include "shm/shm.h"
#include "workers/workers.h"

void producers_set_evaluator(struct producers *p, struct engine *e)
{
	pthread_mutex_lock(&p->lock);
	p->evaluator = e;
	pthread_mutex_unlock(&p->lock);
}

struct evaluation {
	const struct snapshot *snap;
	const struct plugin_ctx *ctx;
	const struct score_config *score; /* the template's profile's; NULL:
					   * no per-plugin scores */
	struct json_buf feasible, filtered, scores;
};

static const char *slot_name(const struct evaluation *x, uint32_t slot)
{
	return intern_str(x->ctx->strings, x->snap->nodes[slot].name);
}

static void evaluated_filtered(void *arg, uint32_t slot,
			       const struct reason *reasons, unsigned n)
{
	struct evaluation *x = arg;
	bool unresolvable = false;
	json_buf_puts(&x->filtered, x->filtered.len ? "," : "{");
	json_buf_string(&x->filtered, slot_name(x, slot));
	json_buf_puts(&x->filtered, ":{\"reasons\":[");
	for (unsigned i = 0; i < n; i++) {
		char text[512];
		reason_format(x->ctx, &reasons[i], text, sizeof(text));
		if (i > 0)
			json_buf_puts(&x->filtered, ",");
		json_buf_string(&x->filtered, text);
		unresolvable |= reason_unresolvable(reasons[i].code);
	}
	json_buf_printf(&x->filtered, "],\"unresolvable\":%s}",
			unresolvable ? "true" : "false");
}

/* A score in thousandths of a point (SCORE_FINE) as a JSON number. */
static void fine_number(struct json_buf *b, int64_t v)
{
	int64_t a = v < 0 ? -v : v;
	json_buf_printf(b, "%s%lld.%03lld", v < 0 ? "-" : "", (long long)(a / SCORE_FINE),
			(long long)(a % SCORE_FINE));
}

static void evaluated_scored(void *arg, uint32_t slot,
			     const int64_t scores[SCORE_PLUGINS], int64_t total)
{
	struct evaluation *x = arg;
	json_buf_puts(&x->feasible, x->feasible.len ? "," : "{");
	json_buf_string(&x->feasible, slot_name(x, slot));
	json_buf_printf(&x->feasible, ":%lld", (long long)total);
	if (x->score == NULL)
		return;
	/* Each enabled plugin's score and the total, as `shmsched place
	 * --explain` prints them: whole points, the device scores and the
	 * total with their thousandths. */
	json_buf_puts(&x->scores, x->scores.len ? "," : "{");
	json_buf_string(&x->scores, slot_name(x, slot));
	json_buf_puts(&x->scores, ":{");
	for (int p = 0; p < SCORE_PLUGINS; p++) {
		if (!score_plugin_enabled(x->score, p))
			continue;
		json_buf_printf(&x->scores, "\"%s\":", score_plugin_names[p]);
		if (p == SCORE_GPU_BEST_FIT || p == SCORE_GPU_FRAG)
			fine_number(&x->scores, scores[p]);
		else
			json_buf_printf(&x->scores, "%lld", (long long)scores[p]);
		json_buf_puts(&x->scores, ",");
	}
	json_buf_puts(&x->scores, "\"total\":");
	fine_number(&x->scores, total);
	json_buf_puts(&x->scores, "}");
}

void producers_set_quota_explainer(struct producers *p,
				   producers_quota_explain_fn fn, void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->quota_explain = fn;
	p->quota_explain_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

/* One template against every node, nothing placed: the extender verbs of
 * the HTTP gateway. The answer is too large for a control message on a
 * big cluster, so it travels in a sealed memfd. */
void prod_handle_evaluate(struct producers *p, enum producer_role role,
			  struct control_server *s, uint64_t conn, uint32_t rid,
			  const void *body, uint32_t len)
{
	struct producer *pr = prod_registered(p, role, s, conn, rid, "evaluating");
	if (pr == NULL)
		return;
	struct op_evaluate ev;
	if (len != sizeof(ev)) {
		control_server_reply_error(s, conn, rid, EINVAL, "evaluate: a body "
					   "of %u bytes; expected %zu", len, sizeof(ev));
		return;
	}
	memcpy(&ev, body, sizeof(ev));
	if (ev.template_id == 0 || ev.template_id > pr->n_templates) {
		control_server_reply_error(s, conn, rid, ENOENT, "evaluate: template "
					   "%u: no such template (1..%u registered)",
					   ev.template_id, pr->n_templates);
		return;
	}
	if (p->evaluator == NULL) {
		control_server_reply_error(s, conn, rid, ENOTSUP, "evaluate: this "
					   "daemon does not evaluate pods");
		return;
	}
	const struct pod_spec *tmpl = &pr->templates[ev.template_id - 1];
	const struct sched_profile *prof =
		p->profiles != NULL && tmpl->profile < p->profiles->n_profiles
		? &p->profiles->profiles[tmpl->profile] : NULL;
	struct evaluation x = {.snap = cluster_snapshot(p->cluster), .ctx = p->ctx,
			       .score = prof ? &prof->score : NULL};
	struct engine_explain hooks = {.arg = &x, .filtered = evaluated_filtered,
				       .scored = evaluated_scored};
	struct placement pl = {0};
	int rc = engine_place_reference(p->evaluator, tmpl, 0, &hooks, &pl);
	struct json_buf out = {0};
	json_buf_printf(&out, "{\"nodes\":%u,\"feasible\":%s%s,\"filtered\":%s%s",
			pl.all_nodes, x.feasible.len ? x.feasible.data : "{",
			"}", x.filtered.len ? x.filtered.data : "{", "}");
	if (prof != NULL) {
		json_buf_puts(&out, ",\"profile\":");
		json_buf_string(&out, prof->scheduler_name);
		json_buf_printf(&out, ",\"scores\":%s}",
				x.scores.len ? x.scores.data : "{");
	}
	char quota[SHMSCHED_MESSAGE_MAX];
	if (p->quota_explain != NULL &&
	    p->quota_explain(p->quota_explain_arg, tmpl, quota, sizeof(quota))) {
		json_buf_puts(&out, ",\"quota\":");
		json_buf_string(&out, quota);
	}
	json_buf_puts(&out, "}\n");
	int fd = -ENOMEM;
	if (rc == 0 && !out.failed && !x.feasible.failed && !x.filtered.failed &&
	    !x.scores.failed)
		fd = sealed_text_create("shmsched-evaluation", out.data, out.len);
	if (fd >= 0) {
		struct op_evaluated done = {.bytes = out.len};
		control_server_reply(s, conn, rid, &done, sizeof(done), fd);
		close(fd);
	} else if (fd == -ENOMEM) {
		control_server_reply_error(s, conn, rid, ENOMEM, "evaluate: out of "
					   "memory for the answer");
	} else {
		control_server_reply_error(s, conn, rid, -fd, "evaluate: a sealed "
					   "memfd for the answer's %zu bytes: %s",
					   out.len, strerror(-fd));
	}
	json_buf_free(&out);
	json_buf_free(&x.feasible);
	json_buf_free(&x.filtered);
	json_buf_free(&x.scores);
}
