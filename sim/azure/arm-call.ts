// What an ARM route is handed: the request as the router parsed it once, and the parts of the server a route reads
// (state), charges (budgets, request counts) and answers through (faults, its own URL, the page size).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AzureState } from './state';
import type { Throttler } from './throttle';

export interface ArmServer {
  readonly state: AzureState;
  readonly throttler: Throttler;
  /** The server's own `https://host:port` ('' before it listens), for the URLs in Location and nextLink. */
  baseUrl(): string;
  /** VMs per page of a list. */
  pageSize(): number;
  count(op: string): void;
  /** Applies an injected fault for this operation, if any; true when the request was consumed by it. */
  fault(op: string, res: ServerResponse): Promise<boolean>;
}

export interface ArmCall {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  apiVersion: string;
  /** The path's segments as sent, and lower-cased for matching (ARM's paths are case-insensitive). */
  seg: string[];
  lower: string[];
  sub: string;
}

/** Counts the request under `op` and applies its injected fault; true when the fault consumed the request. */
export async function enter(arm: ArmServer, call: ArmCall, op: string): Promise<boolean> {
  arm.count(op);
  return arm.fault(op, call.res);
}
