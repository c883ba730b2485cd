use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn copy_skips_version_control_and_clean_copy_skips_caches() {
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "train.py", "x");
    write(src.path(), ".git/HEAD", "ref");
    write(src.path(), "__pycache__/a.pyc", "c");
    write(src.path(), "old.log", "log");
    write(src.path(), ".xstack/done", "");
    write(src.path(), ".aider.chat.history.md", "# aider chat");
    write(src.path(), ".aider.tags.cache.v4/cache.db", "tags");
    let dst = tempfile::tempdir().unwrap();
    copy_tree(src.path(), &dst.path().join("w"), false).unwrap();
    assert!(dst.path().join("w/train.py").is_file());
    assert!(!dst.path().join("w/.git").exists());
    assert!(dst.path().join("w/old.log").exists());
    copy_tree(src.path(), &dst.path().join("v"), true).unwrap();
    assert!(dst.path().join("v/train.py").is_file());
    for gone in [
        "v/.git",
        "v/__pycache__",
        "v/old.log",
        "v/.xstack",
        "v/.aider.chat.history.md",
        "v/.aider.tags.cache.v4",
    ] {
        assert!(!dst.path().join(gone).exists(), "{gone}");
    }
}

#[test]
fn tracker_reports_writes_creations_and_deletions() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "1");
    write(dir.path(), "b.py", "2");
    let mut t = Tracker::new(dir.path());
    assert!(t.scan(dir.path()).is_empty());
    write(dir.path(), "a.py", "changed");
    write(dir.path(), "sub/c.py", "new");
    std::fs::remove_file(dir.path().join("b.py")).unwrap();
    let changes = t.scan(dir.path());
    let summary: Vec<(String, bool, Option<String>)> = changes
        .into_iter()
        .map(|c| (c.file.path, c.deleted, c.file.text))
        .collect();
    assert_eq!(
        summary,
        [
            ("a.py".to_string(), false, Some("changed".to_string())),
            ("sub/c.py".to_string(), false, Some("new".to_string())),
            ("b.py".to_string(), true, None),
        ]
    );
    assert!(t.scan(dir.path()).is_empty());
}

#[test]
fn verify_copy_restores_protected_files_and_reports_them() {
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "eval.py", "def score(): return real()\n");
    write(src.path(), "data/x.csv", "1\n");
    write(src.path(), "train.py", "torch\n");
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "eval.py", "def score(): return 0.0\n");
    write(ws.path(), "train.py", "jax\n");
    write(ws.path(), "data/fake.csv", "9\n");
    write(ws.path(), "__pycache__/t.pyc", "c");
    let out = tempfile::tempdir().unwrap();
    let verify = out.path().join("verify");
    let findings = prepare_verify(
        ws.path(),
        src.path(),
        &verify,
        &["eval.py".into(), "data/**".into()],
    )
    .unwrap();
    let findings: Vec<&str> = findings.iter().map(|f| f.text.as_str()).collect();
    assert_eq!(
        findings,
        [
            "protected file data/x.csv was deleted by the agent (restored from the source)",
            "protected file eval.py was changed by the agent (restored from the source)",
            "protected path data/fake.csv was added by the agent (removed)",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(verify.join("eval.py")).unwrap(),
        "def score(): return real()\n"
    );
    assert_eq!(
        std::fs::read_to_string(verify.join("train.py")).unwrap(),
        "jax\n"
    );
    assert!(!verify.join("data/fake.csv").exists());
    assert!(!verify.join("__pycache__").exists());
    // The workspace itself is left as the agent made it.
    assert_eq!(
        std::fs::read_to_string(ws.path().join("eval.py")).unwrap(),
        "def score(): return 0.0\n"
    );
}

#[test]
fn binary_and_large_files_are_recorded_by_size() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), [0u8, 1, 2, 3]).unwrap();
    write(dir.path(), "ok.py", "print(1)\n");
    let snap = snapshot(dir.path());
    assert_eq!(snap[0].path, "ok.py");
    assert_eq!(snap[0].text.as_deref(), Some("print(1)\n"));
    assert_eq!(snap[1].path, "w.bin");
    assert_eq!(snap[1].text, None);
    assert_eq!(snap[1].size, 4);
}

#[test]
fn the_workspace_leaves_out_what_the_source_excludes_and_the_source_keeps_it() {
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "cleanrl/dqn.py", "torch");
    write(src.path(), "cleanrl/dqn_jax.py", "jax");
    write(src.path(), "twins/a.py", "a");
    write(src.path(), "twins_kept.py", "k");
    let exclude = vec!["cleanrl/dqn_jax.py".to_string(), "twins/".to_string()];
    let dst = tempfile::tempdir().unwrap();
    copy_source(src.path(), dst.path(), &exclude).unwrap();
    assert_eq!(list_files(dst.path()), ["cleanrl/dqn.py", "twins_kept.py"]);
    assert!(src.path().join("cleanrl/dqn_jax.py").is_file());
    let baseline: Vec<String> = source_snapshot(src.path(), &exclude)
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(baseline, ["cleanrl/dqn.py", "twins_kept.py"]);
}
