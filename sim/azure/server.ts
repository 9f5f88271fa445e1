// Simulated Azure Resource Manager (Microsoft.Compute scale sets and VMs) and an Entra ID token endpoint,
// over HTTPS with the simulator's CA. @azure/arm-compute and @azure/identity reach it through ordinary
// settings: the ARM endpoint, AZURE_AUTHORITY_HOST, and NODE_EXTRA_CA_CERTS.

import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SimTls } from '../kube/tls';
import { AzureState, type Rest, type ScaleSetRecord } from './state';
import { Throttler, type BudgetSpec, type PolicyName } from './throttle';

export interface AzureClient {
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

export interface Fault {
  /** Operation name (see README), or '*'. */
  operation: string;
  kind: 'error' | 'slow' | 'reset';
  /** HTTP status for `error` (default 503). */
  status?: number;
  /** Delay for `slow` (ms). */
  delayMs?: number;
  /** How many requests it applies to (default: all until removed). */
  count?: number;
}

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

/** api-versions Microsoft.Compute serves for these operations (a subset; unknown ones get 400). */
const API_VERSIONS = new Set([
  '2021-03-01',
  '2021-07-01',
  '2021-11-01',
  '2022-03-01',
  '2022-08-01',
  '2022-11-01',
  '2023-03-01',
  '2023-07-01',
  '2023-09-01',
  '2024-03-01',
  '2024-07-01',
  '2024-11-01',
  '2025-04-01',
  '2025-11-01',
  '2026-03-01',
]);

class ArmError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details?: unknown[],
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'x-ms-request-id': randomUUID(),
    ...headers,
  });
  res.end(text);
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** The VM as a standalone `Microsoft.Compute/virtualMachines` resource (Flexible members). */
function asStandaloneVm(rec: ScaleSetRecord, vm: Rest): Rest {
  const id = String(vm.virtualMachineResourceId ?? vm.id);
  const { virtualMachineResourceId: _v, instanceId: _i, ...rest } = structuredClone(vm);
  return {
    ...rest,
    id,
    type: 'Microsoft.Compute/virtualMachines',
    properties: { ...(rest.properties as object), virtualMachineScaleSet: { id: rec.body.id } },
  } as Rest;
}

export class SimAzureServer {
  readonly state: AzureState;
  readonly throttler: Throttler;
  readonly clients: AzureClient[];
  readonly requestCounts = new Map<string, number>();
  private readonly faults: Fault[] = [];
  private readonly tokens = new Map<string, { expires: number; tenantId: string; clientId: string }>();
  private readonly server: https.Server;
  private url_ = '';

