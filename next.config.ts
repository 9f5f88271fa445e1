import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // The image runs `.next/standalone/server.js` (scripts/build.mjs copies the static assets next to it).
  output: 'standalone',
  reactStrictMode: true,
  poweredByHeader: false,
  // Every answer gzipped for clients that accept it (Next's default, stated: a route cannot compress its own body,
  // Next drops the Content-Encoding it sets).
  compress: true,
};

export default nextConfig;
