// A test entry: the real handler (dist/worker), in an isolate whose
// `Response` constructor throws (a TypeError whose message quotes the
// header) when the headers it is given carry `x-test-refuse-response`.
// A proxied origin that sends that header so makes the handler throw at
// the last step of a prefix route, after its body holds the request's
// permits: the real way an exception escapes a request, which the
// production entry no longer has (an unrelayable status is a 502).
import wasm from "../../../dist/worker/edgeshed_bg.wasm";
import { initSync, handle } from "../../../dist/worker/edgeshed.js";

// What the refusal says (internal.test.mjs looks for it in the log; not
// exported: a main module's named exports are entrypoints to workerd).
const REFUSED = "test entry: this Response is refused";

const Original = globalThis.Response;
globalThis.Response = new Proxy(Original, {
  construct(target, args, newTarget) {
    const refuse = new Headers(args[1]?.headers).get("x-test-refuse-response");
    if (refuse !== null) throw new TypeError(`${REFUSED} (${refuse})`);
    return Reflect.construct(target, args, newTarget === globalThis.Response ? target : newTarget);
  },
});

initSync({ module: wasm });

export default {
  fetch(request, env, ctx) {
    return handle(request, env, ctx);
  },
};
