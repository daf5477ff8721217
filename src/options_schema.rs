//! The options of the JavaScript faces as data: one table of every key of
//! the npm package's `new Limiter(options)` (and of its call options and
//! `setLimit`), with its kind, range, default and a one-line doc.
//!
//! The npm package validates options in JavaScript (serde in its wasm would
//! cost about 20 KiB gzip): its `options-schema.js` and `options.d.ts` are
//! rendered from this table by a test of `crates/edgeshed-js`, which fails
//! when the committed files differ. The gateway worker's configuration reads
//! the same keys (`maxInFlight`, `adaptive`, `reserve`, `rateLimit`'s
//! `burst` and `maxKeys`, ...) and takes its ranges and defaults from here.
//! Plain `const` data: a binary that does not read it does not contain it.
//!
//! ```
//! use edgeshed::options_schema::{find, Kind, LIMITER};
//!
//! let max = find(LIMITER, "adaptive.maxLimit").unwrap();
//! assert!(matches!(max.kind, Kind::Integer { min: 1, max: 1_000_000 }));
//! ```

use crate::admission::{Call, Criticality, QueueDiscipline, Reserve};
use crate::limit::adaptive::{AnyLimit, Bounds};
use crate::rate_limit::Rate;

/// The largest count an option takes (`maxInFlight`, `maxQueue`, limits, `maxKeys`).
pub const MAX_COUNT: u64 = 1_000_000;
/// The largest millisecond value: what `setTimeout` accepts (2^31 - 1).
pub const MAX_MILLIS: u64 = 2_147_483_647;
/// The largest `perSecond`/`perMinute`/`burst` of a rate limit.
pub const MAX_RATE: u64 = 1_000_000_000;
/// The largest fair-queueing weight of a key (`fairWeight`, the worker's
/// `fairness.weights`): [`Call::MAX_WEIGHT`].
pub const MAX_WEIGHT: u64 = Call::MAX_WEIGHT as u64;
/// The npm package's default `bodyTimeoutMs`.
pub const DEFAULT_BODY_TIMEOUT_MS: u64 = 30_000;

/// What values a key takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// An integer from `min` to `max` (both included).
    Integer {
        /// The smallest value accepted.
        min: u64,
        /// The largest value accepted.
        max: u64,
    },
    /// A fraction of the limit, from 0 to 1.
    Fraction,
    /// Exactly one of `values` (a string).
    OneOf {
        /// The TypeScript name of the union of `values`.
        name: &'static str,
        /// The accepted names, in the order messages list them.
        values: &'static [&'static str],
        /// The union's doc.
        doc: &'static str,
    },
    /// An object with exactly these keys (others are refused).
    Section {
        /// The TypeScript name of its interface.
        name: &'static str,
        /// Its keys.
        keys: &'static [OptionSpec],
        /// The interface's doc.
        doc: &'static str,
    },
    /// A string, naming what it holds (in messages).
    Text(&'static str),
    /// An `AbortSignal` (JavaScript only).
    Signal,
}

/// What an omitted key means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fallback {
    /// It must be given.
    Required,
    /// Nothing (the feature is off, or a rule across keys decides).
    Absent,
    /// This integer.
    Integer(u64),
    /// This fraction.
    Fraction(f64),
    /// This name (of a [`Kind::OneOf`]).
    Name(&'static str),
    /// This integer moved into the section's `[minLimit, maxLimit]`.
    Within(u64),
    /// Worked out from other keys, as described.
    Described(&'static str),
}

/// One key of the options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionSpec {
    /// The key (camelCase, as JavaScript and the worker's JSON spell it).
    pub key: &'static str,
    /// The values it takes.
    pub kind: Kind,
    /// What an omitted key means.
    pub default: Fallback,
    /// What it is, in a line (no range or default: those are rendered from
    /// `kind` and `default`).
    pub doc: &'static str,
}

const fn spec(key: &'static str, kind: Kind, default: Fallback, doc: &'static str) -> OptionSpec {
    OptionSpec {
        key,
        kind,
        default,
        doc,
    }
}

const fn int(min: u64, max: u64) -> Kind {
    Kind::Integer { min, max }
}

const COUNT: Kind = int(1, MAX_COUNT);
const MILLIS: Kind = int(1, MAX_MILLIS);
const RESERVE_DEFAULT: Reserve = Reserve::DEFAULT;

/// The criticality names, from the most important down ([`Criticality::ALL`]).
pub const CRITICALITIES: [&str; 3] = [
    Criticality::ALL[0].as_str(),
    Criticality::ALL[1].as_str(),
    Criticality::ALL[2].as_str(),
];

/// The queue discipline names: `"fifo"` (the default) and `"codel"`.
pub const QUEUE_DISCIPLINES: [&str; 2] = ["fifo", "codel"];

