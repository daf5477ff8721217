// Node.js entry: compiles the wasm module from the file next to this one.
import { readFileSync } from "node:fs";
import { initSync } from "./edgeshed.js";

initSync({ module: readFileSync(new URL("./edgeshed_bg.wasm", import.meta.url)) });

export { Limiter } from "./edgeshed.js";
export { OverloadedError, DeadlineError } from "./errors.js";
