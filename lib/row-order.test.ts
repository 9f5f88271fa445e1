import { describe, expect, it } from 'vitest';
import { compareRowKeys, inRowOrder } from './row-order';

const id = (n: string) => `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/${n}`;

describe('row order', () => {
  it('orders instances by number, and is total: IDs the collator holds equal still have an order', () => {
    expect([id('10'), id('9'), id('1')].sort(compareRowKeys)).toEqual([id('1'), id('9'), id('10')]);
    // "01" and "1" are the same number to the collator; they are still two rows, in a fixed order.
    expect(compareRowKeys(id('01'), id('1'))).not.toBe(0);
    expect(Math.sign(compareRowKeys(id('01'), id('1')))).toBe(-Math.sign(compareRowKeys(id('1'), id('01'))));
    expect(compareRowKeys(id('7'), id('7'))).toBe(0);
  });

  it('tells a table in order, each key once', () => {
    expect(inRowOrder([id('1'), id('2'), id('10')])).toBe(true);
    expect(inRowOrder([id('2'), id('10'), id('1')])).toBe(false);
    expect(inRowOrder([id('1'), id('1')])).toBe(false);
    expect(inRowOrder([])).toBe(true);
  });
});
