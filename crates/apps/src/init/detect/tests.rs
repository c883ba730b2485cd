//! Detection on captured logs of each style, written from the formats' documentation.

use super::*;

/// Detects and verifies; every candidate must survive verification.
fn candidates(log: &str) -> Vec<Candidate> {
    let lines = crate::metrics::plain_lines(log);
    let (kept, rejected) = verify(detect(&lines), log);
    assert!(rejected.is_empty(), "rejected: {rejected:?}");
    kept
}

fn names(c: &[Candidate]) -> Vec<&str> {
    c.iter().map(|c| c.name.as_str()).collect()
}

fn get<'a>(c: &'a [Candidate], name: &str) -> &'a Candidate {
    c.iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no candidate `{name}` in {:?}", names(c)))
}

fn values(c: &Candidate) -> Vec<f64> {
    c.points.iter().map(|p| p.value).collect()
}

fn steps(c: &Candidate) -> Vec<Option<f64>> {
    c.points.iter().map(|p| p.step).collect()
}

#[test]
fn every_pattern_compiles() {
    let _ = &*PATTERNS;
}

#[test]
fn name_equals_value_with_epoch_steps() {
    let log = "epoch 1/30 train_loss=1.7512 test_acc=0.8311\r\n\
               epoch 2/30 train_loss=0.7975 test_acc=0.8911\r\n\
               epoch 3/30 train_loss=0.4058 test_acc=0.9244\r\n\
               final test_acc=0.9244\r\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["train_loss", "test_acc"]);
    let acc = get(&c, "test_acc");
    assert_eq!(acc.style, Style::KeyEquals);
    assert_eq!(values(acc), [0.8311, 0.8911, 0.9244, 0.9244]);
    assert_eq!(steps(acc), [Some(1.0), Some(2.0), Some(3.0), None]);
    // The short form, as a task author would write it.
    assert_eq!(
        acc.spec.regex.as_deref(),
        Some(r"(?:\bepoch (?P<step>\d+).*?)?\btest_acc\s*=\s*(?P<value>[-+0-9.eE]+)")
    );
    // Every train_loss line has the step: it is not optional there.
    assert_eq!(
        get(&c, "train_loss").spec.regex.as_deref(),
        Some(r"\bepoch (?P<step>\d+).*?\btrain_loss\s*=\s*(?P<value>[-+0-9.eE]+)")
    );
    assert_eq!(
        steps(get(&c, "train_loss")),
        [Some(1.0), Some(2.0), Some(3.0)]
    );
}

#[test]
fn a_one_element_array_in_brackets_is_its_value_and_a_return_is_an_evaluation() {
    // CleanRL's `print(f"global_step={global_step}, episodic_return={info['episode']['r']}")`,
    // the return a NumPy array of one element; its SPS line beside it.
    let log = "global_step=10, episodic_return=[9.]\n\
               global_step=31, episodic_return=[21.]\n\
               SPS: 410\n\
               global_step=52, episodic_return=[ -3.5 ]\n\
               global_step=60, episodic_return=[1. 2.]\n";
    let c = candidates(log);
    let ret = get(&c, "episodic_return");
    assert_eq!(ret.style, Style::KeyEquals);
    // The array of two elements is no value of it.
    assert_eq!(values(ret), [9.0, 21.0, -3.5]);
    assert_eq!(steps(ret), [Some(10.0), Some(31.0), Some(52.0)]);
    assert_eq!(
        ret.spec.regex.as_deref(),
        Some(
            r"\bglobal_step=(?P<step>\d+).*?\bepisodic_return\s*=\s*\[\s*(?P<value>[-+0-9.eE]+)\s*\]"
        )
    );
    assert!(looks_like_evaluation(&ret.name, &ret.example));
    assert!(!looks_like_evaluation("sps", "SPS: 410"));
}

