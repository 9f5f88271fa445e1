import { describe, expect, it } from 'vitest';
import { collatorRowOrder, compareRowKeys, inRowOrder, setRowOrderTableLimit, sortByRowKey } from './row-order';

const id = (n: string) =>
  `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/${n}`;

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

  it("gives the collator's order through its shortcut for instances of one scale set, and everywhere else", () => {
    // Random IDs built to hit the shortcut and every way out of it: other parents (one character apart, at the
    // start or just before the last slash), names that are not numbers, leading zeros, equal numbers, numbers
    // too long for a double, Flex VM names, empty tails and keys without a slash.
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const tails = () => [
      String(rnd(1000)),
      `0${rnd(100)}`,
      `${rnd(10)}a`,
      'vm-' + rnd(50),
      '',
      '12345678901234567890',
      String(rnd(3)),
    ];
    const parents = [
      'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/',
      'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/poom/virtualMachines/',
      'Azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines/',
      'azure:///subscriptions/s/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/',
      'x/',
      '',
      'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool/virtualMachines-',
    ];
    const keys: string[] = [];
    for (let i = 0; i < 400; i++) {
      const t = tails();
      keys.push((parents[rnd(parents.length)] as string) + (t[rnd(t.length)] as string));
    }
    let shortcut = 0;
    for (const a of keys) {
      for (const b of keys) {
        expect(Math.sign(compareRowKeys(a, b)), `${a} vs ${b}`).toBe(Math.sign(collatorRowOrder(a, b)));
        if (a !== b && a.slice(0, a.lastIndexOf('/')) === b.slice(0, b.lastIndexOf('/'))) shortcut++;
      }
    }
    // The shortcut was taken often enough for the comparison to mean something.
    expect(shortcut).toBeGreaterThan(10_000);
    // Sorting by places looked up once, and checking an order so, agree with the collator too.
    const sorted = [...keys].sort(collatorRowOrder);
    const unique = sorted.filter((k, i) => k !== sorted[i - 1]);
    expect(
      sortByRowKey(
        keys.map((k, i) => ({ k, i })),
        (x) => x.k,
      ).map((x) => x.k),
    ).toEqual(sorted);
    expect(inRowOrder(unique)).toBe(true);
    expect(inRowOrder([...unique].reverse())).toBe(false);
  });
});

describe('row order shortcut tables', () => {
  it("give the collator's order while they start afresh again and again", () => {
    // A limit of 3 IDs: the tables start afresh within most sorts and between the two lookups of a comparison
    // (a parent's number from one generation must not be compared with another generation's).
    const limit = setRowOrderTableLimit(3);
    try {
      const a = (n: number) =>
        `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/a/virtualMachines/${n}`;
      const b = (n: number) =>
        `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/b/virtualMachines/${n}`;
      const keys = [a(10), b(2), a(9), b(30), a(1), b(4), a(100), b(1)];
      const expected = [...keys].sort(collatorRowOrder);
      for (let r = 0; r < 20; r++) {
        const shuffled = [...keys].sort(() => (r % 3) - 1);
        expect(
          sortByRowKey(
            shuffled.map((k) => ({ k })),
            (x) => x.k,
          ).map((x) => x.k),
        ).toEqual(expected);
        expect(inRowOrder(expected)).toBe(true);
        expect(inRowOrder(shuffled)).toBe(shuffled.every((k, i) => k === expected[i]));
        expect(shuffled.sort(compareRowKeys)).toEqual(expected);
        for (const x of keys)
          for (const y of keys)
            expect(Math.sign(compareRowKeys(x, y)), `${x} vs ${y}`).toBe(Math.sign(collatorRowOrder(x, y)));
      }
    } finally {
      setRowOrderTableLimit(limit);
    }
  });
});
