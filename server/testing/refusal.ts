// What a refused call threw, for tests of the HTTP-facing services: its status, code and message (an HttpError);
// anything else is rethrown, and a call that was not refused fails the test.

import { HttpError } from '../http/route';

export async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HttpError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected the request to be refused');
}
