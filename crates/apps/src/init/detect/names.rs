//! The words of metric names: which printed names are metrics, which are counters, timings
//! or hyper-parameters, which read as an evaluation result, and a name's sanitized form.

/// Words that make a `Name value` pair a metric (a token equal to one, or one followed by
/// digits such as `acc1`).
pub(super) const METRIC_WORDS: &[&str] = &[
    "acc",
    "accuracy",
    "loss",
    "f1",
    "bleu",
    "auc",
    "mse",
    "mae",
    "rmse",
    "error",
    "err",
    "perplexity",
    "ppl",
    "fid",
    "precision",
    "recall",
    "score",
    "iou",
    "miou",
    "map",
    "psnr",
    "ssim",
    "wer",
    "cer",
    "rouge",
    "nll",
    "elbo",
    "kl",
    "bpd",
    "reward",
    "return",
    "top1",
    "top5",
];
/// Words that may stand before a metric word in a multi-word name (`Test accuracy`).
pub(super) const QUALIFIERS: &[&str] = &[
    "test",
    "train",
    "training",
    "val",
    "valid",
    "validation",
    "eval",
    "evaluation",
    "dev",
    "final",
    "best",
    "average",
    "avg",
    "mean",
    "macro",
    "micro",
    "weighted",
    "top",
    "top-1",
    "top-5",
];
/// Names that are counters, timings or hyper-parameters, never metrics.
pub(super) const NOT_METRICS: &[&str] = &[
    "epoch",
    "epochs",
    "step",
    "steps",
    "iter",
    "iters",
    "iteration",
    "global_step",
    "v_num",
    "lr",
    "learning_rate",
    "grad_norm",
    "total_flos",
    "seed",
    "batch",
    "batch_idx",
    "time",
    "eta",
    "elapsed",
    "momentum",
    "weight_decay",
    "wd",
    "dropout",
    "gamma",
    "eps",
    "epsilon",
    "beta1",
    "beta2",
    "workers",
    "warmup",
    "patience",
    "hidden",
    "layers",
    "heads",
    "it",
    "s",
];
/// Name endings of counters and timings.
pub(super) const NOT_METRIC_SUFFIXES: &[&str] = &[
    "_runtime",
    "_per_second",
    "_time",
    "_seconds",
    "_secs",
    "_lr",
    "_size",
    "_steps",
    "_epochs",
    "_iters",
    "_iterations",
    "_interval",
    "_every",
    "_freq",
    "_s",
    "_sec",
    "_per_sec",
    "_ms",
];
/// Things counted: a name without a metric word that has one of these tokens is a counter.
pub(super) const COUNTED: &[&str] = &[
    "iteration",
    "iterations",
    "tokens",
    "parameters",
    "params",
    "tensors",
    "samples",
    "examples",
    "batches",
    "workers",
];
/// Name beginnings of counters.
pub(super) const NOT_METRIC_PREFIXES: &[&str] = &["num_", "n_", "max_"];

/// Chinese words of printed metric names and the English token each becomes in a metric's
/// name (`训练损失` → `train_loss`, `精确度` → `accuracy`); other Chinese characters separate.
pub(super) const CHINESE_WORDS: &[(&str, &str)] = &[
    ("训练", "train"),
    ("测试", "test"),
    ("验证", "val"),
    ("损失", "loss"),
    ("误差", "error"),
    ("准确率", "accuracy"),
    ("准确度", "accuracy"),
    ("正确率", "accuracy"),
    ("精确度", "accuracy"),
    ("精度", "accuracy"),
];

/// Lowercase `[a-z0-9_]` form of a printed name, the Chinese words of [`CHINESE_WORDS`]
/// translated.
pub fn sanitize(key: &str) -> String {
    let mut out = String::new();
    let mut rest = key;
    while let Some(ch) = rest.chars().next() {
        if let Some((word, english)) = CHINESE_WORDS.iter().find(|(w, _)| rest.starts_with(w)) {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push_str(english);
            out.push('_');
            rest = &rest[word.len()..];
            continue;
        }
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
        rest = &rest[ch.len_utf8()..];
    }
    out.trim_matches('_').to_string()
}

/// The tokens of a sanitized name.
pub(super) fn tokens(name: &str) -> impl Iterator<Item = &str> {
    name.split('_').filter(|t| !t.is_empty())
}

/// Whether a token is `word` or `word` followed by digits (`acc1`).
pub(super) fn token_is(token: &str, word: &str) -> bool {
    token
        .strip_prefix(word)
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
}

pub(super) fn has_metric_word(name: &str) -> bool {
    tokens(name).any(|t| METRIC_WORDS.iter().any(|w| token_is(t, w)))
}

/// Whether a name is a counter, timing or hyper-parameter rather than a metric; a name
/// without a metric word that counts something (`tokens per iteration`, `decayed parameter
/// tensors`) is a counter.
pub fn is_noise(name: &str) -> bool {
    name.is_empty()
        || NOT_METRICS.contains(&name)
        || NOT_METRIC_SUFFIXES.iter().any(|s| name.ends_with(s))
        || NOT_METRIC_PREFIXES.iter().any(|p| name.starts_with(p))
        || (!has_metric_word(name) && tokens(name).any(|t| COUNTED.contains(&t)))
}

/// Whether a metric looks like an evaluation result: its name has a test/eval/validation
/// token, or it is a quality metric (accuracy, F1, …) that is not a training one, or it was
/// printed on a line that starts with a test/eval/validation word.
pub fn looks_like_evaluation(name: &str, example: &str) -> bool {
    const EVAL: &[&str] = &[
        "test",
        "eval",
        "evaluation",
        "val",
        "valid",
        "validation",
        "dev",
    ];
    if tokens(name).any(|t| EVAL.contains(&t)) {
        return true;
    }
    let training = tokens(name).any(|t| t == "train" || t == "training");
    if !training && crate::init::direction_for(name) == crate::task::Direction::Higher {
        return true;
    }
    let first = sanitize(example.split_whitespace().next().unwrap_or(""));
    !training && tokens(&first).next().is_some_and(|t| EVAL.contains(&t))
}