/// The queue wait names: `"timeout"` (the default: up to `queueTimeoutMs`)
/// and `"auto"` ([`QueueWait::Auto`](crate::admission::QueueWait::Auto)).
pub const QUEUE_WAITS: [&str; 2] = ["timeout", "auto"];

/// `options.adaptive`'s keys.
pub const ADAPTIVE: &[OptionSpec] = &[
    spec("algorithm", Kind::OneOf {
        name: "AdaptiveAlgorithm",
        values: &AnyLimit::NAMES,
        doc: "The adaptive algorithms: `\"aimd\"` backs off on drops (503/429 answers, network failures), `\"gradient2\"` (Netflix) and `\"vegas\"` on latency above the origin's no-load latency (measured in drains that every isolate runs at the same wall-clock moments).",
    }, Fallback::Required, "The algorithm that moves the limit"),
    spec("initialLimit", COUNT, Fallback::Within(Bounds::EDGE.initial() as u64), "The limit before any sample"),
    spec("minLimit", COUNT, Fallback::Integer(Bounds::EDGE.min() as u64), "The lowest the limit goes"),
    spec("maxLimit", COUNT, Fallback::Integer(Bounds::EDGE.max() as u64), "The highest the limit goes"),
];

/// `options.reserve`'s keys.
pub const RESERVE: &[OptionSpec] = &[
    spec(
        "critical",
        Kind::Fraction,
        Fallback::Fraction(RESERVE_DEFAULT.critical()),
        "Kept for critical calls",
    ),
    spec(
        "default",
        Kind::Fraction,
        Fallback::Fraction(RESERVE_DEFAULT.default_share()),
        "Kept for default and critical calls on top of `critical`",
    ),
];

/// `options.rate`'s keys (the worker's `rateLimit` has these and more).
pub const RATE: &[OptionSpec] = &[
    spec(
        "perSecond",
        int(1, MAX_RATE),
        Fallback::Absent,
        "Calls per second per key (exactly one of `perSecond` and `perMinute`)",
    ),
    spec(
        "perMinute",
        int(1, MAX_RATE),
        Fallback::Absent,
        "Calls per minute per key (exactly one of `perSecond` and `perMinute`)",
    ),
    spec(
        "burst",
        int(1, MAX_RATE),
        Fallback::Described("one period's calls"),
        "The most calls a key may make at once after a quiet spell",
    ),
    spec(
        "maxKeys",
        COUNT,
        Fallback::Integer(Rate::DEFAULT_MAX_KEYS as u64),
        "The most keys tracked at once; while all are still limited, new keys share one overflow allowance (`rateOverflow`)",
    ),
];

/// The keys of `new Limiter(options)`, in the order messages list them.
pub const LIMITER: &[OptionSpec] = &[
    spec("maxInFlight", COUNT, Fallback::Absent, "Most calls running at once (exactly one of `maxInFlight` and `adaptive`)"),
    spec("adaptive", Kind::Section {
        name: "AdaptiveOptions",
        keys: ADAPTIVE,
        doc: "`options.adaptive`. Every call is classified once as served, dropped or ignored: `run` from admission until `fn` settles (a drop: a rejection whose `status` is 503 or 429), `fetch` until its body is read to the end (a drop: a 503/429 answer, at its headers, a network failure, or a body that fails from the origin). A `DeadlineError`, a passed `deadlineMs` and a caller's abort are ignored.",
    }, Fallback::Absent, "An adaptive limit (exactly one of `maxInFlight` and `adaptive`)"),
    spec("maxQueue", int(0, MAX_COUNT), Fallback::Integer(0), "Most calls waiting for a slot"),
    spec("queueTimeoutMs", MILLIS, Fallback::Absent, "Longest wait in the queue, in ms (required when `maxQueue` > 0; without a queue it is refused, as it would never apply)"),
    spec("bodyTimeoutMs", MILLIS, Fallback::Integer(DEFAULT_BODY_TIMEOUT_MS), "Longest a `fetch` response body may sit idle while it holds its slot, in ms. Idle: neither read by the consumer nor fed by the origin. Then the body is cancelled (a later read rejects with a `DeadlineError`) and the slot freed, counted in `bodyTimeouts`"),
    spec("reserve", Kind::Section {
        name: "ReserveOptions",
        keys: RESERVE,
        doc: "The part of the limit kept for more critical calls, as fractions of the current limit (their sum at most 1). Of a limit `n`, sheddable calls may hold `max(1, floor(n × (1 − critical − default)))` slots, default calls `max(1, floor(n × (1 − critical)))`, critical calls all `n`; when `n ≥ 2` one slot always stays for critical calls (limit 10: 7 / 9 / 10; limit 2: 1 / 1 / 2).",
    }, Fallback::Described("each key's own, kept from the first call that names its `criticality`; a limiter whose calls never name one uses the whole limit for them"), "The part of the limit kept for more critical calls"),
    spec("queueDiscipline", Kind::OneOf {
        name: "QueueDiscipline",
        values: &QUEUE_DISCIPLINES,
        doc: "The queue's order within one criticality (higher criticalities always go first).",
    }, Fallback::Name(QUEUE_DISCIPLINES[0]), "`\"fifo\"`, or `\"codel\"` (needs a queue): once no slot has been free for `queueTimeoutMs` the queue stands, and it keeps standing for one `queueTimeoutMs` after that was last seen; while it stands, new waiters get `codelTargetMs`, the queue is served newest first, a waiter that reaches the head after more than `codelTargetMs` is refused (`queue_timeout`), and a full queue gives up its oldest waiter"),
    spec("maxQueueWait", Kind::OneOf {
        name: "QueueWait",
        values: &QUEUE_WAITS,
        doc: "How long a call may wait in the queue.",
    }, Fallback::Name(QUEUE_WAITS[0]), "`\"timeout\"`: up to `queueTimeoutMs`; or `\"auto\"` (needs a queue): a call whose expected wait (its place in the queue over the measured completion rate) is longer than one measured service time (or `codelTargetMs`, if longer) is refused at once (`queue_timeout`, `waitedMs` 0), so a burst's excess is answered at once and admitted calls stay near the unloaded latency"),
    spec("codelTargetMs", MILLIS, Fallback::Integer(QueueDiscipline::DEFAULT_CODEL_TARGET.as_millis() as u64), "With `\"codel\"`: the wait of new waiters once a queue stands, in ms (less than `queueTimeoutMs`)"),
    spec("rate", Kind::Section {
        name: "RateOptions",
        keys: RATE,
        doc: "`options.rate`: a GCRA rate limit per `key` (the calls without a key share one allowance); over it, a call is refused with a `RateLimitedError` (`reason` `\"rate\"`, `retryAfterMs`).",
    }, Fallback::Absent, "A rate limit per `key`, checked before the concurrency limit"),
];

