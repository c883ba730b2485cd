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

    #[test]
    fn text_fed_in_two_pieces_gives_the_lines_of_the_per_character_path(
        text in "[a-c0-9=. \\t\\r\\n\\x1b\\[\\]m;P\\\\\\x07\\x7f\\u{85}\\u{9c}°é✓]{0,80}",
        cut in 0usize..81,
    ) {
        let cut = (0..=cut.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let mut splitter = LineSplitter::new();
        let mut out = Vec::new();
        splitter.feed(&text[..cut], &mut |l| out.push(l.to_string()));
        splitter.feed(&text[cut..], &mut |l| out.push(l.to_string()));
        splitter.finish(&mut |l| out.push(l.to_string()));
        proptest::prop_assert_eq!(out, lines_char_by_char(&text));
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

/// The lines of `text` through [`plain_lines`], checked to be the same however the text is
/// cut into two pieces, and the points a [`MetricStream`] extracts from it checked to be
/// the points of those lines: extraction and `xstack init` see one splitting.
fn split_every_way(text: &str, metric: &str) -> Vec<String> {
    let whole = plain_lines(text);
    for cut in (0..=text.len()).filter(|i| text.is_char_boundary(*i)) {
        assert_eq!(lines(&[&text[..cut], &text[cut..]]), whole, "cut at {cut}");
    }
    let spec = MetricSpec {
        name: "m".into(),
        regex: Some(metric.into()),
        json_key: None,
        step_key: None,
    };
    let mut by_lines = Vec::new();
    let mut extractor = Extractor::from_specs(std::slice::from_ref(&spec)).unwrap();
    for line in &whole {
        extractor.extract(line, &mut by_lines);
    }
    let mut stream = MetricStream::new(Extractor::from_specs(&[spec]).unwrap());
    let mut streamed = stream.feed(text);
    streamed.extend(stream.finish());
    assert_eq!(streamed, by_lines);
    whole
}

#[test]
fn tqdm_bars_are_one_line_per_refresh_and_the_closing_repeat_is_dropped() {
    let text = "\r  0%|          | 0/3 [00:00<?, ?it/s]\
                \r 33%|███▎      | 1/3 [00:00<00:02,  1.00it/s, loss=0.910]\
                \r 67%|██████▋   | 2/3 [00:01<00:01,  1.00it/s, loss=0.700]\
                \r100%|██████████| 3/3 [00:02<00:00,  1.00it/s, loss=0.520]\
                \r100%|██████████| 3/3 [00:02<00:00,  1.00it/s, loss=0.520]\n\
                test_acc=0.9\n";
    assert_eq!(
        split_every_way(text, r"loss=(?P<value>[0-9.]+)"),
        [
            "  0%|          | 0/3 [00:00<?, ?it/s]",
            " 33%|███▎      | 1/3 [00:00<00:02,  1.00it/s, loss=0.910]",
            " 67%|██████▋   | 2/3 [00:01<00:01,  1.00it/s, loss=0.700]",
            "100%|██████████| 3/3 [00:02<00:00,  1.00it/s, loss=0.520]",
            "test_acc=0.9",
        ]
    );
}

#[test]
fn rich_bars_lose_their_colours_cursor_hiding_and_line_erasing() {
    let text = "\x1b[?25l\r\x1b[2KEpoch 1 \x1b[38;5;237m━━━━━━━━━━\x1b[0m \x1b[35m 50%\x1b[0m \
                \x1b[36mloss=0.612\x1b[0m\r\x1b[2KEpoch 1 \x1b[38;2;114;156;31m━━━━━━━━━━\x1b[0m \
                \x1b[35m100%\x1b[0m \x1b[36mloss=0.412\x1b[0m\r\n\x1b[?25h";
    assert_eq!(
        split_every_way(text, r"loss=(?P<value>[0-9.]+)"),
        [
            "Epoch 1 ━━━━━━━━━━  50% loss=0.612",
            "Epoch 1 ━━━━━━━━━━ 100% loss=0.412",
        ]
    );
}

#[test]
fn keras_bars_rewritten_with_backspaces_and_carriage_returns() {
    // Keras 2 erases with backspaces before its `\r`; Keras 3 draws in bold and colour.
    let keras2 = format!(
        "Epoch 1/2\n1/3 [=========>....................] - ETA: 0s - loss: 0.9100{}\r\
         3/3 [==============================] - 0s 5ms/step - loss: 0.5200 - accuracy: 0.8000\n",
        "\x08".repeat(62)
    );
    assert_eq!(
        split_every_way(&keras2, r"loss: (?P<value>[0-9.]+)"),
        [
            "Epoch 1/2",
            "1/3 [=========>....................] - ETA: 0s - loss: 0.9100",
            "3/3 [==============================] - 0s 5ms/step - loss: 0.5200 - accuracy: 0.8000",
        ]
    );
    let keras3 = "\r\x1b[1m1/3\x1b[0m \x1b[32m━━━━━━\x1b[0m\x1b[37m━━━━━━━━━━━━━━\x1b[0m \
                  \x1b[1m0s\x1b[0m 5ms/step - accuracy: 0.7000 - loss: 0.9100\
                  \r\x1b[1m3/3\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \
                  \x1b[1m0s\x1b[0m 5ms/step - accuracy: 0.8000 - loss: 0.5200\n";
    assert_eq!(
        split_every_way(keras3, r"loss: (?P<value>[0-9.]+)"),
        [
            "1/3 ━━━━━━━━━━━━━━━━━━━━ 0s 5ms/step - accuracy: 0.7000 - loss: 0.9100",
            "3/3 ━━━━━━━━━━━━━━━━━━━━ 0s 5ms/step - accuracy: 0.8000 - loss: 0.5200",
        ]
    );
}

#[test]
fn a_plain_carriage_return_bar_gives_every_update_a_line() {
    let mut text = String::new();
    for epoch in 1..=2 {
        for i in 1..=3 {
            let done = "#".repeat(i * 8 / 3);
            text.push_str(&format!(
                "\repoch {epoch:2} |{done:.<8}| {i:2}/3 loss=0.{epoch}{i}00"
            ));
        }
        text.push('\n');
    }
    let lines = split_every_way(&text, r"loss=(?P<value>[0-9.]+)");
    assert_eq!(
        lines,
        [
            "epoch  1 |##......|  1/3 loss=0.1100",
            "epoch  1 |#####...|  2/3 loss=0.1200",
            "epoch  1 |########|  3/3 loss=0.1300",
            "epoch  2 |##......|  1/3 loss=0.2100",
            "epoch  2 |#####...|  2/3 loss=0.2200",
            "epoch  2 |########|  3/3 loss=0.2300",
        ]
    );
}
