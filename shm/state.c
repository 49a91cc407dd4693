/* The state region: see state.h; its layout and protocols: shm/layout.h.
 *
 * Creation is atomic for other processes: the region is made and filled
 * under a temporary name, locked, then linked to its name (link(2) fails
 * if a region appeared meanwhile), so an observer or a second daemon
 * never finds a half-made file under the name. Re-attach checks, before
 * any section is used: the region header (magic, version, kind, sizes:
 * shm/layout_check.c), the meta section's capacities, and every section's
 * size against what those capacities take. Each section's contents are
 * checked by its owner (intern, cluster, placements) as it re-attaches.
 */
#define _GNU_SOURCE 1

#include "shm/state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "shm/cluster.h"
#include "shm/intern.h"
#include "shm/ledger.h"
#include "shm/placements.h"
#include "shm/region.h"
#include "shm/resources.h"

#define SHM_DIR "/dev/shm"

/* Access bits a region may never have: set-id and sticky bits, and any
 * write for group or others. */
#define STATE_MODE_FORBIDDEN 07022u

struct state {
	struct shm_region *region;
	int lock_fd;            /* the daemon's: holds the flock; -1 observer */
	char name[STATE_NAME_MAX];
};

int state_name_check(const char *name, char *err, size_t err_len)
{
	size_t n = name != NULL ? strlen(name) : 0;
	if (n == 0 || n >= STATE_NAME_MAX || name[0] == '.')
		return errmsg_rc(-EINVAL, err, err_len, "region name \"%s\": "
				 "expected 1 to %u characters, not starting with "
				 "'.'", name ? name : "", STATE_NAME_MAX - 1);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return errmsg_rc(-EINVAL, err, err_len, "region name "
					 "\"%s\": character %zu is not one of "
					 "A-Z a-z 0-9 . _ -", name, i + 1);
	}
	return 0;
}

/* The first hugetlbfs mount, or "" when there is none. */
static void hugetlbfs_mount(char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/mounts", "r");
	if (f == NULL)
		return;
	char dev[256], dir[256], type[64];
	while (fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3)
		if (strcmp(type, "hugetlbfs") == 0) {
			snprintf(buf, len, "%s", dir);
			break;
		}
	fclose(f);
}

/* Free huge pages of the default size, in bytes. */
static uint64_t hugetlb_free_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return 0;
	char line[128];
	uint64_t pages = 0, kib = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		sscanf(line, "HugePages_Free: %" SCNu64, &pages);
		sscanf(line, "Hugepagesize: %" SCNu64, &kib);
	}
	fclose(f);
	return pages * kib * 1024;
}

