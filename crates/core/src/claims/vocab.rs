//! The words the finder and the matcher classify: what a metric is called (its measure and
//! its data split), what a number that is not a result is labelled with or measured in
//! (software, hyper-parameters, references, dates), and the filler and stop words a label is
//! read through.

/// The data split a metric is computed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// The training data.
    Train,
    /// Validation (dev, eval) data.
    Val,
    /// Held-out test data.
    Test,
}

impl Split {
    /// The split's usual short name.
    pub fn name(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Val => "val",
            Split::Test => "test",
        }
    }
}

/// What kind of thing a non-result number is, read from the word that labels it or the word
/// (or suffix) it is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonResult {
    /// A software version (`PyTorch 2.0`, `v1.2`, `>=1.0.0`).
    Version,
    /// A date or a year.
    Date,
    /// A duration (`0.13s`, `3 minutes`, `4 days`) or a cost column (`Training Time`).
    Duration,
    /// A size of data (`1MB`, `256 characters`, `32K names`).
    Size,
    /// A count of model parts or parameters (`124M`, `76K params`, `6 heads`).
    Count,
    /// A hyper-parameter or configuration value (`lr 3e-4`, `batch size 32`, `n_layer 4`).
    HyperParameter,
    /// A step, iteration or epoch count (`5000 iterations`).
    Steps,
    /// A count of machines or devices (`8 GPUs`).
    Hardware,
    /// A factor (`2-3X`, `3 times`).
    Factor,
    /// A reference to an issue, figure, page or section (`#23`, `Issue 28`).
    Reference,
    /// An ordinal (`36th`).
    Ordinal,
}

/// The class of a word met while reading a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordClass {
    /// Names a measure (`loss`, `accuracy`); the canonical measure name.
    Measure(&'static str),
    /// Names a data split.
    Split(Split),
    /// A generic result word (`score`, `rate`) that names a metric only together with a
    /// measure word (`F1 score`, `error rate`).
    Score,
    /// Labels a number that is not a result.
    NonResult(NonResult),
    /// Read through (articles, verbs like `gets`, `is`).
    Filler,
    /// Ends a label (`and`, `but`, `than`).
    Stop,
    /// Any other word (a model or dataset name, a plain noun).
    Neutral,
}

/// The canonical measure a word names, if any.
pub fn measure_of(word: &str) -> Option<&'static str> {
    let m = match word {
        "loss" | "losses" | "nll" | "logprob" | "logprobs" | "log-prob" | "log-probs"
        | "log-likelihood" | "loglik" | "likelihood" | "cross-entropy" | "crossentropy"
        | "xent" | "logloss" => "loss",
        "acc" | "accuracy" | "accuracies" | "top-1" | "top1" | "top-5" | "top5" | "correct" => {
            "accuracy"
        }
        "f1" | "f1-score" | "f-score" | "fscore" | "micro-f1" | "macro-f1" | "f1score" => "f1",
        "perplexity" | "ppl" => "perplexity",
        "error" | "errors" | "err" => "error",
        "wer" => "wer",
        "cer" => "cer",
        "auc" | "auroc" | "roc-auc" => "auc",
        "bleu" => "bleu",
        "rouge" | "rouge-l" | "rouge-1" | "rouge-2" => "rouge",
        "precision" => "precision",
        "recall" => "recall",
        "mse" => "mse",
        "mae" => "mae",
        "rmse" => "rmse",
        "psnr" => "psnr",
        "ssim" => "ssim",
        "fid" => "fid",
        "iou" | "miou" => "iou",
        "bpc" | "bpb" => "bpc",
        "mrr" => "mrr",
        "ndcg" => "ndcg",
        "reward" | "rewards" => "reward",
        _ => return None,
    };
    Some(m)
}

/// The split a word names, if any.
pub fn split_of(word: &str) -> Option<Split> {
    match word {
        "train" | "training" | "trn" => Some(Split::Train),
        "val" | "valid" | "validation" | "dev" | "eval" | "evaluation" => Some(Split::Val),
        "test" | "testing" | "heldout" | "held-out" => Some(Split::Test),
        _ => None,
    }
}

