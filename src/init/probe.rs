//! The parity probe `xstack init` proposes: when the repository defines an `nn.Module` and
//! computes a loss, a `probe.py` skeleton for the task folder (recording the batch, the
//! parameters, the output, the loss and the gradients with the `xstack_parity` helper) and a
//! `[parity]` section written as a comment. The skeleton stops at once until a person has
//! completed it and deleted its guard line: init never runs it, and nothing runs it until the
//! user copies it into the repository and enables the section.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

/// The skeleton's file name, in the task folder (and, once enabled, in the repository).
pub const PROBE_FILE: &str = "probe.py";

/// The most Python files read when looking for a model and a loss.
const MAX_FILES: usize = 400;

/// Files larger than this are not read (generated or vendored code).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// A line of the repository's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The file, relative to the repository, with `/` separators.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// The line's code, trimmed.
    pub text: String,
}

/// An `nn.Module` subclass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelClass {
    /// The class name.
    pub name: String,
    /// Its `class` line.
    pub site: Site,
    /// Its `def __init__(…)` line, when it has one.
    pub init: Option<Site>,
}

/// What the probe is proposed for: the repository's first model class and first loss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    /// The model.
    pub model: ModelClass,
    /// Where a loss is computed.
    pub loss: Site,
}

static MODULE_CLASS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^class\s+([A-Za-z_]\w*)\s*\(\s*(?:torch\.)?nn\.Module\s*\)\s*:")
        .unwrap_or_else(|e| unreachable!("the nn.Module pattern is a valid regex: {e}"))
});

static INIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+def\s+__init__\s*\(").unwrap_or_else(|e| unreachable!("valid regex: {e}"))
});

/// A loss: an `nn.…Loss(` module, a functional loss (`F.cross_entropy(`, `F.mse_loss(`,
/// `torch.nn.functional.nll_loss(`), or a `loss.backward()`.
static LOSS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bnn\.\w*Loss\s*\(|\b(?:F|functional)\.(?:\w+_loss|cross_entropy|binary_cross_entropy\w*|nll_loss|kl_div)\s*\(|\bloss\w*\.backward\s*\(",
    )
    .unwrap_or_else(|e| unreachable!("the loss pattern is a valid regex: {e}"))
});

/// The repository's first `nn.Module` subclass and first loss (files in name order, at most
/// three folders deep, hidden folders, virtualenvs and `site-packages` left out); None when
/// it has no model or no loss.
pub fn find(repo: &Path) -> Option<ProbeTarget> {
    let mut model: Option<ModelClass> = None;
    let mut loss: Option<Site> = None;
    let files = walkdir::WalkDir::new(repo)
        .max_depth(4)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || !(name.starts_with('.')
                    || matches!(name.as_ref(), "site-packages" | "venv" | "__pycache__"))
        })
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type().is_file()
                && e.path().extension().is_some_and(|x| x == "py")
                && e.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES)
        })
        .take(MAX_FILES);
    for entry in files {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let rel = entry
            .path()
            .strip_prefix(repo)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if rel == PROBE_FILE {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let site = |i: usize| Site {
            file: rel.clone(),
            line: i + 1,
            text: lines[i].trim().to_string(),
        };
        for (i, line) in lines.iter().enumerate() {
            if model.is_none()
                && let Some(c) = MODULE_CLASS.captures(line)
            {
                let init = lines[i + 1..]
                    .iter()
                    .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
                    .position(|l| INIT.is_match(l))
                    .map(|j| site(i + 1 + j));
                model = Some(ModelClass {
                    name: c[1].to_string(),
                    site: site(i),
                    init,
                });
            }
            let code = line.split('#').next().unwrap_or_default();
            if loss.is_none() && LOSS.is_match(code) {
                loss = Some(site(i));
            }
        }
        if model.is_some() && loss.is_some() {
            break;
        }
    }
    Some(ProbeTarget {
        model: model?,
        loss: loss?,
    })
}

/// The Python module a repository file is imported as (`models/net.py` → `models.net`).
fn module_of(file: &str) -> String {
    file.trim_end_matches(".py")
        .trim_end_matches("/__init__")
        .replace('/', ".")
}