#[test]
fn json_lines_with_a_step_key() {
    let log = "{\"step\": 1, \"loss\": 17.019358}\n\
               {\"step\": 2, \"loss\": 9.5, \"lr\": 0.05}\n\
               {\"eval_mse\": 0.010148, \"step\": 2}\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss", "eval_mse"]);
    let loss = get(&c, "loss");
    assert_eq!(loss.style, Style::JsonLines);
    assert_eq!(loss.spec.json_key.as_deref(), Some("loss"));
    assert_eq!(loss.spec.step_key.as_deref(), Some("step"));
    assert_eq!(values(loss), [17.019358, 9.5]);
    assert_eq!(values(get(&c, "eval_mse")), [0.010148]);
}

#[test]
fn name_colon_value_fractions_and_percentages() {
    // The PyTorch MNIST example.
    let log = "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305954\n\
               Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.359776\n\
               \n\
               Test set: Average loss: 0.0484, Accuracy: 9840/10000 (98%)\n\
               \n\
               Train Epoch: 2 [0/60000 (0%)]\tLoss: 0.120345\n\
               \n\
               Test set: Average loss: 0.0351, Accuracy: 9881/10000 (99%)\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss", "average_loss", "accuracy"]);
    assert_eq!(steps(get(&c, "loss")), [Some(1.0), Some(1.0), Some(2.0)]);
    let acc = get(&c, "accuracy");
    assert!(acc.percent);
    assert_eq!(values(acc), [98.0, 99.0]);
    assert_eq!(values(get(&c, "average_loss")), [0.0484, 0.0351]);
    assert!(looks_like_evaluation("accuracy", &acc.example));
    assert!(looks_like_evaluation(
        "average_loss",
        &get(&c, "average_loss").example
    ));
    assert!(!looks_like_evaluation("loss", &get(&c, "loss").example));
}

#[test]
fn chinese_labels_become_english_names() {
    // 2L0R2C1/wine's bp_train.py: a full-width colon after the epoch count, ASCII after the
    // loss and the accuracy, the accuracy a percentage.
    let log = "cpu\n\
               训练次数： 0    训练损失:  1.0348559617996216     精确度:  55.55555555555556 %\n\
               训练次数： 5    训练损失:  0.769061267375946     精确度:  77.77777777777779 %\n\
               训练时间： 10.768819570541382\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["train_loss", "accuracy"]);
    assert_eq!(
        values(get(&c, "train_loss")),
        [1.0348559617996216, 0.769061267375946]
    );
    let acc = get(&c, "accuracy");
    assert!(acc.percent);
    assert_eq!(values(acc), [55.55555555555556, 77.77777777777779]);
}

#[test]
fn name_space_value_and_percent_signs() {
    let log = "epoch 1 | loss 0.812 | accuracy 71.2 % | time 3.1s\n\
               epoch 2 | loss 0.501 | accuracy 80.5 % | time 3.0s\n\
               Final test accuracy 82.3 %\n\
               The model reached accuracy 0.823 after 2 epochs\n";
    let c = candidates(log);
    assert_eq!(
        names(&c),
        ["loss", "accuracy", "final_test_accuracy", "accuracy_2"]
    );
    assert_eq!(steps(get(&c, "accuracy")), [Some(1.0), Some(2.0)]);
    assert_eq!(values(get(&c, "final_test_accuracy")), [82.3]);
    assert!(get(&c, "final_test_accuracy").percent);
    assert_eq!(values(get(&c, "accuracy_2")), [0.823]);
    assert_eq!(get(&c, "loss").style, Style::NameValue);
}

#[test]
fn tqdm_progress_bar_postfix_rewritten_with_carriage_returns() {
    let log = "Epoch 1:  50%|█████     | 5/10 [00:00<00:00, 50.00it/s, loss=0.900]\
               \rEpoch 1: 100%|██████████| 10/10 [00:00<00:00, 50.00it/s, loss=0.800]\n\
               Epoch 2:  50%|█████     | 5/10 [00:00<00:00, 49.10it/s, loss=0.600]\
               \rEpoch 2: 100%|██████████| 10/10 [00:00<00:00, 49.80it/s, loss=0.500]\n\
               val_acc=0.91\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss", "val_acc"]);
    let loss = get(&c, "loss");
    assert_eq!(values(loss), [0.9, 0.8, 0.6, 0.5]);
    assert_eq!(steps(loss), [Some(1.0), Some(1.0), Some(2.0), Some(2.0)]);
    // The bar's own percentage is not a metric.
    assert!(c.iter().all(|c| !c.percent));
}

