//! Running a fan-out's calls together, until one of them decides the
//! outcome.

use futures_util::future::select_all;

/// Runs every future concurrently until all are done, or until `decisive`
/// says one output settles the outcome; the rest are then dropped
/// (cancelled). Returns each output (`None` for the cancelled) in the order
/// of `futures`, and the decisive index.
///
/// `select_all` polls every pending future with the task's own waker on
/// each step. A combinator that coalesces its children's wakes
/// (`FuturesUnordered`) is not used here: in workerd a child woken from
/// another request resumes the task through a continuation that workerd may
/// deliver late, and a later wake from a sibling's own timer would then be
/// swallowed by the coalescing, leaving the request to look hung.
pub(crate) async fn until_decided<F: core::future::Future>(
    futures: Vec<F>,
    decisive: impl Fn(usize, &F::Output) -> bool,
) -> (Vec<Option<F::Output>>, Option<usize>) {
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let mut running: Vec<_> = futures
        .into_iter()
        .enumerate()
        .map(|(index, future)| Box::pin(async move { (index, future.await) }))
        .collect();
    while !running.is_empty() {
        let ((index, output), _, rest) = select_all(running).await;
        running = rest;
        let stop = decisive(index, &output);
        if let Some(slot) = outputs.get_mut(index) {
            *slot = Some(output);
        }
        if stop {
            return (outputs, Some(index));
        }
    }
    (outputs, None)
}
