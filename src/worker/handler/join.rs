//! Running several futures concurrently on one task, stopping early when one
//! of them settles the overall outcome.

use core::future::Future;
use core::pin::Pin;
use core::task::Poll;

/// Polls every future until all are done, or until `decisive` says one
/// output settles the outcome; the rest are then dropped (cancelled).
/// Returns each output (`None` for the cancelled) and the decisive index.
pub(crate) async fn join_until<F, T>(
    futures: Vec<F>,
    decisive: impl Fn(usize, &T) -> bool,
) -> (Vec<Option<T>>, Option<usize>)
where
    F: Future<Output = T>,
{
    let mut pending: Vec<Option<Pin<Box<F>>>> =
        futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<T>> = pending.iter().map(|_| None).collect();
    let decided = core::future::poll_fn(|cx| {
        let mut all_done = true;
        for (index, slot) in pending.iter_mut().enumerate() {
            let Some(future) = slot else { continue };
            match future.as_mut().poll(cx) {
                Poll::Ready(output) => {
                    *slot = None;
                    let stop = decisive(index, &output);
                    if let Some(out) = outputs.get_mut(index) {
                        *out = Some(output);
                    }
                    if stop {
                        return Poll::Ready(Some(index));
                    }
                }
                Poll::Pending => all_done = false,
            }
        }
        if all_done {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    })
    .await;
    // Whatever is still running is cancelled here.
    drop(pending);
    (outputs, decided)
}
