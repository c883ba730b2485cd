//! Whether a value meets a criterion, and by how much: the one place that decides it. The
//! grader, the checks of the agent's own runs, the Metrics and Verdict panes and the prompts
//! all ask [`Direction::judge`] (or [`Direction::edges`] for where the accepted region ends).
//!
//! SPEC §2's rules are read on the numbers as people wrote them, in decimal: the task's
//! `published` and `tolerance`, and the value as the run printed it. Each number is taken as
//! the shortest decimal that reads back as the same double (Rust's `{:e}`), which is the
//! number as written whenever it was written with at most 15 significant digits, and the
//! rule's sum is then computed exactly. So `0.751` against `within 0.764 ± 0.013` lies on the
//! edge (margin 0) and passes, where the doubles' own arithmetic puts it 1.2e-17 outside.
//! Numbers so far apart in magnitude that their exact sum needs more than 38 digits (more
//! than 21 orders between them) are compared as doubles, as is anything not finite.

use super::Direction;

/// What a criterion says of one value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// Whether the value meets the criterion.
    pub met: bool,
    /// Signed distance from the acceptance edge, in the criterion's units: positive inside,
    /// 0 on the edge (which passes), negative outside.
    pub margin: f64,
}

impl Direction {
    /// Whether `value` meets the criterion `published`/`tolerance` in this direction, and its
    /// margin, decided in decimal (module docs): `higher` needs
    /// `value - (published - tolerance) >= 0`, `lower` needs
    /// `(published + tolerance) - value >= 0`, `within` needs
    /// `tolerance - |value - published| >= 0`.
    pub fn judge(self, value: f64, published: f64, tolerance: f64) -> Judgement {
        let exact = || -> Option<Decimal> {
            let (v, p, t) = (
                Decimal::of(value)?,
                Decimal::of(published)?,
                Decimal::of(tolerance)?,
            );
            match self {
                Direction::Higher => Decimal::sum(&[v, p.negated(), t]),
                Direction::Lower => Decimal::sum(&[p, t, v.negated()]),
                Direction::Within => {
                    let distance = Decimal::sum(&[v, p.negated()])?.magnitude();
                    Decimal::sum(&[t, distance.negated()])
                }
            }
        };
        match exact() {
            Some(margin) => Judgement {
                met: margin.digits >= 0,
                margin: margin.to_f64(),
            },
            None => {
                let margin = match self {
                    Direction::Higher => value - (published - tolerance),
                    Direction::Lower => (published + tolerance) - value,
                    Direction::Within => tolerance - (value - published).abs(),
                };
                Judgement {
                    met: margin >= 0.0,
                    margin,
                }
            }
        }
    }

    /// The accepted region `[low, high]`, its edges computed as [`Direction::judge`] computes
    /// them (infinite on the open side of `higher` and `lower`): `0.764 ± 0.013` ends at
    /// exactly 0.751 and 0.777.
    pub fn edges(self, published: f64, tolerance: f64) -> (f64, f64) {
        let exact = |t: fn(Decimal) -> Decimal| {
            Decimal::sum(&[Decimal::of(published)?, t(Decimal::of(tolerance)?)])
                .map(Decimal::to_f64)
        };
        let low = exact(Decimal::negated).unwrap_or(published - tolerance);
        let high = exact(|t| t).unwrap_or(published + tolerance);
        match self {
            Direction::Higher => (low, f64::INFINITY),
            Direction::Lower => (f64::NEG_INFINITY, high),
            Direction::Within => (low, high),
        }
    }

    /// The rule a value must meet, in words, each number written by `num`: `at least 0.97 -
    /// 0.01`, `at most 1.93 + 0.05`, `within 0.81 ± 0.005` (the agent's prompt, the grader's
    /// findings). Every painter of a criterion takes its sentence from here or from
    /// [`Direction::rule_bound`] and [`Direction::published_words`].
    pub fn rule_words(self, published: f64, tolerance: f64, num: impl Fn(f64) -> String) -> String {
        let (p, t) = (num(published), num(tolerance));
        match self {
            Direction::Higher => format!("at least {p} - {t}"),
            Direction::Lower => format!("at most {p} + {t}"),
            Direction::Within => format!("within {p} ± {t}"),
        }
    }

