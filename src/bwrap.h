/* bubblewrap 0.11.1's command line on nsfence's engine: what runs when the
 * binary is invoked as `bwrap`, or as `nsfence bwrap ARGS`. */
#pragma once

/* Set in the environment of a command that is this very binary (a nested
 * `/proc/self/exe ARGS`), so that it keeps the personality; it removes the
 * variable before anything else. */
#define BWRAP_PERSONALITY_ENV "NSFENCE_PERSONALITY"

/* argv[0] is the name bwrap was invoked as (for --help); returns the exit
 * status: the command's, 128+N, or 1 after one "bwrap: " line. */
int bwrap_main(int argc, char **argv);

/* The same argv, compiled and printed as the run plan it makes (`nsfence
 * explain --bwrap ARGS`); argv[0] is the name to print in usage. Nothing
 * runs. */
int bwrap_explain(int argc, char **argv);
