//! Replays the saved fuzz inputs (`fuzz/regressions/<target>/`) through the
//! same checks as the fuzz targets (`fuzz/checks.rs`), with plain
//! `cargo test` — no libFuzzer, no nightly features.
//!
//! Each directory holds minimised interesting inputs and every input that
//! ever crashed a target; see RELIABILITY.md for how they were found.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

#[path = "../../../fuzz/checks.rs"]
mod checks;

use std::path::PathBuf;

fn replay(target: &str, check: fn(&[u8]) -> Result<(), String>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no regression inputs in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(violation)) => failures.push(format!("{}: {violation}", file.display())),
            Err(_) => failures.push(format!("{}: panicked", file.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {target} inputs fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn config_regressions() {
    replay("config", checks::config);
}

#[test]
fn proxy_path_regressions() {
    replay("proxy_path", checks::proxy_path);
}

/// The checks themselves catch what they claim to (so a replay that passes
/// means something): a dot segment hidden before a `?`, and trailing junk
/// after an IPv6 host, both found by fuzzing and fixed in `proxy_path.rs`.
#[test]
fn fixed_findings_stay_fixed() {
    use edgeshed_worker::proxy_path::OriginUrl;
    let url = OriginUrl::parse("http://o.example/base").unwrap();
    assert_eq!(
        url.join_untrusted(".%2e?x", None).unwrap(),
        "http://o.example/base/.%2e%3Fx"
    );
    assert_eq!(
        url.join_untrusted("a#/b", Some("q")).unwrap(),
        "http://o.example/base/a%23/b?q"
    );
    assert!(OriginUrl::parse("http://[::1]x/base").is_err());
    assert!(OriginUrl::parse("http://[::1]%5ehm\\").is_err());
    assert!(OriginUrl::parse("http://[::1]2").is_err());
    assert!(OriginUrl::parse("http://[:]2/a").is_err());
    assert!(OriginUrl::parse("http://[::1]:8080/base").is_ok());
}
