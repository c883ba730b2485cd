//! Tests on the real texts of the upstream repositories (fixtures/NOTICE.md): what is found
//! in each, and which claim each repository's metric is matched to.

use super::*;

const NANOGPT: &str = include_str!("fixtures/nanogpt_README.md");
const MLP: &str = include_str!("fixtures/mlp_README.md");
const SGC: &str = include_str!("fixtures/sgc_README.md");
const MAKEMORE: &str = include_str!("fixtures/makemore_README.md");
const PART5: &str = include_str!("fixtures/makemore_part5_cnn1.ipynb");

/// The README's CPU command (nanoGPT README.md:85).
const NANOGPT_CPU: &str = "python train.py config/train_shakespeare_char.py --device=cpu --compile=False --eval_iters=20 --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0";

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// (where, value as written, approximate, label) of each claim.
fn summary(claims: &[Claim]) -> Vec<(String, String, bool, String)> {
    claims
        .iter()
        .map(|c| {
            (
                c.where_text(),
                c.value_text(),
                c.approximate,
                c.label.clone(),
            )
        })
        .collect()
}

fn row(w: &str, v: &str, approx: bool, label: &str) -> (String, String, bool, String) {
    (w.to_string(), v.to_string(), approx, label.to_string())
}

fn nanogpt_target(command: &str, measured: Option<f64>) -> MetricTarget {
    MetricTarget {
        name: "val_loss".into(),
        line: "step 2000: train loss 1.7648, val loss 1.8857".into(),
        literal: "val loss".into(),
        args: args(command),
        measured,
        names: Vec::new(),
    }
}

fn chosen(matches: &[ClaimMatch]) -> &ClaimMatch {
    match choose(matches) {
        Choice::Unambiguous(i) => &matches[i],
        other => panic!("expected one claim, got {other:?}"),
    }
}

#[test]
fn nanogpt_states_these_claims_and_no_durations_sizes_or_versions() {
    let claims = claims_in_markdown(NANOGPT, "README.md");
    assert_eq!(
        summary(&claims),
        vec![
            row("README.md:51", "1.4697", false, "validation loss"),
            row("README.md:88", "1.88", false, "loss"),
            row("README.md:121", "2.85", true, "loss"),
            row("README.md:121", "3.11", true, "val loss"),
            row("README.md:121", "2.85", true, "finetune"),
            row("README.md:151", "3.11", false, "train loss"),
            row("README.md:151", "3.12", false, "val loss"),
            row("README.md:152", "2.85", false, "train loss"),
            row("README.md:152", "2.84", false, "val loss"),
            row("README.md:153", "2.66", false, "train loss"),
            row("README.md:153", "2.67", false, "val loss"),
            row("README.md:154", "2.56", false, "train loss"),
            row("README.md:154", "2.54", false, "val loss"),
            row("README.md:156", "2.85", true, "loss"),
        ]
    );
    let baseline = &claims[6];
    let cell = baseline.table.as_ref().unwrap();
    assert_eq!(
        (cell.row_header.as_str(), cell.column_header.as_str()),
        ("gpt2", "val loss")
    );
    assert_eq!(baseline.quote, "| gpt2 | 124M         | 3.11  | 3.12     |");
    // "~3 minutes", "4 days", "(124M)", "1MB", "PyTorch 2.0", "135ms", "2022", "256 characters"
    for not_a_claim in [
        3.0, 4.0, 124.0, 1.0, 2.0, 135.0, 250.0, 2022.0, 256.0, 2000.0, 1.3,
    ] {
        assert!(
            claims.iter().all(|c| c.value != not_a_claim),
            "{not_a_claim}"
        );
    }
}

#[test]
fn nanogpt_cpu_command_takes_the_loss_stated_after_it() {
    let claims = claims_in_markdown(NANOGPT, "README.md");
    for measured in [None, Some(1.8857)] {
        let matches = rank(&claims, &nanogpt_target(NANOGPT_CPU, measured));
        let best = chosen(&matches);
        assert_eq!(best.claim.where_text(), "README.md:88");
        assert_eq!(best.value_in_metric_units, 1.88);
        assert!(!best.claim.approximate);
        assert!(
            best.reasons
                .iter()
                .any(|r| r.contains("(the task's command)"))
        );
        assert_eq!(matches[1].claim.number, "1.4697");
        assert!(best.score - matches[1].score >= MARGIN);
    }
}