#[test]
fn a_padded_step_number_in_a_carriage_return_bar_is_one_metric() {
    // `epoch {e:2d}` prints `epoch  3` for one-digit epochs and `epoch 12` after: the step
    // regex must take both, or the proposal misses every line printed the other way.
    let mut log = String::new();
    for epoch in 1..=12 {
        for i in 1..=4 {
            log.push_str(&format!(
                "\repoch {epoch:2} |{:.<4}| {i:2}/4 loss=0.{epoch:02}{i}",
                "#".repeat(i)
            ));
        }
        log.push('\n');
    }
    let c = candidates(&log);
    let loss = get(&c, "loss");
    assert_eq!(loss.points.len(), 48);
    assert_eq!(loss.points[47].step, Some(12.0));
    assert_eq!(
        loss.spec.regex.as_deref(),
        Some(r"\bepoch[ \t]+(?P<step>\d+).*?\bloss\s*=\s*(?P<value>[-+0-9.eE]+)")
    );
}

#[test]
fn rich_progress_bar_with_colours() {
    let frame = |epoch: u32, loss: &str, acc: &str| {
        format!(
            "\x1b[37mEpoch {epoch}/2 \x1b[0m \x1b[38;5;237m━━━━━━━━━━━━━━━━━━━━\x1b[0m 32/32 \
             \x1b[37m0:00:01 • 0:00:00\x1b[0m \x1b[37m27.81it/s\x1b[0m \
             \x1b[37mv_num: 0.000 train_loss: {loss} val_acc: {acc}\x1b[0m"
        )
    };
    let log = format!(
        "\r{}\r{}\r\n",
        frame(0, "0.612", "0.800"),
        frame(1, "0.412", "0.870")
    );
    let c = candidates(&log);
    assert_eq!(names(&c), ["train_loss", "val_acc"]);
    assert_eq!(values(get(&c, "val_acc")), [0.8, 0.87]);
    assert_eq!(steps(get(&c, "val_acc")), [Some(0.0), Some(1.0)]);
    assert!(looks_like_evaluation("val_acc", ""));
    assert!(!looks_like_evaluation("train_loss", ""));
}

#[test]
fn pytorch_lightning_progress_bar_and_test_table() {
    let log = "Epoch 0: 100%|██████████| 32/32 [00:01<00:00, 20.50it/s, v_num=0, val_loss=0.412, val_acc=0.875, train_loss=0.501]\n\
               Epoch 1: 100%|██████████| 32/32 [00:01<00:00, 21.00it/s, v_num=0, val_loss=0.300, val_acc=0.910, train_loss=0.350]\n\
               `Trainer.fit` stopped: `max_epochs=2` reached.\n\
               Testing DataLoader 0: 100%|██████████| 8/8 [00:00<00:00, 80.00it/s]\n\
               ┏━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━┓\n\
               ┃        Test metric        ┃       DataLoader 0        ┃\n\
               ┡━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━┩\n\
               │         test_acc          │    0.9781000018119812     │\n\
               │         test_loss         │    0.07311725616455078    │\n\
               └───────────────────────────┴───────────────────────────┘\n";
    let c = candidates(log);
    assert_eq!(
        names(&c),
        ["val_loss", "val_acc", "train_loss", "test_acc", "test_loss"]
    );
    assert_eq!(steps(get(&c, "val_acc")), [Some(0.0), Some(1.0)]);
    let acc = get(&c, "test_acc");
    assert_eq!(acc.style, Style::TableRow);
    assert_eq!(values(acc), [0.9781000018119812]);
    assert_eq!(values(get(&c, "test_loss")), [0.07311725616455078]);
}

#[test]
fn lightning_plain_results_table() {
    let log = "────────────────────────────────────────────────────────\n\
               \x20      Test metric             DataLoader 0\n\
               ────────────────────────────────────────────────────────\n\
               \x20       test_acc            0.9781000018119812\n\
               \x20       test_loss           0.07311725616455078\n\
               ────────────────────────────────────────────────────────\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["test_acc", "test_loss"]);
    assert_eq!(get(&c, "test_acc").style, Style::NameValue);
}