/// The `probe.py` skeleton for `target`.
pub fn skeleton(target: &ProbeTarget) -> String {
    let model = &target.model;
    let loss = &target.loss;
    let init = model.init.as_ref().map_or_else(
        || "it has no __init__ of its own".to_string(),
        |s| format!("{}:{}: `{}`", s.file, s.line, s.text),
    );
    format!(
        r#""""Numeric parity probe (`xstack parity`, docs/TASKS.md), proposed by `xstack init`.

A SKELETON TO COMPLETE: xstack init found the model `{name}` ({model_file}:{model_line}, an
nn.Module) and a loss at {loss_file}:{loss_line} (`{loss_text}`), and guessed the rest. It
has never been run. Build the model and the batch below, delete the `raise SystemExit` line,
copy this file into the repository beside the code it imports, then enable `[parity]` in
task.toml.

The probe runs twice on one small computation: here, in the PyTorch source, and in the port,
whose probe loads what this side records (`xstack_parity.load_inputs()`: the batch and the
weights) and records the same names in these layouts. The first name whose values differ is
where the port diverges, so record in the order the data flows. Keep it to one batch and the
smallest sizes that run every layer: a few seconds on a CPU.
"""
raise SystemExit("probe.py is a skeleton from xstack init: complete it, then delete this line")

import torch
import xstack_parity as xp

from {module} import {name}

torch.manual_seed(0)
torch.set_num_threads(1)

# The model, small. Its constructor: {init}.
model = {name}()
model.eval()  # no dropout: both sides compute the same function

# One batch of random inputs and targets, of the shapes and dtypes the model takes.
x = torch.randn(4, 8)
y = torch.randint(0, 2, (4,))
xp.record("input.x", x)
xp.record("input.y", y)
for name, p in model.named_parameters():
    xp.record(f"param.{{name}}", p)

out = model(x)
xp.record("output", out)
# The loss as the repository computes it ({loss_file}:{loss_line}: `{loss_text}`).
loss = torch.nn.functional.cross_entropy(out, y)
xp.record("loss", loss)
loss.backward()
for name, p in model.named_parameters():
    xp.record(f"grad.{{name}}", p.grad)
"#,
        name = model.name,
        model_file = model.site.file,
        model_line = model.site.line,
        loss_file = loss.file,
        loss_line = loss.line,
        loss_text = loss.text.replace('"', "'"),
        module = module_of(&model.site.file),
    )
}

/// The `[parity]` block of `task.toml`, as a comment: what the skeleton is and how to enable
/// it. `written`: init wrote the skeleton (else the repository has a `probe.py` already).
pub fn parity_note(target: &ProbeTarget, written: bool) -> String {
    let what = if written {
        format!(
            "# xstack init wrote probe.py beside this file: a skeleton for the model `{}` ({}:{})\n\
             # and the loss at {}:{}. It has never been run. Complete it, copy it into the\n\
             # repository (the probe runs in a copy of the source; xstack never writes the\n\
             # repository), then remove the `#` of the three lines below to enable it.\n",
            target.model.name,
            target.model.site.file,
            target.model.site.line,
            target.loss.file,
            target.loss.line,
        )
    } else {
        "# The repository has a probe.py: review it, then remove the `#` of the three lines\n\
         # below to enable it.\n"
            .to_string()
    };
    format!(
        "# The numeric parity probe (docs/TASKS.md): after a failed phase, where the port diverges.\n\
         {what}# [parity]\n# command = \"python probe.py\"\n# timeout_s = 120\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for (path, text) in files {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap_or(dir.path()))
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(file, text).unwrap_or_else(|e| panic!("{e}"));
        }
        dir
    }

    #[test]
    fn a_model_and_a_loss_are_found_with_their_lines() {
        let dir = repo(&[
            (
                "models/net.py",
                "import torch.nn as nn\n\nclass Net(nn.Module):\n    \"\"\"doc\"\"\"\n\n    def __init__(self, width=8):\n        super().__init__()\n",
            ),
            (
                "train.py",
                "import torch.nn.functional as F\n# F.mse_loss( in a comment\nloss = F.cross_entropy(out, y)\n",
            ),
        ]);
        let found = find(dir.path()).unwrap_or_else(|| panic!("nothing found"));
        assert_eq!(found.model.name, "Net");
        assert_eq!(
            (found.model.site.file.as_str(), found.model.site.line),
            ("models/net.py", 3)
        );
        let init = found
            .model
            .init
            .as_ref()
            .unwrap_or_else(|| panic!("no __init__"));
        assert_eq!(
            (init.line, init.text.as_str()),
            (6, "def __init__(self, width=8):")
        );
        assert_eq!((found.loss.file.as_str(), found.loss.line), ("train.py", 3));
        let text = skeleton(&found);
        assert!(text.contains("from models.net import Net\n"), "{text}");
        assert!(
            text.contains("Its constructor: models/net.py:6: `def __init__(self, width=8):`"),
            "{text}"
        );
        assert!(text.contains("\nraise SystemExit("), "{text}");
    }

    #[test]
    fn without_a_model_or_without_a_loss_nothing_is_proposed() {
        let no_loss = repo(&[(
            "m.py",
            "import torch\nclass M(torch.nn.Module):\n    pass\n",
        )]);
        assert_eq!(find(no_loss.path()), None);
        let no_model = repo(&[("t.py", "loss = nn.MSELoss()(a, b)\nloss.backward()\n")]);
        assert_eq!(find(no_model.path()), None);
        let hidden = repo(&[
            (".venv/m.py", "class M(nn.Module):\n    pass\n"),
            ("t.py", "loss.backward()\n"),
        ]);
        assert_eq!(find(hidden.path()), None);
    }
}