#[test]
fn nanogpt_gpu_command_takes_the_best_validation_loss() {
    let claims = claims_in_markdown(NANOGPT, "README.md");
    let target = nanogpt_target("python train.py config/train_shakespeare_char.py", None);
    let best = chosen(&rank(&claims, &target)).clone();
    assert_eq!(
        (best.claim.where_text().as_str(), best.value_in_metric_units),
        ("README.md:51", 1.4697)
    );
}

#[test]
fn nanogpt_with_a_command_the_readme_does_not_show_is_ambiguous() {
    let claims = claims_in_markdown(NANOGPT, "README.md");
    let matches = rank(&claims, &nanogpt_target("python train.py", None));
    let Choice::Ambiguous { candidates, why } = choose(&matches) else {
        panic!("several val losses are stated");
    };
    let values: Vec<&str> = candidates
        .iter()
        .map(|&i| matches[i].claim.number.as_str())
        .collect();
    assert!(
        values.contains(&"1.4697") && values.contains(&"3.12"),
        "{values:?}"
    );
    assert!(why.contains("README.md:51"), "{why}");
}

#[test]
fn nanogpt_baseline_table_row_is_the_config_s_model() {
    let claims = claims_in_markdown(NANOGPT, "README.md");
    let target = nanogpt_target("python train.py config/eval_gpt2_medium.py", None);
    let matches = rank(&claims, &target);
    let best = chosen(&matches);
    assert_eq!(
        (best.claim.where_text().as_str(), best.claim.number.as_str()),
        ("README.md:152", "2.84")
    );
    let gpt2 = matches.iter().find(|m| m.claim.number == "3.12").unwrap();
    assert!(
        gpt2.reasons
            .iter()
            .any(|r| r.contains("row 'gpt2' is not the command's"))
    );
}

#[test]
fn mlp_val_loss_is_2_06_not_the_4_gram_s_2_11() {
    let claims = claims_in_markdown(MLP, "README.md");
    assert_eq!(
        summary(&claims),
        vec![
            row("README.md:21", "2.06", false, "val loss"),
            row("README.md:21", "2.11", false, "recall count-based 4-gram"),
        ]
    );
    let target = MetricTarget {
        name: "val_loss".into(),
        line: "step   1000 | train_loss 2.100000 | val_loss 2.060000 | lr 1e-3".into(),
        literal: "val_loss".into(),
        args: args("python mlp_pytorch.py"),
        measured: Some(2.09),
        names: Vec::new(),
    };
    let matches = rank(&claims, &target);
    assert_eq!(chosen(&matches).claim.number, "2.06");
    let other = &matches[1];
    assert_eq!(other.claim.number, "2.11");
    assert!(
        !other.names_metric,
        "the label nearest 2.11 is the 4-gram's"
    );
}

fn sgc_target(dataset: &str) -> MetricTarget {
    MetricTarget {
        name: "test_acc".into(),
        line: "Validation Accuracy: 0.7940 Test Accuracy: 0.8100".into(),
        literal: "Test Accuracy:".into(),
        args: args(&format!("citation.py --dataset {dataset} --tuned")),
        measured: None,
        names: Vec::new(),
    }
}

