/* srt 0.0.83's command line on nsfence's engine: invoked as `srt` or as
 * `nsfence srt ARGS...`. Reads srt's settings file by srt's rules, compiles
 * it through nsfence's own front end into the run plan, runs the command
 * with `bash -c` as srt does, and exits as srt does. */
#pragma once

/* argv[0] is the program (`srt`, or `srt` for `nsfence srt`). Returns
 * srt's exit status. */
int srt_main(int argc, char **argv);
