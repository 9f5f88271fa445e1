import type { Server } from 'node:http';

export function startAuthProxy(opts: {
  port: number;
  target: string;
  user: string;
  groups: string[];
  secret: string;
}): Promise<Server>;