  constructor(private readonly opts: AzureServerOptions) {
    this.state = opts.state ?? new AzureState();
    this.throttler = new Throttler(opts.budgets);
    this.clients = opts.clients ?? [
      { tenantId: randomUUID(), clientId: randomUUID(), clientSecret: randomBytes(24).toString('base64url') },
    ];
    this.server = https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, (req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        if (res.headersSent) return void res.destroy();
        if (e instanceof ArmError) {
          send(
            res,
            e.status,
            { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } },
            e.headers,
          );
        } else {
          send(res, 500, { error: { code: 'InternalServerError', message: (e as Error).message } });
        }
      });
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
    this.faults.push({ ...f });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  private count(op: string): void {
    this.requestCounts.set(op, (this.requestCounts.get(op) ?? 0) + 1);
  }

  /** Applies an injected fault for this operation, if any; true when the request was consumed by it. */
  private async applyFault(op: string, res: ServerResponse): Promise<boolean> {
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
    send(
      res,
      status,
      {
        error: {
          code: status === 503 ? 'ServiceUnavailable' : 'InternalServerError',
          message: `Injected fault for ${op}.`,
        },
      },
      status === 503 ? { 'Retry-After': '1' } : {},
    );
    return true;
  }

  // ---- Entra ID stand-in ----

  private async handleEntra(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const p = url.pathname;
    if (p === '/common/discovery/instance') {
      const authority = url.searchParams.get('authorization_endpoint') ?? '';
      const host = this.url_.replace('https://', '');
      send(res, 200, {
        tenant_discovery_endpoint: authority.replace(
          /\/oauth2\/v2\.0\/authorize$/,
          '/v2.0/.well-known/openid-configuration',
        ),
        'api-version': '1.1',
        metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
      });
      return true;
    }
    let m = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(p);
    if (m) {
      const tenant = m[1] as string;
      const base = `${this.url_}/${tenant}`;
      send(res, 200, {
        token_endpoint: `${base}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        jwks_uri: `${this.url_}/${tenant}/discovery/v2.0/keys`,
        response_modes_supported: ['query', 'fragment', 'form_post'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        issuer: `${this.url_}/${tenant}/v2.0`,
        request_uri_parameter_supported: false,
        userinfo_endpoint: `${this.url_}/oidc/userinfo`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        device_authorization_endpoint: `${base}/oauth2/v2.0/devicecode`,
        http_logout_supported: true,
        frontchannel_logout_supported: true,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'tid', 'oid'],
        kerberos_endpoint: `${base}/kerberos`,
        tenant_region_scope: 'EU',
        cloud_instance_name: 'poolscope-sim',
        cloud_graph_host_name: 'graph.windows.net',
        msgraph_host: 'graph.microsoft.com',
        rbac_url: 'https://pas.windows.net',
      });
      return true;
    }
    m = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(p);
    if (m && req.method === 'POST') {
      this.count('entra.token');
      const form = new URLSearchParams(await readText(req));
      const tenant = m[1] as string;
      const client = this.clients.find((c) => c.clientId === form.get('client_id') && c.tenantId === tenant);
      const secretOk =
        client &&
        (form.get('client_secret') === client.clientSecret ||
          (form.get('client_assertion_type')?.includes('jwt-bearer') && !!form.get('client_assertion')));
      if (form.get('grant_type') !== 'client_credentials') {
        send(res, 400, {
          error: 'unsupported_grant_type',
          error_description: 'AADSTS70003: The app requested an unsupported grant type.',
          error_codes: [70003],
        });
        return true;
      }
      if (!client || !secretOk) {
        send(res, 401, {
          error: 'invalid_client',
          error_description: `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${form.get('client_id') ?? ''}'.`,
          error_codes: [7000215],
          timestamp: new Date().toISOString(),
          trace_id: randomUUID(),
          correlation_id: randomUUID(),
        });
        return true;
      }
      const lifetime = this.opts.tokenLifetimeSeconds ?? 3599;
      const exp = Math.floor(Date.now() / 1000) + lifetime;
      const token = `${b64url({ typ: 'JWT', alg: 'RS256' })}.${b64url({ aud: 'https://management.azure.com', iss: `${this.url_}/${tenant}/`, tid: tenant, appid: client.clientId, oid: client.clientId, exp, iat: exp - lifetime })}.${randomBytes(32).toString('base64url')}`;
      this.tokens.set(token, { expires: exp * 1000, tenantId: tenant, clientId: client.clientId });
      send(res, 200, { token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: token });
      return true;
    }
    return false;
  }

  // ---- ARM ----

  private authenticate(req: IncomingMessage): void {
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    const challenge = {
      'WWW-Authenticate': `Bearer authorization_uri="${this.url_}/${this.clients[0]?.tenantId ?? 'common'}", error="invalid_token", error_description="The authentication failed because of missing 'Authorization' header."`,
    };
    if (!m)
      throw new ArmError(
        401,
        'AuthenticationFailed',
        "Authentication failed. The 'Authorization' header is missing.",
        challenge,
      );
    const t = this.tokens.get(m[1] as string);
    if (!t) throw new ArmError(401, 'InvalidAuthenticationToken', 'The access token is invalid.', challenge);
    if (t.expires < Date.now())
      throw new ArmError(
        401,
        'ExpiredAuthenticationToken',
        'The access token expiry UTC time is earlier than current UTC time.',
        challenge,
      );
  }

  private charge(
    rec: { subscriptionId: string; location: string; name?: string },
    policies: PolicyName[],
    perScaleSet: boolean,
  ): Record<string, string> {
    const r = this.throttler.charge(rec.subscriptionId, rec.location, policies, perScaleSet ? rec.name : undefined);
    if (!r.allowed) {
      const now = new Date();
      throw new ArmError(
        429,
        'OperationNotAllowed',
        'The server rejected the request because too many requests have been received for this subscription.',
        { 'Retry-After': String(r.retryAfterSeconds), ...r.headers },
        [
          {
            code: 'TooManyRequests',
            target: r.policy,
            message: JSON.stringify({
              operationGroup: r.policy,
              startTime: now.toISOString(),
              endTime: new Date(now.getTime() + r.retryAfterSeconds * 1000).toISOString(),
              allowedRequestCount: this.throttler.budgets[(r.policy ?? 'SubscriptionReads') as PolicyName]?.capacity,
              measuredRequestCount:
                (this.throttler.budgets[(r.policy ?? 'SubscriptionReads') as PolicyName]?.capacity ?? 0) + 1,
            }),
          },
        ],
      );
    }
    return r.headers;
  }

  private notFound(kind: string, name: string, rg: string): ArmError {
    return new ArmError(
      404,
      'ResourceNotFound',
      `The Resource 'Microsoft.Compute/${kind}/${name}' under resource group '${rg}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url_ || 'https://sim');
    if (await this.handleEntra(req, res, url)) return;
    if (!url.pathname.toLowerCase().startsWith('/subscriptions/'))
      throw new ArmError(404, 'NotFound', `No route for ${url.pathname}.`);
    this.authenticate(req);
    const apiVersion = url.searchParams.get('api-version');
    if (!apiVersion)
      throw new ArmError(
        400,
        'MissingApiVersionParameter',
        'The api-version query parameter (?api-version=) is required for all requests.',
      );
    if (!API_VERSIONS.has(apiVersion)) {
      throw new ArmError(
        400,
        'InvalidApiVersionParameter',
        `The api-version '${apiVersion}' is invalid. The supported versions are '${[...API_VERSIONS].join(',')}'.`,
      );
    }
    const seg = url.pathname.split('/').filter(Boolean);
    const lower = seg.map((s) => s.toLowerCase());
    const sub = seg[1] as string;
    const method = req.method ?? 'GET';

    // /subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}/operations/{id}
    if (
      lower[2] === 'providers' &&
      lower[3] === 'microsoft.compute' &&
      lower[4] === 'locations' &&
      lower[6] === 'operations' &&
      seg.length === 8
    ) {
      const op = this.state.operations.get(seg[7] as string);
      if (!op) throw new ArmError(404, 'NotFound', 'The operation was not found.');
      this.count('operations.get');
      if (url.searchParams.get('monitor') === 'true') {
        // The Location URL: 202 while running, then the resource itself, as Compute answers it.
        const rec = this.state.scaleSets.get(op.scaleSetKey);
        if (op.status === 'InProgress' || !rec) send(res, 202, {}, { 'Retry-After': '1', Location: url.toString() });
        else send(res, 200, rec.body);
        return;
      }
      send(res, 200, {
        startTime: op.startTime,
        ...(op.endTime ? { endTime: op.endTime } : {}),
        status: op.status,
        name: op.name,
      });
      return;
    }
    // /subscriptions/{sub}/providers/Microsoft.Compute/virtualMachineScaleSets
    if (
      lower[2] === 'providers' &&
      lower[3] === 'microsoft.compute' &&
      lower[4] === 'virtualmachinescalesets' &&
      seg.length === 5 &&
      method === 'GET'
    ) {
      this.count('vmss.listAll');
      if (await this.applyFault('vmss.listAll', res)) return;
      const recs = this.state.listBySubscription(sub);
      const headers = this.charge(
        { subscriptionId: sub, location: recs[0]?.location ?? 'global' },
        ['HighCostGetVMScaleSet3Min', 'HighCostGetVMScaleSet30Min'],
        false,
      );
      send(res, 200, { value: recs.map((r) => r.body) }, headers);
      return;
    }
    if (lower[2] !== 'resourcegroups' || lower[4] !== 'providers' || lower[5] !== 'microsoft.compute')
      throw new ArmError(404, 'NotFound', `No route for ${url.pathname}.`);
    const rg = seg[3] as string;

    // Flexible members: /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines
    if (lower[6] === 'virtualmachines' && seg.length === 7 && method === 'GET') {
      this.count('vm.listByResourceGroup');
      if (await this.applyFault('vm.listByResourceGroup', res)) return;
      const filter = url.searchParams.get('$filter');
      const fm = filter ? /^'?virtualMachineScaleSet\/id'?\s+eq\s+'([^']+)'$/i.exec(filter.trim()) : null;
      if (filter && !fm)
        throw new ArmError(400, 'InvalidParameter', `The value of parameter $filter is invalid: ${filter}`);
      const recs = this.state
        .listByResourceGroup(sub, rg)
        .filter((r) => !fm || String(r.body.id).toLowerCase() === (fm[1] as string).toLowerCase());
      const expand = url.searchParams.get('$expand') === 'instanceView';
      const items = recs
        .filter((r) => this.state.orchestrationMode(r) === 'Flexible')
        .flatMap((r) => [...r.vms.values()].map((vm) => this.shapeVm(asStandaloneVm(r, vm), expand)));
      const headers = this.charge(
        { subscriptionId: sub, location: recs[0]?.location ?? 'global' },
        ['VMScaleSetVMViews3Min'],
        false,
      );
      this.page(res, url, items, headers);
      return;
    }
    if (lower[6] !== 'virtualmachinescalesets') throw new ArmError(404, 'NotFound', `No route for ${url.pathname}.`);
    if (seg.length === 7) {
      if (method !== 'GET')
        throw new ArmError(405, 'MethodNotAllowed', 'The requested resource does not support this method.');
      this.count('vmss.listByResourceGroup');
      if (await this.applyFault('vmss.listByResourceGroup', res)) return;
      const recs = this.state.listByResourceGroup(sub, rg);
      const headers = this.charge(
        { subscriptionId: sub, location: recs[0]?.location ?? 'global' },
        ['HighCostGetVMScaleSet3Min', 'HighCostGetVMScaleSet30Min'],
        false,
      );
      send(res, 200, { value: recs.map((r) => r.body) }, headers);
      return;
    }
    const rec = this.state.get(sub, rg, seg[7] as string);
    if (seg.length === 8) {
      if (method === 'GET') {
        this.count('vmss.get');
        if (await this.applyFault('vmss.get', res)) return;
        if (!rec) throw this.notFound('virtualMachineScaleSets', seg[7] as string, rg);
        const headers = this.charge(rec, ['HighCostGetVMScaleSet3Min', 'HighCostGetVMScaleSet30Min'], true);
        send(res, 200, rec.body, headers);
        return;
      }
      if (method === 'PATCH') {
        this.count('vmss.update');
        if (await this.applyFault('vmss.update', res)) return;
        if (!rec) throw this.notFound('virtualMachineScaleSets', seg[7] as string, rg);
        let body: { sku?: { capacity?: unknown } };
        try {
          body = JSON.parse(await readText(req)) as typeof body;
        } catch {
          throw new ArmError(
            400,
            'InvalidRequestContent',
            'The request content was invalid and could not be deserialized.',
          );
        }
        const cap = body.sku?.capacity;
        if (cap !== undefined && (!Number.isInteger(cap) || (cap as number) < 0 || (cap as number) > 1000)) {
          throw new ArmError(
            400,
            'InvalidParameter',
            `The value ${String(cap)} of parameter 'sku.capacity' is out of range. The value must be between '0' and '1000', inclusive.`,
          );
        }
        const op = cap === undefined ? null : this.state.setCapacity(rec, cap as number);
        const opUrl = op
          ? `${this.url_}/subscriptions/${rec.subscriptionId}/providers/Microsoft.Compute/locations/${rec.location}/operations/${op.id}?api-version=${apiVersion}`
          : '';
        send(res, 200, rec.body, op ? { 'Azure-AsyncOperation': opUrl, Location: `${opUrl}&monitor=true` } : {});
        return;
      }
      throw new ArmError(405, 'MethodNotAllowed', 'The requested resource does not support this method.');
    }
    if (lower[8] !== 'virtualmachines' || method !== 'GET')
      throw new ArmError(404, 'NotFound', `No route for ${url.pathname}.`);
    if (seg.length === 9) {
      this.count('vms.list');
      if (await this.applyFault('vms.list', res)) return;
      if (!rec) throw this.notFound('virtualMachineScaleSets', seg[7] as string, rg);
      const expand = url.searchParams.get('$expand');
      if (expand && expand !== 'instanceView')
        throw new ArmError(400, 'InvalidParameter', `The value of parameter $expand is invalid: ${expand}`);
      const select = url.searchParams.get('$select');
      if (select && select !== 'instanceView' && select !== 'instanceView/statuses')
        throw new ArmError(400, 'InvalidParameter', `The value of parameter $select is invalid: ${select}`);
      let items = [...rec.vms.values()];
      const filter = url.searchParams.get('$filter')?.trim();
      if (filter) {
        const lm = /^properties\/latestModelApplied\s+eq\s+(true|false)$/i.exec(filter);
        const ps = /^startswith\(\s*instanceView\/statuses\/code\s*,\s*'PowerState'\s*\)\s+eq\s+true$/i.exec(filter);
        if (lm)
          items = items.filter(
            (v) =>
              String((v.properties as { latestModelApplied?: boolean }).latestModelApplied) ===
              (lm[1] as string).toLowerCase(),
          );
        else if (!ps)
          throw new ArmError(400, 'InvalidParameter', `The value of parameter $filter is invalid: ${filter}`);
      }
      const withView = expand === 'instanceView' || !!select || /PowerState/i.test(filter ?? '');
      const headers = this.charge(rec, ['VMScaleSetVMViews3Min'], true);
      this.page(
        res,
        url,
        items.map((v) => this.shapeVm(v, withView)),
        headers,
      );
      return;
    }
    const vm = rec ? this.state.findVm(rec, seg[9] as string) : undefined;
    if (seg.length === 10) {
      this.count('vms.get');
      if (await this.applyFault('vms.get', res)) return;
      if (!rec || !vm) throw this.notFound('virtualMachineScaleSets/virtualMachines', `${seg[7]}/${seg[9]}`, rg);
      const headers = this.charge(rec, ['VMScaleSetVMViews3Min'], true);
      send(res, 200, this.shapeVm(vm, url.searchParams.get('$expand') === 'instanceView'), headers);
      return;
    }
    if (seg.length === 11 && lower[10] === 'instanceview') {
      this.count('vms.instanceView');
      if (await this.applyFault('vms.instanceView', res)) return;
      if (!rec || !vm) throw this.notFound('virtualMachineScaleSets/virtualMachines', `${seg[7]}/${seg[9]}`, rg);
      const headers = this.charge(rec, ['VMScaleSetVMViews3Min'], true);
      send(res, 200, (vm.properties as { instanceView?: unknown }).instanceView ?? {}, headers);
      return;
    }
    throw new ArmError(404, 'NotFound', `No route for ${url.pathname}.`);
  }

  private shapeVm(vm: Rest, withInstanceView: boolean): Rest {
    if (withInstanceView) return vm;
    const { instanceView: _iv, ...props } = vm.properties as Record<string, unknown>;
    return { ...vm, properties: props };
  }

  private page(res: ServerResponse, url: URL, items: unknown[], headers: Record<string, string>): void {
    const size = this.opts.pageSize ?? 100;
    const skip = Number(url.searchParams.get('$skiptoken') ?? 0) || 0;
    const slice = items.slice(skip, skip + size);
    const body: Record<string, unknown> = { value: slice };
    if (skip + size < items.length) {
      const next = new URL(url.toString());
      next.searchParams.set('$skiptoken', String(skip + size));
      body.nextLink = `${this.url_}${next.pathname}${next.search}`;
    }
    send(res, 200, body, headers);
  }
}
