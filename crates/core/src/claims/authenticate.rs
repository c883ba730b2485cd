//! Authenticating a claim: does the mean of calibrated runs lie within the tolerance of the
//! claimed value (SPEC §2b)?

use serde::{Deserialize, Serialize};

pub use crate::task::ClaimStatus;
use crate::task::Direction;

/// What calibrated runs measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// How many runs.
    pub runs: u32,
    /// Their mean.
    pub mean: f64,
    /// Their standard deviation.
    pub std: f64,
}

/// The comparison of a claim with the measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Authentication {
    /// Reproduced or not.
    pub status: ClaimStatus,
    /// Measured mean minus the claim, in the metric's units.
    pub difference: f64,
    /// The difference in tolerances (`difference / tolerance`; infinite, signed, for a zero
    /// tolerance and a non-zero difference).
    pub in_tolerances: f64,
}

/// Compares a claim (in the metric's units) with the measured mean, as the grader compares a
/// value with a `within` criterion ([`Direction::judge`], in decimal arithmetic): reproduced
/// when `|mean - claim| <= tolerance`. A negative or NaN tolerance counts as zero; a NaN mean
/// or claim is never reproduced.
pub fn authenticate(claim_value: f64, measured: &Measured, tolerance: f64) -> Authentication {
    let tolerance = if tolerance.is_nan() {
        0.0
    } else {
        tolerance.max(0.0)
    };
    let difference = measured.mean - claim_value;
    let reproduced = Direction::Within
        .judge(measured.mean, claim_value, tolerance)
        .met;
    let in_tolerances = if tolerance > 0.0 {
        difference / tolerance
    } else if reproduced {
        0.0
    } else {
        f64::INFINITY.copysign(difference)
    };
    Authentication {
        status: if reproduced {
            ClaimStatus::Reproduced
        } else {
            ClaimStatus::NotReproduced
        },
        difference,
        in_tolerances,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(mean: f64) -> Measured {
        Measured {
            runs: 5,
            mean,
            std: 0.0005,
        }
    }

    #[test]
    fn within_tolerance_is_reproduced() {
        let a = authenticate(0.810, &measured(0.8103), 0.012);
        assert_eq!(a.status, ClaimStatus::Reproduced);
        assert!((a.difference - 0.0003).abs() < 1e-12);
        assert!((a.in_tolerances - 0.025).abs() < 1e-9);
    }

    #[test]
    fn the_boundary_is_reproduced_despite_rounding() {
        let a = authenticate(0.810, &measured(0.8103), 0.0003);
        assert_eq!(a.status, ClaimStatus::Reproduced);
        assert!((a.in_tolerances - 1.0).abs() < 1e-9);
    }

    #[test]
    fn authentication_agrees_with_the_grader_at_the_edges() {
        // 0.764 ± 0.013 ends at exactly 0.751 and 0.777, as a `within` criterion does.
        let mut checked = 0;
        for (mean, reproduced) in [
            (0.751, true),
            (0.777, true),
            (0.7509, false),
            (0.7771, false),
            (0.764, true),
        ] {
            let a = authenticate(0.764, &measured(mean), 0.013);
            assert_eq!(a.status == ClaimStatus::Reproduced, reproduced, "{mean}");
            assert_eq!(
                reproduced,
                Direction::Within.judge(mean, 0.764, 0.013).met,
                "{mean}"
            );
            checked += 1;
        }
        assert_eq!(checked, 5);
    }

    #[test]
    fn outside_tolerance_is_not_reproduced() {
        let a = authenticate(1.88, &measured(1.95), 0.02);
        assert_eq!(a.status, ClaimStatus::NotReproduced);
        assert!((a.in_tolerances - 3.5).abs() < 1e-9);
        let below = authenticate(1.88, &measured(1.80), 0.02);
        assert!(below.in_tolerances < 0.0);
    }

    #[test]
    fn zero_negative_and_nan() {
        assert_eq!(
            authenticate(1.0, &measured(1.0), 0.0).status,
            ClaimStatus::Reproduced
        );
        let a = authenticate(1.0, &measured(1.1), -1.0);
        assert_eq!(a.status, ClaimStatus::NotReproduced);
        assert_eq!(a.in_tolerances, f64::INFINITY);
        assert_eq!(
            authenticate(1.0, &measured(f64::NAN), 1.0).status,
            ClaimStatus::NotReproduced
        );
    }

    #[test]
    fn status_names_are_the_spec_s() {
        let names: Vec<String> = [
            ClaimStatus::Reproduced,
            ClaimStatus::NotReproduced,
            ClaimStatus::NoClaim,
        ]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
        assert_eq!(
            names,
            ["\"reproduced\"", "\"not_reproduced\"", "\"no_claim\""]
        );
        assert_eq!(ClaimStatus::NotReproduced.as_str(), "not_reproduced");
    }
}
