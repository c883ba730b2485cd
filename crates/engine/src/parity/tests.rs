use super::*;

fn float(name: &str, shape: &[u64], values: &[f64]) -> Tensor {
    Tensor {
        name: name.to_string(),
        shape: shape.to_vec(),
        dtype: "float32".to_string(),
        values: Values::Float(values.to_vec()),
        location: None,
    }
}

fn int(name: &str, values: &[i128]) -> Tensor {
    Tensor {
        name: name.to_string(),
        shape: vec![values.len() as u64],
        dtype: "int64".to_string(),
        values: Values::Int(values.to_vec()),
        location: None,
    }
}

const RTOL: f64 = 1e-4;
const ATOL: f64 = 1e-5;

#[test]
fn equal_tensors_pass_within_tolerance() {
    let source = [float("a", &[2], &[1.0, -2.0]), int("b", &[3, 4])];
    let port = [float("a", &[2], &[1.0 + 5e-5, -2.0]), int("b", &[3, 4])];
    let report = compare(&source, &port, RTOL, ATOL);
    assert!(report.passed, "{report:?}");
    assert_eq!(report.compared, 2);
    assert_eq!(report.first_divergent, None);
    assert!(
        report
            .tensors
            .iter()
            .all(|t| t.passed && t.problem.is_none())
    );
    let a = &report.tensors[0];
    assert!((a.max_abs.unwrap() - 5e-5).abs() < 1e-12);
    assert!((a.max_rel.unwrap() - 5e-5).abs() < 1e-12);
}

#[test]
fn the_tolerance_is_atol_plus_rtol_times_the_source() {
    // |a - b| <= atol + rtol * |b|: 1e-5 + 1e-4 * 100 = 0.01001 at b = 100.
    let source = [float("x", &[1], &[100.0])];
    let inside = compare(&source, &[float("x", &[1], &[100.0100])], RTOL, ATOL);
    assert!(inside.passed, "{inside:?}");
    let outside = compare(&source, &[float("x", &[1], &[100.0101])], RTOL, ATOL);
    assert!(!outside.passed);
    assert_eq!(outside.first_divergent.unwrap().name, "x");
}

#[test]
fn the_first_divergent_name_follows_the_source_order_not_the_port_order() {
    let source = [
        float("input", &[1], &[1.0]),
        float("hidden", &[1], &[2.0]),
        float("logits", &[1], &[3.0]),
    ];
    // The port writes them in another order; both hidden and logits are wrong.
    let port = [
        float("logits", &[1], &[9.0]),
        float("input", &[1], &[1.0]),
        float("hidden", &[1], &[2.5]),
    ];
    let report = compare(&source, &port, RTOL, ATOL);
    let names: Vec<_> = report.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["input", "hidden", "logits"]);
    let first = report.first_divergent.unwrap();
    assert_eq!(first.name, "hidden");
    assert_eq!(first.max_abs, Some(0.5));
    assert_eq!(first.max_rel, Some(0.25));
    assert_eq!(
        report.tensors.iter().map(|t| t.passed).collect::<Vec<_>>(),
        [true, false, false]
    );
}

#[test]
fn a_shape_that_differs_fails_without_comparing_values() {
    let source = [float("w", &[2, 3], &[0.0; 6])];
    let port = [float("w", &[3, 2], &[0.0; 6])];
    let report = compare(&source, &port, RTOL, ATOL);
    let t = &report.tensors[0];
    assert!(!t.passed);
    assert_eq!(t.port_shape, Some(vec![3, 2]));
    assert_eq!(t.max_abs, None);
    assert_eq!(
        t.problem.as_deref(),
        Some("shape [3, 2] in the port, [2, 3] in the source")
    );
    assert_eq!(report.first_divergent.unwrap().max_abs, None);
}

#[test]
fn nan_matches_only_nan_and_infinities_only_the_same_infinity() {
    let source = [float(
        "v",
        &[4],
        &[f64::NAN, f64::INFINITY, 1.0, f64::NEG_INFINITY],
    )];
    let same = [float(
        "v",
        &[4],
        &[f64::NAN, f64::INFINITY, 1.0, f64::NEG_INFINITY],
    )];
    assert!(compare(&source, &same, RTOL, ATOL).passed);
    let port = [float(
        "v",
        &[4],
        &[1.0, f64::NEG_INFINITY, f64::NAN, f64::NEG_INFINITY],
    )];
    let report = compare(&source, &port, RTOL, ATOL);
    let t = &report.tensors[0];
    assert!(!t.passed);
    let problem = t.problem.as_deref().unwrap();
    assert!(problem.starts_with("3 of 4 values differ"), "{problem}");
    assert!(
        problem.contains("3 where one side is NaN or infinite"),
        "{problem}"
    );
    // No finite pair differs: the errors say so, the count says why it fails.
    assert_eq!(t.max_abs, Some(0.0));
}

