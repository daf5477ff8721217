//! The scale simulation's inputs and outputs (`scale_sim.rs`): a seeded
//! RNG, the scenario, and what a run measured.
#![allow(dead_code)]

/// SplitMix64: a small seeded generator (the runs are reproducible).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// Exponential with mean `mean` (ms), at least 1.
    pub fn exp(&mut self, mean: f64) -> u64 {
        (-(1.0 - self.unit()).ln() * mean).round().max(1.0) as u64
    }
}

/// One scenario: a fleet of isolates sharing one origin's budget.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Isolates alive at any time (each evicted one is replaced at once by a
    /// new isolate with a new holder id and no lease).
    pub isolates: usize,
    /// The fleet budget (`budget.maxInFlight`), also the origin's capacity.
    pub budget: u32,
    /// Each isolate's own `maxInFlight` (no queue: beyond it, refused).
    pub local: u32,
    /// `budget.leaseTtlMs`.
    pub ttl: u64,
    /// The origin's `timeoutMs`: no call lasts longer.
    pub timeout: u64,
    /// A call holds the origin uniformly this many ms.
    pub service: (u64, u64),
    /// Offered load over the budget's capacity (budget / mean service).
    pub load: f64,
    /// The hot isolates (the first `hot` slots) and their share of the
    /// requests; the others share the rest evenly.
    pub hot: usize,
    pub hot_share: f64,
    /// Mean lifetime of an isolate (exponential), ms.
    pub lifetime: f64,
    /// An object call's round trip, uniform (ms), half each way.
    pub latency: (u64, u64),
    /// Object restarts (mean interval, ms, exponential), if any.
    pub restart_every: Option<f64>,
    /// Slow-object episodes: (mean interval, duration, round trip range):
    /// calls then take far longer, some past their timeout.
    pub slow: Option<(f64, u64, (u64, u64))>,
    /// Simulated time (ms) and the warm-up not measured.
    pub duration: u64,
    pub warmup: u64,
    pub seed: u64,
}

impl Scenario {
    /// The scale scenario: `isolates` sharing a budget of 100 (an isolate's
    /// own limit 100 too: only the budget limits), calls of 10–50 ms (capacity 3,333 calls/s), at `load`
    /// × that, a tenth of the isolates (at least 2) getting 90 % of the
    /// requests, isolates living 20 s on average, object calls 1–50 ms,
    /// leases of 5 s (the default) and a `timeoutMs` of 1 s.
    pub fn scale(isolates: usize, load: f64, seconds: u64) -> Self {
        Self {
            isolates,
            budget: 100,
            local: 100,
            ttl: 5_000,
            timeout: 1_000,
            service: (10, 50),
            load,
            hot: (isolates / 10).max(2),
            hot_share: 0.9,
            lifetime: 20_000.0,
            latency: (1, 50),
            restart_every: None,
            slow: None,
            duration: seconds * 1_000,
            warmup: 5_000,
            seed: 0x5eed_0000 + isolates as u64,
        }
    }

    /// The same with the object restarting every `restart` ms on average and
    /// slow for 1 s every `slow` ms on average (calls of 100–4,000 ms, past
    /// the 2.5 s call timeout for some).
    pub fn hostile(mut self, restart: f64, slow: f64) -> Self {
        self.restart_every = Some(restart);
        self.slow = Some((slow, 1_000, (100, 4_000)));
        self
    }

    /// Calls per second the budget can serve.
    pub fn capacity_rps(&self) -> f64 {
        let mean = (self.service.0 + self.service.1) as f64 / 2.0;
        f64::from(self.budget) * 1_000.0 / mean
    }
}

/// What one run measured (after the warm-up).
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub isolates: usize,
    pub load: f64,
    pub budget: u32,
    pub seconds: f64,
    /// Requests that arrived at an isolate.
    pub offered: u64,
    pub admitted: u64,
    /// Refused with 503 `budget` (no permit came while it waited).
    pub refused_budget: u64,
    /// Refused by the isolate's own limit.
    pub refused_local: u64,
    /// Waiting when their isolate was evicted.
    pub lost: u64,
    /// The most calls the origin had at once (whole run, warm-up included).
    pub peak: u32,
    /// Permit-ms the origin was busy over budget × time.
    pub utilisation: f64,
    /// Lease calls and watches the object handled.
    pub object_calls: u64,
    /// The most object calls in one simulated second.
    pub peak_calls_per_s: u32,
    /// Lease calls that failed or timed out.
    pub failures: u64,
    /// Time from arrival to admission of admitted requests, sorted (ms).
    pub waits: Vec<u64>,
    pub evictions: u64,
    pub restarts: u64,
    /// Why the `refused_budget` requests were refused: [their own limit
    /// (`timeoutMs`) passed, at once (the holder backed off: it holds its
    /// fair share of a budget others want), their patience ended with no
    /// call under way and no lease (a new holder, or one that gave its
    /// lease back), their patience ended with a lease the object did not
    /// grow, the object unreachable (`unavailable: "shed"`)].
    pub refused_why: [u64; 5],
    /// Watches that reached the object after their holder's newer lease
    /// call (the two crossed on the way).
    pub crossed_watches: u64,
    /// Sampled once a simulated second (mean): permits the table counts for
    /// evicted isolates (they come back at the lease's expiry), and for live
    /// holders beyond what they hold, with no call under way (stranded).
    pub dead_leased: f64,
    /// Sampled likewise: permits live holders hold beyond their calls in
    /// flight (leased, usable, unused at that moment).
    pub idle_held: f64,
    /// The most permits the table counted, at one sample, for isolates
    /// evicted longer ago than a lease can outlive them (a TTL after the
    /// last call that can still reach the object: the call timeout and the
    /// patience a kept ask may wait): stuck leases. Must be 0.
    pub stuck: u32,
    pub stranded: f64,
    /// Sampled likewise, where the budget's permits are: calls at the
    /// origin (evicted isolates' included), permits of live holders with no
    /// call in flight (a whole idle lease), permits of live holders beyond
    /// their calls in flight while they have some (spare), and permits the
    /// table has not leased (free).
    pub in_flight: f64,
    pub idle_lease: f64,
    pub spare: f64,
    pub free: f64,
    pub probes: u64,
}

impl Report {
    /// Admitted over what the budget could have admitted: the offered
    /// requests, or the budget's capacity over the run when less.
    pub fn goodput(&self, capacity_rps: f64) -> f64 {
        let capacity = capacity_rps * self.seconds;
        self.admitted as f64 / (self.offered as f64).min(capacity).max(1.0)
    }

    pub fn calls_per_admitted(&self) -> f64 {
        self.object_calls as f64 / (self.admitted as f64).max(1.0)
    }

    pub fn calls_per_s(&self) -> f64 {
        self.object_calls as f64 / self.seconds
    }

    /// Requests refused with 503 `budget` because the holder held its fair
    /// share, had no lease, or waited for a lease the object did not grow.
    pub fn refused_at_share(&self) -> u64 {
        self.refused_why[1]
    }

    pub fn refused_no_lease(&self) -> u64 {
        self.refused_why[2]
    }

    pub fn refused_waiting_object(&self) -> u64 {
        self.refused_why[3] + self.refused_why[0]
    }

    /// The `q` quantile of the admission waits (ms).
    pub fn wait(&self, q: f64) -> u64 {
        if self.waits.is_empty() {
            return 0;
        }
        let at = ((self.waits.len() - 1) as f64 * q).round() as usize;
        self.waits[at]
    }
}
