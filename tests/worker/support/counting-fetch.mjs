// A test entry: the real handler (dist/worker) with the global fetch()
// counted, so a test can see the origin calls that were started at all,
// also those aborted before anything reached the origin.
// GET /__test/fetches answers the URLs fetched so far.
import wasm from "../../../dist/worker/edgeshed_bg.wasm";
import { initSync, handle } from "../../../dist/worker/edgeshed.js";

initSync({ module: wasm });

const started = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  started.push(typeof input === "string" ? input : input.url);
  return realFetch(input, init);
};

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/__test/fetches") return Response.json(started);
    return handle(request, env, ctx);
  },
};
