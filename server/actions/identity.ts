import 'server-only';
// Who is asking, and what the management cluster's own RBAC lets them do. Identity comes from a bearer token
// (checked with a TokenReview on that cluster) or from an auth proxy's X-Forwarded-User/-Groups headers, which
// count only when the request proves it came through the proxy named in POOLSCOPE_TRUSTED_PROXY (shared secret).
// Without either, the caller is anonymous and poolscope is read-only for them.

import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ResyncIdentity } from '@/lib/api-types';
import { HttpError } from '../http/route';
import { peerOf } from '../http/peer';
import { callOptions, kubeFailure } from '../kube/calls';
import { RateLimiter } from './guards';

const PROXY_SECRET_HEADER = 'x-poolscope-proxy-secret';

export type IdentityResult = { identity: ResyncIdentity; problem: null } | { identity: null; problem: string };

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

interface Cached<T> {
  value: Promise<T>;
  until: number;
}

/** A small TTL cache of promises (concurrent callers share one API call); failures are not kept. */
class TtlCache<T> {
  private readonly map = new Map<string, Cached<T>>();

  constructor(private readonly max = 5_000) {}

  /** Whether `key` has an answer (or a call under way) that get would give without loading. */
  has(key: string): boolean {
    const hit = this.map.get(key);
    return hit !== undefined && hit.until > Date.now();
  }

  get(key: string, ttlMs: (v: T) => number, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.map.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = load();
    const entry: Cached<T> = { value, until: now + 60_000 };
    this.map.set(key, entry);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
    value.then(
      (v) => {
        entry.until = Date.now() + ttlMs(v);
      },
      () => {
        this.map.delete(key);
      },
    );
    return value;
  }
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(sha(a), 'hex');
  const y = Buffer.from(sha(b), 'hex');
  return timingSafeEqual(x, y);
}

export interface IdentityOptions {
  /** A KubeConfig whose current context is `context` (poolscope's own identity on that cluster). */
  kubeconfigFor(context: string): KubeConfig;
  trustedProxy?: { name: string; secret: string };
  timeoutMs: number;
  /** TokenReviews of tokens not seen lately: per client address, and for the whole process, per minute. */
  reviewsPerClientPerMinute?: number;
  reviewsPerMinute?: number;
}

/** A TokenReview costs the API server a call: what an unauthenticated client may make it do is bounded. */
const REVIEWS_PER_CLIENT_PER_MINUTE = 20;
const REVIEWS_PER_MINUTE = 120;

export class Access {
  private readonly tokens = new TtlCache<IdentityResult>();
  private readonly reviews = new TtlCache<{ allowed: boolean; reason: string }>();
  private readonly perClient: RateLimiter;
  private readonly overall: RateLimiter;

  constructor(private readonly opts: IdentityOptions) {
    this.perClient = new RateLimiter(opts.reviewsPerClientPerMinute ?? REVIEWS_PER_CLIENT_PER_MINUTE, 60_000);
    this.overall = new RateLimiter(opts.reviewsPerMinute ?? REVIEWS_PER_MINUTE, 60_000);
  }

