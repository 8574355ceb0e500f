// srt's host-side proxy, started the way srt's sandbox manager starts it
// (startMuxProxyServer): the HTTP proxy behind the one-port mux front, whose
// HTTP leg goes through a unix socket, with srt's resolved-address guard.
// Only the host named on the command line is allowed. No proxy auth token:
// the benchmark's client sends none. Prints the port once listening.
//   node srt-proxy.mjs HOST
const dist = './node_modules/@anthropic-ai/sandbox-runtime/dist/sandbox';
const { createHttpProxyServer } = await import(`${dist}/http-proxy.js`);
const { createSocksProxyServer } = await import(`${dist}/socks-proxy.js`);
const { createMuxProxyServer } = await import(`${dist}/mux-proxy.js`);
const { createResolvedAddressGuard } = await import(`${dist}/resolved-address-guard.js`);

const allowed = process.argv[2].toLowerCase();
const guard = createResolvedAddressGuard();
const filter = (port, host) => host.toLowerCase() === allowed;
const lookupFor = port => guard.lookupFor(port);

const httpServer = createHttpProxyServer({ filter, lookupFor });
const socks = createSocksProxyServer({ filter, lookupFor });
const mux = createMuxProxyServer({
    httpServer,
    handleSocksConnection: s => socks.handleConnection(s),
});
await mux.listenHttpBackend();
await new Promise(resolve => mux.server.listen(0, '127.0.0.1', resolve));
process.once('SIGTERM', () => {
    mux.removeBackendSocketSync();
    process.exit(0);
});
console.log(mux.getPort());
