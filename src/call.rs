//! [`Call`]: what one call brings to admission (its criticality and key),
//! and [`ReadCall`]: how a tower layer reads it from a request.

use crate::criticality::Criticality;
use crate::Key;

/// What a call brings to its admission: how much it matters
/// ([`Criticality`]) and who it is for ([`Key`], for the per-key fair share
/// and rate limit). The default is a [`Default`](Criticality::Default) call
/// without a key.
///
/// ```
/// use edgeshed::admission::{Call, Criticality};
///
/// let call = Call::new(Criticality::Sheddable).with_key("tenant-1");
/// assert_eq!(call.criticality(), Criticality::Sheddable);
/// assert_eq!(call.key().map(|key| key.shown()), Some("tenant-1"));
/// assert_eq!(Call::default(), Call::new(Criticality::Default));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    criticality: Criticality,
    key: Option<Key>,
    weight: u32,
}

impl Default for Call {
    fn default() -> Self {
        Self::new(Criticality::Default)
    }
}

impl Call {
    /// The largest [weight](Call::with_weight) a key may have.
    pub const MAX_WEIGHT: u32 = 1000;

    /// A call of `criticality`, without a key.
    pub const fn new(criticality: Criticality) -> Self {
        Self {
            criticality,
            key: None,
            weight: 1,
        }
    }

    /// The same call with `weight` for its key: under fair queueing a key
    /// of weight 2 gets twice the share of a key of weight 1 (a paying
    /// tenant). Clamped to `1..=`[`MAX_WEIGHT`](Call::MAX_WEIGHT); the
    /// default is 1. A key takes the weight of its latest call.
    ///
    /// ```
    /// use edgeshed::admission::{Call, Criticality};
    ///
    /// let call = Call::new(Criticality::Default).with_key("paying").with_weight(2);
    /// assert_eq!(call.weight(), 2);
    /// assert_eq!(Call::default().with_weight(0).weight(), 1);
    /// ```
    pub fn with_weight(self, weight: u32) -> Self {
        Self {
            weight: weight.clamp(1, Self::MAX_WEIGHT),
            ..self
        }
    }

    /// The call's key's weight for fair queueing (1 unless set).
    pub const fn weight(&self) -> u32 {
        self.weight
    }

    /// The same call, for `key`.
    pub fn with_key(self, key: impl Into<Key>) -> Self {
        Self {
            key: Some(key.into()),
            ..self
        }
    }

    /// The same call, for `key` if there is one.
    pub fn with_optional_key(self, key: Option<Key>) -> Self {
        Self { key, ..self }
    }

    /// How much the call matters.
    pub const fn criticality(&self) -> Criticality {
        self.criticality
    }

    /// Who the call is for, if anyone.
    pub fn key(&self) -> Option<&Key> {
        self.key.as_ref()
    }

    /// The call's key, if any, taking it out of the call.
    pub fn into_key(self) -> Option<Key> {
        self.key
    }

    pub(super) fn into_parts(self) -> (Criticality, Option<Key>, u32) {
        (self.criticality, self.key, self.weight)
    }
}

impl From<Criticality> for Call {
    fn from(criticality: Criticality) -> Self {
        Self::new(criticality)
    }
}

/// Reads a request's [`Call`] (its criticality and key) for the tower
/// layers that admit per request: [`ClassifiedLimit`](crate::limit::ClassifiedLimit)
/// and [`RateLimit`](crate::rate_limit::RateLimit).
///
/// Implemented for closures `Fn(&Request) -> Call`, for [`Unclassified`]
/// (every request a default call without a key) and, with the `http`
/// feature, for `FromExtensions` (a `Criticality` and a `Key` found in an
/// `http::Request`'s extensions).
pub trait ReadCall<Request> {
    /// The request's criticality and key.
    fn read_call(&self, request: &Request) -> Call;
}

impl<F, Request> ReadCall<Request> for F
where
    F: Fn(&Request) -> Call,
{
    fn read_call(&self, request: &Request) -> Call {
        self(request)
    }
}

/// Every request is a [`Default`](Criticality::Default) call without a key.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unclassified;

impl<Request> ReadCall<Request> for Unclassified {
    fn read_call(&self, _: &Request) -> Call {
        Call::default()
    }
}

/// Reads the [`Criticality`] and [`Key`] that an earlier layer (or the
/// handler that built the request) put into an `http::Request`'s
/// extensions; a missing one means `Default` and no key (feature `http`).
///
/// ```
/// use edgeshed::admission::{Call, Criticality, FromExtensions, ReadCall};
/// use edgeshed::Key;
///
/// let mut request = http::Request::new(());
/// request.extensions_mut().insert(Criticality::Sheddable);
/// request.extensions_mut().insert(Key::from("10.0.0.7"));
/// assert_eq!(FromExtensions.read_call(&request), Call::new(Criticality::Sheddable).with_key("10.0.0.7"));
/// ```
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
#[derive(Clone, Copy, Debug, Default)]
pub struct FromExtensions;

#[cfg(feature = "http")]
impl<B> ReadCall<http::Request<B>> for FromExtensions {
    fn read_call(&self, request: &http::Request<B>) -> Call {
        let extensions = request.extensions();
        let criticality = extensions.get::<Criticality>().copied().unwrap_or_default();
        Call::new(criticality).with_optional_key(extensions.get::<Key>().cloned())
    }
}
