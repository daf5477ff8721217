// The npm package's options as data, rendered from the core's options table
// (src/options_schema.rs) by crates/edgeshed-js/tests/options_schema/main.rs: do not edit.
// After a change to the table: EDGESHED_BLESS=1 cargo test -p edgeshed-js --test options_schema
// Each key: its kind ("integer" min..max, "fraction" 0..1, "oneOf" values, "section"
// keys, "string" what, "signal"), its default if any, `required`, and `within` (a
// default moved into the section's [minLimit, maxLimit]).

/** `new Limiter(options)`. */
export const LIMITER = {
  maxInFlight: { kind: "integer", min: 1, max: 1000000 },
  adaptive: {
    kind: "section",
    keys: {
      algorithm: { kind: "oneOf", values: ["aimd", "gradient2", "vegas"], required: true },
      initialLimit: { kind: "integer", min: 1, max: 1000000, within: 6 },
      minLimit: { kind: "integer", min: 1, max: 1000000, default: 1 },
      maxLimit: { kind: "integer", min: 1, max: 1000000, default: 64 },
    },
  },
  maxQueue: { kind: "integer", min: 0, max: 1000000, default: 0 },
  queueTimeoutMs: { kind: "integer", min: 1, max: 2147483647 },
  bodyTimeoutMs: { kind: "integer", min: 1, max: 2147483647, default: 30000 },
  reserve: {
    kind: "section",
    keys: {
      critical: { kind: "fraction", default: 0.1 },
      default: { kind: "fraction", default: 0.2 },
    },
  },
  queueDiscipline: { kind: "oneOf", values: ["fifo", "codel"], default: "fifo" },
  maxQueueWait: { kind: "oneOf", values: ["timeout", "auto"], default: "timeout" },
  codelTargetMs: { kind: "integer", min: 1, max: 2147483647, default: 5 },
  rate: {
    kind: "section",
    keys: {
      perSecond: { kind: "integer", min: 1, max: 1000000000 },
      perMinute: { kind: "integer", min: 1, max: 1000000000 },
      burst: { kind: "integer", min: 1, max: 1000000000 },
      maxKeys: { kind: "integer", min: 1, max: 1000000, default: 10000 },
    },
  },
};

/** `run(fn, options)`, and the edgeshed keys of `fetch`'s `init`. */
export const CALL = {
  signal: { kind: "signal" },
  deadlineMs: { kind: "integer", min: 0, max: 2147483647 },
  criticality: { kind: "oneOf", values: ["critical", "default", "sheddable"], default: "default" },
  key: { kind: "string", what: "a tenant, an API key, a client address" },
  fairWeight: { kind: "integer", min: 1, max: 1000, default: 1 },
};

/** `setLimit(limit)`'s argument. */
export const SET_LIMIT = { kind: "integer", min: 1, max: 1000000, required: true };
