use crate::time::Instant;

/// Writes a request's absolute deadline into the request, so that the
/// services it reaches can compute their remaining budget.
///
/// Implemented by [`NoStamp`] and by every `Fn(&mut Request, Instant)`.
pub trait Stamp<Request> {
    /// Records `deadline` in `request`.
    fn stamp(&self, request: &mut Request, deadline: Instant);
}

/// Leaves requests unchanged (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoStamp;

impl<Request> Stamp<Request> for NoStamp {
    fn stamp(&self, _request: &mut Request, _deadline: Instant) {}
}

impl<Request, F> Stamp<Request> for F
where
    F: Fn(&mut Request, Instant),
{
    fn stamp(&self, request: &mut Request, deadline: Instant) {
        self(request, deadline);
    }
}