  /** The caller's identity as the given management cluster sees it, or why there is none. */
  async identify(headers: Headers, context: string): Promise<IdentityResult> {
    const auth = headers.get('authorization');
    if (auth) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (!m) return { identity: null, problem: 'The Authorization header is not a bearer token.' };
      const token = m[1] as string;
      const key = `${context}\0${sha(token)}`;
      // A token not seen lately costs the API server a TokenReview: limited by client, then overall, first.
      if (!this.tokens.has(key)) this.admitReview(peerOf(headers));
      return this.tokens.get(
        key,
        (r) => (r.identity ? 60_000 : 30_000),
        () => this.review(context, token),
      );
    }
    const proxy = this.opts.trustedProxy;
    const user = headers.get('x-forwarded-user');
    const presented = headers.get(PROXY_SECRET_HEADER);
    if (!proxy) {
      return {
        identity: null,
        problem: user
          ? 'X-Forwarded-User is ignored: no trusted auth proxy is configured (POOLSCOPE_TRUSTED_PROXY).'
          : 'Not signed in: no bearer token and no trusted auth proxy in front of poolscope.',
      };
    }
    if (presented === null || !sameSecret(presented, proxy.secret)) {
      return {
        identity: null,
        problem: `The request did not come through the trusted auth proxy (${proxy.name}): its secret header is ${presented === null ? 'missing' : 'wrong'}.`,
      };
    }
    if (!user?.trim()) return { identity: null, problem: `The auth proxy (${proxy.name}) sent no X-Forwarded-User.` };
    const groups = (headers.get('x-forwarded-groups') ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean);
    // Every authenticated user is in system:authenticated, as the API server's own authenticators add it.
    if (!groups.includes('system:authenticated')) groups.push('system:authenticated');
    return { identity: { user: user.trim(), groups, via: `proxy:${proxy.name}` }, problem: null };
  }

  /** Throws 429 when this client, or every client together, asked for too many TokenReviews this minute. */
  private admitReview(client: string): void {
    const mine = this.perClient.take(client);
    if (mine)
      throw new HttpError(
        429,
        'rate-limited',
        `Too many sign-in attempts with new tokens from ${client}; try again in ${mine} s.`,
        { 'retry-after': String(mine) },
      );
    const all = this.overall.take('all');
    if (all)
      throw new HttpError(429, 'rate-limited', `Too many sign-in attempts with new tokens; try again in ${all} s.`, {
        'retry-after': String(all),
      });
  }

  private async review(context: string, token: string): Promise<IdentityResult> {
    const api = this.opts.kubeconfigFor(context).makeApiClient(AuthenticationV1Api);
    try {
      const r = await api.createTokenReview(
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } },
        callOptions(this.opts.timeoutMs),
      );
      if (!r.status?.authenticated || !r.status.user?.username) {
        return {
          identity: null,
          problem: `The cluster ${context} did not accept the bearer token${r.status?.error ? `: ${r.status.error}` : ''}.`,
        };
      }
      const u = r.status.user;
      return {
        identity: {
          user: u.username as string,
          groups: u.groups ?? [],
          ...(u.uid ? { uid: u.uid } : {}),
          ...(u.extra ? { extra: u.extra } : {}),
          via: 'bearer-token',
        },
        problem: null,
      };
    } catch (e) {
      const f = kubeFailure(e);
      throw new Error(`TokenReview on ${context} failed: ${f.message}`);
    }
  }

  /** A SubjectAccessReview for the identity on that cluster: its RBAC decides. Cached for 30 s. */
  async may(identity: ResyncIdentity, context: string, a: AccessCheck): Promise<{ allowed: boolean; reason: string }> {
    const key = [
      context,
      identity.user,
      identity.groups.join(','),
      a.verb,
      a.group,
      a.resource,
      a.namespace,
      a.name,
    ].join('\0');
    return this.reviews.get(
      key,
      () => 30_000,
      async () => {
        const api = this.opts.kubeconfigFor(context).makeApiClient(AuthorizationV1Api);
        try {
          const r = await api.createSubjectAccessReview(
            {
              body: {
                apiVersion: 'authorization.k8s.io/v1',
                kind: 'SubjectAccessReview',
                spec: {
                  user: identity.user,
                  groups: identity.groups,
                  ...(identity.uid ? { uid: identity.uid } : {}),
                  ...(identity.extra ? { extra: identity.extra } : {}),
                  resourceAttributes: {
                    verb: a.verb,
                    group: a.group,
                    resource: a.resource,
                    namespace: a.namespace,
                    name: a.name,
                  },
                },
              },
            },
            callOptions(this.opts.timeoutMs),
          );
          const allowed = r.status?.allowed === true && r.status.denied !== true;
          const what = `${a.verb} ${a.resource}${a.group ? `.${a.group}` : ''} "${a.name}" in namespace ${a.namespace}`;
          return {
            allowed,
            reason: allowed
              ? `may ${what}`
              : `${identity.user} may not ${what} on ${context}${r.status?.reason ? ` (${r.status.reason})` : ''}.`,
          };
        } catch (e) {
          throw new Error(`SubjectAccessReview on ${context} failed: ${kubeFailure(e).message}`);
        }
      },
    );
  }
}
