//! What real repositories do that a CPU machine without network cannot, as `xstack init`
//! meets it: code that assumes a GPU, data fetched from the network at run time, an
//! experiment that trains until stopped or far past a budget, a module no list provides. Each
//! is told with the lines that do it and what the user can do through init's flags or the
//! command's own (a device option, a step limit, `--setup` editing the run's copy); the
//! repository is never edited.

use std::path::Path;

use super::deps::{Hazard, HazardKind};
use crate::command_line::entry_file;

/// Words of an option's name that say it picks the device.
const DEVICE_WORDS: &[&str] = &["device", "cuda", "gpu", "gpus", "cpu", "accelerator"];
/// Words of an option's or constant's name that say it bounds the run's length.
const LENGTH_WORDS: &[&str] = &[
    "iters",
    "iter",
    "iterations",
    "steps",
    "step",
    "epochs",
    "epoch",
    "updates",
    "batches",
];
/// What a failed run's last lines say when a fetch did not reach its server.
const NETWORK_ERRORS: &[&str] = &[
    "URLError",
    "ConnectionError",
    "ConnectionRefusedError",
    "Connection refused",
    "Name or service not known",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "HTTPError",
    "MaxRetryError",
];
/// What a failed run's last lines say when it wanted a GPU.
const GPU_ERRORS: &[&str] = &[
    "Torch not compiled with CUDA enabled",
    "Found no NVIDIA driver",
    "CUDA driver",
    "no CUDA GPUs are available",
    "torch.cuda.is_available() is False",
    "CUDA error",
    "cuda runtime error",
];

/// The sites of one kind, as `train.py:12 (`model.cuda()`)`, at most three.
pub fn sites(hazards: &[Hazard], kind: HazardKind) -> Vec<String> {
    hazards
        .iter()
        .filter(|h| h.kind == kind)
        .take(3)
        .map(|h| format!("{} (`{}`)", h.at, h.line))
        .collect()
}

/// The options of the entry file's argparse whose names contain one of `words`, with their
/// defaults: `--device (default 'cuda')`.
fn options_named(repo: &Path, command: &str, words: &[&str]) -> Vec<String> {
    let argv = shell_words::split(command).unwrap_or_default();
    let Some(entry) = entry_file(repo, &argv) else {
        return Vec::new();
    };
    let Some(text) = crate::source_text::read_small(&entry) else {
        return Vec::new();
    };
    let file = entry
        .strip_prefix(repo)
        .unwrap_or(&entry)
        .display()
        .to_string();
    let named = |name: &str| {
        name.to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|t| words.contains(&t))
    };
    let mut out: Vec<String> = super::repo::argparse_defaults(&text)
        .into_iter()
        .filter(|(flag, _)| flag.starts_with('-') && named(flag))
        .map(|(flag, default)| format!("{file}'s {flag} (default {default})"))
        .collect();
    out.extend(
        super::repo::constants(&text)
            .into_iter()
            .filter(|(name, _)| named(name))
            .map(|(name, value)| format!("{file}'s {name} = {value}")),
    );
    out.truncate(4);
    out
}

/// Why a failed run failed, when its last lines and the experiment's code say it wanted a
/// GPU or the network, with what the user can do; None for any other failure.
pub fn explain_failure(
    tail: &str,
    hazards: &[Hazard],
    repo: &Path,
    command: &str,
) -> Option<String> {
    let gpu = sites(hazards, HazardKind::Gpu);
    let wanted_gpu = GPU_ERRORS.iter().any(|e| tail.contains(e));
    if wanted_gpu {
        let mut text = String::from("the experiment assumes a GPU, and this machine has none");
        if !gpu.is_empty() {
            text.push_str(&format!(" ({})", gpu.join(", ")));
        }
        let options = options_named(repo, command, DEVICE_WORDS);
        if options.is_empty() {
            text.push_str(". The command has no device option: a --setup that edits the run's copy (say `sed -i 's/\\.cuda()//' FILE`) lets it run on the CPU; the repository itself is never edited");
        } else {
            text.push_str(&format!(
                ". Choose the CPU through the command's own option, in --command: {}",
                options.join(", ")
            ));
        }
        return Some(text);
    }
    let network = sites(hazards, HazardKind::Network);
    let unreachable = NETWORK_ERRORS.iter().any(|e| tail.contains(e));
    if unreachable {
        let mut text = String::from(
            "the experiment fetches data from the network at run time and could not reach it",
        );
        if !network.is_empty() {
            text.push_str(&format!(" ({})", network.join(", ")));
        }
        text.push_str(". Run init where that address is reachable, or download the data once into a folder of your own and point the command at it (--command, or a --setup that copies it into the run's copy); the repository itself is never edited");
        return Some(text);
    }
    None
}

