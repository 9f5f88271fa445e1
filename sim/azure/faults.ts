// Faults a test injects per ARM operation (a 5xx, a slow answer, a reset connection), so that callers' retry and
// timeout paths can be exercised against the simulator.

import type { ServerResponse } from 'node:http';
import { send } from './arm-http';

export interface Fault {
  /** Operation name (see README), or '*'. */
  operation: string;
  kind: 'error' | 'slow' | 'reset';
  /** HTTP status for `error` (default 503). */
  status?: number;
  /** Retry-After of an injected 429 (default 30 s). */
  retryAfterSeconds?: number;
  /** Delay for `slow` (ms). */
  delayMs?: number;
  /** How many requests it applies to (default: all until removed). */
  count?: number;
}

export class FaultInjector {
  private readonly faults: Fault[] = [];

  add(f: Fault): void {
    this.faults.push({ ...f });
  }

  clear(): void {
    this.faults.length = 0;
  }

  /** Applies an injected fault for this operation, if any; true when the request was consumed by it. */
  async apply(op: string, res: ServerResponse): Promise<boolean> {
    const i = this.faults.findIndex((f) => f.operation === op || f.operation === '*');
    if (i < 0) return false;
    const f = this.faults[i] as Fault;
    if (f.count !== undefined && --f.count <= 0) this.faults.splice(i, 1);
    if (f.kind === 'slow') {
      await new Promise((r) => setTimeout(r, f.delayMs ?? 2000));
      return false;
    }
    if (f.kind === 'reset') {
      res.socket?.destroy();
      return true;
    }
    const status = f.status ?? 503;
    const code = status === 429 ? 'TooManyRequests' : status === 503 ? 'ServiceUnavailable' : 'InternalServerError';
    const retryAfter = status === 429 ? String(f.retryAfterSeconds ?? 30) : status === 503 ? '1' : null;
    send(
      res,
      status,
      { error: { code, message: `Injected fault for ${op}.` } },
      retryAfter ? { 'Retry-After': retryAfter } : {},
    );
    return true;
  }
}
