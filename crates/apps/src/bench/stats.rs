//! How sure a bench's pass rates are: 95% intervals (Wilson's score interval, or a bootstrap
//! over tasks when tasks have repeats), and whether two agents' pass rates can be told apart
//! on the trials at hand. Every number here is a pure function of the counts, and the
//! bootstrap draws from a fixed seed, so a report rebuilt from the same folder is the same.

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
/// Bootstrap resamples.
const RESAMPLES: usize = 4000;
/// The bootstrap's fixed seed.
const SEED: u64 = 0x5eed_b3c4_2025_0001;

/// A closed interval `[low, high]`.
pub type Interval = [f64; 2];

/// Wilson's 95% score interval for `passed` successes in `n` trials; `[0, 1]` when `n` is 0.
pub fn wilson(passed: usize, n: usize) -> Interval {
    if n == 0 {
        return [0.0, 1.0];
    }
    let n_f = n as f64;
    let p = passed as f64 / n_f;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = Z95 * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

/// Wilson's 95% score interval with continuity correction (Newcombe 1998, his method 4).
fn wilson_cc(passed: usize, n: usize) -> Interval {
    let n_f = n as f64;
    let p = passed as f64 / n_f;
    let q = 1.0 - p;
    let z2 = Z95 * Z95;
    let denom = 2.0 * (n_f + z2);
    let low = if passed == 0 {
        0.0
    } else {
        let root = (z2 - 2.0 - 1.0 / n_f + 4.0 * p * (n_f * q + 1.0)).max(0.0);
        (2.0 * n_f * p + z2 - 1.0 - Z95 * root.sqrt()) / denom
    };
    let high = if passed == n {
        1.0
    } else {
        let root = (z2 + 2.0 - 1.0 / n_f + 4.0 * p * (n_f * q - 1.0)).max(0.0);
        (2.0 * n_f * p + z2 + 1.0 + Z95 * root.sqrt()) / denom
    };
    [low.max(0.0), high.min(1.0)]
}

/// Newcombe's score interval for the difference of two pass rates, `a.0/a.1 - b.0/b.1`, built
/// from each rate's continuity-corrected Wilson interval (his method 11): conservative with
/// the few trials of a bench, where the uncorrected one tells 2/2 from 0/2. None when either
/// has no trial.
pub fn newcombe(a: (usize, usize), b: (usize, usize)) -> Option<Interval> {
    if a.1 == 0 || b.1 == 0 {
        return None;
    }
    let (pa, pb) = (a.0 as f64 / a.1 as f64, b.0 as f64 / b.1 as f64);
    let ([la, ua], [lb, ub]) = (wilson_cc(a.0, a.1), wilson_cc(b.0, b.1));
    let d = pa - pb;
    let below = ((pa - la).powi(2) + (ub - pb).powi(2)).sqrt();
    let above = ((ua - pa).powi(2) + (pb - lb).powi(2)).sqrt();
    Some([(d - below).max(-1.0), (d + above).min(1.0)])
}

/// The graded trials of one agent on one task: whether each passed.
pub type Cell = Vec<bool>;

/// A two-stage percentile bootstrap over `cells[task][agent]`: each resample draws as many
/// tasks as there are, with replacement, and within each drawn task as many trials of each
/// agent as it has, with replacement. Returns each agent's 95% interval of the pooled pass
/// rate, and for each pair `(i, j)` with `i < j` (in that order) the interval of the
/// difference `i - j`, drawn on the same tasks. An agent with no graded trial gets `[0, 1]`,
/// a pair with such an agent None.
pub fn bootstrap(cells: &[Vec<Cell>], agents: usize) -> (Vec<Interval>, Vec<Option<Interval>>) {
    let mut rng = SplitMix64(SEED);
    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(RESAMPLES); agents];
    let pairs: Vec<(usize, usize)> = (0..agents)
        .flat_map(|i| (i + 1..agents).map(move |j| (i, j)))
        .collect();
    let mut diffs: Vec<Vec<f64>> = vec![Vec::with_capacity(RESAMPLES); pairs.len()];
    let tasks = cells.len();
    for _ in 0..RESAMPLES {
        let mut passed = vec![0usize; agents];
        let mut graded = vec![0usize; agents];
        for _ in 0..tasks {
            let task = &cells[rng.below(tasks)];
            for (agent, cell) in task.iter().enumerate().take(agents) {
                for _ in 0..cell.len() {
                    passed[agent] += usize::from(cell[rng.below(cell.len())]);
                }
                graded[agent] += cell.len();
            }
        }
        let rate: Vec<Option<f64>> = (0..agents)
            .map(|a| (graded[a] > 0).then(|| passed[a] as f64 / graded[a] as f64))
            .collect();
        for (a, r) in rate.iter().enumerate() {
            if let Some(r) = r {
                rates[a].push(*r);
            }
        }
        for (k, &(i, j)) in pairs.iter().enumerate() {
            if let (Some(ri), Some(rj)) = (rate[i], rate[j]) {
                diffs[k].push(ri - rj);
            }
        }
    }
    let intervals = rates
        .into_iter()
        .map(|r| percentiles(r).unwrap_or([0.0, 1.0]))
        .collect();
    let differences = diffs.into_iter().map(percentiles).collect();
    (intervals, differences)
}

