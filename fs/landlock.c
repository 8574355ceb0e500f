#include "fs/landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/log.h"
#include "src/util.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule       445
#define SYS_landlock_restrict_self  446
#endif

#define LL_CREATE_VERSION    1U
#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_READ (FS_LL_READ_FILE | FS_LL_READ_DIR | FS_LL_EXECUTE)
#define LL_FILE_RIGHTS                                                                             \
    (FS_LL_EXECUTE | FS_LL_WRITE_FILE | FS_LL_READ_FILE | FS_LL_TRUNCATE | FS_LL_IOCTL_DEV)
#define LL_DEV_WRITE (FS_LL_WRITE_FILE | FS_LL_TRUNCATE | FS_LL_IOCTL_DEV)

int fs_ll_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);

    return v < 0 ? 0 : (int)v;
}

static uint64_t fs_rights(int abi)
{
    uint64_t r = (1ULL << 13) - 1;

    if (abi >= 2)
        r |= FS_LL_REFER;
    if (abi >= 3)
        r |= FS_LL_TRUNCATE;
    if (abi >= 5)
        r |= FS_LL_IOCTL_DEV;
    return r;
}

int fs_ll_add(struct fs_ll_plan *p, const char *path, uint64_t access, struct nf_err *err)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->rules[i].path, path) == 0) {
            p->rules[i].access |= access;
            return 0;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        struct fs_ll_rule *v = realloc(p->rules, cap * sizeof(*v));

        if (!v)
            return nf_err_sys(err, "out of memory");
        p->rules = v;
        p->cap = cap;
    }
    p->rules[p->n].path = strdup(path);
    if (!p->rules[p->n].path)
        return nf_err_sys(err, "out of memory");
    p->rules[p->n++].access = access;
    return 0;
}

void fs_ll_free(struct fs_ll_plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->rules[i].path);
    free(p->rules);
    free(p->tmpdir);
    free(p->tmp_parent);
    memset(p, 0, sizeof(*p));
}

/* Paths whose reading the plan denies (its masks), outside the pseudo file
 * systems, which are the host's here and not split. */
static bool denied_read(const struct fs_op *op)
{
    return (op->kind == FS_OP_MASK_DIR || op->kind == FS_OP_MASK_FILE) && op->dst &&
           !pol_path_within(op->dst, "/proc") && !pol_path_within(op->dst, "/dev");
}

static bool carve_out(const struct fs_op *op)
{
    return op->kind == FS_OP_BIND_RO && op->why && strcmp(op->why, "allow_read") == 0;
}

/* The host's /dev, as namespace mode's minimal one shows it: the harmless
 * nodes, the ptys (openpty needs them by name) and /dev/shm; no disk,
 * console, input or sound device. Without this, the host's /dev is
 * readable as far as its modes allow: as root, a disk or loop device would
 * give every denied file's content back, and /dev/vcs* the console's
 * screen. */
static int grant_dev(struct fs_ll_plan *p, struct nf_err *err)
{
    static const char *const readable[] = { "/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
                                            "/dev/urandom", "/dev/tty",  "/dev/ptmx", "/dev/shm" };

    if (fs_ll_add(p, "/dev", FS_LL_READ_DIR, err) < 0)
        return -1;
    for (size_t i = 0; i < NF_ARRAY_SIZE(readable); i++)
        if (fs_ll_add(p, readable[i], LL_READ, err) < 0)
            return -1;
    return 0;
}

/* Read for everything at and beneath path but the denied entries: a path
 * with a denied entry beneath it gets read_dir alone (it stays listable),
 * and each of its entries is taken in turn. */
