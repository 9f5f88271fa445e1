// The read path as the production server sends it: answers compressed once (Next drops a route's own
// Content-Encoding; the front door restores it, and `no-transform` keeps Next from compressing again), an ETag that comes through, and 304 for a client that holds the answer.

import http from 'node:http';
import zlib from 'node:zlib';
import { expect, test } from '@playwright/test';

const POOL = '/api/pools/mgmt-neu/default/general';

/** A raw GET (fetch would undo the encoding and hide it): status, headers and the bytes as sent. */
function rawGet(
  baseURL: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(path, baseURL), { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject);
  });
}

test('API answers are compressed once (brotli or gzip) for clients that accept it, and plain for the others', async ({
  baseURL,
}) => {
  for (const path of [POOL, '/api/pools', `${POOL}/timeline?range=1h`]) {
    const zipped = await rawGet(baseURL as string, path, { 'accept-encoding': 'gzip' });
    expect(zipped.status, path).toBe(200);
    expect(zipped.headers['content-encoding'], path).toBe('gzip');
    expect(zipped.headers.etag, path).toMatch(/^"[\w-]+"$/);
    // One layer of gzip, then the JSON itself.
    expect(() => JSON.parse(zlib.gunzipSync(zipped.body).toString('utf8')) as unknown, path).not.toThrow();
    const br = await rawGet(baseURL as string, path, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding'], path).toBe('br');
    expect(() => JSON.parse(zlib.brotliDecompressSync(br.body).toString('utf8')) as unknown, path).not.toThrow();
    const plain = await rawGet(baseURL as string, path, {});
    expect(plain.headers['content-encoding'], path).toBeUndefined();
    expect(() => JSON.parse(plain.body.toString('utf8')) as unknown, path).not.toThrow();
  }
});

test('a client that holds the answer gets 304 with no body', async ({ baseURL }) => {
  // The demo keeps changing: a new state between the two reads is a new answer, so a few tries are allowed.
  await expect
    .poll(
      async () => {
        const first = await rawGet(baseURL as string, POOL, {});
        const again = await rawGet(baseURL as string, POOL, { 'if-none-match': first.headers.etag as string });
        return again.status === 304 && again.body.length === 0 && again.headers.etag === first.headers.etag;
      },
      { timeout: 20_000 },
    )
    .toBe(true);
});
