/* The admin routes' one answer of refusal: a Kubernetes Status of failure
 * (gateway_internal.h). Its own file so that http.c, which routes to
 * drain_routes.c, failure_routes.c, pool_routes.c and webhooks.c, and those
 * files, which answer with it, all call down into it (check-call-loops).
 */
#include "gateway/gateway_internal.h"

#include <stdarg.h>
#include <stdio.h>

void gw_reply_status(struct gw_http_reply *rep, unsigned code, const char *reason,
		     const char *msg)
{
	rep->code = code;
	rep->content_type = "application/json";
	json_buf_puts(&rep->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		      "\"metadata\":{},\"status\":\"Failure\",\"message\":");
	json_buf_string(&rep->body, msg);
	if (reason != NULL) /* kube's 500 for two budgets has none */
		json_buf_printf(&rep->body, ",\"reason\":\"%s\"", reason);
	json_buf_printf(&rep->body, ",\"code\":%u}\n", code);
}

void gw_reply_statusf(struct gw_http_reply *rep, unsigned code, const char *reason,
		      const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gw_reply_status(rep, code, reason, msg);
}
