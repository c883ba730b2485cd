use std::time::Duration;

use super::*;

/// Every command the human (or a signal) can give.
fn commands() -> Vec<Command> {
    vec![
        Command::Next,
        Command::ToggleMode,
        Command::TogglePause,
        Command::Inject("edited".to_string()),
        Command::Message("hello".to_string()),
        Command::Rerun,
        Command::Abort,
        Command::AgentInput(b"x".to_vec()),
        Command::ResizeAgent(100, 30),
        Command::ResizeRun(90, 20),
        Command::OpenShell,
        Command::Interrupt(Interruption::Hangup),
    ]
}

/// Every stage of a two-phase session.
fn stages() -> Vec<At> {
    Policy::at_every_stage().iter().map(Policy::at).collect()
}

/// A step-mode session with an agent, at `at` (phase 1 failed once phase 2 is reached).
fn policy_at(at: At) -> Policy {
    Policy::at_every_stage()
        .into_iter()
        .find(|p| p.at() == at)
        .unwrap()
}

/// What a command does, in a few words, for the table below.
fn outcome(before: At, effects: &[Effect], after: &Policy) -> String {
    let moved = if after.at() == before {
        String::new()
    } else {
        format!(" -> {:?}", after.at())
    };
    let effects: Vec<String> = effects
        .iter()
        .map(|e| match e {
            Effect::Decline { command, .. } => format!("decline {command}"),
            other => format!("{other:?}"),
        })
        .collect();
    format!("{}{moved}", effects.join(", "))
}

