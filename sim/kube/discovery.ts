// The documents a client reads before it touches a resource: /version, /api and /apis discovery (groups,
// versions, APIResourceLists with their subresources) and the OpenAPI v3 index and group-version documents.

import { apiVersionOf, RESOURCES, storageVersion, type ResourceDef } from './resources';

/** What the documents say about the server that serves them. */
interface DiscoveryServer {
  /** The server's https:// URL (for /api's serverAddressByClientCIDRs). */
  url: string;
  /** Kubernetes version the server reports. */
  gitVersion?: string;
  /** Resources (`group/plural`) the server does not serve: their CRDs are not installed. */
  hidden?: ReadonlySet<string>;
}

/** The resources a server serves: all but those it hides. */
function servedBy(server: DiscoveryServer): readonly ResourceDef[] {
  const hidden = server.hidden;
  return hidden?.size ? RESOURCES.filter((r) => !hidden.has(`${r.group}/${r.plural}`)) : RESOURCES;
}

const groupDoc = (all: readonly ResourceDef[], g: string) => {
  const versions = [
    ...new Set(all.filter((r) => r.group === g).flatMap((r) => r.versions.filter((v) => v.served).map((v) => v.name))),
  ];
  const preferred = all.find((r) => r.group === g && r.versions.length > 1) ?? all.find((r) => r.group === g);
  const pv = preferred ? storageVersion(preferred) : versions[0];
  return {
    name: g,
    versions: versions.map((v) => ({ groupVersion: `${g}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${g}/${pv}`, version: pv },
  };
};

/** A resource's entries in its APIResourceList: itself, then its status and scale subresources. */
const resourceEntries = (r: ResourceDef) => [
  {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: r.verbs,
    ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
    ...(r.categories ? { categories: r.categories } : {}),
    storageVersionHash: Buffer.from(`${r.group}/${r.plural}`).toString('base64').slice(0, 11),
  },
  ...(r.statusSubresource
    ? [
        {
          name: `${r.plural}/status`,
          singularName: '',
          namespaced: r.namespaced,
          kind: r.kind,
          verbs: ['get', 'patch', 'update'],
        },
      ]
    : []),
  // kubectl's scale client learns from this entry that the subresource speaks autoscaling/v1 Scale.
  ...(r.scale
    ? [
        {
          name: `${r.plural}/scale`,
          singularName: '',
          namespaced: r.namespaced,
          group: 'autoscaling',
          version: 'v1',
          kind: 'Scale',
          verbs: ['get', 'patch', 'update'],
        },
      ]
    : []),
];

const resourceList = (all: readonly ResourceDef[], g: string, v: string) => ({
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: apiVersionOf(g, v),
  resources: all
    .filter((r) => r.group === g && r.versions.some((x) => x.name === v && x.served))
    .flatMap(resourceEntries),
});

function versionDoc(gitVersion: string | undefined): unknown {
  const gv = gitVersion ?? 'v1.33.4';
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(gv) ?? [];
  return {
    major,
    minor,
    gitVersion: gv,
    gitCommit: 'poolscope-sim',
    gitTreeState: 'clean',
    buildDate: '2026-08-01T00:00:00Z',
    goVersion: 'go1.24.5',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/** The discovery (or version, or OpenAPI) document at `path`, or undefined when `path` is not one. */
export function discoveryDoc(path: string, server: DiscoveryServer): unknown | undefined {
  const all = servedBy(server);
  const groups = [...new Set(all.filter((r) => r.group).map((r) => r.group))];
  if (path === '/version') return versionDoc(server.gitVersion);
  if (path === '/openapi/v3') return openapiRoot(all);
  const oa = /^\/openapi\/v3\/(api\/v1|apis\/[^/]+\/[^/]+)$/.exec(path);
  if (oa) return openapiGroupVersion(all, oa[1] as string, server.gitVersion);
  if (path === '/api')
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: server.url.replace('https://', '') }],
    };
  if (path === '/api/v1') return resourceList(all, '', 'v1');
  if (path === '/apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => groupDoc(all, g)) };
  const m = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (m && groups.includes(m[1] as string)) {
    if (!m[2]) return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(all, m[1] as string) };
    const list = resourceList(all, m[1] as string, m[2]);
    return list.resources.length ? list : undefined;
  }
  return undefined;
}

/** The OpenAPI v3 index kubectl reads to learn that the server validates fields itself. */
function openapiRoot(all: readonly ResourceDef[]): unknown {
  const gvs = new Set<string>();
  for (const r of all)
    for (const v of r.versions) if (v.served) gvs.add(r.group ? `apis/${r.group}/${v.name}` : `api/${v.name}`);
  return {
    paths: Object.fromEntries(
      [...gvs].map((gv) => [
        gv,
        { serverRelativeURL: `/openapi/v3/${gv}?hash=${Buffer.from(gv).toString('hex').slice(0, 16)}` },
      ]),
    ),
  };
}

/**
 * One group-version's OpenAPI v3 document: paths with the operations and the `fieldValidation` parameter,
 * and an open schema per kind (the server validates against the real CRD schemas itself).
 */
function openapiGroupVersion(all: readonly ResourceDef[], gv: string, gitVersion: string | undefined): unknown {
  const [group, version] = gv.startsWith('api/') ? ['', gv.slice(4)] : (gv.slice(5).split('/') as [string, string]);
  const rs = all.filter((r) => r.group === group && r.versions.some((v) => v.name === version && v.served));
  if (rs.length === 0) return undefined;
  const schemaName = (r: ResourceDef) =>
    `${group ? group.split('.').reverse().join('.') : 'io.k8s.api.core'}.${version}.${r.kind}`;
  const paths: Record<string, unknown> = {};
  const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  for (const r of rs) {
    const gvk = { group, version, kind: r.kind };
    const op = (action: string, extra: string[] = []) => ({
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
      parameters: [param('dryRun'), param('fieldManager'), ...extra.map(param)],
      responses: {
        200: {
          description: 'OK',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(r)}` } } },
        },
      },
    });
    const base = `/${gv}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}`;
    paths[base] = { get: op('list'), post: op('post', ['fieldValidation']) };
    paths[`${base}/{name}`] = {
      get: op('get'),
      put: op('put', ['fieldValidation']),
      patch: op('patch', ['fieldValidation', 'force']),
      delete: op('delete'),
    };
  }
  const schemas = Object.fromEntries(
    rs.map((r) => [
      schemaName(r),
      {
        type: 'object',
        'x-kubernetes-group-version-kind': [{ group, version, kind: r.kind }],
        'x-kubernetes-preserve-unknown-fields': true,
      },
    ]),
  );
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: gitVersion ?? 'v1.33.4' },
    paths,
    components: { schemas },
  };
}
