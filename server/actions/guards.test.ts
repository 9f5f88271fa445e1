import { describe, expect, it } from 'vitest';
import { HttpError } from '../http/route';
import { checkSameOrigin } from './guards';

/** A write as the dashboard sends it, reaching poolscope at `host`, with extra or replaced headers. */
const write = (host: string | null, headers: Record<string, string> = {}) =>
  new Request('http://0.0.0.0:3000/api/pools/mgmt-weu/default/pool0/resync', {
    method: 'POST',
    headers: {
      ...(host === null ? {} : { host }),
      'content-type': 'application/json',
      'x-poolscope-request': '1',
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
  });

const refusal = (request: Request) => {
  try {
    checkSameOrigin(request);
    return null;
  } catch (e) {
    if (!(e instanceof HttpError)) throw e;
    return { status: e.status, code: e.code, message: e.message };
  }
};

describe('checkSameOrigin', () => {
  it('takes an Origin naming the host the request reached, default ports and case included', () => {
    expect(refusal(write('poolscope.example.com', { origin: 'https://poolscope.example.com' }))).toBeNull();
    expect(refusal(write('poolscope.example.com:443', { origin: 'https://poolscope.example.com' }))).toBeNull();
    expect(refusal(write('POOLSCOPE.example.com', { origin: 'https://poolscope.example.com' }))).toBeNull();
    expect(refusal(write('localhost:3000', { origin: 'http://localhost:3000' }))).toBeNull();
    // A script sending no Origin is judged by the other checks.
    expect(refusal(write('localhost:3000', { 'sec-fetch-site': 'none' }))).toBeNull();
  });

  it('never believes X-Forwarded-Host, which any client can send', () => {
    const forged = write('poolscope.example.com', {
      origin: 'https://evil.example',
      'x-forwarded-host': 'evil.example',
    });
    expect(refusal(forged)).toEqual({
      status: 403,
      code: 'cross-site',
      message: 'Requests from https://evil.example cannot change pools on poolscope.example.com.',
    });
    // Nor the other way round: a proxy's X-Forwarded-Host does not stand in for the Host the request carries.
    expect(
      refusal(
        write('poolscope.internal:3000', {
          origin: 'https://poolscope.example.com',
          'x-forwarded-host': 'poolscope.example.com',
        }),
      )?.code,
    ).toBe('cross-site');
  });

  it('refuses another host or port, an opaque or malformed Origin, and a malformed Host', () => {
    for (const [host, origin] of [
      ['localhost:3000', 'http://localhost:3001'],
      ['poolscope.example.com', 'https://poolscope.example.com.evil.example'],
      ['poolscope.example.com', 'null'],
      ['poolscope.example.com', 'not a url'],
      ['bad host', 'http://bad host'],
    ] as const) {
      expect(refusal(write(host, { origin }))?.code, `${host} ← ${origin}`).toBe('cross-site');
    }
  });

  it('falls back to the URL the server was reached at when a request has no Host header', () => {
    expect(refusal(write(null, { origin: 'http://0.0.0.0:3000' }))).toBeNull();
    expect(refusal(write(null, { origin: 'http://evil.example' }))?.code).toBe('cross-site');
  });
});
