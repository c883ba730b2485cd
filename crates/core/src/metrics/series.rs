//! A metric series held in bounded memory: exact reductions over every point, and a sample
//! of at most [`SAMPLE_CAP`] points for the chart and the divergence marker.
//!
//! A run that logs a metric on each of ten million lines must not hold ten million points:
//! the sample keeps every `stride`-th point (the stride doubles whenever the sample fills)
//! plus the latest point, and `last`/`max`/`min`/`mean` are kept as running values, so the
//! grade is the same as over the whole series.

use std::sync::Arc;

use crate::task::Reduce;

use super::Point;

/// Most points a series keeps for drawing (besides the latest).
pub const SAMPLE_CAP: usize = 8192;

/// How many sampled points a sealed chunk holds. Clones of a series (a replay's snapshots)
/// share its sealed chunks, so a snapshot costs only the chunks sealed since the one before
/// it and its open tail, not the whole sample.
const CHUNK: usize = 256;

/// A bounded series of one metric in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The sample's older points, `CHUNK` to a chunk, shared by every clone.
    sealed: Vec<Arc<[Point]>>,
    /// The sample's newest points (at most `CHUNK`, then the latest point when it is not
    /// one of every `stride`-th).
    tail: Vec<Point>,
    /// Whether the last entry of `tail` is the latest point kept only for being latest.
    latest_extra: bool,
    stride: u64,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            sealed: Vec::new(),
            tail: Vec::new(),
            latest_extra: false,
            stride: 1,
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Series {
    /// Appends the next observation. A point without a step is given its position (1-based)
    /// as its step, so a sampled point keeps its place on the chart's x axis.
    pub fn push(&mut self, point: Point) {
        let index = self.count;
        self.count += 1;
        self.sum += point.value;
        self.min = self.min.min(point.value);
        self.max = self.max.max(point.value);
        let point = Point {
            step: Some(point.step.unwrap_or(index as f64 + 1.0)),
            value: point.value,
        };
        if self.latest_extra {
            self.tail.pop();
        }
        if index.is_multiple_of(self.stride) && self.sample_len() == SAMPLE_CAP {
            self.thin();
        }
        self.latest_extra = !index.is_multiple_of(self.stride);
        self.tail.push(point);
        if self.tail.len() > CHUNK {
            let rest = self.tail.split_off(CHUNK);
            self.sealed
                .push(Arc::from(std::mem::replace(&mut self.tail, rest)));
        }
    }

    /// Keeps the points at multiples of twice the stride (every other kept point), sealed
    /// anew, and doubles the stride.
    fn thin(&mut self) {
        let mut kept: Vec<Point> = self.points().step_by(2).copied().collect();
        self.tail = kept.split_off(kept.len() - kept.len() % CHUNK);
        self.sealed = kept.chunks(CHUNK).map(Arc::from).collect();
        self.stride *= 2;
    }

    /// How many points the sample holds.
    fn sample_len(&self) -> usize {
        self.sealed.len() * CHUNK + self.tail.len()
    }

    /// The sampled points, oldest first, ending with the latest point.
    pub fn points(&self) -> impl DoubleEndedIterator<Item = &Point> + Clone {
        self.sealed
            .iter()
            .flat_map(|chunk| chunk.iter())
            .chain(&self.tail)
    }

    /// The bytes this series holds that `earlier` (an earlier clone of the same series)
    /// does not share with it: every point when there is no earlier one.
    pub fn bytes_beyond(&self, earlier: Option<&Series>) -> usize {
        let shared = |chunk: &Arc<[Point]>| {
            earlier.is_some_and(|e| e.sealed.iter().any(|c| Arc::ptr_eq(c, chunk)))
        };
        let sealed = self.sealed.iter().filter(|chunk| !shared(chunk)).count();
        std::mem::size_of::<Point>() * (sealed * CHUNK + self.tail.len())
    }

    /// How many points were pushed.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether no point was pushed.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The series reduced to one value over every point pushed; `None` when empty.
    pub fn reduce(&self, how: Reduce) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        Some(match how {
            Reduce::Last => self.points().next_back()?.value,
            Reduce::Max => self.max,
            Reduce::Min => self.min,
            Reduce::Mean => self.sum / self.count as f64,
        })
    }
}