static int grant_read(const struct fs_plan *fp, struct fs_ll_plan *p, const char *path,
                      unsigned depth, struct nf_err *err)
{
    bool beneath = pol_path_within("/dev", path);
    _cleanup_free_ char *child = NULL;
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (strcmp(path, "/dev") == 0)
        return grant_dev(p, err);
    if (p->tmp_parent) {
        if (strcmp(p->tmp_parent, path) == 0)
            return 0; /* other runs' TMPDIRs: this run's has its own rule */
        if (pol_path_within(p->tmp_parent, path))
            beneath = true;
    }
    for (size_t i = 0; i < fp->n; i++) {
        const struct fs_op *op = &fp->ops[i];

        if (!denied_read(op))
            continue;
        if (strcmp(op->dst, path) == 0) {
            /* Denied itself: only its carve-outs, and the write roots
             * inside it (namespace mode binds them in, readable). */
            for (size_t k = 0; k < fp->n; k++)
                if (carve_out(&fp->ops[k]) && pol_path_within(fp->ops[k].dst, path) &&
                    fs_ll_add(p, fp->ops[k].dst, LL_READ, err) < 0)
                    return -1;
            for (size_t k = 0; k < fp->n_write_roots; k++)
                if (pol_path_within(fp->write_roots[k], path) &&
                    strcmp(fp->write_roots[k], path) != 0 &&
                    fs_ll_add(p, fp->write_roots[k], LL_READ, err) < 0)
                    return -1;
            return 0;
        }
        if (pol_path_within(op->dst, path))
            beneath = true;
    }
    if (!beneath)
        return fs_ll_add(p, path, LL_READ, err);
    if (depth > PATH_MAX / 2)
        return nf_err_set(err, ELOOP, "landlock: %s: too deep", path);
    if (fs_ll_add(p, path, FS_LL_READ_DIR, err) < 0)
        return -1;
    d = opendir(path);
    if (!d)
        return nf_err_sys(err, "landlock: read rules beside a denied path: %s", path);
    child = malloc(PATH_MAX);
    if (!child) {
        closedir(d);
        return nf_err_sys(err, "out of memory");
    }
    while (rc == 0 && (errno = 0, e = readdir(d))) {
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if ((size_t)snprintf(child, PATH_MAX, "%s/%s", strcmp(path, "/") ? path : "", e->d_name) >=
            PATH_MAX)
            continue;
        /* A symlink is read through its target's own rules. */
        if (lstat(child, &st) < 0 || S_ISLNK(st.st_mode))
            continue;
        rc = grant_read(fp, p, child, depth + 1, err);
    }
    if (rc == 0 && errno)
        rc = nf_err_sys(err, "landlock: readdir %s", path);
    closedir(d);
    return rc;
}

/* The terminal the command inherits on 0-2, which it may need ioctls on
 * (job control) and write to by name (/dev/tty is another name for it). */
static int add_ttys(struct fs_ll_plan *p, struct nf_err *err)
{
    for (int fd = 0; fd < 3; fd++) {
        char name[PATH_MAX];

        if (!isatty(fd) || ttyname_r(fd, name, sizeof(name)) != 0)
            continue;
        if (fs_ll_add(p, name, LL_READ | LL_DEV_WRITE, err) < 0)
            return -1;
    }
    return 0;
}

/* Write rights on every entry of / but the pseudo file systems. */
static int grant_top_writes(struct fs_ll_plan *p, uint64_t write, struct nf_err *err)
{
    DIR *d = opendir("/");
    struct dirent *e;
    int rc = 0;

    if (!d)
        return nf_err_sys(err, "landlock: opendir /");
    while (rc == 0 && (e = readdir(d))) {
        char path[NAME_MAX + 2];
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, "dev") == 0 || strcmp(e->d_name, "proc") == 0 ||
            strcmp(e->d_name, "sys") == 0)
            continue;
        snprintf(path, sizeof(path), "/%s", e->d_name);
        if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
            continue;
        rc = fs_ll_add(p, path, write, err);
    }
    closedir(d);
    return rc;
}

