// What to do next for a finding, with the names filled in: the commands an operator would run, links to the Azure
// portal, and the upstream issue behind the behaviour (docs/domain.md, "Operator scenarios").
//
// Every name here comes from a cluster or from Azure, so it is untrusted: each is shell-quoted where it enters a
// command (a copied command must run exactly the one the text shows), and a link is only ever to the Azure portal
// or GitHub, its path built from parsed, percent-encoded parts.

import type { FindingCode, InstanceRow, PoolDetail } from './api-types';
import { parseProviderId, type ParsedProviderId } from './provider-id';
import { RESYNC_ANNOTATION } from './resync-actions';
import { MACHINE_POOL_LABEL } from './slim';

export interface NextStep {
  /** What the step does, in a few words. */
  text: string;
  /** A command to copy, when the step is one. */
  command?: string;
  /** A link (the Azure portal, an upstream issue), when the step is one. */
  href?: string;
}

const CAPZ_ISSUES = 'https://github.com/kubernetes-sigs/cluster-api-provider-azure/issues/';
const PORTAL = 'https://portal.azure.com/#resource';
/** At most this many instances get their own commands; the rest are counted. */
const MAX_NAMED = 5;

/** A shell word for `v`: as it is when it holds only safe characters, else single-quoted. */
export function shellQuote(v: string): string {
  return /^[A-Za-z0-9._\-/:=@,+]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** The scale set the pool's IDs name: its subscription, resource group and name, when an ID parses. */
function scaleSetOf(d: PoolDetail): ParsedProviderId | null {
  for (const r of d.instances) {
    const p = parseProviderId(r.providerID);
    if (p.ok && p.scaleSet) return p;
  }
  return null;
}

function portalLink(parts: readonly string[], blade = 'overview'): string {
  return `${PORTAL}/${parts.map(encodeURIComponent).join('/')}/${blade}`;
}

function scaleSetPath(s: ParsedProviderId): string[] {
  return [
    'subscriptions',
    s.subscriptionId,
    'resourceGroups',
    s.resourceGroup,
    'providers',
    'Microsoft.Compute',
    'virtualMachineScaleSets',
    s.scaleSet ?? '',
  ];
}

/** `kubectl --context … -n …`, quoted. */
function kubectl(d: PoolDetail): string {
  const { context, namespace } = d.summary.ref;
  return `kubectl --context ${shellQuote(context)} -n ${shellQuote(namespace)}`;
}

/** Deleting each instance's Machine (CAPZ then deletes the VM and the scale set replaces it), and looking at it. */
function replaceSteps(d: PoolDetail, rows: readonly InstanceRow[], why: string): NextStep[] {
  const steps: NextStep[] = [];
  for (const r of rows.slice(0, MAX_NAMED)) {
    const vm = r.azure?.name ?? r.providerID.split('/').at(-1) ?? r.providerID;
    if (r.machine)
      steps.push({
        text: `Replace ${vm} (${why}): delete its Machine; CAPZ deletes the VM and the scale set makes a new one`,
        command: `${kubectl(d)} delete machine ${shellQuote(r.machine.name)}`,
      });
    const p = parseProviderId(r.providerID);
    if (p.ok && p.scaleSet && p.instanceId !== null) {
      steps.push({
        text: `Inspect ${vm} in Azure`,
        command: `az vmss get-instance-view --subscription ${shellQuote(p.subscriptionId)} -g ${shellQuote(p.resourceGroup)} -n ${shellQuote(p.scaleSet)} --instance-id ${shellQuote(p.instanceId)}`,
      });
      steps.push({
        text: `Open ${vm} in the Azure portal`,
        href: portalLink([...scaleSetPath(p), 'virtualMachines', p.instanceId]),
      });
    }
  }
  if (rows.length > MAX_NAMED)
    steps.push({ text: `And ${rows.length - MAX_NAMED} more: the instance table lists each one` });
  return steps;
}

/** What a resync does, by hand, for those who must (without poolscope's checks). */
function byHandSteps(d: PoolDetail, amp: string): NextStep[] {
  const k = kubectl(d);
  const mp = shellQuote(d.summary.ref.name);
  return [
    {
      text: "Copy the AzureMachinePool's list into the MachinePool by hand (what Copy providerIDs does, without its checks)",
      command: `${k} patch machinepool ${mp} --type merge -p "{\\"spec\\":{\\"providerIDList\\":$(${k} get azuremachinepool ${shellQuote(amp)} -o jsonpath='{.spec.providerIDList}')}}"`,
    },
    {
      text: 'Make CAPZ and CAPI reconcile by hand (what Reconcile does)',
      command: `${k} annotate azuremachinepool ${shellQuote(amp)} ${RESYNC_ANNOTATION}="$(date -u +%FT%TZ)" --overwrite && ${k} annotate machinepool ${mp} ${RESYNC_ANNOTATION}="$(date -u +%FT%TZ)" --overwrite`,
    },
  ];
}

const failedRows = (d: PoolDetail) => d.instances.filter((r) => r.azure?.provisioningState === 'Failed');
const unjoinedRows = (d: PoolDetail) =>
  d.instances.filter((r) => r.driftKinds.includes('instance-without-node') && r.azure?.provisioningState !== 'Failed');

/**
 * An AKS pool's next steps: ASO's agent pool objects, whose Ready condition says what ASO waits for or why AKS
 * failed, and the upstream issue. Never a list copy (an AKS pool's infra list freezes with the MachinePool's), and
 * nothing that writes to ASO's objects (a change there can make ASO write to AKS).
 */
function aksNextSteps(code: FindingCode, d: PoolDetail): NextStep[] {
  const aso = {
    text: "Read ASO's agent pool objects: their Ready condition says what ASO waits for, or why AKS failed",
    command: `${kubectl(d)} get managedclustersagentpools.containerservice.azure.com`,
  };
  switch (code) {
    case 'readiness-gate-frozen':
      return [aso, { text: 'CAPZ #4982: the frozen MachinePool list', href: `${CAPZ_ISSUES}4982` }];
    case 'aks-operation':
    case 'aks-pool-failed':
      return [aso];
    case 'aks-update-loop':
      return [
        aso,
        {
          text: 'CAPZ #4116: taints or labels removed from the spec make the pool update forever',
          href: `${CAPZ_ISSUES}4116`,
        },
        { text: "CAPZ #3976: a spot pool's taint makes CAPZ update it at every reconcile", href: `${CAPZ_ISSUES}3976` },
      ];
    case 'aks-replicas-cached':
      return [{ text: "CAPZ #5985: the MachinePool's replicas follow ASO's cached count", href: `${CAPZ_ISSUES}5985` }];
    case 'aks-nodes-unmapped':
      return [
        {
          text: 'CAPZ #5055: a node resource group name over 63 characters matched no Node before v1.17',
          href: `${CAPZ_ISSUES}5055`,
        },
      ];
    default:
      return [];
  }
}

/**
 * The next steps for one finding of `d`, names filled in. Empty when the finding's suggested action says all
 * there is to do.
 */
export function nextSteps(code: FindingCode, d: PoolDetail): NextStep[] {
  if ((d.summary.flavour ?? 'self-managed') !== 'self-managed') return aksNextSteps(code, d);
  const ss = scaleSetOf(d);
  const amp = ss?.scaleSet ?? d.summary.ref.name;
  switch (code) {
    case 'instance-failed':
      return [
        ...replaceSteps(d, failedRows(d), 'failed'),
        { text: 'CAPZ #6488: a Failed scale set marks the AzureMachinePool not ready', href: `${CAPZ_ISSUES}6488` },
      ];
    case 'vmss-failed':
      return [
        ...(ss ? [{ text: `Open scale set ${amp} in the Azure portal`, href: portalLink(scaleSetPath(ss)) }] : []),
        { text: 'CAPZ #5860: capacity failures while the AzureMachinePool stays ready', href: `${CAPZ_ISSUES}5860` },
      ];
    case 'node-not-joined':
      return replaceSteps(d, unjoinedRows(d), 'no Node');
    case 'readiness-gate-frozen':
      return [...byHandSteps(d, amp), { text: 'CAPZ #4982: the frozen MachinePool list', href: `${CAPZ_ISSUES}4982` }];
    case 'instances-gone-from-azure':
    case 'vmss-not-found':
      return ss
        ? [
            {
              text: `Find who deleted ${code === 'vmss-not-found' ? 'the scale set' : 'the VMs'}: the activity log of the last day`,
              command: `az monitor activity-log list --subscription ${shellQuote(ss.subscriptionId)} -g ${shellQuote(ss.resourceGroup)} --offset 1d --query "[?contains(operationName.value, 'virtualMachineScaleSets')]"`,
            },
            ...(code === 'instances-gone-from-azure'
              ? [
                  {
                    text: "See where each of the pool's Machines stands",
                    command: `${kubectl(d)} get machines -l ${shellQuote(`${MACHINE_POOL_LABEL}=${d.summary.ref.name}`)} -o wide`,
                  },
                ]
              : []),
          ]
        : [];
    default:
      return [];
  }
}