#[test]
fn hugging_face_trainer_dicts_and_metric_tables() {
    let log = "  5%|▌         | 10/200 [00:01<00:19,  9.80it/s]\r\
               {'loss': 0.6931, 'grad_norm': 2.345, 'learning_rate': 4.5e-05, 'epoch': 0.5}\n\
               {'eval_loss': 0.5123, 'eval_accuracy': 0.81, 'eval_runtime': 1.234, 'eval_samples_per_second': 810.2, 'eval_steps_per_second': 101.3, 'epoch': 1.0}\n\
               {'loss': 0.4, 'grad_norm': 1.9, 'learning_rate': 4e-05, 'epoch': 1.5}\n\
               {'eval_loss': 0.41, 'eval_accuracy': 0.86, 'eval_runtime': 1.2, 'eval_samples_per_second': 833.1, 'eval_steps_per_second': 104.2, 'epoch': 2.0}\n\
               {'train_runtime': 30.5, 'train_samples_per_second': 98.0, 'train_steps_per_second': 12.3, 'train_loss': 0.52, 'epoch': 2.0}\n\
               ***** eval metrics *****\n\
               \x20 epoch                   =        2.0\n\
               \x20 eval_accuracy           =       0.86\n\
               \x20 eval_loss               =       0.41\n";
    let c = candidates(log);
    assert_eq!(
        names(&c),
        [
            "loss",
            "eval_loss",
            "eval_accuracy",
            "train_loss",
            "eval_accuracy_2",
            "eval_loss_2"
        ]
    );
    let acc = get(&c, "eval_accuracy");
    assert_eq!(acc.style, Style::PythonDict);
    assert_eq!(values(acc), [0.81, 0.86]);
    assert_eq!(steps(acc), [Some(1.0), Some(2.0)]);
    assert_eq!(steps(get(&c, "loss")), [Some(0.5), Some(1.5)]);
    assert_eq!(values(get(&c, "eval_accuracy_2")), [0.86]);
    assert_eq!(get(&c, "eval_accuracy_2").style, Style::KeyEquals);
}

#[test]
fn settings_counters_and_timings_are_not_metrics() {
    let log = "Namespace(lr=0.1, epochs=30, batch_size=64, momentum=0.9)\n\
               step=100 lr=0.001 batch_size=32 num_workers=4 took 12.3s\n\
               step=100 loss=0.25 elapsed: 12:30 samples/s=812.5\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss"]);
    assert_eq!(steps(get(&c, "loss")), [Some(100.0)]);
}

#[test]
fn the_strict_form_is_used_when_the_short_one_matches_too_much() {
    let log = "loss=0.5 train/loss=0.7\nloss=0.4 train/loss=0.6 time=12s\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss", "train_loss"]);
    let loss = get(&c, "loss");
    assert_eq!(values(loss), [0.5, 0.4]);
    assert!(
        loss.spec
            .regex
            .as_deref()
            .unwrap()
            .starts_with(r"(?:^|[^\w./-])loss")
    );
    assert_eq!(
        get(&c, "train_loss").spec.regex.as_deref(),
        Some(r"\btrain/loss\s*=\s*(?P<value>[-+0-9.eE]+)")
    );
}

#[test]
fn a_proposal_that_matches_other_lines_is_rejected() {
    let lines = vec!["acc=0.5".to_string()];
    let mut c = detect(&lines);
    c[0].spec.regex = Some(r"(?P<value>[0-9.]+)".to_string());
    c[0].fallback = None;
    let (kept, rejected) = verify(c, "acc=0.5\nother 0.7\n");
    assert!(kept.is_empty());
    assert_eq!(rejected[0].name, "acc");
    assert!(rejected[0].reason.contains("2 value(s)"), "{rejected:?}");
}