const char *state_path(const char *name, char *buf, size_t len)
{
	char mount[256];
	hugetlbfs_mount(mount, sizeof(mount));
	int n = 0;
	if (mount[0] != '\0') {
		n = snprintf(buf, len, "%s/%s", mount, name);
		if (n > 0 && (size_t)n < len && access(buf, F_OK) == 0)
			return buf;
	}
	n = snprintf(buf, len, SHM_DIR "/%s", name);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

struct sizes {
	struct shm_section_spec spec[7];
};

static void section_sizes(const struct state_meta *m, struct sizes *z)
{
	struct shm_section_spec *s = z->spec;
	s[0] = (struct shm_section_spec){SHM_SECTION_META, sizeof(struct state_meta)};
	s[1] = (struct shm_section_spec){SHM_SECTION_STRINGS,
		intern_section_size(m->max_strings, m->arena_size)};
	s[2] = (struct shm_section_spec){SHM_SECTION_SNAPSHOTS,
		cluster_snapshots_section_size(m->max_nodes)};
	s[3] = (struct shm_section_spec){SHM_SECTION_LEDGER,
		ledger_section_size(m->max_nodes)};
	s[4] = (struct shm_section_spec){SHM_SECTION_PLACEMENTS,
		placements_section_size(m->max_placements)};
	s[5] = (struct shm_section_spec){SHM_SECTION_IDENTITIES,
		STATE_IDENTITIES * sizeof(struct state_identity)};
	s[6] = (struct shm_section_spec){SHM_SECTION_WORKER_STATS,
		STATE_WORKERS_MAX * sizeof(struct state_worker_stats)};
}

/* The capacities a meta section may hold: within what the section-size
 * functions can lay out without overflow. */
static int check_meta(const struct state_meta *m, char *err, size_t err_len)
{
	if (m->max_nodes == 0 || m->max_nodes > (1u << 24) ||
	    m->max_placements == 0 || m->max_placements > (1u << 30) ||
	    m->max_strings == 0 || m->max_strings > (1u << 28) ||
	    m->arena_size == 0 || m->arena_size > (UINT64_C(1) << 36) ||
	    m->workers > STATE_WORKERS_MAX || m->current_snapshot > 1 ||
	    m->res.count < RES_FIRST_NAMED || m->res.count > RES_MAX)
		return errmsg_rc(-EBADMSG, err, err_len, "meta section damaged: "
				 "capacities out of range (nodes %u, placements "
				 "%u, strings %u, arena %" PRIu64 ", workers %u)",
				 m->max_nodes, m->max_placements, m->max_strings,
				 m->arena_size, m->workers);
	return 0;
}

/* Checks an attached region's sections against the capacities of `m`:
 * its meta, or an observer's copy of it. */
static int check_sections_of(const struct state *st, const struct state_meta *m,
			     char *err, size_t err_len)
{
	int rc = check_meta(m, err, err_len);
	if (rc < 0)
		return rc;
	struct sizes z;
	section_sizes(m, &z);
	for (unsigned i = 0; i < 7; i++) {
		struct shm_span s = shm_region_section(st->region, z.spec[i].id);
		if (s.size != z.spec[i].size)
			return errmsg_rc(-EBADMSG, err, err_len, "section %u: %"
					 PRIu64 " bytes, expected %" PRIu64 " for "
					 "the capacities in its meta", z.spec[i].id,
					 s.size, z.spec[i].size);
	}
	return 0;
}

static int check_sections(const struct state *st, char *err, size_t err_len)
{
	struct shm_span meta = shm_region_section(st->region, SHM_SECTION_META);
	if (meta.size < sizeof(struct state_meta))
		return errmsg_rc(-EBADMSG, err, err_len, "no meta section");
	return check_sections_of(st, meta.base, err, err_len);
}

int state_meta_copy(const struct state *st, struct state_meta *out, char *err,
		    size_t err_len)
{
	struct shm_span meta = shm_region_section(st->region, SHM_SECTION_META);
	if (meta.size < sizeof(struct state_meta))
		return errmsg_rc(-EBADMSG, err, err_len, "no meta section");
	/* A plain copy: the fields a daemon moves meanwhile are figures, and
	 * the ones indexed with are checked below, on the copy. */
	memcpy(out, meta.base, sizeof(*out));
	return check_sections_of(st, out, err, err_len);
}

static struct state *state_alloc(const char *name)
{
	struct state *st = calloc(1, sizeof(*st));
	if (st != NULL) {
		st->lock_fd = -1;
		snprintf(st->name, sizeof(st->name), "%s", name ? name : "");
	}
	return st;
}

/* The mode a new region gets: the configured one, else 0600, or 0640
 * with a group named (its members observe). */
static unsigned new_mode(const struct state_config *cfg)
{
	return cfg->mode ? cfg->mode : cfg->has_group ? 0640 : 0600;
}

/* Whether the file open on `fd` (what was opened, by fstat: not whatever
 * the path names now) is a region this daemon may use. */
static int check_ours(int fd, const char *path, const struct state_config *cfg,
		      char *err, size_t err_len)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return errmsg_rc(-errno, err, err_len, "state region %s: fstat: %s",
				 path, strerror(errno));
	unsigned mode = (unsigned)sb.st_mode & 07777;
	uid_t me = geteuid();
	if (!S_ISREG(sb.st_mode))
		return errmsg_rc(-EPERM, err, err_len, "state region %s: not a "
				 "regular file (owner uid %u, mode 0%o, type 0%o): "
				 "refused; remove it (it is not ours) or start "
				 "with --name OTHER", path, (unsigned)sb.st_uid,
				 mode, (unsigned)(sb.st_mode & S_IFMT));
	if (sb.st_uid != me)
		return errmsg_rc(-EPERM, err, err_len, "state region %s: owned by "
				 "uid %u, mode 0%o, not by this daemon's uid %u "
				 "(its owner could rewrite it while the daemon "
				 "runs): refused; remove it (it is not ours) or "
				 "start with --name OTHER", path,
				 (unsigned)sb.st_uid, mode, (unsigned)me);
	/* Read bits the configuration grants: group's with a group named,
	 * and what an explicit --region-mode gives. */
	unsigned readable = (cfg->has_group ? 0040u : 0u) | (cfg->mode & 0044u);
	unsigned extra = mode & 07077u & ~readable;
	if ((mode & STATE_MODE_FORBIDDEN) != 0 || extra != 0)
		return errmsg_rc(-EPERM, err, err_len, "state region %s: owner uid "
				 "%u, mode 0%o: %s; refused: remove it, or chmod "
				 "%o it, or start with --name OTHER", path,
				 (unsigned)sb.st_uid, mode,
				 (mode & STATE_MODE_FORBIDDEN) != 0
				 ? "group or others may write it (or set-id bits)"
				 : "group or others may read it, and no "
				   "--region-group/--region-mode grants that",
				 new_mode(cfg) & (0700u | readable));
	/* Group access is for the group named, not whichever the file has. */
	if ((mode & 0070u) != 0 && cfg->has_group && sb.st_gid != cfg->group)
		return errmsg_rc(-EPERM, err, err_len, "state region %s: owner uid "
				 "%u, mode 0%o, group gid %u, not --region-group's "
				 "gid %u: refused; chgrp %u it, or remove it, or "
				 "start with --name OTHER", path, (unsigned)sb.st_uid,
				 mode, (unsigned)sb.st_gid, (unsigned)cfg->group,
				 (unsigned)cfg->group);
	return 0;
}

