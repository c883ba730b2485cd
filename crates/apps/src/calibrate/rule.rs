//! The numbers of a calibration: the summary of a metric over the seeds, the print resolution
//! of a value, the tolerance floor, and how a `published` value and a `tolerance` are rounded
//! and written into a task file.
//!
//! Rounding: both numbers are written to one decimal place, the finer of the one that keeps
//! [`PUBLISHED_DIGITS`] significant digits of the value and the one that keeps
//! [`TOLERANCE_DIGITS`] of the tolerance; the value is rounded to it, the tolerance rounded
//! up (it never shrinks). When the value is below 0.001 both are written with an exponent
//! (`6.581e-5`, `3.30e-6`).

/// Significant digits a published value keeps, whatever its magnitude.
pub const PUBLISHED_DIGITS: i32 = 4;
/// Significant digits a tolerance keeps at least.
pub const TOLERANCE_DIGITS: i32 = 2;
/// Relative tolerance floor: 1% of |mean|.
pub const FLOOR_RELATIVE: f64 = 0.01;
/// Standard deviations in a measured tolerance.
pub const STD_FACTOR: f64 = 3.0;
/// Relative tolerance when the seeds moved nothing, so that no spread was measured.
pub const UNMEASURED_RELATIVE: f64 = 0.05;

/// Mean, spread and range of one metric over the seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The values, one per seed in seed order.
    pub values: Vec<f64>,
    /// Arithmetic mean (the value itself when all are bit-identical).
    pub mean: f64,
    /// Sample standard deviation (n - 1); exactly 0 when all values are bit-identical.
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Whether every value is bit-identical to the first: the seeds moved nothing.
    pub identical: bool,
}

impl Summary {
    /// The summary of `values`; None when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let first = *values.first()?;
        let identical = values.iter().all(|v| v.to_bits() == first.to_bits());
        let n = values.len() as f64;
        let (mean, std) = if identical {
            (first, 0.0)
        } else {
            let mean = values.iter().sum::<f64>() / n;
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (mean, var.sqrt())
        };
        Some(Summary {
            values: values.to_vec(),
            mean,
            std,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            identical,
        })
    }
}

/// One unit of the last digit of a printed number: `0.9778` → 0.0001, `6.58e-5` → 1e-7,
/// `98` and `98%` → 1; None when the text is not a number.
pub fn resolution_of(text: &str) -> Option<f64> {
    let t = text.trim().trim_end_matches('%').trim();
    t.parse::<f64>().ok().filter(|v| v.is_finite())?;
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    Some(10f64.powi(exponent - decimals))
}

/// The smallest measured tolerance around `mean`: 1% of |mean|, and at least the print
/// resolution when it is known (a difference below one unit of the last printed digit is
/// the print's rounding).
pub fn floor(mean: f64, resolution: Option<f64>) -> f64 {
    (FLOOR_RELATIVE * mean.abs()).max(resolution.unwrap_or(0.0))
}

/// The tolerance written when no spread was measured: 5% of |mean|, at least the print
/// resolution.
pub fn unmeasured(mean: f64, resolution: Option<f64>) -> f64 {
    (UNMEASURED_RELATIVE * mean.abs()).max(resolution.unwrap_or(0.0))
}

/// The decimal exponent of |v|; None for 0 and non-finite values.
fn magnitude(v: f64) -> Option<i32> {
    (v != 0.0 && v.is_finite()).then(|| v.abs().log10().floor() as i32)
}

/// A `published` value and `tolerance` as they are written into a task file.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// The published value, rounded to `decimals` places.
    pub published: f64,
    /// The tolerance, rounded up to `decimals` places.
    pub tolerance: f64,
    /// Decimal places both are rounded to.
    pub decimals: usize,
    /// Whether both are written with an exponent (the value is below 0.001).
    pub exponent: bool,
}

