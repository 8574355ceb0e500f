/* Landlock mode's honest account: which of namespace mode's properties hold
 * at this kernel's Landlock ABI (enforced), hold in part (partial) or not at
 * all (absent). explain and doctor print the table; every Landlock run says
 * the weaker ones in one line on stderr. */
#pragma once

#include <stdio.h>

enum lmode_status {
    LMODE_ENFORCED,
    LMODE_PARTIAL,
    LMODE_ABSENT,
};

struct lmode_row {
    const char *property;
    enum lmode_status status;
    const char *how;
};

/* The table for ABI abi (0: no Landlock): rows written to out (at most
 * max), their number returned. Pure. */
size_t lmode_table(int abi, struct lmode_row *out, size_t max);
const char *lmode_status_name(enum lmode_status s);

/* "  property   status   how" lines. */
void lmode_print(int abi, FILE *out);

/* The one line a Landlock run prints on stderr. */
void lmode_warn(int abi);
