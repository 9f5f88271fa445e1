import { describe, expect, it } from 'vitest';
import {
  OTHER_SCALE_SET,
  autoscalerKey,
  belongsToScaleSet,
  compareProviderIds,
  joinKey,
  parseProviderId,
  providerIdFromArmId,
  providerIdProblem,
  scaleSetKeyOf,
  type ParsedProviderId,
} from './provider-id';
import { isInterned } from './slim';

const SUB = '6f0a3c1e-2b4d-4e8f-9a1b-7c5d3e2f1a0b';
const UNIFORM = `azure:///subscriptions/${SUB}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/17`;
const FLEX = `azure:///subscriptions/${SUB}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachines/pool0_1a2b3c4d`;
const VMSS = `azure:///subscriptions/${SUB}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool0`;

describe('parseProviderId', () => {
  it.each([
    ['uniform instance', UNIFORM, { kind: 'vmss-instance', scaleSet: 'pool0', instanceId: '17', vmName: null }],
    ['flexible VM', FLEX, { kind: 'vm', scaleSet: null, instanceId: null, vmName: 'pool0_1a2b3c4d' }],
    ['scale set', VMSS, { kind: 'vmss', scaleSet: 'pool0', instanceId: null, vmName: null }],
    [
      'nested flexible member',
      `azure:///subscriptions/${SUB}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/pool0_1a2b3c4d`,
      { kind: 'vmss-instance', scaleSet: 'pool0', instanceId: null, vmName: 'pool0_1a2b3c4d' },
    ],
  ])('parses a %s and keeps the raw string', (_name, raw, expected) => {
    expect(parseProviderId(raw)).toEqual({
      ok: true,
      raw,
      subscriptionId: SUB,
      resourceGroup: 'prod-weu',
      ...expected,
    });
  });

  it('keeps the case of every value, matching segment names case-insensitively', () => {
    const raw = `azure:///SUBSCRIPTIONS/${SUB}/resourcegroups/Prod-WEU/PROVIDERS/microsoft.compute/VirtualMachineScaleSets/Pool0/virtualmachines/3`;
    const p = parseProviderId(raw);
    expect(p).toMatchObject({ ok: true, resourceGroup: 'Prod-WEU', scaleSet: 'Pool0', instanceId: '3' });
  });

  it.each([
    ['', 'empty'],
    ['aws:///us-east-1a/i-0123', 'does not start with azure://'],
    ['azure://subscriptions/x', 'expected azure:/// followed by an ARM resource ID'],
    [
      `azure:///subscriptions/${SUB}/resourceGroups/rg`,
      'expected /subscriptions/<id>/resourceGroups/<name>/providers/…',
    ],
    [
      `azure:///subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/nic`,
      'not a Microsoft.Compute resource',
    ],
    [
      `azure:///subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/disks/d1`,
      'expected a scale set, a scale set instance or a virtual machine',
    ],
    [
      `azure:///subscriptions/${SUB}//resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/a`,
      'empty path segment',
    ],
  ])('returns a typed error for %j', (raw, reason) => {
    expect(parseProviderId(raw)).toEqual({ ok: false, raw, reason });
  });

  it('shares the parts of the IDs it parses (a fleet repeats a few subscriptions, groups and scale sets)', () => {
    const raw = `azure:///subscriptions/${SUB}/resourceGroups/rg-shared-parts/providers/Microsoft.Compute/virtualMachineScaleSets/pool-shared-parts/virtualMachines/4711`;
    const p = parseProviderId(raw) as ParsedProviderId;
    for (const part of [p.subscriptionId, p.resourceGroup, p.scaleSet as string])
      expect(isInterned(part), part).toBe(true);
  });

  it('gives each ID of a scale set its own member, asked in any order and again (the parts are kept per scale set)', () => {
    const id = (member: string, ss = 'pool-members') =>
      `azure:///subscriptions/${SUB}/resourceGroups/rg-members/providers/Microsoft.Compute/virtualMachineScaleSets/${ss}/virtualMachines/${member}`;
    const flex = (name: string, rg = 'rg-members') =>
      `azure:///subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachines/${name}`;
    const asked = [
      id('3'),
      id('12'),
      id('pool-members_ab12'),
      flex('pool-members_cd34'),
      flex('other_ef56'),
      id('3', 'Pool-Members'),
      flex('x_1', 'RG-Members'),
    ];
    const want = [
      { kind: 'vmss-instance', scaleSet: 'pool-members', instanceId: '3', vmName: null, resourceGroup: 'rg-members' },
      { kind: 'vmss-instance', scaleSet: 'pool-members', instanceId: '12', vmName: null, resourceGroup: 'rg-members' },
      {
        kind: 'vmss-instance',
        scaleSet: 'pool-members',
        instanceId: null,
        vmName: 'pool-members_ab12',
        resourceGroup: 'rg-members',
      },
      { kind: 'vm', scaleSet: null, instanceId: null, vmName: 'pool-members_cd34', resourceGroup: 'rg-members' },
      { kind: 'vm', scaleSet: null, instanceId: null, vmName: 'other_ef56', resourceGroup: 'rg-members' },
      // Another spelling keeps its own case.
      { kind: 'vmss-instance', scaleSet: 'Pool-Members', instanceId: '3', vmName: null, resourceGroup: 'rg-members' },
      { kind: 'vm', scaleSet: null, instanceId: null, vmName: 'x_1', resourceGroup: 'RG-Members' },
    ].map((w, i) => ({ ok: true, raw: asked[i], subscriptionId: SUB, ...w }));
    for (const order of [asked, [...asked].reverse(), asked]) {
      const got = order.map((raw) => parseProviderId(raw));
      expect(got).toEqual(order.map((raw) => want[asked.indexOf(raw)]));
    }
    // A parse is the caller's: changing it changes no later parse.
    const first = parseProviderId(asked[0]) as ParsedProviderId & { instanceId: string | null };
    first.instanceId = 'changed';
    expect(parseProviderId(asked[0])).toMatchObject({ instanceId: '3' });
  });

  it('tells why an ID cannot be read without parsing it into an object (null when it can)', () => {
    expect(providerIdProblem(UNIFORM)).toBeNull();
    expect(providerIdProblem(FLEX)).toBeNull();
    expect(providerIdProblem(VMSS)).toBeNull();
    expect(providerIdProblem('aws:///us-east-1a/i-0123')).toBe('does not start with azure://');
    expect(
      providerIdProblem(`azure:///subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/disks/d1`),
    ).toBe('expected a scale set, a scale set instance or a virtual machine');
    expect(providerIdProblem(42)).toBe('not a string');
  });

  it.each([[undefined], [null], [42], [{}]])('never throws on a non-string (%j)', (raw) => {
    expect(parseProviderId(raw)).toMatchObject({ ok: false, reason: 'not a string' });
  });
});

