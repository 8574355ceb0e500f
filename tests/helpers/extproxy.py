#!/usr/bin/env python3
"""An external proxy for the tests (srt's httpProxyPort/socksProxyPort): it
listens on 127.0.0.1 at a port the kernel picks, prints that port, and for
each connection logs what arrived to LOGFILE and answers a fixed marker. It
never connects anywhere: a request for any host ends here.
    extproxy.py LOGFILE"""
import socket
import sys


def main():
    log = sys.argv[1]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    print(s.getsockname()[1], flush=True)
    while True:
        c, _ = s.accept()
        c.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                if data[:1] == b"\x05" and len(data) >= 2 and len(data) >= 2 + data[1]:
                    break  # a SOCKS5 greeting: VER NMETHODS METHODS
                d = c.recv(4096)
                if not d:
                    break
                data += d
            if data[:1] == b"\x05":
                line = "socks5 greeting"
                c.sendall(b"\x05\xff")
            else:
                line = data.split(b"\r\n")[0].decode("latin-1")
                body = ("EXTERNAL-PROXY " + line + "\n").encode()
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                          b"Connection: close\r\n\r\n" % len(body) + body)
            with open(log, "a") as f:
                f.write(line + "\n")
        except OSError:
            pass
        c.close()


main()
