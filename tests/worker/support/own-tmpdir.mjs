// Importing this module gives the process a temp folder of its own, removed
// when the process exits (also through process.exit, as under
// `node --test --test-force-exit`): everything that asks os.tmpdir() from then
// on, and every child process, writes there. Miniflare needs it: dispose()
// removes Miniflare's temp folder without waiting, so a process that exits
// right after leaves it behind; so does wrangler's update check (a cache in
// os.tmpdir()). Import it before anything starts Miniflare or wrangler.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const OWN_TMPDIR = mkdtempSync(join(tmpdir(), "edgeshed-proc-"));
process.env.TMPDIR = OWN_TMPDIR;
process.on("exit", () => rmSync(OWN_TMPDIR, { recursive: true, force: true, maxRetries: 5 }));