impl FromIterator<Point> for Series {
    fn from_iter<I: IntoIterator<Item = Point>>(iter: I) -> Self {
        let mut series = Series::default();
        for point in iter {
            series.push(point);
        }
        series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::reduce;
    use proptest::prelude::*;

    fn at(value: f64) -> Point {
        Point { step: None, value }
    }

    #[test]
    fn small_series_keeps_every_point_with_its_position() {
        let s: Series = [0.5, 0.7, 0.6].into_iter().map(at).collect();
        let steps: Vec<_> = s.points().map(|p| p.step).collect();
        assert_eq!(steps, vec![Some(1.0), Some(2.0), Some(3.0)]);
        assert_eq!(s.reduce(Reduce::Last), Some(0.6));
        assert_eq!(s.reduce(Reduce::Max), Some(0.7));
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn ten_million_points_stay_bounded_and_end_with_the_latest() {
        let mut s = Series::default();
        for i in 0..10_000_000u64 {
            s.push(Point {
                step: Some(i as f64),
                value: (i % 1000) as f64,
            });
        }
        assert!(s.points().count() <= SAMPLE_CAP + 1);
        assert!(s.points().count() > SAMPLE_CAP / 2);
        assert_eq!(s.points().last().map(|p| p.step), Some(Some(9_999_999.0)));
        assert_eq!(s.points().next().map(|p| p.step), Some(Some(0.0)));
        assert_eq!(s.reduce(Reduce::Max), Some(999.0));
        assert_eq!(s.reduce(Reduce::Min), Some(0.0));
        assert_eq!(s.reduce(Reduce::Mean), Some(499.5));
        let steps: Vec<f64> = s.points().filter_map(|p| p.step).collect();
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "sample is in order");
    }

    #[test]
    fn clones_share_sealed_points_and_count_only_what_is_new() {
        let mut s: Series = (0..3_000).map(|i| at(f64::from(i))).collect();
        let earlier = s.clone();
        let whole = 3_000 * std::mem::size_of::<Point>();
        assert_eq!(earlier.bytes_beyond(None), whole);
        assert_eq!(
            s.bytes_beyond(Some(&earlier)),
            (3_000 % CHUNK) * size_of::<Point>()
        );
        for i in 3_000..3_010 {
            s.push(at(f64::from(i)));
        }
        assert!(s.bytes_beyond(Some(&earlier)) <= (CHUNK + 1) * size_of::<Point>());
        assert_eq!(earlier.len(), 3_000, "the clone did not change");
        assert_eq!(earlier.points().count(), 3_000);
        // Past a thinning nothing is shared any more.
        for i in 3_010..20_000 {
            s.push(at(f64::from(i)));
        }
        assert_eq!(s.bytes_beyond(Some(&earlier)), s.bytes_beyond(None));
    }

    proptest! {
        #[test]
        fn reductions_match_the_whole_series(values in prop::collection::vec(-1e6f64..1e6, 0..20_000)) {
            let points: Vec<Point> = values.iter().copied().map(at).collect();
            let series: Series = points.iter().copied().collect();
            for how in [Reduce::Last, Reduce::Max, Reduce::Min, Reduce::Mean] {
                prop_assert_eq!(series.reduce(how), reduce(&points, how));
            }
            prop_assert!(series.points().count() <= SAMPLE_CAP + 1);
            prop_assert_eq!(series.points().last().map(|p| p.value), values.last().copied());
            // Every sampled point is the point at its position in the whole series.
            for p in series.points() {
                let position = p.step.map(|s| s as usize - 1).unwrap_or_default();
                prop_assert_eq!(p.value, values[position]);
            }
        }
    }
}
