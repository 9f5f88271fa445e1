import { describe, expect, it } from 'vitest';
import { capzReadiness, capzSortsList } from './capz-version';

describe('capzReadiness (docs/domain.md, "When CAPZ marks an AzureMachinePool ready" and "CAPZ versions")', () => {
  it.each([
    ['v1.16.0', 'pre-1.20'],
    ['v1.19.1', 'pre-1.20'],
    ['1.20.0', '1.20-1.26'],
    ['v1.26.0', '1.20-1.26'],
    ['v1.27.0-beta.0', 'main'],
    ['main', 'main'],
    ['v2.0.0', 'main'],
    ['v0.5.3', 'pre-1.20'],
    ['latest', null],
    ['sha256:0123abcd', null],
    ['', null],
    [null, null],
  ] as const)('%j → %j', (tag, expected) => {
    expect(capzReadiness(tag)).toBe(expected);
  });
});

describe('capzSortsList (CAPZ #6011, v1.23.0)', () => {
  it.each([
    ['v1.22.9', false],
    ['v1.23.0', true],
    ['1.26.1', true],
    ['main', true],
    ['v2.0.0', true],
    ['latest', null],
    [null, null],
  ] as const)('%j → %j', (tag, expected) => {
    expect(capzSortsList(tag)).toBe(expected);
  });
});
