//! The comparison of the two sides' tensors: by name, in the order the source recorded them;
//! shapes must be equal, integer and boolean tensors equal exactly, float tensors (of any
//! widths) pass where `|port - source| <= atol + rtol * |source|` everywhere, with NaN equal
//! only to NaN and an infinity only to the same infinity.

use std::collections::HashMap;

use super::{Divergence, ParityReport, Tensor, TensorReport, Values};

/// Compares the port's tensors with the source's under `rtol` and `atol`.
pub fn compare(source: &[Tensor], port: &[Tensor], rtol: f64, atol: f64) -> ParityReport {
    let by_name: HashMap<&str, &Tensor> = port.iter().map(|t| (t.name.as_str(), t)).collect();
    let tensors: Vec<TensorReport> = source
        .iter()
        .map(|s| one(s, by_name.get(s.name.as_str()).copied(), rtol, atol))
        .collect();
    let extra = port
        .iter()
        .filter(|p| !source.iter().any(|s| s.name == p.name))
        .map(|p| p.name.clone())
        .collect();
    let first_divergent = tensors.iter().find(|t| !t.passed).map(|t| Divergence {
        name: t.name.clone(),
        max_abs: t.max_abs,
        max_rel: t.max_rel,
    });
    let error = source
        .is_empty()
        .then(|| "the source's probe recorded no tensors".to_string());
    ParityReport {
        compared: tensors.len(),
        passed: error.is_none() && first_divergent.is_none(),
        first_divergent,
        tensors,
        extra,
        error,
    }
}

fn one(source: &Tensor, port: Option<&Tensor>, rtol: f64, atol: f64) -> TensorReport {
    let mut report = TensorReport {
        name: source.name.clone(),
        shape: source.shape.clone(),
        dtype: source.dtype.clone(),
        port_shape: None,
        port_dtype: None,
        max_abs: None,
        max_rel: None,
        passed: false,
        problem: None,
        source_location: source.location.clone(),
        port_location: None,
    };
    let Some(port) = port else {
        report.problem = Some("missing in the port".to_string());
        return report;
    };
    report.port_location = port.location.clone();
    if port.dtype != source.dtype {
        report.port_dtype = Some(port.dtype.clone());
    }
    if port.shape != source.shape {
        report.port_shape = Some(port.shape.clone());
        report.problem = Some(format!(
            "shape {:?} in the port, {:?} in the source",
            port.shape, source.shape
        ));
        return report;
    }
    let errors = match (&source.values, &port.values) {
        (Values::Float(s), Values::Float(p)) => floats(s, p, rtol, atol),
        (Values::Int(s), Values::Int(p)) => ints(s, p),
        _ => {
            report.problem = Some(format!(
                "dtype {} in the port, {} in the source",
                port.dtype, source.dtype
            ));
            return report;
        }
    };
    report.max_abs = Some(errors.max_abs);
    report.max_rel = Some(errors.max_rel);
    report.passed = errors.failing == 0;
    if !report.passed {
        let total = source.values.len();
        let mut words = format!("{} of {total} values differ", errors.failing);
        if errors.nan_mismatch > 0 {
            words.push_str(&format!(
                ", {} where one side is NaN or infinite",
                errors.nan_mismatch
            ));
        }
        report.problem = Some(words);
    }
    report
}

/// The element-wise errors of one pair of tensors.
struct Errors {
    max_abs: f64,
    max_rel: f64,
    failing: usize,
    nan_mismatch: usize,
}

fn floats(source: &[f64], port: &[f64], rtol: f64, atol: f64) -> Errors {
    let mut e = Errors {
        max_abs: 0.0,
        max_rel: 0.0,
        failing: 0,
        nan_mismatch: 0,
    };
    for (&b, &a) in source.iter().zip(port) {
        if !a.is_finite() || !b.is_finite() {
            let same = (a.is_nan() && b.is_nan()) || a == b;
            if !same {
                e.failing += 1;
                e.nan_mismatch += 1;
            }
            continue;
        }
        let diff = (a - b).abs();
        e.max_abs = e.max_abs.max(diff);
        if b != 0.0 {
            e.max_rel = e.max_rel.max(diff / b.abs());
        }
        if diff > atol + rtol * b.abs() {
            e.failing += 1;
        }
    }
    e
}

fn ints(source: &[i128], port: &[i128]) -> Errors {
    let mut e = Errors {
        max_abs: 0.0,
        max_rel: 0.0,
        failing: 0,
        nan_mismatch: 0,
    };
    for (&b, &a) in source.iter().zip(port) {
        if a != b {
            let diff = a.abs_diff(b) as f64;
            e.failing += 1;
            e.max_abs = e.max_abs.max(diff);
            if b != 0 {
                e.max_rel = e.max_rel.max(diff / b.unsigned_abs() as f64);
            }
        }
    }
    e
}