#[test]
fn sgc_table_rows_match_the_dataset_argument_in_the_printed_units() {
    let claims = claims_in_markdown(SGC, "README.md");
    assert_eq!(
        summary(&claims),
        vec![
            row("README.md:7", "95.0", false, "f1 score"),
            row("README.md:7", "94.9", false, ""),
            row("README.md:31", "81.0 %", false, "acc"),
            row("README.md:32", "71.9 %", false, "acc"),
            row("README.md:33", "78.9 %", false, "acc"),
            row("README.md:34", "94.9 %", false, "f1"),
        ]
    );
    assert!(
        claims.iter().all(|c| c.value != 0.13),
        "0.13s is a duration"
    );
    for (dataset, line, value) in [
        ("cora", 31, 0.81),
        ("citeseer", 32, 0.719),
        ("pubmed", 33, 0.789),
    ] {
        let matches = rank(&claims, &sgc_target(dataset));
        let best = chosen(&matches);
        assert_eq!(best.claim.where_text(), format!("README.md:{line}"));
        assert_eq!(best.value_in_metric_units, value);
        assert_eq!(best.claim.unit, Unit::Percent);
    }
    let cora = rank(&claims, &sgc_target("cora"));
    let best = chosen(&cora);
    assert_eq!(best.claim.quote, "Cora    | Acc: 81.0 %     | 0.13s");
    assert_eq!(best.claim.context, "cora metric acc");
    let citeseer = cora.iter().find(|m| m.claim.number == "71.9").unwrap();
    assert!(citeseer.score < best.score - MARGIN);
    let reddit = cora.iter().find(|m| m.claim.label == "f1").unwrap();
    assert!(reddit.score < 0.0, "F1 is another measure");
}

#[test]
fn sgc_claim_authenticates_against_calibrated_runs() {
    let claims = claims_in_markdown(SGC, "README.md");
    let matches = rank(&claims, &sgc_target("cora"));
    let best = chosen(&matches);
    let measured = Measured {
        runs: 5,
        mean: 0.8103,
        std: 0.0005,
    };
    let a = authenticate(best.value_in_metric_units, &measured, 0.012);
    assert_eq!(a.status, ClaimStatus::Reproduced);
    let far = authenticate(
        best.value_in_metric_units,
        &Measured {
            mean: 0.79,
            ..measured
        },
        0.012,
    );
    assert_eq!(far.status, ClaimStatus::NotReproduced);
}

#[test]
fn makemore_test_logprob_is_approximate_and_matches_test_loss() {
    let claims = claims_in_markdown(MAKEMORE, "README.md");
    assert_eq!(
        summary(&claims),
        vec![row("README.md:44", "1.92", true, "test logprob")]
    );
    let target = MetricTarget {
        name: "test_loss".into(),
        line: "step 500 train loss: 2.1 test loss: 2.2".into(),
        literal: "test loss:".into(),
        args: args("makemore.py -i names.txt -o names"),
        measured: None,
        names: Vec::new(),
    };
    let matches = rank(&claims, &target);
    let best = chosen(&matches);
    assert_eq!(best.value_in_metric_units, 1.92);
    assert!(
        best.reasons
            .iter()
            .any(|r| r.contains("names the measure (loss)"))
    );
    assert!(
        best.reasons
            .iter()
            .any(|r| r.contains("names the split (test)"))
    );
}

#[test]
fn part5_notebook_markdown_and_outputs_by_cell() {
    let claims = claims_in_notebook(PART5, "makemore_part5_cnn1.ipynb").unwrap();
    let found: Vec<(String, String, String)> = claims
        .iter()
        .map(|c| {
            (
                c.where_text().replace("makemore_part5_cnn1.ipynb", "nb"),
                c.label.clone(),
                c.number.clone(),
            )
        })
        .collect();
    let expect = |w: &str, l: &str, n: &str| (w.to_string(), l.to_string(), n.to_string());
    assert_eq!(
        found,
        vec![
            expect("nb#cell=13", "train", "1.7690284252166748"),
            expect("nb#cell=13", "val", "1.9936515092849731"),
            expect("nb#cell=14", "train", "2.058"),
            expect("nb#cell=14", "val", "2.105"),
            expect("nb#cell=14", "train", "1.918"),
            expect("nb#cell=14", "val", "2.027"),
            expect("nb#cell=14", "train", "1.941"),
            expect("nb#cell=14", "val", "2.029"),
            expect("nb#cell=14", "train", "1.912"),
            expect("nb#cell=14", "val", "2.022"),
            expect("nb#cell=14", "train", "1.769"),
            expect("nb#cell=14", "val", "1.993"),
        ]
    );
    let last = &claims[11];
    assert_eq!(
        last.quote,
        "- scale up the network: n_embd 24, n_hidden 128 (76K params): train 1.769, val 1.993"
    );
    // The performance log's first line is in cell 14, after the "performance log" heading.
    assert_eq!(
        claims[2].quote,
        "- original (3 character context + 200 hidden neurons, 12K params): train 2.058, val 2.105"
    );

    let target = MetricTarget {
        name: "val_loss".into(),
        line: "val 1.9936515092849731".into(),
        literal: "val".into(),
        args: Vec::new(),
        measured: None,
        names: Vec::new(),
    };
    let matches = rank(&claims, &target);
    let best = chosen(&matches);
    assert_eq!(best.claim.where_text(), "makemore_part5_cnn1.ipynb#cell=13");
    assert!(
        best.reasons
            .iter()
            .any(|r| r.contains("surroundings mention loss")),
        "split_loss in the cell's code"
    );
}

