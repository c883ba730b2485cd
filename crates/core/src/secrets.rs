//! Secrets never reach a recording: the values of environment variables whose names end in
//! `_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD` are replaced in everything recorded, also when
//! a value is split across two chunks of terminal output.

/// What a secret value is replaced with.
pub const REDACTED: &str = "[redacted]";
/// Values shorter than this are not treated as secrets (they would match everywhere).
pub const MIN_SECRET_LEN: usize = 4;
/// Name suffixes of secret variables.
pub const SECRET_SUFFIXES: [&str; 4] = ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// The secret values to redact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    values: Vec<String>,
}

impl Secrets {
    /// The secrets among `vars` (name, value).
    pub fn from_vars<I: IntoIterator<Item = (String, String)>>(vars: I) -> Secrets {
        let mut values: Vec<String> = vars
            .into_iter()
            .filter(|(name, value)| {
                let upper = name.to_ascii_uppercase();
                SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
                    && value.chars().count() >= MIN_SECRET_LEN
            })
            .map(|(_, value)| value)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Secrets { values }
    }

    /// The secrets of this process's environment.
    pub fn from_env() -> Secrets {
        Secrets::from_vars(std::env::vars())
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret value replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }

    /// Replaces every secret value in `text` (leaving it untouched when it holds none).
    pub fn redact_in_place(&self, text: &mut String) {
        if self.values.iter().any(|v| text.contains(v.as_str())) {
            *text = self.redact(text);
        }
    }

    /// The length of the longest suffix of `text` that is a proper prefix of a secret.
    fn held_back(&self, text: &str) -> usize {
        let mut longest = 0;
        for value in &self.values {
            let max = value.len().saturating_sub(1).min(text.len());
            for k in (longest + 1..=max).rev() {
                if value.is_char_boundary(k)
                    && text.is_char_boundary(text.len() - k)
                    && text.ends_with(&value[..k])
                {
                    longest = k;
                    break;
                }
            }
        }
        longest
    }
}

/// Redacts a stream of chunks: text that may be the start of a secret is held back until
/// the next chunk shows whether it is.
#[derive(Debug, Clone, Default)]
pub struct RedactStream {
    pending: String,
}

impl RedactStream {
    /// A stream with nothing held back.
    pub fn new() -> RedactStream {
        RedactStream::default()
    }

    /// Feeds a chunk; returns what can be passed on.
    pub fn feed(&mut self, secrets: &Secrets, text: String) -> String {
        if secrets.is_empty() {
            return text;
        }
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(&text);
        let redacted = secrets.redact(&buf);
        let hold = secrets.held_back(&redacted);
        let cut = redacted.len() - hold;
        self.pending = redacted[cut..].to_string();
        redacted[..cut].to_string()
    }

    /// Returns what was held back (end of stream).
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> Secrets {
        Secrets::from_vars([
            ("OPENAI_API_KEY".to_string(), "sk-abc123XYZ".to_string()),
            ("GITHUB_TOKEN".to_string(), "ghp_tokenvalue".to_string()),
            ("DB_PASSWORD".to_string(), "hunter2!".to_string()),
            ("PATH".to_string(), "/usr/bin".to_string()),
            ("SHORT_KEY".to_string(), "ab".to_string()),
        ])
    }

    #[test]
    fn only_secret_names_count() {
        let s = secrets();
        assert_eq!(
            s.redact("key sk-abc123XYZ and /usr/bin and ab"),
            "key [redacted] and /usr/bin and ab"
        );
        assert_eq!(s.redact("ghp_tokenvalue hunter2!"), "[redacted] [redacted]");
    }

    #[test]
    fn values_split_across_chunks_are_redacted_at_every_cut() {
        let s = secrets();
        let text = "export OPENAI_API_KEY=sk-abc123XYZ; echo done ✓ ghp_tokenvalue";
        for cut in (0..=text.len()).filter(|i| text.is_char_boundary(*i)) {
            let mut stream = RedactStream::new();
            let mut out = stream.feed(&s, text[..cut].to_string());
            out.push_str(&stream.feed(&s, text[cut..].to_string()));
            out.push_str(&stream.finish());
            assert_eq!(
                out, "export OPENAI_API_KEY=[redacted]; echo done ✓ [redacted]",
                "cut {cut}"
            );
        }
    }

    #[test]
    fn ordinary_text_is_not_held_back() {
        let s = secrets();
        let mut stream = RedactStream::new();
        assert_eq!(
            stream.feed(&s, "epoch 1 loss=0.5\r\n".to_string()),
            "epoch 1 loss=0.5\r\n"
        );
        assert_eq!(stream.feed(&s, "prefix sk-ab".to_string()), "prefix ");
        assert_eq!(stream.finish(), "sk-ab");
    }
}