describe('comparison', () => {
  const upper = UNIFORM.replace('prod-weu', 'Prod-WEU');
  it.each([
    [UNIFORM, UNIFORM, 'exact'],
    [UNIFORM, upper, 'case-insensitive'],
    [UNIFORM, UNIFORM.replace('/17', '/18'), 'none'],
    [UNIFORM, UNIFORM.replace('azure://', 'AZURE://'), 'case-insensitive'],
  ] as const)('compares %s and %s as %s', (a, b, expected) => {
    expect(compareProviderIds(a, b)).toBe(expected);
  });

  it('builds the join key without the prefix, lower-cased', () => {
    expect(joinKey(upper)).toBe(UNIFORM.slice('azure://'.length).toLowerCase());
  });
});

describe('autoscalerKey (cluster-autoscaler normalizedProviderString)', () => {
  it.each([
    [
      'keeps a VMSS instance ID whole, case and all',
      UNIFORM.replace('prod-weu', 'Prod-WEU'),
      UNIFORM.replace('prod-weu', 'Prod-WEU'),
    ],
    ['reduces a Flexible VM ID to the VM name', FLEX, 'pool0_1a2b3c4d'],
    ['reduces other providers to the last segment', 'aws:///us-east-1a/i-0123456789', 'i-0123456789'],
    [
      'reduces a lower-cased scale-set segment to the last segment',
      UNIFORM.replace('virtualMachineScaleSets', 'virtualmachinescalesets'),
      '17',
    ],
    ['keeps a string without slashes', 'node-1', 'node-1'],
  ])('%s', (_name, raw, expected) => {
    expect(autoscalerKey(raw)).toBe(expected);
  });
});

