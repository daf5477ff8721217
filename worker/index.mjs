// The worker's entry: instantiate the wasm module once per isolate and hand
// every request to the Rust handler. Everything else lives in crates/edgeshed-worker/.
import wasm from "../dist/worker/edgeshed_bg.wasm";
import { initSync, handle } from "../dist/worker/edgeshed.js";

initSync({ module: wasm });

// The fleet budget's Durable Object class (wrangler.toml binds it).
export { EdgeshedBudget } from "./budget.mjs";

export default {
  fetch(request, env, ctx) {
    return handle(request, env, ctx);
  },
};
