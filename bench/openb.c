/* openb CSV readers: see openb.h. Cost: one pass per file, O(bytes). */
#include "bench/openb.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 8192
#define MAX_FIELDS 160

const char *const paper_policy_names[PAPER_POLICIES] = {
	"01-Random", "02-DotProd", "03-GpuClustering",
	"04-GpuPacking", "05-BestFit", "06-FGD",
};

/* Splits a line in place at commas; strips the line end. Returns the
 * number of fields, or -1 past MAX_FIELDS. */
static int split(char *line, char *field[MAX_FIELDS])
{
	line[strcspn(line, "\r\n")] = '\0';
	int n = 0;
	char *p = line;
	for (;;) {
		if (n == MAX_FIELDS)
			return -1;
		field[n++] = p;
		char *comma = strchr(p, ',');
		if (comma == NULL)
			return n;
		*comma = '\0';
		p = comma + 1;
	}
}

static int column(char *const *names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return i;
	return -1;
}

/* A decimal integer in [lo, hi], the whole field. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	if (*s == '\0')
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

struct csv {
	FILE *f;
	const char *path;
	unsigned line_no;
	char line[LINE_MAX_BYTES];
	char *field[MAX_FIELDS];
	int n;
};

/* The next line's fields: 1, 0 at the end, or a negative errno. */
static int csv_next(struct csv *c, char *err, size_t err_len)
{
	if (fgets(c->line, sizeof(c->line), c->f) == NULL) {
		if (ferror(c->f)) {
			snprintf(err, err_len, "%s: read error", c->path);
			return -EIO;
		}
		return 0;
	}
	c->line_no++;
	if (strchr(c->line, '\n') == NULL && !feof(c->f)) {
		snprintf(err, err_len, "%s:%u: line longer than %d bytes", c->path,
			 c->line_no, LINE_MAX_BYTES - 2);
		return -EINVAL;
	}
	c->n = split(c->line, c->field);
	if (c->n < 0) {
		snprintf(err, err_len, "%s:%u: more than %d fields", c->path,
			 c->line_no, MAX_FIELDS);
		return -EINVAL;
	}
	return 1;
}

static int bad_field(const struct csv *c, const char *name, const char *why,
		     char *err, size_t err_len)
{
	snprintf(err, err_len, "%s:%u: %s: %s", c->path, c->line_no, name, why);
	return -EINVAL;
}

/* Opens `path` and reads its header line: a file without one is an
 * error. On an error the file is closed. */
static int csv_open(struct csv *c, const char *path, char *err, size_t err_len)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->f = fopen(path, "r");
	if (c->f == NULL) {
		int e = errno;
		snprintf(err, err_len, "%s: %s", path, strerror(e));
		return -e;
	}
	int rc = csv_next(c, err, err_len);
	if (rc > 0)
		return 0;
	if (rc == 0)
		snprintf(err, err_len, "%s: empty file", path);
	fclose(c->f);
	return rc < 0 ? rc : -EINVAL;
}

/* The header's index of each of the n names in `want`, into col[]; a
 * missing one is an error (and the file is closed). */
static int csv_columns(struct csv *c, const char *const *want, int n, int *col,
		       char *err, size_t err_len)
{
	for (int i = 0; i < n; i++)
		if ((col[i] = column(c->field, c->n, want[i])) < 0) {
			snprintf(err, err_len, "%s: no column \"%s\"", c->path, want[i]);
			fclose(c->f);
			return -EINVAL;
		}
	return 0;
}

/* Field `idx` of the current line as an integer in [lo, hi], or an error
 * naming `name` and `what` it must be. */
static int csv_int(const struct csv *c, int idx, const char *name, int64_t lo,
		   int64_t hi, const char *what, int64_t *out, char *err,
		   size_t err_len)
{
	if (parse_int(c->field[idx], lo, hi, out) < 0)
		return bad_field(c, name, what, err, err_len);
	return 0;
}

/* Appends to a growing array. */
static void *grow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 1024;
	void *q = realloc(p, c * size);
	if (q != NULL)
		*cap = c;
	return q;
}

static int copy_text(const struct csv *c, const char *name, const char *s,
		     char *out, size_t len, char *err, size_t err_len)
{
	if (strlen(s) >= len)
		return bad_field(c, name, "too long", err, err_len);
	strcpy(out, s);
	return 0;
}

