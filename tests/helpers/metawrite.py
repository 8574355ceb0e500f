#!/usr/bin/env python3
"""Try every write that changes a file without writing its bytes, on each
path given: chmod, chown (to its own owner: a no-op the kernel would
allow), utimes, truncate, setting and removing an extended attribute, by
path and through a read-only descriptor (fchmod, fchown, futimens,
fsetxattr, fremovexattr). One line per try: "CALL ok" or "CALL ERRNONAME".

Landlock restricts none of these but truncate (ABI 3), so in Landlock mode
they all reach nsfence's supervisor; in namespace mode a read-only mount
refuses them.
"""
import errno
import os
import sys


def attempt(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))


for path in sys.argv[1:]:
    st = os.lstat(path)
    attempt("chmod", lambda: os.chmod(path, 0o777))
    attempt("chown", lambda: os.chown(path, st.st_uid, st.st_gid))
    attempt("utimes", lambda: os.utime(path, (1, 1)))
    attempt("truncate", lambda: os.truncate(path, 0))
    attempt("setxattr", lambda: os.setxattr(path, "user.nsfence", b"x"))
    attempt("removexattr", lambda: os.removexattr(path, "user.keep"))
    fd = os.open(path, os.O_RDONLY)
    attempt("fchmod", lambda: os.chmod(fd, 0o777))
    attempt("fchown", lambda: os.chown(fd, st.st_uid, st.st_gid))
    attempt("futimens", lambda: os.utime(fd, (1, 1)))
    attempt("fsetxattr", lambda: os.setxattr(fd, "user.nsfence", b"x"))
    attempt("fremovexattr", lambda: os.removexattr(fd, "user.keep"))
    os.close(fd)
