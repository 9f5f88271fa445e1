import 'server-only';
// Reads a body with a ceiling: whoever sends it (a client, or a server poolscope calls) cannot make poolscope hold
// more than `limit` bytes of it. The stream is cancelled as soon as the ceiling is passed.

/** A body over its ceiling. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is over ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

type Chunks = AsyncIterable<Uint8Array> & { cancel?: () => unknown; destroy?: () => unknown };

/** The body's bytes, or BodyTooLargeError once more than `limit` came (the rest is not read). */
async function readCapped(body: Chunks | null | undefined, limit: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      // Leaving the loop returns the iterator (cancelling a web stream); a Node stream is destroyed too.
      body.destroy?.();
      throw new BodyTooLargeError(limit);
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/** The body as UTF-8 text, with the same ceiling. */
export async function readCappedText(body: Chunks | null | undefined, limit: number): Promise<string> {
  return (await readCapped(body, limit)).toString('utf8');
}
