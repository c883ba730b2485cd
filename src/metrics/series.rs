//! A metric series held in bounded memory: exact reductions over every point, and a sample
//! of at most [`SAMPLE_CAP`] points for the chart and the divergence marker.
//!
//! A run that logs a metric on each of ten million lines must not hold ten million points:
//! the sample keeps every `stride`-th point (the stride doubles whenever the sample fills)
//! plus the latest point, and `last`/`max`/`min`/`mean` are kept as running values, so the
//! grade is the same as over the whole series.

use crate::task::Reduce;

use super::Point;

/// Most points a series keeps for drawing (besides the latest).
pub const SAMPLE_CAP: usize = 8192;

/// A bounded series of one metric in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Every `stride`-th point, then the latest point when it is not one of those.
    sample: Vec<Point>,
    /// Whether the last entry of `sample` is the latest point kept only for being latest.
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
            sample: Vec::new(),
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
            self.sample.pop();
        }
        if index.is_multiple_of(self.stride) && self.sample.len() == SAMPLE_CAP {
            // Keep the points at multiples of twice the stride: every other kept point.
            let mut position = 0;
            self.sample.retain(|_| {
                position += 1;
                position % 2 == 1
            });
            self.stride *= 2;
        }
        self.latest_extra = !index.is_multiple_of(self.stride);
        self.sample.push(point);
    }

    /// The sampled points, oldest first, ending with the latest point.
    pub fn points(&self) -> &[Point] {
        &self.sample
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
            Reduce::Last => self.sample.last()?.value,
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
        let steps: Vec<_> = s.points().iter().map(|p| p.step).collect();
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
        assert!(s.points().len() <= SAMPLE_CAP + 1);
        assert!(s.points().len() > SAMPLE_CAP / 2);
        assert_eq!(s.points().last().map(|p| p.step), Some(Some(9_999_999.0)));
        assert_eq!(s.points()[0].step, Some(0.0));
        assert_eq!(s.reduce(Reduce::Max), Some(999.0));
        assert_eq!(s.reduce(Reduce::Min), Some(0.0));
        assert_eq!(s.reduce(Reduce::Mean), Some(499.5));
        let steps: Vec<f64> = s.points().iter().filter_map(|p| p.step).collect();
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "sample is in order");
    }

    proptest! {
        #[test]
        fn reductions_match_the_whole_series(values in prop::collection::vec(-1e6f64..1e6, 0..20_000)) {
            let points: Vec<Point> = values.iter().copied().map(at).collect();
            let series: Series = points.iter().copied().collect();
            for how in [Reduce::Last, Reduce::Max, Reduce::Min, Reduce::Mean] {
                prop_assert_eq!(series.reduce(how), reduce(&points, how));
            }
            prop_assert!(series.points().len() <= SAMPLE_CAP + 1);
            prop_assert_eq!(series.points().last().map(|p| p.value), values.last().copied());
            // Every sampled point is the point at its position in the whole series.
            for p in series.points() {
                let position = p.step.map(|s| s as usize - 1).unwrap_or_default();
                prop_assert_eq!(p.value, values[position]);
            }
        }
    }
}
