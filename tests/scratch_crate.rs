// Native only: tower, tokio and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A crate outside this repository can depend on `edgeshed` by path, with
//! only the `tokio` feature, and build and run a `ServiceBuilder` stack on
//! `TokioClock`. The crate is written to a temporary directory and built
//! with `cargo run --offline` (the local registry cache; this repository's
//! `Cargo.lock` pins the same versions). Its target directory lives under
//! this repository's `target/`, so later runs only rebuild the scratch crate.

use std::path::{Path, PathBuf};
use std::process::Command;

const MAIN: &str = r#"
use edgeshed::error::{BoxError, Overloaded};
use edgeshed::limit::ConcurrencyLimitLayer;
use edgeshed::load_shed::LoadShedLayer;
use edgeshed::time::TokioClock;
use std::time::Duration;
use tower::{ServiceBuilder, ServiceExt};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let origin = tower::service_fn(|x: u32| async move { Ok::<_, std::convert::Infallible>(x * 2) });
    let service = ServiceBuilder::new()
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(2)?.queue(4, Duration::from_millis(20))?.clock(TokioClock::new()))
        .service(origin);
    let answer = service.clone().oneshot(21).await?;
    let overloaded = ConcurrencyLimitLayer::new(0).is_err();
    println!("answer={answer} zero_refused={overloaded} is_overloaded_type={}",
        BoxError::from(Overloaded::new()).is::<Overloaded>());
    Ok(())
}
"#;

fn manifest(edgeshed: &Path) -> String {
    format!(
        r#"[package]
name = "edgeshed-scratch-user"
version = "0.0.0"
edition = "2021"
publish = false

# A workspace of its own: not part of any workspace above the temp dir.
[workspace]

[dependencies]
edgeshed = {{ path = {path:?}, default-features = false, features = ["tokio"] }}
tokio = {{ version = "1", features = ["macros", "rt", "time"] }}
tower = {{ version = "0.5", features = ["util"] }}
"#,
        path = edgeshed.display().to_string()
    )
}

#[test]
fn a_scratch_crate_outside_the_repository_builds_a_tokio_stack() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("edgeshed-scratch-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    assert!(
        !dir.starts_with(&repo),
        "the scratch crate must live outside the repository"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest(&repo)).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"))
        .join("scratch-crate");
    let output = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--offline"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "cargo run failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.trim(),
        "answer=42 zero_refused=true is_overloaded_type=true"
    );
}