#[test]
fn names_are_sanitized_and_directions_follow_them() {
    use crate::init::direction_for;
    use crate::task::Direction;
    assert_eq!(sanitize("Test accuracy"), "test_accuracy");
    assert_eq!(sanitize("eval/BLEU-4"), "eval_bleu_4");
    assert_eq!(sanitize("训练损失"), "train_loss");
    assert_eq!(sanitize("测试集精确度"), "test_accuracy");
    assert_eq!(sanitize("次数"), "");
    for (name, dir) in [
        ("test_acc", Direction::Higher),
        ("eval_accuracy", Direction::Higher),
        ("val_f1", Direction::Higher),
        ("acc1", Direction::Higher),
        ("bleu", Direction::Higher),
        ("roc_auc", Direction::Higher),
        ("eval_mse", Direction::Lower),
        ("train_loss", Direction::Lower),
        ("top1_error", Direction::Lower),
        ("perplexity", Direction::Lower),
        ("fid", Direction::Lower),
        ("confidence", Direction::Within),
        ("reward", Direction::Higher),
        ("episodic_return", Direction::Higher),
        ("charts_episodic_return", Direction::Higher),
        ("episodic_length", Direction::Within),
    ] {
        assert_eq!(direction_for(name), dir, "{name}");
    }
}

#[test]
fn printed_formulas_tables_and_thousands_are_not_metrics() {
    // PyTorch's polynomial regression example: one result line and two printed formulas.
    let log = "Loss: 0.000897 after 231 batches\n\
               ==> Learned function:\ty = +11.74 x^1 -3.27 x^2 +1.75 x^3 +2.64 x^4 +1.37\n\
               ==> Actual function:\ty = +11.83 x^1 -3.27 x^2 +1.86 x^3 +2.61 x^4 +1.40\n\
               fit = 2.0 * x + 0.5\n\
               loss 0.51 0.42 0.37 0.33\n\
               tokens per iteration will be: 16,384\n\
               num decayed parameter tensors: 18, with 802,816 parameters\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss"]);
    assert_eq!(values(get(&c, "loss")), [0.000897]);
    assert_eq!(get(&c, "loss").style, Style::KeyColon);
    // A dash between Keras-style results is a separator, not a minus.
    let c = candidates("32/32 - 1s - loss: 0.2942 - accuracy: 0.9167 - val_loss: 0.31\n");
    assert_eq!(names(&c), ["loss", "accuracy", "val_loss"]);
}

#[test]
fn nanogpt_output_offers_its_losses_not_its_settings() {
    // What nanoGPT's train.py prints with the README's CPU command: the config file echoed,
    // one `Overriding:` line per flag, then evaluations (`step N: …`) and iterations.
    let config = include_str!(
        "../../../../../tasks/nanogpt-shakespeare-char/repo/config/train_shakespeare_char.py"
    );
    let mut log = format!("Overriding config with config/train_shakespeare_char.py:\n{config}\n");
    for (k, v) in [
        ("device", "cpu"),
        ("compile", "False"),
        ("eval_iters", "20"),
        ("log_interval", "1"),
        ("block_size", "64"),
        ("batch_size", "12"),
        ("n_layer", "4"),
        ("max_iters", "2000"),
        ("lr_decay_iters", "2000"),
        ("dropout", "0.0"),
    ] {
        log.push_str(&format!("Overriding: {k} = {v}\n"));
    }
    log.push_str(
        "tokens per iteration will be: 768\n\
         found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)\n\
         Initializing a new model from scratch\n\
         number of parameters: 0.80M\n\
         num decayed parameter tensors: 18, with 802,816 parameters\n\
         num non-decayed parameter tensors: 9, with 1,152 parameters\n\
         using fused AdamW: False\n\
         step 0: train loss 4.1676, val loss 4.1649\n\
         iter 0: loss 4.1828, time 405.31ms, mfu -100.00%\n\
         iter 1: loss 4.1201, time 32.41ms, mfu -100.00%\n\
         step 2000: train loss 1.7648, val loss 1.8857\n\
         saving checkpoint to out-shakespeare-char\n\
         iter 2000: loss 1.7502, time 35.10ms, mfu 0.04%\n",
    );
    let c = candidates(&log);
    assert_eq!(names(&c), ["train_loss", "val_loss", "loss"]);
    assert_eq!(values(get(&c, "val_loss")), [4.1649, 1.8857]);
    assert_eq!(steps(get(&c, "val_loss")), [Some(0.0), Some(2000.0)]);
    let evaluations: Vec<&str> = c
        .iter()
        .filter(|c| looks_like_evaluation(&c.name, &c.example))
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(evaluations, ["val_loss"]);
}