    /// The rule as the bound it puts on a value, in a few characters: `≥ 0.96`, `≤ 1.98`,
    /// `0.81 ± 0.005` (the Metrics pane's title), the bound computed as [`Direction::edges`].
    pub fn rule_bound(self, published: f64, tolerance: f64, num: impl Fn(f64) -> String) -> String {
        let (low, high) = self.edges(published, tolerance);
        match self {
            Direction::Higher => format!("≥ {}", num(low)),
            Direction::Lower => format!("≤ {}", num(high)),
            Direction::Within => format!("{} ± {}", num(published), num(tolerance)),
        }
    }

    /// The published value with its tolerance and direction: `published 0.97 ± 0.01
    /// (higher)` (the Verdict pane, the headless progress lines, phase two's prompt).
    pub fn published_words(
        self,
        published: f64,
        tolerance: f64,
        num: impl Fn(f64) -> String,
    ) -> String {
        format!(
            "published {} ± {} ({})",
            num(published),
            num(tolerance),
            self.as_str()
        )
    }
}

/// A decimal number, `digits × 10^exponent`, exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decimal {
    digits: i128,
    exponent: i32,
}

impl Decimal {
    /// The shortest decimal that reads back as `x` (`0.751` for the double nearest 0.751);
    /// None when `x` is not finite.
    fn of(x: f64) -> Option<Decimal> {
        if !x.is_finite() {
            return None;
        }
        // `{:e}` writes the shortest round-trip digits: `7.51e-1`, `-1.5e3`, `0e0`.
        let text = format!("{x:e}");
        let (mantissa, exponent) = text.split_once('e')?;
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{whole}{fraction}").parse().ok()?;
        let exponent = exponent
            .parse::<i32>()
            .ok()?
            .checked_sub(i32::try_from(fraction.len()).ok()?)?;
        Some(Decimal { digits, exponent })
    }

    /// `terms` added exactly; None when aligning them overflows 128 bits.
    fn sum(terms: &[Decimal]) -> Option<Decimal> {
        let exponent = terms.iter().map(|t| t.exponent).min()?;
        let digits = terms.iter().try_fold(0i128, |total, t| {
            let shift = u32::try_from(t.exponent.checked_sub(exponent)?).ok()?;
            total.checked_add(t.digits.checked_mul(10i128.checked_pow(shift)?)?)
        })?;
        Some(Decimal { digits, exponent })
    }

    fn negated(self) -> Decimal {
        Decimal {
            digits: -self.digits,
            ..self
        }
    }

    fn magnitude(self) -> Decimal {
        Decimal {
            digits: self.digits.abs(),
            ..self
        }
    }

