//! Text fitted to a column: a leaf the panes and the frame both read.

/// `text` in at most `width` columns: whole when it fits, else its end after a leading `…`,
/// so a path too long for its column keeps its file name (`…ples/train_rnn.ipynb`).
pub fn keep_end(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if unicode_width::UnicodeWidthStr::width(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut kept = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}