/// Whether a lowercased word is a month's name (`may` is left out: it is mostly a verb).
pub fn is_month(word: &str) -> bool {
    matches!(
        word,
        "jan"
            | "january"
            | "feb"
            | "february"
            | "mar"
            | "march"
            | "apr"
            | "april"
            | "jun"
            | "june"
            | "jul"
            | "july"
            | "aug"
            | "august"
            | "sep"
            | "sept"
            | "september"
            | "oct"
            | "october"
            | "nov"
            | "november"
            | "dec"
            | "december"
    )
}

fn non_result_label(word: &str) -> Option<NonResult> {
    use NonResult::*;
    let class = match word {
        "v" | "version" | "versions" | "python" | "python3" | "pytorch" | "torch" | "cuda"
        | "cudnn" | "jax" | "jaxlib" | "flax" | "optax" | "tensorflow" | "tf" | "numpy"
        | "scipy" | "sklearn" | "scikit-learn" | "transformers" | "pip" | "gcc" | "ubuntu"
        | "nccl" | "release" | "driver" | "conda" | "keras" | "triton" | "macos" | "windows"
        | "rust" | "java" | "cmake" | "clang" => Version,
        "year" | "years" | "date" | "day" | "month" | "dated" => Date,
        "time" | "times" | "runtime" | "latency" | "speed" | "throughput" | "duration"
        | "memory" | "mem" | "flops" | "cost" | "price" | "walltime" | "wall-clock" => Duration,
        "lr" | "learning" | "dropout" | "decay" | "momentum" | "beta" | "beta1" | "beta2"
        | "betas" | "eps" | "epsilon" | "seed" | "seeds" | "temperature" | "temp" | "warmup"
        | "clip" | "clipping" | "batch" | "bs" | "size" | "dim" | "dims" | "dimension"
        | "hidden" | "embd" | "embedding" | "embeddings" | "width" | "depth" | "block"
        | "context" | "window" | "stride" | "kernel" | "patience" | "lambda" | "alpha"
        | "gamma" | "tau" | "weight" | "num" | "number" | "max" | "interval" | "freq"
        | "frequency" | "vocab" | "vocabulary" | "k" | "n" | "topk" | "top_k" | "top_p"
        | "topp" | "nucleus" | "threshold" | "hyperparameter" | "hyperparameters" => HyperParameter,
        "layer" | "layers" | "head" | "heads" | "param" | "params" | "parameter" | "parameters"
        | "channels" | "neurons" | "units" | "tokens" | "samples" => Count,
        "step" | "steps" | "iter" | "iters" | "iteration" | "iterations" | "epoch" | "epochs"
        | "updates" | "rounds" => Steps,
        "gpu" | "gpus" | "tpu" | "tpus" | "cpus" | "cores" | "nodes" | "workers" | "rank"
        | "port" | "nproc" => Hardware,
        "issue" | "issues" | "pr" | "figure" | "fig" | "table" | "tab" | "section" | "chapter"
        | "eq" | "equation" | "page" | "pages" | "pp" | "appendix" | "part" | "lecture"
        | "video" | "episode" | "arxiv" | "doi" | "id" | "no" | "line" | "lines" | "volume"
        | "vol" => Reference,
        _ => return None,
    };
    Some(class)
}

/// Words that stand between a label and its number without changing what it labels
/// (articles, verbs of reaching and reporting, pronouns, hedges).
const FILLER_WORDS: &[&str] = &[
    "between",
    "a",
    "an",
    "the",
    "of",
    "is",
    "was",
    "were",
    "are",
    "be",
    "been",
    "being",
    "gets",
    "get",
    "got",
    "getting",
    "reaches",
    "reach",
    "reached",
    "reaching",
    "achieves",
    "achieve",
    "achieved",
    "achieving",
    "obtains",
    "obtain",
    "obtained",
    "yields",
    "yield",
    "gives",
    "give",
    "gave",
    "seeing",
    "see",
    "saw",
    "sees",
    "shows",
    "show",
    "showed",
    "reports",
    "report",
    "reported",
    "has",
    "have",
    "had",
    "having",
    "with",
    "at",
    "to",
    "down",
    "up",
    "from",
    "only",
    "just",
    "best",
    "final",
    "lowest",
    "highest",
    "lower",
    "higher",
    "better",
    "worse",
    "current",
    "currently",
    "now",
    "still",
    "us",
    "we",
    "our",
    "it",
    "its",
    "you",
    "your",
    "i",
    "my",
    "they",
    "their",
    "this",
    "that",
    "these",
    "those",
    "then",
    "also",
    "which",
    "will",
    "would",
    "can",
    "could",
    "should",
    "might",
    "come",
    "comes",
    "came",
    "go",
    "goes",
    "went",
    "into",
    "on",
    "in",
    "for",
    "by",
    "as",
    "so",
    "there",
    "here",
    "very",
    "much",
    "even",
    "already",
    "overall",
    "average",
    "avg",
    "mean",
    "resulting",
    "around",
    "per",
    "each",
    "new",
    "like",
    "roughly",
    "about",
    "approximately",
    "approx",
    "nearly",
    "almost",
    "circa",
];

