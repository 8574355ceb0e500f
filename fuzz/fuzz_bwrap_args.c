/* bw_parse and bw_validate over an argv made of the input. Bytes before the
 * first 0x01 are the arguments, split on NUL; bytes after it are what every
 * fd reads (fd N reads them from offset N), so --args files and
 * --add-seccomp-fd programs are fuzzed too. The properties: no crash or
 * leak; an error is one non-empty line; an accepted spec holds only what
 * bwrap would accept: fds >= 0 where an op takes one, modes <= 07777,
 * overlays with their sources, sizes within bwrap's limit, seccomp
 * programs in whole instructions, env names setenv takes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "src/bwrap_args.h"

struct data {
    const uint8_t *p;
    size_t n;
};

static int read_fd(void *ctx, int fd, char **out, size_t *len)
{
    const struct data *d = ctx;
    size_t off = (size_t)fd < d->n ? (size_t)fd : d->n;

    if (fd % 7 == 6)
        return -5; /* EIO, now and then */
    *len = d->n - off;
    *out = fuzz_copy(d->p + off, *len);
    return 0;
}

static bool takes_fd(enum bw_op_kind k)
{
    return k == BW_OP_BIND_FD || k == BW_OP_RO_BIND_FD || k == BW_OP_FILE || k == BW_OP_BIND_DATA ||
           k == BW_OP_RO_BIND_DATA;
}

static void check_op(const struct bw_op *op)
{
    CHECK(op->dest != NULL);
    CHECK(op->perms <= 07777);
    CHECK(op->size <= SIZE_MAX / 2);
    CHECK(takes_fd(op->kind) ? op->fd >= 0 : op->fd == -1);
    CHECK(op->kind == BW_OP_TMPFS || op->size == 0);
    switch (op->kind) {
    case BW_OP_OVERLAY:
        CHECK(op->src && op->workdir);
        /* fall through */
    case BW_OP_TMP_OVERLAY:
        CHECK(op->n_srcs >= 1);
        break;
    case BW_OP_RO_OVERLAY:
        CHECK(op->n_srcs >= 2);
        break;
    case BW_OP_BIND:
    case BW_OP_BIND_TRY:
    case BW_OP_DEV_BIND:
    case BW_OP_DEV_BIND_TRY:
    case BW_OP_RO_BIND:
    case BW_OP_RO_BIND_TRY:
    case BW_OP_SYMLINK:
        CHECK(op->src != NULL);
        /* fall through */
    case BW_OP_BIND_FD:
    case BW_OP_RO_BIND_FD:
    case BW_OP_REMOUNT_RO:
    case BW_OP_PROC:
    case BW_OP_DEV:
    case BW_OP_TMPFS:
    case BW_OP_MQUEUE:
    case BW_OP_DIR:
    case BW_OP_FILE:
    case BW_OP_BIND_DATA:
    case BW_OP_RO_BIND_DATA:
    case BW_OP_CHMOD:
    case BW_OP_SET_HOSTNAME:
        CHECK(op->n_srcs == 0 && op->srcs == NULL);
        break;
    }
    for (size_t i = 0; i < op->n_srcs; i++)
        CHECK(op->srcs[i] != NULL);
}

static void check_spec(const struct bw_spec *s, size_t argc)
{
    for (size_t i = 0; i < s->n_ops; i++)
        check_op(&s->ops[i]);
    for (size_t i = 0; i < s->n_env; i++)
        CHECK(s->env[i].kind == BW_ENV_CLEAR ||
              (s->env[i].name[0] && !strchr(s->env[i].name, '=')));
    for (size_t i = 0; i < s->n_caps; i++)
        CHECK(s->caps[i].cap == BW_CAP_ALL ||
              (s->caps[i].cap >= 0 && s->caps[i].cap <= BW_CAP_MAX));
    for (size_t i = 0; i < s->n_seccomp_progs; i++)
        CHECK(s->seccomp_progs[i].len % 8 == 0);
    CHECK(s->n_seccomp_progs == 0 || s->seccomp_fd == -1);
    if (s->action == BW_ACTION_RUN) {
        CHECK(s->n_command <= argc);
        CHECK(s->command && s->command[s->n_command] == NULL);
    }
}

static void check_err(const struct nf_err *err)
{
    CHECK(err->msg[0] != '\0');
    CHECK(strchr(err->msg, '\n') == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *sep = memchr(data, 1, size);
    size_t alen = sep ? (size_t)(sep - data) : size;
    struct data fds = { sep ? sep + 1 : data + size, sep ? size - alen - 1 : 0 };
    struct bw_parse_opts opts = { .read_fd = read_fd, .read_ctx = &fds };
    struct bw_host host = { .real_uid = 1000, .real_gid = 1000 };
    char *buf = malloc(alen + 1);
    char **argv = calloc(alen + 2, sizeof(*argv));
    size_t argc = 0;
    struct bw_spec spec;
    struct nf_err err = { 0 };

    CHECK(buf != NULL && argv != NULL);
    memcpy(buf, data, alen);
    buf[alen] = '\0';
    for (size_t i = 0; alen > 0 && i <= alen; i = i + strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    opts.setuid_mode = alen % 5 == 0;
    opts.labels_supported = alen % 3 == 0;
    host.setuid_mode = opts.setuid_mode;
    host.real_uid = alen % 2 ? 0 : 1000;
    host.userns_try_ok = alen % 4 == 0;
    if (bw_parse((int)argc, argv, &opts, &spec, &err) < 0) {
        check_err(&err);
    } else {
        check_spec(&spec, argc);
        if (spec.action == BW_ACTION_RUN && bw_validate(&spec, &host, &err) < 0)
            check_err(&err);
        else if (spec.action == BW_ACTION_RUN)
            CHECK(spec.n_command > 0 && (spec.unshare_user || spec.userns_fd >= 0 ||
                                         host.setuid_mode || host.real_uid == 0));
    }
    for (size_t i = 0; i < spec.n_warnings; i++)
        CHECK(strncmp(spec.warnings[i].msg, "Only the last --", 16) == 0);
    bw_spec_free(&spec);
    free(argv);
    free(buf);
    return 0;
}
