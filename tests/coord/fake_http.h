/* tests/coord/fake_http.h: a fake HTTP/1.1 server on loopback for the
 * tests of coord/'s etcd client without an etcd (test_etcd_codec.c,
 * test_commit_queue.c, test_lease_renewer.c). It listens on a free port
 * of 127.0.0.1 and serves its connections one at a time on its own
 * thread: each request read whole (the request line's path, the body by
 * Content-Length, "100 Continue" when asked) is handed to the test's
 * handler, which answers it (fake_http_answer), keeping the connection or
 * closing it, or does not (the connection is then closed unanswered: a
 * request lost on the way back). cmocka fails the test when it cannot
 * listen or start. */
#ifndef SHMSCHED_TESTS_COORD_FAKE_HTTP_H
#define SHMSCHED_TESTS_COORD_FAKE_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One request, as the handler sees it: valid during the call. */
struct fake_http_exchange {
	const char *path; /* of the request line, NUL-ended */
	const char *body; /* NUL-ended, body_len bytes before the NUL */
	size_t body_len;
	/* The server's: the connection, and what the handler did. */
	int fd;
	bool answered, close_after;
};

/* Called on the server's thread for each request; arg as given to start. */
typedef void fake_http_handler(void *arg, struct fake_http_exchange *x);

struct fake_http {
	int fd;   /* the listening socket */
	int port; /* its port on 127.0.0.1 */
	pthread_t thread;
	fake_http_handler *handler;
	void *arg;
};

/* Listens on a free loopback port, sets *port to it; the socket. */
int fake_http_listen_loopback(int *port);

/* Listens and starts serving with handler(arg, ...). */
void fake_http_start(struct fake_http *s, fake_http_handler *handler, void *arg);

/* Stops listening and joins the thread (after the request in hand). */
void fake_http_stop(struct fake_http *s);

/* Answers x: the status line of `status` (200, or 400 as etcd's gateway
 * answers an error), Content-Type JSON, the body's length, and, with
 * then_close, "Connection: close" and the connection closed after the
 * handler returns. Once a request. */
void fake_http_answer(struct fake_http_exchange *x, int status, const char *body, size_t len,
		      bool then_close);

#endif
