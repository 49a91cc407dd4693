/* Writing JSON text: strings escaped as RFC 8259 requires. */
#ifndef SHMSCHED_CLI_JSON_OUT_H
#define SHMSCHED_CLI_JSON_OUT_H

#include <stdio.h>

/* Writes `s` as a JSON string, quotes included. */
void json_out_string(FILE *f, const char *s);

#endif
