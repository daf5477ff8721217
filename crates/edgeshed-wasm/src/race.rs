//! Optional futures for `futures_util::future::select`: a timer or an
//! abort signal that a call may or may not have.

use core::future::Future;
use futures_util::future::{pending, Either, Pending};

/// `future`, or a future that never completes when there is none (an absent
/// deadline never fires).
pub fn or_never<F: Future>(future: Option<F>) -> Either<F, Pending<F::Output>> {
    match future {
        Some(future) => Either::Left(future),
        None => Either::Right(pending()),
    }
}
