// The e2e bench's origins (benches/e2e/run.mjs): `names`, each serving at
// most `concurrency` requests at once in `latencyMs`, queueing the rest.
// See benches/support/capacity-origins.mjs for the servers and the protocol.
//
//   fork("benches/e2e/origin.mjs", [JSON.stringify({ names: ["a", "b"], concurrency: 4, latencyMs: 50 })])
import { serveToParent } from "../support/capacity-origins.mjs";

const { names, concurrency, latencyMs } = JSON.parse(process.argv[2]);
await serveToParent(Object.fromEntries(names.map((name) => [name, { capacity: concurrency, latencyMs }])));