/* The identities a previous daemon left: `used` 0 or 1, and a used
 * one's name NUL-terminated inside its field (the daemon compares names
 * with strcmp). */
static int check_identities(const struct state *st, char *err, size_t err_len)
{
	const struct state_identity *ids =
		shm_region_section(st->region, SHM_SECTION_IDENTITIES).base;
	for (unsigned i = 0; i < STATE_IDENTITIES; i++) {
		if (ids[i].used > 1 ||
		    (ids[i].used && memchr(ids[i].name, '\0', sizeof(ids[i].name))
				    == NULL))
			return errmsg_rc(-EBADMSG, err, err_len, "identity %u "
					 "(owner %u) damaged: used %u, name%s "
					 "NUL-terminated", i, i + 1, ids[i].used,
					 memchr(ids[i].name, '\0',
						sizeof(ids[i].name)) ? "" : " not");
	}
	return 0;
}

/* Attaches the file open on `fd`. */
static int attach(struct state *st, int fd, bool readonly, const char *path,
		  char *err, size_t err_len)
{
	char why[256];
	st->region = shm_region_attach(fd, SHM_REGION_KIND_STATE,
				       readonly ? SHM_MAP_READONLY : 0, why,
				       sizeof(why));
	if (st->region == NULL)
		return errmsg_rc(-errno, err, err_len, "state region %s: %s", path,
				 why);
	int rc = check_sections(st, why, sizeof(why));
	if (rc == 0 && !readonly)
		rc = check_identities(st, why, sizeof(why));
	if (rc < 0) {
		shm_region_close(st->region);
		st->region = NULL;
		return errmsg_rc(rc, err, err_len, "state region %s: %s", path, why);
	}
	return 0;
}

