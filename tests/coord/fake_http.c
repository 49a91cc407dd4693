/* A fake HTTP/1.1 server on loopback (tests/coord/fake_http.h).
 *
 * One thread accepts and serves one connection at a time: it reads a
 * request (the head up to the blank line into a 1 MiB buffer, then the
 * body by Content-Length), calls the handler, and goes on reading the
 * same connection until the peer closes it, the handler closes it or
 * leaves a request unanswered. Stop shuts the listening socket down, so
 * accept returns an error and the thread ends. A test's bounds, not a
 * server's: one request at a time, no pipelining, no chunked bodies. */
#include "fake_http.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int fake_http_listen_loopback(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static bool write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t)w;
	}
	return true;
}

void fake_http_answer(struct fake_http_exchange *x, int status, const char *body, size_t len,
		      bool then_close)
{
	char head[256];
	int h = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\n%s\r\n",
			 status, status == 200 ? "OK" : "Bad Request", len,
			 then_close ? "Connection: close\r\n" : "");
	x->answered = true;
	x->close_after = then_close;
	if (!write_all(x->fd, head, (size_t)h) || !write_all(x->fd, body, len))
		x->close_after = true;
}

/* Reads one request: its path and body (malloc'd); false at EOF. */
static bool read_request(int c, char path[256], char **body, size_t *body_len)
{
	static __thread char buf[1 << 20];
	size_t n = 0;
	char *end = NULL;
	while (!end) {
		ssize_t got = read(c, buf + n, sizeof(buf) - 1 - n);
		if (got <= 0)
			return false;
		n += (size_t)got;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (sscanf(buf, "%*s %255s", path) != 1)
		return false;
	const char *cl = strcasestr(buf, "Content-Length:");
	size_t want = cl ? strtoul(cl + 15, NULL, 10) : 0;
	if (strcasestr(buf, "Expect: 100-continue") &&
	    !write_all(c, "HTTP/1.1 100 Continue\r\n\r\n", 25))
		return false;
	size_t have = n - (size_t)(end + 4 - buf);
	if (have > want)
		have = want;
	*body = malloc(want + 1);
	assert_non_null(*body);
	memcpy(*body, end + 4, have);
	while (have < want) {
		ssize_t got = read(c, *body + have, want - have);
		if (got <= 0) {
			free(*body);
			return false;
		}
		have += (size_t)got;
	}
	(*body)[want] = '\0';
	*body_len = want;
	return true;
}

static void *serve(void *arg)
{
	struct fake_http *s = arg;
	for (;;) {
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			return NULL;
		char path[256];
		struct fake_http_exchange x = {.path = path, .fd = c};
		char *body;
		while (!x.close_after && read_request(c, path, &body, &x.body_len)) {
			x.body = body;
			x.answered = false;
			s->handler(s->arg, &x);
			free(body);
			if (!x.answered)
				x.close_after = true;
		}
		close(c);
	}
}

void fake_http_start(struct fake_http *s, fake_http_handler *handler, void *arg)
{
	s->handler = handler;
	s->arg = arg;
	s->fd = fake_http_listen_loopback(&s->port);
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

void fake_http_stop(struct fake_http *s)
{
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->thread, NULL);
}