#[test]
fn a_split_named_alone_is_that_splits_result() {
    // makemore part 5's evaluation cell: `print(split, loss.item())`.
    let log = "      0/ 200000: 3.3167\n  10000/ 200000: 2.0576\ntrain 1.7690284252166748\nval 1.9936515092849731\n76579\nepoch 3\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["train", "val"]);
    assert_eq!(values(get(&c, "val")), [1.9936515092849731]);
    assert!(looks_like_evaluation("val", "val 1.9936515092849731"));
    assert!(!looks_like_evaluation("train", "train 1.7690284252166748"));
}

#[test]
fn a_count_with_its_percentage_is_the_percentage() {
    // minGPT's demo notebook: `print("%s final score: %d/%d = %.2f%% correct" % ...)`.
    let log = "iter_dt 31.52ms; iter 0: train loss 1.10385\n\
               iter_dt 30.02ms; iter 100: train loss 0.15020\n\
               train final score: 5000/5000 = 100.00% correct\n\
               test final score: 4998/5000 = 99.96% correct\n";
    let c = candidates(log);
    assert_eq!(
        names(&c),
        ["train_loss", "train_final_score", "test_final_score"]
    );
    let test = get(&c, "test_final_score");
    assert!(test.percent);
    assert_eq!(values(test), [99.96]);
    assert_eq!(test.style, Style::KeyColon);
    assert!(looks_like_evaluation("test_final_score", &test.example));
    assert!(!looks_like_evaluation(
        "train_final_score",
        &get(&c, "train_final_score").example
    ));
}

#[test]
fn terse_and_capitalised_names_are_read() {
    let log = "Epoch 1 Loss: 0.512\nTest acc.:85.5\nTest Accuracy: 0.8100\n";
    let c = candidates(log);
    assert_eq!(names(&c), ["loss", "test_acc", "test_accuracy"]);
    assert_eq!(values(get(&c, "test_acc")), [85.5]);
    assert_eq!(get(&c, "test_acc").key, "Test acc.");
    assert_eq!(values(get(&c, "test_accuracy")), [0.81]);
}

#[test]
fn dicts_after_words_and_with_numpy_or_tensor_values() {
    let log = "epoch 1 {'train_loss': 0.52, 'epoch': 1}\n\
               final metrics: {'test_acc': np.float64(0.91), 'test_loss': tensor(0.3120)}\n\
               summary {\"val_acc\": 0.88}\n";
    let c = candidates(log);
    assert_eq!(
        names(&c),
        ["train_loss", "test_acc", "test_loss", "val_acc"]
    );
    assert_eq!(values(get(&c, "test_acc")), [0.91]);
    assert_eq!(values(get(&c, "test_loss")), [0.312]);
    assert_eq!(values(get(&c, "val_acc")), [0.88]);
    assert_eq!(steps(get(&c, "train_loss")), [Some(1.0)]);
    assert_eq!(get(&c, "test_acc").style, Style::PythonDict);
}

#[test]
fn a_pipe_table_names_each_value_by_its_row_and_column() {
    let log = "step 10 | loss 0.9\n\
               | split | loss | acc |\n\
               |-------|------|-----|\n\
               | train | 0.12 | 98.1 % |\n\
               | test  | 0.31 | 91.0 % |\n";
    let c = candidates(log);
    assert_eq!(
        names(&c),
        ["loss", "train_loss", "train_acc", "test_loss", "test_acc"]
    );
    let acc = get(&c, "test_acc");
    assert_eq!(values(acc), [91.0]);
    assert!(acc.percent);
    assert_eq!(acc.style, Style::TableRow);
    assert_eq!(values(get(&c, "test_loss")), [0.31]);
    assert!(looks_like_evaluation("test_acc", &acc.example));
}