#[test]
fn counterexamples_are_not_claims() {
    let text = "\
# project v1.2

Requires Python 3.8 and PyTorch>=2.0.1 (tested with torch 2.1.0, released Dec 29, 2022).
Train with a learning rate of 3e-4, lr=1e-3 for finetuning, batch size 32, dropout 0.2,
weight decay 5e-4 and n_layer 4 for 5000 iterations (about 4 days on 8 GPUs, ~3 minutes on
one, 0.13s per step, 250ms / iter). The model has 124M parameters (76K params for the
small one) and reads 1M characters, a 1.2 GB file of 300B tokens.

1. Clone the repository (see https://example.com/v2.3/results and issue #23).
2. Run `python train.py --lr=0.5 --epochs=10`.

```python
acc = 0.91
```
";
    let claims = claims_in_markdown(text, "README.md");
    assert!(claims.is_empty(), "{:#?}", summary(&claims));
}

#[test]
fn find_claims_reads_readmes_docs_notebooks_and_the_paper() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("README.md", "We reach a test accuracy of 91.2%.\n");
    write("sub/readme.rst", "val loss 1.5\n");
    write("docs/guide/results.md", "\n\nThe final val loss is 1.25.\n");
    write("docs/notes.txt", "val loss 9.9\n");
    write("notes.md", "val loss 9.8\n");
    write("node_modules/pkg/README.md", "val loss 9.7\n");
    write(".hidden/README.md", "val loss 9.6\n");
    write("broken.ipynb", "{not json");
    write(
        "nb/run.ipynb",
        r#"{"cells": [{"cell_type": "code", "source": "print(acc)", "outputs": [{"output_type": "stream", "text": "test acc 0.905\n"}]}]}"#,
    );
    let paper = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        paper.path(),
        "Our model reaches 92.0% accuracy on the test set.\n",
    )
    .unwrap();

    let claims = find_claims(root, Some(paper.path())).unwrap();
    let found: Vec<(String, f64)> = claims.iter().map(|c| (c.where_text(), c.value)).collect();
    let paper_name = paper.path().display().to_string();
    assert_eq!(
        found,
        vec![
            ("README.md:1".to_string(), 91.2),
            ("docs/guide/results.md:3".to_string(), 1.25),
            ("nb/run.ipynb#cell=0".to_string(), 0.905),
            ("sub/readme.rst:1".to_string(), 1.5),
            (format!("{paper_name}:1"), 92.0),
        ]
    );
    assert!(matches!(
        find_claims(&root.join("README.md"), None),
        Err(ClaimsError::NotADirectory { .. })
    ));
}

#[test]
fn a_paper_that_is_not_text_is_an_error() {
    let repo = tempfile::tempdir().unwrap();
    let paper = repo.path().join("paper.pdf");
    std::fs::write(&paper, [0x25, 0x50, 0x44, 0x46, 0xff, 0xfe, 0x00]).unwrap();
    assert!(matches!(
        find_claims(repo.path(), Some(&paper)),
        Err(ClaimsError::PaperNotText { .. })
    ));
}

#[test]
fn where_text_is_the_spec_s() {
    let mut claim = claims_in_markdown("val loss 1.5\n", "README.md").remove(0);
    assert_eq!(claim.where_text(), "README.md:1");
    claim.location = Location::Cell {
        notebook: "part5.ipynb".into(),
        cell: 14,
    };
    assert_eq!(claim.where_text(), "part5.ipynb#cell=14");
    assert_eq!(Unit::Percent.as_str(), "%");
    assert_eq!(serde_json::to_string(&Unit::None).unwrap(), "\"\"");
}

