//! Command lines as the matcher compares them: each argument normalised to an item
//! (`--dataset cora` and `--dataset=cora` are `dataset=cora`, `--tuned` is `tuned`, a
//! positional stays itself), the launcher (`python`, `torchrun`, `$`, `VAR=1`) dropped.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::patterns;

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok()
}

fn is_launcher(s: &str) -> bool {
    let s = s.to_lowercase();
    s == "$"
        || s == "python"
        || s == "python3"
        || s == "python2"
        || s.starts_with("python3.")
        || s == "torchrun"
}

fn is_env_assignment(s: &str) -> bool {
    s.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

fn key(flag: &str) -> String {
    flag.trim_start_matches('-')
        .to_lowercase()
        .replace('-', "_")
}

/// A command line split into its arguments (shell quoting honoured where it parses).
pub fn split_command(line: &str) -> Vec<String> {
    shell_words::split(line)
        .unwrap_or_else(|_| line.split_whitespace().map(str::to_string).collect())
}

/// The arguments as items, lowercased.
pub fn items(args: &[String]) -> Vec<String> {
    let mut i = 0;
    while i < args.len() && (is_launcher(&args[i]) || is_env_assignment(&args[i])) {
        i += 1;
    }
    let mut out = Vec::new();
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a.len() > 1 && a.starts_with('-') && !is_number(a) {
            if let Some((k, v)) = a.split_once('=') {
                out.push(format!("{}={}", key(k), v.to_lowercase()));
            } else if let Some(next) = args.get(i).filter(|n| !n.starts_with('-') || is_number(n)) {
                out.push(format!("{}={}", key(a), next.to_lowercase()));
                i += 1;
            } else {
                out.push(key(a));
            }
        } else {
            out.push(a.to_lowercase());
        }
    }
    out
}

/// Shared items over all items (0 when both are empty).
pub fn jaccard(a: &[String], b: &[String]) -> f64 {
    let a: HashSet<&String> = a.iter().collect();
    let b: HashSet<&String> = b.iter().collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// The alphanumeric runs of the items (`config/eval_gpt2.py` gives `config`, `eval`,
/// `gpt2`, `py`).
pub fn tokens(items: &[String]) -> HashSet<String> {
    items
        .iter()
        .flat_map(|i| {
            i.split(|c: char| !c.is_alphanumeric())
                .filter(|t| !t.is_empty())
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The items' `key=value` options.
pub fn options(items: &[String]) -> Vec<(String, String)> {
    items
        .iter()
        .filter_map(|i| i.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

static FLAG_PAIR: LazyLock<Regex> =
    LazyLock::new(|| patterns::constant(r"--?([A-Za-z][\w-]*)=([^\s`'\x22,)]+)"));
static NAME_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    patterns::constant(
        r"\b([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*)\s*[=:]?\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b",
    )
});

/// Settings a line of text states (`--dropout=0.0`, `n_embd 24`), as `(key, value)`.
pub fn config_pairs(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for re in [&*FLAG_PAIR, &*NAME_NUMBER] {
        for c in re.captures_iter(text) {
            let (Some(k), Some(v)) = (c.get(1), c.get(2)) else {
                continue;
            };
            let k = key(k.as_str());
            if !out.iter().any(|(ok, _)| *ok == k) {
                out.push((k, v.as_str().to_lowercase()));
            }
        }
    }
    out
}

/// Two option values are the same (numerically when both are numbers).
pub fn same_value(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0),
        _ => a.eq_ignore_ascii_case(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        split_command(s)
    }

    #[test]
    fn items_normalise_flags() {
        assert_eq!(
            items(&v("python citation.py --dataset cora --tuned")),
            vec!["citation.py", "dataset=cora", "tuned"]
        );
        assert_eq!(
            items(&v(
                "CUDA_VISIBLE_DEVICES=0 python train.py --device=cpu --compile=False"
            )),
            vec!["train.py", "device=cpu", "compile=false"]
        );
        assert_eq!(
            items(&v("makemore.py -i names.txt --sample-only")),
            vec!["makemore.py", "i=names.txt", "sample_only"]
        );
        assert_eq!(items(&v("x.py --shift -1")), vec!["x.py", "shift=-1"]);
    }

    #[test]
    fn jaccard_of_commands() {
        let a = items(&v("python train.py config/a.py --device=cpu"));
        let b = items(&v("train.py config/a.py"));
        assert!((jaccard(&a, &b) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn pairs_stated_in_text() {
        assert_eq!(
            config_pairs("scale up: n_embd 24, n_hidden 128 (76K params)"),
            vec![
                ("n_embd".into(), "24".into()),
                ("n_hidden".into(), "128".into())
            ]
        );
        assert_eq!(
            config_pairs("(`--eval_iters=20`, down from 200) `--dropout=0.0`"),
            vec![
                ("eval_iters".into(), "20".into()),
                ("dropout".into(), "0.0".into())
            ]
        );
        assert!(same_value("0.0", "0"));
        assert!(!same_value("cpu", "cuda"));
    }
}