fn is_filler(word: &str) -> bool {
    FILLER_WORDS.contains(&word)
}

fn is_stop(word: &str) -> bool {
    matches!(
        word,
        "and"
            | "but"
            | "or"
            | "nor"
            | "while"
            | "whereas"
            | "though"
            | "although"
            | "however"
            | "than"
            | "vs"
            | "versus"
            | "because"
            | "since"
            | "where"
            | "when"
            | "if"
            | "unless"
            | "compared"
            | "instead"
            | "previously"
            | "not"
    )
}

/// Whether a word before a number marks it as approximate (`about 3.11`).
pub fn is_approx_word(word: &str) -> bool {
    matches!(
        word,
        "about" | "around" | "roughly" | "approximately" | "approx" | "circa" | "nearly"
    )
}

fn simple_class(word: &str) -> WordClass {
    if let Some(m) = measure_of(word) {
        return WordClass::Measure(m);
    }
    if let Some(s) = split_of(word) {
        return WordClass::Split(s);
    }
    if matches!(word, "score" | "scores" | "rate") {
        return WordClass::Score;
    }
    if let Some(n) = non_result_label(word) {
        return WordClass::NonResult(n);
    }
    if is_month(word) {
        return WordClass::NonResult(NonResult::Date);
    }
    if is_stop(word) {
        return WordClass::Stop;
    }
    if is_filler(word) {
        return WordClass::Filler;
    }
    WordClass::Neutral
}

/// The class of a lowercased label word. A compound (`val_loss`, `n_layer`, `f1-score`) is
/// split at `_`, `-` and `.`: all of its parts metric words make it a metric word, with
/// filler parts (`final_accuracy`, `best_val_loss`) left out; any part that labels a
/// non-result makes it that.
pub fn class_of(word: &str) -> WordClass {
    let word = word.trim_start_matches('-');
    let direct = simple_class(word);
    if direct != WordClass::Neutral || !word.contains(['_', '-', '.']) {
        return direct;
    }
    let parts: Vec<WordClass> = word
        .split(['_', '-', '.'])
        .filter(|p| !p.is_empty())
        .map(simple_class)
        .filter(|c| *c != WordClass::Filler)
        .collect();
    if parts.is_empty() {
        return WordClass::Neutral;
    }
    if let Some(WordClass::NonResult(n)) =
        parts.iter().find(|c| matches!(c, WordClass::NonResult(_)))
    {
        return WordClass::NonResult(*n);
    }
    let metric_part = |c: &WordClass| {
        matches!(
            c,
            WordClass::Measure(_) | WordClass::Split(_) | WordClass::Score
        )
    };
    if parts.iter().all(metric_part) {
        if let Some(m) = parts.iter().find_map(|c| match c {
            WordClass::Measure(m) => Some(*m),
            _ => None,
        }) {
            return WordClass::Measure(m);
        }
        if let Some(s) = parts.iter().find_map(|c| match c {
            WordClass::Split(s) => Some(*s),
            _ => None,
        }) {
            return WordClass::Split(s);
        }
        return WordClass::Score;
    }
    WordClass::Neutral
}

/// The measures and splits a word names, looking inside compounds (`val_loss` names the
/// split `val` and the measure `loss`).
pub fn concepts_of(word: &str) -> (Vec<&'static str>, Vec<Split>) {
    let mut measures = Vec::new();
    let mut splits = Vec::new();
    let word = word.trim_start_matches('-');
    let mut add = |w: &str| {
        if let Some(m) = measure_of(w) {
            if !measures.contains(&m) {
                measures.push(m);
            }
        } else if let Some(s) = split_of(w)
            && !splits.contains(&s)
        {
            splits.push(s);
        }
    };
    if measure_of(word).is_some() || split_of(word).is_some() {
        add(word);
    } else {
        for part in word.split(['_', '-', '.']).filter(|p| !p.is_empty()) {
            add(part);
        }
    }
    (measures, splits)
}

