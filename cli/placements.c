/* shmsched placements: every live placement of a running daemon, listed
 * through its admin socket a page at a time: id, node, owner (uid and
 * name), requests and devices. Thin: the client library pages. As text:
 * a header line, then one row a placement, cpu and memory as kubectl
 * prints them (base/units.h); --json keeps the raw numbers. The daemon's
 * placement record holds no pod name (a producer's cookie only), so the
 * listing names the owner, not the pod. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/node.h"
#include "shmsched/client.h"

#define PAGE 256

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched placements [--json] [--admin-socket PATH]\n"
		"\n"
		"Lists every live placement of the daemon: its id (what a release\n"
		"names), node, owner (uid and producer name), cpu and memory\n"
		"requests (cpu in cores or millicores, memory in Ki/Mi/Gi, as\n"
		"kubectl prints them), GPUs and exclusive cores, under a header\n"
		"line. --json: one JSON object a line, the raw numbers.\n"
		"The admin socket as for `shmsched node`.\n");
}

int placements_main(int argc, char **argv)
{
	const char *given = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--admin-socket") == 0 && i + 1 < argc) {
			given = argv[++i];
		} else {
			fprintf(stderr, "shmsched placements: %s \"%s\"\n"
				"Try 'shmsched placements --help' for more "
				"information.\n", strcmp(argv[i], "--admin-socket") == 0 ?
				"a value is needed after" : "unexpected argument",
				argv[i]);
			return 2;
		}
	}
	char path[4096], err[1024], node[256], gpus[64], cores[1024];
	const char *sock = cli_admin_socket(given, path, sizeof(path));
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched placements: %s\n", err);
		return 1;
	}
	static struct shmsched_placement page[PAGE];
	uint32_t cursor = 0;
	uint64_t total = 0;
	int rc = 0;
	if (!json)
		printf("%-12s %-16s %-28s %8s %10s %-6s %s\n", "ID", "NODE",
		       "OWNER", "CPU", "MEMORY", "GPUS", "CPUSET");
	while (cursor != UINT32_MAX) {
		rc = shmsched_placements(c, &cursor, page, PAGE, err, sizeof(err));
		if (rc < 0)
			break;
		for (int i = 0; i < rc; i++) {
			const struct shmsched_placement *p = &page[i];
			if (shmsched_node_name(c, p->node_id, node, sizeof(node), err,
					       sizeof(err)) < 0)
				snprintf(node, sizeof(node), "(removed node %u)",
					 p->node_id);
			shmsched_format_gpus(&p->devices, gpus, sizeof(gpus));
			shmsched_format_cpuset(&p->devices, cores, sizeof(cores));
			if (json) {
				printf("{\"placement_id\":%" PRIu64 ",\"node\":",
				       p->placement_id);
				json_out_string(stdout, node);
				printf(",\"owner_uid\":%u,\"owner_name\":",
				       p->owner_uid);
				json_out_string(stdout, p->owner_name);
				printf(",\"cpu_milli\":%" PRId64 ",\"mem_bytes\":%" PRId64
				       ",\"gpus\":\"%s\",\"gpu_milli\":%u,\"cpuset\":\"%s\"}\n",
				       p->cpu_milli, p->mem_bytes, gpus,
				       p->devices.gpu_milli, cores);
			} else {
				char owner[96], cpu[32], mem[32];
				snprintf(owner, sizeof(owner), "uid %u \"%s\"",
					 p->owner_uid, p->owner_name);
				printf("%-12" PRIu64 " %-16s %-28s %8s %10s %-6s %s\n",
				       p->placement_id, node, owner,
				       units_cpu(p->cpu_milli, cpu, sizeof(cpu)),
				       units_bytes(p->mem_bytes, mem, sizeof(mem)),
				       gpus[0] ? gpus : "-", cores[0] ? cores : "-");
			}
		}
		total += (uint64_t)rc;
	}
	shmsched_disconnect(c);
	if (rc < 0) {
		fprintf(stderr, "shmsched placements: %s\n", err);
		return 1;
	}
	if (!json)
		fprintf(stderr, "shmsched placements: %" PRIu64 " live\n", total);
	return 0;
}
