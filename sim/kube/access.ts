// Access control as the server applies it to each request: bearer-token authentication with impersonation,
// the authorize-or-403 check, and the access reviews (Self/SubjectAccessReview, TokenReview) served as resources.
// The policy itself (rules, matching, messages) is in auth.ts.

import type { KubeObject } from '../../lib/unstructured';
import { Authorizer, forbiddenMessage, type PolicyRule, type ResourceAttributes, type UserInfo } from './auth';
import { ApiError, badRequest } from './errors';
import type { Req } from './http';
import type { ResourceDef } from './resources';

export class RequestAccess {
  private readonly authz: Authorizer;

  /** `tokens` maps a bearer token to its identity. */
  constructor(
    private readonly tokens: Record<string, UserInfo>,
    policy: PolicyRule[],
  ) {
    this.authz = new Authorizer(policy);
  }

  /** Requests allowed per policy rule so far (see Authorizer.hits). */
  get policyHits(): ReadonlyMap<PolicyRule, number> {
    return this.authz.hits;
  }

  authenticate(req: Req): UserInfo {
    const h = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(h);
    const user = m ? this.tokens[m[1] as string] : undefined;
    if (!user) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    const asUser = req.headers['impersonate-user'];
    if (typeof asUser !== 'string') return user;
    const check = (resource: string, name: string) => {
      const d = this.authz.authorize(user, { verb: 'impersonate', group: '', resource, name });
      if (!d.allowed)
        throw new ApiError(
          403,
          'Forbidden',
          `${resource} "${name}" is forbidden: User "${user.username}" cannot impersonate resource "${resource}" in API group "" at the cluster scope`,
        );
    };
    check('users', asUser);
    const rawGroups = req.headers['impersonate-group'];
    const groups = rawGroups === undefined ? [] : Array.isArray(rawGroups) ? rawGroups : [rawGroups];
    for (const g of groups) check('groups', g);
    return { username: asUser, groups: [...groups, 'system:authenticated'] };
  }

  authorize(user: UserInfo, a: ResourceAttributes, plural: string): void {
    if (!this.authz.authorize(user, a).allowed)
      throw new ApiError(403, 'Forbidden', forbiddenMessage(user, a, plural), {
        name: a.name,
        group: a.group,
        kind: plural,
      });
  }

  review(r: ResourceDef, body: KubeObject, requester: UserInfo): KubeObject {
    if (body.kind !== r.kind)
      throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${r.kind})`);
    if (r.kind === 'TokenReview') return this.tokenReview(body, requester);
    const spec = (body.spec ?? {}) as {
      user?: string;
      groups?: string[];
      resourceAttributes?: ResourceAttributes & { resource?: string };
      nonResourceAttributes?: unknown;
    };
    const a = spec.resourceAttributes;
    const subject =
      r.kind === 'SelfSubjectAccessReview' ? requester : { username: spec.user ?? '', groups: spec.groups ?? [] };
    if (r.kind === 'SubjectAccessReview') {
      this.authorize(requester, { verb: 'create', group: r.group, resource: r.plural }, r.plural);
      if (!subject.username && subject.groups.length === 0)
        throw new ApiError(
          422,
          'Invalid',
          'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
        );
    }
    if (!a) {
      return {
        ...body,
        apiVersion: 'authorization.k8s.io/v1',
        metadata: { creationTimestamp: null as unknown as string },
        status: { allowed: false, reason: 'only resourceAttributes are supported by this server' },
      };
    }
    const decision = this.authz.authorize(subject, {
      verb: a.verb ?? '',
      group: a.group ?? '',
      resource: a.resource ?? '',
      subresource: a.subresource || undefined,
      namespace: a.namespace || undefined,
      name: a.name || undefined,
    });
    return {
      ...body,
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null as unknown as string },
      status: decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false },
    };
  }

  /** authentication.k8s.io/v1 TokenReview: who a bearer token belongs to, as the API server's authenticator says. */
  private tokenReview(body: KubeObject, requester: UserInfo): KubeObject {
    this.authorize(
      requester,
      { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' },
      'tokenreviews',
    );
    const token = (body.spec as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || token === '')
      throw new ApiError(422, 'Invalid', 'TokenReview.authentication.k8s.io "" is invalid: spec.token: Required value');
    const user = this.tokens[token];
    return {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: { creationTimestamp: null as unknown as string },
      spec: body.spec,
      status: user
        ? { authenticated: true, user: { username: user.username, uid: `sim-${user.username}`, groups: user.groups } }
        : { authenticated: false, error: 'invalid bearer token' },
    } as KubeObject;
  }
}
