/* tests/coord: the lease's keep-alives on their own thread
 * (coord/lease_renewer.c) against a fake etcd in a thread that answers
 * /v3/lease/keepalive as told: alive (the TTL again), gone (no TTL: the
 * lease expired, as etcd's gateway answers it; see test_etcd_codec.c) or
 * silent (no answer for 1 s). No etcd needed; TTL 2 s.
 *
 * renews_then_loses_once: held, the instant told at once is the grant's
 * send time + TTL - TTL/4; renewals come about every TTL/3 and each moves
 * the instant on; once the fake answers gone, 0 is told, the loss is
 * taken exactly once (and only for that lease), and no keep-alive is sent
 * for a lease no longer held. silent_etcd_lapses: keep-alives time out
 * within TTL/3 and count as errors, nothing more is told, so the instant
 * lapses; stop returns within a call's deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord/lease_renewer.h"
#include "fake_http.h"

#define TTL_S 2
#define NS_PER_MS UINT64_C(1000000)
#define TTL_NS (UINT64_C(1000000000) * TTL_S)

enum mode { ALIVE, GONE, SILENT };

/* The fake and what the callback saw: under mu. */
struct fake {
	struct fake_http http;
	pthread_mutex_t mu;
	enum mode mode;
	int requests;
	uint64_t until; /* the last instant told */
	int tells, zeros;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Each request (a lease keep-alive): counted, then answered as the mode
 * says. */
static void fake_handle(void *arg, struct fake_http_exchange *x)
{
	struct fake *f = arg;
	pthread_mutex_lock(&f->mu);
	f->requests++;
	enum mode mode = f->mode;
	pthread_mutex_unlock(&f->mu);
	if (mode == SILENT) {
		sleep_ms(1000);
		return; /* closed unanswered */
	}
	const char *body = mode == ALIVE ? "{\"result\":{\"ID\":\"7\",\"TTL\":\"2\"}}"
					 : "{\"result\":{\"ID\":\"7\"}}";
	fake_http_answer(x, 200, body, strlen(body), true);
}

static void on_alive(void *arg, uint64_t until)
{
	struct fake *f = arg;
	pthread_mutex_lock(&f->mu);
	if (until == 0 && f->until != 0)
		f->zeros++;
	if (until != 0)
		f->tells++;
	f->until = until;
	pthread_mutex_unlock(&f->mu);
}

static void fake_start(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	fake_http_start(&f->http, fake_handle, f);
}

static void fake_stop(struct fake *f)
{
	fake_http_stop(&f->http);
	pthread_mutex_destroy(&f->mu);
}

static struct lease_renewer *renewer_of(struct fake *f)
{
	char eps[64], err[256] = "";
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d", f->http.port);
	struct lease_renewer_config cfg = {.endpoints = eps, .host = "h", .ttl_s = TTL_S,
					   .alive_until = on_alive, .arg = f};
	struct lease_renewer *r = NULL;
	int rc = lease_renewer_start(&r, &cfg, err, sizeof(err));
	if (rc != 0)
		fail_msg("lease_renewer_start: %d: %s", rc, err);
	return r;
}

static void set_mode(struct fake *f, enum mode m)
{
	pthread_mutex_lock(&f->mu);
	f->mode = m;
	pthread_mutex_unlock(&f->mu);
}

static struct fake snap(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	struct fake s = *f;
	pthread_mutex_unlock(&f->mu);
	return s;
}

static void renews_then_loses_once(void **state)
{
	(void)state;
	static struct fake f;
	fake_start(&f);
	struct lease_renewer *r = renewer_of(&f);
	uint64_t sent = now_ns();
	lease_renewer_hold(r, 7, sent);
	struct fake s = snap(&f);
	assert_int_equal(s.tells, 1);
	assert_int_equal(s.until, sent + TTL_NS - TTL_NS / 4);
	/* Two renewals due by 1.33 s; up to 4 s on a loaded machine. */
	struct lease_renewer_stats st;
	for (int i = 0; i < 400; i++) {
		lease_renewer_get_stats(r, &st);
		if (st.renewals >= 2)
			break;
		sleep_ms(10);
	}
	assert_true(st.renewals >= 2);
	assert_int_equal(st.losses, 0);
	assert_true(st.gap_max_ns >= TTL_NS / 3); /* not before TTL/3 */
	s = snap(&f);
	assert_true(s.tells >= 3);
	assert_true(s.until > sent + TTL_NS - TTL_NS / 4); /* moved on */
	assert_int_equal(lease_renewer_take_loss(r, 7), 0);

	set_mode(&f, GONE);
	for (int i = 0; i < 400 && snap(&f).zeros == 0; i++)
		sleep_ms(10);
	s = snap(&f);
	assert_int_equal(s.zeros, 1);
	assert_int_equal(s.until, 0);
	lease_renewer_get_stats(r, &st);
	assert_int_equal(st.losses, 1);
	assert_int_equal(lease_renewer_take_loss(r, 8), 0); /* another lease */
	assert_int_equal(lease_renewer_take_loss(r, 7), 1);
	assert_int_equal(lease_renewer_take_loss(r, 7), 0); /* once */
	/* No lease held: no keep-alive. */
	int before = snap(&f).requests;
	sleep_ms(900);
	assert_int_equal(snap(&f).requests, before);
	lease_renewer_stop(r);
	fake_stop(&f);
}

static void silent_etcd_lapses(void **state)
{
	(void)state;
	static struct fake f;
	fake_start(&f);
	set_mode(&f, SILENT);
	struct lease_renewer *r = renewer_of(&f);
	uint64_t sent = now_ns();
	lease_renewer_hold(r, 9, sent);
	struct lease_renewer_stats st;
	for (int i = 0; i < 400; i++) {
		lease_renewer_get_stats(r, &st);
		if (st.errors >= 1)
			break;
		sleep_ms(10);
	}
	/* The first keep-alive, sent at TTL/3, timed out within TTL/3. */
	uint64_t took = now_ns() - sent;
	printf("# first error %.0f ms after the grant\n", (double)took / 1e6);
	assert_true(st.errors >= 1);
	assert_true(took >= TTL_NS / 3 + TTL_NS / 3); /* sent at TTL/3, waited its deadline */
	assert_int_equal(st.renewals, 0);
	assert_int_equal(st.losses, 0);
	struct fake s = snap(&f);
	assert_int_equal(s.tells, 1); /* only the hold's: the instant lapses */
	assert_int_equal(s.until, sent + TTL_NS - TTL_NS / 4);
	assert_int_equal(lease_renewer_take_loss(r, 9), 0); /* not refused: no loss */
	uint64_t t0 = now_ns();
	lease_renewer_drop(r);
	lease_renewer_stop(r);
	uint64_t stop_ms = (now_ns() - t0) / NS_PER_MS;
	printf("# stop took %llu ms\n", (unsigned long long)stop_ms);
	assert_true(stop_ms < 2000); /* a call's deadline (TTL/3), with room */
	assert_int_equal(snap(&f).until, 0);
	fake_stop(&f);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(renews_then_loses_once),
		cmocka_unit_test(silent_etcd_lapses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
