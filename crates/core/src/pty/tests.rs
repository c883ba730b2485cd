use super::*;

fn spec(script: &str) -> PtySpec {
    PtySpec {
        argv: vec!["bash".into(), "-c".into(), script.into()],
        cwd: std::env::temp_dir(),
        env: vec![("XSTACK_TEST_VAR".into(), "hello-env".into())],
        env_remove: Vec::new(),
        cols: 90,
        rows: 20,
    }
}

async fn collect(streams: &mut PtyStreams) -> String {
    let mut out = Vec::new();
    while let Some(chunk) = streams.output.recv().await {
        out.extend(chunk);
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn runs_in_a_terminal_with_env_and_exit_status() {
    let (proc_, mut streams) = PtyProcess::spawn(&spec(
        "test -t 1 && echo tty; echo $XSTACK_TEST_VAR; stty size; exit 7",
    ))
    .unwrap();
    let out = collect(&mut streams).await;
    let exit = (&mut streams.exit).await.unwrap();
    assert!(out.contains("tty"), "{out}");
    assert!(out.contains("hello-env"), "{out}");
    assert!(out.contains("20 90"), "{out}");
    assert_eq!(exit, ExitInfo { code: Some(7) });
    drop(proc_);
}

#[tokio::test]
async fn the_child_sees_its_own_folder_as_pwd() {
    // printenv, not a shell: a shell would correct PWD itself.
    let folder = tempfile::tempdir().unwrap();
    let spec = PtySpec {
        argv: vec!["printenv".into(), "PWD".into()],
        cwd: folder.path().to_path_buf(),
        ..spec("")
    };
    let (proc_, mut streams) = PtyProcess::spawn(&spec).unwrap();
    let out = collect(&mut streams).await;
    assert_eq!(out.trim(), folder.path().display().to_string());
    drop(proc_);
}

#[tokio::test]
async fn input_reaches_the_child_and_resize_is_seen() {
    let (mut p, mut streams) =
        PtyProcess::spawn(&spec("read line; echo got:$line; stty size")).unwrap();
    p.resize(100, 30).unwrap();
    p.write(b"abc\r").unwrap();
    let out = collect(&mut streams).await;
    assert!(out.contains("got:abc"), "{out}");
    assert!(out.contains("30 100"), "{out}");
}

#[tokio::test]
async fn terminate_ends_the_whole_group() {
    let (mut p, mut streams) =
        PtyProcess::spawn(&spec("sleep 300 & sleep 300 & echo started; wait")).unwrap();
    let pgid = p.pgid().unwrap();
    let mut seen = String::new();
    while !seen.contains("started") {
        let chunk = streams.output.recv().await.unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(group_alive(pgid));
    p.terminate(Duration::from_secs(2)).await;
    let exit = (&mut streams.exit).await.unwrap();
    assert_eq!(exit.code, None);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while group_alive(pgid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!group_alive(pgid), "a process of the group survived");
}

#[tokio::test]
async fn pause_stops_output_until_resume() {
    let (p, mut streams) = PtyProcess::spawn(&spec("read x; echo after-resume")).unwrap();
    p.pause();
    let mut p = p;
    // A stopped group cannot read its input; the text waits in the terminal.
    p.write(b"go\r").unwrap();
    // SIGSTOP takes effect asynchronously: wait for the stopped state with a deadline.
    let stat = format!("/proc/{}/stat", p.pgid().unwrap());
    let state = || {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        s.rfind(')').and_then(|i| s[i + 2..].chars().next())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while state() != Some('T') && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(state(), Some('T'), "process is not stopped");
    // While stopped it reads nothing: for half a second all that comes back is the terminal's
    // own echo of the waiting line, never the child's answer, and it stays stopped.
    let mut held = String::new();
    let window = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(chunk)) = tokio::time::timeout_at(window, streams.output.recv()).await {
        held.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(
        !held.contains("after-resume"),
        "the paused child answered: {held:?}"
    );
    assert_eq!(state(), Some('T'), "the child ran on while paused");
    p.resume();
    let out = held + &collect(&mut streams).await;
    assert!(out.contains("after-resume"), "{out}");
}

/// The calling thread's scheduling policy.
fn policy() -> libc::c_int {
    // SAFETY: reads the calling thread's policy (0 names it).
    unsafe { libc::sched_getscheduler(0) }
}

#[test]
fn a_child_started_from_a_batch_thread_is_scheduled_as_an_ordinary_process() {
    std::thread::spawn(|| {
        crate::process::run_as_batch();
        assert_eq!(policy(), libc::SCHED_BATCH);
        let spec = PtySpec {
            argv: vec![
                "python3".into(),
                "-c".into(),
                "import os; print('policy', os.sched_getscheduler(0))".into(),
            ],
            ..spec("")
        };
        let (proc_, mut streams) = PtyProcess::spawn(&spec).unwrap();
        let mut out = Vec::new();
        while let Some(chunk) = streams.output.blocking_recv() {
            out.extend(chunk);
        }
        let out = String::from_utf8_lossy(&out);
        assert!(out.contains("policy 0"), "{out}");
        // The thread that started it is a batch thread again.
        assert_eq!(policy(), libc::SCHED_BATCH);
        drop(proc_);
    })
    .join()
    .unwrap();
}
