use super::*;

fn lines(chunks: &[&str]) -> Vec<String> {
    let mut splitter = LineSplitter::new();
    let mut out = Vec::new();
    for chunk in chunks {
        splitter.feed(chunk, &mut |l| out.push(l.to_string()));
    }
    splitter.finish(&mut |l| out.push(l.to_string()));
    out
}

#[test]
fn strips_ansi_and_splits_lines_across_chunks() {
    assert_eq!(
        lines(&[
            "\x1b[1;32mepoch 1\x1b[0m acc=0.5\r\nepo",
            "ch 2 acc=0.6\n",
            "tail"
        ]),
        ["epoch 1 acc=0.5", "epoch 2 acc=0.6", "tail"]
    );
    assert_eq!(lines(&["\x1b]0;title\x07hello\n"]), ["hello"]);
    assert_eq!(lines(&["\x1b]0;ti", "tle\x1b\\hi\n"]), ["hi"]);
}

#[test]
fn carriage_return_progress_lines_are_each_seen_once() {
    let out = lines(&[
        "\r 10%|# | loss=0.9",
        "\r 50%|## | loss=0.5\r100%|###| loss=0.1\n",
    ]);
    assert_eq!(
        out,
        [
            " 10%|# | loss=0.9",
            " 50%|## | loss=0.5",
            "100%|###| loss=0.1"
        ]
    );
}

fn extractor() -> Extractor {
    Extractor {
        metrics: vec![
            (
                "acc".into(),
                Matcher::Regex(RegexMatcher::new(
                    Regex::new(r"epoch (?P<step>\d+) acc=(?P<value>[-+0-9.eE]+)").unwrap(),
                )),
            ),
            (
                "loss".into(),
                Matcher::Json {
                    key: "loss".into(),
                    step_key: Some("step".into()),
                },
            ),
        ],
    }
}

#[test]
fn regex_and_json_extraction() {
    let mut stream = MetricStream::new(extractor());
    let mut points = stream.feed("epoch 3 acc=0.91\n{\"step\": 7, \"loss\": 1.5e-2}\n{\"loss\": \"0.5\"}\nnoise {\"loss\": 9}\n");
    points.extend(stream.finish());
    assert_eq!(
        points,
        [
            (
                0,
                Point {
                    step: Some(3.0),
                    value: 0.91
                }
            ),
            (
                1,
                Point {
                    step: Some(7.0),
                    value: 0.015
                }
            ),
            (
                1,
                Point {
                    step: None,
                    value: 0.5
                }
            ),
        ]
    );
}

#[test]
fn unfinished_last_line_is_read_at_finish() {
    let mut stream = MetricStream::new(extractor());
    assert!(stream.feed("epoch 1 acc=0.7").is_empty());
    assert_eq!(
        stream.finish(),
        [(
            0,
            Point {
                step: Some(1.0),
                value: 0.7
            }
        )]
    );
}

#[test]
fn reductions() {
    let pts: Vec<Point> = [0.5, 0.9, 0.7]
        .iter()
        .map(|&v| Point {
            step: None,
            value: v,
        })
        .collect();
    assert_eq!(reduce(&pts, Reduce::Last), Some(0.7));
    assert_eq!(reduce(&pts, Reduce::Max), Some(0.9));
    assert_eq!(reduce(&pts, Reduce::Min), Some(0.5));
    assert!((reduce(&pts, Reduce::Mean).unwrap() - 0.7).abs() < 1e-12);
    assert_eq!(reduce(&[], Reduce::Mean), None);
    assert_eq!(reduce(&[], Reduce::Last), None);
}

/// The points of `line` as `captures_iter` finds them (what the reusable slots must equal).
fn points_by_captures_iter(re: &Regex, line: &str) -> Vec<(usize, Point)> {
    re.captures_iter(line)
        .filter_map(|caps| {
            let value = caps.name("value").and_then(|v| parse_number(v.as_str()))?;
            let step = caps.name("step").and_then(|s| parse_number(s.as_str()));
            Some((0, Point { step, value }))
        })
        .collect()
}

proptest::proptest! {
    #[test]
    fn reused_capture_slots_find_what_captures_iter_finds(
        line in "[a-z0-9=. é]{0,40}",
        pattern in proptest::sample::select(vec![
            r"(?P<value>[0-9.]*)",
            r"acc=(?P<value>[0-9.]+)",
            r"(?:step (?P<step>\d+) )?(?P<value>\d*)",
            r"\b(?P<value>\d+)\b",
        ]),
    ) {
        let re = Regex::new(pattern).unwrap();
        let mut matcher = RegexMatcher::new(re.clone());
        let mut found = Vec::new();
        matcher.extract(&line, 0, &mut found);
        proptest::prop_assert_eq!(found, points_by_captures_iter(&re, &line));
    }
}

/// The lines a splitter gives when every character goes through the per-character path.
fn lines_char_by_char(text: &str) -> Vec<String> {
    let mut splitter = LineSplitter::new();
    let mut out = Vec::new();
    for ch in text.chars() {
        splitter.step(ch, &mut |l| out.push(l.to_string()));
    }
    splitter.finish(&mut |l| out.push(l.to_string()));
    out
}

fn lines_fed(text: &str) -> Vec<String> {
    let mut splitter = LineSplitter::new();
    let mut out = Vec::new();
    splitter.feed(text, &mut |l| out.push(l.to_string()));
    splitter.finish(&mut |l| out.push(l.to_string()));
    out
}

proptest::proptest! {
    #[test]
    fn copying_runs_of_text_gives_the_lines_of_the_per_character_path(
        text in "[a-c0-9=. \\t\\r\\n\\x1b\\[\\]m;P\\\\\\x07\\x7f\\u{85}\\u{9c}°é✓]{0,80}"
    ) {
        proptest::prop_assert_eq!(lines_fed(&text), lines_char_by_char(&text));
    }
}

#[test]
fn an_overlong_line_is_cut_the_same_way_on_both_paths() {
    for filler in ["x", "é", "✓", "🙂"] {
        let text = format!("{}acc=0.5\n", filler.repeat(MAX_LINE / filler.len() + 7));
        let fed = lines_fed(&text);
        assert_eq!(fed, lines_char_by_char(&text), "{filler}");
        assert!(
            fed[0].len() >= MAX_LINE && fed[0].len() < MAX_LINE + 4,
            "{filler}"
        );
    }
}
