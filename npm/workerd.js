// workerd / Cloudflare Workers entry: the runtime forbids compiling wasm from
// bytes, so the module is imported (as a CompiledWasm module) and
// instantiated synchronously at module scope.
import wasm from "./edgeshed_bg.wasm";
import { initSync } from "./edgeshed.js";

initSync({ module: wasm });

export { Limiter } from "./edgeshed.js";
export { OverloadedError, DeadlineError } from "./errors.js";
