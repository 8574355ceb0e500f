/* The filters as libseccomp compiled them when nsfence was built, one set
 * per combination of the options (tools/genbpf writes seccomp_bpf.inc). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/filters.h"

struct sc_precompiled {
    bool unix_block;
    bool observer;
    bool nested_userns;
    size_t n;
    struct {
        enum sc_filter kind;
        unsigned short len;
        const struct sock_filter *insns;
    } progs[SC_FILTER_COUNT];
};

#include "seccomp_bpf.inc"

int sc_build(const struct sc_options *o, struct sc_set *out, struct nf_err *err)
{
    memset(out, 0, sizeof(*out));
    for (size_t v = 0; v < sizeof(sc_precompiled) / sizeof(sc_precompiled[0]); v++) {
        const struct sc_precompiled *p = &sc_precompiled[v];

        if (p->unix_block != o->unix_block || p->observer != o->observer ||
            p->nested_userns != o->nested_userns)
            continue;
        for (size_t i = 0; i < p->n; i++) {
            size_t bytes = p->progs[i].len * sizeof(struct sock_filter);

            out->progs[i].insns = malloc(bytes);
            if (!out->progs[i].insns) {
                sc_set_free(out);
                return nf_err_sys(err, "out of memory");
            }
            memcpy(out->progs[i].insns, p->progs[i].insns, bytes);
            out->progs[i].kind = p->progs[i].kind;
            out->progs[i].len = p->progs[i].len;
            out->n++;
        }
        return 0;
    }
    return nf_err_set(err, EINVAL, "no precompiled seccomp filters for these options");
}