static int create(struct state *st, const struct state_config *cfg,
		  const char *dir, bool hugetlb, char *err, size_t err_len)
{
	struct state_meta m = {
		.max_nodes = cfg->max_nodes,
		.max_placements = cfg->max_placements,
		.max_strings = cfg->max_strings,
		.arena_size = cfg->arena_size,
		.workers = cfg->workers,
	};
	res_names_init(&m.res);
	char why[256];
	if (check_meta(&m, why, sizeof(why)) < 0)
		return errmsg_rc(-EINVAL, err, err_len, "state region %s: "
				 "capacities out of range (nodes %u, placements "
				 "%u, strings %u)", cfg->name, m.max_nodes,
				 m.max_placements, m.max_strings);
	struct sizes z;
	section_sizes(&m, &z);
	char tmp[512], path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, cfg->name);
	unsigned mode = new_mode(cfg);
	/* O_EXCL: a new file, never one (or a link) that is there; another
	 * suffix when one is (a name someone else took). */
	int fd = -1;
	for (unsigned i = 0; i < 8 && fd < 0; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, sizeof(tmp), "%s/.%s.%d.%lx.new", dir, cfg->name,
			 (int)getpid(), (unsigned long)(ts.tv_nsec + i));
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return errmsg_rc(-errno, err, err_len, "state region %s: %s",
				 tmp, strerror(errno));
	int rc = 0;
	/* fchmod: the mode exactly, whatever the umask. */
	if (fchmod(fd, mode) < 0 ||
	    (cfg->has_group && fchown(fd, (uid_t)-1, cfg->group) < 0) ||
	    flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errmsg_rc(-errno, err, err_len, "state region %s: mode, "
			       "group or lock: %s", tmp, strerror(errno));
		goto fail;
	}
	int map_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	st->region = map_fd < 0 ? NULL
		     : shm_region_create_on(map_fd, hugetlb, SHM_REGION_KIND_STATE,
					    z.spec, 7);
	if (st->region == NULL) {
		rc = errmsg_rc(-errno, err, err_len, "state region %s: cannot map "
			       "it: %s", tmp, strerror(errno));
		if (map_fd >= 0)
			close(map_fd);
		goto fail;
	}
	struct state_meta *meta = state_meta(st);
	*meta = m;
	meta->created_s = (uint64_t)time(NULL);
	snprintf(meta->name, sizeof(meta->name), "%s", cfg->name);
	snprintf(meta->page_info, sizeof(meta->page_info), "%s",
		 shm_region_backing(st->region));
	if (link(tmp, path) < 0) {
		rc = errmsg_rc(errno == EEXIST ? -EBUSY : -errno, err, err_len,
			       "state region %s: %s", path, errno == EEXIST
			       ? "a file of that name appeared meanwhile "
				 "(another daemon, or another user): refused"
			       : strerror(errno));
		shm_region_close(st->region);
		st->region = NULL;
		goto fail;
	}
	unlink(tmp);
	st->lock_fd = fd;
	return 0;

fail:
	unlink(tmp);
	close(fd);
	return rc;
}

