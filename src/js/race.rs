//! Waiting for the first of several futures, without pulling in a futures crate.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// Which of the raced futures finished first.
pub(crate) enum First<A, B, C> {
    Work(A),
    Deadline(B),
    Abort(C),
}

/// Polls `work`, then the optional `deadline` and `abort` futures, and
/// returns the first outcome.
pub(crate) async fn first<W, D, A>(
    work: W,
    deadline: Option<D>,
    abort: Option<A>,
) -> First<W::Output, D::Output, A::Output>
where
    W: Future,
    D: Future,
    A: Future,
{
    let mut work = core::pin::pin!(work);
    let mut deadline = deadline.map(Box::pin);
    let mut abort = abort.map(Box::pin);
    core::future::poll_fn(move |cx: &mut Context<'_>| {
        if let Some(abort) = abort.as_mut() {
            if let Poll::Ready(reason) = Pin::as_mut(abort).poll(cx) {
                return Poll::Ready(First::Abort(reason));
            }
        }
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(First::Work(output));
        }
        if let Some(deadline) = deadline.as_mut() {
            if let Poll::Ready(output) = Pin::as_mut(deadline).poll(cx) {
                return Poll::Ready(First::Deadline(output));
            }
        }
        Poll::Pending
    })
    .await
}