/// The keys of `run(fn, options)` (and the edgeshed keys of `fetch`'s `init`).
pub const CALL: &[OptionSpec] = &[
    spec("signal", Kind::Signal, Fallback::Absent, "Aborting it removes a queued call, or rejects a running one at once with the signal's reason (its slot is freed when `fn` settles)"),
    spec("deadlineMs", int(0, MAX_MILLIS), Fallback::Absent, "Budget in ms from the call, covering the queue wait and the work"),
    spec("criticality", Kind::OneOf {
        name: "Criticality",
        values: &CRITICALITIES,
        doc: "How much a call matters when the limiter is full: `\"critical\"` calls are shed last, `\"sheddable\"` ones (batch work, prefetches) first.",
    }, Fallback::Name(Criticality::Default.as_str()), "How much the call matters when the limiter is full"),
    spec("key", Kind::Text("a tenant, an API key, a client address"), Fallback::Absent, "Who the call is for (a tenant, an API key, a client address), for fair queueing and the rate limit. Within a criticality every key queues on its own and a freed slot goes to the key with the least service for its weight (the slots it holds plus its recent grants); a key over its fair share (the limit divided by the keys with calls in flight or waiting, rounded up) while other keys wait is refused with a `RateLimitedError` (`reason` `\"fair_share\"`), and so is its newest waiter when a full queue makes room for a key under its share. A key alone may use the whole limit; the calls without a key share one key of their own"),
    spec("fairWeight", int(1, MAX_WEIGHT), Fallback::Integer(1), "The weight of the call's key in fair queueing: a key of weight 2 gets twice the share of a key of weight 1 (a paying tenant). A key takes the weight of its latest call; the calls without a key share one key of weight 1"),
];

/// `setLimit(limit)`'s argument.
pub const SET_LIMIT: OptionSpec = spec(
    "limit",
    COUNT,
    Fallback::Required,
    "The new limit of a fixed limiter",
);

/// The spec at a dotted `path` (`"adaptive.maxLimit"`) of `table`.
pub fn find(table: &'static [OptionSpec], path: &str) -> Option<&'static OptionSpec> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    let found = table.iter().find(|spec| spec.key == head)?;
    match (rest, found.kind) {
        (None, _) => Some(found),
        (Some(rest), Kind::Section { keys, .. }) => find(keys, rest),
        (Some(_), _) => None,
    }
}

/// The keys of a section of `table` (`"adaptive"`), in order.
pub fn section_keys(table: &'static [OptionSpec], path: &str) -> Option<&'static [OptionSpec]> {
    match find(table, path)?.kind {
        Kind::Section { keys, .. } => Some(keys),
        _ => None,
    }
}

/// The range of an integer key at `path` of `table`.
pub fn integer_range(table: &'static [OptionSpec], path: &str) -> Option<(u64, u64)> {
    match find(table, path)?.kind {
        Kind::Integer { min, max } => Some((min, max)),
        _ => None,
    }
}
