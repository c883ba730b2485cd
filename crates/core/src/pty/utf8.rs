//! Incremental UTF-8 decoding of PTY chunks: a sequence split across two reads is carried to
//! the next chunk, invalid bytes become U+FFFD.

/// Decodes a byte stream chunk by chunk.
#[derive(Debug, Default, Clone)]
pub struct Utf8Carry {
    pending: Vec<u8>,
}

impl Utf8Carry {
    /// A decoder with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes` after whatever was carried; an incomplete trailing sequence is kept.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let mut data = std::mem::take(&mut self.pending);
        data.extend_from_slice(bytes);
        let mut out = String::with_capacity(data.len());
        let mut rest: &[u8] = &data;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // SAFETY-free: `valid` was just checked by from_utf8.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(len) => {
                            out.push('\u{FFFD}');
                            rest = &after[len..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// Flushes an incomplete trailing sequence as U+FFFD (end of stream).
    pub fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            String::new()
        } else {
            self.pending.clear();
            "\u{FFFD}".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_split_sequences() {
        let text = "héllo → ✓";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let mut d = Utf8Carry::new();
            let mut out = d.decode(&bytes[..cut]);
            out.push_str(&d.decode(&bytes[cut..]));
            out.push_str(&d.finish());
            assert_eq!(out, text, "cut at {cut}");
        }
    }

    #[test]
    fn invalid_bytes_become_replacement() {
        let mut d = Utf8Carry::new();
        assert_eq!(d.decode(b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(d.decode(b"\xe2\x82"), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }
}