#[test]
fn integer_tensors_must_be_equal_whatever_the_tolerance() {
    let source = [int("labels", &[1, 2, 3])];
    let port = [int("labels", &[1, 2, 4])];
    let report = compare(&source, &port, 1.0, 1.0);
    let t = &report.tensors[0];
    assert!(!t.passed);
    assert_eq!(t.max_abs, Some(1.0));
    assert!((t.max_rel.unwrap() - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn an_integer_against_a_float_tensor_fails_and_float_widths_compare() {
    let source = [int("ids", &[1, 2]), float("x", &[1], &[0.5])];
    let mut wide = float("x", &[1], &[0.5]);
    wide.dtype = "float64".to_string();
    let port = [float("ids", &[2], &[1.0, 2.0]), wide];
    let report = compare(&source, &port, RTOL, ATOL);
    assert_eq!(
        report.tensors[0].problem.as_deref(),
        Some("dtype float32 in the port, int64 in the source")
    );
    assert!(report.tensors[1].passed);
    assert_eq!(report.tensors[1].port_dtype.as_deref(), Some("float64"));
    assert_eq!(report.first_divergent.unwrap().name, "ids");
}

#[test]
fn a_name_missing_in_the_port_fails_and_an_extra_one_is_only_reported() {
    let source = [float("a", &[1], &[1.0]), float("b", &[1], &[2.0])];
    let port = [float("a", &[1], &[1.0]), float("c", &[1], &[3.0])];
    let report = compare(&source, &port, RTOL, ATOL);
    assert_eq!(report.compared, 2);
    assert_eq!(
        report.tensors[1].problem.as_deref(),
        Some("missing in the port")
    );
    assert_eq!(report.first_divergent.as_ref().unwrap().name, "b");
    assert_eq!(report.extra, ["c"]);

    let only_extra = compare(&source[..1], &port, RTOL, ATOL);
    assert!(only_extra.passed, "{only_extra:?}");
    assert_eq!(only_extra.extra, ["c"]);
}

#[test]
fn a_source_that_recorded_nothing_is_an_error_not_a_pass() {
    let report = compare(&[], &[float("a", &[1], &[1.0])], RTOL, ATOL);
    assert!(!report.passed);
    assert_eq!(
        report.error.as_deref(),
        Some("the source's probe recorded no tensors")
    );
}

#[test]
fn the_report_serialises_as_spec_3a_says() {
    let source = [float("a", &[1], &[1.0])];
    let report = compare(&source, &[float("a", &[1], &[2.0])], RTOL, ATOL);
    let json = serde_json::to_value(&report).unwrap();
    for key in ["compared", "passed", "first_divergent", "tensors", "error"] {
        assert!(json.get(key).is_some(), "{key}: {json}");
    }
    assert_eq!(json["first_divergent"]["name"], "a");
    assert_eq!(json["first_divergent"]["max_abs"], 1.0);
    for key in [
        "name",
        "shape",
        "dtype",
        "max_abs",
        "max_rel",
        "passed",
        "source_location",
    ] {
        assert!(json["tensors"][0].get(key).is_some(), "{key}: {json}");
    }
    let back: ParityReport = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);
}

#[test]
fn reads_an_archive_in_its_order_with_the_helper_manifest() {
    use npyz::WriterBuilder;
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npz");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::FileOptions::default;
    // Names that sort the other way round: the archive's order is kept.
    zip.start_file(npyz::npz::file_name_from_array_name("z.weight"), options())
        .unwrap();
    let mut w = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(&[2, 2])
        .writer(&mut zip)
        .begin_nd()
        .unwrap();
    w.extend([1.0f32, 2.0, 3.0, 4.0]).unwrap();
    w.finish().unwrap();
    zip.start_file(npyz::npz::file_name_from_array_name("a.labels"), options())
        .unwrap();
    let mut w = npyz::WriteOptions::<i64>::new()
        .default_dtype()
        .shape(&[3])
        .writer(&mut zip)
        .begin_nd()
        .unwrap();
    w.extend([7i64, 8, 9]).unwrap();
    w.finish().unwrap();
    zip.start_file(npyz::npz::file_name_from_array_name("m.mask"), options())
        .unwrap();
    let mut w = npyz::WriteOptions::<bool>::new()
        .default_dtype()
        .shape(&[])
        .writer(&mut zip)
        .begin_nd()
        .unwrap();
    w.push(&true).unwrap();
    w.finish().unwrap();
    zip.start_file(MANIFEST, options()).unwrap();
    zip.write_all(
        br#"[{"name": "z.weight", "dtype": "torch.float32", "file": "probe.py", "line": 12}]"#,
    )
    .unwrap();
    zip.finish().unwrap();

    let tensors = read_npz(&path).unwrap();
    let names: Vec<_> = tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["z.weight", "a.labels", "m.mask"]);
    assert_eq!(tensors[0].shape, [2, 2]);
    assert_eq!(tensors[0].dtype, "torch.float32");
    assert_eq!(tensors[0].values, Values::Float(vec![1.0, 2.0, 3.0, 4.0]));
    assert_eq!(
        tensors[0].location,
        Some(Location {
            file: "probe.py".to_string(),
            line: 12
        })
    );
    assert_eq!(tensors[1].dtype, "int64");
    assert_eq!(tensors[1].values, Values::Int(vec![7, 8, 9]));
    assert_eq!(tensors[1].location, None);
    assert_eq!(tensors[2].shape, Vec::<u64>::new());
    assert_eq!(tensors[2].values, Values::Int(vec![1]));
}

#[test]
fn an_archive_that_is_not_one_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("port.npz");
    std::fs::write(&path, "not a zip").unwrap();
    let err = read_npz(&path).unwrap_err().to_string();
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    let missing = read_npz(&dir.path().join("none.npz"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("none.npz"), "{missing}");
}

/// What `np.savez` writes for a transposed array (`np.asarray(w.T)`): Fortran order, read
/// back in NumPy's logical order, so it compares element by element with the source's
/// C-ordered array of the same values.
#[test]
fn a_fortran_ordered_array_is_read_in_logical_order_and_compared() {
    use npyz::WriterBuilder;
    let dir = tempfile::tempdir().unwrap();
    let write = |file: &str, order: npyz::Order, stored: &[f32], shape: &[u64]| {
        let path = dir.path().join(file);
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        zip.start_file(
            npyz::npz::file_name_from_array_name("fc1.weight"),
            zip::write::FileOptions::default(),
        )
        .unwrap();
        let mut w = npyz::WriteOptions::<f32>::new()
            .default_dtype()
            .order(order)
            .shape(shape)
            .writer(&mut zip)
            .begin_nd()
            .unwrap();
        w.extend(stored.iter().copied()).unwrap();
        w.finish().unwrap();
        zip.finish().unwrap();
        read_npz(&path).unwrap()
    };
    // The 2 x 3 matrix [[1, 2, 3], [4, 5, 6]]: the source stores its rows, the port its
    // columns (the transpose of a C-ordered 3 x 2 kernel).
    let source = write(
        "source.npz",
        npyz::Order::C,
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        &[2, 3],
    );
    let port = write(
        "port.npz",
        npyz::Order::Fortran,
        &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
        &[2, 3],
    );
    assert_eq!(
        port[0].values,
        Values::Float(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    );
    assert_eq!(port[0].shape, [2, 3]);
    let report = compare(&source, &port, 1e-6, 0.0);
    assert!(report.passed, "{report:?}");
    // A three-axis array: element (i, j, k) of shape (2, 3, 4) stored at i + 2j + 6k.
    let shape = [2u64, 3, 4];
    let mut stored = vec![0f32; 24];
    for i in 0..2 {
        for j in 0..3 {
            for k in 0..4 {
                stored[i + 2 * j + 6 * k] = (100 * i + 10 * j + k) as f32;
            }
        }
    }
    let read = write("cube.npz", npyz::Order::Fortran, &stored, &shape);
    let logical: Vec<f64> = (0..2)
        .flat_map(|i| {
            (0..3).flat_map(move |j| (0..4).map(move |k| f64::from(100 * i + 10 * j + k)))
        })
        .collect();
    assert_eq!(read[0].values, Values::Float(logical));
}

#[test]
fn the_report_is_laid_out_once_for_the_text_the_pane_and_the_page() {
    let source = [
        float("a", &[1], &[1.0]),
        float("b", &[2], &[2.0, 3.0]),
        float("c", &[1], &[4.0]),
    ];
    let mut port = vec![
        float("a", &[1], &[1.0]),
        float("b", &[2], &[2.0, 3.5]),
        float("z", &[1], &[0.0]),
    ];
    port[1].location = Some(Location {
        file: "model.py".into(),
        line: 12,
    });
    let report = compare(&source, &port, RTOL, ATOL);
    assert_eq!(
        report.headline(),
        "diverges first at b (1 of 3 tensors match)"
    );
    let rows = report.rows();
    let flags: Vec<(&str, bool, bool)> = rows.iter().map(|r| (r.name, r.passed, r.first)).collect();
    assert_eq!(
        flags,
        [("a", true, false), ("b", false, true), ("c", false, false)]
    );
    assert_eq!(rows[1].shape, "[2] float32");
    assert_eq!(
        rows[1].errors.as_deref(),
        Some("max abs 0.5  max rel 0.1667")
    );
    assert_eq!(rows[1].port_at.as_deref(), Some("model.py:12"));
    assert_eq!(rows[2].problem, Some("missing in the port"));
    assert_eq!((rows[0].problem, &rows[2].port_at), (None, &None));
    assert_eq!(
        report.also_recorded().as_deref(),
        Some("the port also recorded: z")
    );
    let text = render_text(&report);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[1].starts_with("✗ b  [2] float32  max abs 0.5  max rel 0.1667  <- first divergent"),
        "{text}"
    );
    assert!(
        lines[1].ends_with("(the port records it at model.py:12)"),
        "{text}"
    );
    assert_eq!(lines[3], "the port also recorded: z");
    assert!(
        lines[4].starts_with("parity: the port diverges first at `b`"),
        "{text}"
    );
    assert_eq!(
        ParityReport::failed("the port's probe timed out".into()).headline(),
        "could not run: the port's probe timed out"
    );
    let same = compare(&source[..1], &port[..1], RTOL, ATOL);
    assert_eq!(same.headline(), "all 1 tensors match");
}
