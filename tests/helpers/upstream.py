#!/usr/bin/env python3
"""Upstream servers for the network tests, run inside a network namespace
the test harness made: HTTP/1.1 with keep-alive, optionally TLS, serving a
directory; POST /echo returns the body it got, GET /host the Host header.
Every response carries X-Conn-Id, a number per TCP connection (1, 2, ... in
the order they were accepted), so a test sees which requests shared one.
Prints "ready" once listening.
    upstream.py DIR ADDR:PORT[:tls] ... [--cert CERT --key KEY]"""
import http.server
import itertools
import socket
import ssl
import sys
import threading

_conn_ids = itertools.count(1)
_conn_ids_lock = threading.Lock()


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        # One handler per accepted connection, serving each request on it.
        super().setup()
        with _conn_ids_lock:
            self.conn_id = next(_conn_ids)

    def end_headers(self):
        self.send_header("X-Conn-Id", str(self.conn_id))
        super().end_headers()

    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/host"):
            body = (self.headers.get("Host", "") + "\n").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class V6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


def main():
    args = sys.argv[1:]
    cert = key = None
    if "--cert" in args:
        i = args.index("--cert")
        cert, key = args[i + 1], args[i + 3]
        del args[i:i + 4]
    directory, binds = args[0], args[1:]
    servers = []
    for b in binds:
        tls = b.endswith(":tls")
        if tls:
            b = b[:-4]
        host, port = b.rsplit(":", 1)
        host = host.strip("[]")
        cls = V6Server if ":" in host else http.server.ThreadingHTTPServer
        handler = lambda *a, **k: Handler(*a, directory=directory, **k)
        srv = cls((host, int(port)), handler)
        srv.daemon_threads = True
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        servers.append(srv)
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
