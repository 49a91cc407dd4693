/* Test helpers for tests/gateway: a real shmschedd in a child process, as
 * both gateway test programs start it. Header-only, static: each test
 * program includes it once, after cmocka.h. */
#ifndef SHMSCHED_TESTS_GATEWAY_DAEMON_CHILD_H
#define SHMSCHED_TESTS_GATEWAY_DAEMON_CHILD_H

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Runs argv (argv[0]: the shmschedd binary), its output into `log`, and
 * returns its pid once the log holds its ready line; fails the test when
 * none came within `ms`. The child dies with the test, also with one a
 * sanitizer stops mid-way. */
static pid_t daemon_child_start(const char *const argv[], const char *log,
				unsigned ms)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (unsigned t = 0; t < ms; t += 20) {
		FILE *f = fopen(log, "r");
		char line[512];
		bool ready = false;
		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			ready |= strstr(line, "ready:") != NULL;
		if (f != NULL)
			fclose(f);
		if (ready)
			return pid;
		sleep_ms(20);
	}
	fail_msg("shmschedd did not start (log %s)", log);
	return -1;
}

#endif
