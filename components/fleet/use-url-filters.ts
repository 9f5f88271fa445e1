'use client';
// The fleet's filters and sort as controls hold them: they answer at once and the URL follows (a replace, so the
// view stays a shareable link); when the URL changes by itself (back, forward, a link, a header's sort), the
// controls take its values.

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { fleetQuery, type FleetFilters } from '@/lib/url-state';

/** `onUrlChange`: called (while rendering) with the URL's filters when they replace the controls' values. */
export function useUrlFilters(
  fromUrl: FleetFilters,
  onUrlChange?: (f: FleetFilters) => void,
): [FleetFilters, (next: FleetFilters) => void] {
  const router = useRouter();
  const urlQuery = fleetQuery(fromUrl);
  const [seen, setSeen] = useState(urlQuery);
  const [filters, setFilters] = useState(fromUrl);
  if (urlQuery !== seen) {
    setSeen(urlQuery);
    setFilters(fromUrl);
    onUrlChange?.(fromUrl);
  }
  const go = (next: FleetFilters) => {
    setFilters(next);
    const q = fleetQuery(next);
    router.replace(q ? `/?${q}` : '/', { scroll: false });
  };
  return [filters, go];
}
