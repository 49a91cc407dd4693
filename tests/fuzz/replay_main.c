/* Runs a fuzz target without libFuzzer: over every file named on the command
 * line or found in a folder named there (the seed corpus, so a seed added
 * to corpus/<target>/ is replayed without a list to keep), and then over a
 * fixed number of pseudo-random mutations of them, so the plain and
 * sanitizer builds exercise the decoder on bad input too. A crash or trap
 * fails the test. Output: cmocka-style closing line. */
#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT 4096
#define REPLAY_MAX_SEEDS 256
#define MUTATIONS 20000

static uint8_t inputs[REPLAY_MAX_SEEDS][REPLAY_MAX_INPUT];
static size_t sizes[REPLAY_MAX_SEEDS];
static int n_inputs;

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Reads and runs one seed; 0, or 1 with the reason printed. */
static int replay_file(const char *path)
{
	if (n_inputs == REPLAY_MAX_SEEDS) {
		fprintf(stderr, "replay: more than %d seeds; %s not read\n",
			REPLAY_MAX_SEEDS, path);
		return 1;
	}
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return 1;
	}
	size_t size = fread(inputs[n_inputs], 1, REPLAY_MAX_INPUT, f);
	int longer = fgetc(f) != EOF;
	fclose(f);
	if (longer) { /* libFuzzer's own -max_len here: a seed is whole */
		fprintf(stderr, "replay: %s is longer than %d bytes\n", path,
			REPLAY_MAX_INPUT);
		return 1;
	}
	sizes[n_inputs] = size;
	LLVMFuzzerTestOneInput(inputs[n_inputs], size);
	n_inputs++;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every regular file of folder `dir`, in name order (the same run each time). */
static int replay_folder(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "replay: cannot read folder %s\n", dir);
		return 1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = replay_file(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int rc = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)
				 ? replay_folder(argv[i])
				 : replay_file(argv[i]);
		if (rc != 0)
			return 1;
	}
	int n = n_inputs;
	uint8_t buf[REPLAY_MAX_INPUT];
	for (int m = 0; m < MUTATIONS; m++) {
		size_t size = 0;
		if (n > 0) {
			int pick = (int)(next_random() % (uint64_t)n);
			size = sizes[pick];
			memcpy(buf, inputs[pick], size);
		}
		/* Flip a few bytes, sometimes truncate or extend. */
		unsigned flips = 1 + (unsigned)(next_random() % 8);
		for (unsigned k = 0; k < flips && size > 0; k++)
			buf[next_random() % size] ^= (uint8_t)(1 + next_random() % 255);
		if (next_random() % 8 == 0)
			size = (size_t)(next_random() % (REPLAY_MAX_INPUT + 1));
		LLVMFuzzerTestOneInput(buf, size);
	}
	printf("[  PASSED  ] %d seed input(s) and %d mutation(s).\n", n, MUTATIONS);
	return 0;
}
