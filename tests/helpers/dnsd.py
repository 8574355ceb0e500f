#!/usr/bin/env python3
"""A DNS server for the tests: UDP on ADDRESS port 53, answering A queries for
the names it is given (TTL 60) and NXDOMAIN for every other name (NODATA for
other types of a known name). Each question it is asked, lower-cased, is
appended to LOGFILE; it prints "ready" once it listens.
    dnsd.py ADDRESS LOGFILE NAME=IPV4..."""
import socket
import struct
import sys


def question(q):
    """The name and type of the packet's first question, and its end."""
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("latin-1"))
        i += 1 + q[i]
    qtype = struct.unpack(">H", q[i + 1:i + 3])[0]
    return ".".join(labels).lower(), qtype, i + 5


def main():
    addr, log = sys.argv[1], sys.argv[2]
    names = dict(a.lower().split("=", 1) for a in sys.argv[3:])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    print("ready", flush=True)
    while True:
        q, peer = s.recvfrom(2048)
        try:
            name, qtype, end = question(q)
        except (IndexError, struct.error):
            continue
        with open(log, "a") as f:
            f.write(name + "\n")
        ip = names.get(name)
        answer = b""
        if ip and qtype == 1:
            answer = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(ip)
        flags = 0x8180 | (0 if ip else 3)  # response, RD, RA; NXDOMAIN for an unknown name
        head = struct.pack(">HHHHHH", struct.unpack(">H", q[:2])[0], flags, 1,
                           1 if answer else 0, 0, 0)
        s.sendto(head + q[12:end] + answer, peer)


if __name__ == "__main__":
    main()
