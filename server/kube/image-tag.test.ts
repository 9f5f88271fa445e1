import { describe, expect, it } from 'vitest';
import { imageTag } from './one-off-calls';

describe('imageTag', () => {
  it.each([
    ['registry.k8s.io/cluster-api-azure/cluster-api-azure-controller:v1.26.0', 'v1.26.0'],
    ['gcr.io/k8s-staging-cluster-api-azure/cluster-api-azure-controller:main', 'main'],
    ['localhost:5000/capz:v1.19.4', 'v1.19.4'],
    ['localhost:5000/capz', null],
    ['registry.k8s.io/capz@sha256:0123abcd', null],
    [undefined, null],
  ])('%s → %s', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });
});
