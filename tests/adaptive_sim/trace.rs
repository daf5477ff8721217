//! What a simulated run measured, in buckets of 100 ms.

/// Milliseconds per bucket.
const BUCKET_MS: u64 = 100;

#[derive(Clone, Debug, Default)]
struct Bucket {
    steps: u64,
    capacity: usize,
    concurrency: u64,
    peak: usize,
    served: u64,
    reached: u64,
    rejected: u64,
    shed: u64,
    limits: Vec<u64>,
}

/// The measurements of one run.
#[derive(Clone, Debug)]
pub struct Trace {
    clients: usize,
    service_ms: u64,
    buckets: Vec<Bucket>,
    /// Calls at the origin in every step, for percentiles.
    steps: Vec<u16>,
}

impl Trace {
    pub(super) fn new(clients: usize, service_ms: u64) -> Self {
        Self {
            clients,
            service_ms,
            buckets: Vec::new(),
            steps: Vec::new(),
        }
    }

    fn current(&mut self) -> &mut Bucket {
        if self.buckets.last().is_none_or(|b| b.steps == BUCKET_MS) {
            self.buckets.push(Bucket {
                limits: vec![0; self.clients],
                ..Bucket::default()
            });
        }
        self.buckets.last_mut().unwrap()
    }

    pub(super) fn served(&mut self) {
        self.current().served += 1;
    }

    pub(super) fn reached(&mut self) {
        self.current().reached += 1;
    }

    pub(super) fn reject(&mut self) {
        self.current().rejected += 1;
    }

    pub(super) fn shed(&mut self, _client: usize) {
        self.current().shed += 1;
    }

    pub(super) fn step(&mut self, capacity: usize, at_origin: usize, limits: &[usize]) {
        let bucket = self.current();
        bucket.steps += 1;
        bucket.capacity = capacity;
        bucket.concurrency += at_origin as u64;
        bucket.peak = bucket.peak.max(at_origin);
        for (sum, limit) in bucket.limits.iter_mut().zip(limits) {
            *sum += *limit as u64;
        }
        self.steps.push(at_origin.min(u16::MAX as usize) as u16);
    }

    fn range(&self, from_ms: u64, to_ms: u64) -> &[Bucket] {
        let from = (from_ms / BUCKET_MS) as usize;
        let to = ((to_ms / BUCKET_MS) as usize).min(self.buckets.len());
        &self.buckets[from.min(to)..to]
    }

    /// Mean calls at the origin over [from, to), as a multiple of its capacity.
    pub fn concurrency(&self, from_ms: u64, to_ms: u64) -> f64 {
        let range = self.range(from_ms, to_ms);
        let (sum, cap): (f64, f64) = range.iter().fold((0.0, 0.0), |(s, c), b| {
            (
                s + b.concurrency as f64,
                c + (b.capacity as u64 * b.steps) as f64,
            )
        });
        sum / cap.max(1.0)
    }

    /// The `pct` percentile of the calls at the origin over [from, to), × capacity.
    pub fn concurrency_percentile(&self, from_ms: u64, to_ms: u64, pct: f64) -> f64 {
        let to = (to_ms as usize).min(self.steps.len());
        let mut steps: Vec<u16> = self.steps[(from_ms as usize).min(to)..to].to_vec();
        if steps.is_empty() {
            return 0.0;
        }
        steps.sort_unstable();
        let index = ((steps.len() - 1) as f64 * pct / 100.0).round() as usize;
        let capacity = self.range(from_ms, to_ms).first().map_or(1, |b| b.capacity);
        steps[index] as f64 / capacity.max(1) as f64
    }

    /// Served calls over [from, to) as a fraction of what the origin's
    /// capacity could serve in that time.
    pub fn goodput(&self, from_ms: u64, to_ms: u64) -> f64 {
        let range = self.range(from_ms, to_ms);
        let (served, possible) = range.iter().fold((0.0, 0.0), |(s, p), b| {
            let possible = (b.capacity as u64 * b.steps) as f64 / self.service_ms as f64;
            (s + b.served as f64, p + possible)
        });
        served / possible.max(1e-9)
    }

    /// 503s as a fraction of the calls that reached the origin over [from, to).
    pub fn rejected(&self, from_ms: u64, to_ms: u64) -> f64 {
        let range = self.range(from_ms, to_ms);
        let rejected: u64 = range.iter().map(|b| b.rejected).sum();
        let reached: u64 = range.iter().map(|b| b.reached).sum();
        rejected as f64 / reached.max(1) as f64
    }

    /// Each client's mean limit over [from, to).
    pub fn limits(&self, from_ms: u64, to_ms: u64) -> Vec<f64> {
        let range = self.range(from_ms, to_ms);
        let steps: u64 = range.iter().map(|b| b.steps).sum();
        (0..self.clients)
            .map(|c| range.iter().map(|b| b.limits[c]).sum::<u64>() as f64 / steps.max(1) as f64)
            .collect()
    }

    /// The highest client mean limit over the lowest one, over [from, to).
    pub fn unfairness(&self, from_ms: u64, to_ms: u64) -> f64 {
        let limits = self.limits(from_ms, to_ms);
        let max = limits.iter().copied().fold(0.0, f64::max);
        let min = limits.iter().copied().fold(f64::INFINITY, f64::min);
        max / min.max(1e-9)
    }

    /// The sum of the clients' mean limits over [from, to), × capacity.
    pub fn total_limit(&self, from_ms: u64, to_ms: u64) -> f64 {
        let capacity = self.range(from_ms, to_ms).first().map_or(1, |b| b.capacity);
        self.limits(from_ms, to_ms).iter().sum::<f64>() / capacity.max(1) as f64
    }

    /// The start of the first bucket from `from_ms` on whose `window_ms`
    /// (a multiple of 100) satisfies `ok(goodput, concurrency)`.
    pub fn first_window(
        &self,
        from_ms: u64,
        window_ms: u64,
        ok: impl Fn(f64, f64) -> bool,
    ) -> Option<u64> {
        let end = self.buckets.len() as u64 * BUCKET_MS;
        (from_ms..end.saturating_sub(window_ms) + 1)
            .step_by(BUCKET_MS as usize)
            .find(|&t| {
                ok(
                    self.goodput(t, t + window_ms),
                    self.concurrency(t, t + window_ms),
                )
            })
    }
}

impl Trace {
    /// One line per `every_ms`: time, concurrency × C, goodput, limits.
    pub fn dump(&self, every_ms: u64, to_ms: u64) {
        let mut t = 0;
        while t + every_ms <= to_ms.min(self.buckets.len() as u64 * BUCKET_MS) {
            let limits: Vec<f64> = self
                .limits(t, t + every_ms)
                .iter()
                .map(|l| (l * 10.0).round() / 10.0)
                .collect();
            println!(
                "t={:>6} conc {:.2} good {:.2} limits {:?}",
                t,
                self.concurrency(t, t + every_ms),
                self.goodput(t, t + every_ms),
                limits
            );
            t += every_ms;
        }
    }
}
