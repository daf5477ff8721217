//! A tower stack on tokio: one deadline for the whole request, at most two
//! requests at once, at most two more queued for 50 ms, the rest shed, and
//! each error mapped to its HTTP status by downcasting.
//!
//! `cargo run --example tokio_stack` (needs the crate's `tokio` feature; the
//! crate's own tests and examples have it on). As the `main.rs` of a new
//! app it needs:
//!
//! ```toml
//! [dependencies]
//! edgeshed = { git = "https://github.com/edgeshed/edgeshed", features = ["tokio"] } # or path = "../edgeshed"
//! futures = "0.3"
//! tokio = { version = "1", features = ["macros", "rt", "time"] }
//! tower = { version = "0.5", features = ["util"] }
//! ```

use edgeshed::deadline::DeadlineLayer;
use edgeshed::error::{BoxError, Expired, OverloadCause, Overloaded};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::time::TokioClock;
use std::convert::Infallible;
use std::time::Duration;
use tower::{ServiceBuilder, ServiceExt};

/// The status a gateway would answer for `result`.
fn status(result: &Result<u64, BoxError>) -> String {
    match result {
        Ok(ms) => format!("200 (worked {ms} ms)"),
        Err(error) => match error.downcast_ref::<Overloaded>() {
            Some(overloaded) if overloaded.cause() == OverloadCause::QueueTimeout => {
                "503 (waited in the queue too long)".to_owned()
            }
            Some(_) => "503 (shed at once: limit and queue full)".to_owned(),
            None if error.is::<Expired>() => "504 (deadline passed)".to_owned(),
            None => format!("500 ({error})"),
        },
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let clock = TokioClock::new();
    // The origin works for as many milliseconds as the request asks.
    let origin = tower::service_fn(|ms: u64| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, Infallible>(ms)
    });
    let service = ServiceBuilder::new()
        // Outermost: 100 ms for the queue wait and the call together.
        .layer(DeadlineLayer::new(Duration::from_millis(100), clock))
        .layer(
            ConcurrencyLimitLayer::new(2)?
                .queue(2, Duration::from_millis(50))?
                .clock(clock),
        )
        .service(origin);

    // Six requests at once: the first is too slow for its deadline, two
    // wait in the queue for a permit, the last two are shed.
    let work = [300, 10, 10, 10, 10, 10];
    let calls = work.map(|ms| service.clone().oneshot(ms));
    for (i, result) in futures::future::join_all(calls).await.iter().enumerate() {
        println!("request {i}: {}", status(result));
    }
    Ok(())
}
