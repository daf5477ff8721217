#!/usr/bin/env bash
# ChromeDriver with its verbose log appended to $CHROMEDRIVER_LOG (set by
# scripts/chrome-attempt.sh, which shows the log's end when an attempt
# stalls). wasm-bindgen-test-runner adds --port.
exec /usr/bin/chromedriver --verbose --append-log --log-path="${CHROMEDRIVER_LOG:?}" "$@"
