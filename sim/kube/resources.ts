// The resource table: every kind the simulated API server serves, described once. The store, discovery,
// routing and conversion are all driven by it — no hand-written handler per kind.

import type { KubeObject } from '../../lib/unstructured';
import { convertCapi } from './capi-convert';
import type { ScalePaths } from './scale';

interface ResourceVersionDef {
  name: string;
  served: boolean;
  storage: boolean;
}

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'boolean' | 'date' | 'number';
  jsonPath: string;
  priority?: number;
}

export interface ResourceDef {
  group: string; // '' for core
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  versions: ResourceVersionDef[];
  /** Has a /status subresource: the main resource ignores status, /status ignores everything else. */
  statusSubresource: boolean;
  /** Has a /scale subresource (autoscaling/v1 Scale), with the paths its CRD's `subresources.scale` declares. */
  scale?: ScalePaths;
  /** Only `create` is served (SubjectAccessReview, TokenReview). */
  createOnly?: boolean;
  verbs: string[];
  categories?: string[];
  printerColumns?: PrinterColumn[];
  /** Converts an object of this kind to another served version (multi-version kinds only). */
  convert?: (obj: KubeObject, toVersion: string) => KubeObject;
}

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function def(
  d: Omit<ResourceDef, 'listKind' | 'singular' | 'verbs' | 'shortNames'> &
    Partial<Pick<ResourceDef, 'verbs' | 'shortNames'>>,
): ResourceDef {
  return { listKind: `${d.kind}List`, singular: d.kind.toLowerCase(), verbs: CRUD, shortNames: [], ...d };
}

const capiVersions = (): ResourceVersionDef[] => [
  { name: 'v1beta1', served: true, storage: false },
  { name: 'v1beta2', served: true, storage: true },
];
const v1 = (): ResourceVersionDef[] => [{ name: 'v1', served: true, storage: true }];
const infraV1beta1 = (): ResourceVersionDef[] => [{ name: 'v1beta1', served: true, storage: true }];

