//! How the tower layer classifies a finished call: the core's one
//! [`Outcome`] contract, applied to a `Result`.

use super::{Ending, Outcome};
use crate::error::{BoxError, Expired, Overloaded};
use core::any::Any;

/// Classifies a finished call of an inner service as [`Outcome::Served`],
/// [`Outcome::Dropped`] or [`Outcome::Ignored`].
///
/// Implemented by [`DefaultClassify`] and by every
/// `Fn(Result<&T, &E>) -> Outcome`. Map what the result says to an
/// [`Ending`] and let the core classify it, for instance to count an HTTP
/// 503 or 429 response as a drop:
///
/// ```
/// use edgeshed::limit::adaptive::{Classify, Ending, Outcome};
///
/// let by_status = |outcome: Result<&u16, &std::io::Error>| match outcome {
///     Ok(status) => Ending::Status(*status).outcome(),
///     Err(_) => Ending::Failed.outcome(),
/// };
/// assert_eq!(by_status.outcome(Ok(&503)), Outcome::Dropped);
/// assert_eq!(by_status.outcome(Ok(&200)), Outcome::Served);
/// ```
pub trait Classify<T, E> {
    /// How the call that ended with `result` counts.
    fn outcome(&self, result: Result<&T, &E>) -> Outcome;
}

/// The default: a response is [`Ending::Completed`]; edgeshed's
/// [`Expired`] (a deadline that a [`Deadline`](crate::deadline::Deadline)
/// layer inside this one set from the caller's budget) is
/// [`Ending::DeadlinePassed`], ignored; edgeshed's [`Overloaded`] from an
/// inner limit is [`Ending::Overloaded`]; any other error is
/// [`Ending::Failed`], a drop. The errors are recognised as themselves or
/// inside a [`BoxError`].
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultClassify;

impl<T, E: 'static> Classify<T, E> for DefaultClassify {
    fn outcome(&self, result: Result<&T, &E>) -> Outcome {
        let Err(error) = result else {
            return Ending::Completed.outcome();
        };
        let error: &dyn Any = error;
        let expired = error.is::<Expired>()
            || error
                .downcast_ref::<BoxError>()
                .is_some_and(|boxed| boxed.is::<Expired>());
        let overloaded = error.is::<Overloaded>()
            || error
                .downcast_ref::<BoxError>()
                .is_some_and(|boxed| boxed.is::<Overloaded>());
        let ending = if expired {
            Ending::DeadlinePassed
        } else if overloaded {
            Ending::Overloaded
        } else {
            Ending::Failed
        };
        ending.outcome()
    }
}

impl<T, E, F> Classify<T, E> for F
where
    F: Fn(Result<&T, &E>) -> Outcome,
{
    fn outcome(&self, result: Result<&T, &E>) -> Outcome {
        self(result)
    }
}
