'use client';

import { useHydratedView } from './use-live-updates';

/**
 * On a page with no server-rendered data view (a message, a 404): it says so once hydrated, so that the live
 * stream connects then instead of waiting its few seconds for a view that will not come.
 */
export function NoDataView() {
  useHydratedView();
  return null;
}
