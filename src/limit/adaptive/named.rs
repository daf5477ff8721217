//! An algorithm chosen by name at run time: what the JS and worker
//! configurations (`"algorithm": "gradient2"`) build.

use super::{Aimd, Bounds, Gradient2, Limit, Sample, Vegas, WindowLimit, WindowSummary};
use core::fmt;
use core::time::Duration;

/// One of the built-in algorithms, picked by its configuration name.
///
/// ```
/// use edgeshed::limit::adaptive::{AnyLimit, Bounds, Limit};
///
/// let bounds = Bounds::new(6, 1, 64).unwrap();
/// let limit = AnyLimit::named("vegas", bounds).unwrap();
/// assert_eq!((limit.name(), limit.limit()), ("vegas", 6));
/// assert!(AnyLimit::named("gradient", bounds).is_err());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AnyLimit {
    /// [`Aimd`] with its default backoff.
    Aimd(Aimd),
    /// [`Gradient2`] with its default tuning.
    Gradient2(Gradient2),
    /// [`Vegas`] with its default tuning.
    Vegas(Vegas),
}

impl AnyLimit {
    /// The configuration names, in the order the docs list them.
    pub const NAMES: [&'static str; 3] = ["aimd", "gradient2", "vegas"];

    /// The algorithm called `name` (`"aimd"`, `"gradient2"` or `"vegas"`,
    /// exact spelling) within `bounds`, with its default tuning.
    pub fn named(name: &str, bounds: Bounds) -> Result<Self, UnknownAlgorithm> {
        match name {
            "aimd" => Ok(Self::Aimd(Aimd::new(bounds, 0.9))),
            "gradient2" => Ok(Self::Gradient2(Gradient2::new(bounds))),
            "vegas" => Ok(Self::Vegas(Vegas::new(bounds))),
            _ => Err(UnknownAlgorithm(())),
        }
    }

    /// The configuration name of this algorithm.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Aimd(_) => "aimd",
            Self::Gradient2(_) => "gradient2",
            Self::Vegas(_) => "vegas",
        }
    }
}

impl Limit for AnyLimit {
    fn bounds(&self) -> Bounds {
        match self {
            Self::Aimd(algorithm) => algorithm.bounds(),
            Self::Gradient2(algorithm) => algorithm.bounds(),
            Self::Vegas(algorithm) => algorithm.bounds(),
        }
    }

    fn limit(&self) -> usize {
        match self {
            Self::Aimd(algorithm) => algorithm.limit(),
            Self::Gradient2(algorithm) => algorithm.limit(),
            Self::Vegas(algorithm) => algorithm.limit(),
        }
    }

    fn update(&mut self, sample: &Sample) -> usize {
        match self {
            Self::Aimd(algorithm) => algorithm.update(sample),
            Self::Gradient2(algorithm) => algorithm.update(sample),
            Self::Vegas(algorithm) => algorithm.update(sample),
        }
    }
}

impl WindowLimit for AnyLimit {
    fn on_window(&mut self, window: &WindowSummary, span: Duration) -> usize {
        match self {
            Self::Aimd(algorithm) => algorithm.on_window(window, span),
            Self::Gradient2(algorithm) => algorithm.on_window(window, span),
            Self::Vegas(algorithm) => algorithm.on_window(window, span),
        }
    }

    fn on_drain(&mut self, window: &WindowSummary) -> usize {
        match self {
            Self::Aimd(algorithm) => algorithm.on_drain(window),
            Self::Gradient2(algorithm) => algorithm.on_drain(window),
            Self::Vegas(algorithm) => algorithm.on_drain(window),
        }
    }
}

/// An algorithm name that is not one of [`AnyLimit::NAMES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownAlgorithm(());

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown algorithm: expected \"aimd\", \"gradient2\" or \"vegas\"")
    }
}

impl std::error::Error for UnknownAlgorithm {}
