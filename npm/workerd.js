// workerd / Cloudflare Workers entry: the runtime forbids compiling wasm from
// bytes, so the module is imported (as a CompiledWasm module) and
// instantiated synchronously at module scope.
import wasm from "./edgeshed_bg.wasm";
import { initSync, Limiter } from "./edgeshed.js";
import { wrapEntryPoints } from "./errors.js";

initSync({ module: wasm });

// A refusal's stack starts at the caller of run / fetch (see glue.js).
wrapEntryPoints(Limiter.prototype);

export { Limiter };
export { OverloadedError, DeadlineError, RateLimitedError } from "./errors.js";
