//! The parity probe `xstack init` proposes: when the repository defines an `nn.Module` and
//! computes a loss, a `probe.py` skeleton for the task folder (recording the batch, the
//! parameters, the output, the loss and the gradients with the `xstack_parity` helper) and a
//! `[parity]` section written as a comment. The skeleton stops at once until a person has
//! completed it and deleted its guard line: init never runs it, and nothing runs it until the
//! user copies it into the repository and enables the section.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::patterns;

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
    patterns::constant(r"^class\s+([A-Za-z_]\w*)\s*\(\s*(?:torch\.)?nn\.Module\s*\)\s*:")
});

static INIT: LazyLock<Regex> = LazyLock::new(|| patterns::constant(r"^\s+def\s+__init__\s*\("));

/// A loss: an `nn.…Loss(` module, a functional loss (`F.cross_entropy(`, `F.mse_loss(`,
/// `torch.nn.functional.nll_loss(`), or a `loss.backward()`.
static LOSS: LazyLock<Regex> = LazyLock::new(|| {
    patterns::constant(
        r"\bnn\.\w*Loss\s*\(|\b(?:F|functional)\.(?:\w+_loss|cross_entropy|binary_cross_entropy\w*|nll_loss|kl_div)\s*\(|\bloss\w*\.backward\s*\(",
    )
});

/// The model and the loss of the experiment `command` runs (a script, a module, or a
/// notebook's code cells): among the repository's `nn.Module` subclasses (files in name
/// order, at most three folders deep, hidden folders, virtualenvs and `site-packages` left
/// out), first one the experiment instantiates (defined in its script or in a module of the
/// repository it imports), then one defined in the script, then in a module it imports, then
/// any; within each, the outermost ([`outermost`]: `GPT`, not the `NewGELU` activation its
/// blocks use). The loss likewise from the script, its imports, then anywhere. None when the
/// repository has no model or no loss.
pub fn find(repo: &Path, command: &str) -> Option<ProbeTarget> {
    let mut models: Vec<ModelClass> = Vec::new();
    let mut bodies: Vec<String> = Vec::new();
    let mut losses: Vec<Site> = Vec::new();
    let mut texts: Vec<(String, String)> = Vec::new();
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
        let mut file_loss = None;
        for (i, line) in lines.iter().enumerate() {
            if let Some(c) = MODULE_CLASS.captures(line) {
                let init = lines[i + 1..]
                    .iter()
                    .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
                    .position(|l| INIT.is_match(l))
                    .map(|j| site(i + 1 + j));
                models.push(ModelClass {
                    name: c[1].to_string(),
                    site: site(i),
                    init,
                });
                let body: Vec<&str> = lines[i + 1..]
                    .iter()
                    .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
                    .copied()
                    .collect();
                bodies.push(body.join("\n"));
            }
            let code = line.split('#').next().unwrap_or_default();
            if file_loss.is_none() && LOSS.is_match(code) {
                file_loss = Some(site(i));
            }
        }
        losses.extend(file_loss);
        texts.push((rel, text));
    }
    let script = script_of(command, repo);
    let script_text = script
        .as_deref()
        .map(|s| {
            texts
                .iter()
                .find(|(rel, _)| rel == s)
                .map(|(_, text)| text.clone())
                .or_else(|| {
                    let text = crate::source_text::read_small(&repo.join(s))?;
                    Some(crate::notebook::python_code(s, &text))
                })
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let imported = script
        .as_deref()
        .map(|s| local_imports(s, &script_text, &texts))
        .unwrap_or_default();
    let in_script = |file: &str| script.as_deref() == Some(file);
    let in_imports = |file: &str| imported.iter().any(|i| i == file);
    let instantiated = |name: &str| calls(&script_text, name);
    let tiers: [&dyn Fn(&ModelClass) -> bool; 4] = [
        &|m| (in_script(&m.site.file) || in_imports(&m.site.file)) && instantiated(&m.name),
        &|m| in_script(&m.site.file),
        &|m| in_imports(&m.site.file),
        &|_| true,
    ];
    let model = tiers
        .iter()
        .find_map(|tier| outermost(&models, &bodies, tier))?
        .clone();
    let loss = losses
        .iter()
        .find(|l| in_script(&l.file))
        .or_else(|| losses.iter().find(|l| in_imports(&l.file)))
        .or_else(|| losses.first())?
        .clone();
    Some(ProbeTarget { model, loss })
}

/// Whether `code` calls `name` (`GPT(config)`) outside a `class` line.
fn calls(code: &str, name: &str) -> bool {
    Regex::new(&format!(r"\b{}\s*\(", regex::escape(name))).is_ok_and(|re| {
        code.lines()
            .any(|l| !l.trim_start().starts_with("class ") && re.is_match(l))
    })
}

/// Of the models that `keep` accepts, the outermost: one no other kept model builds in its
/// body, the one that builds the most of the others (minGPT's `GPT`, whose `Block`s build
/// `CausalSelfAttention` and `NewGELU`), the first in file order among equals. `bodies` are
/// the models' class bodies, in the same order.
fn outermost<'a>(
    models: &'a [ModelClass],
    bodies: &[String],
    keep: &dyn Fn(&ModelClass) -> bool,
) -> Option<&'a ModelClass> {
    let kept: Vec<usize> = (0..models.len()).filter(|&i| keep(&models[i])).collect();
    let builds = |outer: usize, inner: usize| {
        outer != inner
            && calls(
                bodies.get(outer).map_or("", String::as_str),
                &models[inner].name,
            )
    };
    let inside: Vec<usize> = kept
        .iter()
        .copied()
        .filter(|&i| kept.iter().any(|&o| builds(o, i)))
        .collect();
    let rank = |i: usize| -> (bool, usize) {
        let built = kept.iter().filter(|&&j| builds(i, j)).count();
        (!inside.contains(&i), built)
    };
    let mut best: Option<usize> = None;
    for &i in &kept {
        if best.is_none_or(|b| rank(i) > rank(b)) {
            best = Some(i);
        }
    }
    best.map(|i| &models[i])
}

