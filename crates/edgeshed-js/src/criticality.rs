//! The one order this package numbers criticalities in, JavaScript and Rust
//! alike: the core's [`Criticality::ALL`] (most important first), which
//! `options-schema.js` renders as `CALL.criticality.values` (call-options.js,
//! glue.js's messages, options.rs and errors.rs all use it).

use edgeshed::admission::Criticality;

/// The criticality at `index` of that order; `None` past its end (a call
/// that names none).
pub(crate) fn criticality_at(index: u64) -> Option<Criticality> {
    usize::try_from(index)
        .ok()
        .and_then(|index| Criticality::ALL.get(index).copied())
}

/// `criticality`'s index in that order ([`criticality_at`]).
pub(crate) fn criticality_index(criticality: Criticality) -> u32 {
    let index = Criticality::ALL.iter().position(|&c| c == criticality);
    // ALL holds every criticality: the fallback is never taken.
    index.map_or(0, |index| index as u32)
}
