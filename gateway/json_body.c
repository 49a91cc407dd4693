/* The body decoders' shared opening (gateway/json_body.h): the bound
 * checked before jansson sees a byte, duplicates refused, one object.
 * Cost: one parse of at most `max` bytes; nothing allocated but jansson's
 * tree, which the caller frees. */
#include "gateway/json_body.h"

#include <errno.h>
#include <stdio.h>

int gw_json_body_object(const char *body, size_t len, size_t max,
			const char *what, const char *shape, json_t **out,
			char *err, size_t err_len)
{
	*out = NULL;
	if (len > max) {
		snprintf(err, err_len, "%s: a body of %zu bytes; at most %zu", what,
			 len, max);
		return -EINVAL;
	}
	json_error_t je;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		snprintf(err, err_len, "%s: not JSON: %.200s (line %d, column %d)",
			 what, je.text, je.line, je.column);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		snprintf(err, err_len, "%s: expected a JSON object%s", what,
			 shape != NULL ? shape : "");
		return -EINVAL;
	}
	*out = root;
	return 0;
}

bool gw_json_body_blank(const char *body, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (body[i] != ' ' && body[i] != '\t' && body[i] != '\r' &&
		    body[i] != '\n')
			return false;
	return true;
}

bool gw_text_printable(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			return false;
	return true;
}
