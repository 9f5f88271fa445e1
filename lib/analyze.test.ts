import { describe, expect, it } from 'vitest';
import { compareRowIds } from './analyze';

const collator = new Intl.Collator('en', { numeric: true });
const sign = (n: number) => Math.sign(n);

describe('instance table order (compareRowIds)', () => {
  it('orders a pool\'s IDs by their trailing number, as numeric collation does', () => {
    const base = 'azure:///subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/';
    const ids = [10, 2, 0, 100, 1, 19, 123, 20].map((n) => `${base}${n}`);
    expect([...ids].sort(compareRowIds).map((id) => id.slice(base.length))).toEqual(['0', '1', '2', '10', '19', '20', '100', '123']);
  });

  it('agrees with the collator on every pair of a mixed set (case, leading zeros, names, prefixes)', () => {
    const base = 'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/';
    const ids = [
      `${base}pool0/virtualMachines/3`, `${base}pool0/virtualMachines/12`, `${base}pool0/virtualMachines/012`,
      `${base}POOL0/virtualMachines/3`, `${base}pool0/virtualMachines/1`, `${base}pool0/virtualMachines/19`,
      `${base}pool1/virtualMachines/3`, `${base}pool10/virtualMachines/3`, `${base}pool0/virtualMachines/0`,
      `${base}pool0/virtualMachines/00`, `${base}pool0/virtualMachines/3a`, `${base}pool0/virtualMachines/`,
      'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/pool0_ab12',
      'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/pool0_ab9', '', '7', '70',
    ];
    for (const a of ids) for (const b of ids) expect(sign(compareRowIds(a, b)), `${a} vs ${b}`).toBe(sign(collator.compare(a, b)));
  });
});
