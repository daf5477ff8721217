// workerd / Cloudflare Workers entry: the runtime forbids compiling wasm from
// bytes, so the module is imported (as a CompiledWasm module) and
// instantiated synchronously at module scope.
import * as workers from "cloudflare:workers";
import wasm from "./edgeshed_bg.wasm";
import { initSync, Limiter, useWaitUntil } from "./edgeshed.js";
import { wrapEntryPoints } from "./errors.js";

initSync({ module: wasm });
// fetch bodies are piped under cloudflare:workers' waitUntil (where it has
// one), so a client that goes away frees the slot at once: docs/js.md.
// (A namespace import: an older workerd without waitUntil still loads.)
useWaitUntil(workers);

// A refusal's stack starts at the caller of run / fetch (see glue.js).
wrapEntryPoints(Limiter.prototype);

export { Limiter };
export { OverloadedError, DeadlineError, RateLimitedError } from "./errors.js";