int fs_ll_build(const struct fs_plan *fp, int abi, struct fs_ll_plan *out, struct nf_err *err)
{
    static const char *const devices[] = { "/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
                                           "/dev/urandom", "/dev/tty",  "/dev/ptmx" };
    char tmp_parent[PATH_MAX];
    uint64_t write;

    memset(out, 0, sizeof(*out));
    out->abi = abi;
    if (abi < 1)
        return nf_err_set(err, EOPNOTSUPP, "Landlock is not available on this kernel");
    out->handled_fs = fs_rights(abi);
    if (fs_ll_tmpdir_parent(tmp_parent, sizeof(tmp_parent)) < 0)
        return nf_err_set(err, ENAMETOOLONG, "TMPDIR: too long");
    out->tmp_parent = strdup(tmp_parent);
    if (!out->tmp_parent)
        return nf_err_sys(err, "out of memory");
    if (abi >= 4)
        out->handled_net = FS_LL_NET_BIND_TCP | FS_LL_NET_CONNECT_TCP;
    if (abi >= 6)
        out->scoped = FS_LL_SCOPE_ABSTRACT_UNIX | FS_LL_SCOPE_SIGNAL;
    /* Every way to make a name goes through the supervisor but bind(2) of
     * a unix socket, which Landlock alone must refuse in the write roots
     * (a socket at a protected name): only TMPDIR takes one. */
    write = out->handled_fs & ~(uint64_t)(LL_READ | FS_LL_MAKE_SOCK);
    if (grant_read(fp, out, "/", 0, err) < 0)
        goto fail;
    /* No filesystem rules (filesystem.disabled): a domain all the same, for
     * the TCP rules, the scoping and the ptrace bounds; everything writable
     * but the host's /dev, /proc and /sys (namespace mode's are its own). */
    if (fp->unrestricted ? grant_top_writes(out, write | FS_LL_MAKE_SOCK, err) < 0 : 0)
        goto fail;
    for (size_t i = 0; i < fp->n_write_roots; i++)
        if (fs_ll_add(out, fp->write_roots[i], write, err) < 0)
            goto fail;
    for (size_t i = 0; i < NF_ARRAY_SIZE(devices); i++)
        if (fs_ll_add(out, devices[i], LL_DEV_WRITE & out->handled_fs, err) < 0)
            goto fail;
    if (add_ttys(out, err) < 0)
        goto fail;
    return 0;
fail:
    fs_ll_free(out);
    return -1;
}

void fs_ll_access_format(uint64_t access, char *buf, size_t sz)
{
    static const char *const names[] = { "execute",    "write_file",  "read_file", "read_dir",
                                         "remove_dir", "remove_file", "make_char", "make_dir",
                                         "make_reg",   "make_sock",   "make_fifo", "make_block",
                                         "make_sym",   "refer",       "truncate",  "ioctl_dev" };
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < NF_ARRAY_SIZE(names) && len < sz; i++)
        if (access & (1ULL << i))
            len += (size_t)snprintf(buf + len, sz - len, "%s%s", len ? "," : "", names[i]);
}

int fs_ll_apply(const struct fs_ll_plan *p, struct nf_err *err)
{
    struct ll_ruleset_attr attr = { .handled_access_fs = p->handled_fs,
                                    .handled_access_net = p->handled_net,
                                    .scoped = p->scoped };
    size_t attr_size = p->abi >= 6 ? 24 : p->abi >= 4 ? 16 : 8;
    int rs;

    /* No file rules (filesystem.disabled) below ABI 4: nothing to handle,
     * and the kernel refuses an empty ruleset. */
    if (!p->handled_fs && !p->handled_net && !p->scoped)
        return 0;
    rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0)
        return nf_err_sys(err, "landlock_create_ruleset");
    for (size_t i = 0; i < p->n; i++) {
        struct ll_path_beneath pb = { .allowed_access = p->rules[i].access & p->handled_fs };
        struct stat st;
        int fd = open(p->rules[i].path, O_PATH | O_CLOEXEC);

        if (fd < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue; /* gone since it was planned: nothing to grant */
            nf_err_sys(err, "landlock: open %s", p->rules[i].path);
            close(rs);
            return -1;
        }
        if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
            pb.allowed_access &= LL_FILE_RIGHTS;
        pb.parent_fd = fd;
        if (pb.allowed_access &&
            syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
            nf_err_sys(err, "landlock_add_rule %s", p->rules[i].path);
            close(fd);
            close(rs);
            return -1;
        }
        close(fd);
    }
    if (p->tmpdir && p->handled_fs) {
        struct ll_path_beneath pb = { .allowed_access = p->handled_fs };
        int fd = open(p->tmpdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        pb.parent_fd = fd;
        if (fd < 0 || syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
            nf_err_sys(err, "landlock: the private TMPDIR %s", p->tmpdir);
            if (fd >= 0)
                close(fd);
            close(rs);
            return -1;
        }
        close(fd);
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
        nf_err_sys(err, "landlock_restrict_self");
        close(rs);
        return -1;
    }
    close(rs);
    return 0;
}

