// Next steps with the names filled in, and names from a cluster that cannot break out of a command or a link.

import { describe, expect, it } from 'vitest';
import { analyzePool } from './analyze';
import { buildAksPool } from './fixtures/aks-pool';
import { buildScenario } from './fixtures/scenarios';
import { nextSteps, shellQuote } from './next-steps';

describe('S4: one VM failed', () => {
  const b = buildScenario('s04-one-vm-failed-main');
  const d = analyzePool(b.input, { now: b.now });
  const { context, namespace } = d.summary.ref;

  it("deletes the failed instance's Machine by name, inspects it in Azure and links to it and the issue", () => {
    const steps = nextSteps('instance-failed', d);
    expect(steps.map((s) => s.command ?? s.href)).toEqual([
      `kubectl --context ${context} -n ${namespace} delete machine pool0-2`,
      'az vmss get-instance-view --subscription 6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b -g prod-weu -n pool0 --instance-id 2',
      'https://portal.azure.com/#resource/subscriptions/6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/2/overview',
      'https://github.com/kubernetes-sigs/cluster-api-provider-azure/issues/6488',
    ]);
    expect(steps[0]?.text).toBe(
      'Replace pool0_2 (failed): delete its Machine; CAPZ deletes the VM and the scale set makes a new one',
    );
  });

  it('gives the frozen list the copy and the reconcile by hand, on the right objects', () => {
    const [copy, reconcile] = nextSteps('readiness-gate-frozen', d);
    expect(copy?.command).toBe(
      `kubectl --context ${context} -n ${namespace} patch machinepool pool0 --type merge -p "{\\"spec\\":{\\"providerIDList\\":$(kubectl --context ${context} -n ${namespace} get azuremachinepool pool0 -o jsonpath='{.spec.providerIDList}')}}"`,
    );
    expect(reconcile?.command).toContain('annotate azuremachinepool pool0 poolscope.dev/resync-requested-at=');
  });
});

describe('an AKS pool', () => {
  it('is never told to copy its list or to touch the scale set its IDs name', () => {
    const input = buildAksPool({
      flavour: 'aks-managed',
      mpList: [0, 1],
      nodes: [0, 1, 2],
      infraReady: false,
      aso: { ready: { type: 'Ready', status: 'False', reason: 'Reconciling' }, state: { count: 2 } },
    });
    const d = analyzePool(input, { now: '2026-11-29T12:02:00Z' });
    const steps = nextSteps('readiness-gate-frozen', d);
    expect(steps.map((s) => s.command ?? s.href)).toEqual([
      'kubectl --context mgmt-aks -n default get managedclustersagentpools.containerservice.azure.com',
      'https://github.com/kubernetes-sigs/cluster-api-provider-azure/issues/4982',
    ]);
    expect(JSON.stringify(steps)).not.toMatch(/azuremachinepool|providerIDList|vmss/);
  });
});

describe('names from a cluster', () => {
  it('are quoted so that a copied command runs only what it shows', () => {
    expect(shellQuote('pool0-2')).toBe('pool0-2');
    expect(shellQuote("a'b; rm -rf /")).toBe(`'a'\\''b; rm -rf /'`);
    expect(shellQuote('$(curl evil)')).toBe(`'$(curl evil)'`);
  });

  it('are quoted in commands and encoded in links', () => {
    const b = buildScenario('s04-one-vm-failed-main', { context: 'prod $(id)', namespace: "team's" });
    const d = analyzePool(b.input, { now: b.now });
    const [del] = nextSteps('instance-failed', d);
    expect(del?.command).toBe(`kubectl --context 'prod $(id)' -n 'team'\\''s' delete machine pool0-2`);
    for (const s of nextSteps('instance-failed', d))
      if (s.href) expect(s.href).toMatch(/^https:\/\/(portal\.azure\.com|github\.com)\//);
  });
});
