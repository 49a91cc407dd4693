/* Fuzz target: the gateway's owners log (gateway/owners_log.c,
 * shmsched-gateway --owners-file) read from arbitrary bytes
 * (gw_owners_parse), under small bounds so they are reached. Refused: a
 * message naming the source and nothing returned. Accepted: the live
 * entries within the bound, no more than the lines read, each findable
 * by its name's cookie with a user of 1..255 bytes; and an append of one
 * entry, a release and a forget keep those counts consistent (the log
 * has no file behind it here). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct gw_owners_limits lim = {.max_bytes = 1u << 16,
					     .max_entries = 64, .compact_min = 4};
	struct gw_owners *o = NULL;
	char err[512];
	err[0] = '\0';
	size_t cut = 0;
	int rc = gw_owners_parse((const char *)data, size, "fuzz", &lim, &o, &cut,
				 err, sizeof(err));
	if (rc < 0) {
		if (o != NULL || strncmp(err, "fuzz", 4) != 0 ||
		    (rc != -EINVAL && rc != -E2BIG && rc != -EFBIG && rc != -ENOMEM))
			abort();
		return 0;
	}
	size_t n = gw_owners_count(o);
	if (n > lim.max_entries || n > gw_owners_lines(o) || cut > size)
		abort();
	/* What is in the table is found by its own name. */
	static const char name[] = "fuzz/pod";
	struct gw_owner_rec r = {"fuzzer user", name};
	bool had = gw_owners_find(o, gw_cookie(name, strlen(name)), NULL) != NULL;
	rc = gw_owners_append(o, &r, 1, err, sizeof(err));
	if (rc == 0) {
		const char *got = NULL;
		const char *user = gw_owners_find(o, gw_cookie(name, strlen(name)), &got);
		if (user == NULL || strcmp(user, "fuzzer user") != 0 ||
		    strcmp(got, name) != 0 || gw_owners_count(o) != n + !had)
			abort();
		if (gw_owners_release(o, gw_cookie(name, strlen(name)), err,
				      sizeof(err)) != 0 ||
		    gw_owners_count(o) != n + !had - 1)
			abort();
	} else if (rc == -E2BIG ? n + !had <= lim.max_entries : rc != -EFBIG) {
		abort();
	}
	gw_owners_forget(o, gw_cookie(name, strlen(name)));
	if (gw_owners_count(o) > gw_owners_lines(o))
		abort();
	gw_owners_close(o);
	return 0;
}
