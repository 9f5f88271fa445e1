// Who is calling and what they may do: bearer tokens map to users and groups; a small RBAC-like policy
// answers every request and every SubjectAccessReview; impersonation is honoured for those allowed it.

export interface UserInfo {
  username: string;
  groups: string[];
}

export interface PolicyRule {
  /** Subjects: a rule applies when the user is listed or is in one of the groups. */
  users?: string[];
  groups?: string[];
  /** Verbs (get, list, watch, create, update, patch, delete, deletecollection, impersonate) or '*'. */
  verbs: string[];
  /** API groups ('' for core) or '*'. */
  apiGroups?: string[];
  /** Resources, optionally with subresource ('machinepools/status'), or '*'. */
  resources: string[];
  /** Namespaces, or '*' (cluster-scoped requests match only '*'). */
  namespaces?: string[];
  /** Object names, or all when omitted. */
  resourceNames?: string[];
}

export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

const has = (list: string[] | undefined, v: string, dflt = true) => (list === undefined ? dflt : list.includes('*') || list.includes(v));

export class Authorizer {
  constructor(private readonly rules: PolicyRule[]) {}

  authorize(user: UserInfo, a: ResourceAttributes): Decision {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    for (const rule of this.rules) {
      const subject = has(rule.users, user.username, false) || user.groups.some((g) => has(rule.groups, g, false));
      if (!subject) continue;
      if (!has(rule.verbs, a.verb)) continue;
      if (!has(rule.apiGroups, a.group)) continue;
      if (!has(rule.resources, resource)) continue;
      if (a.namespace ? !has(rule.namespaces, a.namespace) : !(rule.namespaces === undefined || rule.namespaces.includes('*'))) continue;
      if (a.name && rule.resourceNames && !rule.resourceNames.includes(a.name)) continue;
      return { allowed: true, reason: 'allowed by the simulator policy' };
    }
    return { allowed: false, reason: '' };
  }
}

export function forbiddenMessage(user: UserInfo, a: ResourceAttributes, plural: string): string {
  const what = a.name ? `${a.group ? `${plural}.${a.group}` : plural} "${a.name}" is forbidden` : `${a.group ? `${plural}.${a.group}` : plural} is forbidden`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return `${what}: User "${user.username}" cannot ${a.verb} resource "${res}" in API group "${a.group}"${scope}`;
}

/** The default policy: `admin` (group system:masters) may do everything. */
export const ADMIN_RULE: PolicyRule = { groups: ['system:masters'], verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] };
