// Browser entry (plain ES modules, no bundler): fetches and instantiates the
// wasm module next to this file before exporting the API.
import init, { Limiter } from "./edgeshed.js";
import { wrapEntryPoints } from "./errors.js";

await init({ module_or_path: new URL("./edgeshed_bg.wasm", import.meta.url) });

// A refusal's stack starts at the caller of run / fetch (see glue.js).
wrapEntryPoints(Limiter.prototype);

export { Limiter };
export { OverloadedError, DeadlineError, RateLimitedError } from "./errors.js";
