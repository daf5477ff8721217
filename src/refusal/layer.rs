use super::RefusalResponse;
use core::time::Duration;
use tower_layer::Layer;

/// Wraps a service in a [`RefusalResponse`]: its refusals become HTTP
/// responses (see [the module](super)).
#[derive(Clone, Copy, Debug)]
pub struct RefusalResponseLayer {
    retry_after: Duration,
}

impl RefusalResponseLayer {
    /// Answers refusals with `retry_after` (whole seconds, rounded up, at
    /// least 1) where the refusal has no time of its own.
    pub const fn new(retry_after: Duration) -> Self {
        Self { retry_after }
    }
}

impl<S> Layer<S> for RefusalResponseLayer {
    type Service = RefusalResponse<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RefusalResponse::new(inner, self.retry_after)
    }
}