impl Suggestion {
    /// Rounds a centre value and a raw tolerance the way task files get them (see the module
    /// documentation).
    pub fn rounded(value: f64, raw_tolerance: f64) -> Suggestion {
        let raw = if raw_tolerance.is_finite() {
            raw_tolerance.max(0.0)
        } else {
            0.0
        };
        let mut places = 0;
        if let Some(e) = magnitude(value) {
            places = places.max(PUBLISHED_DIGITS - 1 - e);
        }
        if let Some(e) = magnitude(raw) {
            places = places.max(TOLERANCE_DIGITS - 1 - e);
        }
        let decimals = places.max(0) as usize;
        let exponent = match magnitude(value) {
            Some(e) => e < -3,
            None => magnitude(raw).is_some_and(|e| e < -3),
        };
        let quantum = 10f64.powi(-(decimals as i32));
        // A hair below the exact multiple so that 0.0031 stays 0.0031 despite binary noise.
        let tolerance = ((raw / quantum) * (1.0 - 1e-12)).ceil() * quantum;
        let published = (value / quantum).round() * quantum;
        Suggestion {
            published: round_to(published, decimals),
            tolerance: round_to(tolerance, decimals),
            decimals,
            exponent,
        }
    }

    /// The same tolerance around `published` instead (a claim the runs authenticated), written
    /// to as many places as the claim or the tolerance needs: 0.81 stays 0.81 beside a
    /// tolerance of 0.0098.
    pub fn around(&self, published: f64) -> Suggestion {
        let places = magnitude(published)
            .map_or(0, |e| (PUBLISHED_DIGITS - 1 - e).max(0) as usize)
            .max(self.decimals);
        let decimals = (0..=places)
            .find(|&d| round_to(published, d) == published)
            .unwrap_or(places)
            .max(self.decimals);
        Suggestion {
            published: round_to(published, decimals),
            tolerance: self.tolerance,
            decimals,
            exponent: self.exponent,
        }
    }

    /// The published value as TOML (always a float).
    pub fn published_toml(&self) -> String {
        format_number(self.published, self.decimals, self.exponent)
    }

    /// The tolerance as TOML (always a float).
    pub fn tolerance_toml(&self) -> String {
        format_number(self.tolerance, self.decimals, self.exponent)
    }
}

fn round_to(v: f64, decimals: usize) -> f64 {
    format!("{v:.decimals$}").parse().unwrap_or(v)
}