    /// The double nearest this decimal (Rust's parser rounds correctly).
    fn to_f64(self) -> f64 {
        format!("{}e{}", self.digits, self.exponent)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_is_written_the_same_way_for_every_painter() {
        let num = |v: f64| v.to_string();
        let rules: Vec<[String; 3]> = [Direction::Higher, Direction::Lower, Direction::Within]
            .into_iter()
            .map(|d| {
                [
                    d.rule_words(0.97, 0.01, num),
                    d.rule_bound(0.97, 0.01, num),
                    d.published_words(0.97, 0.01, num),
                ]
            })
            .collect();
        assert_eq!(
            rules,
            [
                [
                    "at least 0.97 - 0.01",
                    "≥ 0.96",
                    "published 0.97 ± 0.01 (higher)"
                ],
                [
                    "at most 0.97 + 0.01",
                    "≤ 0.98",
                    "published 0.97 ± 0.01 (lower)"
                ],
                [
                    "within 0.97 ± 0.01",
                    "0.97 ± 0.01",
                    "published 0.97 ± 0.01 (within)"
                ],
            ]
            .map(|r| r.map(String::from))
        );
    }

    /// The judgement of `value` against `published`/`tolerance` in `direction`.
    fn judge(direction: Direction, value: f64, published: f64, tolerance: f64) -> Judgement {
        direction.judge(value, published, tolerance)
    }

    #[test]
    fn within_the_issue_case_lies_on_the_edge_and_passes() {
        // `score=0.751` against `within 0.764 ± 0.013`: the doubles say 1.2e-17 outside.
        let j = judge(Direction::Within, 0.751, 0.764, 0.013);
        assert_eq!(
            j,
            Judgement {
                met: true,
                margin: 0.0
            }
        );
        assert_eq!(
            judge(Direction::Within, 0.777, 0.764, 0.013),
            Judgement {
                met: true,
                margin: 0.0
            }
        );
        assert_eq!(Direction::Within.edges(0.764, 0.013), (0.751, 0.777));
    }

    #[test]
    fn within_one_last_digit_beyond_either_edge_fails() {
        for value in [0.7509, 0.7771] {
            let j = judge(Direction::Within, value, 0.764, 0.013);
            assert!(!j.met, "{value}: {j:?}");
            assert_eq!(j.margin, -0.0001, "{value}");
        }
        for value in [0.7511, 0.7769, 0.764] {
            assert!(judge(Direction::Within, value, 0.764, 0.013).met, "{value}");
        }
    }

    #[test]
    fn higher_exactly_at_the_edge_passes_and_a_last_digit_below_fails() {
        // 0.5 - 0.09 is 0.41000000000000003 as doubles: 0.41 used to fail.
        assert_eq!(
            judge(Direction::Higher, 0.41, 0.5, 0.09),
            Judgement {
                met: true,
                margin: 0.0
            }
        );
        let below = judge(Direction::Higher, 0.409, 0.5, 0.09);
        assert_eq!(
            below,
            Judgement {
                met: false,
                margin: -0.001
            }
        );
        assert_eq!(
            judge(Direction::Higher, 0.99, 0.5, 0.09),
            Judgement {
                met: true,
                margin: 0.58
            }
        );
        assert_eq!(Direction::Higher.edges(0.5, 0.09), (0.41, f64::INFINITY));
    }

    #[test]
    fn lower_exactly_at_the_edge_passes_and_a_last_digit_above_fails() {
        // 1.88 + 0.013 is 1.8929999999999998 as doubles: 1.893 used to fail.
        assert_eq!(
            judge(Direction::Lower, 1.893, 1.88, 0.013),
            Judgement {
                met: true,
                margin: 0.0
            }
        );
        let above = judge(Direction::Lower, 1.8931, 1.88, 0.013);
        assert_eq!(
            above,
            Judgement {
                met: false,
                margin: -0.0001
            }
        );
        assert_eq!(
            Direction::Lower.edges(1.88, 0.013),
            (f64::NEG_INFINITY, 1.893)
        );
    }

    #[test]
    fn numbers_out_of_reach_of_exact_sums_are_compared_as_doubles() {
        assert!(!judge(Direction::Higher, f64::NAN, 0.5, 0.1).met);
        assert!(judge(Direction::Higher, f64::INFINITY, 0.5, 0.1).met);
        assert!(!judge(Direction::Lower, f64::INFINITY, 0.5, 0.1).met);
        // 40 orders apart: no exact sum in 128 bits, the doubles decide.
        let j = judge(Direction::Higher, 1e30, 1e30, 1e-10);
        assert!(j.met && j.margin == 0.0, "{j:?}");
        assert_eq!(Direction::Within.edges(1e30, 1e-10), (1e30, 1e30));
    }

    #[test]
    fn decimals_are_the_shortest_that_read_back() {
        let of = |x: f64| Decimal::of(x).map(|d| (d.digits, d.exponent));
        assert_eq!(of(0.751), Some((751, -3)));
        assert_eq!(of(-1500.0), Some((-15, 2)));
        assert_eq!(of(0.0), Some((0, 0)));
        assert_eq!(of(1e-300), Some((1, -300)));
        assert_eq!(of(f64::NAN), None);
    }
}