int fs_ll_scope_below(const struct fs_ll_plan *p, struct nf_err *err)
{
    struct ll_ruleset_attr attr = { .scoped = p->scoped };
    int rs;

    if (!p->scoped)
        return 0;
    rs = (int)syscall(SYS_landlock_create_ruleset, &attr, 24, 0);
    if (rs < 0)
        return nf_err_sys(err, "landlock_create_ruleset (scope)");
    if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
        nf_err_sys(err, "landlock_restrict_self (scope)");
        close(rs);
        return -1;
    }
    close(rs);
    return 0;
}

/* A protected name that is a symlink (its target is protected on its own):
 * the plan binds it onto itself, so in namespace mode it can be neither
 * removed nor replaced; it is in no list. within: abs lies within it;
 * otherwise abs holds it. */
static bool protected_link(const struct fs_plan *fp, const char *abs, bool within)
{
    for (size_t i = 0; i < fp->n; i++)
        if (fp->ops[i].kind == FS_OP_BIND_LINK && fp->ops[i].dst &&
            (within ? pol_path_within(abs, fp->ops[i].dst) : pol_path_within(fp->ops[i].dst, abs)))
            return true;
    return false;
}

bool fs_ll_writable(const struct fs_plan *fp, const char *tmpdir, const char *abs)
{
    ssize_t rw, ro;

    /* The host's /proc, never: the helper that performs the write would
     * open its own /proc/PID/mem (any process may write its own memory) and
     * hand the command a descriptor into a process no seccomp filter binds,
     * whatever the write roots say (`--allow-write /`). */
    if (pol_path_within(abs, "/proc"))
        return false;
    /* Nor the host's /sys and /dev (a device the command may write is the
     * helper's own question): namespace mode's are not the host's, even
     * with no filesystem rules. */
    if (pol_path_within(abs, "/sys") || pol_path_within(abs, "/dev"))
        return false;
    if (fp->unrestricted)
        return true;
    if (pol_path_deepest(fp->protected_paths, fp->n_protected, abs) >= 0 ||
        protected_link(fp, abs, true))
        return false;
    if (tmpdir && pol_path_within(abs, tmpdir))
        return true;
    rw = pol_path_deepest(fp->write_roots, fp->n_write_roots, abs);
    ro = pol_path_deepest(fp->read_only, fp->n_read_only, abs);
    if (pol_path_deepest(fp->scratch, fp->n_scratch, abs) > ro)
        ro = pol_path_deepest(fp->scratch, fp->n_scratch, abs);
    return rw >= 0 && rw > ro;
}

bool fs_ll_holds_protected(const struct fs_plan *fp, const char *abs)
{
    for (size_t i = 0; i < fp->n_protected; i++)
        if (pol_path_within(fp->protected_paths[i], abs))
            return true;
    if (protected_link(fp, abs, false))
        return true;
    /* A denied-read path too: judged by its name here (where namespace mode
     * mounts over it, and the mount moves with its directory), renaming a
     * directory above it would leave it under a name no list holds, to be
     * overwritten or removed. */
    for (size_t i = 0; i < fp->n_read_only; i++)
        if (pol_path_within(fp->read_only[i], abs))
            return true;
    for (size_t i = 0; i < fp->n_scratch; i++)
        if (pol_path_within(fp->scratch[i], abs))
            return true;
    return false;
}

