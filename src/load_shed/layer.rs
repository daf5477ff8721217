use super::service::LoadShed;
use tower_layer::Layer;

/// Wraps services in [`LoadShed`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadShedLayer(());

impl LoadShedLayer {
    /// A layer that sheds load when the inner service is not ready.
    pub const fn new() -> Self {
        Self(())
    }
}

impl<S> Layer<S> for LoadShedLayer {
    type Service = LoadShed<S>;

    fn layer(&self, inner: S) -> LoadShed<S> {
        LoadShed::new(inner)
    }
}
