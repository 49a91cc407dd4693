/* policy_probe SOCKET NAME NAMESPACE [CLASS]: registers, as NAME, one
 * template of a pod in NAMESPACE naming PriorityClass CLASS (none when
 * absent or ""), and says whether the daemon took it: "accepted" (exit 0)
 * or "refused: ERRNO: TEXT" (exit 1); 2: it could not connect. With
 * $POLICY_PROBE_HOLD (seconds) it then stays connected that long, asking
 * the daemon a question every 50 ms, and says "disconnected" (exit 3)
 * when the daemon closes it, "still connected" (exit 0) otherwise. For
 * tests/cli/test_policy.sh, which runs it as another uid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shmsched/client.h"

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: policy_probe SOCKET NAME NAMESPACE [CLASS]\n");
		return 2;
	}
	char err[1024], cls[300] = "", json[1024];
	if (argc == 5 && argv[4][0] != '\0')
		snprintf(cls, sizeof(cls), "\"priorityClassName\":\"%s\",", argv[4]);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
		 "\"namespace\":\"%s\"},\"spec\":{%s\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}", argv[3], cls);
	struct shmsched_client *c;
	if (shmsched_connect_named(argv[1], argv[2], &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "connect: %s\n", err);
		return 2;
	}
	uint32_t tid;
	int rc = shmsched_register_template(c, json, strlen(json), &tid, err, sizeof(err));
	if (rc < 0) {
		shmsched_disconnect(c);
		printf("refused: %d: %s\n", -rc, err);
		return 1;
	}
	printf("accepted\n");
	fflush(stdout);
	const char *hold = getenv("POLICY_PROBE_HOLD");
	for (long i = 0; hold != NULL && i < atol(hold) * 20; i++) {
		uint32_t index;
		if (shmsched_resource(c, "cpu", &index, err, sizeof(err)) == -ECONNRESET) {
			shmsched_disconnect(c);
			printf("disconnected\n");
			return 3;
		}
		usleep(50000);
	}
	if (hold != NULL)
		printf("still connected\n");
	shmsched_disconnect(c);
	return 0;
}