int fs_ll_tmpdir_parent(char *out, size_t sz)
{
    const char *base = getenv("TMPDIR");
    struct stat st;

    if (!base || base[0] != '/' || stat(base, &st) < 0 || !S_ISDIR(st.st_mode))
        base = "/tmp";
    if ((size_t)snprintf(out, sz, "%s/nsfence-%u", strcmp(base, "/") ? base : "",
                         (unsigned)getuid()) >= sz)
        return -ENAMETOOLONG;
    return 0;
}

int fs_ll_tmpdir_make(char **out, struct nf_err *err)
{
    char parent[PATH_MAX], path[PATH_MAX];
    struct stat st;

    if (fs_ll_tmpdir_parent(parent, sizeof(parent)) < 0)
        return nf_err_set(err, ENAMETOOLONG, "TMPDIR: too long");
    /* Every run's own directory in one of the user's: the command is
     * denied reading it, so no run reads another's (same uid) TMPDIR. */
    if (mkdir(parent, 0700) < 0 && errno != EEXIST)
        return nf_err_sys(err, "the private TMPDIRs' directory %s", parent);
    if (lstat(parent, &st) < 0)
        return nf_err_sys(err, "the private TMPDIRs' directory %s", parent);
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return nf_err_set(err, EPERM,
                          "%s is not a directory of this user's alone (mode 0700): refusing to "
                          "make the run's TMPDIR there",
                          parent);
    if ((size_t)snprintf(path, sizeof(path), "%s/XXXXXX", parent) >= sizeof(path))
        return nf_err_set(err, ENAMETOOLONG, "TMPDIR %s: too long", parent);
    if (!mkdtemp(path))
        return nf_err_sys(err, "the run's private TMPDIR in %s", parent);
    *out = strdup(path);
    if (!*out) {
        (void)rmdir(path);
        return nf_err_sys(err, "out of memory");
    }
    return 0;
}

#define TREE_DEPTH 32

/* Remove what dir holds, beneath its descriptor, never following a link.
 * A directory deeper than TREE_DEPTH is moved up to top (a new name there)
 * and left for the next pass: no depth the command made costs more than
 * TREE_DEPTH descriptors. Returns how many were moved up. */
static int empty_dir(int top, int dir, unsigned depth, unsigned *moved)
{
    DIR *d;
    struct dirent *e;
    int fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    /* The duplicate shares its offset with dir: a pass after the first on
     * the top directory would start at its end and see nothing (a tree
     * deeper than TREE_DEPTH was left behind). */
    rewinddir(d);
    while ((e = readdir(d))) {
        int sub;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (unlinkat(dir, e->d_name, 0) == 0 || errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM)
            continue;
        if (depth >= TREE_DEPTH) {
            char name[64];

            snprintf(name, sizeof(name), ".nsfence-deep-%u", (*moved)++);
            (void)renameat(dir, e->d_name, top, name);
            continue;
        }
        /* The command may have left it unreadable to us. */
        (void)!fchmodat(dir, e->d_name, 0700, AT_SYMLINK_NOFOLLOW);
        sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        (void)empty_dir(top, sub, depth + 1, moved);
        close(sub);
        (void)unlinkat(dir, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
    return 0;
}

int fs_ll_tmpdir_remove(const char *path, struct nf_err *err)
{
    _cleanup_close_ int top = -1;
    unsigned moved = 0, before;

    (void)chmod(path, 0700);
    top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top < 0)
        return errno == ENOENT ? 0 : nf_err_sys(err, "remove the run's TMPDIR %s", path);
    do {
        before = moved;
        if (empty_dir(top, top, 0, &moved) < 0)
            return nf_err_sys(err, "remove the run's TMPDIR %s", path);
    } while (moved != before);
    if (rmdir(path) < 0)
        return nf_err_sys(err, "remove the run's TMPDIR %s", path);
    {
        /* The user's directory of them too, once no run has one there. */
        char parent[PATH_MAX];
        char *slash;

        snprintf(parent, sizeof(parent), "%s", path);
        slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            (void)rmdir(parent);
        }
    }
    return 0;
}
