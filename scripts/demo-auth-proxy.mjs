// The demo's stand-in for an auth proxy (oauth2-proxy, an ingress with OIDC): it passes every request on to
// poolscope, naming the signed-in person in X-Forwarded-User/-Groups and proving itself with the shared secret
// (POOLSCOPE_TRUSTED_PROXY_SECRET), exactly as a real proxy is configured to. Headers a client sends under
// those names are dropped first, so nobody can claim to be someone else through it. It listens on 127.0.0.1 only:
// whoever reaches it is signed in, so only this machine may.

import http from 'node:http';

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);
const CLAIMS = new Set(['x-forwarded-user', 'x-forwarded-groups', 'x-poolscope-proxy-secret']);

/** Starts the proxy on 127.0.0.1:`port` in front of `target` (http://127.0.0.1:<port>); resolves with the server. */
export function startAuthProxy({ port, target, user, groups, secret }) {
  const to = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && !CLAIMS.has(k)) headers[k] = v;
    headers['x-forwarded-user'] = user;
    headers['x-forwarded-groups'] = groups.join(',');
    headers['x-poolscope-proxy-secret'] = secret;
    headers['x-forwarded-host'] = req.headers.host ?? `localhost:${port}`;
    const upstream = http.request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers },
      (up) => {
        const out = {};
        for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k)) out[k] = v;
        res.writeHead(up.statusCode ?? 502, out);
        res.flushHeaders();
        up.pipe(res);
      },
    );
    upstream.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { code: 'bad-gateway', message: `the dashboard behind the demo proxy does not answer: ${e.message}` },
        }),
      );
    });
    req.on('aborted', () => upstream.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
