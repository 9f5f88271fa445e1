// `npm run sim -- --scenario <file>` starts a simulated fleet from a scenario file; `npm run sim -- <dir>`
// starts Kubernetes clusters from a manifest directory (see sim/README.md). Prints where everything is and
// stops cleanly on Ctrl-C.

import path from 'node:path';
import { startSimulation } from './index';
import { ManifestError, readManifestDir } from './kube/manifests';
import { startKubeSimulator } from './kube/simulator';
import { fleetScenario, parseFleetSpec } from './world/fleet';
import { capzSummary, readScenario, ScenarioError, type Scenario } from './world/scenario';

function usage(): never {
  console.error(`usage: npm run sim -- --scenario <file.yaml> [--speed <n>] [--state-dir <dir>]
       npm run sim -- --fleet <clusters>x<pools>x<instances>[,subs=S][,regions=a+b][,churn=0.01][,spread][,capz=main][,static] [--speed <n>]
       npm run sim -- <manifest-dir> [--kubeconfig <path>]
  e.g. npm run sim -- --scenario sim/scenarios/seed-scale-up-frozen.yaml`);
  process.exit(2);
}

function onStop(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    void stop().then(() => process.exit(0));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

async function runScenario(
  source: { file: string } | { fleet: string },
  speed: number | undefined,
  stateDir: string | undefined,
): Promise<void> {
  let scenario: Scenario;
  try {
    scenario = 'file' in source ? readScenario(path.resolve(source.file)) : fleetScenario(parseFleetSpec(source.fleet));
  } catch (e) {
    console.error(`sim: ${(e as Error).message}`);
    process.exit(e instanceof ScenarioError ? 1 : 2);
  }
  const sim = await startSimulation(scenario, { speed, stateDir: stateDir && path.resolve(stateDir) });
  console.log(
    `poolscope simulator running scenario "${scenario.name}"${scenario.controllers ? ` (controllers on, CAPZ ${capzSummary(scenario)}, speed ${speed ?? scenario.speed}×)` : ' (static)'}`,
  );
  for (const [name, server] of sim.kube.clusters) {
    const role = scenario.management.has(name) ? 'management' : 'workload';
    console.log(`  ${role.padEnd(10)} ${name.padEnd(20)} ${server.url}`);
  }
  console.log(`  azure      ${'ARM + token endpoint'.padEnd(20)} ${sim.azure.url}`);
  console.log(
    `\nkubeconfig: ${sim.kubeconfigPath}\nenv file:   ${sim.envPath}\n  set -a; . ${sim.envPath}; set +a\n  kubectl get machinepools -A\n\nCtrl-C to stop.`,
  );
  onStop(sim.stop);
}

async function runManifests(dir: string, kubeconfigPath: string | undefined): Promise<void> {
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
  const sim = await startKubeSimulator({
    clusters,
    kubeconfigPath: kubeconfigPath && path.resolve(kubeconfigPath),
    log: (m) => console.error(m),
  });
  console.log('poolscope simulator running');
  for (const [name, server] of sim.clusters) {
    const role = clusters.find((c) => c.name === name)?.role;
    console.log(`  ${role?.padEnd(10)} ${name.padEnd(20)} ${server.url}`);
  }
  for (const [user, file] of sim.userKubeconfigPaths) console.log(`  kubeconfig for ${user}: ${file}`);
  console.log(
    `\nkubeconfig: ${sim.kubeconfigPath}\n  export KUBECONFIG=${sim.kubeconfigPath}\n  kubectl get machinepools -A\n\nCtrl-C to stop.`,
  );
  onStop(sim.stop);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let dir: string | undefined;
  let scenario: string | undefined;
  let fleet: string | undefined;
  let kubeconfigPath: string | undefined;
  let stateDir: string | undefined;
  let speed: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--scenario') scenario = args[++i] ?? usage();
    else if (a === '--fleet') fleet = args[++i] ?? usage();
    else if (a === '--kubeconfig') kubeconfigPath = args[++i] ?? usage();
    else if (a === '--state-dir') stateDir = args[++i] ?? usage();
    else if (a === '--speed') {
      speed = Number(args[++i]);
      if (!(speed > 0)) usage();
    } else if (a === '-h' || a === '--help' || a.startsWith('-')) usage();
    else dir = a;
  }
  if (scenario) await runScenario({ file: scenario }, speed, stateDir);
  else if (fleet) await runScenario({ fleet }, speed, stateDir);
  else if (dir) await runManifests(dir, kubeconfigPath);
  else usage();
}

void main().catch((e: unknown) => {
  console.error(`sim: ${(e as Error).message}`);
  process.exit(1);
});
