// The soak's origins (benches/soak/soak.mjs), with their capacities and
// deterministic faults. See benches/support/capacity-origins.mjs for the
// servers and the protocol.
//
//   fork("benches/soak/origins.mjs", [JSON.stringify({ users: { capacity: 4, latencyMs: 25, failEvery: 200, ... }, ... })])
import { serveToParent } from "../support/capacity-origins.mjs";

await serveToParent(JSON.parse(process.argv[2]));
