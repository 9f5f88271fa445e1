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

const has = (list: string[] | undefined, v: string, dflt = true) =>
  list === undefined ? dflt : list.includes('*') || list.includes(v);

export class Authorizer {
  /** How many requests each rule allowed (the first matching rule counts), for least-privilege checks. */
  readonly hits = new Map<PolicyRule, number>();

  constructor(private readonly rules: PolicyRule[]) {}

  authorize(user: UserInfo, a: ResourceAttributes): Decision {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    for (const rule of this.rules) {
      const subject = has(rule.users, user.username, false) || user.groups.some((g) => has(rule.groups, g, false));
      if (!subject) continue;
      if (!has(rule.verbs, a.verb)) continue;
      if (!has(rule.apiGroups, a.group)) continue;
      if (!has(rule.resources, resource)) continue;
      if (
        a.namespace
          ? !has(rule.namespaces, a.namespace)
          : !(rule.namespaces === undefined || rule.namespaces.includes('*'))
      )
        continue;
      if (rule.resourceNames && !(a.name && rule.resourceNames.includes(a.name))) continue;
      this.hits.set(rule, (this.hits.get(rule) ?? 0) + 1);
      return { allowed: true, reason: 'allowed by the simulator policy' };
    }
    return { allowed: false, reason: '' };
  }
}

export function forbiddenMessage(user: UserInfo, a: ResourceAttributes, plural: string): string {
  const what = a.name
    ? `${a.group ? `${plural}.${a.group}` : plural} "${a.name}" is forbidden`
    : `${a.group ? `${plural}.${a.group}` : plural} is forbidden`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return `${what}: User "${user.username}" cannot ${a.verb} resource "${res}" in API group "${a.group}"${scope}`;
}

/** The default policy: `admin` (group system:masters) may do everything. */
export const ADMIN_RULE: PolicyRule = {
  groups: ['system:masters'],
  verbs: ['*'],
  apiGroups: ['*'],
  resources: ['*'],
  namespaces: ['*'],
};

interface RbacRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface RbacObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  rules?: RbacRule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/**
 * Kubernetes RBAC objects (Roles, ClusterRoles and their bindings, as `kubectl kustomize` renders them) as
 * simulator policy rules: each bound rule, for the bound users, groups and ServiceAccounts
 * (`system:serviceaccount:<ns>:<name>`), cluster-wide for a ClusterRoleBinding, in its namespace for a RoleBinding.
 */
export function policyFromRbac(objects: readonly RbacObject[]): PolicyRule[] {
  const roles = new Map(
    objects
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .map((o) => [`${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`, o]),
  );
  const out: PolicyRule[] = [];
  for (const b of objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
    const ns = b.kind === 'RoleBinding' ? (b.metadata?.namespace ?? 'default') : null;
    const ref = b.roleRef as { kind: string; name: string };
    const role = roles.get(`${ref.kind}/${ref.kind === 'Role' ? ns : ''}/${ref.name}`);
    if (!role)
      throw new Error(
        `${b.kind} ${b.metadata?.name} refers to ${ref.kind} ${ref.name}, which is not among the objects`,
      );
    const users = (b.subjects ?? [])
      .filter((s) => s.kind === 'User')
      .map((s) => s.name)
      .concat(
        (b.subjects ?? [])
          .filter((s) => s.kind === 'ServiceAccount')
          .map((s) => `system:serviceaccount:${s.namespace ?? ns}:${s.name}`),
      );
    const groups = (b.subjects ?? []).filter((s) => s.kind === 'Group').map((s) => s.name);
    for (const r of role.rules ?? []) {
      out.push({
        ...(users.length ? { users } : {}),
        ...(groups.length ? { groups } : {}),
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? [''],
        resources: r.resources ?? [],
        namespaces: ns ? [ns] : ['*'],
        ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
      });
    }
  }
  return out;
}
