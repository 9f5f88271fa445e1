// A resync POST as the dashboard sends it (same origin, the CSRF header, JSON), with a bearer token unless
// `token` is null: one builder for the resync tests.

export function resyncPost(
  url: string,
  body: unknown,
  token: string | null,
  headers: Record<string, string> = {},
): Request {
  return new Request(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: {
      'content-type': 'application/json',
      'x-poolscope-request': '1',
      'sec-fetch-site': 'same-origin',
      origin: 'http://localhost:3000',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
  });
}
