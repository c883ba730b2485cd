//! Lines of a replace block put side by side: lines that resemble each other are kept on
//! one row (a monotone best-weight alignment), and the lines between such anchors are
//! zipped pairwise, the shorter side padded. Large blocks are simply zipped.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::inline::{Granularity, tokenize};

/// Blocks with more old × new line pairs than this are zipped without alignment.
const MAX_ALIGN_CELLS: usize = 40_000;

/// Row plan of a replace block: indices into `old` and `new` (at least one present).
pub type Plan = Vec<(Option<usize>, Option<usize>)>;

/// Plans the rows of a replace block; `min_similarity` is the token overlap (Dice,
/// 0..=1) two lines need to be anchored on one row.
pub fn align_block(old: &[&str], new: &[&str], min_similarity: f32) -> Plan {
    let small = old.len().saturating_mul(new.len()) <= MAX_ALIGN_CELLS;
    let anchors = if small && (old.len() > 1 || new.len() > 1) {
        anchors(old, new, min_similarity)
    } else {
        Vec::new()
    };
    let mut plan = Vec::with_capacity(old.len().max(new.len()));
    let (mut oi, mut ni) = (0, 0);
    for (ao, an) in anchors.into_iter().chain([(old.len(), new.len())]) {
        zip(&mut plan, oi..ao, ni..an);
        if ao < old.len() && an < new.len() {
            plan.push((Some(ao), Some(an)));
        }
        (oi, ni) = (ao + 1, an + 1);
    }
    plan
}

/// The plain plan: rows zipped pairwise, the shorter side padded.
pub fn zipped(old_len: usize, new_len: usize) -> Plan {
    let mut plan = Vec::with_capacity(old_len.max(new_len));
    zip(&mut plan, 0..old_len, 0..new_len);
    plan
}

fn zip(plan: &mut Plan, old: std::ops::Range<usize>, new: std::ops::Range<usize>) {
    for k in 0..old.len().max(new.len()) {
        let o = Some(old.start + k).filter(|i| *i < old.end);
        let n = Some(new.start + k).filter(|i| *i < new.end);
        plan.push((o, n));
    }
}

/// Pairs (old, new) maximising the summed similarity of pairs at or above the minimum.
fn anchors(old: &[&str], new: &[&str], min_similarity: f32) -> Vec<(usize, usize)> {
    let bags_old: Vec<Vec<u64>> = old.iter().map(|l| bag(l)).collect();
    let bags_new: Vec<Vec<u64>> = new.iter().map(|l| bag(l)).collect();
    let (n, m) = (old.len(), new.len());
    // best[i][j]: best total for old[i..] and new[j..], stored row-major with width m + 1.
    let w = m + 1;
    let mut best = vec![0f32; (n + 1) * w];
    let mut take = vec![false; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let skip = best[(i + 1) * w + j].max(best[i * w + j + 1]);
            let sim = dice(&bags_old[i], &bags_new[j]);
            let pair = if sim >= min_similarity {
                sim + best[(i + 1) * w + j + 1]
            } else {
                f32::MIN
            };
            if pair > skip {
                best[i * w + j] = pair;
                take[i * w + j] = true;
            } else {
                best[i * w + j] = skip;
            }
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if take[i * w + j] {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if best[(i + 1) * w + j] >= best[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Sorted hashes of a line's non-blank tokens.
fn bag(line: &str) -> Vec<u64> {
    let mut hashes: Vec<u64> = tokenize(line, Granularity::Words)
        .into_iter()
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            let mut h = DefaultHasher::new();
            t.hash(&mut h);
            h.finish()
        })
        .collect();
    hashes.sort_unstable();
    hashes
}

/// Dice coefficient of two sorted multisets.
fn dice(a: &[u64], b: &[u64]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * common) as f32 / (a.len() + b.len()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sized_blocks_of_corresponding_lines_are_zipped() {
        let plan = align_block(&["a = 1", "b = 2"], &["a = 10", "b = 20"], 0.5);
        assert_eq!(plan, vec![(Some(0), Some(0)), (Some(1), Some(1))]);
    }

    #[test]
    fn similar_lines_stay_on_one_row_and_extra_lines_get_their_own() {
        let old = ["def forward(self, x):", "return self.fc2(x)"];
        let new = [
            "@nn.compact",
            "def __call__(self, x):",
            "return nn.Dense(10)(x)",
        ];
        assert_eq!(
            align_block(&old, &new, 0.5),
            vec![(None, Some(0)), (Some(0), Some(1)), (Some(1), Some(2))]
        );
    }

    #[test]
    fn dissimilar_lines_are_zipped_with_padding() {
        let plan = align_block(&["alpha"], &["beta", "gamma", "delta"], 0.5);
        assert_eq!(
            plan,
            vec![(Some(0), Some(0)), (None, Some(1)), (None, Some(2))]
        );
    }
}