/// What init says of an experiment that fetches from the network and ran here: verify runs
/// without network unless the task says `[run] network = true`, which init writes.
pub fn network_note(hazards: &[Hazard]) -> Option<String> {
    let network = sites(hazards, HazardKind::Network);
    (!network.is_empty()).then(|| {
        format!(
            "the experiment fetches from the network at run time ({}): verify runs without network unless [run] network = true, which this task sets. To verify without network, download the data once into a folder of your own and point the command at it",
            network.join(", ")
        )
    })
}

/// What can shorten an experiment that ran past init's limit: the command's own options or
/// the entry file's constants that bound its length.
pub fn shorten_advice(repo: &Path, command: &str) -> String {
    let options = options_named(repo, command, LENGTH_WORDS);
    if options.is_empty() {
        "nothing in the entry file bounds its length: give a shorter run through the command's own flags in --command, or a --setup that edits the run's copy; the repository itself is never edited".to_string()
    } else {
        format!(
            "bound it through {} (in --command, or a --setup that edits the run's copy), or give it more time with --run-limit",
            options.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hazard(kind: HazardKind, at: &str, line: &str) -> Hazard {
        Hazard {
            kind,
            at: at.to_string(),
            line: line.to_string(),
        }
    }

    #[test]
    fn a_gpu_failure_names_the_line_and_the_device_option() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("train.py"),
            "import argparse\np = argparse.ArgumentParser()\np.add_argument('--device', default='cuda')\np.add_argument('--max-iters', type=int, default=5000)\nEPOCHS = 30\n",
        )
        .unwrap();
        let hazards = [hazard(HazardKind::Gpu, "train.py:9", "model.cuda()")];
        let tail = "AssertionError: Torch not compiled with CUDA enabled";
        let text = explain_failure(tail, &hazards, dir.path(), "python train.py").unwrap();
        assert!(text.contains("assumes a GPU"), "{text}");
        assert!(text.contains("train.py:9 (`model.cuda()`)"), "{text}");
        assert!(
            text.contains("train.py's --device (default 'cuda')"),
            "{text}"
        );
        let shorter = shorten_advice(dir.path(), "python train.py");
        assert!(
            shorter.contains("train.py's --max-iters (default 5000)"),
            "{shorter}"
        );
        assert!(shorter.contains("train.py's EPOCHS = 30"), "{shorter}");
        assert_eq!(
            explain_failure("ValueError: x", &hazards, dir.path(), "python train.py"),
            None
        );
    }

    #[test]
    fn an_unreachable_fetch_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let hazards = [hazard(
            HazardKind::Network,
            "data.py:3",
            "urlopen('http://x/d.csv')",
        )];
        let tail = "urllib.error.URLError: <urlopen error [Errno 111] Connection refused>";
        let text = explain_failure(tail, &hazards, dir.path(), "python train.py").unwrap();
        assert!(text.contains("fetches data from the network"), "{text}");
        assert!(text.contains("data.py:3"), "{text}");
        assert!(network_note(&hazards).unwrap().contains("network = true"));
        assert_eq!(network_note(&[]), None);
    }
}