/// What a word written right after a number (or glued to it as a suffix) says the number
/// measures, when it is not a result's unit.
pub fn unit_word(word: &str) -> Option<NonResult> {
    use NonResult::*;
    let class = match word {
        "s" | "sec" | "secs" | "second" | "seconds" | "ms" | "msec" | "millisecond"
        | "milliseconds" | "us" | "µs" | "microseconds" | "ns" | "min" | "mins" | "minute"
        | "minutes" | "h" | "hr" | "hrs" | "hour" | "hours" | "d" | "day" | "days" | "week"
        | "weeks" | "month" | "months" | "year" | "years" | "yr" | "yrs" => Duration,
        "byte" | "bytes" | "kb" | "mb" | "gb" | "tb" | "kib" | "mib" | "gib" | "tib" | "token"
        | "tokens" | "character" | "characters" | "char" | "chars" | "word" | "words" | "line"
        | "lines" | "name" | "names" | "example" | "examples" | "sample" | "samples" | "image"
        | "images" | "sentence" | "sentences" | "document" | "documents" | "doc" | "docs"
        | "file" | "files" | "row" | "rows" | "pixel" | "pixels" | "px" | "instance"
        | "instances" | "pair" | "pairs" | "entries" | "records" | "items" => Size,
        "k" | "m" | "b" | "bn" | "t" | "mil" | "param" | "params" | "parameter" | "parameters"
        | "layer" | "layers" | "head" | "heads" | "channel" | "channels" | "neuron" | "neurons"
        | "unit" | "units" | "dim" | "dims" | "dimension" | "dimensions" | "feature"
        | "features" | "embedding" | "embeddings" | "class" | "classes" | "node" | "edges"
        | "edge" | "vertices" | "hidden" => Count,
        "step" | "steps" | "iteration" | "iterations" | "iter" | "iters" | "epoch" | "epochs"
        | "update" | "updates" | "batch" | "batches" | "round" | "rounds" | "run" | "runs"
        | "seed" | "seeds" | "trial" | "trials" | "shot" | "shots" | "fold" | "folds" => Steps,
        "gpu" | "gpus" | "tpu" | "tpus" | "cpu" | "cpus" | "core" | "cores" | "machine"
        | "machines" | "worker" | "workers" | "process" | "processes" | "thread" | "threads"
        | "a100" | "v100" | "h100" | "nodes" => Hardware,
        "x" | "times" | "faster" | "slower" | "speedup" => Factor,
        "st" | "nd" | "rd" | "th" => Ordinal,
        _ => return None,
    };
    Some(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compounds_split_into_their_parts() {
        assert_eq!(class_of("val_loss"), WordClass::Measure("loss"));
        assert_eq!(class_of("val"), WordClass::Split(Split::Val));
        assert_eq!(
            class_of("n_layer"),
            WordClass::NonResult(NonResult::HyperParameter)
        );
        assert_eq!(
            class_of("eval_iters"),
            WordClass::NonResult(NonResult::Steps)
        );
        assert_eq!(class_of("f1-score"), WordClass::Measure("f1"));
        assert_eq!(class_of("count-based"), WordClass::Neutral);
        assert_eq!(class_of("final_accuracy"), WordClass::Measure("accuracy"));
        assert_eq!(class_of("best_val_loss"), WordClass::Measure("loss"));
        assert_eq!(
            class_of("final_lr"),
            WordClass::NonResult(NonResult::HyperParameter)
        );
        assert_eq!(class_of("final_model"), WordClass::Neutral);
        assert_eq!(
            class_of("--lr"),
            WordClass::NonResult(NonResult::HyperParameter)
        );
    }

    #[test]
    fn concepts_of_a_metric_name() {
        assert_eq!(concepts_of("val_loss"), (vec!["loss"], vec![Split::Val]));
        assert_eq!(
            concepts_of("test_acc"),
            (vec!["accuracy"], vec![Split::Test])
        );
        assert_eq!(concepts_of("logprob"), (vec!["loss"], vec![]));
    }
}
