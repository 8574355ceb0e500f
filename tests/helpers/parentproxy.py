#!/usr/bin/env python3
"""A parent (corporate) proxy for the tests: CONNECT only, logs each request
line to a file, then tunnels. Names resolve through HOSTSFILE (the test's
own, which this process, living in another mount namespace, cannot see at
/etc/hosts). Prints "ready port PORT" once listening (PORT 0: any).
    parentproxy.py ADDR PORT LOGFILE HOSTSFILE"""
import socket
import sys
import threading


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


HOSTS = {}


def load_hosts(path):
    with open(path) as f:
        for line in f:
            parts = line.split()
            for name in parts[1:]:
                HOSTS.setdefault(name, parts[0])


def serve(c, log):
    f = c.makefile("rb")
    line = f.readline().decode("latin-1").strip()
    while f.readline() not in (b"\r\n", b"\n", b""):
        pass
    with open(log, "a") as lf:
        lf.write(line + "\n")
    parts = line.split()
    if len(parts) < 2 or parts[0] != "CONNECT":
        c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
        c.close()
        return
    host, port = parts[1].rsplit(":", 1)
    try:
        host = host.strip("[]")
        u = socket.create_connection((HOSTS.get(host, host), int(port)), timeout=10)
    except OSError:
        c.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
        c.close()
        return
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)


def main():
    addr, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    load_hosts(sys.argv[4])
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(128)
    print("ready port %d" % s.getsockname()[1], flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, log), daemon=True).start()


if __name__ == "__main__":
    main()
