// `npm run sim -- <dir>`: starts simulated clusters from a directory of YAML manifests (see sim/README.md),
// prints where they are, and stops cleanly on Ctrl-C.

import path from 'node:path';
import { readManifestDir, ManifestError } from './kube/manifests';
import { startKubeSimulator } from './kube/simulator';

function usage(): never {
  console.error('usage: npm run sim -- <manifest-dir> [--kubeconfig <path>]\n  e.g. npm run sim -- sim/manifests/seed-scale-up-frozen');
  process.exit(2);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let dir: string | undefined;
  let kubeconfigPath: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--kubeconfig') kubeconfigPath = args[++i] ?? usage();
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage();
    else dir = a;
  }
  if (!dir) usage();
  let clusters;
  try {
    clusters = readManifestDir(path.resolve(dir));
  } catch (e) {
    if (e instanceof ManifestError) {
      console.error(`sim: ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
  let sim;
  try {
    sim = await startKubeSimulator({ clusters, kubeconfigPath: kubeconfigPath && path.resolve(kubeconfigPath), log: (m) => console.error(m) });
  } catch (e) {
    console.error(`sim: ${(e as Error).message}`);
    process.exit(1);
  }
  console.log('poolscope simulator running');
  for (const [name, server] of sim.clusters) {
    const role = clusters.find((c) => c.name === name)?.role;
    console.log(`  ${role?.padEnd(10)} ${name.padEnd(20)} ${server.url}`);
  }
  for (const [user, file] of sim.userKubeconfigPaths) console.log(`  kubeconfig for ${user}: ${file}`);
  console.log(`\nkubeconfig: ${sim.kubeconfigPath}\n  export KUBECONFIG=${sim.kubeconfigPath}\n  kubectl get machinepools -A\n\nCtrl-C to stop.`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    await sim.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

void main();
