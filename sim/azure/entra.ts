// The Entra ID stand-in: instance discovery, OpenID metadata and the client-credentials token endpoint that
// @azure/identity talks to, and the bearer check ARM applies to every request with the tokens issued here.

import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ArmError, readText, send } from './arm-http';

export interface AzureClient {
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

interface EntraOptions {
  clients: AzureClient[];
  /** The server's own `https://host:port` ('' before it listens). */
  baseUrl: () => string;
  /** Lifetime of issued tokens (s). */
  tokenLifetimeSeconds: () => number | undefined;
  /** Counts a request under an operation name. */
  count: (op: string) => void;
}

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

export class EntraStandIn {
  private readonly tokens = new Map<string, { expires: number; tenantId: string; clientId: string }>();

  constructor(private readonly opts: EntraOptions) {}

  /** Answers a token-endpoint request; false when the path is not one of Entra's. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const p = url.pathname;
    if (p === '/common/discovery/instance') {
      this.discovery(res, url);
      return true;
    }
    let m = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(p);
    if (m) {
      send(res, 200, this.openIdConfiguration(m[1] as string));
      return true;
    }
    m = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(p);
    if (m && req.method === 'POST') {
      await this.token(req, res, m[1] as string);
      return true;
    }
    return false;
  }

  private discovery(res: ServerResponse, url: URL): void {
    const authority = url.searchParams.get('authorization_endpoint') ?? '';
    const host = this.opts.baseUrl().replace('https://', '');
    send(res, 200, {
      tenant_discovery_endpoint: authority.replace(
        /\/oauth2\/v2\.0\/authorize$/,
        '/v2.0/.well-known/openid-configuration',
      ),
      'api-version': '1.1',
      metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
    });
  }

  private openIdConfiguration(tenant: string): Record<string, unknown> {
    const url = this.opts.baseUrl();
    const base = `${url}/${tenant}`;
    return {
      token_endpoint: `${base}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${url}/${tenant}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      issuer: `${url}/${tenant}/v2.0`,
      request_uri_parameter_supported: false,
      userinfo_endpoint: `${url}/oidc/userinfo`,
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
    };
  }

  /** Client credentials: a secret, or a client assertion as workload identity sends (not verified). */
  private async token(req: IncomingMessage, res: ServerResponse, tenant: string): Promise<void> {
    this.opts.count('entra.token');
    const form = new URLSearchParams(await readText(req));
    const client = this.opts.clients.find((c) => c.clientId === form.get('client_id') && c.tenantId === tenant);
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
      return;
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
      return;
    }
    const lifetime = this.opts.tokenLifetimeSeconds() ?? 3599;
    const token = this.issue(tenant, client.clientId, lifetime);
    send(res, 200, { token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: token });
  }

  /** A JWT-shaped bearer token, remembered so that ARM accepts it until it expires. */
  private issue(tenant: string, clientId: string, lifetime: number): string {
    const exp = Math.floor(Date.now() / 1000) + lifetime;
    const token = `${b64url({ typ: 'JWT', alg: 'RS256' })}.${b64url({ aud: 'https://management.azure.com', iss: `${this.opts.baseUrl()}/${tenant}/`, tid: tenant, appid: clientId, oid: clientId, exp, iat: exp - lifetime })}.${randomBytes(32).toString('base64url')}`;
    this.tokens.set(token, { expires: exp * 1000, tenantId: tenant, clientId });
    return token;
  }

  /** ARM's bearer check: throws the 401 ARM answers, with its `WWW-Authenticate` challenge. */
  authenticate(req: IncomingMessage): void {
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    const challenge = {
      'WWW-Authenticate': `Bearer authorization_uri="${this.opts.baseUrl()}/${this.opts.clients[0]?.tenantId ?? 'common'}", error="invalid_token", error_description="The authentication failed because of missing 'Authorization' header."`,
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
}
