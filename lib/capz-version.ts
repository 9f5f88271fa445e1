// Which readiness semantics a CAPZ build has (docs/domain.md, "When CAPZ marks an AzureMachinePool ready" and
// "CAPZ versions"): the AzureMachinePool `status.ready` rules changed in v1.20 (#5537) and again on main
// (#6488, not in a release tag as of 2026-08).

export type CapzReadiness = 'pre-1.20' | '1.20-1.26' | 'main';

/** A controller image tag's release as a number to compare (1.19 → 119), Infinity for "main", null when it says nothing. */
function release(tag: string | null | undefined): number | null {
  if (!tag) return null;
  if (/^main\b/i.test(tag)) return Infinity;
  const m = /^v?(\d+)\.(\d+)/.exec(tag);
  return m ? Number(m[1]) * 100 + Number(m[2]) : null;
}

/**
 * Maps a controller image tag ("v1.19.1", "1.26.0", "v1.27.0-beta.0", "main") to its semantics, or null
 * when the tag says nothing (a digest, "latest"). Releases after 1.26 are assumed to carry #6488.
 */
export function capzReadiness(tag: string | null | undefined): CapzReadiness | null {
  const r = release(tag);
  if (r === null) return null;
  if (r < 120) return 'pre-1.20';
  if (r <= 126) return '1.20-1.26';
  return 'main';
}

/** Whether a CAPZ build sorts the AzureMachinePool's spec.providerIDList (v1.23.0 and later, #6011); null when the tag says nothing. */
export function capzSortsList(tag: string | null | undefined): boolean | null {
  const r = release(tag);
  return r === null ? null : r >= 123;
}

export const CAPZ_READINESS_TEXT: Record<CapzReadiness, string> = {
  'pre-1.20':
    'CAPZ before v1.20 marks the AzureMachinePool not ready whenever ready AMPMs differ from spec.replicas, and while the scale set is Updating, Creating, Deleting or Failed.',
  '1.20-1.26':
    'CAPZ v1.20–v1.26 keeps the AzureMachinePool ready while scaling and even when the scale set is Failed (#5860); only Creating and Deleting mark it not ready.',
  main: 'CAPZ builds with #6488 (main) mark the AzureMachinePool not ready when the scale set is Failed, Canceled or Deleted, and while it is Creating or Deleting.',
};