int state_open(const struct state_config *cfg, struct state **out, bool *fresh,
	       char *err, size_t err_len)
{
	*out = NULL;
	struct state *st = state_alloc(cfg->name);
	if (st == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	int rc = 0;
	if (cfg->name == NULL) {
		/* Anonymous: a memfd, gone with the process. */
		struct state_meta m = {
			.max_nodes = cfg->max_nodes,
			.max_placements = cfg->max_placements,
			.max_strings = cfg->max_strings,
			.arena_size = cfg->arena_size,
			.workers = cfg->workers,
		};
		res_names_init(&m.res);
		rc = check_meta(&m, err, err_len);
		struct sizes z;
		section_sizes(&m, &z);
		st->region = rc < 0 ? NULL
			     : shm_region_create("shmsched-state",
						 SHM_REGION_KIND_STATE, z.spec, 7,
						 cfg->no_hugetlb ? SHM_MAP_NO_HUGETLB : 0);
		if (st->region == NULL) {
			if (rc == 0)
				rc = errmsg_rc(-errno, err, err_len, "state region: "
					       "%s", strerror(errno));
			free(st);
			return rc;
		}
		*state_meta(st) = m;
		snprintf(state_meta(st)->page_info, sizeof(m.page_info), "%s",
			 shm_region_backing(st->region));
		*fresh = true;
		*out = st;
		return 0;
	}
	rc = state_name_check(cfg->name, err, err_len);
	char path[512];
	if (rc < 0 || state_path(cfg->name, path, sizeof(path)) == NULL) {
		free(st);
		return rc < 0 ? rc : errmsg_rc(-EINVAL, err, err_len, "name too long");
	}
	if ((cfg->mode & STATE_MODE_FORBIDDEN) != 0) {
		free(st);
		return errmsg_rc(-EINVAL, err, err_len, "state region %s: mode 0%o "
				 "would let group or others write it (or has "
				 "set-id bits): at most 0644", path, cfg->mode);
	}
	if (cfg->fresh) {
		/* Removed, then made exclusively: never re-opened by name. */
		char why[256];
		rc = state_remove(cfg->name, why, sizeof(why));
		if (rc < 0 && rc != -ENOENT) {
			free(st);
			return errmsg_rc(rc, err, err_len, "--fresh: %s", why);
		}
		errno = ENOENT;
	}
	/* O_NOFOLLOW: a link at the name is refused (ELOOP); O_NONBLOCK: a
	 * fifo there cannot hold the open (check_ours refuses it). */
	int fd = cfg->fresh ? -1 : open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW |
					O_NONBLOCK);
	if (fd >= 0) {
		rc = check_ours(fd, path, cfg, err, err_len);
		if (rc < 0) {
			close(fd);
			free(st);
			return rc;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int e = errno;
			close(fd);
			free(st);
			return e == EWOULDBLOCK
			       ? errmsg_rc(-EBUSY, err, err_len, "state region %s: "
					   "another daemon runs on it", path)
			       : errmsg_rc(-e, err, err_len, "state region %s: "
					   "lock: %s", path, strerror(e));
		}
		rc = attach(st, fd, false, path, err, err_len);
		if (rc < 0) {
			close(fd);
			free(st);
			return rc;
		}
		st->lock_fd = fd;
		*fresh = false;
		*out = st;
		log_msg(LOG_LEVEL_INFO, "state region %s: attached, %" PRIu64 " MiB "
			"(made on %s)", path,
			shm_region_span(st->region).size >> 20, state_meta(st)->page_info);
		return 0;
	}
	if (errno != ENOENT) {
		int e = errno;
		free(st);
		if (e == ELOOP)
			return errmsg_rc(-EPERM, err, err_len, "state region %s: a "
					 "symbolic link: refused (a region is never "
					 "reached through a link); remove it (it is "
					 "not ours) or start with --name OTHER", path);
		return errmsg_rc(-e, err, err_len, "state region %s: %s", path,
				 strerror(e));
	}
	/* A new region: on hugetlbfs when a pool can hold it. */
	char mount[256];
	hugetlbfs_mount(mount, sizeof(mount));
	rc = -ENOENT;
	if (!cfg->no_hugetlb && mount[0] != '\0') {
		struct state_meta m = {.max_nodes = cfg->max_nodes,
			.max_placements = cfg->max_placements,
			.max_strings = cfg->max_strings, .arena_size = cfg->arena_size};
		struct sizes z;
		section_sizes(&m, &z);
		uint64_t total = 0;
		for (unsigned i = 0; i < 7; i++)
			total += z.spec[i].size + SHM_SECTION_ALIGN;
		if (hugetlb_free_bytes() >= total + SHM_REGION_ALIGN)
			rc = create(st, cfg, mount, true, err, err_len);
		if (rc < 0 && rc != -ENOENT)
			log_msg(LOG_LEVEL_INFO, "%s; trying POSIX shm", err);
	}
	if (rc < 0)
		rc = create(st, cfg, SHM_DIR, false, err, err_len);
	if (rc < 0) {
		free(st);
		return rc;
	}
	*fresh = true;
	*out = st;
	log_msg(LOG_LEVEL_INFO, "state region %s: created, %" PRIu64 " MiB on %s",
		cfg->name, shm_region_span(st->region).size >> 20,
		state_backing(st));
	return 0;
}