static int load_nodes(const char *path, struct openb_trace *t, char *err,
		      size_t err_len)
{
	struct csv c;
	const char *const want[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
	int col[5];
	int rc = csv_open(&c, path, err, err_len);
	if (rc < 0 || (rc = csv_columns(&c, want, 5, col, err, err_len)) < 0)
		return rc;
	size_t cap = 0;
	while ((rc = csv_next(&c, err, err_len)) > 0) {
		if (c.n == 1 && c.field[0][0] == '\0')
			continue; /* a blank line */
		if (c.n < 5) {
			rc = bad_field(&c, "line", "fewer than 5 fields", err, err_len);
			break;
		}
		struct openb_node *n = grow(t->nodes, t->n_nodes, &cap, sizeof(*n));
		if (n == NULL) {
			rc = -ENOMEM;
			snprintf(err, err_len, "%s: out of memory", path);
			break;
		}
		t->nodes = n;
		n = &t->nodes[t->n_nodes];
		memset(n, 0, sizeof(*n));
		int64_t gpus;
		if ((rc = copy_text(&c, "sn", c.field[col[0]], n->name, sizeof(n->name),
				    err, err_len)) < 0)
			break;
		if ((rc = csv_int(&c, col[1], "cpu_milli", 0, INT64_C(1) << 40,
				  "not an integer >= 0", &n->cpu_milli, err, err_len)) < 0 ||
		    (rc = csv_int(&c, col[2], "memory_mib", 0, INT64_C(1) << 40,
				  "not an integer >= 0", &n->memory_mib, err, err_len)) < 0 ||
		    (rc = csv_int(&c, col[3], "gpu", 0, NODE_MAX_GPUS,
				  "not an integer in 0..16", &gpus, err, err_len)) < 0)
			break;
		n->gpus = (uint8_t)gpus;
		if ((rc = copy_text(&c, "model", c.field[col[4]], n->model,
				    sizeof(n->model), err, err_len)) < 0)
			break;
		t->gpu_milli_total += gpus * GPU_MILLI_PER_DEVICE;
		t->n_nodes++;
	}
	fclose(c.f);
	return rc < 0 ? rc : 0;
}

static int load_pods(const char *path, struct openb_trace *t, char *err,
		     size_t err_len)
{
	struct csv c;
	const char *const want[] = {"cpu_milli", "memory_mib", "num_gpu", "gpu_milli"};
	int col[4];
	int rc = csv_open(&c, path, err, err_len);
	if (rc < 0 || (rc = csv_columns(&c, want, 4, col, err, err_len)) < 0)
		return rc;
	int spec_col = column(c.field, c.n, "gpu_spec"); /* absent in multigpu* */
	int need = spec_col > col[3] ? spec_col + 1 : col[3] + 1;
	for (int i = 0; i < 3; i++)
		if (col[i] + 1 > need)
			need = col[i] + 1;
	size_t cap = 0;
	while ((rc = csv_next(&c, err, err_len)) > 0) {
		if (c.n == 1 && c.field[0][0] == '\0')
			continue;
		if (c.n < need) {
			rc = bad_field(&c, "line", "too few fields", err, err_len);
			break;
		}
		struct openb_pod *p = grow(t->pods, t->n_pods, &cap, sizeof(*p));
		if (p == NULL) {
			rc = -ENOMEM;
			snprintf(err, err_len, "%s: out of memory", path);
			break;
		}
		t->pods = p;
		p = &t->pods[t->n_pods];
		memset(p, 0, sizeof(*p));
		int64_t num, milli;
		if ((rc = csv_int(&c, col[0], "cpu_milli", 0, INT64_C(1) << 40,
				  "not an integer >= 0", &p->cpu_milli, err, err_len)) < 0 ||
		    (rc = csv_int(&c, col[1], "memory_mib", 0, INT64_C(1) << 40,
				  "not an integer >= 0", &p->memory_mib, err, err_len)) < 0 ||
		    (rc = csv_int(&c, col[2], "num_gpu", 0, NODE_MAX_GPUS,
				  "not an integer in 0..16", &num, err, err_len)) < 0 ||
		    (rc = csv_int(&c, col[3], "gpu_milli", 0, GPU_MILLI_PER_DEVICE,
				  "not an integer in 0..1000", &milli, err, err_len)) < 0)
			break;
		if ((num == 0) != (milli == 0) ||
		    (num > 1 && milli != GPU_MILLI_PER_DEVICE)) {
			rc = bad_field(&c, "num_gpu/gpu_milli", "a pod takes a share of "
				       "one GPU or whole GPUs (num_gpu 0 with gpu_milli 0)",
				       err, err_len);
			break;
		}
		p->num_gpu = (uint8_t)num;
		p->gpu_milli = (uint16_t)milli;
		if (spec_col >= 0 &&
		    (rc = copy_text(&c, "gpu_spec", c.field[spec_col], p->gpu_spec,
				    sizeof(p->gpu_spec), err, err_len)) < 0)
			break;
		t->n_pods++;
	}
	fclose(c.f);
	return rc < 0 ? rc : 0;
}

void openb_list_name(const char *pod_list, char *out, size_t len)
{
	const char *prefix = "openb_pod_list_";
	size_t n = strlen(pod_list);
	if (n > 4 && strcmp(pod_list + n - 4, ".csv") == 0)
		n -= 4;
	if (strncmp(pod_list, prefix, strlen(prefix)) == 0)
		snprintf(out, len, "%.*s", (int)n, pod_list);
	else
		snprintf(out, len, "%s%.*s", prefix, (int)n, pod_list);
}

int openb_load(const char *dir, const char *pod_list, struct openb_trace *t,
	       char *err, size_t err_len)
{
	memset(t, 0, sizeof(*t));
	char path[4096], name[256];
	snprintf(path, sizeof(path), "%s/openb_node_list_gpu_node.csv", dir);
	int rc = load_nodes(path, t, err, err_len);
	if (rc == 0 && t->n_nodes == 0) {
		snprintf(err, err_len, "%s: no nodes", path);
		rc = -EINVAL;
	}
	if (rc == 0) {
		openb_list_name(pod_list, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s.csv", dir, name);
		rc = load_pods(path, t, err, err_len);
	}
	if (rc == 0 && t->n_pods == 0) {
		snprintf(err, err_len, "%s: no pods", path);
		rc = -EINVAL;
	}
	if (rc < 0)
		openb_free(t);
	return rc;
}

void openb_free(struct openb_trace *t)
{
	free(t->nodes);
	free(t->pods);
	memset(t, 0, sizeof(*t));
}

static int by_name(const void *a, const void *b)
{
	const char *x = a, *y = b;
	bool dx = strcmp(x, "openb_pod_list_default") == 0;
	bool dy = strcmp(y, "openb_pod_list_default") == 0;
	if (dx != dy)
		return dx ? -1 : 1;
	return strcmp(x, y);
}

int openb_lists(const char *dir, char names[][64], int max, char *err,
		size_t err_len)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		int e = errno;
		snprintf(err, err_len, "%s: %s", dir, strerror(e));
		return -e;
	}
	int n = 0;
	struct dirent *de;
	const char *prefix = "openb_pod_list_";
	while ((de = readdir(d)) != NULL && n < max) {
		size_t len = strlen(de->d_name);
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || len < 5 ||
		    len - 4 >= 64 || strcmp(de->d_name + len - 4, ".csv") != 0)
			continue;
		snprintf(names[n], 64, "%.*s", (int)(len - 4), de->d_name);
		n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	return n;
}

