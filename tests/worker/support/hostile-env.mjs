// A test entry: the real handler (dist/worker), called with an `env` whose
// EDGESHED binding throws when it is read, in the way `env.VARIANT` names.
// workerd's own bindings are plain data; this stands for any value that
// throws (a getter, a proxy) and checks that no read of the binding can
// throw through Rust (which would leave the isolate broken).
import wasm from "../../../dist/worker/edgeshed_bg.wasm";
import { initSync, handle } from "../../../dist/worker/edgeshed.js";

initSync({ module: wasm });

const boom = (what) => {
  throw new Error(`${what} boom`);
};
const revoked = Proxy.revocable({}, {});
revoked.revoke();
const throwingItem = [];
Object.defineProperty(throwingItem, 0, { get: () => boom("item"), enumerable: true });

const VARIANTS = {
  // reading env.EDGESHED itself throws
  getter: () => ({
    get EDGESHED() {
      return boom("getter");
    },
  }),
  // Object.entries of the binding throws
  ownKeys: () => ({ EDGESHED: new Proxy({}, { ownKeys: () => boom("ownKeys") }) }),
  // Array.isArray of the binding throws
  revoked: () => ({ EDGESHED: revoked.proxy }),
  // a nested value's getter throws
  nested: () => ({
    EDGESHED: {
      get origins() {
        return boom("nested");
      },
    },
  }),
  // an array element's getter throws
  item: () => ({ EDGESHED: { routes: throwingItem } }),
};

export default {
  fetch(request, env, ctx) {
    return handle(request, VARIANTS[env.VARIANT](), ctx);
  },
};
