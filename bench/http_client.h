/* A small blocking HTTP/1.1 client for the gateway's load generator
 * (bench/gateway_load.c) and its tests: one request on a connection (new,
 * or kept alive), the answer's status, headers and body (Content-Length,
 * chunked, or until close). It trusts the server to speak HTTP and gives
 * up after a deadline: a tool for our own servers, not for the Internet. */
#ifndef SHMSCHED_BENCH_HTTP_CLIENT_H
#define SHMSCHED_BENCH_HTTP_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/base.h"

struct http_answer {
	int status;           /* 0: no answer (closed, timed out) */
	struct json_buf head; /* the status line and headers */
	struct json_buf body;
};

static inline void http_answer_free(struct http_answer *a)
{
	json_buf_free(&a->head);
	json_buf_free(&a->body);
	a->status = 0;
}

static inline int http_connect(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* A connection to a Unix socket at path (shmsched-gateway --listen
 * unix:/PATH). */
static inline int http_connect_unix(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static inline int http_send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* head, then body, in one system call as a rule (sendmsg of both): one
 * segment for the server to wake for, as an HTTP client that buffers its
 * request writes it (a head and its body sent apart cost the load
 * generator a send and the server a segment more a request). */
static inline int http_send2(int fd, const char *head, size_t n, const char *body,
			     size_t len)
{
	struct iovec iov[2] = {{(void *)head, n}, {(void *)body, len}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1};
	while (m.msg_iovlen > 0) {
		ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (m.msg_iovlen > 0 && (size_t)w >= m.msg_iov[0].iov_len) {
			w -= (ssize_t)m.msg_iov[0].iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen > 0) {
			m.msg_iov[0].iov_base = (char *)m.msg_iov[0].iov_base + w;
			m.msg_iov[0].iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Reads into buf (appending) until it holds `want` bytes past `from`, or the
 * peer closes (returns 0 then, 1 when satisfied, <0 on error/time-out). */
static inline int http_fill(int fd, struct json_buf *buf, size_t want,
			    int timeout_ms)
{
	while (buf->len < want) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, timeout_ms);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		char tmp[65536];
		ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		json_buf_put(buf, tmp, (size_t)n);
	}
	return 1;
}

static inline const char *http_header(const struct http_answer *a, const char *name)
{
	size_t len = strlen(name);
	const char *p = a->head.data;
	while (p != NULL && (p = strstr(p, "\r\n")) != NULL) {
		p += 2;
		if (strncasecmp(p, name, len) == 0 && p[len] == ':') {
			p += len + 1;
			while (*p == ' ')
				p++;
			return p;
		}
	}
	return NULL;
}

/* The first CRLF in buf past pos, or NULL. */
static inline char *http_crlf(const struct json_buf *buf, size_t pos)
{
	for (size_t i = pos; i + 1 < buf->len; i++)
		if (buf->data[i] == '\r' && buf->data[i + 1] == '\n')
			return buf->data + i;
	return NULL;
}

/* Reads one answer on fd. Returns 0, or a negative errno. */
static inline int http_read_answer(int fd, struct http_answer *a, int timeout_ms)
{
	struct json_buf in = {0};
	int rc;
	char *end;
	for (;;) {
		end = in.data ? strstr(in.data, "\r\n\r\n") : NULL;
		if (end != NULL)
			break;
		rc = http_fill(fd, &in, in.len + 1, timeout_ms);
		if (rc <= 0) {
			json_buf_free(&in);
			return rc == 0 ? -ECONNRESET : rc;
		}
	}
	size_t head_len = (size_t)(end - in.data) + 4;
	json_buf_put(&a->head, in.data, head_len);
	a->status = atoi(in.data + 9);
	size_t pos = head_len;
	const char *cl = http_header(a, "Content-Length");
	const char *te = http_header(a, "Transfer-Encoding");
	if (cl != NULL) {
		size_t n = strtoull(cl, NULL, 10);
		rc = http_fill(fd, &in, pos + n, timeout_ms);
		if (rc <= 0) {
			json_buf_free(&in);
			return rc == 0 ? -ECONNRESET : rc;
		}
		json_buf_put(&a->body, in.data + pos, n);
	} else if (te != NULL && strncasecmp(te, "chunked", 7) == 0) {
		for (;;) {
			char *eol;
			while ((eol = http_crlf(&in, pos)) == NULL) {
				rc = http_fill(fd, &in, in.len + 1, timeout_ms);
				if (rc <= 0) {
					json_buf_free(&in);
					return rc == 0 ? -ECONNRESET : rc;
				}
			}
			size_t n = strtoull(in.data + pos, NULL, 16);
			pos = (size_t)(eol - in.data) + 2;
			rc = http_fill(fd, &in, pos + n + 2, timeout_ms);
			if (rc <= 0) {
				json_buf_free(&in);
				return rc == 0 ? -ECONNRESET : rc;
			}
			json_buf_put(&a->body, in.data + pos, n);
			pos += n + 2;
			if (n == 0)
				break;
		}
	} else if (a->status != 204 && a->status != 304) {
		/* Until the server closes. */
		while ((rc = http_fill(fd, &in, in.len + 1, timeout_ms)) > 0)
			;
		if (rc < 0) {
			json_buf_free(&in);
			return rc;
		}
		json_buf_put(&a->body, in.data + pos, in.len - pos);
	}
	if (a->body.data == NULL)
		json_buf_put(&a->body, "", 0);
	json_buf_free(&in);
	return 0;
}

/* One request on fd (kept open). `extra` holds more header lines, each
 * ending in \r\n, or NULL. */
static inline int http_exchange(int fd, const char *method, const char *path,
				const char *extra, const char *body, size_t len,
				struct http_answer *a, int timeout_ms)
{
	char head[1024];
	int n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: test\r\n"
			 "Content-Length: %zu\r\n%s\r\n", method, path, len,
			 extra ? extra : "");
	*a = (struct http_answer){0};
	int rc = http_send2(fd, head, (size_t)n, body, len);
	if (rc < 0)
		return rc;
	return http_read_answer(fd, a, timeout_ms);
}

/* One request on a new connection, closed after. */
static inline int http_do(unsigned port, const char *method, const char *path,
			  const char *body, struct http_answer *a)
{
	int fd = http_connect(port);
	if (fd < 0) {
		*a = (struct http_answer){0};
		return fd;
	}
	int rc = http_exchange(fd, method, path, "Connection: close\r\n", body,
			       body ? strlen(body) : 0, a, 30000);
	close(fd);
	return rc;
}

/* Lines of a JSON Lines body. */
static inline size_t http_count_lines(const struct http_answer *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->body.len; i++)
		n += a->body.data[i] == '\n';
	return n;
}

#endif
