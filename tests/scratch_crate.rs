// Native only: tower, tokio and hyper are host dev-dependencies.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A crate outside this repository can depend on `edgeshed` by path, with
//! only the `tokio` feature, and build and run a `ServiceBuilder` stack on
//! `TokioClock`; and each example builds as a new app with exactly the
//! dependencies its header lists. The crate is written to a temporary directory and built
//! with `cargo run --offline` (the local registry cache; this repository's
//! `Cargo.lock` pins the same versions). Its target directory lives under
//! this repository's `target/`, so later runs only rebuild the scratch crate.

use std::path::PathBuf;
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

/// A manifest for a crate named `name` outside any workspace, with `deps`
/// as its `[dependencies]`.
fn manifest(name: &str, deps: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

# A workspace of its own: not part of any workspace above the temp dir.
[workspace]

[dependencies]
{deps}
"#
    )
}

/// Writes a crate `name` with `deps` and `main` to a temporary directory
/// outside the repository, and runs `cargo <command> --quiet --offline` in
/// it: (success, stdout, stderr).
fn cargo_outside(name: &str, deps: &str, main: &str, command: &str) -> (bool, String, String) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    assert!(
        !dir.starts_with(&repo),
        "the scratch crate must live outside the repository"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest(name, deps)).unwrap();
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"))
        .join("scratch-crate");
    let output = Command::new(env!("CARGO"))
        .args([command, "--quiet", "--offline"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (
        output.status.success(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// `edgeshed = { path = <this repository>, ... }` with `features`.
fn edgeshed_by_path(features: &str) -> String {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    format!(
        "edgeshed = {{ path = {:?}, default-features = false, features = [{features}] }}",
        repo.display().to_string()
    )
}

#[test]
fn a_scratch_crate_outside_the_repository_builds_a_tokio_stack() {
    let deps = format!(
        "{}\ntokio = {{ version = \"1\", features = [\"macros\", \"rt\", \"time\"] }}\n\
         tower = {{ version = \"0.5\", features = [\"util\"] }}",
        edgeshed_by_path("\"tokio\"")
    );
    let (ok, stdout, stderr) = cargo_outside("edgeshed-scratch-user", &deps, MAIN, "run");
    assert!(ok, "cargo run failed: {stderr}\n{stdout}");
    assert_eq!(
        stdout.trim(),
        "answer=42 zero_refused=true is_overloaded_type=true"
    );
}

/// The `[dependencies]` an example's header lists (its ```toml block), with
/// the edgeshed line pointed at this repository.
fn listed_dependencies(example: &str) -> String {
    let toml: Vec<&str> = example
        .lines()
        .skip_while(|line| line.trim() != "//! ```toml")
        .skip(1)
        .take_while(|line| line.trim() != "//! ```")
        .map(|line| line.trim_start_matches("//!").trim())
        .filter(|line| *line != "[dependencies]")
        .collect();
    assert!(!toml.is_empty(), "the example lists no dependencies");
    toml.iter()
        .map(|line| match line.strip_prefix("edgeshed = ") {
            Some(spec) => {
                let features = spec
                    .split_once("features = [")
                    .and_then(|(_, rest)| rest.split_once(']'))
                    .map_or("", |(features, _)| features);
                edgeshed_by_path(features)
            }
            None => (*line).to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_example_builds_as_a_new_app_with_the_dependencies_it_lists() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut built = Vec::new();
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).unwrap();
        let deps = listed_dependencies(&source);
        let crate_name = format!("edgeshed-example-{}", name.replace('_', "-"));
        let (ok, stdout, stderr) = cargo_outside(&crate_name, &deps, &source, "build");
        assert!(
            ok,
            "examples/{name}.rs as a new app with\n{deps}\ndoes not build: {stderr}\n{stdout}"
        );
        built.push(name);
    }
    built.sort();
    assert_eq!(
        built,
        ["axum", "hyper_streaming", "quickstart", "tokio_stack"]
    );
}
