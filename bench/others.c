/* What else ran on this machine during a run: see others.h. */
#include "bench/others.h"
#include "base/base.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sample {
	uint32_t tid, pid, ppid;
	uint64_t run_ns, slices;
	char comm[20];
};

struct others_window {
	uint64_t t0;
	struct sample *s; /* [OTHERS_MAX], by /proc's order */
	unsigned n, missed;
};

/* A thread's schedstat ("run_ns wait_ns slices") and comm; false when it
 * has gone (or /proc says nothing readable). */
static bool read_thread(const char *pid, const char *tid, struct sample *out)
{
	char path[600]; /* two names of up to 255 bytes */
	snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pid, tid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return false;
	unsigned long long run = 0, wait = 0, slices = 0;
	int got = fscanf(f, "%llu %llu %llu", &run, &wait, &slices);
	fclose(f);
	if (got != 3)
		return false;
	out->run_ns = run;
	out->slices = slices;
	snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", pid, tid);
	out->comm[0] = '\0';
	f = fopen(path, "re");
	if (f != NULL) {
		if (fgets(out->comm, sizeof(out->comm), f) == NULL)
			out->comm[0] = '\0';
		fclose(f);
		out->comm[strcspn(out->comm, "\n")] = '\0';
	}
	out->tid = (uint32_t)strtoul(tid, NULL, 10);
	return true;
}

/* The parent of process `pid`, from the field after its name (which may
 * hold spaces and parentheses: the last ')' ends it); 0 if unreadable. */
static long parent_of(const char *pid)
{
	char path[300], line[512];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return 0;
	char *ok = fgets(line, sizeof(line), f);
	fclose(f);
	char *end = ok ? strrchr(line, ')') : NULL;
	char state;
	long ppid = 0;
	if (end == NULL || sscanf(end + 1, " %c %ld", &state, &ppid) != 2)
		return 0;
	return ppid;
}

/* Every thread of every process but this one, its children (the bench's
 * producers) and their children, up to OTHERS_MAX. */
static void read_all(struct others_window *w)
{
	w->n = 0;
	w->missed = 0;
	long self = (long)getpid();
	DIR *proc = opendir("/proc");
	if (proc == NULL)
		return;
	struct dirent *p;
	while ((p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		long pid = strtol(p->d_name, NULL, 10), parent = parent_of(p->d_name);
		char up[24];
		snprintf(up, sizeof(up), "%ld", parent);
		/* Its grandchildren too: a daemon run under strace. */
		if (pid == self || parent == self || (parent > 1 && parent_of(up) == self))
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		DIR *tasks = opendir(path);
		if (tasks == NULL)
			continue;
		struct dirent *t;
		while ((t = readdir(tasks)) != NULL) {
			if (t->d_name[0] < '1' || t->d_name[0] > '9')
				continue;
			if (w->n == OTHERS_MAX) {
				w->missed++;
				continue;
			}
			if (read_thread(p->d_name, t->d_name, &w->s[w->n])) {
				w->s[w->n].pid = (uint32_t)pid;
				w->s[w->n].ppid = (uint32_t)parent;
				w->n++;
			}
		}
		closedir(tasks);
	}
	closedir(proc);
}

struct others_window *others_begin(void)
{
	struct others_window *w = calloc(1, sizeof(*w));
	if (w == NULL || (w->s = calloc(OTHERS_MAX, sizeof(*w->s))) == NULL) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	if (access("/proc/self/task", R_OK) != 0) {
		free(w->s);
		free(w);
		errno = ENOENT;
		return NULL;
	}
	read_all(w);
	w->t0 = now_ns();
	return w;
}

static int by_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct sample *)a)->tid, y = ((const struct sample *)b)->tid;
	return x < y ? -1 : x > y;
}

void others_end(struct others_window *w, struct others *out)
{
	memset(out, 0, sizeof(*out));
	struct others_window after = {.s = calloc(OTHERS_MAX, sizeof(*after.s))};
	if (after.s == NULL) {
		free(w->s);
		free(w);
		return;
	}
	out->window_s = (double)(now_ns() - w->t0) / 1e9;
	read_all(&after);
	qsort(w->s, w->n, sizeof(*w->s), by_tid);
	for (unsigned i = 0; i < after.n; i++) {
		const struct sample *a = &after.s[i];
		/* A thread new since the first read: all its time is in it
		 * (a tid reused meanwhile is taken for the old thread). */
		const struct sample *b = bsearch(a, w->s, w->n, sizeof(*w->s), by_tid);
		uint64_t run = b != NULL && a->run_ns >= b->run_ns ? a->run_ns - b->run_ns
				: b != NULL ? 0 : a->run_ns;
		uint64_t slices = b != NULL && a->slices >= b->slices ? a->slices - b->slices
				: b != NULL ? 0 : a->slices;
		if (run == 0)
			continue;
		out->threads++;
		out->total_ms += (double)run / 1e6;
		struct other_thread o = {.ms = (double)run / 1e6, .slices = slices,
					 .pid = a->pid, .ppid = a->ppid};
		memcpy(o.comm, a->comm, sizeof(o.comm));
		/* Kept in order, most time first, OTHERS_TOP of them. */
		unsigned at = out->n_top;
		while (at > 0 && out->top[at - 1].ms < o.ms)
			at--;
		if (at < OTHERS_TOP) {
			unsigned last = out->n_top < OTHERS_TOP ? out->n_top : OTHERS_TOP - 1;
			memmove(&out->top[at + 1], &out->top[at], (last - at) * sizeof(o));
			out->top[at] = o;
			if (out->n_top < OTHERS_TOP)
				out->n_top++;
		}
	}
	out->missed = w->missed > after.missed ? w->missed : after.missed;
	free(after.s);
	free(w->s);
	free(w);
}
