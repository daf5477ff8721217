//! Quickstart: a service that runs at most two requests at once, lets at most
//! two more wait for 20 ms, and sheds the rest with `Overloaded` (HTTP 503).
//!
//! Runs on `futures`' tiny executor with a `ManualClock`, so the output is
//! deterministic: `cargo run --example quickstart`. As the `main.rs` of a
//! new app it needs:
//!
//! ```toml
//! [dependencies]
//! edgeshed = { git = "https://github.com/edgeshed/edgeshed" } # or path = "../edgeshed"
//! futures = "0.3"
//! tower = { version = "0.5", features = ["util"] }
//! tower-layer = "0.3"
//! tower-service = "0.3"
//! ```

use edgeshed::error::{BoxError, Overloaded};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::time::ManualClock;
use std::convert::Infallible;
use std::future::poll_fn;
use std::time::Duration;
use tower_layer::Layer;
use tower_service::Service;

fn describe(result: &Result<u32, BoxError>) -> String {
    match result {
        Ok(value) => format!("ok({value})"),
        Err(error) if error.is::<Overloaded>() => format!("shed: {error}"),
        Err(error) => format!("error: {error}"),
    }
}

fn main() -> Result<(), BoxError> {
    futures::executor::block_on(async {
        let clock = ManualClock::new(); // a real timer (tokio, JS setTimeout) in production
        let origin = tower::service_fn(|x: u32| async move { Ok::<_, Infallible>(x * 2) });
        let limited = ConcurrencyLimitLayer::new(2)?
            .queue(2, Duration::from_millis(20))?
            .clock(clock.clone())
            .layer(origin);
        println!("limit: 2 in flight, 2 queued for at most 20 ms, the rest shed");

        // Two callers get a permit and start.
        let mut running = Vec::new();
        for x in 0..2 {
            let mut svc = limited.clone();
            poll_fn(|cx| svc.poll_ready(cx)).await?;
            running.push(svc.call(x));
            println!("caller {x}: admitted");
        }

        // Two more wait in the bounded queue.
        let mut waiting: Vec<_> = (0..2).map(|_| limited.clone()).collect();
        for (i, svc) in waiting.iter_mut().enumerate() {
            let ready = futures::poll!(poll_fn(|cx| svc.poll_ready(cx)));
            println!("caller {}: queued (ready now: {})", i + 2, ready.is_ready());
        }

        // The fifth is shed at once.
        let mut fifth = limited.clone();
        poll_fn(|cx| fifth.poll_ready(cx)).await?;
        println!("caller 4: {}", describe(&fifth.call(4).await));

        // A running request completes: the first waiter gets its permit.
        let mut running = running.into_iter();
        if let Some(first) = running.next() {
            println!("caller 0: {}", describe(&first.await));
        }
        let mut waiters = waiting.into_iter();
        let (Some(mut second), Some(mut third)) = (waiters.next(), waiters.next()) else {
            return Ok(());
        };
        poll_fn(|cx| second.poll_ready(cx)).await?;
        println!("caller 2: admitted (its permit came from caller 0)");

        // No permit frees up within 20 ms: the last waiter times out and is shed.
        clock.advance(Duration::from_millis(20));
        poll_fn(|cx| third.poll_ready(cx)).await?;
        println!(
            "caller 3: after 20 ms in the queue: {}",
            describe(&third.call(3).await)
        );

        println!("caller 2: {}", describe(&second.call(21).await));
        for (i, rest) in running.enumerate() {
            println!("caller {}: {}", i + 1, describe(&rest.await));
        }
        Ok(())
    })
}
