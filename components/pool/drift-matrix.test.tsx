// Instances come or gone since Azure's last read: shown as not read yet, or as going, not as drift, in both tables.

import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { analyzePool } from '@/lib/analyze';
import { buildAksPool } from '@/lib/fixtures/aks-pool';
import { buildPool, healthyInstances } from '@/lib/fixtures/pool';
import { DriftMatrix, awaitingSentence } from './drift-matrix';
import { InstanceTable } from './instance-table';

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
const row = (html: string, member: string) =>
  text(html.match(new RegExp(`<tr[^>]*data-instance="${member}".*?</tr>`))?.[0] ?? '');

describe("an instance newer than Azure's last read", () => {
  // Azure listed the scale set a minute ago; instance 3's AMPM is 30 s old; instance 4's VM is gone (AMPM 5 min old).
  const d = analyzePool(
    buildPool({
      replicas: 4,
      capacity: 4,
      azureReadMinutesAgo: 1,
      instances: [
        ...healthyInstances(3),
        { member: '3', inAzure: false, node: 'none', createdMinutesAgo: 0.5 },
        { member: '4', inAzure: false, node: 'none', createdMinutesAgo: 5 },
      ],
    }).input,
    { now: '2026-11-29T12:00:00Z' },
  );

  it('reads "not read yet" in the Azure column of the drift matrix, and "absent" for a VM that is gone', () => {
    const html = renderToStaticMarkup(<DriftMatrix rows={d.instances} drift={d.drift} />);
    expect(row(html, '3')).toBe('3 … not read yet ✓ ✓ ✓ ✓ ✗ absent');
    expect(row(html, '4')).toMatch(/^4 ✗ absent ✓ ✓ ✓ ✓ ✗ absent /);
    expect(text(html)).toContain("1 instance newer than Azure's last read waits for the next one.");
  });

  it('says every source agrees only on what Azure has been asked about, when nothing else drifts', () => {
    const calm = { ...d, instances: d.instances.filter((r) => !r.providerID.endsWith('/4')) };
    const html = renderToStaticMarkup(<DriftMatrix rows={calm.instances} drift={[]} />);
    expect(text(html)).toContain(
      "Every source agrees on every instance Azure has been asked about. 1 instance newer than Azure's last read waits for the next one.",
    );
  });

  it('shows an instance the read lists, whose AMPM went after it, as going, and says so', () => {
    // Instance 5 is in Azure's read, but its AMPM (and Machine and Node) went 30 s ago, after the read.
    const g = analyzePool(
      buildPool({
        replicas: 3,
        azureReadMinutesAgo: 1,
        departedAmpms: [{ member: '5', minutesAgo: 0.5 }],
        instances: [...healthyInstances(3), { member: '5', ampm: false, node: 'none' }],
        mp: { providerIDList: [] },
      }).input,
      { now: '2026-11-29T12:00:00Z' },
    );
    const html = renderToStaticMarkup(<DriftMatrix rows={g.instances} drift={g.drift} />);
    expect(row(html, '5')).toBe('5 ✓ at last read ✗ absent ✗ absent ✗ absent ✗ absent ✗ absent');
    expect(text(html)).toContain(
      "1 instance whose AMPM went after Azure's last read, most likely gone, waits for the next one.",
    );
    expect(text(renderToStaticMarkup(<InstanceTable rows={g.instances} />))).toContain('pool0_5 (pool0000005) · going');
  });

  it('reads "not read yet" in the instance table, and "not in Azure" for a VM that is gone', () => {
    const html = text(renderToStaticMarkup(<InstanceTable rows={d.instances} />));
    expect(html.match(/not read yet/g)).toHaveLength(1);
    expect(html.match(/not in Azure/g)).toHaveLength(1);
  });
});

describe('awaitingSentence', () => {
  it('says nothing when nothing waits, and counts instances coming and going apart', () => {
    const r = (azure: boolean) =>
      ({ awaitingAzureRead: true, azure: azure ? {} : null }) as unknown as Parameters<
        typeof awaitingSentence
      >[0][number];
    expect(awaitingSentence([])).toBeNull();
    expect(awaitingSentence([r(false), r(false), r(true)])).toBe(
      "2 instances newer than Azure's last read wait for the next one. 1 instance whose AMPM went after Azure's last read, most likely gone, waits for the next one.",
    );
  });
});

describe("an AKS pool's tables", () => {
  // An AzureManagedMachinePool whose list froze: instance 2 has joined as a Node; Azure is not read.
  const d = analyzePool(buildAksPool({ flavour: 'aks-managed', mpList: [0, 1], nodes: [0, 1, 2], infraReady: false }), {
    now: '2026-11-29T12:02:00Z',
  });
  const props = { flavour: 'aks-managed', azureRead: d.sources.azure.state === 'ok' } as const;

  it('have the columns the flavour has, named after its kind, and Azure "not read" rather than absent', () => {
    const html = renderToStaticMarkup(<DriftMatrix rows={d.instances} drift={d.drift} {...props} />);
    expect(text(html)).toContain(
      'Instance Azure instances AzureManagedMachinePool spec.providerIDList MachinePool spec.providerIDList Nodes Drift',
    );
    expect(row(html, '2')).toBe('2 not read ✗ absent ✗ absent ✓ missing from MP missing from AMMP');
  });

  it('leave out the AMPM and Machine columns of the instance table', () => {
    const html = renderToStaticMarkup(<InstanceTable rows={d.instances} {...props} />);
    expect(text(html)).toContain('Azure VM Provisioning Power Latest model Error Node Autoscaler sees it');
    expect(text(html)).toContain('Azure not read');
    expect(text(html)).not.toContain('not in Azure');
  });
});
