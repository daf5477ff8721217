// The worker's entry: instantiate the wasm module once per isolate and hand
// every request to the Rust handler. Everything else lives in crates/edgeshed-worker/.
import wasm from "../dist/worker/edgeshed_bg.wasm";
import { initSync, handle } from "../dist/worker/edgeshed.js";

initSync({ module: wasm });

export default {
  fetch(request, env, ctx) {
    return handle(request, env, ctx);
  },
};
