// Browser entry (plain ES modules, no bundler): fetches and instantiates the
// wasm module next to this file before exporting the API.
import init from "./edgeshed.js";

await init({ module_or_path: new URL("./edgeshed_bg.wasm", import.meta.url) });

export { Limiter } from "./edgeshed.js";
export { OverloadedError, DeadlineError } from "./errors.js";