describe('providerIdFromArmId (CAPZ and cloud-provider-azure)', () => {
  it('lower-cases only the resource group', () => {
    expect(
      providerIdFromArmId(
        `/subscriptions/${SUB}/resourceGroups/Prod-WEU/providers/Microsoft.Compute/virtualMachineScaleSets/Pool0/virtualMachines/3`,
      ),
    ).toBe(
      `azure:///subscriptions/${SUB}/resourceGroups/prod-weu/providers/Microsoft.Compute/virtualMachineScaleSets/Pool0/virtualMachines/3`,
    );
  });

  it('turns a nested Flexible member into the standalone VM ID', () => {
    expect(
      providerIdFromArmId(
        `/subscriptions/${SUB}/resourceGroups/RG/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/pool0_1a2b3c4d`,
      ),
    ).toBe(
      `azure:///subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/pool0_1a2b3c4d`,
    );
  });
});

describe('belongsToScaleSet', () => {
  const vmss = parseProviderId(VMSS) as ParsedProviderId;
  it.each([
    [UNIFORM, true],
    [UNIFORM.replace('prod-weu', 'PROD-WEU'), true],
    [UNIFORM.replace('/pool0/', '/pool1/'), false],
    [FLEX, true],
    [FLEX.replace('pool0_', 'pool10_'), false],
    [VMSS, false],
  ])('%s → %s', (raw, expected) => {
    expect(belongsToScaleSet(parseProviderId(raw) as ParsedProviderId, vmss)).toBe(expected);
  });
});

describe('scaleSetKeyOf', () => {
  const sub = SUB.toLowerCase();
  it('names a scale set by subscription, group and name in lower case, and the flexible VMs of a group together', () => {
    expect(scaleSetKeyOf(UNIFORM)).toBe(`${sub}/prod-weu/pool0`);
    expect(scaleSetKeyOf(VMSS)).toBe(`${sub}/prod-weu/pool0`);
    expect(scaleSetKeyOf(FLEX)).toBe(`${sub}/prod-weu/~flex`);
    expect(scaleSetKeyOf(UNIFORM.toUpperCase().replace('AZURE://', 'azure://'))).toBe(`${sub}/prod-weu/pool0`);
    expect(scaleSetKeyOf('not an id')).toBe(OTHER_SCALE_SET);
    expect(scaleSetKeyOf(7)).toBe(OTHER_SCALE_SET);
  });

  it('keeps scale sets of the same name in other groups and subscriptions apart, asked in any order', () => {
    const other = (rg: string, s = SUB) =>
      `azure:///subscriptions/${s}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/1`;
    const ids = [
      UNIFORM,
      other('prod-neu'),
      other('prod-weu', '00000000-0000-0000-0000-000000000001'),
      other('prod-neu'),
      UNIFORM,
      FLEX,
    ];
    const want = [
      `${sub}/prod-weu/pool0`,
      `${sub}/prod-neu/pool0`,
      '00000000-0000-0000-0000-000000000001/prod-weu/pool0',
      `${sub}/prod-neu/pool0`,
      `${sub}/prod-weu/pool0`,
      `${sub}/prod-weu/~flex`,
    ];
    expect(ids.map(scaleSetKeyOf)).toEqual(want);
    expect([...ids].reverse().map(scaleSetKeyOf)).toEqual([...want].reverse());
    expect(isInterned(scaleSetKeyOf(other('prod-neu')))).toBe(true);
  });
});
