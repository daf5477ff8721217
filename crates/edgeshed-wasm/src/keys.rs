//! [`seed_keys`]: the secret every [`Key`](edgeshed::Key) of this wasm instance is hashed
//! with, from the host's randomness.

#[cfg(target_arch = "wasm32")]
use edgeshed::Key;

/// Seeds [`Key`](edgeshed::Key) hashing with 16 bytes of `crypto.getRandomValues`, once per
/// wasm instance; call it before the first key is made (later calls do
/// nothing). `wasm32-unknown-unknown` has no randomness of its own, so
/// without it every isolate would hash keys with the same well-known
/// secret, and a client could make two values collide on purpose.
///
/// Never call it at module scope in workerd, which refuses randomness
/// there: call it in a handler, before the first key.
pub fn seed_keys() {
    #[cfg(target_arch = "wasm32")]
    if !Key::has_secret() {
        let mut secret = [0u8; 16];
        let bytes = crate::host::js::random_secret().to_vec();
        for (to, from) in secret.iter_mut().zip(bytes) {
            *to = from;
        }
        Key::set_secret(secret);
    }
}