/// The 2.5th and 97.5th percentiles (nearest rank) of `values`; None when empty.
fn percentiles(mut values: Vec<f64>) -> Option<Interval> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let last = values.len() - 1;
    let low = (0.025 * last as f64).floor() as usize;
    let high = (0.975 * last as f64).ceil() as usize;
    Some([values[low], values[high.min(last)]])
}

/// The smallest interval holding both.
pub fn union(a: Interval, b: Interval) -> Interval {
    [a[0].min(b[0]), a[1].max(b[1])]
}

/// `v` rounded to 4 decimals, as every number of `report.json` is.
pub fn round4(v: f64) -> f64 {
    let r = (v * 10_000.0).round() / 10_000.0;
    // -0.0 and 0.0 print differently; a report says 0.
    if r == 0.0 { 0.0 } else { r }
}

/// Sebastiano Vigna's SplitMix64: small, fast and the same on every machine.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0), by Lemire's multiply-shift (bias below 2^-32 here).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounded(i: Interval) -> Interval {
        [round4(i[0]), round4(i[1])]
    }

    #[test]
    fn wilson_matches_published_bounds() {
        // 0/20, 15/20 and 20/20: the textbook values (e.g. Newcombe 1998, table I).
        assert_eq!(rounded(wilson(0, 20)), [0.0, 0.1611]);
        assert_eq!(rounded(wilson(15, 20)), [0.5313, 0.8881]);
        assert_eq!(rounded(wilson(20, 20)), [0.8389, 1.0]);
        assert_eq!(rounded(wilson(2, 2)), [0.3424, 1.0]);
        assert_eq!(wilson(0, 0), [0.0, 1.0]);
    }

    #[test]
    fn newcombe_tells_apart_only_what_the_counts_support() {
        assert_eq!(rounded(wilson_cc(15, 20)), [0.5059, 0.9041]);
        assert_eq!(rounded(newcombe((20, 20), (0, 20)).unwrap()), [0.7165, 1.0]);
        assert_eq!(
            rounded(newcombe((15, 20), (0, 20)).unwrap()),
            [0.4341, 0.9041]
        );
        // 15/20 against 20/20 is just short of telling apart (Fisher's exact test: p = 0.047).
        assert_eq!(
            rounded(newcombe((15, 20), (20, 20)).unwrap()),
            [-0.4941, 0.0028]
        );
        // Two trials each prove nothing.
        assert_eq!(rounded(newcombe((2, 2), (0, 2)).unwrap()), [-0.1344, 1.0]);
        assert_eq!(newcombe((1, 1), (0, 0)), None);
    }

    #[test]
    fn the_bootstrap_is_reproducible_and_pairs_agents_on_the_same_tasks() {
        // Three tasks, two agents, three repeats; agent 0 passes task 0 and 1 always.
        let cells: Vec<Vec<Cell>> = vec![
            vec![vec![true; 3], vec![false, true, false]],
            vec![vec![true; 3], vec![false; 3]],
            vec![vec![false, false, true], vec![false; 3]],
        ];
        let first = bootstrap(&cells, 2);
        assert_eq!(first, bootstrap(&cells, 2));
        let (rates, diffs) = first;
        let [low, high] = rates[0];
        assert!(low < 7.0 / 9.0 && 7.0 / 9.0 < high, "{low} {high}");
        assert!(high <= 1.0 && low >= 0.0);
        assert_eq!(diffs.len(), 1);
        let d = diffs[0].unwrap();
        assert!(d[0] < 6.0 / 9.0 && 6.0 / 9.0 < d[1], "{d:?}");
    }

    #[test]
    fn an_agent_without_graded_trials_has_the_whole_interval() {
        let cells: Vec<Vec<Cell>> = vec![vec![vec![true, true], vec![]]; 2];
        let (rates, diffs) = bootstrap(&cells, 2);
        assert_eq!(rates[0], [1.0, 1.0]);
        assert_eq!(rates[1], [0.0, 1.0]);
        assert_eq!(diffs, vec![None]);
    }
}