/// `v` rounded to `decimals` places as a TOML float: with a `.0` when that leaves an integer
/// (TOML would read an integer otherwise), or, with `exponent`, as `6.581e-5`.
pub fn format_number(v: f64, decimals: usize, exponent: bool) -> String {
    if exponent {
        return match magnitude(v) {
            Some(e) => {
                let digits = (decimals as i32 + e).max(0) as usize;
                format!("{v:.digits$e}")
            }
            None => "0.0".to_string(),
        };
    }
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

/// A number for people: up to 6 significant digits, no trailing zeros (an exponent below
/// 0.0001 and from 1e10 on).
pub fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-4..=9).contains(&magnitude) {
        let s = format!("{v:.5e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (5 - magnitude).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(value: f64, raw: f64) -> (String, String) {
        let s = Suggestion::rounded(value, raw);
        (s.published_toml(), s.tolerance_toml())
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    #[test]
    fn sample_std_uses_n_minus_one_and_identical_values_have_none() {
        let s = Summary::of(&[1.0, 2.0, 4.0]).unwrap();
        assert!((s.mean - 7.0 / 3.0).abs() < 1e-12);
        assert!((s.std - (7.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.min, s.max, s.identical), (1.0, 4.0, false));
        assert_eq!(Summary::of(&[2.5]).unwrap().std, 0.0);
        assert!(Summary::of(&[]).is_none());
        // 0.1 three times sums to 0.30000000000000004: bit-identical values still have a
        // mean equal to each and no spread at all.
        let s = Summary::of(&[0.1, 0.1, 0.1]).unwrap();
        assert_eq!((s.mean, s.std, s.identical), (0.1, 0.0, true));
    }

    #[test]
    fn published_values_keep_four_significant_digits_at_every_magnitude() {
        // The value of the issue: 6.58139e-5 on both seeds, with 5% of it as the tolerance.
        assert_eq!(
            written(6.58139e-5, 0.05 * 6.58139e-5),
            pair("6.581e-5", "3.30e-6")
        );
        assert_eq!(written(1.234567e-5, 1.0e-7), pair("1.235e-5", "1.0e-7"));
        assert_eq!(written(0.000897, 0.00002691), pair("8.970e-4", "2.70e-5"));
        assert_eq!(written(0.0123456, 0.0005), pair("0.01235", "0.00050"));
        assert_eq!(written(0.9778, 0.009778), pair("0.9778", "0.0098"));
        assert_eq!(written(2.333333, 4.582576), pair("2.333", "4.583"));
        assert_eq!(written(97.456, 0.97456), pair("97.46", "0.98"));
        assert_eq!(written(1234.5, 40.0), pair("1235.0", "40.0"));
        assert_eq!(written(987.654, 0.0123), pair("987.654", "0.013"));
        // A tolerance finer than the value's fourth digit sets the place for both.
        assert_eq!(
            written(0.9778123, 0.0000031),
            pair("0.9778123", "0.0000031")
        );
        assert_eq!(written(1.0, 0.0031).1, "0.0031");
        // Rounding up never shrinks a tolerance; a tolerance of 0 stays 0.
        for (value, raw) in [
            (6.58e-5, 3.29e-6),
            (0.97, 0.00971),
            (512.0, 5.121),
            (3.3e-3, 1e-5),
        ] {
            let s = Suggestion::rounded(value, raw);
            assert!(s.tolerance >= raw * (1.0 - 1e-9), "{value} {raw}: {s:?}");
            assert!(
                s.tolerance <= raw * 1.1 + 10f64.powi(-(s.decimals as i32)),
                "{s:?}"
            );
            assert!((s.published - value).abs() <= value.abs() * 5e-4, "{s:?}");
        }
        assert_eq!(written(0.5, 0.0), pair("0.5000", "0.0000"));
    }

    #[test]
    fn written_numbers_are_toml_floats() {
        #[derive(serde::Deserialize)]
        struct Doc {
            a: f64,
            b: f64,
        }
        for (value, raw) in [
            (6.58139e-5, 3.3e-6),
            (1234.5, 40.0),
            (0.0, 1e-7),
            (-2.5e-4, 1e-6),
        ] {
            let s = Suggestion::rounded(value, raw);
            let text = format!("a = {}\nb = {}\n", s.published_toml(), s.tolerance_toml());
            let doc: Doc = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((doc.a, doc.b), (s.published, s.tolerance), "{text}");
        }
    }

    #[test]
    fn the_floor_is_relative_with_the_print_resolution_under_it() {
        assert_eq!(resolution_of("0.9778"), Some(1e-4));
        assert_eq!(resolution_of("6.58139e-5"), Some(1e-10));
        assert_eq!(resolution_of("98%"), Some(1.0));
        assert_eq!(resolution_of("2.0"), Some(0.1));
        assert_eq!(resolution_of("1.5E3"), Some(100.0));
        assert_eq!(resolution_of("n/a"), None);
        // From 1e-5 to 1e3 the floor is 1% of the value: never the old 0.001 that was
        // fifteen times a value of 6.58e-5.
        for mean in [1e-5, 6.58139e-5, 1e-3, 0.05, 0.9778, 12.5, 1e3] {
            let f = floor(mean, Some(mean * 1e-6));
            assert!((f - 0.01 * mean).abs() <= 1e-15 * mean, "{mean}: {f}");
        }
        // A value printed with few digits: one unit of its last digit is the floor.
        assert_eq!(floor(0.03, Some(0.01)), 0.01);
        // Near zero the relative floor vanishes and only the resolution is left.
        assert_eq!(floor(0.0, Some(1e-4)), 1e-4);
        assert_eq!(unmeasured(6.58139e-5, Some(1e-10)), 0.05 * 6.58139e-5);
        assert_eq!(unmeasured(0.0, None), 0.0);
    }

    #[test]
    fn numbers_for_people_are_short() {
        assert_eq!(short(0.011243333), "0.0112433");
        assert_eq!(short(0.98), "0.98");
        assert_eq!(short(12.0), "12");
        assert_eq!(short(1.5e-7), "1.5e-7");
        assert_eq!(short(6.58139e-5), "6.58139e-5");
        assert_eq!(short(1e-10), "1e-10");
        assert_eq!(short(-2.5e12), "-2.5e12");
    }
}
