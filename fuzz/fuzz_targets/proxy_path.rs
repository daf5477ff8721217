//! Fuzz target `proxy_path`: see `fuzz/checks.rs` for what is checked.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = checks::proxy_path(data) {
        panic!("invariant violated: {violation}");
    }
});
