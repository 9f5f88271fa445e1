export function writeEnvFile(file: string, title: string, env: Record<string, string>): void;
export function readEnvFile(file: string): Record<string, string>;
