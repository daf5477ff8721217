// JavaScript helpers of the worker's handler (src/handler/*.rs),
// imported by wasm-bindgen as one module.

// --- src/handler/fanout/call.rs ---
export function readTextLimited(response, max) {
  try {
    return readLimited(response, max);
  } catch (error) {
    // Never throw through the caller's poll: reject instead.
    return Promise.reject(error);
  }
}
export function cancelBody(response) {
  try {
    response.body?.cancel().catch(() => {});
  } catch {
    // nothing more to release
  }
}
function readLimited(response, max) {
  const declared = Number(response.headers.get("content-length"));
  if (declared > max) {
    response.__edgeshedTooLarge = true;
    response.body?.cancel().catch(() => {});
    return Promise.resolve(null);
  }
  if (response.body === null) return Promise.resolve("");
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  const pump = () => reader.read().then(({ done, value }) => {
    if (done) return new TextDecoder().decode(concat(chunks, size));
    size += value.byteLength;
    if (size > max) {
      response.__edgeshedTooLarge = true;
      reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
    return pump();
  });
  return pump();
}
function concat(chunks, size) {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) { out.set(chunk, at); at += chunk.byteLength; }
  return out;
}
export function tooLarge(response) { return response.__edgeshedTooLarge === true; }

// --- src/handler/mod.rs ---
export function waitUntilSettled(ctx, promise) {
  try {
    if (ctx && typeof ctx.waitUntil === "function") {
      ctx.waitUntil(promise.then(() => {}, () => {}));
    }
  } catch {
    // A context that refuses (or a getter that throws): the task still ends
    // on its own timers; never throw into the handler.
  }
}

// The detail of an exception that escaped a request (its message, its
// stack: text for the operator, never for the client). Neither the console
// nor the error's own getters may throw into the handler.
export function logException(context, error) {
  try {
    console.error(context, error);
  } catch {
    try {
      console.error(context);
    } catch {
      // A console that throws must not break the request.
    }
  }
}

// --- src/handler/gateway.rs ---
export function logError(message) {
  try {
    console.error(message);
  } catch {
    // A console that throws must not break the request.
  }
}

// --- src/handler/origin/limit.rs ---
export function tryAbort(controller) {
  try {
    controller.abort();
  } catch {
    // Another request's controller (a reclaimed task): nothing to abort.
  }
}

// --- src/handler/respond.rs ---
export function makeResponse(status, body, lines) {
  const parts = lines.split("\n");
  const headers = new Headers();
  for (let i = 0; i + 1 < parts.length; i += 2) headers.append(parts[i], parts[i + 1]);
  return new Response(body, { status, headers });
}
export function cancelStream(stream) {
  try {
    stream.cancel().catch(() => {});
  } catch {
    // nothing more to release
  }
}

// --- src/handler/proxy/held.rs ---
// The reason a proxied body whose origin went silent is cut with.
export function originStalled() {
  return new Error("origin body stalled");
}

// --- src/handler/convert.rs ---
// A plain copy of the EDGESHED binding, made before serde-wasm-bindgen reads
// it (its reads do not catch). Throws, as a string, the configuration error
// of a value that cannot be read: the key that threw, a depth over 32 (a
// cycle), a function, symbol or bigint. It judges no type or range: that is
// the deserializer's job.
export function plainCopy(value) {
  return copyOf(value, "EDGESHED", 0);
}
function copyOf(value, path, depth) {
  if (depth > 32) throw `${path} is nested too deeply`;
  if (value === null || value === undefined) return value;
  const type = typeof value;
  if (type === "boolean" || type === "number" || type === "string") return value;
  if (type !== "object") throw `${path} has an unsupported value (a ${type})`;
  if (guarded(path, () => Array.isArray(value))) {
    const length = guarded(path, () => value.length);
    const out = [];
    for (let index = 0; index < length; index++) {
      const at = `${path}[${index}]`;
      out.push(copyOf(guarded(at, () => value[index]), at, depth + 1));
    }
    return out;
  }
  const out = {};
  for (const [key, item] of guarded(path, () => Object.entries(value))) {
    // defineProperty: a key "__proto__" stays a key, as JSON.parse keeps it.
    const copy = copyOf(item, `${path}.${key}`, depth + 1);
    Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
function guarded(path, read) {
  try {
    return read();
  } catch (error) {
    let message = "";
    try {
      message = typeof error === "string" ? error : String(error?.message ?? "");
    } catch {
      // a thrown value whose message throws too
    }
    throw `${path} could not be read (${message})`;
  }
}

// --- src/handler/route.rs ---
export function rateLimiterOf(env, name) {
  try {
    const binding = env?.[name];
    return binding && typeof binding.limit === "function" ? binding : undefined;
  } catch {
    return undefined;
  }
}
export function rateLimitAllows(binding, key) {
  // A binding that throws or rejects allows the request: its limit is an
  // extra one, and the gateway's own limits still apply. It counts across
  // isolates, so it gets the same key in every one: the SHA-256 of the whole
  // value (hex), never a per-isolate hash and never a cut value.
  return keyDigest(key)
    .then((digest) => binding.limit({ key: digest }))
    .then((outcome) => outcome?.success !== false, () => true);
}

async function keyDigest(key) {
  if (key === "") return "";
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