#[test]
fn the_notebook_the_command_runs_claims_what_it_printed_whatever_the_runs_measured() {
    // `xstack init --notebook` names the metric `val`, as the notebook prints it. The
    // notebook's committed output (cell 13, printed by the code the command runs) is its
    // claim; the performance log's earlier experiments (2.022 to 2.105) are not, and the
    // measured value changes nothing: the same claim with, without or far from a run.
    let claims = claims_in_notebook(PART5, "makemore_part5_cnn1.ipynb").unwrap();
    let target = |measured| MetricTarget {
        name: "val".into(),
        line: "val 1.9936513900756836".into(),
        literal: "val".into(),
        args: args("python -m _xstack_notebook makemore_part5_cnn1.ipynb"),
        measured,
        names: Vec::new(),
    };
    for measured in [Some(1.9937), None, Some(2.105)] {
        let matches = rank(&claims, &target(measured));
        let best = chosen(&matches);
        assert_eq!(best.claim.where_text(), "makemore_part5_cnn1.ipynb#cell=13");
        assert!(
            best.reasons
                .iter()
                .any(|r| r.contains("the notebook the command runs")),
            "{:?}",
            best.reasons
        );
    }
    // Run some other way, nothing in the text singles one out: the choice is the human's.
    let other = MetricTarget {
        args: Vec::new(),
        ..target(Some(1.9937))
    };
    let matches = rank(&claims, &other);
    assert!(
        matches!(choose(&matches), Choice::Ambiguous { .. }),
        "{:?}",
        choose(&matches)
    );
}

/// A README's results table with the repository's own row and a baseline's.
const OWN_AND_BASELINE: &str = "\
# linear digits

## Results

| model | hidden units | epochs | test accuracy |
|---|---|---|---|
| linear (this repo) | 650 | 300 | 91.0 % |
| kNN baseline, k = 3 | - | - | 98.3 % |
";

fn accuracy_target(command: &str, measured: Option<f64>) -> MetricTarget {
    MetricTarget {
        name: "test_acc".into(),
        line: "test_acc=0.962".into(),
        literal: "test_acc".into(),
        args: args(command),
        measured,
        names: vec!["digits".into()],
    }
}

#[test]
fn the_repository_s_own_row_beats_a_baseline_closer_to_the_run() {
    let claims = claims_in_markdown(OWN_AND_BASELINE, "README.md");
    let numbers: Vec<&str> = claims.iter().map(|c| c.number.as_str()).collect();
    assert_eq!(numbers, ["91.0", "98.3"]);
    // The run measured 0.962, far nearer the baseline's 98.3 %: the claim is still 91.0 %.
    for measured in [Some(0.962), Some(0.983), Some(0.91), None] {
        let matches = rank(&claims, &accuracy_target("python train.py", measured));
        let best = chosen(&matches);
        assert_eq!(best.claim.number, "91.0", "{matches:#?}");
        assert!(
            best.reasons
                .iter()
                .any(|r| r.contains("its row speaks of this repository ('this repo')")),
            "{:?}",
            best.reasons
        );
        let baseline = &matches[1];
        assert!(
            baseline
                .reasons
                .iter()
                .any(|r| r.contains("another's result ('baseline')")),
            "{:?}",
            baseline.reasons
        );
    }
    let measured = Some(0.962);
    assert_eq!(
        chosen(&rank(
            &claims,
            &accuracy_target("python train.py", measured)
        ))
        .value_in_metric_units,
        0.91
    );
}

