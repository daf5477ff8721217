// Node.js entry: compiles the wasm module from the file next to this one.
import { readFileSync } from "node:fs";
import { initSync, Limiter } from "./edgeshed.js";
import { wrapEntryPoints } from "./errors.js";

initSync({ module: readFileSync(new URL("./edgeshed_bg.wasm", import.meta.url)) });

// A refusal's stack starts at the caller of run / fetch (see glue.js).
wrapEntryPoints(Limiter.prototype);

export { Limiter };
export { OverloadedError, DeadlineError, RateLimitedError } from "./errors.js";
