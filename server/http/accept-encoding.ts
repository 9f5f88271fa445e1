import 'server-only';
// An `Accept-Encoding` header read once for both places that choose an encoding: the API's answers
// (./answer-cache, brotli or gzip) and the pages kept by the front door (./page-cache, as Next's compression
// chooses: gzip or deflate).

/** Whether the header accepts `name`: named, or by `*`, with a q-value above 0 (a q that is not a number is 0). */
export function acceptsEncoding(header: string | null | undefined): (name: string) => boolean {
  const q = new Map<string, number>();
  for (const part of (header ?? '').slice(0, 1000).toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const v = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(v) ? v : 0);
  }
  return (name) => (q.get(name) ?? q.get('*') ?? 0) > 0;
}