#[test]
fn a_sentence_naming_two_models_gives_each_its_number() {
    for text in [
        "Our MLP reaches a test accuracy of 91.0 %, while the CNN of [3] reaches 98.3 %.\n",
        "The CNN of the original paper reaches a test accuracy of 98.3 %; our test accuracy is 91.0 %.\n",
        "Test accuracy: 98.3 % for the CNN baseline, 91.0 % for ours.\n",
    ] {
        let claims = claims_in_markdown(text, "README.md");
        assert_eq!(claims.len(), 2, "{text}: {:#?}", summary(&claims));
        let matches = rank(&claims, &accuracy_target("python train.py", Some(0.97)));
        assert_eq!(
            chosen(&matches).claim.number,
            "91.0",
            "{text}: {matches:#?}"
        );
    }
    // A sentence that names the repository's script by its name.
    let text = "On the test set, digits.py reaches an accuracy of 91.0 %, and the CNN 98.3 %.\n";
    let claims = claims_in_markdown(text, "README.md");
    let matches = rank(&claims, &accuracy_target("python digits.py", Some(0.97)));
    let best = chosen(&matches);
    assert_eq!(best.claim.number, "91.0", "{matches:#?}");
    assert!(
        best.reasons
            .iter()
            .any(|r| r.contains("names the repository or its script ('digits')")),
        "{:?}",
        best.reasons
    );
}

#[test]
fn two_equally_plausible_claims_are_ambiguous_wherever_the_run_lands() {
    let text = "\
| model | test accuracy |
|---|---|
| mlp, one layer | 91.0 % |
| mlp, two layers | 93.5 % |
";
    let claims = claims_in_markdown(text, "README.md");
    for measured in [Some(0.91), Some(0.935), None] {
        let matches = rank(&claims, &accuracy_target("python train.py", measured));
        let Choice::Ambiguous { candidates, .. } = choose(&matches) else {
            panic!("two rows say the same of the repository: {matches:#?}");
        };
        assert_eq!(candidates.len(), 2);
    }
}

#[test]
fn the_split_before_a_score_on_its_line_tells_train_from_test() {
    // minGPT's demo.ipynb, cell 8's committed output: both lines say `100.00% correct`.
    let notebook = r#"{"cells": [{"cell_type": "code", "source": "run_eval(trainer, 'train')\nrun_eval(trainer, 'test')",
        "outputs": [{"output_type": "stream", "name": "stdout",
                     "text": ["train final score: 5000/5000 = 100.00% correct\n", "test final score: 5000/5000 = 100.00% correct\n"]}]}]}"#;
    let claims = claims_in_notebook(notebook, "demo.ipynb").unwrap();
    assert_eq!(claims.len(), 2, "{:#?}", summary(&claims));
    let target = MetricTarget {
        name: "test_final_score".into(),
        line: "test final score: 4998/5000 = 99.96% correct".into(),
        literal: "test final score".into(),
        args: args("python -m _xstack_notebook demo.ipynb"),
        measured: Some(99.96),
        names: Vec::new(),
    };
    let mut with_a_loss = claims.clone();
    with_a_loss.extend(claims_in_markdown(
        "The final train loss is 0.14712.\n",
        "README.md",
    ));
    let matches = rank(&with_a_loss, &target);
    let best = chosen(&matches);
    assert_eq!(
        best.claim.quote,
        "test final score: 5000/5000 = 100.00% correct"
    );
    let train = matches
        .iter()
        .find(|m| m.claim.quote.starts_with("train"))
        .unwrap();
    assert!(
        train
            .reasons
            .iter()
            .any(|r| r.contains("its clause names the train split, not test")),
        "{:?}",
        train.reasons
    );
    // A loss is not a percentage of anything.
    let loss = matches
        .iter()
        .find(|m| m.claim.number == "0.14712")
        .unwrap();
    assert_eq!(loss.value_in_metric_units, 0.14712);
}

