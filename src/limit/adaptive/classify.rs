//! Which completed calls count as drops.

/// Decides whether a completed call was *dropped*: an overload answer, a
/// timeout or a failure, the signal a loss-based limit backs off on.
///
/// Implemented by [`ErrorsAreDrops`] (the default) and by every
/// `Fn(Result<&T, &E>) -> bool`, for instance to count an HTTP 503 or 429
/// response as a drop:
///
/// ```
/// use edgeshed::limit::adaptive::Classify;
///
/// let overload_answers = |outcome: Result<&u16, &std::io::Error>| match outcome {
///     Ok(status) => *status == 503 || *status == 429,
///     Err(_) => true,
/// };
/// assert!(overload_answers.is_drop(Ok(&503)));
/// assert!(!overload_answers.is_drop(Ok(&200)));
/// ```
pub trait Classify<T, E> {
    /// Whether the call that ended with `outcome` was dropped.
    fn is_drop(&self, outcome: Result<&T, &E>) -> bool;
}

/// Every error is a drop — the inner service's own errors, and edgeshed's
/// [`Overloaded`](crate::error::Overloaded) and
/// [`Expired`](crate::error::Expired) from layers inside the adaptive
/// limit; every response is a success.
#[derive(Clone, Copy, Debug, Default)]
pub struct ErrorsAreDrops;

impl<T, E> Classify<T, E> for ErrorsAreDrops {
    fn is_drop(&self, outcome: Result<&T, &E>) -> bool {
        outcome.is_err()
    }
}

impl<T, E, F> Classify<T, E> for F
where
    F: Fn(Result<&T, &E>) -> bool,
{
    fn is_drop(&self, outcome: Result<&T, &E>) -> bool {
        self(outcome)
    }
}