int paper_load(const char *file, const char *list, struct paper_results *out,
	       char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	struct csv c;
	int rc = csv_open(&c, file, err, err_len);
	if (rc < 0)
		return rc;
	int wl = column(c.field, c.n, "workload"), pol = column(c.field, c.n, "sc_policy");
	int load_col[PAPER_LOADS];
	char key[8];
	for (int k = 0; k < PAPER_LOADS; k++) {
		snprintf(key, sizeof(key), "%d", k);
		load_col[k] = column(c.field, c.n, key);
	}
	if (wl < 0 || pol < 0 || load_col[100] < 0) {
		snprintf(err, err_len, "%s: no workload, sc_policy or \"100\" column", file);
		fclose(c.f);
		return -EINVAL;
	}
	/* Sums then sums of squares, per policy and load. */
	static double sum[PAPER_POLICIES][PAPER_LOADS], sq[PAPER_POLICIES][PAPER_LOADS];
	static unsigned cnt[PAPER_POLICIES][PAPER_LOADS];
	memset(sum, 0, sizeof(sum));
	memset(sq, 0, sizeof(sq));
	memset(cnt, 0, sizeof(cnt));
	while ((rc = csv_next(&c, err, err_len)) > 0) {
		if (c.n <= wl || c.n <= pol || strcmp(c.field[wl], list) != 0)
			continue;
		int p = -1;
		for (int i = 0; i < PAPER_POLICIES; i++)
			if (strcmp(c.field[pol], paper_policy_names[i]) == 0)
				p = i;
		if (p < 0)
			continue;
		out->policy[p].seeds++;
		for (int k = 0; k < PAPER_LOADS; k++) {
			if (load_col[k] < 0 || load_col[k] >= c.n || c.field[load_col[k]][0] == '\0')
				continue;
			char *end;
			double v = strtod(c.field[load_col[k]], &end);
			if (*end != '\0' || !(v >= 0 && v <= 100)) {
				rc = bad_field(&c, "allocation", "not a percentage", err, err_len);
				goto done;
			}
			double u = 100.0 - v;
			sum[p][k] += u;
			sq[p][k] += u * u;
			cnt[p][k]++;
		}
	}
done:
	fclose(c.f);
	if (rc < 0)
		return rc;
	for (int p = 0; p < PAPER_POLICIES; p++)
		for (int k = 0; k < PAPER_LOADS; k++) {
			unsigned n = cnt[p][k];
			double mean = n ? sum[p][k] / n : (double)NAN;
			double var = n > 1 ? (sq[p][k] - n * mean * mean) / (n - 1) : 0;
			out->policy[p].unalloc_mean[k] = mean;
			out->policy[p].unalloc_sd[k] = var > 0 ? sqrt(var) : 0;
		}
	return 0;
}
