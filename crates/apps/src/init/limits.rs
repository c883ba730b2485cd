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
    "patience",
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
    let wanted_gpu = GPU_ERRORS.iter().any(|e| tail.contains(e));
    if wanted_gpu {
        return Some(explain_gpu(tail, hazards, repo, command));
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

/// Why a run that wanted a GPU failed: the lines that choose or use it (`train.py:39
/// (`cudaid = "cuda:"+str(args.dev)`)`), else the line its traceback ends at, and the way to
/// the CPU that fits them: the command's own device option, else a `--setup` edit of the
/// run's copy fitted to each line ([`cpu_edit`]).
fn explain_gpu(tail: &str, hazards: &[Hazard], repo: &Path, command: &str) -> String {
    let mut text = String::from("the experiment assumes a GPU, and this machine has none");
    let gpu = sites(hazards, HazardKind::Gpu);
    let failed_at = traceback_site(tail, repo);
    if !gpu.is_empty() {
        text.push_str(&format!(" ({})", gpu.join(", ")));
    } else if let Some(site) = &failed_at {
        text.push_str(&format!(" (the traceback ends at {site})"));
    }
    let options = options_named(repo, command, DEVICE_WORDS);
    if !options.is_empty() {
        text.push_str(&format!(
            ". Choose the CPU through the command's own option, in --command: {}",
            options.join(", ")
        ));
        return text;
    }
    let mut edits: Vec<String> = Vec::new();
    for edit in hazards
        .iter()
        .filter(|h| h.kind == HazardKind::Gpu)
        .filter_map(cpu_edit)
    {
        if !edits.contains(&edit) && edits.len() < 3 {
            edits.push(edit);
        }
    }
    if edits.is_empty() {
        text.push_str(". The command has no device option: a --setup that edits the run's copy where the device is chosen (a `sed -i` of that line) lets it run on the CPU; the repository itself is never edited");
    } else {
        text.push_str(&format!(
            ". The command has no device option: this --setup edits the run's copy to run on the CPU: `{}`; the repository itself is never edited",
            edits.join(" && ")
        ));
    }
    text
}

/// The `sed` that puts the GPU line `hazard` on the CPU in the run's copy, fitted to what
/// the line does: a `device_map` set to `"cpu"`, a CUDA device string's `cuda` made `cpu`
/// on that line (`"cuda:"+str(args.dev)` gives `"cpu:0"`, which torch takes), or the file's
/// `.cuda(…)` calls removed. In a notebook (whose cells are JSON strings) the edit is made
/// through the whole file. None for a line of none of these shapes.
fn cpu_edit(hazard: &Hazard) -> Option<String> {
    let (file, line) = match hazard.at.split_once('#') {
        Some((notebook, _)) => (notebook, None),
        None => {
            let (file, line) = hazard.at.rsplit_once(':')?;
            (file, Some(line.parse::<usize>().ok()?))
        }
    };
    let file = shell_words::quote(file);
    let code = hazard.line.split('#').next().unwrap_or_default();
    let (address, every) = match line {
        Some(n) => (n.to_string(), ""),
        None => (String::new(), "g"),
    };
    if line.is_some() && code.contains("device_map") {
        return Some(format!(
            "sed -i '{address}s/device_map *= *[^,)]*/device_map=\"cpu\"/' {file}"
        ));
    }
    let quote = ['"', '\'']
        .into_iter()
        .find(|q| code.contains(&format!("{q}cuda{q}")) || code.contains(&format!("{q}cuda:")));
    match quote {
        Some('"') => Some(format!("sed -i '{address}s/\"cuda/\"cpu/{every}' {file}")),
        Some(_) => Some(format!("sed -i \"{address}s/'cuda/'cpu/{every}\" {file}")),
        None if code.contains(".cuda(") => Some(format!("sed -i 's/\\.cuda([^)]*)//g' {file}")),
        None => None,
    }
}

/// The repository line a Python traceback in `tail` ends at, as `train.py:41
/// (`features = features.to(device)`)`: the last `File "…", line N` frame outside installed
/// packages whose path, less some leading folders (the run's copy is elsewhere), is a file
/// of `repo`.
fn traceback_site(tail: &str, repo: &Path) -> Option<String> {
    static FRAME: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| crate::patterns::constant(r#"File "([^"]+)", line (\d+)"#));
    FRAME
        .captures_iter(tail)
        .filter_map(|caps| {
            let path = Path::new(caps.get(1)?.as_str());
            let installed = ["site-packages", "dist-packages"];
            if path.iter().any(|part| installed.iter().any(|i| part == *i)) {
                return None;
            }
            let number: usize = caps.get(2)?.as_str().parse().ok()?;
            let parts: Vec<_> = path.components().collect();
            let relative = (0..parts.len())
                .map(|i| parts[i..].iter().collect::<std::path::PathBuf>())
                .find(|rest| rest.is_relative() && repo.join(rest).is_file())?;
            let text = crate::source_text::read_small(&repo.join(&relative))?;
            let line = text.lines().nth(number.checked_sub(1)?)?.trim().to_string();
            Some(format!("{}:{number} (`{line}`)", relative.display()))
        })
        .last()
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
/// the entry file's constants that bound its length (an early stop's patience among them),
/// how far it got in the time it had (from the last epoch, step or iteration it printed),
/// and that a shorter run is another experiment than the one the authors' number is about.
pub fn shorten_advice(repo: &Path, command: &str, lines: &[String], duration_s: f64) -> String {
    let options = options_named(repo, command, LENGTH_WORDS);
    let bound = if options.is_empty() {
        "nothing in the entry file bounds its length: give a shorter run through the command's own flags in --command, or a --setup that edits the run's copy; the repository itself is never edited".to_string()
    } else {
        format!(
            "bound it through {} (in --command, or a --setup that edits the run's copy), or give it more time with --run-limit",
            options.join(", ")
        )
    };
    let pace = progress(lines).map(|(word, n)| {
        format!(
            "; it printed {word} {n} in {duration_s:.0} s ({:.1} s each)",
            duration_s / n as f64
        )
    });
    format!(
        "{bound}{}. A bounded run is not the experiment a published number is about: the task then grades the shorter run, and its criterion comes from this machine's runs of it, not from the claim",
        pace.unwrap_or_default()
    )
}

/// The furthest epoch, step or iteration the output printed (`Epoch: 0076` → `epoch`, 76).
fn progress(lines: &[String]) -> Option<(String, u64)> {
    static COUNTER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        crate::patterns::constant(r"(?i)\b(epoch|step|iter|iteration)\b\s*[:=#]?\s*(\d+)")
    });
    lines
        .iter()
        .flat_map(|line| COUNTER.captures_iter(line))
        .filter_map(|caps| {
            let n: u64 = caps.get(2)?.as_str().parse().ok()?;
            Some((caps.get(1)?.as_str().to_lowercase(), n))
        })
        .filter(|(_, n)| *n > 0)
        .max_by_key(|(_, n)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Diego999/pyGAT: 100,000 epochs at most, an early stop after 100 without progress; 76
    /// printed in 600 s.
    #[test]
    fn a_run_past_the_limit_names_its_patience_and_how_far_it_got() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("train.py"),
            "import argparse\np = argparse.ArgumentParser()\np.add_argument('--epochs', type=int, default=100000)\np.add_argument('--patience', type=int, default=100)\n",
        )
        .unwrap();
        let lines: Vec<String> = (1..=76)
            .map(|e| format!("Epoch: {e:04} loss_train: 1.2 acc_val: 0.8 time: 7.9s"))
            .collect();
        let advice = shorten_advice(dir.path(), "python train.py", &lines, 600.0);
        assert!(
            advice.contains(
                "train.py's --epochs (default 100000), train.py's --patience (default 100)"
            ),
            "{advice}"
        );
        assert!(
            advice.contains("it printed epoch 76 in 600 s (7.9 s each)"),
            "{advice}"
        );
        assert!(
            advice.contains("not the experiment a published number is about"),
            "{advice}"
        );
        assert_eq!(progress(&["loss 0.5".to_string()]), None);
    }

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
        let shorter = shorten_advice(dir.path(), "python train.py", &[], 600.0);
        assert!(
            shorter.contains("train.py's --max-iters (default 5000)"),
            "{shorter}"
        );
        assert!(shorter.contains("train.py's EPOCHS = 30"), "{shorter}");
        assert!(
            shorter.contains("A bounded run is not the experiment a published number is about"),
            "{shorter}"
        );
        assert_eq!(
            explain_failure("ValueError: x", &hazards, dir.path(), "python train.py"),
            None
        );
    }

    /// Runs `edit` (a `sed -i` that init proposes) in `dir`, with a shell as `--setup` does.
    fn apply(dir: &Path, edit: &str) {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(edit)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "{edit}");
    }

    /// GCNII's `train.py` (chennnM/GCNII, its README's Cora command): the device string is
    /// built from an integer `--dev`, handed to `torch.device` on the next line and used by
    /// `.to(device)`; nothing calls `.cuda()`.
    const GCNII_SHAPE: &str = "import argparse\nimport torch\nparser = argparse.ArgumentParser()\nparser.add_argument('--dev', type=int, default=0, help='device id')\nargs = parser.parse_args()\ncudaid = \"cuda:\"+str(args.dev)\ndevice = torch.device(cudaid)\nfeatures = features.to(device)\n";

    #[test]
    fn a_device_string_is_named_with_its_line_and_an_edit_that_fits_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("train.py"), GCNII_SHAPE).unwrap();
        let hazards = [hazard(
            HazardKind::Gpu,
            "train.py:6",
            "cudaid = \"cuda:\"+str(args.dev)",
        )];
        let tail = "Traceback (most recent call last):\n  File \"/tmp/xstack-init-1/copy/train.py\", line 8, in <module>\n    features = features.to(device)\n  File \"/venv/lib/python3.11/site-packages/torch/cuda/__init__.py\", line 310, in _lazy_init\n    raise AssertionError(\"Torch not compiled with CUDA enabled\")\nAssertionError: Torch not compiled with CUDA enabled";
        let text = explain_failure(tail, &hazards, dir.path(), "python train.py").unwrap();
        assert!(
            text.contains("(train.py:6 (`cudaid = \"cuda:\"+str(args.dev)`))"),
            "{text}"
        );
        let edit = "sed -i '6s/\"cuda/\"cpu/' train.py";
        assert!(text.contains(&format!("`{edit}`")), "{text}");
        assert!(!text.contains(".cuda()"), "{text}");
        // The edit, run as --setup runs it, makes the device string the CPU's.
        apply(dir.path(), edit);
        let edited = std::fs::read_to_string(dir.path().join("train.py")).unwrap();
        assert_eq!(
            edited.lines().nth(5),
            Some("cudaid = \"cpu:\"+str(args.dev)")
        );
        assert_eq!(edited.lines().count(), GCNII_SHAPE.lines().count());

        // Without a line that says GPU, the traceback's own line in the repository is named.
        let text = explain_failure(tail, &[], dir.path(), "python train.py").unwrap();
        assert!(
            text.contains("(the traceback ends at train.py:8 (`features = features.to(device)`))"),
            "{text}"
        );
        assert!(!text.contains(".cuda()"), "{text}");
    }

    #[test]
    fn each_kind_of_gpu_line_gets_the_edit_that_fits_it() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "a.py",
                "model = Net().cuda()\nx = x.cuda(non_blocking=True)\n",
                "a.py:1",
                "model = Net().cuda()",
                "sed -i 's/\\.cuda([^)]*)//g' a.py",
                "model = Net()\nx = x\n",
            ),
            (
                "b.py",
                "import torch\ndevice = torch.device('cuda')\n",
                "b.py:2",
                "device = torch.device('cuda')",
                "sed -i \"2s/'cuda/'cpu/\" b.py",
                "import torch\ndevice = torch.device('cpu')\n",
            ),
            (
                "c.py",
                "m = AutoModel.from_pretrained(name, device_map=\"cuda:0\", torch_dtype=t)\n",
                "c.py:1",
                "m = AutoModel.from_pretrained(name, device_map=\"cuda:0\", torch_dtype=t)",
                "sed -i '1s/device_map *= *[^,)]*/device_map=\"cpu\"/' c.py",
                "m = AutoModel.from_pretrained(name, device_map=\"cpu\", torch_dtype=t)\n",
            ),
            (
                "d.ipynb",
                "{\"cells\": [{\"cell_type\": \"code\", \"source\": [\"dev = \\\"cuda\\\"\\n\"]}]}",
                "d.ipynb#cell=0 line 1",
                "dev = \"cuda\"",
                "sed -i 's/\"cuda/\"cpu/g' d.ipynb",
                "{\"cells\": [{\"cell_type\": \"code\", \"source\": [\"dev = \\\"cpu\\\"\\n\"]}]}",
            ),
        ];
        for (file, code, at, line, edit, edited) in cases {
            std::fs::write(dir.path().join(file), code).unwrap();
            let proposed = cpu_edit(&hazard(HazardKind::Gpu, at, line));
            assert_eq!(proposed.as_deref(), Some(edit), "{file}");
            apply(dir.path(), edit);
            assert_eq!(
                std::fs::read_to_string(dir.path().join(file)).unwrap(),
                edited,
                "{file}"
            );
        }
        assert_eq!(
            cpu_edit(&hazard(HazardKind::Gpu, "e.py:3", "run_on(gpu=True)")),
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
