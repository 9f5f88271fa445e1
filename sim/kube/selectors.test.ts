import { describe, expect, it } from 'vitest';
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', 'cluster.x-k8s.io/pool-name': 'pool0' };
  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app=db', false],
    ['tier in (front,back)', true],
    ['tier notin (front)', false],
    ['missing notin (x)', true],
    ['cluster.x-k8s.io/pool-name', true],
    ['!cluster.x-k8s.io/pool-name', false],
    ['!missing', true],
    ['app=web,tier in (back)', false],
    ['app=web, tier in (front, back)', true],
  ])('%j → %s', (sel, expected) => {
    expect(matchLabels(parseLabelSelector(sel), labels)).toBe(expected);
  });

  it.each(['a in (b', 'a b', '=x', 'a=b=c', 'Bad Key=x'])('rejects %j', (sel) => {
    expect(() => parseLabelSelector(sel)).toThrow(SelectorError);
  });
});

describe('field selectors', () => {
  it('matches metadata.name and metadata.namespace', () => {
    const meta = { name: 'pool0', namespace: 'default' };
    expect(matchFields(parseFieldSelector('metadata.name=pool0'), meta)).toBe(true);
    expect(matchFields(parseFieldSelector('metadata.name=pool0,metadata.namespace!=default'), meta)).toBe(false);
  });
  it('rejects other fields, as the API server does for custom resources', () => {
    expect(() => parseFieldSelector('spec.replicas=3')).toThrow('field label not supported: spec.replicas');
  });
});
