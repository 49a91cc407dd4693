/* Runs a fuzz target without libFuzzer: over every file named on the command
 * line (the seed corpus) and then over a fixed number of pseudo-random
 * mutations of them, so the plain and sanitizer builds exercise the decoder
 * on bad input too. A crash or trap fails the test. Output: cmocka-style
 * closing line. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 4096
#define MUTATIONS 20000

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t next_random(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

int main(int argc, char **argv)
{
	static uint8_t inputs[64][MAX_INPUT];
	size_t sizes[64];
	int n = 0;
	for (int i = 1; i < argc && n < 64; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (f == NULL) {
			fprintf(stderr, "replay: cannot open %s\n", argv[i]);
			return 1;
		}
		sizes[n] = fread(inputs[n], 1, MAX_INPUT, f);
		fclose(f);
		LLVMFuzzerTestOneInput(inputs[n], sizes[n]);
		n++;
	}
	uint8_t buf[MAX_INPUT];
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
			size = (size_t)(next_random() % (MAX_INPUT + 1));
		LLVMFuzzerTestOneInput(buf, size);
	}
	printf("[  PASSED  ] %d seed input(s) and %d mutation(s).\n", n, MUTATIONS);
	return 0;
}
