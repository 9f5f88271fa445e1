// Simulated Azure Resource Manager (Microsoft.Compute scale sets and VMs) and an Entra ID token endpoint,
// over HTTPS with the simulator's CA. @azure/arm-compute and @azure/identity reach it through ordinary
// settings: the ARM endpoint, AZURE_AUTHORITY_HOST, and NODE_EXTRA_CA_CERTS.

import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SimTls } from '../kube/tls';
import type { ArmServer } from './arm-call';
import { noRoute, sendError } from './arm-http';
import { EntraStandIn, type AzureClient } from './entra';
import { FaultInjector, type Fault } from './faults';
import { routeArm } from './router';
import { AzureState } from './state';
import { Throttler, type BudgetSpec, type PolicyName } from './throttle';

export type { AzureClient } from './entra';
export type { Fault } from './faults';

export interface AzureServerOptions {
  tls: SimTls;
  state?: AzureState;
  clients?: AzureClient[];
  budgets?: Partial<Record<PolicyName, BudgetSpec>>;
  /** VMs per page of the VMSS-VMs list. */
  pageSize?: number;
  /** Lifetime of issued tokens (s). */
  tokenLifetimeSeconds?: number;
  port?: number;
}

export class SimAzureServer {
  readonly state: AzureState;
  readonly throttler: Throttler;
  readonly clients: AzureClient[];
  readonly requestCounts = new Map<string, number>();
  private readonly faults = new FaultInjector();
  private readonly entra: EntraStandIn;
  private readonly arm: ArmServer;
  private readonly server: https.Server;
  private url_ = '';

  constructor(private readonly opts: AzureServerOptions) {
    this.state = opts.state ?? new AzureState();
    this.throttler = new Throttler(opts.budgets);
    this.clients = opts.clients ?? [
      { tenantId: randomUUID(), clientId: randomUUID(), clientSecret: randomBytes(24).toString('base64url') },
    ];
    this.entra = new EntraStandIn({
      clients: this.clients,
      baseUrl: () => this.url_,
      tokenLifetimeSeconds: () => this.opts.tokenLifetimeSeconds,
      count: (op) => this.count(op),
    });
    this.arm = {
      state: this.state,
      throttler: this.throttler,
      baseUrl: () => this.url_,
      pageSize: () => this.opts.pageSize ?? 100,
      count: (op) => this.count(op),
      fault: (op, res) => this.faults.apply(op, res),
    };
    this.server = https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, (req, res) => {
      this.handle(req, res).catch((e: unknown) => sendError(res, e));
    });
  }

  get url(): string {
    return this.url_;
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    this.url_ = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url_;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  addFault(f: Fault): void {
    this.faults.add(f);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  private count(op: string): void {
    this.requestCounts.set(op, (this.requestCounts.get(op) ?? 0) + 1);
  }

  /** Entra's paths first (they need no token), then ARM's, each authenticated by a token issued here. */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url_ || 'https://sim');
    if (await this.entra.handle(req, res, url)) return;
    if (!url.pathname.toLowerCase().startsWith('/subscriptions/')) throw noRoute(url.pathname);
    this.entra.authenticate(req);
    await routeArm(this.arm, req, res, url);
  }
}