/* Opens region `name`'s file read-only (its path in `path`). Returns the
 * fd, or a negative errno with a message in `err` (NULL: none). */
static int open_by_name(const char *name, char *path, size_t path_len,
			char *err, size_t err_len)
{
	int rc = state_name_check(name, err, err_len);
	if (rc < 0)
		return rc;
	if (state_path(name, path, path_len) == NULL)
		return errmsg_rc(-EINVAL, err, err_len, "name too long");
	/* O_NONBLOCK: a fifo planted at the name cannot hold the open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errmsg_rc(-errno, err, err_len, "state region %s: %s%s", path,
				 strerror(errno), errno == ENOENT
				 ? " (no daemon of that name has run since boot, "
				   "or its region was removed)" : "");
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		return errmsg_rc(-e, err, err_len, "state region %s: fstat: %s",
				 path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return errmsg_rc(-EPERM, err, err_len, "state region %s: not a "
				 "regular file (owner uid %u, mode 0%o): refused; "
				 "remove it (it is not a region)", path,
				 (unsigned)sb.st_uid, (unsigned)sb.st_mode & 07777);
	}
	return fd;
}

/* Whether a daemon holds the region open on `fd` (another descriptor of
 * the file than the daemon's own): a shared lock is refused only while a
 * daemon holds its exclusive one; taken, it is dropped at once. */
static bool held_by_daemon(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return false;
	}
	return errno == EWOULDBLOCK;
}

int state_observe(const char *name, struct state **out, char *err, size_t err_len)
{
	*out = NULL;
	char path[512];
	int fd = open_by_name(name, path, sizeof(path), err, err_len);
	if (fd < 0)
		return fd;
	struct state *st = state_alloc(name);
	if (st == NULL) {
		close(fd);
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	}
	int rc = attach(st, fd, true, path, err, err_len);
	close(fd);
	if (rc < 0) {
		free(st);
		return rc;
	}
	*out = st;
	return 0;
}

void state_close(struct state *st)
{
	if (st == NULL)
		return;
	shm_region_close(st->region);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	free(st);
}

bool state_daemon_running(const char *name)
{
	char path[512];
	int fd = open_by_name(name, path, sizeof(path), NULL, 0);
	if (fd < 0)
		return false;
	bool running = held_by_daemon(fd);
	close(fd);
	return running;
}

bool state_held(const struct state *st)
{
	/* The daemon's own handle (named: taking a lock on a descriptor of
	 * its open file would convert its lock, then drop it; anonymous: no
	 * other process has it). Else the observer's own open of the file. */
	if (st->lock_fd >= 0 || st->name[0] == '\0')
		return true;
	return held_by_daemon(shm_region_fd(st->region));
}

int state_remove(const char *name, char *err, size_t err_len)
{
	char path[512];
	int fd = open_by_name(name, path, sizeof(path), err, err_len);
	if (fd < 0)
		return fd;
	/* Held while unlinking, so no daemon attaches in between. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		return errmsg_rc(e == EWOULDBLOCK ? -EBUSY : -e, err, err_len,
				 "state region %s: %s", path, e == EWOULDBLOCK
				 ? "a daemon runs on it: stop it first"
				 : strerror(e));
	}
	int rc = unlink(path) < 0 ? errmsg_rc(-errno, err, err_len, "state region "
					      "%s: %s", path, strerror(errno)) : 0;
	close(fd);
	return rc;
}

struct state_meta *state_meta(const struct state *st)
{
	return shm_region_section(st->region, SHM_SECTION_META).base;
}

struct shm_span state_section(const struct state *st, uint32_t id)
{
	return shm_region_section(st->region, id);
}

const char *state_backing(const struct state *st)
{
	return shm_region_backing(st->region);
}

size_t state_page_size(const struct state *st)
{
	return shm_region_page_size(st->region);
}

uint64_t state_size(const struct state *st)
{
	return shm_region_span(st->region).size;
}

const char *state_name(const struct state *st)
{
	return st->name;
}