export const RESOURCES: readonly ResourceDef[] = [
  def({
    group: '',
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    versions: v1(),
    statusSubresource: true,
    shortNames: ['ns'],
    printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, AGE],
  }),
  def({
    group: '',
    kind: 'Node',
    plural: 'nodes',
    namespaced: false,
    versions: v1(),
    statusSubresource: true,
    shortNames: ['no'],
    printerColumns: [
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', priority: 1 },
      AGE,
    ],
  }),
  def({
    group: '',
    kind: 'Secret',
    plural: 'secrets',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
    printerColumns: [{ name: 'Type', type: 'string', jsonPath: '.type' }, AGE],
  }),
  def({
    group: '',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
    shortNames: ['ev'],
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  }),
  def({
    group: 'events.k8s.io',
    kind: 'Event',
    plural: 'events',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
    shortNames: ['ev'],
  }),
  def({
    group: 'apps',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
    versions: v1(),
    statusSubresource: true,
    shortNames: ['deploy'],
    printerColumns: [
      { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
      { name: 'Images', type: 'string', jsonPath: '.spec.template.spec.containers[*].image', priority: 1 },
      AGE,
    ],
  }),
  def({
    group: 'coordination.k8s.io',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
    printerColumns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }, AGE],
  }),
  // What poolscope's own manifests (deploy/) hold, so `kubectl apply -k` can install it into a simulated cluster.
  def({
    group: '',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
    shortNames: ['sa'],
  }),
  def({
    group: '',
    kind: 'Service',
    plural: 'services',
    namespaced: true,
    versions: v1(),
    statusSubresource: true,
    shortNames: ['svc'],
  }),
  def({
    group: '',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
    shortNames: ['cm'],
  }),
  def({
    group: '',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
    namespaced: true,
    versions: v1(),
    statusSubresource: true,
    shortNames: ['pvc'],
  }),
  def({
    group: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    plural: 'clusterroles',
    namespaced: false,
    versions: v1(),
    statusSubresource: false,
  }),
  def({
    group: 'rbac.authorization.k8s.io',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    versions: v1(),
    statusSubresource: false,
  }),
  def({
    group: 'rbac.authorization.k8s.io',
    kind: 'Role',
    plural: 'roles',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
  }),
  def({
    group: 'rbac.authorization.k8s.io',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
  }),
  def({
    group: 'policy',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
    versions: v1(),
    statusSubresource: true,
    shortNames: ['pdb'],
  }),
  def({
    group: 'monitoring.coreos.com',
    kind: 'PrometheusRule',
    plural: 'prometheusrules',
    namespaced: true,
    versions: v1(),
    statusSubresource: false,
  }),
  def({
    group: 'authorization.k8s.io',
    kind: 'SubjectAccessReview',
    plural: 'subjectaccessreviews',
    namespaced: false,
    versions: v1(),
    statusSubresource: false,
    createOnly: true,
    verbs: ['create'],
  }),
  def({
    group: 'authentication.k8s.io',
    kind: 'TokenReview',
    plural: 'tokenreviews',
    namespaced: false,
    versions: v1(),
    statusSubresource: false,
    createOnly: true,
    verbs: ['create'],
  }),
  def({
    group: 'authorization.k8s.io',
    kind: 'SelfSubjectAccessReview',
    plural: 'selfsubjectaccessreviews',
    namespaced: false,
    versions: v1(),
    statusSubresource: false,
    createOnly: true,
    verbs: ['create'],
  }),
  def({
    group: 'cluster.x-k8s.io',
    kind: 'Cluster',
    plural: 'clusters',
    namespaced: true,
    versions: capiVersions(),
    statusSubresource: true,
    shortNames: ['cl'],
    categories: ['cluster-api'],
    convert: convertCapi,
    printerColumns: [
      { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      AGE,
    ],
  }),
  // The scale paths are those of CAPI's MachinePool CRD (both versions; it declares no labelSelectorPath).
  def({
    group: 'cluster.x-k8s.io',
    kind: 'MachinePool',
    plural: 'machinepools',
    namespaced: true,
    versions: capiVersions(),
    statusSubresource: true,
    shortNames: ['mp'],
    categories: ['cluster-api'],
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
    convert: convertCapi,
    printerColumns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName' },
      { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      AGE,
    ],
  }),
  def({
    group: 'cluster.x-k8s.io',
    kind: 'Machine',
    plural: 'machines',
    namespaced: true,
    versions: capiVersions(),
    statusSubresource: true,
    shortNames: ['ma'],
    categories: ['cluster-api'],
    convert: convertCapi,
    printerColumns: [
      { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName' },
      { name: 'NodeName', type: 'string', jsonPath: '.status.nodeRef.name' },
      { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      AGE,
    ],
  }),
  def({
    group: 'infrastructure.cluster.x-k8s.io',
    kind: 'AzureMachinePool',
    plural: 'azuremachinepools',
    namespaced: true,
    versions: infraV1beta1(),
    statusSubresource: true,
    shortNames: ['amp'],
    categories: ['cluster-api'],
    printerColumns: [
      { name: 'Replicas', type: 'string', jsonPath: '.status.replicas' },
      { name: 'Ready', type: 'string', jsonPath: '.status.ready' },
      { name: 'State', type: 'string', jsonPath: '.status.provisioningState' },
      AGE,
    ],
  }),
  def({
    group: 'infrastructure.cluster.x-k8s.io',
    kind: 'AzureMachinePoolMachine',
    plural: 'azuremachinepoolmachines',
    namespaced: true,
    versions: infraV1beta1(),
    statusSubresource: true,
    shortNames: ['ampm'],
    categories: ['cluster-api'],
    printerColumns: [
      { name: 'Version', type: 'string', jsonPath: '.status.version' },
      { name: 'Ready', type: 'string', jsonPath: '.status.ready' },
      { name: 'State', type: 'string', jsonPath: '.status.provisioningState' },
      AGE,
    ],
  }),
  // AKS pools: CAPZ's two infra kinds (printer columns and versions as in their CRDs) and ASO's agent pool.
  def({
    group: 'infrastructure.cluster.x-k8s.io',
    kind: 'AzureManagedMachinePool',
    plural: 'azuremanagedmachinepools',
    namespaced: true,
    versions: infraV1beta1(),
    statusSubresource: true,
    shortNames: ['ammp'],
    categories: ['cluster-api'],
    printerColumns: [
      { name: 'Cluster', type: 'string', jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name' },
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Severity', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].severity" },
      { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
      { name: 'Message', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].message", priority: 1 },
      AGE,
      { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
    ],
  }),
  def({
    group: 'infrastructure.cluster.x-k8s.io',
    kind: 'AzureASOManagedMachinePool',
    plural: 'azureasomanagedmachinepools',
    namespaced: true,
    versions: [
      { name: 'v1alpha1', served: true, storage: false },
      { name: 'v1beta1', served: true, storage: true },
    ],
    statusSubresource: true,
    convert: sameShape,
  }),
  def({
    group: 'containerservice.azure.com',
    kind: 'ManagedClustersAgentPool',
    plural: 'managedclustersagentpools',
    namespaced: true,
    versions: [
      { name: 'v1api20231001', served: true, storage: false },
      { name: 'v1api20250801', served: true, storage: true },
    ],
    statusSubresource: true,
    categories: ['azure', 'containerservice'],
    convert: sameShape,
    printerColumns: [
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Severity', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].severity" },
      { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
      { name: 'Message', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].message" },
    ],
  }),
  def({
    group: 'infrastructure.cluster.x-k8s.io',
    kind: 'AzureCluster',
    plural: 'azureclusters',
    namespaced: true,
    versions: infraV1beta1(),
    statusSubresource: true,
    shortNames: ['azc'],
    categories: ['cluster-api'],
    printerColumns: [{ name: 'Ready', type: 'string', jsonPath: '.status.ready' }, AGE],
  }),
];

/**
 * Versions whose schemas are the same (an ASO-MP's v1alpha1 and v1beta1, ASO's API versions for the fields CAPZ
 * and poolscope use): converting one is naming it in the other version.
 */
function sameShape(obj: KubeObject, toVersion: string): KubeObject {
  const group = (obj.apiVersion ?? '').split('/')[0] ?? '';
  return { ...structuredClone(obj), apiVersion: `${group}/${toVersion}` };
}

export function storageVersion(r: ResourceDef): string {
  return (r.versions.find((v) => v.storage) ?? (r.versions[0] as ResourceVersionDef)).name;
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export function findByPlural(group: string, version: string, plural: string): ResourceDef | undefined {
  return RESOURCES.find(
    (r) => r.group === group && r.plural === plural && r.versions.some((v) => v.name === version && v.served),
  );
}

export function findByKind(apiVersion: string, kind: string): ResourceDef | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return RESOURCES.find((r) => r.group === group && r.kind === kind && r.versions.some((v) => v.name === version));
}