#[test]
fn a_progress_log_in_a_cell_claims_its_last_line() {
    // diffrax's neural_ode.ipynb, cell 13's committed output: six `Loss` lines a stage, two
    // stages, each ending at `Step: 499`. The published result is the last line printed; the
    // earlier ones are the same label printed again.
    let lines = [
        "Step: 0, Loss: 0.15854649245738983, Computation time: 2.1308090686798096",
        "Step: 100, Loss: 0.008659855462610722, Computation time: 0.0057790279388427734",
        "Step: 200, Loss: 0.012714792974293232, Computation time: 0.006920814514160156",
        "Step: 300, Loss: 0.009628010913729668, Computation time: 0.007491111755371094",
        "Step: 400, Loss: 0.004102183040231466, Computation time: 0.007421970367431641",
        "Step: 499, Loss: 0.0012518921867012978, Computation time: 0.007432222366333008",
        "Step: 0, Loss: 0.05192319303750992, Computation time: 2.066265106201172",
        "Step: 100, Loss: 0.0171516016125679, Computation time: 0.03773188591003418",
        "Step: 200, Loss: 0.010207891464233398, Computation time: 0.03768420219421387",
        "Step: 300, Loss: 0.01183586660772562, Computation time: 0.04127621650695801",
        "Step: 400, Loss: 0.006402525119483471, Computation time: 0.03928399085998535",
        "Step: 499, Loss: 0.002007006434723735, Computation time: 0.039736032485961914",
    ];
    let text: Vec<String> = lines.iter().map(|l| format!("{l}\n")).collect();
    let notebook = serde_json::json!({"cells": [
        {"cell_type": "code", "source": "def main(seed=5678):\n    print(f\"Step: {step}, Loss: {loss}\")", "outputs": []},
        {"cell_type": "code", "source": "ts, ys, model = main()",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    ]})
    .to_string();
    let path = "docs/examples/neural_ode.ipynb";
    let claims = claims_in_notebook(&notebook, path).unwrap();
    assert_eq!(claims.len(), 12, "{:#?}", summary(&claims));
    let target = MetricTarget {
        name: "loss".into(),
        line: "Step: 499, Loss: 0.001865130034275353, Computation time: 0.04".into(),
        literal: "Loss:".into(),
        args: args(&format!("python -m _xstack_notebook {path}")),
        measured: Some(0.001865130034275353),
        names: Vec::new(),
    };
    let matches = rank(&claims, &target);
    let best = chosen(&matches);
    assert_eq!(best.claim.quote, lines[11]);
    assert_eq!(best.claim.value, 0.002007006434723735);
    assert_eq!(best.claim.where_text(), format!("{path}#cell=1"));
    let first_stage_end = matches.iter().find(|m| m.claim.quote == lines[5]).unwrap();
    assert!(
        first_stage_end
            .reasons
            .iter()
            .any(|r| r.starts_with("its cell prints 'loss' again later")),
        "{:?}",
        first_stage_end.reasons
    );
    assert!(best.score - first_stage_end.score >= MARGIN);
}

/// Diego999/pyGAT's README.md:24: a range of percentages written without their sign, of a
/// test accuracy the script prints as a fraction (`accuracy= 0.8380`).
#[test]
fn a_percentage_without_its_sign_is_a_percentage_of_a_printed_fraction() {
    let text = "For the branch **master**, the training of the transductive learning on Cora task on a Titan Xp takes ~0.9 sec per epoch and 10-15 minutes for the whole training (~800 epochs). The final accuracy is between 84.2 and 85.3 (obtained on 5 different runs). For the branch **similar_impl_tensorflow**, the training takes less than 1 minute and reach ~83.0.\n";
    let claims = claims_in_markdown(text, "README.md");
    assert_eq!(
        summary(&claims)[..2],
        [
            row("README.md:1", "84.2", false, "accuracy"),
            row("README.md:1", "85.3", false, "accuracy"),
        ]
    );
    let target = MetricTarget {
        name: "accuracy".into(),
        line: "Test set results: loss= 0.6512 accuracy= 0.8380".into(),
        literal: "accuracy".into(),
        args: args("python train.py"),
        measured: Some(0.838),
        names: vec!["pygat".into()],
    };
    let matches = rank(&claims, &target);
    let values: Vec<(f64, bool)> = matches[..2]
        .iter()
        .map(|m| (m.value_in_metric_units, m.names_metric))
        .collect();
    assert_eq!(values, [(0.842, true), (0.853, true)], "{matches:#?}");
    // The range's two ends are the user's choice, each in the metric's units.
    let Choice::Ambiguous { candidates, .. } = choose(&matches) else {
        panic!("a range's ends are two claims: {matches:#?}");
    };
    assert_eq!(candidates[..2], [0, 1]);
}
