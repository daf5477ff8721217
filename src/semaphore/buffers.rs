//! How the semaphore's buffers give memory back: a buffer at most a quarter
//! full shrinks to twice what it holds, above a small floor.

/// Buffers at or below this many entries are never shrunk.
pub(crate) const FLOOR: usize = 32;

/// Shrinks `buffer` once it is at most a quarter full (above [`FLOOR`]).
pub(crate) fn shrink<T>(buffer: &mut Vec<T>) {
    if buffer.capacity() > FLOOR && buffer.len() * 4 <= buffer.capacity() {
        buffer.shrink_to((buffer.len() * 2).max(FLOOR));
    }
}
