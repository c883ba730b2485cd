use super::*;

fn write_traj(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("trajectory.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn parses_phases_steps_comments_and_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("p1")).unwrap();
    std::fs::write(dir.path().join("p1/model.py"), "import jax\n").unwrap();
    let path = write_traj(
        dir.path(),
        "# demo\n\n{\"phase\": 1}\n{\"say\": \"hi\"}\n{\"run\": \"true\"}\n{\"write\": \"model.py\", \"from\": \"p1/model.py\"}\n{\"write\": \"n.txt\", \"text\": \"x\"}\n{\"delete\": \"old.py\"}\n{\"sleep_ms\": 5}\n{\"phase\": 2, \"expect\": \"Learning Rate\"}\n{\"say\": \"ok\"}\n",
    );
    let t = Trajectory::load(&path).unwrap();
    assert_eq!(t.phases.len(), 2);
    assert_eq!(t.phases[0].steps.len(), 6);
    assert_eq!(
        t.phases[0].steps[2],
        Step::WriteFrom {
            path: "model.py".into(),
            from: dir.path().join("p1/model.py")
        }
    );
    assert_eq!(t.phases[1].expect.as_deref(), Some("Learning Rate"));
}

#[test]
fn errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("{\"phase\": 1}\n{\"say\": \"a\"\n", 2, "not valid JSON"),
        (
            "{\"phase\": 1}\n{\"shout\": \"a\"}\n",
            2,
            "field `shout`: unknown field `shout`",
        ),
        ("{\"say\": \"a\"}\n", 1, "before the first"),
        (
            "{\"phase\": 1}\n{\"say\": \"a\", \"run\": \"b\"}\n",
            2,
            "exactly one of",
        ),
        (
            "{\"phase\": 1}\n\n{\"write\": \"a.py\", \"from\": \"missing.py\"}\n",
            3,
            "field `from`: file",
        ),
        (
            "{\"phase\": 1}\n{\"write\": \"../escape.py\", \"text\": \"x\"}\n",
            2,
            "field `write`: path `../escape.py` must be relative and stay inside the workspace",
        ),
        (
            "{\"phase\": 3}\n",
            1,
            "field `phase`: must be 1 or 2, not 3",
        ),
        (
            "{\"phase\": 1}\n{\"sleep_ms\": \"soon\"}\n",
            2,
            "field `sleep_ms`: invalid type: string \"soon\", expected a whole number >= 0",
        ),
        (
            "{\"phase\": 1}\n{\"sleep_ms\": -5}\n",
            2,
            "field `sleep_ms`: invalid value: integer `-5`, expected a whole number >= 0",
        ),
        (
            "{\"phase\": \"one\"}\n",
            1,
            "field `phase`: invalid type: string \"one\", expected a whole number from 0 to 255",
        ),
        (
            "{\"phase\": 1}\n{\"say\": \"a\", \"text\": \"b\"}\n",
            2,
            "field `text`: belongs to a write step",
        ),
        ("# nothing\n", 1, "no {\"phase\": 1} line"),
    ];
    for (text, line, message) in cases {
        let path = write_traj(dir.path(), text);
        let err = Trajectory::load(&path).unwrap_err().to_string();
        let prefix = format!("{}:{line}: ", path.display());
        assert!(err.starts_with(&prefix), "{text:?}: {err}");
        assert!(err.contains(message), "{text:?}: {err}");
    }
}

#[test]
fn phase_two_requires_the_expected_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_traj(
        dir.path(),
        "{\"phase\": 1}\n{\"phase\": 2, \"expect\": \"learning rate\"}\n{\"say\": \"fixed\"}\n",
    );
    let t = Trajectory::load(&path).unwrap();
    let mut out = Vec::new();
    assert_eq!(
        play(&path, &t, 2, Some("use the LEARNING RATE 1e-3"), &mut out),
        0
    );
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("[xstack scripted agent]"), "{text}");
    assert!(text.contains("fixed"));
    let mut out = Vec::new();
    assert_eq!(play(&path, &t, 2, Some("something else"), &mut out), 1);
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains("does not mention \"learning rate\"")
    );
}
