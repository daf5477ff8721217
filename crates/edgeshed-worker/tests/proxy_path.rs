//! The proxy path joiner (`proxy_path`), natively: origin URLs are
//! normalised, and no client input leaves the configured origin or its base
//! path (examples and a property test).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, missing_docs)]

use edgeshed_worker::proxy_path::{OriginUrl, PathRefused};

#[test]
fn origin_urls_are_normalised_and_keep_their_base_path() {
    let url = OriginUrl::parse("HTTP://Api.Example:8080/v1/").unwrap();
    assert_eq!(url.origin(), "http://api.example:8080");
    assert_eq!(url.base_path(), "/v1");
    assert_eq!(url.join_configured("/u"), "http://api.example:8080/v1/u");
    let ipv6 = OriginUrl::parse("http://[::1]:9001").unwrap();
    assert_eq!(ipv6.origin(), "http://[::1]:9001");
}

#[test]
fn proxied_paths_never_leave_the_configured_origin_or_its_base_path() {
    let url = OriginUrl::parse("http://127.0.0.1:9001/api").unwrap();
    let join = |rest: &str, query: Option<&str>| url.join_untrusted(rest, query);
    assert_eq!(
        join("a/b", Some("q=1")).unwrap(),
        "http://127.0.0.1:9001/api/a/b?q=1"
    );
    // Host-changing tricks end up as paths on the configured origin.
    assert_eq!(
        join("/evil.example", None).unwrap(),
        "http://127.0.0.1:9001/api/evil.example"
    );
    assert_eq!(
        join("http://evil.example/", None).unwrap(),
        "http://127.0.0.1:9001/api/http:/evil.example/"
    );
    assert_eq!(
        join("%2F%2Fevil.example", None).unwrap(),
        "http://127.0.0.1:9001/api/%2F%2Fevil.example"
    );
    assert_eq!(
        join("@evil.example/x", None).unwrap(),
        "http://127.0.0.1:9001/api/@evil.example/x"
    );
    // Dot segments, literal or percent-encoded, resolve inside the base path...
    assert_eq!(join("a/../b", None).unwrap(), "http://127.0.0.1:9001/api/b");
    assert_eq!(
        join("a/%2e%2E/b", None).unwrap(),
        "http://127.0.0.1:9001/api/b"
    );
    assert_eq!(
        join("./a/.%2e/", None).unwrap(),
        "http://127.0.0.1:9001/api/"
    );
    // ...and are refused when they would climb out of it.
    assert_eq!(join("../secret", None), Err(PathRefused::EscapesBase));
    assert_eq!(
        join("%2e%2e/%2e%2e/etc/passwd", None),
        Err(PathRefused::EscapesBase)
    );
    assert_eq!(join("a/../../x", None), Err(PathRefused::EscapesBase));
    assert_eq!(join("a\\..\\x", None), Err(PathRefused::BadCharacter));
    // `..` smuggled past servers that decode separators or read `;` params.
    assert_eq!(join("a/..;/x", None), Err(PathRefused::EscapesBase));
    assert_eq!(join("a%2F..%2Fx", None), Err(PathRefused::EscapesBase));
    assert_eq!(join("a%5c..%5cx", None), Err(PathRefused::EscapesBase));
    assert_eq!(join("x/%2e%2e%3b/y", None), Err(PathRefused::EscapesBase));
    // ...while ordinary dots and encoded slashes still pass.
    assert_eq!(
        join("v1.2/file..txt", None).unwrap(),
        "http://127.0.0.1:9001/api/v1.2/file..txt"
    );
    assert_eq!(
        join("bucket/a%2Fb", None).unwrap(),
        "http://127.0.0.1:9001/api/bucket/a%2Fb"
    );
    assert_eq!(join("a\nb", None), Err(PathRefused::BadCharacter));
    assert_eq!(join("a", Some("x#frag")), Err(PathRefused::BadCharacter));
    // Whatever the input, the result starts with the configured origin and base.
    for rest in ["", "/", "//", "x//y", ".", "%2e", "a/./b/", "@", ":", "?"] {
        let joined = join(rest, None).unwrap();
        assert!(
            joined.starts_with("http://127.0.0.1:9001/api/"),
            "{rest:?} -> {joined}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]

    /// Whatever the client sends after the prefix, the joined URL is either
    /// refused or starts with the configured origin and base path followed
    /// by `/` — so no host, port, userinfo or scheme can come from the client.
    #[test]
    fn no_client_input_changes_the_origin(
        rest in "[a-zA-Z0-9./%:@?#\\\\ -]{0,40}",
        query in proptest::option::of("[a-z0-9=&%./:@-]{0,20}"),
    ) {
        let url = OriginUrl::parse("https://origin.example:8443/base").unwrap();
        if let Ok(joined) = url.join_untrusted(&rest, query.as_deref()) {
            proptest::prop_assert!(joined.starts_with("https://origin.example:8443/base/"), "{} -> {}", rest, joined);
            let path = joined.trim_start_matches("https://origin.example:8443");
            proptest::prop_assert!(!path.starts_with("//"), "{} -> {}", rest, joined);
            let path_only = path.split('?').next().unwrap_or_default();
            for segment in path_only.split('/') {
                let lower = segment.to_ascii_lowercase();
                proptest::prop_assert!(lower != ".." && lower != "%2e%2e" && lower != ".%2e" && lower != "%2e.");
            }
        }
    }
}

#[test]
fn a_request_url_splits_into_the_path_and_the_query_as_url_reads_them() {
    use edgeshed_worker::proxy_path::split_request_url;
    let cases = [
        ("http://gateway.test/aggregate", "/aggregate", None),
        (
            "https://gateway.test:8443/users/7?fields=a,b",
            "/users/7",
            Some("fields=a,b"),
        ),
        ("http://gateway.test/", "/", None),
        ("http://gateway.test", "/", None),
        ("http://gateway.test?x=1", "/", Some("x=1")),
        ("http://gateway.test/p?", "/p", None),
        ("http://gateway.test/p#frag?not-a-query", "/p", None),
        ("http://gateway.test/p?q=1#frag", "/p", Some("q=1")),
        ("http://gateway.test/a%2Fb?c=%3F", "/a%2Fb", Some("c=%3F")),
        ("http://user:p%40ss@gateway.test/x?y", "/x", Some("y")),
        (
            "http://[::1]:8787/__edgeshed/stats",
            "/__edgeshed/stats",
            None,
        ),
    ];
    for (url, path, query) in cases {
        assert_eq!(split_request_url(url), (path, query), "{url}");
    }
}