/// The repository file (relative, `/`-separated) that `command` runs: a notebook it names
/// (`python -m _xstack_notebook demo.ipynb`), the first argument ending in `.py`, or the
/// module of `python -m MODULE`; None when it names none or the file is not in the
/// repository.
fn script_of(command: &str, repo: &Path) -> Option<String> {
    let words = shell_words::split(command).ok()?;
    let notebook = words
        .iter()
        .find(|w| crate::notebook::is_notebook(w))
        .cloned();
    let file = notebook
        .or_else(|| {
            words
                .iter()
                .position(|w| w == "-m")
                .and_then(|i| words.get(i + 1))
                .map(|module| format!("{}.py", module.replace('.', "/")))
        })
        .or_else(|| words.iter().find(|w| w.ends_with(".py")).cloned())?;
    let file = file.trim_start_matches("./").to_string();
    repo.join(&file).is_file().then_some(file)
}

/// The repository files the script `script` (with text `text`) imports (`import model`,
/// `from models.net import Net`, `from . import x`), resolved next to the script or at the
/// repository's root, as files among `texts`.
fn local_imports(script: &str, text: &str, texts: &[(String, String)]) -> Vec<String> {
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
        patterns::constant(
            r"^\s*(?:from\s+(\.*[\w.]*)\s+import\b|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))",
        )
    });
    let folder = script.rsplit_once('/').map(|(d, _)| d).unwrap_or_default();
    let mut found = Vec::new();
    for caps in text.lines().filter_map(|l| IMPORT.captures(l)) {
        let modules: Vec<&str> = match (caps.get(1), caps.get(2)) {
            (Some(from), _) => vec![from.as_str()],
            (None, Some(list)) => list.as_str().split(',').map(str::trim).collect(),
            (None, None) => continue,
        };
        for module in modules {
            let path = module.trim_start_matches('.').replace('.', "/");
            if path.is_empty() {
                continue;
            }
            for base in [folder, ""] {
                let stem = if base.is_empty() {
                    path.clone()
                } else {
                    format!("{base}/{path}")
                };
                for candidate in [format!("{stem}.py"), format!("{stem}/__init__.py")] {
                    if texts.iter().any(|(rel, _)| *rel == candidate) && !found.contains(&candidate)
                    {
                        found.push(candidate);
                    }
                }
            }
        }
    }
    found
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
        let found = find(dir.path(), "python train.py").unwrap_or_else(|| panic!("nothing found"));
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
        assert_eq!(find(no_loss.path(), "python m.py"), None);
        let no_model = repo(&[("t.py", "loss = nn.MSELoss()(a, b)\nloss.backward()\n")]);
        assert_eq!(find(no_model.path(), "python t.py"), None);
        let hidden = repo(&[
            (".venv/m.py", "class M(nn.Module):\n    pass\n"),
            ("t.py", "loss.backward()\n"),
        ]);
        assert_eq!(find(hidden.path(), "python t.py"), None);
    }

    #[test]
    fn the_model_is_the_one_of_the_script_the_command_runs() {
        let model = |name: &str| {
            format!(
                "import torch.nn as nn\nimport torch.nn.functional as F\n\nclass {name}(nn.Module):\n    def __init__(self):\n        super().__init__()\n\nloss = F.cross_entropy(a, b)\nm = {name}()\n"
            )
        };
        // Two scripts with a model each: the command's, not the first in name order.
        let dir = repo(&[
            ("bigram.py", &model("BigramLanguageModel")),
            ("v2.py", &model("BigramLanguageModel")),
        ]);
        let found = find(dir.path(), "python v2.py").unwrap_or_else(|| panic!("nothing found"));
        assert_eq!(
            (
                found.model.name.as_str(),
                found.model.site.file.as_str(),
                found.model.site.line
            ),
            ("BigramLanguageModel", "v2.py", 4)
        );
        assert_eq!(found.loss.file, "v2.py");
        // nanoGPT's shape: the script defines no model, it imports model.py and builds the
        // last class defined there (`model = GPT(gptconf)`), not the first (`LayerNorm`).
        let dir = repo(&[
            (
                "model.py",
                "import torch.nn as nn\nimport torch.nn.functional as F\nclass LayerNorm(nn.Module):\n    pass\nclass GPT(nn.Module):\n    def forward(self, idx, targets):\n        loss = F.cross_entropy(x, y)\n",
            ),
            (
                "bench.py",
                "import torch.nn as nn\nclass Other(nn.Module):\n    pass\nloss.backward()\n",
            ),
            (
                "train.py",
                "from model import GPTConfig, GPT\nmodel = GPT(gptconf)\nscaler.scale(loss).backward()\nloss.backward()\n",
            ),
        ]);
        let command = "python train.py config/train_shakespeare_char.py --device=cpu";
        let found = find(dir.path(), command).unwrap_or_else(|| panic!("nothing found"));
        assert_eq!(
            (found.model.name.as_str(), found.model.site.file.as_str()),
            ("GPT", "model.py")
        );
        assert_eq!((found.loss.file.as_str(), found.loss.line), ("train.py", 4));
        // `python -m pkg.run` runs pkg/run.py.
        let dir = repo(&[("a.py", &model("First")), ("pkg/run.py", &model("Second"))]);
        let found =
            find(dir.path(), "python -m pkg.run --x 1").unwrap_or_else(|| panic!("nothing found"));
        assert_eq!(found.model.name, "Second");
    }

    /// minGPT's shape: `mingpt/model.py` defines the activation `NewGELU` first, then the
    /// attention, the block that builds both, and `GPT`, which builds the blocks; the
    /// notebook the command runs imports `GPT`, builds it and trains it.
    const MINGPT_MODEL: &str = "import torch.nn as nn\nfrom torch.nn import functional as F\n\nclass NewGELU(nn.Module):\n    def forward(self, x):\n        return x\n\nclass CausalSelfAttention(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n\nclass Block(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n        self.attn = CausalSelfAttention(config)\n        self.act = NewGELU()\n\nclass GPT(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])\n\n    @classmethod\n    def from_pretrained(cls, model_type):\n        model = GPT(config)\n        return model\n\n    def forward(self, idx, targets=None):\n        loss = F.cross_entropy(logits, targets, ignore_index=-1)\n";

    #[test]
    fn the_model_a_notebook_builds_and_trains_is_the_one_proposed() {
        let notebook = serde_json::json!({
            "cells": [
                {"cell_type": "markdown", "source": ["A GELU(nn.Module) note\n"]},
                {"cell_type": "code", "source": ["from mingpt.model import GPT\n", "model = GPT(model_config)\n"]},
                {"cell_type": "code", "source": ["from mingpt.trainer import Trainer\n", "trainer = Trainer(train_config, model, train_dataset)\n", "trainer.run()\n"]},
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        })
        .to_string();
        let dir = repo(&[
            ("demo.ipynb", &notebook),
            ("mingpt/__init__.py", ""),
            ("mingpt/model.py", MINGPT_MODEL),
            (
                "mingpt/trainer.py",
                "class Trainer:\n    def run(self):\n        self.loss.backward()\n",
            ),
        ]);
        let command = crate::notebook::command("demo.ipynb", None);
        let found = find(dir.path(), &command).unwrap_or_else(|| panic!("nothing found"));
        assert_eq!(
            (
                found.model.name.as_str(),
                found.model.site.file.as_str(),
                found.model.site.line
            ),
            ("GPT", "mingpt/model.py", 18)
        );
        assert!(
            skeleton(&found).contains("from mingpt.model import GPT\n"),
            "{}",
            skeleton(&found)
        );
        // A command that names no file of the repository: the class that builds the others,
        // not the first one defined.
        let found = find(dir.path(), "make train").unwrap_or_else(|| panic!("nothing found"));
        assert_eq!(found.model.name, "GPT");
    }
}
