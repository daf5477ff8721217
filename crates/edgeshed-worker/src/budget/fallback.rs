//! What an isolate admits when the table cannot be reached.

/// The `budget.unavailable` option: what an isolate does while the table is
/// unreachable or overloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unavailable {
    /// `"local"` (default): the isolate's own `maxInFlight` still holds; the
    /// fleet guarantee is suspended until the table answers again.
    #[default]
    Local,
    /// `"shed"`: the isolate keeps spending what it still holds under an
    /// unexpired lease and sheds (503) beyond it; the fleet limit holds.
    Shed,
}

/// The isolate's effective limit for one origin.
///
/// With the table reachable it is min(`local`, `held`), where `held` counts
/// only permits under an unexpired lease. With the table unreachable,
/// [`Unavailable::Local`] falls back to `local` and [`Unavailable::Shed`]
/// keeps min(`local`, `held`), which drops to 0 (shed everything) once the
/// lease has expired.
pub fn effective_limit(local: u32, held: u32, reachable: bool, mode: Unavailable) -> u32 {
    match (reachable, mode) {
        (false, Unavailable::Local) => local,
        (true, _) | (false, Unavailable::Shed) => local.min(held),
    }
}