#[tokio::test(start_paused = true)]
async fn every_command_in_every_stage_has_one_rule_or_a_reason() {
    let mut checked = 0;
    for at in stages() {
        for command in commands() {
            for agent_running in [false, true] {
                let mut policy = policy_at(at);
                let effects = policy.on_command(command.clone(), agent_running);
                let said = outcome(at, &effects, &policy);
                // Nothing is silently dropped: a command either acts, or says why not.
                assert!(
                    !effects.is_empty() || policy.at() != at,
                    "{command:?} at {at:?} did nothing and said nothing"
                );
                for effect in &effects {
                    if let Effect::Decline { reason, .. } = effect {
                        assert!(!reason.is_empty(), "{command:?} at {at:?}");
                        assert_eq!(policy.at(), at, "a declined {command:?} moved {at:?}");
                    }
                }
                // The commands that mean the same everywhere.
                match &command {
                    Command::ToggleMode => match at {
                        At::Ended(_) => assert!(
                            matches!(
                                effects[..],
                                [Effect::Decline {
                                    command: KeyedCommand::ToggleMode,
                                    ..
                                }]
                            ),
                            "{said}"
                        ),
                        _ => assert_eq!(effects[0], Effect::SetMode(Mode::Auto), "{said}"),
                    },
                    Command::AgentInput(bytes) => {
                        assert_eq!(effects, [Effect::AgentInput(bytes.clone())]);
                    }
                    Command::ResizeAgent(c, r) => {
                        assert_eq!(effects, [Effect::ResizeAgent(*c, *r)]);
                    }
                    Command::ResizeRun(c, r) => assert_eq!(effects, [Effect::ResizeRun(*c, *r)]),
                    Command::Message(text) => {
                        // An interactive agent that runs reads it now; else a prompt to
                        // come carries it.
                        let ended = matches!(at, At::Ended(_));
                        if agent_running && !ended {
                            assert_eq!(effects, [Effect::TypeMessage(text.clone())], "{said}");
                        } else if policy.prompt_to_come() && !ended {
                            assert_eq!(effects, [Effect::QueueMessage(text.clone())], "{said}");
                        } else {
                            assert!(
                                matches!(
                                    effects[..],
                                    [Effect::Decline {
                                        command: KeyedCommand::Message,
                                        ..
                                    }]
                                ),
                                "{said}"
                            );
                        }
                    }
                    Command::TogglePause if agent_running => {
                        assert_eq!(effects, [Effect::Pause(true)]);
                    }
                    Command::TogglePause => {
                        assert!(matches!(
                            effects[..],
                            [Effect::Decline {
                                command: KeyedCommand::TogglePause,
                                ..
                            }]
                        ));
                    }
                    Command::Abort => match at {
                        At::Ended(_) => assert_eq!(effects, [Effect::Quit]),
                        _ => assert_eq!(effects, [Effect::Abort(Interruption::UserAbort)]),
                    },
                    Command::Interrupt(kind) => match at {
                        At::Ended(_) => assert_eq!(effects, [Effect::Quit]),
                        _ => assert_eq!(effects, [Effect::Abort(*kind)]),
                    },
                    _ => {}
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, stages().len() * commands().len() * 2);
}

#[tokio::test(start_paused = true)]
async fn next_rerun_inject_and_shell_by_stage() {
    let mut table = Vec::new();
    for at in stages() {
        for command in [
            Command::Next,
            Command::Rerun,
            Command::Inject("edited".to_string()),
            Command::OpenShell,
        ] {
            let mut policy = policy_at(at);
            let effects = policy.on_command(command.clone(), false);
            table.push(format!(
                "{at:?} {command:?}: {}",
                outcome(at, &effects, &policy)
            ));
        }
    }
    let expected = [
        "Setup Next: decline n",
        "Setup Rerun: decline r",
        "Setup Inject(\"edited\"): DetailsKept",
        "Setup OpenShell: decline o",
        "Gate(Migrate(1)) Next:  -> Migrate(1)",
        "Gate(Migrate(1)) Rerun: decline r",
        "Gate(Migrate(1)) Inject(\"edited\"): DetailsKept",
        "Gate(Migrate(1)) OpenShell: decline o",
        "Migrate(1) Next:  -> Gate(Verify(1))",
        "Migrate(1) Rerun: decline r",
        "Migrate(1) Inject(\"edited\"): DetailsKept",
        "Migrate(1) OpenShell: decline o",
        "Gate(Verify(1)) Next:  -> Verify(1, First)",
        "Gate(Verify(1)) Rerun: decline r",
        "Gate(Verify(1)) Inject(\"edited\"): DetailsKept",
        "Gate(Verify(1)) OpenShell: decline o",
        "Verify(1, First) Next: decline n",
        "Verify(1, First) Rerun: decline r",
        "Verify(1, First) Inject(\"edited\"): DetailsKept",
        "Verify(1, First) OpenShell: decline o",
        "Grade(1, First) Next: decline n",
        "Grade(1, First) Rerun: decline r",
        "Grade(1, First) Inject(\"edited\"): DetailsKept",
        "Grade(1, First) OpenShell: decline o",
        "Gate(Details) Next:  -> Inject",
        "Gate(Details) Rerun:  -> Verify(1, Again(Details))",
        "Gate(Details) Inject(\"edited\"):  -> Inject",
        "Gate(Details) OpenShell: decline o",
        "Verify(1, Again(Details)) Next: decline n",
        "Verify(1, Again(Details)) Rerun: decline r",
        "Verify(1, Again(Details)) Inject(\"edited\"): DetailsKept",
        "Verify(1, Again(Details)) OpenShell: decline o",
        "Grade(1, Again(Details)) Next: decline n",
        "Grade(1, Again(Details)) Rerun: decline r",
        "Grade(1, Again(Details)) Inject(\"edited\"): DetailsKept",
        "Grade(1, Again(Details)) OpenShell: decline o",
        "Inject Next: decline n",
        "Inject Rerun: decline r",
        "Inject Inject(\"edited\"): decline i",
        "Inject OpenShell: decline o",
        "Gate(Migrate(2)) Next:  -> Migrate(2)",
        "Gate(Migrate(2)) Rerun: decline r",
        "Gate(Migrate(2)) Inject(\"edited\"): decline i",
        "Gate(Migrate(2)) OpenShell: decline o",
        "Migrate(2) Next:  -> Gate(Verify(2))",
        "Migrate(2) Rerun: decline r",
        "Migrate(2) Inject(\"edited\"): decline i",
        "Migrate(2) OpenShell: decline o",
        "Gate(Verify(2)) Next:  -> Verify(2, First)",
        "Gate(Verify(2)) Rerun: decline r",
        "Gate(Verify(2)) Inject(\"edited\"): decline i",
        "Gate(Verify(2)) OpenShell: decline o",
        "Verify(2, First) Next: decline n",
        "Verify(2, First) Rerun: decline r",
        "Verify(2, First) Inject(\"edited\"): decline i",
        "Verify(2, First) OpenShell: decline o",
        "Grade(2, First) Next: decline n",
        "Grade(2, First) Rerun: decline r",
        "Grade(2, First) Inject(\"edited\"): decline i",
        "Grade(2, First) OpenShell: decline o",
        "Ended(2) Next: decline n",
        "Ended(2) Rerun:  -> Verify(2, Again(Ended))",
        "Ended(2) Inject(\"edited\"): decline i",
        "Ended(2) OpenShell: OpenShell",
        "Verify(2, Again(Ended)) Next: decline n",
        "Verify(2, Again(Ended)) Rerun: decline r",
        "Verify(2, Again(Ended)) Inject(\"edited\"): decline i",
        "Verify(2, Again(Ended)) OpenShell: decline o",
    ];
    assert_eq!(table, expected);
}

#[tokio::test(start_paused = true)]
async fn a_message_is_taken_only_where_an_agent_will_read_it() {
    let mut table = Vec::new();
    for at in stages() {
        for agent_running in [false, true] {
            let mut policy = policy_at(at);
            let effects = policy.on_command(Command::Message("hi".to_string()), agent_running);
            if matches!(effects[..], [Effect::Decline { .. }]) {
                table.push(format!("{at:?} running={agent_running}"));
            }
        }
    }
    let declined = [
        "Migrate(2) running=false",
        "Gate(Verify(2)) running=false",
        "Verify(2, First) running=false",
        "Grade(2, First) running=false",
        "Ended(2) running=false",
        "Ended(2) running=true",
        "Verify(2, Again(Ended)) running=false",
    ];
    assert_eq!(table, declined);
}

/// A one-shot agent (a headless CLI) reads no input while it runs: once phase 2's prompt is
/// sent, a message is declined whether it runs or not, and before that it is taken (the
/// driver queues it for phase 2's prompt). The driver carries out every message the policy
/// takes, so the key hint never offers `m` where the driver could not deliver it.
#[tokio::test(start_paused = true)]
async fn a_message_for_an_agent_that_reads_no_input_waits_for_a_prompt_to_come() {
    let mut table = Vec::new();
    for at in stages() {
        for agent_running in [false, true] {
            let mut policy = policy_at(at).with_agent(AgentMode::OneShot);
            let effects = policy.on_command(Command::Message("hi".to_string()), agent_running);
            match &effects[..] {
                [Effect::Decline { reason, .. }] => {
                    table.push(format!("{at:?} running={agent_running}: {reason}"));
                }
                [Effect::QueueMessage(_)] => {}
                other => panic!("{at:?} running={agent_running}: {other:?}"),
            }
        }
    }
    let not_running = "the agent is not running and phase 2's prompt was its last";
    let reads_none = "this agent reads no input while it runs, and phase 2's prompt was its last";
    let ended = "the session has ended: no agent will read it";
    let declined = [
        format!("Migrate(2) running=false: {not_running}"),
        format!("Migrate(2) running=true: {reads_none}"),
        format!("Gate(Verify(2)) running=false: {not_running}"),
        format!("Gate(Verify(2)) running=true: {reads_none}"),
        format!("Verify(2, First) running=false: {not_running}"),
        format!("Verify(2, First) running=true: {reads_none}"),
        format!("Grade(2, First) running=false: {not_running}"),
        format!("Grade(2, First) running=true: {reads_none}"),
        format!("Ended(2) running=false: {ended}"),
        format!("Ended(2) running=true: {ended}"),
        format!("Verify(2, Again(Ended)) running=false: {not_running}"),
        format!("Verify(2, Again(Ended)) running=true: {reads_none}"),
    ];
    assert_eq!(table, declined);
    // The answers the key hint is drawn from say the same.
    let migrating = policy_at(At::Migrate(2)).with_agent(AgentMode::OneShot);
    let answer = migrating
        .answers(true)
        .into_iter()
        .find(|a| a.command == KeyedCommand::Message)
        .unwrap();
    assert_eq!(answer.declined.as_deref(), Some(reads_none));
}

#[tokio::test(start_paused = true)]
async fn rerun_during_migrate_and_verify_says_why_not_now() {
    let verifying = [
        At::Migrate(1),
        At::Verify(1, Pass::First),
        At::Grade(1, Pass::First),
        At::Migrate(2),
        At::Verify(2, Pass::First),
        At::Grade(2, Pass::First),
    ];
    for at in verifying {
        let mut policy = policy_at(at);
        let effects = policy.on_command(Command::Rerun, true);
        let [Effect::Decline { command, reason }] = &effects[..] else {
            panic!("{at:?}: {effects:?}");
        };
        assert_eq!(*command, KeyedCommand::Rerun);
        assert!(
            reason.contains(&format!("phase {}", at.phase())),
            "{reason}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn step_mode_waits_at_each_gate_and_auto_mode_runs_through() {
    let mut step = Policy::new(Mode::Step, Some(AgentMode::Interactive));
    let mut seen = vec![step.at()];
    seen.push(step.done(At::Setup, None));
    assert_eq!(step.on_command(Command::Next, false), []);
    seen.push(step.at());
    seen.push(step.done(At::Migrate(1), None));
    step.on_command(Command::Next, false);
    seen.push(step.at());
    seen.push(step.done(At::Verify(1, Pass::First), None));
    seen.push(step.done(At::Grade(1, Pass::First), Some(false)));
    step.on_command(Command::Next, false);
    seen.push(step.at());
    seen.push(step.done(At::Inject, None));
    step.on_command(Command::Next, false);
    seen.push(step.at());
    seen.push(step.done(At::Migrate(2), None));
    step.on_command(Command::Next, false);
    seen.push(step.done(At::Verify(2, Pass::First), None));
    seen.push(step.done(At::Grade(2, Pass::First), Some(false)));
    assert_eq!(
        seen,
        [
            At::Setup,
            At::Gate(Gated::Migrate(1)),
            At::Migrate(1),
            At::Gate(Gated::Verify(1)),
            At::Verify(1, Pass::First),
            At::Grade(1, Pass::First),
            At::Gate(Gated::Details),
            At::Inject,
            At::Gate(Gated::Migrate(2)),
            At::Migrate(2),
            At::Gate(Gated::Verify(2)),
            At::Grade(2, Pass::First),
            At::Ended(2),
        ]
    );
    assert_eq!(step.passed_of(1), Some(false));
    assert_eq!(step.passed_of(2), Some(false));
    assert_eq!(step.details(), None);

    let mut auto = Policy::new(Mode::Auto, Some(AgentMode::OneShot));
    assert_eq!(auto.done(At::Setup, None), At::Migrate(1));
    assert_eq!(auto.done(At::Migrate(1), None), At::Verify(1, Pass::First));
    assert_eq!(
        auto.done(At::Verify(1, Pass::First), None),
        At::Grade(1, Pass::First)
    );
    assert_eq!(
        auto.done(At::Grade(1, Pass::First), Some(false)),
        At::Inject
    );
    assert_eq!(auto.done(At::Inject, None), At::Migrate(2));
    assert_eq!(auto.done(At::Migrate(2), None), At::Verify(2, Pass::First));
    auto.done(At::Verify(2, Pass::First), None);
    assert_eq!(
        auto.done(At::Grade(2, Pass::First), Some(true)),
        At::Ended(2)
    );
    assert_eq!(auto.passed_of(2), Some(true));
}

#[tokio::test(start_paused = true)]
async fn a_pass_in_phase_one_ends_and_grade_has_one_phase() {
    let mut policy = Policy::new(Mode::Auto, Some(AgentMode::OneShot));
    policy.done(At::Setup, None);
    policy.done(At::Migrate(1), None);
    policy.done(At::Verify(1, Pass::First), None);
    assert_eq!(
        policy.done(At::Grade(1, Pass::First), Some(true)),
        At::Ended(1)
    );
    assert_eq!(policy.passed_of(1), Some(true));

    let mut grade = Policy::new(Mode::Step, None);
    assert_eq!(grade.done(At::Setup, None), At::Verify(1, Pass::First));
    grade.done(At::Verify(1, Pass::First), None);
    assert_eq!(
        grade.done(At::Grade(1, Pass::First), Some(false)),
        At::Ended(1)
    );
    assert!(grade.graded(1));
}

#[tokio::test(start_paused = true)]
async fn details_given_before_phase_one_fails_are_sent_without_a_wait() {
    let mut policy = policy_at(At::Migrate(1));
    assert_eq!(
        policy.on_command(Command::Inject("use lr 3e-4".to_string()), true),
        [Effect::DetailsKept]
    );
    policy.done(At::Migrate(1), None);
    policy.on_command(Command::Next, false);
    policy.done(At::Verify(1, Pass::First), None);
    // Step mode, yet no review of the details: the human gave them already.
    assert_eq!(
        policy.done(At::Grade(1, Pass::First), Some(false)),
        At::Inject
    );
    assert_eq!(policy.details(), Some("use lr 3e-4"));

    let mut policy = policy_at(At::Gate(Gated::Details));
    assert_eq!(
        policy.on_command(Command::Inject("edited".to_string()), false),
        []
    );
    assert_eq!(policy.at(), At::Inject);
    assert_eq!(policy.details(), Some("edited"));
}

#[tokio::test(start_paused = true)]
async fn switching_to_auto_ends_the_wait_and_a_stage_left_early_is_not_ended_twice() {
    let mut policy = policy_at(At::Gate(Gated::Verify(1)));
    policy.on_command(Command::ToggleMode, false);
    assert_eq!(policy.at(), At::Verify(1, Pass::First));
    assert_eq!(policy.mode(), Mode::Auto);

    let mut policy = policy_at(At::Gate(Gated::Details));
    let effects = policy.on_command(Command::ToggleMode, false);
    assert_eq!(effects, [Effect::SetMode(Mode::Auto)]);
    assert_eq!(policy.at(), At::Inject);
    assert_eq!(policy.details(), None);

    // The human ended the turn: the agent's own end of it afterwards changes nothing.
    let mut policy = policy_at(At::Migrate(1));
    policy.on_command(Command::Next, true);
    assert_eq!(policy.at(), At::Gate(Gated::Verify(1)));
    assert_eq!(
        policy.done(At::Migrate(1), None),
        At::Gate(Gated::Verify(1))
    );
}

#[tokio::test(start_paused = true)]
async fn a_rerun_returns_where_it_came_from_unless_it_passes() {
    let again = Pass::Again(Return::Details);
    let mut policy = policy_at(At::Gate(Gated::Details));
    policy.on_command(Command::Rerun, false);
    assert_eq!(policy.at(), At::Verify(1, again));
    assert_eq!(policy.done(At::Verify(1, again), None), At::Grade(1, again));
    assert_eq!(
        policy.done(At::Grade(1, again), Some(false)),
        At::Gate(Gated::Details)
    );
    policy.on_command(Command::Rerun, false);
    policy.done(At::Verify(1, again), None);
    assert_eq!(policy.done(At::Grade(1, again), Some(true)), At::Ended(1));
    assert_eq!(policy.passed_of(1), Some(true));

    let again = Pass::Again(Return::Ended);
    let mut policy = policy_at(At::Ended(2));
    policy.on_command(Command::Rerun, false);
    policy.done(At::Verify(2, again), None);
    assert_eq!(policy.done(At::Grade(2, again), Some(true)), At::Ended(2));
    assert_eq!(policy.passed_of(2), Some(true));
}

#[tokio::test(start_paused = true)]
async fn a_resumed_session_continues_the_cut_off_phase() {
    let mut policy = Policy::resumed(
        Mode::Step,
        Some(AgentMode::Interactive),
        [Some(false), None],
        Some((2, true)),
    );
    assert_eq!(policy.done(At::Setup, None), At::Gate(Gated::Verify(2)));
    let mut policy = Policy::resumed(
        Mode::Auto,
        Some(AgentMode::Interactive),
        [None, None],
        Some((1, false)),
    );
    assert_eq!(policy.done(At::Setup, None), At::Migrate(1));
    let policy = Policy::resumed(
        Mode::Auto,
        Some(AgentMode::Interactive),
        [Some(true), None],
        None,
    );
    assert_eq!(policy.at(), At::Ended(1));
    assert_eq!(policy.passed_of(1), Some(true));
}

#[tokio::test(start_paused = true)]
async fn pausing_follows_the_agent() {
    let mut policy = policy_at(At::Migrate(1));
    assert_eq!(
        policy.on_command(Command::TogglePause, true),
        [Effect::Pause(true)]
    );
    assert!(policy.paused());
    assert_eq!(
        policy.on_command(Command::TogglePause, true),
        [Effect::Pause(false)]
    );
    policy.on_command(Command::TogglePause, true);
    policy.agent_changed();
    assert!(!policy.paused());
}

#[tokio::test(start_paused = true)]
async fn an_agent_is_idle_only_past_the_limit_since_its_last_activity() {
    let limit = Duration::from_secs(30);
    let mut clock = AgentClock::starting(Instant::now());
    tokio::time::advance(Duration::from_secs(29)).await;
    assert!(!clock.idle_past(limit, Instant::now()));
    clock.active_at = Instant::now();
    tokio::time::advance(Duration::from_secs(29)).await;
    assert!(!clock.idle_past(limit, Instant::now()));
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(clock.idle_past(limit, Instant::now()));
}
