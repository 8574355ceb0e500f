/* settings_parse and settings_apply over arbitrary bytes, into a policy
 * with a fixed cwd and home. The properties: they never crash or leak; an
 * error is one line that names the file first; settings the loader accepts
 * and applies leave only normalised absolute paths in the filesystem lists
 * and network entries the proxy's rule table builds from. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "proxy/rules.h"
#include "src/settings.h"

#define FUZZ_FILE "fuzz.json"

static void check_error(const char *msg)
{
    CHECK(msg[0] != '\0' && !strchr(msg, '\n'));
    CHECK(strncmp(msg, FUZZ_FILE ":", strlen(FUZZ_FILE ":")) == 0);
}

static void check_paths(const struct pol_strv *sv)
{
    for (size_t i = 0; i < sv->n; i++) {
        char again[PATH_MAX];
        struct nf_err err;

        CHECK(sv->v[i][0] == '/');
        CHECK(pol_path_normalize(sv->v[i], NULL, NULL, again, sizeof(again), &err) == 0);
        CHECK(strcmp(again, sv->v[i]) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size);
    struct srt_settings s;
    struct policy pol;
    struct nf_err err = { 0 };

    CHECK(pol_init(&pol, "/work/proj", "/home/user", &err) == 0);
    if (settings_parse(buf, size, FUZZ_FILE, &s, &err) < 0) {
        check_error(err.msg);
    } else {
        for (size_t i = 0; i < s.notes.n; i++)
            check_error(s.notes.v[i]);
        if (settings_apply(&s, &pol, &err) < 0) {
            check_error(err.msg);
        } else {
            struct px_rules rules;

            check_paths(&pol.allow_write);
            check_paths(&pol.deny_write);
            check_paths(&pol.deny_read);
            check_paths(&pol.allow_read);
            CHECK(pol.mandatory_deny_depth >= 1 && pol.mandatory_deny_depth <= POL_MAX_DEPTH);
            /* What the settings accept, the proxy must be able to load. */
            CHECK(px_rules_build(&pol, &rules, &err) == 0);
            px_rules_free(&rules);
        }
        settings_free(&s);
    }
    pol_free(&pol);
    free(buf);
    return 0;
}
